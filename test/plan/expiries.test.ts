// The next expiries, pure (src/plan/expiries.ts): the first ms a sweep purges a hold or condemns
// an item by max_age, and what is left out (condemned now, by the count now, protected, foreign).
import { describe, expect, it } from 'vitest';
import { earliest, nextPurge, nextRecordAge, nextSessionAge } from '../../src/plan/expiries.js';
import { planSessions } from '../../src/plan/sessions.js';
import { idAt } from '../helpers/fixtures.js';

const NOW = Date.UTC(2026, 11, 2, 20, 0);
const DAY = 86_400_000;

describe('nextPurge', () => {
  it('is the first window to end, with every hold that has ended by then', () => {
    expect(nextPurge([], NOW)).toBeNull();
    const holds = [
      { untilMs: NOW + 3 * DAY, bytes: 30 },
      { untilMs: NOW + DAY, bytes: 10 },
      { untilMs: NOW + DAY, bytes: 5 },
      { untilMs: NOW + 2 * DAY, bytes: 20 },
    ];
    expect(nextPurge(holds, NOW)).toEqual({ at_ms: NOW + DAY, items: 2, bytes: 15 });
  });

  it('holds already past their window are one purge, due since the first of them ended', () => {
    const holds = [
      { untilMs: NOW - DAY, bytes: 1 },
      { untilMs: NOW - 1, bytes: 2 },
      { untilMs: NOW, bytes: 4 },
      { untilMs: NOW + 1, bytes: 8 },
    ];
    expect(nextPurge(holds, NOW)).toEqual({ at_ms: NOW - DAY, items: 3, bytes: 7 });
  });
});

describe('nextSessionAge', () => {
  const minted = new Map<number, string>();
  /** the session minted `ageMs` ago (one name per age) */
  const ses = (ageMs: number): string =>
    minted.get(ageMs) ?? (minted.set(ageMs, idAt('ses_', NOW - ageMs)), minted.get(ageMs)!);

  it('is the oldest young session, due the first ms past its max_age; a sweep then condemns it and not a ms before', () => {
    const names = [ses(DAY), ses(5 * DAY), ses(40 * DAY), ses(2 * DAY)];
    const retain = { maxAgeSecs: 30 * 86_400 };
    const next = nextSessionAge(names, retain, NOW, '/r');
    expect(next).toEqual({
      at_ms: NOW - 5 * DAY + 30 * DAY + 1,
      store: 'sessions',
      origin: '/r',
      target: ses(5 * DAY),
    });
    const condemned = (at: number) =>
      planSessions(
        names.map((name) => ({ name, liveness: 'dead' as const, livenessWhy: '' })),
        retain,
        at,
      ).remove.map((r) => r.name);
    expect(condemned(next!.at_ms - 1)).toEqual([ses(40 * DAY)]);
    expect(condemned(next!.at_ms)).toEqual([ses(5 * DAY), ses(40 * DAY)]);
  });

  it('leaves out what the count condemns now, the protected, and roots without max_age', () => {
    const names = [ses(DAY), ses(2 * DAY), ses(3 * DAY)];
    expect(nextSessionAge(names, { maxAgeSecs: 30 * 86_400, maxSessions: 2 }, NOW, '/r')?.target).toBe(ses(2 * DAY));
    expect(nextSessionAge(names, { maxAgeSecs: 30 * 86_400 }, NOW, '/r', (n) => n === ses(3 * DAY))?.target).toBe(
      ses(2 * DAY),
    );
    expect(nextSessionAge(names, { maxSessions: 1 }, NOW, '/r')).toBeUndefined();
    expect(nextSessionAge(names, undefined, NOW, '/r')).toBeUndefined();
    expect(nextSessionAge(['not-a-session'], { maxAgeSecs: 1 }, NOW, '/r')).toBeUndefined();
  });
});

describe('nextRecordAge', () => {
  const policies = [{ capsule: 'shey', retain: { maxAgeSecs: 10 * 86_400 } }];

  it("is the oldest young context of the policy's capsule, due the first whole ms past its max_age", () => {
    const contexts = [
      { context: 'a', capsule: 'shey', mtimeMs: NOW - 2 * DAY + 0.5 },
      { context: 'b', capsule: 'shey', mtimeMs: NOW - 20 * DAY }, // condemned now
      { context: 'c', capsule: 'other', mtimeMs: NOW - 9 * DAY }, // not this policy's
      { context: 'd', capsule: undefined, mtimeMs: NOW - 9 * DAY }, // no header
      { context: 'e', capsule: 'shey', mtimeMs: NOW - 3 * DAY }, // protected
    ];
    const next = nextRecordAge(contexts, policies, NOW, 's0', (c) => c === 'e');
    expect(next).toEqual({ at_ms: NOW - 2 * DAY + 10 * DAY + 1, store: 'records', origin: 's0', target: 'a' });
    // the planner's comparison: mtime < now - max_age
    const floor = (at: number) => at - 10 * DAY;
    expect(NOW - 2 * DAY + 0.5 < floor(next!.at_ms - 1)).toBe(false);
    expect(NOW - 2 * DAY + 0.5 < floor(next!.at_ms)).toBe(true);
    expect(nextRecordAge(contexts, [{ capsule: 'shey', retain: { maxMessages: 3 } }], NOW, 's0')).toBeUndefined();
  });
});

describe('earliest', () => {
  it('picks the first instant; null when nothing is due', () => {
    expect(earliest([undefined])).toBeNull();
    const a = { at_ms: 2, store: 'records' as const, origin: 's', target: 'a' };
    const b = { at_ms: 1, store: 'sessions' as const, origin: '/r', target: 'b' };
    expect(earliest([a, undefined, b])).toBe(b);
  });
});
