// Step "clock": clock sanity (src/plan/clock.ts) before anything is planned.
// Guarantees:
// - Reads `clock_reference_ms` from `<home>/gc/state.json`; when the wall clock is more than the
//   tolerance behind it, `ctx.clockSkew` is set (the plan step then ignores every `max_age`) and
//   one warning-level `clock_skew` item says by how much, what was skipped and what still applied.
//   A dry run shows the same.
// - A real run then records its own start time (upkeep: a dry run records nothing): the reference becomes max(reference, now). It is
//   never taken from anything a capsule writes. A failure to record it (a full disk) is a warning
//   (io_error, as for the daemon's own state writes): the sweep goes on, and the next one is
//   judged against the previous reference, which is still a lower bound.
import { Codes, describeError } from '../../errors.js';
import { advanceClockReference, readStateFile, statePath } from '../../gchome/state.js';
import { clockSkew } from '../../plan/clock.js';
import { formatWhen, relativeTime } from '../report.js';
import { skip, type SweepContext, type StepTally } from './context.js';

export async function clockStep(ctx: SweepContext): Promise<StepTally> {
  if (!ctx.homeExists && !ctx.homeDir) return { items: 0, bytes: 0 };
  const read = await readStateFile(ctx.home);
  const reference = read.status === 'ok' ? read.state.clock_reference_ms : undefined;
  const skew = clockSkew(ctx.nowMs, reference);
  if (skew) {
    ctx.clockSkew = skew;
    const behind = relativeTime(ctx.nowMs, skew.referenceMs).replace(/ ago$/, '');
    skip(ctx, {
      target: statePath(ctx.home),
      code: Codes.clockSkew,
      detail:
        `the clock is ${behind} behind the last sweep (which started ${formatWhen(skew.referenceMs, ctx.nowMs)}): ` +
        `age-based deletion (max_age of sessions, records and the audit) is skipped this sweep; ` +
        `count policies (max_sessions, max_messages) and disk budgets still applied. ` +
        `If the clock is right now and was wrong before, see "Clock sanity" in docs/config.md`,
    });
  }
  if (ctx.homeDir) {
    try {
      await ctx.fx.upkeep(() => advanceClockReference(ctx.home, ctx.nowMs));
    } catch (err) {
      skip(ctx, {
        target: statePath(ctx.home),
        code: Codes.ioError,
        detail: `the clock reference could not be recorded (${describeError(err)}); the next sweep is judged against the previous one`,
      });
    }
  }
  return { items: skew ? 1 : 0, bytes: 0 };
}
