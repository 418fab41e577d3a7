// The blast-radius guard, pure: what trips it and what never does.
import { describe, expect, it } from 'vitest';
import { blastRadius } from '../../src/plan/guards.js';

const base = { configured: undefined, unattended: true, confirmLarge: false };

describe('blastRadius', () => {
  it('unattended: trips only above half of the store and above 20 entries', () => {
    expect(blastRadius({ ...base, present: 40, remove: 21 })).toMatch(/at most half/);
    expect(blastRadius({ ...base, present: 40, remove: 20 })).toBeUndefined(); // half, not more
    expect(blastRadius({ ...base, present: 30, remove: 20 })).toBeUndefined(); // not more than 20
    expect(blastRadius({ ...base, present: 10, remove: 10 })).toBeUndefined(); // small store
    expect(blastRadius({ ...base, present: 1000, remove: 400 })).toBeUndefined(); // steady trimming
  });

  it('by hand: no limit unless configured; --confirm-large lifts any limit', () => {
    expect(blastRadius({ ...base, unattended: false, present: 1000, remove: 1000 })).toBeUndefined();
    expect(blastRadius({ ...base, unattended: false, configured: { count: 10 }, present: 1000, remove: 11 })).toMatch(
      /max_delete.count is 10/,
    );
    expect(
      blastRadius({ ...base, unattended: false, configured: { fraction: 0.1 }, present: 100, remove: 11 }),
    ).toMatch(/max_delete.fraction is 0.1/);
    expect(
      blastRadius({ ...base, unattended: false, configured: { fraction: 0.1 }, present: 100, remove: 10 }),
    ).toBeUndefined();
    expect(
      blastRadius({ ...base, configured: { count: 10 }, confirmLarge: true, present: 1000, remove: 999 }),
    ).toBeUndefined();
    expect(blastRadius({ ...base, confirmLarge: true, present: 40, remove: 40 })).toBeUndefined();
  });

  it('the boundaries are exact: half of a store over 20 entries, and a count of exactly max_delete.count, pass', () => {
    expect(blastRadius({ ...base, present: 50, remove: 25 })).toBeUndefined(); // exactly half
    expect(blastRadius({ ...base, present: 50, remove: 26 })).toBe(
      'an unattended sweep removes at most half of a store once it is more than 20 entries',
    );
    expect(blastRadius({ ...base, present: 21, remove: 21 })).toMatch(/at most half/); // 21 > 20, all of it
    const hand = { ...base, unattended: false };
    expect(blastRadius({ ...hand, configured: { count: 10 }, present: 11, remove: 10 })).toBeUndefined();
    expect(blastRadius({ ...hand, configured: { count: 10 }, present: 11, remove: 11 })).toBe('max_delete.count is 10');
    expect(blastRadius({ ...hand, configured: { fraction: 0.25 }, present: 10, remove: 3 })).toBe(
      'max_delete.fraction is 0.25 (2 of 10)',
    );
    expect(blastRadius({ ...hand, configured: { fraction: 0.25 }, present: 12, remove: 3 })).toBeUndefined(); // exactly a quarter
  });

  it('a configured max_delete replaces the unattended default', () => {
    expect(blastRadius({ ...base, configured: { count: 100 }, present: 40, remove: 40 })).toBeUndefined();
  });
});
