// Who holds a murmur-gc lock: `<lock>.owner.json` ({pid, start_time}) beside the lock directory.
// Guarantees: only ever read/written under <home>/gc; a missing or garbled owner file means
// "unknown holder" (the lock then only goes away by going stale); the stale lock directory is
// removed only when it is an empty directory (proper-lockfile's own layout), never followed.
import { dirname, basename } from 'node:path';
import { Dir, readSmallFile } from './safe-fs.js';

export interface LockOwner {
  pid: number;
  start_time: string | null;
  /** inode of the lock directory this owner created; a different lock dir is not ours to break */
  lock_ino: string | null;
}

export async function lockDirIno(lockPath: string): Promise<string | null> {
  try {
    const d = await Dir.open(dirname(lockPath));
    try {
      const st = await d.lstat(basename(lockPath));
      return st?.isDirectory() ? st.ino.toString() : null;
    } finally {
      await d.close();
    }
  } catch {
    return null;
  }
}

function ownerName(lockPath: string): string {
  return `${basename(lockPath)}.owner.json`;
}

export async function writeOwnerFile(lockPath: string, owner: LockOwner): Promise<void> {
  const d = await Dir.open(dirname(lockPath));
  try {
    // Not fsync'ed: after a crash a missing owner only means the lock waits to go stale.
    await d.writeFileAtomic(ownerName(lockPath), JSON.stringify(owner), 0o600, { durable: false });
  } finally {
    await d.close();
  }
}

export async function readOwnerFile(lockPath: string): Promise<Partial<LockOwner> | undefined> {
  try {
    const d = await Dir.open(dirname(lockPath));
    try {
      const raw = await readSmallFile(d, ownerName(lockPath), 4096);
      const o = JSON.parse(raw.toString('utf8')) as unknown;
      return typeof o === 'object' && o !== null ? (o) : undefined;
    } finally {
      await d.close();
    }
  } catch {
    return undefined;
  }
}

export async function removeOwnerFile(lockPath: string): Promise<void> {
  const d = await Dir.open(dirname(lockPath));
  try {
    await d.unlink(ownerName(lockPath));
  } finally {
    await d.close();
  }
}

export async function removeStaleLockDir(lockPath: string): Promise<void> {
  const d = await Dir.open(dirname(lockPath));
  try {
    const st = await d.lstat(basename(lockPath));
    if (st?.isDirectory()) await d.rmdir(basename(lockPath));
  } finally {
    await d.close();
  }
}
