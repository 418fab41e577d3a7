// A sweep with nothing to sweep (no murmur home, no configured sessions root that exists),
// answered without loading the sweep pipeline (src/sweep/pipeline.ts and its steps).
// Guarantees: the report is the one the pipeline makes in that case — its "lock" step is the
// same check and the same message (src/sweep/steps/no-home.ts), it stops there, touches nothing
// and creates nothing; when there is something to sweep it returns undefined and the caller runs
// the pipeline, which checks again.
import { processUid } from '../fsx/safe-fs.js';
import type { SweepReport } from './report.js';
import { createContext, finishReport, runStep, type SweepOptions } from './steps/context.js';
import { nothingToSweep, stopNothingToSweep } from './steps/no-home.js';

export async function sweepIfNothing(opts: SweepOptions): Promise<SweepReport | undefined> {
  if (!(await nothingToSweep(opts.config))) return undefined;
  const ctx = createContext(opts, processUid());
  await runStep(ctx, { name: 'lock', run: async (c) => ((await nothingToSweep(c.config)) ? stopNothingToSweep(c) : { items: 0, bytes: 0 }) });
  return ctx.stopped ? finishReport(ctx) : undefined;
}
