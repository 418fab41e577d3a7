// Step "chmod": private directories back to 0700, private files to 0600 (docs/design.md §1, §4).
// Guarantees: each entry is changed through a descriptor of the entry scanned (same dev/ino);
// an entry its owner cannot open (mode 0000) is changed by name only after re-checking with
// lstat that it is the same non-link entry; a dry run changes nothing.
import { Codes, GcError, codeOf, describeError, errnoCode } from '../../errors.js';
import type { ModeEntry } from '../../runtime/inventory.js';
import { Dir, formatMode, identityOf, sameIdentity } from '../../fsx/safe-fs.js';
import { fail, type SweepContext, type StepTally } from './context.js';
import { openChain } from '../../fsx/dirs.js';

export async function chmodStep(ctx: SweepContext): Promise<StepTally> {
  let items = 0;
  for (const { entry, action } of ctx.chmods) {
    try {
      if (!ctx.dryRun) await applyChmod(entry, action.to);
      ctx.report.actions.push({ kind: 'chmod', path: action.path, from: formatMode(action.from), to: formatMode(action.to) });
      items++;
      ctx.log.debug({ path: action.path, from: formatMode(action.from), to: formatMode(action.to) }, ctx.dryRun ? 'would reassert mode' : 'mode reasserted');
    } catch (err) {
      fail(ctx, { target: action.path, code: codeOf(err), detail: `${action.path}: ${describeError(err)}` });
    }
  }
  return { items, bytes: 0 };
}

async function applyChmod(entry: ModeEntry, mode: number): Promise<void> {
  const anchor = await Dir.open(entry.ref.anchor, { followFinal: true });
  try {
    if (entry.ref.chain.length === 0) {
      if (!sameIdentity(anchor.identity, entry.identity)) throw new GcError(Codes.changedSinceScan, `${entry.path} changed since it was scanned`);
      await anchor.chmodSelf(mode);
      return;
    }
    const parent = entry.ref.chain.length === 1 ? anchor : await openChain(anchor, entry.ref.chain.slice(0, -1));
    const name = entry.ref.chain[entry.ref.chain.length - 1] ?? '';
    try {
      if (entry.kind === 'dir') {
        const d = await parent.openDir(name, entry.identity).catch(async (err: unknown) => {
          if (errnoCode(err) !== 'EACCES') throw err;
          return undefined;
        });
        if (d) {
          try {
            await d.chmodSelf(mode);
          } finally {
            await d.close();
          }
          return;
        }
      } else {
        const f = await parent.openFile(name).catch((err: unknown) => {
          if (errnoCode(err) !== 'EACCES') throw err;
          return undefined;
        });
        if (f) {
          try {
            if (!sameIdentity(identityOf(f.stat), entry.identity)) throw new GcError(Codes.changedSinceScan, `${entry.path} changed since it was scanned`);
            await f.fh.chmod(mode);
          } finally {
            await f.fh.close();
          }
          return;
        }
      }
      // Unreadable to its owner (e.g. mode 0000): chmod through an O_PATH descriptor, never by name.
      await parent.chmodChildNoFollow(name, entry.identity, mode);
    } finally {
      if (parent !== anchor) await parent.close();
    }
  } finally {
    await anchor.close();
  }
}
