// Step "reconcile": background work a killed runtime never accounted for (`shell_detached`
// without an outcome) becomes `shell_lost` in that session's own trace (sweep/reconcile.ts).
// Guarantees: only dead or finished sessions, never the audit root, never a session this sweep
// removed (or would remove).
import { reconcileSession, type ReconcileContext } from '../reconcile.js';
import { acted, fail, notWritable, progress, skip, type SweepContext, type StepTally } from './context.js';

export async function reconcileStep(ctx: SweepContext): Promise<StepTally> {
  const before = ctx.report.actions.length;
  const rc: ReconcileContext = {
    home: ctx.home,
    homeDir: ctx.homeDir,
    auditId: ctx.auditId,
    now: ctx.now,
    log: ctx.log,
    markLost: (works, write) => ctx.fx.markLost(works, write),
    action: (a, fields) => acted(ctx, a, 'debug', fields),
    skip: (s) => skip(ctx, s),
    fail: (e) => fail(ctx, e),
    task: (t) => ctx.lostTasks.push(t),
    ownAppend: (root, session, after, runtimeWriteMs) => ctx.world.appends.record(root, session, after, runtimeWriteMs),
  };
  let done = 0;
  for (const v of ctx.world.views) {
    if (done % 256 === 0) progress(ctx, done, ctx.world.views.length);
    done++;
    ctx.signal?.throwIfAborted();
    const rootInput = ctx.world.roots.find((r) => r.root === v.root);
    if (!rootInput || rootInput.isAuditRoot) continue;
    if (v.liveness === 'live') continue;
    if (!v.scan.trace?.ok || v.scan.trace.summary.unaccounted.length === 0) continue;
    if (ctx.removedSessions.has(`${v.root}/${v.scan.name}`)) continue;
    if (notWritable(ctx, v.root, 'background commands to mark lost', v.scan.trace.summary.unaccounted.length)) continue;
    await reconcileSession(rc, v);
  }
  return { items: ctx.report.actions.length - before, bytes: 0 };
}
