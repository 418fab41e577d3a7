// One sweep over a Murmur home, as a pipeline of named steps (src/sweep/steps/, one file each):
//
//   lock → clock → recover → scan sessions → scan records → protect → plan → debris → quarantine (purge
//        what the undo window no longer holds) → chmod → remove → truncate → repair torn tails
//        → budget → reconcile → audit
//
// Each step reads and writes one shared SweepContext (steps/context.ts) and reports its tally
// (items, bytes, time) into ctx.steps.
// Guarantees:
// - --dry-run runs the same inventory, liveness checks, lock probes and planners as a real run
//   and changes nothing on disk (no lock taken, no cache written, no audit, no chmod); the
//   actions it reports are the ones a real run on the unchanged tree performs.
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
import { createContext, fail, finishReport, flushGrouped, runStep, type Step, type SweepOptions } from './steps/context.js';
import { debrisStep } from './steps/debris.js';
import { lockStep } from './steps/lock.js';
import { planStep } from './steps/plan.js';
import { protectStep } from './steps/protect.js';
import { quarantineStep } from './steps/quarantine.js';
import { reconcileStep } from './steps/reconcile.js';
import { recoverStep } from './steps/recover.js';
import { removeStep } from './steps/remove.js';
import { repairTornTailStep } from './steps/repair-torn-tail.js';
import { scanRecordsStep } from './steps/scan-records.js';
import { scanSessionsStep } from './steps/scan-sessions.js';
import { truncateStep } from './steps/truncate.js';

export type { SweepOptions } from './steps/context.js';

/** The sweep, in order. */
export const SWEEP_STEPS: readonly Step[] = [
  { name: 'lock', run: lockStep },
  { name: 'clock', run: clockStep },
  { name: 'recover', run: recoverStep },
  { name: 'scan_sessions', run: scanSessionsStep },
  { name: 'scan_records', run: scanRecordsStep },
  { name: 'protect', run: protectStep },
  { name: 'plan', run: planStep },
  { name: 'debris', run: debrisStep },
  { name: 'quarantine', run: quarantineStep },
  { name: 'chmod', run: chmodStep },
  { name: 'remove', run: removeStep },
  { name: 'truncate', run: truncateStep },
  { name: 'repair_torn_tail', run: repairTornTailStep },
  { name: 'budget', run: budgetStep },
  { name: 'reconcile', run: reconcileStep },
  { name: 'audit', run: auditStep },
];

export async function runSweep(opts: SweepOptions): Promise<SweepReport> {
  const ctx = createContext(opts, processUid());
  try {
    for (const step of SWEEP_STEPS) {
      await runStep(ctx, step);
      if (ctx.stopped) break;
    }
    return finishReport(ctx);
  } catch (err) {
    await abandonAudit(ctx, isAbort(err));
    if (err instanceof AuditUnavailable) {
      fail(ctx, { target: ctx.home, code: err.code, detail: err.message });
      return finishReport(ctx);
    }
    if (isAbort(err)) {
      const reason = ctx.signal?.reason as unknown;
      fail(ctx, { target: ctx.home, code: reason instanceof GcError ? reason.code : Codes.aborted, detail: `sweep stopped early: ${reason instanceof Error ? reason.message : 'interrupted'}` });
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
