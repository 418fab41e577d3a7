// Step "reconcile": background work a killed runtime never accounted for (`shell_detached`
// without an outcome) becomes `shell_lost` in that session's own trace (sweep/reconcile.ts).
// Guarantees: only dead or finished sessions, never the audit root, never a session this sweep
// removed (or would remove); at most what the scan held of each trace's unaccounted work (per
// trace and per sweep caps, docs/limits.md), the rest said to wait (`lost_work_deferred`).
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
  const rootOf = new Map<string, (typeof ctx.world.roots)[number]>();
  for (const r of ctx.world.roots) if (!rootOf.has(r.root)) rootOf.set(r.root, r);
  let done = 0;
  for (const v of ctx.world.views) {
    if (done % 256 === 0) progress(ctx, done, ctx.world.views.length);
    done++;
    ctx.signal?.throwIfAborted();
    const rootInput = rootOf.get(v.root);
    if (!rootInput || rootInput.isAuditRoot) continue;
    if (v.liveness === 'live') continue;
    const t = v.scan.trace;
    if (!t?.ok || (t.summary.unaccounted.length === 0 && !t.summary.unaccountedMore)) continue;
    if (ctx.removedSessions.has(`${v.root}/${v.scan.name}`)) continue;
    if (notWritable(ctx, v.root, 'background commands to mark lost', t.summary.unaccounted.length)) continue;
    await reconcileSession(rc, v);
  }
  return { items: ctx.report.actions.length - before, bytes: 0 };
}
