// Step "lock"'s first question on its own: is there anything to sweep at all?
// Guarantees: with no murmur home and no configured sessions root that exists there is nothing:
// the sweep stops with the one message below and touches nothing (no lock, no directory made).
// The check is lstat(2)s only — no read, no write, no lock — so the CLI can answer it before the
// sweep pipeline is loaded (src/sweep/nothing.ts) with the very report the pipeline makes.
import type { GcConfig } from '../../config/types.js';
import { lstatPath } from '../../fsx/safe-fs.js';
import { anyExists } from '../../fsx/dirs.js';
import type { StepTally, SweepContext } from './context.js';

/** No home and no configured sessions root exists. */
export async function nothingToSweep(config: GcConfig): Promise<boolean> {
  return !(await lstatPath(config.home)) && !(await anyExists(config.sessions.map((s) => s.root)));
}

/** What the report says when there is nothing to sweep. */
export function nothingToSweepMessage(home: string): string {
  return `No murmur home at ${home} and no configured sessions root exists: nothing to sweep. (murmur-gc creates nothing until the runtime has written state.)`;
}

/** Stop the sweep: nothing to sweep (the report's message says so). */
export function stopNothingToSweep(ctx: SweepContext): StepTally {
  ctx.report.message = nothingToSweepMessage(ctx.home);
  ctx.stopped = true;
  return { items: 0, bytes: 0 };
}
