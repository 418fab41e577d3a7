// Step "recover": complete the audit of a sweep that was killed mid-way.
// Guarantees: real runs only (it writes); each completed run is reported as a process_interrupted skip.
import { Codes } from '../../errors.js';
import { recoverInterruptedAudits } from '../recover.js';
import { skip, type SweepContext, type StepTally } from './context.js';

export async function recoverStep(ctx: SweepContext): Promise<StepTally> {
  if (!ctx.homeDir || ctx.dryRun) return { items: 0, bytes: 0 };
  const recovered = await recoverInterruptedAudits(ctx.homeDir, ctx.home, ctx.now());
  for (const r of recovered) skip(ctx, { target: r.target, code: Codes.processInterrupted, detail: r.detail });
  return { items: recovered.length, bytes: 0 };
}
