// The undo window for what goes with a held session from beside its sessions root
// (docs/design.md §9a): its child workdirs and `wrk_` logs are held INSIDE the held session
// directory, as `<held>/.murmur-gc-beside/children/<name>` and `…/logs/<wrk_id>.log`.
// Guarantees:
// - A held child or log comes back with its session and goes for good with it: restoring, listing,
//   sizing and purging a held session cover them with no second index.
// - Holding is one descriptor-relative rename (never a copy; across filesystems the kernel refuses
//   with EXDEV, reported `cross_device`); the entry's identity is re-checked just before and after,
//   and the caller's verify runs on the moved directory (a failure moves it back).
// - Putting back never replaces anything: every target name is checked free first (nothing moves
//   when one is taken); a log comes back by link(2) (which fails on an existing name) and unlink;
//   only names that can be a child (`<one segment>`, no leading dot) or a work log
//   (`wrk_<32 hex>.log`) are ever put back, only into `W/.murmur/children` and `W/logs`.
// - `W/logs` and `W/.murmur/children` are created (0700) only when absent; an existing one is
//   never chmod'ed (it is the runtime's).
import { dirname } from 'node:path';
import { Codes, GcError, errnoCode } from '../errors.js';
import { failpoint } from '../failpoint.js';
import { allocatedBytes, measureDir } from '../fsx/remove.js';
import { Dir, identityOf, sameIdentity, type Identity } from '../fsx/safe-fs.js';
import { isWorkId } from '../runtime/trace.js';
import { CHILDREN_DIR, LOGS_DIR, WORKDIR_ROOT_NAME } from '../runtime/workdir-scan.js';

export const BESIDE_DIR = '.murmur-gc-beside';
export type BesideSub = typeof CHILDREN_DIR | typeof LOGS_DIR;

/** Open `parent/name`, creating it 0700 only when absent (an existing one is left as it is). */
async function openOrCreate(parent: Dir, name: string): Promise<Dir> {
  if (!(await parent.lstat(name))) {
    try {
      await parent.mkdir(name, 0o700).then((d) => d.close());
    } catch (err) {
      if (errnoCode(err) !== 'EEXIST') throw err;
    }
  }
  return parent.openDir(name);
}

/**
 * Move `from/name` (identity `expect`) into the held session `root/heldEntry` (identity `held`),
 * under `.murmur-gc-beside/<sub>/name`. Returns the bytes it holds. `verify` (a directory only)
 * runs on the moved directory; when it throws, the entry is moved back to `from/name` (when that
 * name is still free) and the error is passed on.
 */
export async function holdBeside(
  root: Dir,
  heldEntry: string,
  held: Identity,
  from: Dir,
  sub: BesideSub,
  name: string,
  expect: Identity,
  verify?: (moved: Dir) => Promise<void>,
): Promise<number> {
  const pre = await from.lstat(name);
  if (!pre || !sameIdentity(identityOf(pre), expect))
    throw new GcError(Codes.changedSinceScan, `${from.display(name)} changed since it was scanned; left alone`);
  await using h = await root.openDir(heldEntry, held);
  await using b = await h.mkdir(BESIDE_DIR, 0o700);
  await using s = await b.mkdir(sub, 0o700);
  if (await s.lstat(name))
    throw new GcError(Codes.ioError, `${s.display(name)} already exists; ${from.display(name)} not moved`);
  try {
    await from.renameInto(name, s, name);
  } catch (err) {
    if (errnoCode(err) === 'EXDEV')
      throw new GcError(
        Codes.crossDevice,
        `${from.display(name)} is on another filesystem than ${root.path}; it cannot be held`,
        { cause: err },
      );
    throw err;
  }
  failpoint('beside:after_hold');
  const post = await s.lstat(name);
  if (!post || !sameIdentity(identityOf(post), expect)) {
    if (post && !(await from.lstat(name))) await s.renameInto(name, from, name).catch(() => undefined);
    throw new GcError(Codes.changedSinceScan, `${from.display(name)} changed while it was being held; put back`);
  }
  if (verify && post.isDirectory()) {
    try {
      await using d = await s.openDir(name, expect);
      await verify(d);
    } catch (err) {
      if (!(await from.lstat(name))) await s.renameInto(name, from, name).catch(() => undefined);
      throw err;
    }
  }
  return post.isDirectory()
    ? (await measureDir(s, name, expect).catch(() => ({ bytes: allocatedBytes(post) }))).bytes
    : allocatedBytes(post);
}

/** One entry a held session holds beside it, and where it goes back to. */
export interface BesideHeld {
  sub: BesideSub;
  name: string;
  /** where it goes back */
  to: string;
}

function canComeBack(sub: BesideSub, name: string): boolean {
  if (sub === LOGS_DIR) return name.endsWith('.log') && isWorkId(name.slice(0, -4));
  return name !== '' && !name.startsWith('.') && !name.includes('/');
}

/** What the held session `held` (an open directory) holds beside it; `rootPath` is its sessions root. */
export async function listBeside(held: Dir, rootPath: string): Promise<BesideHeld[]> {
  const st = await held.lstat(BESIDE_DIR);
  if (!st?.isDirectory()) return [];
  const out: BesideHeld[] = [];
  await using b = await held.openDir(BESIDE_DIR, identityOf(st));
  for (const sub of [CHILDREN_DIR, LOGS_DIR] as const) {
    const sst = await b.lstat(sub);
    if (!sst?.isDirectory()) continue;
    await using s = await b.openDir(sub, identityOf(sst));
    for (const name of await s.list()) {
      if (!canComeBack(sub, name)) continue;
      out.push({
        sub,
        name,
        to: sub === CHILDREN_DIR ? `${rootPath}/${CHILDREN_DIR}/${name}` : `${dirname(rootPath)}/${LOGS_DIR}/${name}`,
      });
    }
  }
  return out;
}

/**
 * Put back what the held session `root/heldEntry` holds beside it (before the session itself is
 * renamed back). `root` is the sessions root `W/.murmur`. Refuses (`exists`, nothing moved) when a
 * target name is taken.
 */
export async function restoreBeside(
  root: Dir,
  heldEntry: string,
  held: Identity,
  refuseExists: (path: string) => Error,
): Promise<BesideHeld[]> {
  await using h = await root.openDir(heldEntry, held);
  const items = await listBeside(h, root.path);
  if (items.length === 0) return [];
  if (root.path.replace(/\/+$/, '').split('/').pop() !== WORKDIR_ROOT_NAME)
    throw new GcError(
      Codes.ioError,
      `${root.path} is not a workdir's sessions root; what ${heldEntry} holds beside it cannot be put back`,
    );
  await using w = await Dir.open(dirname(root.path), { followFinal: true });
  const wr = await w.openDir(WORKDIR_ROOT_NAME);
  await wr.close();
  if (!sameIdentity(wr.identity, root.identity))
    throw new GcError(Codes.changedSinceScan, `${root.path} was replaced; nothing put back`);
  const targets: Record<BesideSub, Dir> = {
    children: await openOrCreate(root, CHILDREN_DIR),
    logs: await openOrCreate(w, LOGS_DIR),
  };
  const b = await h.openDir(BESIDE_DIR);
  try {
    for (const i of items) if (await targets[i.sub].lstat(i.name)) throw refuseExists(i.to);
    for (const sub of [CHILDREN_DIR, LOGS_DIR] as const) {
      const mine = items.filter((i) => i.sub === sub);
      if (mine.length === 0) continue;
      const s = await b.openDir(sub);
      try {
        for (const i of mine) {
          if (sub === LOGS_DIR) {
            await s.linkInto(i.name, targets.logs, i.name);
            await s.unlink(i.name);
          } else await s.renameInto(i.name, targets.children, i.name);
        }
      } finally {
        await s.close();
      }
      await b.rmdir(sub).catch(() => undefined);
    }
  } finally {
    await b.close();
    await targets.children.close();
    await targets.logs.close();
  }
  await h.rmdir(BESIDE_DIR).catch(() => undefined);
  return items;
}
