// The reserve: `<home>/gc/.reserve`, a file of RESERVE_BYTES of real blocks (written, never
// sparse) that murmur-gc keeps whenever the home exists, so that a sweep on a full filesystem —
// with keep_free configured before or only after it filled — can still write its lock and audit
// before it removes anything (README "Disk budgets").
// Guarantees:
// - Only ever this one name in murmur-gc's own directory, opened and removed descriptor-relatively
//   (never following a link); anything at that name that is not a regular file of ours is left
//   alone and counts as no reserve.
// - Created whole or not at all, only under the sweep lock: written under a temp name (one left
//   by a killed creation is replaced), synced, renamed into place; a write that runs out of space
//   removes its temp and leaves no reserve (the caller decides when there is room: `fitsReserve`).
// - Released (unlinked, with such a temp) when the filesystem has less than RESERVE_BYTES free
//   (`releasesReserve`); what it frees is their allocated size. Put back by a sweep once it has
//   room for it (`fitsReserve`).
import { errnoCode } from '../errors.js';
import { allocatedBytes } from '../fsx/remove.js';
import { processUid, type Dir } from '../fsx/safe-fs.js';

export const RESERVE_NAME = '.reserve';
export const RESERVE_BYTES = 1 << 20;
/** Where the reserve is written before it is renamed into place (only under the sweep lock). */
const RESERVE_TEMP = '.reserve.tmp';

/** Allocated bytes of the reserve in `gc`, or 0 when there is none (or something else is there). */
export async function reserveBytes(gc: Dir, name = RESERVE_NAME): Promise<number> {
  const st = await gc.lstat(name);
  if (!st?.isFile() || Number(st.uid) !== processUid()) return 0;
  return allocatedBytes(st);
}

/** Whether a sweep finding `freeBytes` free releases the reserve: less than the reserve is free. */
export function releasesReserve(freeBytes: number): boolean {
  return freeBytes < RESERVE_BYTES;
}

/** Whether there is room to put the reserve back: keep_free (or, without it, another reserve's worth) stays free with it in place. */
export function fitsReserve(freeBytes: number, keepFreeRequired: number): boolean {
  return freeBytes >= keepFreeRequired + RESERVE_BYTES;
}

/** Remove the reserve (and the temp of a creation that was killed); the bytes they held. */
export async function releaseReserve(gc: Dir): Promise<number> {
  let freed = 0;
  for (const name of [RESERVE_NAME, RESERVE_TEMP]) {
    const bytes = await reserveBytes(gc, name);
    if (bytes === 0) continue;
    try {
      await gc.unlink(name);
      freed += bytes;
    } catch (err) {
      if (errnoCode(err) !== 'ENOENT') throw err;
    }
  }
  return freed;
}

/** Write the reserve (real blocks) unless it is there; false when it could not be (no space). */
export async function createReserve(gc: Dir): Promise<boolean> {
  if ((await reserveBytes(gc)) >= RESERVE_BYTES) return true;
  if ((await gc.lstat(RESERVE_TEMP))?.isFile()) await gc.unlink(RESERVE_TEMP);
  const fh = await gc.createExclusive(RESERVE_TEMP, 0o600);
  let placed = false;
  try {
    const chunk = Buffer.alloc(64 << 10);
    for (let at = 0; at < RESERVE_BYTES; at += chunk.length) {
      let w = 0;
      while (w < chunk.length) w += (await fh.write(chunk, w, chunk.length - w, at + w)).bytesWritten;
    }
    await fh.sync();
    await fh.close();
    await gc.rename(RESERVE_TEMP, RESERVE_NAME);
    placed = true;
    return true;
  } catch (err) {
    if (errnoCode(err) === 'ENOSPC' || errnoCode(err) === 'EDQUOT') return false;
    throw err;
  } finally {
    await fh.close().catch(() => undefined);
    if (!placed) await gc.unlink(RESERVE_TEMP).catch(() => undefined);
  }
}
