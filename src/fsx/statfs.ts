// Free space of a filesystem (for `keep_free` and the reserve): one statfs(2) call, nothing read
// or written.
// Guarantees: `freeBytes` is what an unprivileged writer can still use (f_bavail, as `df` shows
// it), `totalBytes` the filesystem's size (f_blocks); both in bytes. `totalInodes`/`freeInodes`
// are f_files/f_ffree (as `df -i`); a filesystem with no fixed number of inodes (btrfs, some
// network filesystems) reports 0 total, and then nothing is judged by inodes.
import { promises as fsp } from 'node:fs';

export interface FsSpace {
  totalBytes: number;
  freeBytes: number;
  /** absent (an injected statfs) or 0 (the filesystem has no fixed number): inodes are not counted */
  totalInodes?: number;
  freeInodes?: number;
}

export type StatFs = (path: string) => Promise<FsSpace>;

export const statFs: StatFs = async (path) => {
  const s = await fsp.statfs(path);
  return { totalBytes: s.blocks * s.bsize, freeBytes: s.bavail * s.bsize, totalInodes: s.files, freeInodes: s.ffree };
};

/** Whether the filesystem counts inodes (a fixed number of them that can run out). */
export function countsInodes(s: FsSpace): s is FsSpace & { totalInodes: number; freeInodes: number } {
  return s.totalInodes !== undefined && s.totalInodes > 0 && s.freeInodes !== undefined;
}
