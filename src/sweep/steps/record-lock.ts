// The per-record lock the remove and truncate steps hold while they act on a record.
// Guarantees: one writer per record (`<home>/gc/locks/<store>/<context>.lock`); a dry run only
// probes (same answer, nothing created); a busy record is skipped (storage_busy), never waited
// on beyond recordLockWaitMs; a change under our feet, or a record a process holds open for
// writing (record_held_open), is a skip, anything else an error.
import { Codes, codeOf, describeError, isAbort } from '../../errors.js';
import type { ContextScan } from '../../runtime/inventory.js';
import type { HeldLock } from '../../gchome/lock.js';
import type { Dir } from '../../fsx/safe-fs.js';
import { fail, skip, type SweepContext } from './context.js';

/**
 * The record's lock (ctx.fx: a real run takes it, a dry run probes it — same answer, nothing
 * created). 'busy' has already been reported as skipped.
 */
export async function holdRecord(
  ctx: SweepContext,
  home: Dir,
  store: string,
  c: ContextScan,
): Promise<HeldLock | undefined | 'busy'> {
  const lock = await ctx.fx.lockRecord(home, store, c.context);
  if (lock === 'busy')
    skip(ctx, {
      target: `${store}/${c.context}`,
      code: Codes.storageBusy,
      detail: `${c.path} is locked by another murmur-gc; skipped this sweep`,
    });
  return lock;
}

/** A record step failed: a change under our feet is a skip, anything else an error; aborts propagate. */
export function recordFailure(ctx: SweepContext, err: unknown, target: string, lock: HeldLock | undefined): void {
  if (isAbort(err) && !lock?.signal.aborted) throw err;
  const code = codeOf(err);
  // (a record too hostile to plan is left as it is and reported, not a failed run: docs/limits.md)
  const skipped =
    code === Codes.concurrentAppend ||
    code === Codes.changedSinceScan ||
    code === Codes.lineTooLong ||
    code === Codes.sparseFile ||
    code === Codes.recordHeldOpen;
  (skipped ? skip : fail)(ctx, { target, code, detail: describeError(err) });
}
