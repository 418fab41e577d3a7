// The reserve: `<home>/gc/.reserve`, a file of RESERVE_BYTES of real blocks (written, never
// sparse), and — on a filesystem with a fixed number of inodes — `<home>/gc/.reserve-inodes/`, a
// directory of RESERVE_INODES empty files, that murmur-gc keeps whenever the home exists, so that a
// sweep on a filesystem out of space or out of inodes — with keep_free configured before or only
// after it filled — can still write its lock and audit before it removes anything (docs/budgets.md,
// "A full disk"; docs/fates.md, "The reserve").
// Guarantees:
// - Only ever these names in murmur-gc's own directory, opened and removed descriptor-relatively
//   (never following a link); anything at those names that is not a regular file (a directory of
//   ours, holding only files named as ours) is left alone and counts as no reserve.
// - Created whole or not at all, only under the sweep lock: written under a temp name (one left
//   by a killed creation is replaced), synced, renamed into place; a write that runs out of space
//   removes its temp and leaves no reserve (the caller decides when there is room: `fitsReserve`).
// - Released (unlinked, with such a temp) when the filesystem has less than RESERVE_BYTES free
//   (`releasesReserve`); what it frees is their allocated size. The inode part is released alone
//   when fewer than RESERVE_INODES inodes are free (`releasesInodes`). Put back by a sweep once it
//   has room for it (`fitsReserve`, `fitsInodes`).
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

/**
 * Whether there is room to put the reserve back: another reserve's worth stays free with it in
 * place (so the next sweep does not release it at once). keep_free does not enter: the reserve is
 * what lets a sweep run on a full filesystem, worth more than the last MiB of keep_free (keep_free
 * wants room for it on top while it is missing, src/plan/fates.ts, and reports what it still
 * misses with it in place).
 */
export function fitsReserve(freeBytes: number): boolean {
  return freeBytes >= 2 * RESERVE_BYTES;
}

/** The inode part: this many empty files in RESERVE_INODES_NAME (the directory is one more inode). */
export const RESERVE_INODES = 64;
export const RESERVE_INODES_NAME = '.reserve-inodes';
const RESERVE_INODES_TEMP = '.reserve-inodes.tmp';
const inodeFile = (i: number) => `i${String(i).padStart(2, '0')}`;
const INODE_FILE = /^i[0-9]{2}$/;

/** Whether a sweep finding `freeInodes` free releases the inode part: fewer than it holds are free. */
export function releasesInodes(freeInodes: number): boolean {
  return freeInodes < RESERVE_INODES;
}

/** The inodes the inode part takes (its files and its directory): keep_free's room for it while it is missing. */
export const RESERVE_INODES_ROOM = RESERVE_INODES + 1;

/** Whether there is room to put the inode part back: as many inodes again stay free with it in place. */
export function fitsInodes(freeInodes: number): boolean {
  return freeInodes >= 2 * RESERVE_INODES_ROOM;
}

/**
 * The inodes the inode part at `name` holds (its files and itself), or 0 when there is none: it
 * must be a directory of ours holding only empty regular files of ours named as the reserve names
 * them (anything else there is left alone and counts as no reserve).
 */
export async function reserveInodes(gc: Dir, name = RESERVE_INODES_NAME): Promise<number> {
  const st = await gc.lstat(name);
  if (!st?.isDirectory() || Number(st.uid) !== processUid()) return 0;
  await using d = await gc.openDir(name);
  const names = await d.list();
  for (const n of names) {
    const f = await d.lstat(n);
    if (!INODE_FILE.test(n) || !f?.isFile() || Number(f.uid) !== processUid() || f.size !== 0n) return 0;
  }
  return names.length + 1;
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

/** Remove the inode part (and a killed creation's temp); the inodes they held. */
export async function releaseInodes(gc: Dir): Promise<number> {
  let freed = 0;
  for (const name of [RESERVE_INODES_NAME, RESERVE_INODES_TEMP]) {
    if ((await reserveInodes(gc, name)) === 0) continue;
    freed += await removeInodeDir(gc, name);
  }
  return freed;
}

/** Unlink the reserve's files in `gc/name`, then the directory; the inodes freed. */
async function removeInodeDir(gc: Dir, name: string): Promise<number> {
  let freed = 0;
  const d = await gc.openDir(name);
  try {
    for (const n of await d.list()) {
      if (!INODE_FILE.test(n)) continue;
      await d.unlink(n);
      freed++;
    }
  } finally {
    await d.close();
  }
  await gc.rmdir(name);
  return freed + 1;
}

/**
 * Create the inode part unless it is there: its files in a temp directory, synced, renamed into
 * place; false when the filesystem has no inodes (or space) for it (the temp is removed).
 */
export async function createInodeReserve(gc: Dir): Promise<boolean> {
  const have = await reserveInodes(gc);
  if (have > RESERVE_INODES) return true;
  if (have > 0) await removeInodeDir(gc, RESERVE_INODES_NAME); // one a killed release left short
  if ((await reserveInodes(gc, RESERVE_INODES_TEMP)) > 0) await removeInodeDir(gc, RESERVE_INODES_TEMP);
  else if (await gc.lstat(RESERVE_INODES_TEMP)) return false; // not ours: left alone
  let made = false;
  return placeByRename(
    gc,
    RESERVE_INODES_TEMP,
    RESERVE_INODES_NAME,
    async () => {
      await using d = await gc.mkdir(RESERVE_INODES_TEMP, 0o700);
      made = true;
      for (let i = 0; i < RESERVE_INODES; i++) await (await d.createExclusive(inodeFile(i), 0o600)).close();
      await d.sync();
    },
    async () => {
      if (made) await removeInodeDir(gc, RESERVE_INODES_TEMP);
    },
  );
}

/**
 * Write `temp` whole (`write`), then rename it to `name`: true once it is in place; false, with
 * `discard` run, when the filesystem had no room (ENOSPC, EDQUOT); any other error is thrown,
 * `discard` run too.
 */
async function placeByRename(
  gc: Dir,
  temp: string,
  name: string,
  write: () => Promise<void>,
  discard: () => Promise<void>,
): Promise<boolean> {
  let placed = false;
  try {
    await write();
    await gc.rename(temp, name);
    placed = true;
    return true;
  } catch (err) {
    if (errnoCode(err) === 'ENOSPC' || errnoCode(err) === 'EDQUOT') return false;
    throw err;
  } finally {
    if (!placed) await discard().catch(() => undefined);
  }
}

/** Write the reserve (real blocks) unless it is there; false when it could not be (no space). */
export async function createReserve(gc: Dir): Promise<boolean> {
  if ((await reserveBytes(gc)) >= RESERVE_BYTES) return true;
  if ((await gc.lstat(RESERVE_TEMP))?.isFile()) await gc.unlink(RESERVE_TEMP);
  const fh = await gc.createExclusive(RESERVE_TEMP, 0o600);
  return placeByRename(
    gc,
    RESERVE_TEMP,
    RESERVE_NAME,
    async () => {
      const chunk = Buffer.alloc(64 << 10);
      for (let at = 0; at < RESERVE_BYTES; at += chunk.length) {
        let w = 0;
        while (w < chunk.length) w += (await fh.write(chunk, w, chunk.length - w, at + w)).bytesWritten;
      }
      await fh.sync();
      await fh.close();
    },
    async () => {
      await fh.close().catch(() => undefined);
      await gc.unlink(RESERVE_TEMP);
    },
  );
}
