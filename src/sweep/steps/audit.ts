// Step "audit": finish murmur-gc's own audit trace (one `retention` event per store and reason,
// one `detached_lost` task per reconciled session) and save the trace cache and the memory of
// murmur-gc's own trace appends (src/gchome/trace-appends.ts), and settle the registry of what it
// placed in capsules' directories (src/gchome/registry.ts).
// Guarantees: the audit session exists only in real runs that changed something (ctx.fx.audited
// creates it before the first destructive action: intent first, then the act); the outcome is
// `ok` only when the sweep had no errors; a cache (or append memory) that cannot be saved is a
// warning; a dry run saves neither (upkeep).
import { Codes, describeError } from '../../errors.js';
import { saveTraceCache } from '../../gchome/trace-cache.js';
import { saveTraceAppends } from '../../gchome/trace-appends.js';
import type { SweepContext, StepTally } from './context.js';

export async function auditStep(ctx: SweepContext): Promise<StepTally> {
  if (ctx.audit) {
    await ctx.audit.finish(
      ctx.retentionItems,
      ctx.lostTasks,
      ctx.report.errors.length === 0 ? 'ok' : 'failed',
      ctx.now(),
      { purged: ctx.purged },
    );
    ctx.log.info({ audit: ctx.auditId }, 'audit trace written');
  }
  const { homeDir, cache } = ctx;
  if (homeDir && cache) {
    await ctx.fx
      .upkeep(() => saveTraceCache(homeDir, cache))
      .catch((err: unknown) => ctx.log.warn({ code: Codes.ioError, err: describeError(err) }, 'trace cache not saved'));
  }
  // what this sweep placed, purged or finished in a capsule's directory: the registry keeps what is still there
  if (homeDir && ctx.registry.needsSettling) {
    const registry = ctx.registry;
    await ctx.fx
      .upkeep(() => registry.settle(homeDir))
      .catch((err: unknown) =>
        ctx.log.warn(
          { code: Codes.ioError, err: describeError(err) },
          'registry not settled (the next sweep settles it)',
        ),
      );
  }
  const appends = ctx.world?.appends;
  if (homeDir && appends) {
    await ctx.fx
      .upkeep(() => saveTraceAppends(homeDir, appends))
      .catch((err: unknown) =>
        ctx.log.warn({ code: Codes.ioError, err: describeError(err) }, 'trace append memory not saved'),
      );
  }
  return { items: ctx.retentionItems.length + ctx.lostTasks.length + ctx.purged.length, bytes: 0 };
}

/**
 * Stopped part-way: write what was done so far. exit_status is the runtime's word — `canceled`
 * when a signal (or a compromised lock) stopped it, `failed` when an error did.
 */
export async function abandonAudit(ctx: SweepContext, interrupted: boolean): Promise<void> {
  const audit = ctx.audit;
  if (!audit) return;
  await audit
    .finish(ctx.retentionItems, ctx.lostTasks, interrupted ? 'canceled' : 'failed', ctx.now(), { purged: ctx.purged })
    .catch(() => audit.abandon());
}
