// Clock sanity and future-dated session names, pure: the tolerances are exact at their boundary.
import { describe, expect, it } from 'vitest';
import { CLOCK_SKEW_TOLERANCE_MS, clockSkew } from '../../src/plan/clock.js';
import { FUTURE_TOLERANCE_MS, futureSessions } from '../../src/plan/future-ids.js';
import { idAt } from '../helpers/fixtures.js';

const NOW = 1_800_000_000_000;

describe('clockSkew', () => {
  it('tolerates a clock up to exactly 5 minutes behind the reference; a millisecond more is skew', () => {
    expect(CLOCK_SKEW_TOLERANCE_MS).toBe(300_000);
    expect(clockSkew(NOW, NOW + 300_000)).toBeUndefined();
    expect(clockSkew(NOW, NOW + 300_001)).toEqual({ referenceMs: NOW + 300_001, behindMs: 300_001 });
  });

  it('a clock ahead of the reference, or no usable reference, is sane', () => {
    expect(clockSkew(NOW, NOW - 86_400_000)).toBeUndefined();
    expect(clockSkew(NOW, undefined)).toBeUndefined();
    expect(clockSkew(NOW, Number.NaN)).toBeUndefined();
    expect(clockSkew(NOW, Number.POSITIVE_INFINITY)).toBeUndefined();
  });
});

describe('futureSessions', () => {
  it('counts names minted more than a day after now; exactly a day ahead is not future', () => {
    expect(FUTURE_TOLERANCE_MS).toBe(86_400_000);
    const atEdge = idAt('ses_', NOW + 86_400_000);
    const justPast = idAt('ses_', NOW + 86_400_001);
    expect(futureSessions([atEdge, idAt('ses_', NOW)], NOW)).toEqual({ count: 0, newest: undefined, newestMs: 0 });
    expect(futureSessions([atEdge, justPast], NOW)).toEqual({ count: 1, newest: justPast, newestMs: NOW + 86_400_001 });
  });

  it('names the future name that ranks first (by bytes), whatever the input order; ignores non-ids', () => {
    const a = idAt('ses_', NOW + 2 * 86_400_000);
    const b = idAt('ses_', NOW + 3 * 86_400_000);
    const c = idAt('ses_', NOW + 5 * 86_400_000);
    for (const names of [
      [a, c, b],
      [c, b, a],
      [b, a, c],
      [a, 'ses_zz', 'notes', c, b],
    ]) {
      expect(futureSessions(names, NOW)).toEqual({ count: 3, newest: c, newestMs: NOW + 5 * 86_400_000 });
    }
  });
});
