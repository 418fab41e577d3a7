// One sweep over a Murmur home, as a pipeline of named steps (src/sweep/steps/, one file each):
//
//   lock → clock → recover → scan sessions → scan records → protect → measure (what the budgets
//        count) → plan (every item's fate, src/plan/fates.ts) → debris → quarantine (purge what
//        the undo window no longer holds) → chmod → remove → orphans (child workdirs no trace
//        names) → truncate → repair torn tails → budget → reconcile → audit
//
// Each step reads and writes one shared SweepContext (steps/context.ts) and reports its tally
// (items, bytes, time) into ctx.steps.
// Guarantees:
// - --dry-run runs the same inventory, liveness checks, lock probes and planner as a real run
//   and changes nothing on disk (no lock taken, no cache written, no audit, no chmod): every fate
//   is decided once, by the plan step, before anything is done, and the steps act only through
//   the run's effects (src/sweep/effects.ts), measure-only in a dry run; the actions it reports are
//   the ones a real run on the unchanged tree performs.
// - One sweep at a time (`<home>/gc/sweep.lock`, BusyError → exit 75); one writer per record.
// - Live sessions and the contexts their traces name are never removed, truncated or reconciled.
// - Every failure is reported per item with a stable code; the rest of the run continues. The
//   logs say each cause once: one line per (code, sessions root or record store), at the end.
// - Each destructive step is intended in the audit log before it runs; the audit trace is
//   finished at the end (or completed by the next run if this one is killed).
import { Codes, GcError, isAbort } from '../errors.js';
import { processUid } from '../fsx/safe-fs.js';
import type { SweepReport } from './report.js';
import { AuditUnavailable } from '../gchome/audit.js';
import { abandonAudit, auditStep } from './steps/audit.js';
import { budgetStep } from './steps/budget.js';
import { chmodStep } from './steps/chmod.js';
import { clockStep } from './steps/clock.js';
import {
  createContext,
  fail,
  finishReport,
  flushGrouped,
  runStep,
  type Step,
  type SweepOptions,
} from './steps/context.js';
import { debrisStep } from './steps/debris.js';
import { lockStep } from './steps/lock.js';
import { measureStep } from './steps/measure.js';
import { planStep } from './steps/plan.js';
import { protectStep } from './steps/protect.js';
import { quarantineStep } from './steps/quarantine.js';
import { reconcileStep } from './steps/reconcile.js';
import { recoverStep } from './steps/recover.js';
import { orphansStep } from './steps/orphans.js';
import { removeStep } from './steps/remove.js';
import { repairTornTailStep } from './steps/repair-torn-tail.js';
import { scanRecordsStep } from './steps/scan-records.js';
import { scanSessionsStep } from './steps/scan-sessions.js';
import { truncateStep } from './steps/truncate.js';

export type { SweepOptions } from './steps/context.js';

/** The sweep, in order. */
export const SWEEP_STEPS: readonly Step[] = [
  { name: 'lock', label: 'locking', run: lockStep },
  { name: 'clock', label: 'checking the clock', run: clockStep },
  { name: 'recover', label: 'recovering an interrupted run', run: recoverStep },
  { name: 'scan_sessions', label: 'scanning sessions', run: scanSessionsStep },
  { name: 'scan_records', label: 'scanning conversation records', run: scanRecordsStep },
  { name: 'protect', label: 'reading the protection list', run: protectStep },
  { name: 'measure', label: 'measuring what the budgets count', run: measureStep },
  { name: 'plan', label: 'planning', run: planStep },
  { name: 'debris', label: 'cleaning leftovers', run: debrisStep },
  { name: 'quarantine', label: 'purging the undo window', run: quarantineStep },
  { name: 'chmod', label: 'fixing modes', run: chmodStep },
  { name: 'remove', label: 'removing', run: removeStep },
  { name: 'orphans', label: 'removing orphaned child workdirs', run: orphansStep },
  { name: 'truncate', label: 'truncating records', run: truncateStep },
  { name: 'repair_torn_tail', label: 'repairing torn record tails', run: repairTornTailStep },
  { name: 'budget', label: 'keeping the disk budgets', run: budgetStep },
  { name: 'reconcile', label: 'reconciling lost commands', run: reconcileStep },
  { name: 'audit', label: 'writing the audit trace', run: auditStep },
];

export async function runSweep(opts: SweepOptions): Promise<SweepReport> {
  const ctx = createContext(opts, processUid());
  try {
    for (const step of SWEEP_STEPS) {
      await runStep(ctx, step);
      if (ctx.stopped) break;
    }
    await opts.inspect?.(ctx);
    return finishReport(ctx);
  } catch (err) {
    await abandonAudit(ctx, isAbort(err));
    if (err instanceof AuditUnavailable) {
      fail(ctx, { target: ctx.home, code: err.code, detail: err.message });
      return finishReport(ctx);
    }
    if (isAbort(err)) {
      const reason = ctx.signal?.reason as unknown;
      fail(ctx, {
        target: ctx.home,
        code: reason instanceof GcError ? reason.code : Codes.aborted,
        detail: `sweep stopped early: ${reason instanceof Error ? reason.message : 'interrupted'}`,
      });
      return finishReport(ctx);
    }
    throw err;
  } finally {
    opts.beforeLogs?.();
    flushGrouped(ctx);
    ctx.cache?.close();
    await ctx.quarantineDir?.close();
    await ctx.homeDir?.close();
    await ctx.sweepLock?.release();
  }
}
