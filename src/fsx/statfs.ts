// Free space of a filesystem (for `keep_free`): one statfs(2) call, nothing read or written.
// Guarantees: `freeBytes` is what an unprivileged writer can still use (f_bavail, as `df` shows
// it), `totalBytes` the filesystem's size (f_blocks); both in bytes.
import { promises as fsp } from 'node:fs';

export interface FsSpace {
  totalBytes: number;
  freeBytes: number;
}

export type StatFs = (path: string) => Promise<FsSpace>;

export const statFs: StatFs = async (path) => {
  const s = await fsp.statfs(path);
  return { totalBytes: s.blocks * s.bsize, freeBytes: s.bavail * s.bsize };
};
