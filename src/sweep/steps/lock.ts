// Step "lock": find the home, take the sweep lock, open the home by descriptor.
// Guarantees: one sweep at a time (`<home>/gc/sweep.lock`, taken through ctx.fx; BusyError →
// exit 75); a dry run only probes the lock and creates nothing; a home owned by another uid is
// refused (foreign_owner); no home and no existing configured root stops the sweep with a message and touches nothing.
// The home is judged again through the descriptor just opened, before anything is created,
// locked or changed in it (src/config/home.ts `judgeHomeDir`: a system path, or a directory that
// is not recognisably a murmur home, is refused with `config_invalid`, exit 2, unless forced), so
// a home that changed since the configuration was loaded (a daemon runs for days) is never made
// private or given a gc/.
// The reserve (src/gchome/reserve.ts) is released before the lock is taken when the filesystem
// has less than the reserve free — its inode part when fewer inodes than it holds are free — so
// the lock, the audit and its intents can be written; a dry run releases nothing and only notes
// what a real run would release.
// Debris where the sweep lock belongs (`<home>/gc/sweep.lock` a regular file, FIFO, socket or
// link, or a directory holding entries whose holder is dead or that has none and is stale:
// gchome/lock.ts `inspectLockPath`, lstat and a listing only) is removed through ctx.fx before
// the lock is taken — unlinked (never opened, never followed) or, a directory, removed whole by
// the descriptor-safe removal — and reported (`lock_debris`: what it was and that it went, or why
// it could not), so it never blocks every sweep; a dry run says what it would remove.
import { BusyError, Codes, ConfigError, GcError, describeError } from '../../errors.js';
import { judgeHomeDir, refusedHomeMessage } from '../../config/home.js';
import { LOCK_STALE_MS, inspectLockPath, sweepLockPath } from '../../gchome/lock.js';
import { readOwnerFile } from '../../gchome/lock-owner.js';
import {
  RESERVE_INODES_NAME,
  RESERVE_NAME,
  releasesInodes,
  releasesReserve,
  reserveBytes,
  reserveInodes,
} from '../../gchome/reserve.js';
import { lstatPath, processUid, type Dir } from '../../fsx/safe-fs.js';
import { countsInodes, statFs } from '../../fsx/statfs.js';
import { formatBytes, formatDuration } from '../report.js';
import { fail, skip, type SweepContext, type StepTally } from './context.js';
import { anyExists } from '../../fsx/dirs.js';
import { stopNothingToSweep } from './no-home.js';

export async function lockStep(ctx: SweepContext): Promise<StepTally> {
  const { home, config, report } = ctx;
  const homeSt = await lstatPath(home);
  const configuredRootsExist = await anyExists(config.sessions.map((s) => s.root));
  if (!homeSt) {
    if (!configuredRootsExist) {
      return stopNothingToSweep(ctx);
    }
  } else if (!homeSt.isDirectory() && !homeSt.isSymbolicLink()) {
    throw new GcError(Codes.ioError, `${home} is not a directory`);
  }
  ctx.homeExists = homeSt !== undefined;
  report.home_exists = ctx.homeExists;

  const taken = await ctx.fx.lockSweep(
    home,
    homeSt !== undefined,
    (dir) => {
      refuseForeignHome(dir, home);
      refuseUnrecognisedHome(ctx, dir);
    },
    async (gc) => {
      await clearLockDebris(ctx, gc);
      await settleReserve(ctx, gc);
    },
  );
  ctx.homeDir = taken.homeDir;
  ctx.sweepLock = taken.lock;
  if (ctx.sweepLock?.brokeDeadHolder) {
    skip(ctx, {
      target: sweepLockPath(home),
      code: Codes.processInterrupted,
      detail: 'the sweep lock of a murmur-gc that died was removed',
    });
  }
  if (taken.busy) throw await busy(home, ctx.now());
  const signals = [ctx.sweepLock?.signal, ctx.opts.signal].filter((s): s is AbortSignal => s !== undefined);
  ctx.signal = signals.length === 0 ? undefined : signals.length === 1 ? signals[0] : AbortSignal.any(signals);
  return { items: ctx.sweepLock ? 1 : 0, bytes: 0 };
}

/** The sweep lock's name in `<home>/gc` (gchome/lock.ts sweepLockPath). */
const SWEEP_LOCK = 'sweep.lock';

/** Remove debris where the sweep lock belongs, and say so (see the header). Never throws. */
async function clearLockDebris(ctx: SweepContext, gc: Dir): Promise<void> {
  const target = gc.display(SWEEP_LOCK);
  try {
    const state = await inspectLockPath(gc, SWEEP_LOCK, ctx.now());
    if (state.kind !== 'debris') return;
    try {
      if (state.isDir) await ctx.fx.remove(gc, SWEEP_LOCK, state.identity);
      else await ctx.fx.unlink(gc, SWEEP_LOCK);
    } catch (err) {
      fail(ctx, {
        target,
        code: Codes.lockDebris,
        detail: `${target} is ${state.what}, not a murmur-gc lock, and could not be removed (${describeError(err)}); remove it by hand`,
      });
      return;
    }
    skip(ctx, {
      target,
      code: Codes.lockDebris,
      detail: `${target} was ${state.what}, not a murmur-gc lock: ${ctx.fx.say(['would remove', 'removed'])} it so the sweep can take its lock`,
    });
  } catch (err) {
    ctx.log.warn(
      { code: Codes.lockDebris, path: target },
      `the sweep lock's path could not be inspected: ${describeError(err)}`,
    );
  }
}

/** Release the reserve, or its inode part, when the filesystem is short of it (see the header). Never throws. */
async function settleReserve(ctx: SweepContext, gc: Dir): Promise<void> {
  try {
    const space = await (ctx.opts.statfs ?? statFs)(`/proc/self/fd/${gc.fd}`);
    if ((await reserveBytes(gc)) > 0 && releasesReserve(space.freeBytes)) {
      ctx.reserveReleased = await ctx.fx.releaseReserve(gc);
      if (ctx.reserveReleased > 0) {
        ctx.log.info(
          { path: gc.display(RESERVE_NAME), bytes: ctx.reserveReleased, free_bytes: space.freeBytes },
          `${ctx.fx.say(['would release', 'released'])} the reserve: the filesystem has ${formatBytes(space.freeBytes)} free`,
        );
      }
    }
    if (countsInodes(space) && releasesInodes(space.freeInodes) && (await reserveInodes(gc)) > 0) {
      ctx.reserveInodesReleased = await ctx.fx.releaseInodes(gc);
      if (ctx.reserveInodesReleased > 0) {
        ctx.log.info(
          { path: gc.display(RESERVE_INODES_NAME), inodes: ctx.reserveInodesReleased, free_inodes: space.freeInodes },
          `${ctx.fx.say(['would release', 'released'])} the reserve's inodes: the filesystem has ${space.freeInodes} inodes free`,
        );
      }
    }
  } catch (err) {
    ctx.log.warn({ path: gc.display(RESERVE_NAME) }, `the reserve was left as it is: ${describeError(err)}`);
  }
}

/** storage_busy naming the holder: its pid and how long it has held the sweep lock. */
async function busy(home: string, nowMs: number): Promise<BusyError> {
  const lock = sweepLockPath(home);
  const owner = await readOwnerFile(lock);
  const since = await lstatPath(`${lock}.owner.json`);
  const pid = typeof owner?.pid === 'number' ? owner.pid : undefined;
  const held = since ? formatDuration(Math.max(0, nowMs - Number(since.mtimeMs))) : undefined;
  const who =
    pid !== undefined ? `murmur-gc pid ${pid}${held ? `, holding it for ${held}` : ''}` : 'another murmur-gc sweep';
  return new BusyError(
    `${who} holds ${lock}; try again when it has finished`,
    `murmur-gc status shows whether the daemon is sweeping; the lock of a holder that died is taken over by the next run (one without an owner record after ${LOCK_STALE_MS / 1000} s)`,
  );
}

/** Before anything is created or locked in it: a home that is not one is refused (see the header). */
function refuseUnrecognisedHome(ctx: SweepContext, dir: Dir): void {
  const { config } = ctx;
  if (config.forceHome === true) return;
  const why = judgeHomeDir(dir, ctx.home, config.userHomes ?? []);
  if (why === undefined) return;
  const key = config.homeKey ?? 'home';
  throw new ConfigError(key, refusedHomeMessage(ctx.home, why, key), key === 'home' ? config.source : undefined);
}

/** Before anything is created or locked in it: a home of another uid is refused (foreign_owner). */
function refuseForeignHome(dir: Dir, home: string): void {
  if (Number(dir.stat.uid) === processUid()) return;
  throw new GcError(
    Codes.foreignOwner,
    `${home} belongs to uid ${dir.stat.uid}, not ${processUid()}; murmur-gc only maintains its own user's home`,
    {
      hint: `run murmur-gc as the user who owns it (e.g. sudo -u '#${dir.stat.uid}' murmur-gc …), or point --home at your own murmur home`,
    },
  );
}
