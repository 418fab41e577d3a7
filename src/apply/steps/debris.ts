// Step "debris": leftovers of interrupted runs (trash directories, temp files) are finished.
// Guarantees: a temp file whose writing process is alive is left alone; each entry is acted on
// through its parent's descriptor and only if it is still the entry scanned (same dev/ino);
// a dry run measures and removes nothing.
import { Codes, codeOf, describeError } from '../../errors.js';
import type { Debris } from '../../io/inventory.js';
import { finishTrash, measureDir } from '../../io/remove.js';
import { probeProcess } from '../../io/running.js';
import { Dir, identityOf, sameIdentity } from '../../io/safe-fs.js';
import { fail, progress, type SweepContext, type StepTally } from './context.js';
import { openChain } from './dirs.js';

const tempPid = (path: string): number => Number(/\.(\d+)\.[0-9a-f]+\.tmp$/.exec(path)?.[1] ?? 0);

export async function debrisStep(ctx: SweepContext): Promise<StepTally> {
  // Temp files: decide pid liveness now (async probe) — a temp of a live process is in use.
  const liveTempPids = new Set<number>();
  for (const d of ctx.debris) {
    if (d.kind !== 'temp_file') continue;
    const pid = tempPid(d.path);
    if (pid > 0 && pid !== process.pid && (await probeProcess(pid, undefined)) === 'alive') liveTempPids.add(pid);
  }
  const tally = { items: 0, bytes: 0 };
  let done = 0;
  for (const d of ctx.debris) {
    progress(ctx, done++, ctx.debris.length, tally.bytes);
    ctx.signal?.throwIfAborted();
    if (d.kind === 'temp_file' && liveTempPids.has(tempPid(d.path))) continue;
    try {
      const bytes = await actOnDebris(d, ctx.dryRun);
      ctx.report.actions.push({ kind: 'remove_debris', path: d.path, code: 'process_interrupted', detail: d.detail, bytes });
      ctx.report.bytes_freed += bytes;
      tally.items++;
      tally.bytes += bytes;
      ctx.log.warn({ code: Codes.processInterrupted, path: d.path, bytes }, ctx.dryRun ? 'would remove a leftover of an interrupted run' : 'leftover of an interrupted run removed');
    } catch (err) {
      fail(ctx, { target: d.path, code: codeOf(err), detail: `${d.path}: ${describeError(err)}` });
    }
  }
  return tally;
}

async function actOnDebris(d: Debris, dryRun: boolean): Promise<number> {
  const anchor = await Dir.open(d.ref.anchor, { followFinal: true });
  try {
    const parentChain = d.ref.chain.slice(0, -1);
    const name = d.ref.chain[d.ref.chain.length - 1];
    if (name === undefined) return 0;
    const parent = parentChain.length === 0 ? anchor : await openChain(anchor, parentChain);
    try {
      if (d.kind === 'trash_dir') {
        if (dryRun) return (await measureDir(parent, name, d.identity)).bytes;
        return (await finishTrash(parent, name, d.identity)).bytes;
      }
      const st = await parent.lstat(name);
      if (!st || !st.isFile() || !sameIdentity(identityOf(st), d.identity)) return 0;
      if (!dryRun) await parent.unlink(name);
      return Number(st.size);
    } finally {
      if (parent !== anchor) await parent.close();
    }
  } finally {
    await anchor.close();
  }
}
