// Step "scan sessions": every sessions root (configured, discovered from running records, the
// audit root), each session's trace summary and liveness; every root that exists becomes one
// store of the sweep's fates (ctx.sessionPlans, in the order the roots are found).
// Guarantees: read-only apart from the trace cache's in-memory state; configured roots with a
// config problem are reported as errors; scan problems are reported per item. Each sessions root
// (not the audit root) is probed once for whether this process may write it (access(2) through
// its descriptor: one open, one access, nothing written; src/fsx/safe-fs.ts Dir.writeDenied), so
// that the steps attempt nothing in a root they cannot change (docs/daemon.md "Making more paths
// writable"). Entries named like murmur-gc's own in a root or its children/ that its registry does
// not vouch for are taken out of the scan and reported (steps/trust.ts).
import { loadTraceCache } from '../../gchome/trace-cache.js';
import { MemoryTraceCache } from '../../runtime/summary-cache.js';
import { scanSessionsWorld } from '../world.js';
import { Dir, sameIdentity } from '../../fsx/safe-fs.js';
import { fail, problem, type SweepContext, type StepTally } from './context.js';
import { applyTrust } from './trust.js';
import { groupBy } from '../../group-by.js';

export async function scanSessionsStep(ctx: SweepContext): Promise<StepTally> {
  ctx.cache = ctx.homeDir ? await loadTraceCache(ctx.homeDir) : new MemoryTraceCache();
  for (const s of ctx.config.sessions) {
    if (s.problem) fail(ctx, { target: s.root, code: s.problem.code, detail: s.problem.detail });
  }
  ctx.world = await scanSessionsWorld(ctx.config, ctx.homeDir, ctx.cache, ctx.nowMs, ctx.signal);
  ctx.world.problems.forEach((p) => problem(ctx, p));
  const byRoot = groupBy(ctx.world.views, (v) => v.root);
  for (const { input, scan, beside } of ctx.world.rootScans) {
    if (!scan.exists) continue;
    ctx.sessionPlans.push({
      input,
      scan,
      views: byRoot.get(input.root) ?? [],
      key: `sessions:${input.root}`,
      ...(beside ? { beside } : {}),
    });
  }
  Object.assign(ctx.report.inventory, ctx.world.counts);
  // Only what murmur-gc's registry vouches for is a hold, trash or kept-aside entry of its own.
  await applyTrust(ctx);
  await probeWritable(ctx);
  return { items: ctx.world.counts.sessions, bytes: 0 };
}

/** Once per root and sweep: the roots this process may not write go into ctx.unwritable. */
async function probeWritable(ctx: SweepContext): Promise<void> {
  for (const { input, scan } of ctx.world.rootScans) {
    if (!scan.exists || input.isAuditRoot || !scan.identity) continue;
    let dir: Dir | undefined;
    try {
      dir = await Dir.open(input.root);
      // A root replaced or gone since its scan is reported by the step that acts there.
      if (!sameIdentity(dir.identity, scan.identity)) continue;
      const errno = await dir.writeDenied();
      if (errno !== undefined) ctx.unwritable.set(input.root, { errno, notAttempted: new Map() });
    } catch {
      // not openable now: the steps that act there report it, per root
    } finally {
      await dir?.close();
    }
  }
}
