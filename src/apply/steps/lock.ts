// Step "lock": find the home, take the sweep lock, open the home by descriptor.
// Guarantees: one sweep at a time (`<home>/gc/sweep.lock`; BusyError → exit 75); a dry run only
// probes the lock and creates nothing; a home owned by another uid is refused (foreign_owner);
// no home and no existing configured root stops the sweep with a message and touches nothing.
import { BusyError, Codes, GcError } from '../../errors.js';
import { acquireLock, probeLock, sweepLockPath } from '../../io/lock.js';
import { Dir, lstatPath, processUid } from '../../io/safe-fs.js';
import { GC_DIR } from '../audit.js';
import { skip, type SweepContext, type StepTally } from './context.js';
import { anyExists, openOrCreateHome } from './dirs.js';

export async function lockStep(ctx: SweepContext): Promise<StepTally> {
  const { home, config, report } = ctx;
  const homeSt = await lstatPath(home);
  const configuredRootsExist = await anyExists(config.sessions.map((s) => s.root));
  if (!homeSt) {
    if (!configuredRootsExist) {
      report.message = `No murmur home at ${home} and no configured sessions root exists: nothing to sweep. (murmur-gc creates nothing until the runtime has written state.)`;
      ctx.stopped = true;
      return { items: 0, bytes: 0 };
    }
  } else if (!homeSt.isDirectory() && !homeSt.isSymbolicLink()) {
    throw new GcError(Codes.ioError, `${home} is not a directory`);
  }
  ctx.homeExists = homeSt !== undefined;
  report.home_exists = ctx.homeExists;

  if (ctx.dryRun) {
    if (homeSt && (await probeLock(sweepLockPath(home)))) {
      throw new BusyError(`another murmur-gc sweep holds ${sweepLockPath(home)}; try again when it has finished`);
    }
  } else {
    ctx.homeDir = await openOrCreateHome(home, homeSt !== undefined);
    const gc = await ctx.homeDir.mkdir(GC_DIR, 0o700);
    await gc.close();
    ctx.sweepLock = await acquireLock(sweepLockPath(home), { waitMs: 0 });
    if (ctx.sweepLock?.brokeDeadHolder) {
      skip(ctx, { target: sweepLockPath(home), code: Codes.processInterrupted, detail: 'the sweep lock of a murmur-gc that died was removed' });
    }
    if (!ctx.sweepLock) throw new BusyError(`another murmur-gc sweep holds ${sweepLockPath(home)}; try again when it has finished`);
  }
  const signals = [ctx.sweepLock?.signal, ctx.opts.signal].filter((s): s is AbortSignal => s !== undefined);
  ctx.signal = signals.length === 0 ? undefined : signals.length === 1 ? signals[0] : AbortSignal.any(signals);

  if (!ctx.homeDir && homeSt) ctx.homeDir = await Dir.open(home, { followFinal: true });
  if (ctx.homeDir && Number(ctx.homeDir.stat.uid) !== processUid()) {
    throw new GcError(Codes.foreignOwner, `${home} belongs to uid ${ctx.homeDir.stat.uid}, not ${processUid()}; murmur-gc only maintains its own user's home`);
  }
  return { items: ctx.sweepLock ? 1 : 0, bytes: 0 };
}
