// Clock sanity, pure: is the wall clock now earlier than murmur-gc's own record of when its last
// sweep ran (the clock was stepped back)? Then every age (`max_age`) would be judged wrongly.
// Guarantees:
// - The reference is `clock_reference_ms` of `<home>/gc/state.json`: the largest wall-clock time
//   at which a real sweep started, taken from murmur-gc's own clock at that moment — never from
//   anything a capsule writes (ids, mtimes): a future-dated `ses_` name cannot switch age-based
//   deletion off, and a future mtime or id is simply "not old" to the planners.
// - A clock within CLOCK_SKEW_TOLERANCE_MS (5 min) of the reference is fine (NTP slews, a sweep
//   started a moment after another one's start was recorded).
// - Skewed: age-based deletion is skipped for the sweep; count-based keys and budgets still apply.
// No fs, no clock of its own.

export const CLOCK_SKEW_TOLERANCE_MS = 5 * 60_000;

export interface ClockSkew {
  referenceMs: number;
  /** how far `now` is behind the reference, ms (> tolerance) */
  behindMs: number;
}

/** undefined when the clock is sane (or there is no reference yet). */
export function clockSkew(nowMs: number, referenceMs: number | undefined): ClockSkew | undefined {
  if (referenceMs === undefined || !Number.isFinite(referenceMs)) return undefined;
  const behindMs = referenceMs - nowMs;
  return behindMs > CLOCK_SKEW_TOLERANCE_MS ? { referenceMs, behindMs } : undefined;
}
