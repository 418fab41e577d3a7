// A dry run with nothing to sweep (no murmur home, no configured sessions root that exists),
// answered without loading the sweep pipeline (src/sweep/pipeline.ts and its steps) or a logger.
// Guarantees: the report is the one the pipeline makes in that case — the same fields in the same
// order (src/sweep/steps/context.ts newReport), the same check and message as its "lock" step
// (src/sweep/steps/no-home.ts), one step `lock` with nothing done; it reads nothing and creates
// nothing. When there is something to sweep it returns undefined and the caller runs the pipeline,
// which checks again.
import type { GcConfig } from '../config/types.js';
import { newReport, type SweepReport } from './report.js';
import { nothingToSweep, nothingToSweepMessage } from './steps/no-home.js';

export async function dryRunIfNothing(
  config: GcConfig,
  now: () => number = Date.now,
): Promise<SweepReport | undefined> {
  const nowMs = now();
  const t0 = performance.now();
  if (!(await nothingToSweep(config))) return undefined;
  const report = newReport(config, true, nowMs);
  report.steps = [{ step: 'lock', items: 0, bytes: 0, ms: Math.round(performance.now() - t0) }];
  report.message = nothingToSweepMessage(config.home);
  report.duration_ms = now() - nowMs;
  return report;
}
