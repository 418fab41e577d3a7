// The per-record lock the remove and truncate steps hold while they act on a record.
// Guarantees: one writer per record (`<home>/gc/locks/<store>/<context>.lock`); a dry run only
// probes (same answer, nothing created); a busy record is skipped (storage_busy), never waited
// on beyond recordLockWaitMs; a change under our feet is a skip, anything else an error.
import { Codes, codeOf, describeError, isAbort } from '../../errors.js';
import type { ContextScan } from '../../runtime/inventory.js';
import { acquireLock, ensureLockDir, probeLock, recordLockPath, type HeldLock } from '../../gchome/lock.js';
import type { Dir } from '../../fsx/safe-fs.js';
import { fail, skip, type SweepContext } from './context.js';

/**
 * The record's lock (a real run) or a probe of it (a dry run: same answer, nothing created).
 * 'busy' has already been reported as skipped.
 */
export async function holdRecord(ctx: SweepContext, home: Dir, store: string, c: ContextScan): Promise<HeldLock | undefined | 'busy'> {
  const busy = ctx.dryRun ? await probeLock(recordLockPath(ctx.config.home, store, c.context)) : undefined;
  const lock = ctx.dryRun ? undefined : await lockRecord(ctx, home, store, c.context);
  if (busy === true || (!ctx.dryRun && !lock)) {
    skip(ctx, { target: `${store}/${c.context}`, code: Codes.storageBusy, detail: `${c.path} is locked by another murmur-gc; skipped this sweep` });
    return 'busy';
  }
  return lock;
}

/** A record step failed: a change under our feet is a skip, anything else an error; aborts propagate. */
export function recordFailure(ctx: SweepContext, err: unknown, target: string, lock: HeldLock | undefined): void {
  if (isAbort(err) && !lock?.signal.aborted) throw err;
  const code = codeOf(err);
  // (a record too hostile to plan is left as it is and reported, not a failed run: docs/limits.md)
  const skipped = code === Codes.concurrentAppend || code === Codes.changedSinceScan || code === Codes.lineTooLong || code === Codes.sparseFile;
  (skipped ? skip : fail)(ctx, { target, code, detail: describeError(err) });
}

async function lockRecord(ctx: SweepContext, home: Dir, store: string, context: string): Promise<HeldLock | undefined> {
  await ensureLockDir(home, [encodeURIComponent(store)]);
  return acquireLock(recordLockPath(ctx.config.home, store, context), { waitMs: ctx.opts.recordLockWaitMs ?? 2000 });
}
