// Step "scan sessions": every sessions root (configured, discovered from running records, the
// audit root), each session's trace summary and liveness.
// Guarantees: read-only apart from the trace cache's in-memory state; configured roots with a
// config problem are reported as errors; scan problems are reported per item.
import { loadTraceCache } from '../../gchome/trace-cache.js';
import { MemoryTraceCache } from '../../runtime/trace-scan.js';
import { scanSessionsWorld } from '../world.js';
import { fail, problem, type SweepContext, type StepTally } from './context.js';

export async function scanSessionsStep(ctx: SweepContext): Promise<StepTally> {
  ctx.cache = ctx.homeDir ? await loadTraceCache(ctx.homeDir) : new MemoryTraceCache();
  for (const s of ctx.config.sessions) {
    if (s.problem) fail(ctx, { target: s.root, code: s.problem.code, detail: s.problem.detail });
  }
  ctx.world = await scanSessionsWorld(ctx.config, ctx.homeDir, ctx.cache, ctx.nowMs, ctx.signal);
  ctx.world.problems.forEach((p) => problem(ctx, p));
  Object.assign(ctx.report.inventory, ctx.world.counts);
  return { items: ctx.world.counts.sessions, bytes: 0 };
}
