// Whole-directory removal that cannot be steered outside the tree being removed.
// Guarantees:
// - The target's identity (dev/ino from the scan) is re-checked with lstat at the moment of
//   action; then it is renamed to `.murmur-gc-trash.<run>.<name>` in the same directory (atomic:
//   the runtime and readers see it gone at once) and re-verified through an O_NOFOLLOW descriptor.
//   A mismatch renames it back and reports `changed_since_scan`.
// - Deletion walks descriptor-relatively with an explicit stack (no recursion, no depth limit; at
//   most KEEP_OPEN descriptors: deeper ancestors are closed and re-opened through `..`, checked
//   by identity): a symlink inside is unlinked as a link (its target is never touched),
//   FIFOs/sockets/devices are unlinked without being opened, and a directory on another device (a
//   mount) is never entered.
// - A subdirectory of the tree being removed that its owner cannot read or search (it is ours:
//   same uid, inside a condemned session) gets its owner bits back first, through an O_PATH
//   descriptor (never by name); another user's entries are never chmod'ed.
// - What still cannot go (a mount inside, another user's directory) is reported as an error once:
//   the rest is removed, the remainder is moved aside to `.murmur-gc-kept.<run>.<name>` and the
//   error names it. A later sweep tries it again (`retryKept`: the same walk, never an error when
//   it still cannot go) and reports what is still kept aside until it is gone.
// - An interrupted removal leaves only a trash directory, which the next sweep finishes
//   (`process_interrupted`).
// - Sizes (measured or removed) are allocated bytes, what `du` counts: st_blocks × 512 of every
//   entry of the tree, directories (the top one too) and links included, a file with several
//   links counted once per walk — so a sparse file counts what it holds on disk, not its length
//   (docs/budgets.md).
import { failpoint } from '../failpoint.js';
import { Codes, GcError, codeOf, describeError, errnoCode } from '../errors.js';
import {
  identityOf,
  modeBits,
  processUid,
  sameIdentity,
  yieldIfBusy,
  type BigIntStats,
  type Dir,
  type Identity,
} from './safe-fs.js';

/** Descriptors a walk keeps open at most; deeper ancestors are re-opened through `..`. */
const KEEP_OPEN = 64;

export const KEPT_PREFIX = '.murmur-gc-kept.';

export interface RemovalStats {
  /** Allocated bytes (st_blocks × 512), as `du` counts them. */
  bytes: number;
  files: number;
  dirs: number;
  /** Subdirectories whose owner bits were given back so they could be removed. */
  modesRestored: number;
}

function emptyStats(): RemovalStats {
  return { bytes: 0, files: 0, dirs: 0, modesRestored: 0 };
}

/** The allocated bytes of a directory tree, without changing anything (budgets, dry runs, status). */
export async function measureDir(
  parent: Dir,
  name: string,
  expect?: Identity,
  signal?: AbortSignal,
): Promise<RemovalStats> {
  await using d = await parent.openDir(name, expect);
  return await walk(d, false, signal);
}

interface Frame {
  /** Open descriptor, or undefined while closed to save descriptors (re-opened via `..`). */
  dir: Dir | undefined;
  identity: Identity;
  display: string;
  /** This directory's name in its parent. */
  name: string;
  names: string[];
  next: number;
}

/** Open a subdirectory for the walk; when removing, give an owner-locked one of ours its bits back. */
async function openSub(
  parent: Dir,
  name: string,
  st: BigIntStats,
  remove: boolean,
  stats: RemovalStats,
): Promise<Dir | undefined> {
  const id = identityOf(st);
  if (remove && Number(st.uid) === processUid() && (modeBits(st) & 0o700) !== 0o700) {
    await parent.chmodChildNoFollow(name, id, modeBits(st) | 0o700);
    stats.modesRestored++;
  }
  try {
    return await parent.openDir(name, id);
  } catch (err) {
    // Measuring only: a subtree we may not read is left out of the count.
    if (!remove && errnoCode(err) === 'EACCES') return undefined;
    throw err;
  }
}

/** What an entry holds on disk: st_blocks × 512 (`du`'s measure), whatever its length says. */
export function allocatedBytes(st: BigIntStats): number {
  return Number(st.blocks) * 512;
}

/**
 * Walk (and optionally empty) `top`; `top` itself is neither closed nor removed. Removing, an
 * entry that cannot go (another user's directory, a mount, a directory left non-empty by one) is
 * passed over and the walk goes on with the rest, so everything that can go goes; the first such
 * error is thrown at the end.
 */
async function walk(top: Dir, remove: boolean, signal?: AbortSignal): Promise<RemovalStats> {
  const stats = emptyStats();
  stats.bytes += allocatedBytes(top.stat);
  /** inodes with several links already counted in this walk */
  const linked = new Set<bigint>();
  const stack: Frame[] = [
    { dir: top, identity: top.identity, display: top.path, name: '', names: await top.list(), next: 0 },
  ];
  let firstError: Error | undefined;
  const passOver = (err: unknown) => {
    if (err instanceof Error && err.name === 'AbortError') throw err;
    firstError ??= err instanceof Error ? err : new GcError(Codes.ioError, describeError(err));
  };
  try {
    while (stack.length > 0) {
      const f = stack[stack.length - 1]!;
      const dir = f.dir!;
      if (f.next >= f.names.length) {
        if (stack.length === 1) break;
        stack.pop();
        const parent = stack[stack.length - 1]!;
        parent.dir ??= await dir.openParent(parent.identity, parent.display);
        await dir.close();
        if (remove) {
          try {
            await parent.dir.rmdir(f.name);
          } catch (err) {
            passOver(err);
            continue;
          }
        }
        stats.dirs++;
        continue;
      }
      const name = f.names[f.next++]!;
      await yieldIfBusy();
      signal?.throwIfAborted();
      const st = await dir.lstat(name);
      if (!st) continue;
      if (st.isDirectory()) {
        let sub: Dir | undefined;
        try {
          sub = await openSub(dir, name, st, remove, stats);
        } catch (err) {
          if (!remove) throw err;
          passOver(err);
          continue;
        }
        if (!sub) continue;
        stats.bytes += allocatedBytes(st);
        let names: string[];
        try {
          names = await sub.list();
        } catch (err) {
          await sub.close();
          if (!remove && errnoCode(err) === 'EACCES') continue;
          if (!remove) throw err;
          passOver(err);
          continue;
        }
        stack.push({ dir: sub, identity: sub.identity, display: sub.path, name, names, next: 0 });
        const far = stack[stack.length - 1 - KEEP_OPEN];
        if (far?.dir && far.dir !== top) {
          await far.dir.close();
          far.dir = undefined;
        }
      } else {
        if (remove) {
          try {
            await dir.unlink(name);
          } catch (err) {
            passOver(err);
            continue;
          }
        }
        if (st.nlink <= 1n || !linked.has(st.ino)) stats.bytes += allocatedBytes(st);
        if (st.nlink > 1n) linked.add(st.ino);
        stats.files++;
      }
    }
  } finally {
    for (const f of stack) if (f.dir && f.dir !== top) await f.dir.close();
  }
  if (firstError !== undefined) throw firstError;
  return stats;
}

export function trashName(runId: string, name: string): string {
  return `.murmur-gc-trash.${runId}.${name}`;
}

/** Where what a removal of run `runId` could not remove whole is set aside. */
export function keptName(runId: string, name: string): string {
  return `${KEPT_PREFIX}${runId}.${name}`;
}

export interface RemoveOptions {
  runId: string;
  signal?: AbortSignal;
  /** Called after the rename into trash and before deletion; throwing puts the entry back. */
  verifyInTrash?: (trash: Dir) => Promise<void>;
}

/** Make a directory of ours we are about to empty readable and searchable to its owner. */
async function ownerBits(parent: Dir, name: string, expect: Identity): Promise<void> {
  const st = await parent.lstat(name);
  if (
    st?.isDirectory() &&
    sameIdentity(identityOf(st), expect) &&
    Number(st.uid) === processUid() &&
    (modeBits(st) & 0o700) !== 0o700
  ) {
    await parent.chmodChildNoFollow(name, expect, modeBits(st) | 0o700);
  }
}

/**
 * Empty and remove the trash directory `parent/trash`. When something inside cannot go, what is
 * left is moved aside under a name no sweep retries, and one error says so.
 */
async function emptyTrash(
  parent: Dir,
  trash: Dir,
  trashEntry: string,
  runId: string,
  original: string,
): Promise<RemovalStats> {
  let stats: RemovalStats;
  try {
    stats = await walk(trash, true);
    await trash.close();
    await parent.rmdir(trashEntry);
    stats.dirs++;
    return stats;
  } catch (err) {
    if (err instanceof Error && err.name === 'AbortError') throw err;
    await trash.close();
    const kept = keptName(runId, original);
    let moved = false;
    try {
      await parent.rename(trashEntry, kept);
      moved = true;
    } catch {
      // left under its trash name: the next sweep tries once more
    }
    throw new GcError(
      codeOf(err),
      moved
        ? `${parent.display(original)} could not be removed whole (${describeError(err)}); what is left was moved to ${parent.display(kept)}: each later sweep tries it again and reports it until it is gone`
        : `${parent.display(original)} could not be removed whole (${describeError(err)}); it was left in ${parent.display(trashEntry)}, which the next sweep finishes removing`,
      { cause: err },
    );
  }
}

/** Remove `parent/name` (a directory whose identity must still be `expect`). */
export async function removeDir(
  parent: Dir,
  name: string,
  expect: Identity,
  opts: RemoveOptions,
): Promise<RemovalStats> {
  const st = await parent.lstat(name);
  if (!st || !st.isDirectory() || !sameIdentity(identityOf(st), expect)) {
    throw new GcError(Codes.changedSinceScan, `${parent.display(name)} changed since it was scanned; left alone`);
  }
  opts.signal?.throwIfAborted();
  const trash = trashName(opts.runId, name);
  await parent.rename(name, trash);
  failpoint('remove:after_trash_rename');
  let tdir: Dir;
  try {
    await ownerBits(parent, trash, expect);
    tdir = await parent.openDir(trash, expect);
    if (opts.verifyInTrash) {
      try {
        await opts.verifyInTrash(tdir);
      } catch (err) {
        await tdir.close();
        throw err;
      }
    }
  } catch (err) {
    // Put back whatever we moved, unless the name was taken again meanwhile.
    if (!(await parent.lstat(name))) await parent.rename(trash, name).catch(() => undefined);
    throw err;
  }
  // From here the removal is committed: finish it even if aborted (abort is checked per entry only
  // before the rename), so a stop never leaves half a directory behind under its real name.
  return emptyTrash(parent, tdir, trash, opts.runId, name);
}

/** Finish removing a trash directory left by an interrupted run. */
export async function finishTrash(parent: Dir, name: string, expect: Identity): Promise<RemovalStats> {
  await ownerBits(parent, name, expect);
  const d = await parent.openDir(name, expect);
  // `.murmur-gc-trash.<run>.<original>`: what is left keeps the run and original name.
  const rest = name.startsWith('.murmur-gc-trash.') ? name.slice('.murmur-gc-trash.'.length) : name;
  const dot = rest.indexOf('.');
  return emptyTrash(parent, d, name, dot > 0 ? rest.slice(0, dot) : 'unknown', dot > 0 ? rest.slice(dot + 1) : rest);
}

export type KeptRetry = { removed: true; stats: RemovalStats } | { removed: false; bytes: number; why: string };

/**
 * Try once more to remove `parent/name`, a directory an earlier removal set aside
 * (`.murmur-gc-kept.<run>.<name>`), whose identity must be `expect`: the same walk as any removal
 * (descriptor-relative, links never followed, mounts never crossed, owner bits given back only
 * to our own subdirectories). What can go goes; when something still cannot, the rest stays
 * under its name and this says so (never throws for it): the caller reports it as kept aside.
 */
export async function retryKept(parent: Dir, name: string, expect: Identity): Promise<KeptRetry> {
  const st = await parent.lstat(name);
  if (!st || !st.isDirectory() || !sameIdentity(identityOf(st), expect))
    return { removed: false, bytes: 0, why: 'it changed since it was scanned' };
  try {
    await ownerBits(parent, name, expect);
    const d = await parent.openDir(name, expect);
    let stats: RemovalStats;
    try {
      stats = await walk(d, true);
    } finally {
      await d.close();
    }
    await parent.rmdir(name);
    stats.dirs++;
    return { removed: true, stats };
  } catch (err) {
    if (err instanceof Error && err.name === 'AbortError') throw err;
    const bytes = await measureDir(parent, name, expect).then(
      (m) => m.bytes,
      () => 0,
    );
    return { removed: false, bytes, why: describeError(err) };
  }
}
