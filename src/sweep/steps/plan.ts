// Step "plan": the pure planners decide, from the scans alone, every mode to reassert, every
// session to remove and every record to remove or truncate.
// Guarantees: no fs access; the planners' skips for sessions and records are reported by the
// step that acts on that root or store (so each root's outcomes stay together); mode skips are
// reported here. When the clock step found the clock behind the last sweep, no `max_age` is given
// to the planners (count keys still are). What the protection list names (the protect step) is
// given to the planners, which skip it (`protected`) whatever condemns it; murmur-gc's own audit
// sessions are never protected. A sessions root holding session names minted in the future is
// warned about once (`future_session_id`); their ranking is the runtime's, unchanged.
import { resolve } from 'node:path';
import { planMode } from '../../plan/modes.js';
import { planRecords } from '../../plan/records.js';
import { planSessions } from '../../plan/sessions.js';
import { skip, type SweepContext, type StepTally } from './context.js';
import { Codes } from '../../errors.js';
import { futureSessions } from '../../plan/future-ids.js';
import { humanTime } from '../../runtime/conversation-format.js';

/** The retain block without its age key while the clock is skewed (undefined when nothing is left). */
function withoutAge<R extends { maxAgeSecs?: number }>(ctx: SweepContext, retain: R | undefined): R | undefined {
  if (!ctx.clockSkew || retain?.maxAgeSecs === undefined) return retain;
  const { maxAgeSecs: _age, ...rest } = retain;
  return rest as R;
}

/** Once per root and sweep: session names minted in the future outrank every real session. */
function warnFutureSessions(ctx: SweepContext, root: string, names: string[]): void {
  const f = futureSessions(names, ctx.nowMs);
  if (f.count === 0 || f.newest === undefined) return;
  skip(ctx, {
    target: root,
    code: Codes.futureSessionId,
    detail: `${root} holds ${f.count} session name${f.count === 1 ? '' : 's'} minted in the future (the first-ranked: ${f.newest}, minted ${humanTime(f.newestMs)}); like the runtime, murmur-gc ranks them newest, so under max_sessions they push real sessions out and max_age never reaches them`,
  });
}

export function planStep(ctx: SweepContext): Promise<StepTally> {
  for (const e of ctx.modes) {
    const r = planMode(e, ctx.uid);
    if (!r) continue;
    if ('code' in r) {
      // A symlinked store/context is already reported by the scan; report others once.
      if (r.code !== 'symlink' || e.ref.chain.length <= 1) skip(ctx, { target: r.path, code: r.code, detail: r.detail });
      continue;
    }
    ctx.chmods.push({ entry: e, action: r });
  }

  for (const { input, scan, beside } of ctx.world.rootScans) {
    if (!scan.exists) continue;
    const views = ctx.world.views.filter((v) => v.root === input.root);
    const plan = planSessions(
      views.map((v) => ({ name: v.scan.name, liveness: v.liveness, livenessWhy: v.why })),
      withoutAge(ctx, input.retain),
      ctx.nowMs,
      input.isAuditRoot ? ctx.auditId : undefined,
      input.isAuditRoot ? undefined : ctx.protection.session(resolve(input.root)),
    );
    ctx.sessionPlans.push({ input, scan, views, plan, ...(beside ? { beside } : {}) });
    if (!input.isAuditRoot) warnFutureSessions(ctx, input.root, views.map((v) => v.scan.name));
  }

  const records = ctx.records;
  if (ctx.homeDir && records?.exists) {
    for (const policy of ctx.config.records) {
      const contexts = records.contexts.filter((c) => c.store === policy.store);
      const plan = planRecords(
        contexts.map((c) => ({ context: c.context, header: c.header, mtimeMs: c.file.mtimeMs, messages: c.messages })),
        policy.capsule,
        withoutAge(ctx, policy.retain),
        ctx.world.liveContexts,
        ctx.nowMs,
        ctx.protection.context(policy.store),
      );
      ctx.recordPlans.push({ policy, contexts, plan });
    }
  }
  const items =
    ctx.chmods.length +
    ctx.sessionPlans.reduce((n, p) => n + p.plan.remove.length, 0) +
    ctx.recordPlans.reduce((n, p) => n + p.plan.remove.length + p.plan.truncate.length, 0);
  return Promise.resolve({ items, bytes: 0 });
}
