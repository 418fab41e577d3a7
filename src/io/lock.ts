// Locks between murmur-gc instances (proper-lockfile: a `<name>.lock` directory refreshed by mtime).
// Guarantees:
// - One sweep at a time: `<home>/gc/sweep.lock`; one writer per record:
//   `<home>/gc/locks/<store>/<context>.lock`. Lock dirs live under <home>/gc, never in the
//   runtime's own directories.
// - A compromised lock never crashes the process: `onCompromised` aborts the holder's
//   AbortSignal, and the holder checks it before every commit point (rename, removal).
// - `probeLock` only looks (for --dry-run): it creates nothing.
import lockfile from 'proper-lockfile';
import { Codes, GcError } from '../errors.js';

export const LOCK_STALE_MS = 30_000;
export const LOCK_UPDATE_MS = 5_000;

export interface HeldLock {
  /** Aborted when the lock is compromised (stolen after going stale) or released. */
  readonly signal: AbortSignal;
  release(): Promise<void>;
}

export interface AcquireOptions {
  /** Total time to keep retrying while the lock is held elsewhere (0 = fail at once). */
  waitMs: number;
}

function target(lockPath: string): string {
  return lockPath.endsWith('.lock') ? lockPath.slice(0, -'.lock'.length) : lockPath;
}

/** Acquire `lockPath` (a directory path ending in `.lock`; its parent must exist). */
export async function acquireLock(lockPath: string, opts: AcquireOptions): Promise<HeldLock | undefined> {
  const controller = new AbortController();
  const retries =
    opts.waitMs <= 0
      ? 0
      : { retries: Math.max(1, Math.ceil(opts.waitMs / 250)), minTimeout: 100, maxTimeout: 250, factor: 1.5 };
  let releaseFn: () => Promise<void>;
  try {
    releaseFn = await lockfile.lock(target(lockPath), {
      lockfilePath: lockPath,
      realpath: false,
      stale: LOCK_STALE_MS,
      update: LOCK_UPDATE_MS,
      retries,
      onCompromised: (err: Error) => {
        controller.abort(new GcError(Codes.lockCompromised, `lock ${lockPath} was compromised: ${err.message}`));
      },
    });
  } catch (err) {
    if (typeof err === 'object' && err !== null && (err as { code?: string }).code === 'ELOCKED') return undefined;
    throw err;
  }
  let released = false;
  return {
    signal: controller.signal,
    async release() {
      if (released) return;
      released = true;
      try {
        await releaseFn();
      } catch {
        // ERELEASED / ECOMPROMISED: nothing left to release.
      }
    },
  };
}

/** True when another holder currently has the lock (stale locks count as free). Creates nothing. */
export async function probeLock(lockPath: string): Promise<boolean> {
  try {
    return await lockfile.check(target(lockPath), { lockfilePath: lockPath, realpath: false, stale: LOCK_STALE_MS });
  } catch {
    return false;
  }
}

/** Lock path of one record, under `<home>/gc/locks/`. Segments are single names already. */
export function recordLockPath(home: string, store: string, context: string): string {
  return `${home}/gc/locks/${encodeURIComponent(store)}/${encodeURIComponent(context)}.lock`;
}

export function sweepLockPath(home: string): string {
  return `${home}/gc/sweep.lock`;
}
