// When an item's fate changes (src/plan/explain.ts): every instant agrees with the fate planner
// to the millisecond — not condemned one millisecond before, condemned at it — and what moves it
// is counted as the planner counts.
import { describe, expect, it } from 'vitest';
import {
  fateOf,
  planFates,
  type ContextIn,
  type FateInput,
  type RootIn,
  type SessionIn,
  type StoreIn,
} from '../../src/plan/fates.js';
import {
  ageCondemnsFromMs,
  bytesBudget,
  firstTrue,
  liveUntilMs,
  messagesToCondemn,
  policyRuleAt,
  policyRuleOf,
  rankOf,
  sessionsToCondemn,
} from '../../src/plan/explain.js';
import { judgeLiveness } from '../../src/plan/liveness.js';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 11, 1, 7, 53, 12, 345);

const sid = (ms: number, tag = 0): string =>
  'ses_' + Math.floor(ms).toString(16).padStart(12, '0') + '7' + tag.toString(16).padStart(19, '0');
const ses = (ms: number, o: Partial<SessionIn> = {}): SessionIn => ({
  name: sid(ms),
  live: false,
  owned: true,
  protected: false,
  bytes: 100,
  ...o,
});
const root = (sessions: SessionIn[], o: Partial<RootIn> = {}): RootIn => ({
  key: 'sessions:/r',
  label: 'sessions root /r',
  retain: undefined,
  keepFree: false,
  holdable: true,
  writable: true,
  sessions,
  fixed: [],
  ...o,
});
const rec = (context: string, mtimeMs: number, o: Partial<ContextIn> = {}): ContextIn => ({
  context,
  capsule: 'shey',
  mtimeMs,
  messages: 10,
  live: false,
  owned: true,
  protected: false,
  bytes: 100,
  ...o,
});
const store = (contexts: ContextIn[], o: Partial<StoreIn> = {}): StoreIn => ({
  key: 'records:shey',
  label: 'record store shey',
  policies: [{ capsule: 'shey', retain: { maxAgeSecs: 30 * 86_400 } }],
  keepFree: false,
  holdable: true,
  writable: true,
  contexts,
  ...o,
});
const input = (o: Partial<FateInput>): FateInput => ({
  nowMs: NOW,
  guard: { unattended: false, confirmLarge: false },
  roots: [],
  stores: [],
  holds: [],
  ...o,
});

describe('the instant max_age condemns an item', () => {
  it('a session: its mint time + max_age + 1 ms, where planFates itself turns (not a millisecond before)', () => {
    const minted = NOW - 59 * DAY;
    const r = root([ses(minted), ses(NOW - DAY)], { retain: { maxAgeSecs: 60 * 86_400 } });
    const i = input({ roots: [r] });
    const at = ageCondemnsFromMs(i, r.key, sid(minted));
    expect(at).toBe(minted + 60 * DAY + 1);
    // the whole planner (not the reduced one explain asks) agrees at both sides of it
    const taken = (t: number) => fateOf(planFates({ ...i, nowMs: t }), r.key, sid(minted)).fate;
    expect(taken(at! - 1)).toBe('kept');
    expect(taken(at!)).toBe('removed');
  });

  it('a record: from its mtime, fractional milliseconds and all', () => {
    const mtime = NOW - 29 * DAY + 0.625;
    const s = store([rec('ctx_a', mtime)]);
    const i = input({ stores: [s], quarantineMs: 7 * DAY });
    const at = ageCondemnsFromMs(i, s.key, 'ctx_a');
    expect(at).toBe(Math.floor(mtime + 30 * DAY) + 1);
    expect(fateOf(planFates({ ...i, nowMs: at! - 1 }), s.key, 'ctx_a').fate).toBe('kept');
    expect(fateOf(planFates({ ...i, nowMs: at! }), s.key, 'ctx_a')).toMatchObject({ fate: 'held', rule: 'max_age' });
  });

  it('already condemned: the instant is in the past; a rank does not hide it (max_age alone is asked)', () => {
    const minted = NOW - 90 * DAY;
    const r = root([ses(minted), ses(NOW - DAY), ses(NOW - 2 * DAY)], {
      retain: { maxAgeSecs: 60 * 86_400, maxSessions: 1 },
    });
    expect(ageCondemnsFromMs(input({ roots: [r] }), r.key, sid(minted))).toBe(minted + 60 * DAY + 1);
    // the one condemned by rank only has its own age instant
    expect(ageCondemnsFromMs(input({ roots: [r] }), r.key, sid(NOW - 2 * DAY))).toBe(NOW - 2 * DAY + 60 * DAY + 1);
    expect(policyRuleAt(input({ roots: [r] }), r.key, sid(NOW - 2 * DAY), NOW)).toBe('max_sessions');
    expect(policyRuleAt(input({ roots: [r] }), r.key, sid(NOW - DAY), NOW)).toBeUndefined();
  });

  it('a live or protected session is condemned at the same instant (it is kept in spite of it)', () => {
    const minted = NOW - 10 * DAY;
    for (const o of [{ live: true }, { protected: true }]) {
      const r = root([ses(minted, o)], { retain: { maxAgeSecs: 30 * 86_400 } });
      expect(ageCondemnsFromMs(input({ roots: [r] }), r.key, sid(minted))).toBe(minted + 30 * DAY + 1);
    }
  });

  it('none: no max_age, a record no policy owns, the running audit session', () => {
    const r = root([ses(NOW - DAY)], { retain: { maxSessions: 5 } });
    expect(ageCondemnsFromMs(input({ roots: [r] }), r.key, sid(NOW - DAY))).toBeUndefined();
    const s = store([rec('ctx_x', NOW - DAY, { capsule: 'other' })]);
    expect(ageCondemnsFromMs(input({ stores: [s] }), s.key, 'ctx_x')).toBeUndefined();
    const audit = root([ses(NOW - DAY)], { retain: { maxAgeSecs: 60 }, floorId: sid(NOW - 2 * DAY) });
    expect(ageCondemnsFromMs(input({ roots: [audit] }), audit.key, sid(NOW - DAY))).toBeUndefined();
  });

  it('policyRuleOf reads the policy rule of every fate, and none from a budget or no rule', () => {
    expect(policyRuleOf({ fate: 'truncated', keep: 1, dropped: 2 })).toBe('max_messages');
    expect(policyRuleOf({ fate: 'kept', why: 'live', condemnedBy: 'max_age' })).toBe('max_age');
    expect(policyRuleOf({ fate: 'held', rule: 'max_sessions', untilMs: 1 })).toBe('max_sessions');
    expect(policyRuleOf({ fate: 'removed', rule: 'keep_free', condemnedBy: 'max_age' })).toBeUndefined();
    expect(policyRuleOf({ fate: 'held', rule: 'max_bytes', untilMs: 1 })).toBeUndefined();
    expect(policyRuleOf({ fate: 'kept', why: 'policy' })).toBeUndefined();
  });
});

describe('firstTrue', () => {
  it('finds the first true instant from a guess on either side of it, and says when there is none', () => {
    for (const guess of [1000, 999, 1001, 0, 50_000, -7]) expect(firstTrue((t) => t >= 1000, guess)).toBe(1000);
    expect(firstTrue((t) => t >= 2 ** 40, 0)).toBe(2 ** 40);
    expect(firstTrue(() => false, 10)).toBeUndefined();
  });
});

describe('ranks and counts', () => {
  it('ranks by the UTF-8 bytes of the name, newest first, over every ses_ name', () => {
    const r = root([
      ses(NOW - 3 * DAY),
      ses(NOW - DAY),
      ses(NOW - 2 * DAY),
      { name: 'ses_notanid', live: false, owned: true, protected: false },
    ]);
    expect(rankOf(r, sid(NOW - DAY))).toEqual({ rank: 1, of: 3 });
    expect(rankOf(r, sid(NOW - 3 * DAY))).toEqual({ rank: 3, of: 3 });
    expect(rankOf(r, 'ses_notanid')).toBeUndefined();
  });

  it('sessions and messages still to come before the policy condemns: the planner condemns at exactly that many', () => {
    expect(sessionsToCondemn(7, 10)).toBe(4);
    expect(sessionsToCondemn(10, 10)).toBe(1);
    expect(sessionsToCondemn(11, 10)).toBe(0);
    expect(messagesToCondemn(17, 20)).toBe(4);
    expect(messagesToCondemn(21, 20)).toBe(0);
    // the 7th newest of 7 under max_sessions 10, with 4 more newer ones: the planner condemns it
    const base = Array.from({ length: 7 }, (_, k) => ses(NOW - (k + 1) * DAY));
    const newer = (n: number) => Array.from({ length: n }, (_, k) => ses(NOW - k * 1000));
    const at = (n: number) =>
      fateOf(
        planFates(input({ roots: [root([...base, ...newer(n)], { retain: { maxSessions: 10 } })] })),
        'sessions:/r',
        base[6]!.name,
      ).fate;
    expect(at(3)).toBe('kept');
    expect(at(sessionsToCondemn(7, 10))).toBe('removed');
  });
});

describe('when a live session stops counting as live', () => {
  const GRACE = 3_600_000;
  it('by its trace: 60 s after the last write with session_end, live_grace after it without; a running record has no instant', () => {
    const w = NOW - 10_000;
    expect(liveUntilMs({ running: 'none', lastWriteMs: w, hasSessionEnd: true }, NOW, GRACE)).toBe(w + 60_000);
    expect(liveUntilMs({ running: 'none', lastWriteMs: w, hasSessionEnd: false }, NOW, GRACE)).toBe(w + GRACE);
    expect(liveUntilMs({ running: 'none', lastWriteMs: w, hasSessionEnd: undefined }, NOW, 10_000)).toBe(w + 60_000);
    expect(liveUntilMs({ running: 'alive', lastWriteMs: w, hasSessionEnd: true }, NOW, GRACE)).toBeUndefined();
    expect(
      liveUntilMs({ running: 'none', lastWriteMs: NOW - 2 * GRACE, hasSessionEnd: false }, NOW, GRACE),
    ).toBeUndefined();
  });

  it('a fractional write time: judgeLiveness turns at the instant given', () => {
    const l = { running: 'dead' as const, lastWriteMs: NOW - 1000.25, hasSessionEnd: false };
    const t = liveUntilMs(l, NOW, GRACE)!;
    expect(judgeLiveness(l, t - 1, GRACE).state).toBe('live');
    expect(judgeLiveness(l, t, GRACE).state).toBe('dead');
  });
});

describe('max_bytes as it bears on one item', () => {
  it('the older removable items go first; it goes once the store grows past the budget by them', () => {
    const a = ses(NOW - 3 * DAY, { bytes: 300 });
    const b = ses(NOW - 2 * DAY, { bytes: 200, live: true });
    const c = ses(NOW - DAY, { bytes: 100 });
    const r = root([a, b, c], { maxBytes: 1000 });
    const i = input({ roots: [r] });
    const p = planFates(i);
    const bb = bytesBudget(i, p.items, new Set(), r.key, c.name, 600);
    expect(bb).toEqual({
      limit: 1000,
      inPlace: 600,
      itemBytes: 100,
      olderRemovable: { items: 1, bytes: 300 },
      growsBy: 701,
    });
    // grown by that much (in an older live session's bytes, which no budget takes), it goes
    const grown = root([a, { ...b, bytes: 200 + 701 }, c], { maxBytes: 1000 });
    expect(fateOf(planFates(input({ roots: [grown] })), r.key, c.name)).toEqual({ fate: 'removed', rule: 'max_bytes' });
    expect(
      fateOf(planFates(input({ roots: [root([a, { ...b, bytes: 200 + 700 }, c], { maxBytes: 1000 })] })), r.key, c.name)
        .fate,
    ).toBe('kept');
    // a live one never goes for it; a store without max_bytes has none
    expect(bytesBudget(i, p.items, new Set(), r.key, b.name, 600)?.growsBy).toBeUndefined();
    expect(bytesBudget(i, p.items, new Set([r.key]), r.key, c.name, 600)?.growsBy).toBeUndefined();
    expect(bytesBudget(input({ roots: [root([a])] }), p.items, new Set(), r.key, a.name, 600)).toBeUndefined();
  });
});
