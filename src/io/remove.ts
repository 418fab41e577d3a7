// Whole-directory removal that cannot be steered outside the tree being removed.
// Guarantees:
// - The target's identity (dev/ino from the scan) is re-checked with lstat at the moment of
//   action; then it is renamed to `.murmur-gc-trash.<run>.<name>` in the same directory (atomic:
//   the runtime and readers see it gone at once) and re-verified through an O_NOFOLLOW descriptor.
//   A mismatch renames it back and reports `changed_since_scan`.
// - Deletion walks descriptor-relatively: a symlink inside is unlinked as a link (its target is
//   never touched), FIFOs/sockets/devices are unlinked without being opened, and a directory on
//   another device (a mount) is never entered — the removal stops with `cross_device`, leaving a
//   trash directory the next sweep reports and retries.
// - An interrupted removal leaves only a trash directory, which the next sweep finishes
//   (`process_interrupted`). Depth is bounded (256).
import { Codes, GcError, codeOf, describeError, isAbort } from '../errors.js';
import { sameIdentity, identityOf, yieldIfBusy, type Dir, type Identity } from './safe-fs.js';

const MAX_DEPTH = 256;

export interface RemovalStats {
  bytes: number;
  files: number;
  dirs: number;
}

function emptyStats(): RemovalStats {
  return { bytes: 0, files: 0, dirs: 0 };
}

/** Sum the regular-file bytes under a directory without changing anything (dry runs, reports). */
export async function measureDir(parent: Dir, name: string, expect?: Identity, signal?: AbortSignal): Promise<RemovalStats> {
  const d = await parent.openDir(name, expect);
  try {
    return await walk(d, 0, false, signal);
  } finally {
    await d.close();
  }
}

async function walk(dir: Dir, depth: number, remove: boolean, signal?: AbortSignal): Promise<RemovalStats> {
  if (depth > MAX_DEPTH) throw new GcError(Codes.ioError, `${dir.path} is nested deeper than ${MAX_DEPTH} levels; not walking further`);
  const stats = emptyStats();
  for (const name of await dir.list()) {
    await yieldIfBusy();
    signal?.throwIfAborted();
    const st = await dir.lstat(name);
    if (!st) continue;
    if (st.isDirectory()) {
      const sub = await dir.openDir(name, identityOf(st));
      try {
        const s = await walk(sub, depth + 1, remove, signal);
        stats.bytes += s.bytes;
        stats.files += s.files;
        stats.dirs += s.dirs;
      } finally {
        await sub.close();
      }
      if (remove) await dir.rmdir(name);
      stats.dirs++;
    } else {
      if (st.isFile()) stats.bytes += Number(st.size);
      stats.files++;
      if (remove) await dir.unlink(name);
    }
  }
  return stats;
}

export function trashName(runId: string, name: string): string {
  return `.murmur-gc-trash.${runId}.${name}`;
}

export interface RemoveOptions {
  runId: string;
  signal?: AbortSignal;
  /** Called after the rename into trash and before deletion; throwing puts the entry back. */
  verifyInTrash?: (trash: Dir) => Promise<void>;
}

/** Remove `parent/name` (a directory whose identity must still be `expect`). */
export async function removeDir(parent: Dir, name: string, expect: Identity, opts: RemoveOptions): Promise<RemovalStats> {
  const st = await parent.lstat(name);
  if (!st || !st.isDirectory() || !sameIdentity(identityOf(st), expect)) {
    throw new GcError(Codes.changedSinceScan, `${parent.display(name)} changed since it was scanned; left alone`);
  }
  opts.signal?.throwIfAborted();
  const trash = trashName(opts.runId, name);
  await parent.rename(name, trash);
  let tdir: Dir;
  try {
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
  try {
    const stats = await walk(tdir, 0, true);
    await tdir.close();
    await parent.rmdir(trash);
    stats.dirs++;
    return stats;
  } catch (err) {
    if (isAbort(err)) throw err;
    // Say where it is now: under its trash name, which the next sweep finishes removing.
    throw new GcError(
      codeOf(err),
      `${describeError(err)}; it was left in ${parent.display(trash)}, which the next sweep finishes removing`,
      { cause: err },
    );
  } finally {
    await tdir.close();
  }
}

/** Finish removing a trash directory left by an interrupted run. */
export async function finishTrash(parent: Dir, name: string, expect: Identity): Promise<RemovalStats> {
  const d = await parent.openDir(name, expect);
  try {
    const stats = await walk(d, 0, true);
    await d.close();
    await parent.rmdir(name);
    stats.dirs++;
    return stats;
  } finally {
    await d.close();
  }
}
