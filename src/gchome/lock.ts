// Locks between murmur-gc instances (proper-lockfile: a `<name>.lock` directory refreshed by mtime).
// Guarantees:
// - One sweep at a time: `<home>/gc/sweep.lock`; one writer per record:
//   `<home>/gc/locks/<store>/<context>.lock`. Lock dirs live under <home>/gc, never in the
//   runtime's own directories.
// - A compromised lock never crashes the process: `onCompromised` aborts the holder's
//   AbortSignal, and the holder checks it before every commit point (rename, removal).
// - `probeLock` only looks (for --dry-run): it creates nothing. Something that is not a directory
//   at a lock's path is never a lock (every murmur-gc makes its locks with mkdir): not held.
// - `inspectLockPath` tells a lock from debris at a lock's path with lstat and a listing only
//   (nothing there is opened as a file, so a FIFO is never opened, and no link is followed):
//   anything but a directory is debris; so is a directory holding entries (a lock directory is
//   empty) whose holder is dead, or that has no holder at all and has gone untouched for
//   LOCK_STALE_MS. An empty directory, or one whose holder may be alive, is a lock (taken over,
//   or waited for, as ever). The caller removes the debris through its effects and reports it
//   (`lock_debris`), so one planted or left file cannot block every sweep.
import lockfile from 'proper-lockfile';
import { identityOf, lstatPath, type Dir, type Identity } from '../fsx/safe-fs.js';
import { Codes, GcError } from '../errors.js';
import { startTimeOf } from '../runtime/running.js';
import {
  dismantleLock,
  judgeHolder,
  lockDirIno,
  promoteCandidate,
  readOwnerFile,
  removeCandidate,
  removeLockDir,
  writeCandidate,
} from './lock-owner.js';

export const LOCK_STALE_MS = 30_000;
export const LOCK_UPDATE_MS = 5_000;

export interface HeldLock {
  /** True when the lock was free only because a dead holder's lock was broken first. */
  readonly brokeDeadHolder: boolean;
  /** Aborted when the lock is compromised (stolen after going stale) or released. */
  readonly signal: AbortSignal;
  release(): Promise<void>;
}

export interface AcquireOptions {
  /** Total time to keep retrying while the lock is held elsewhere (0 = fail at once). */
  waitMs: number;
  /** Staleness window (tests only; every murmur-gc must use the same value in production). */
  staleMs?: number;
}

function target(lockPath: string): string {
  return lockPath.endsWith('.lock') ? lockPath.slice(0, -'.lock'.length) : lockPath;
}

/**
 * Acquire `lockPath` (a directory path ending in `.lock`; its parent must exist). A lock whose
 * recorded holder is dead is broken and taken (`brokeDeadHolder`). undefined = held elsewhere.
 */
export async function acquireLock(lockPath: string, opts: AcquireOptions): Promise<HeldLock | undefined> {
  const first = await tryAcquire(lockPath, opts, false);
  if (first) return first;
  if (await breakDeadLock(lockPath)) return tryAcquire(lockPath, { waitMs: 0 }, true);
  return undefined;
}

async function tryAcquire(
  lockPath: string,
  opts: AcquireOptions,
  brokeDeadHolder: boolean,
): Promise<HeldLock | undefined> {
  const controller = new AbortController();
  const retries =
    opts.waitMs <= 0
      ? 0
      : { retries: Math.max(1, Math.ceil(opts.waitMs / 250)), minTimeout: 100, maxTimeout: 250, factor: 1.5 };
  const startTime = (await startTimeOf(process.pid)) ?? null;
  // Evidence of us exists before the lock directory can (see lock-owner.ts): a kill at any point
  // leaves a lock the next run can tell is dead.
  const candidate = await writeCandidate(lockPath, { pid: process.pid, start_time: startTime });
  let releaseFn: () => Promise<void>;
  try {
    releaseFn = await lockfile.lock(target(lockPath), {
      lockfilePath: lockPath,
      realpath: false,
      stale: opts.staleMs ?? LOCK_STALE_MS,
      update: Math.min(LOCK_UPDATE_MS, Math.floor((opts.staleMs ?? LOCK_STALE_MS) / 2)),
      retries,
      onCompromised: (err: Error) => {
        controller.abort(new GcError(Codes.lockCompromised, `lock ${lockPath} was compromised: ${err.message}`));
      },
    });
  } catch (err) {
    await removeCandidate(lockPath, candidate);
    if (typeof err === 'object' && err !== null && (err as { code?: string }).code === 'ELOCKED') return undefined;
    throw err;
  }
  try {
    await promoteCandidate(lockPath, candidate, {
      pid: process.pid,
      start_time: startTime,
      lock_ino: await lockDirIno(lockPath),
    });
  } catch {
    // The candidate stays as the evidence (ENOSPC…): still decidable, and removed on release.
  }
  let released = false;
  return {
    brokeDeadHolder,
    signal: controller.signal,
    async release() {
      if (released) return;
      released = true;
      const unlock = async () => {
        try {
          await releaseFn();
        } catch {
          // ERELEASED / ECOMPROMISED: nothing left to release.
        }
      };
      try {
        await dismantleLock(lockPath, process.pid, null, unlock);
      } catch {
        await unlock();
      }
      await removeCandidate(lockPath, candidate).catch(() => undefined);
    },
  };
}

/**
 * A lock whose holder process is gone (killed predecessor) is broken at once instead of waiting
 * for it to go stale. Returns true when a dead holder's lock was removed.
 */
export async function breakDeadLock(lockPath: string): Promise<boolean> {
  const { verdict, ino } = await judgeHolder(lockPath).catch(() => ({ verdict: 'unknown' as const, ino: null }));
  if (verdict !== 'dead' || ino === null) return false;
  const owner = await readOwnerFile(lockPath);
  const holderPid = typeof owner?.pid === 'number' && owner.lock_ino === ino ? owner.pid : -1;
  await dismantleLock(lockPath, holderPid, ino, () => removeLockDir(lockPath));
  return (await lockDirIno(lockPath)) !== ino;
}

/** The lock exists and every piece of evidence of its holder names a dead process. */
export async function holderIsDead(lockPath: string): Promise<boolean> {
  return (await judgeHolder(lockPath).catch(() => ({ verdict: 'unknown' as const }))).verdict === 'dead';
}

/** True when another holder currently has the lock (stale locks count as free). Creates nothing. */
export async function probeLock(lockPath: string): Promise<boolean> {
  try {
    const st = await lstatPath(lockPath);
    if (!st?.isDirectory()) return false;
    const held = await lockfile.check(target(lockPath), {
      lockfilePath: lockPath,
      realpath: false,
      stale: LOCK_STALE_MS,
    });
    return held && !(await holderIsDead(lockPath));
  } catch {
    return false;
  }
}

/** Lock path of one record, under `<home>/gc/locks/`. Segments are single names already. */
export function recordLockPath(home: string, store: string, context: string): string {
  return `${home}/gc/locks/${encodeURIComponent(store)}/${encodeURIComponent(context)}.lock`;
}

/**
 * Lock path guarding appends to one session's trace (by a hash: paths can be long). node:crypto is
 * loaded on first use: a sweep that appends to no trace never pays for it.
 */
export function traceLockPath(home: string, root: string, session: string): string {
  const key = process
    .getBuiltinModule('node:crypto')
    .createHash('sha256')
    .update(`${root}/${session}`)
    .digest('hex')
    .slice(0, 32);
  return `${home}/gc/locks/traces/${key}.lock`;
}

/** Create `<home>/gc/locks/<segment…>` (0700 each) so a lock can be taken inside it. */
export async function ensureLockDir(home: Dir, segments: string[]): Promise<void> {
  let cur = await home.mkdir('gc', 0o700);
  try {
    for (const seg of ['locks', ...segments]) {
      const next = await cur.mkdir(seg, 0o700);
      await cur.close();
      cur = next;
    }
  } finally {
    await cur.close();
  }
}

export function sweepLockPath(home: string): string {
  return `${home}/gc/sweep.lock`;
}

/** What sits where a lock directory belongs (see the header). */
export type LockPathState =
  { kind: 'free' } | { kind: 'lock' } | { kind: 'debris'; what: string; identity: Identity; isDir: boolean };

function kindOf(st: {
  isFile(): boolean;
  isFIFO(): boolean;
  isSocket(): boolean;
  isSymbolicLink(): boolean;
  isBlockDevice(): boolean;
  isCharacterDevice(): boolean;
}): string {
  if (st.isFile()) return 'a regular file';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isSocket()) return 'a socket';
  if (st.isSymbolicLink()) return 'a symbolic link';
  if (st.isBlockDevice() || st.isCharacterDevice()) return 'a device node';
  return 'not a directory';
}

/**
 * Judge `parent/name` (a lock's path, e.g. `<home>/gc/sweep.lock`) as a lock, debris or free,
 * with lstat and a listing through `parent`'s descriptor (see the header). `nowMs` dates an
 * ownerless directory's staleness.
 */
export async function inspectLockPath(
  parent: Dir,
  name: string,
  nowMs: number,
  staleMs = LOCK_STALE_MS,
): Promise<LockPathState> {
  const st = await parent.lstat(name);
  if (!st) return { kind: 'free' };
  const identity = identityOf(st);
  if (!st.isDirectory()) return { kind: 'debris', what: kindOf(st), identity, isDir: false };
  let entries: string[];
  try {
    await using d = await parent.openDir(name, identity);
    entries = await d.list();
  } catch {
    // Cannot be listed (another user's, replaced meanwhile, a mount): left to the lock itself.
    return { kind: 'lock' };
  }
  if (entries.length === 0) return { kind: 'lock' };
  const holding = `holding ${entries.length} ${entries.length === 1 ? 'entry' : 'entries'}`;
  const { verdict } = await judgeHolder(parent.display(name)).catch(() => ({ verdict: 'unknown' as const }));
  if (verdict === 'dead')
    return { kind: 'debris', what: `a lock directory of a murmur-gc that died, ${holding}`, identity, isDir: true };
  if (verdict === 'alive') return { kind: 'lock' };
  const idleMs = nowMs - Number(st.mtimeMs);
  if (idleMs < staleMs) return { kind: 'lock' };
  return {
    kind: 'debris',
    what: `a directory ${holding}, with no holder, untouched for ${Math.round(idleMs / 1000)} s`,
    identity,
    isDir: true,
  };
}
