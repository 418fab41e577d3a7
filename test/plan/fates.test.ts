import { describe, expect, it } from 'vitest';
import {
  KEPT,
  PackedSessions,
  fateOf,
  itemKey,
  planFates,
  type ContextIn,
  type FateInput,
  type FatePlan,
  type HoldIn,
  type RootIn,
  type SessionIn,
  type StoreIn,
} from '../../src/plan/fates.js';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 11, 1);
const WEEK = 7 * DAY;

/** A session id minted `daysAgo` days before NOW; `tag` tells apart ids of the same instant. */
function sid(daysAgo: number, tag = 0): string {
  return (
    'ses_' +
    Math.round(NOW - daysAgo * DAY)
      .toString(16)
      .padStart(12, '0') +
    '7' +
    tag.toString(16).padStart(19, '0')
  );
}

/** Overrides where `undefined` takes a key away. */
type Over<T> = { [K in keyof T]?: T[K] | undefined };
function without<T extends object>(o: T): T {
  for (const k of Object.keys(o) as (keyof T)[]) if (o[k] === undefined) delete o[k];
  return o;
}

function ses(daysAgo: number, o: Over<SessionIn> & { tag?: number } = {}): SessionIn {
  const { tag, ...rest } = o;
  return without({
    name: sid(daysAgo, tag ?? 0),
    live: false,
    owned: true,
    protected: false,
    bytes: 100,
    ...rest,
  } as SessionIn);
}

function rootOf(
  name: string,
  sessions: SessionIn[],
  o: Partial<Omit<RootIn, 'sessions'>> = {},
): RootIn & { sessions: SessionIn[] } {
  return {
    key: `sessions:/${name}`,
    label: `sessions root /${name}`,
    retain: undefined,
    keepFree: false,
    holdable: true,
    writable: true,
    sessions,
    fixed: [],
    ...o,
  };
}

function ctx(name: string, daysAgo: number, o: Over<ContextIn> = {}): ContextIn {
  return without({
    context: name,
    capsule: 'shey',
    mtimeMs: NOW - daysAgo * DAY,
    messages: 10,
    live: false,
    owned: true,
    protected: false,
    bytes: 100,
    ...o,
  } as ContextIn);
}

function storeOf(name: string, contexts: ContextIn[], o: Partial<StoreIn> = {}): StoreIn {
  return {
    key: `records:${name}`,
    label: `record store ${name}`,
    policies: [{ capsule: 'shey', retain: undefined }],
    keepFree: false,
    holdable: true,
    writable: true,
    contexts,
    ...o,
  };
}

function hold(key: string, store: string, untilMs: number, o: Partial<HoldIn> = {}): HoldIn {
  return { key, store, target: key.split('/').pop()!, untilMs, owned: true, bytes: 100, keepFree: true, ...o };
}

function plan(o: Partial<FateInput>): FatePlan {
  return planFates({
    nowMs: NOW,
    guard: { unattended: false, confirmLarge: false },
    roots: [],
    stores: [],
    holds: [],
    ...o,
  });
}

const fate = (p: FatePlan, r: { key: string }, name: string) => fateOf(p, r.key, name);
/** name → fate word for every item of a root or store */
function words(p: FatePlan, r: RootIn | StoreIn): string[] {
  const names = 'sessions' in r ? Array.from(r.sessions, (s) => s.name) : r.contexts.map((c) => c.context);
  return names.map((n) => {
    const f = fate(p, r, n);
    switch (f.fate) {
      case 'kept':
        return `kept:${f.why}${f.condemnedBy ? `<${f.condemnedBy}` : ''}`;
      case 'held':
        return `held:${f.rule}`;
      case 'removed':
        return `removed:${f.rule}${f.condemnedBy ? `<${f.condemnedBy}` : ''}`;
      case 'truncated':
        return `truncated:${f.keep}${f.heldUntilMs !== undefined ? ':held' : ''}`;
    }
  });
}

describe('the policies', () => {
  it('no policy takes nothing; an item no rule takes is not stored (it is KEPT)', () => {
    const r = rootOf('a', [ses(90), ses(1)]);
    const p = plan({ roots: [r] });
    expect(words(p, r)).toEqual(['kept:policy', 'kept:policy']);
    expect(p.items.size).toBe(0);
    expect(fateOf(p, r.key, 'ses_none')).toBe(KEPT);
    expect(fateOf(undefined, r.key, 'x')).toBe(KEPT);
  });

  it('max_age and max_sessions as the runtime ranks: removed at once without the undo window, held until now + window with it', () => {
    const r = rootOf('a', [ses(40), ses(3), ses(2), ses(1)], { retain: { maxSessions: 2, maxAgeSecs: 30 * 86_400 } });
    expect(words(plan({ roots: [r] }), r)).toEqual([
      'removed:max_age',
      'removed:max_sessions',
      'kept:policy',
      'kept:policy',
    ]);
    const held = plan({ roots: [r], quarantineMs: WEEK });
    expect(words(held, r)).toEqual(['held:max_age', 'held:max_sessions', 'kept:policy', 'kept:policy']);
    expect(fate(held, r, r.sessions[0]!.name)).toEqual({ fate: 'held', rule: 'max_age', untilMs: NOW + WEEK });
  });

  it('what is not holdable (the audit root) is removed at once, and nothing at or after the floor is condemned', () => {
    const r = rootOf('gc', [ses(100), ses(95), ses(90)], {
      retain: { maxAgeSecs: 86_400 },
      holdable: false,
      floorId: sid(95),
    });
    expect(words(plan({ roots: [r], quarantineMs: WEEK }), r)).toEqual([
      'removed:max_age',
      'kept:policy',
      'kept:policy',
    ]);
  });

  it("a condemned item stays, saying why and what condemns it: protected, live, another user's, not writable", () => {
    const r = rootOf('a', [ses(50, { protected: true }), ses(49, { live: true }), ses(48, { owned: false }), ses(47)], {
      retain: { maxAgeSecs: 86_400 },
    });
    expect(words(plan({ roots: [r] }), r)).toEqual([
      'kept:protected<max_age',
      'kept:live<max_age',
      'kept:foreign_owner<max_age',
      'removed:max_age',
    ]);
    const ro = { ...r, writable: false };
    expect(words(plan({ roots: [ro] }), ro)).toEqual([
      'kept:protected<max_age',
      'kept:live<max_age',
      'kept:foreign_owner<max_age',
      'kept:not_writable<max_age',
    ]);
    // protected outranks live, live outranks the owner
    const both = rootOf(
      'b',
      [ses(50, { protected: true, live: true, owned: false }), ses(49, { live: true, owned: false })],
      { retain: { maxAgeSecs: 86_400 } },
    );
    expect(words(plan({ roots: [both] }), both)).toEqual(['kept:protected<max_age', 'kept:live<max_age']);
  });

  it("records: only a header naming a capsule of the store's policies is owned; age removes or holds, max_messages truncates", () => {
    const s = storeOf(
      'shey',
      [
        ctx('c_old', 100),
        ctx('c_long', 1, { messages: 50 }),
        ctx('c_fine', 1),
        ctx('c_bare', 100, { capsule: undefined }),
        ctx('c_other', 100, { capsule: 'other' }),
      ],
      {
        policies: [{ capsule: 'shey', retain: { maxAgeSecs: 90 * 86_400, maxMessages: 20 } }],
      },
    );
    expect(words(plan({ stores: [s] }), s)).toEqual([
      'removed:max_age',
      'truncated:20',
      'kept:policy',
      'kept:not_owned',
      'kept:not_owned',
    ]);
    const held = plan({ stores: [s], quarantineMs: WEEK });
    expect(words(held, s)).toEqual([
      'held:max_age',
      'truncated:20:held',
      'kept:policy',
      'kept:not_owned',
      'kept:not_owned',
    ]);
    expect(fate(held, s, 'c_long')).toEqual({ fate: 'truncated', keep: 20, dropped: 30, heldUntilMs: NOW + WEEK });
    // a store on another filesystem than the home cannot be held: removed at once (lines still held)
    const far = { ...s, holdable: false };
    expect(words(plan({ stores: [far], quarantineMs: WEEK }), far)).toEqual([
      'removed:max_age',
      'truncated:20:held',
      'kept:policy',
      'kept:not_owned',
      'kept:not_owned',
    ]);
  });

  it('records: the first policy naming a capsule decides; a second capsule of the store has its own policy', () => {
    const s = storeOf('shared', [ctx('a_old', 40, { capsule: 'a' }), ctx('b_old', 40, { capsule: 'b' })], {
      policies: [
        { capsule: 'a', retain: { maxAgeSecs: 30 * 86_400 } },
        { capsule: 'a', retain: { maxAgeSecs: 60 * 86_400 } },
        { capsule: 'b', retain: { maxAgeSecs: 60 * 86_400 } },
      ],
    });
    expect(words(plan({ stores: [s] }), s)).toEqual(['removed:max_age', 'kept:policy']);
    // a stricter later one for the same capsule changes nothing either
    const stricter = {
      ...s,
      policies: [
        { capsule: 'a', retain: { maxAgeSecs: 60 * 86_400 } },
        { capsule: 'a', retain: { maxAgeSecs: 30 * 86_400 } },
      ],
    };
    expect(words(plan({ stores: [stricter] }), stricter)).toEqual(['kept:policy', 'kept:not_owned']);
  });

  it("records: a condemned context stays when protected, live or another user's, a truncation too", () => {
    const s = storeOf(
      'shey',
      [
        ctx('c_p', 100, { protected: true }),
        ctx('c_l', 1, { messages: 50, live: true }),
        ctx('c_f', 1, { messages: 50, owned: false }),
      ],
      {
        policies: [{ capsule: 'shey', retain: { maxAgeSecs: 90 * 86_400, maxMessages: 20 } }],
      },
    );
    expect(words(plan({ stores: [s] }), s)).toEqual([
      'kept:protected<max_age',
      'kept:live<max_messages',
      'kept:foreign_owner<max_messages',
    ]);
  });

  it("held items: expired ones are purged, another user's are kept, the rest stay held", () => {
    const hs = [
      hold('/a/h1', 'sessions:/a', NOW - 1),
      hold('/a/h2', 'sessions:/a', NOW),
      hold('/a/h3', 'sessions:/a', NOW + 1),
      hold('/a/h4', 'sessions:/a', NOW - 1, { owned: false }),
    ];
    const p = plan({ holds: hs });
    expect(hs.map((h) => p.holds.get(h.key))).toEqual([
      { fate: 'purged', rule: 'expired' },
      { fate: 'purged', rule: 'expired' },
      { fate: 'held', untilMs: NOW + 1 },
      { fate: 'kept', why: 'foreign_owner' },
    ]);
    expect(plan({ holds: hs, failed: new Set(['/a/h1']) }).holds.get('/a/h1')).toEqual({ fate: 'kept', why: 'failed' });
  });
});

describe('max_bytes', () => {
  it('takes the oldest removable in place until the store is at or under its budget; a store at its budget loses nothing', () => {
    const r = rootOf('a', [ses(4), ses(3), ses(2), ses(1)], { maxBytes: 250 });
    const p = plan({ roots: [r] });
    expect(words(p, r)).toEqual(['removed:max_bytes', 'removed:max_bytes', 'kept:policy', 'kept:policy']);
    expect(p.budget.stores).toEqual([
      {
        store: r.key,
        label: r.label,
        max_bytes: 250,
        bytes_before: 400,
        bytes_after: 200,
        removed: 2,
        bytes_freed: 200,
        held: 0,
        held_purged: 0,
      },
    ]);
    const at = { ...r, maxBytes: 400 };
    expect(words(plan({ roots: [at] }), at)).toEqual(['kept:policy', 'kept:policy', 'kept:policy', 'kept:policy']);
  });

  it('holds what it takes while the undo window is set; held items are not charged', () => {
    const r = rootOf('a', [ses(4), ses(3), ses(2), ses(1)], { maxBytes: 250 });
    const p = plan({ roots: [r], quarantineMs: WEEK, holds: [hold('/a/old', r.key, NOW + DAY, { bytes: 10_000 })] });
    expect(words(p, r)).toEqual(['held:max_bytes', 'held:max_bytes', 'kept:policy', 'kept:policy']);
    expect(p.budget.stores[0]).toMatchObject({
      bytes_before: 400,
      bytes_after: 200,
      removed: 0,
      bytes_freed: 0,
      held: 2,
    });
    expect(p.holds.get('/a/old')).toEqual({ fate: 'held', untilMs: NOW + DAY });
  });

  it('counts what the policies leave: their takings are not charged, a truncation weighs what it leaves', () => {
    const r = rootOf('a', [ses(40, { bytes: 1000 }), ses(2), ses(1)], {
      retain: { maxAgeSecs: 30 * 86_400 },
      maxBytes: 200,
    });
    expect(words(plan({ roots: [r] }), r)).toEqual(['removed:max_age', 'kept:policy', 'kept:policy']);
    const s = storeOf(
      'shey',
      [ctx('c_long', 5, { messages: 50, bytes: 1000, bytesAfterTruncation: 100 }), ctx('c_new', 1)],
      { policies: [{ capsule: 'shey', retain: { maxMessages: 10 } }], maxBytes: 200 },
    );
    const p = plan({ stores: [s] });
    expect(words(p, s)).toEqual(['truncated:10', 'kept:policy']);
    expect(p.budget.stores[0]).toMatchObject({ bytes_before: 200, bytes_after: 200 });
    // a truncated record it does take goes whole (one fate): no truncation then
    const tight = { ...s, maxBytes: 150 };
    expect(words(plan({ stores: [tight] }), tight)).toEqual(['removed:max_bytes', 'kept:policy']);
  });

  it('what the policies hold is not charged either, and neither is a record they take', () => {
    const r = rootOf('a', [ses(40, { bytes: 1000 }), ses(2), ses(1)], {
      retain: { maxAgeSecs: 30 * 86_400 },
      maxBytes: 200,
    });
    const p = plan({ roots: [r], quarantineMs: WEEK });
    expect(words(p, r)).toEqual(['held:max_age', 'kept:policy', 'kept:policy']);
    expect(p.budget.stores[0]).toMatchObject({ bytes_before: 200, bytes_after: 200, held: 0 });
    const s = storeOf('shey', [ctx('c_old', 100, { bytes: 1000 }), ctx('c_new', 1)], {
      policies: [{ capsule: 'shey', retain: { maxAgeSecs: 90 * 86_400 } }],
      maxBytes: 100,
    });
    for (const quarantineMs of [undefined, WEEK]) {
      const q = plan({ stores: [s], ...(quarantineMs !== undefined ? { quarantineMs } : {}) });
      expect(words(q, s)).toEqual([quarantineMs === undefined ? 'removed:max_age' : 'held:max_age', 'kept:policy']);
      expect(q.budget.stores[0]).toMatchObject({ bytes_before: 100, bytes_after: 100 });
    }
  });

  it('exactly what is over is in reach; a store at its budget with nothing removable is not unmet', () => {
    const r = rootOf('a', [ses(3, { live: true }), ses(2)], { maxBytes: 100 });
    const p = plan({ roots: [r] });
    expect(words(p, r)).toEqual(['kept:policy', 'removed:max_bytes']);
    expect(p.budget.unmet).toEqual([]);
    const at = rootOf('b', [ses(3, { live: true })], { maxBytes: 100 });
    expect(plan({ roots: [at] }).budget).toMatchObject({
      stores: [{ bytes_before: 100, bytes_after: 100, removed: 0 }],
      unmet: [],
    });
  });

  it('a budget of one root or store acts though the others have none; only those a budget reaches are reported', () => {
    const a = rootOf('a', [ses(2), ses(1)], { maxBytes: 100 });
    const b = rootOf('b', [ses(3)]);
    const p = plan({ roots: [b, a] });
    expect(words(p, a)).toEqual(['removed:max_bytes', 'kept:policy']);
    expect(p.budget.stores.map((x) => x.store)).toEqual([a.key]);
    const x = storeOf('x', [ctx('c_1', 2), ctx('c_2', 1)], { maxBytes: 100 });
    const y = storeOf('y', [ctx('c_3', 3)]);
    const q = plan({ stores: [y, x] });
    expect(words(q, x)).toEqual(['removed:max_bytes', 'kept:policy']);
    expect(q.budget.stores.map((st) => st.store)).toEqual([x.key]);
  });

  it('records go by age (mtime) whatever their names; equal ages by name whatever the input order', () => {
    const s = storeOf('shey', [ctx('c_a', 1), ctx('c_c', 5), ctx('c_b', 5)], { maxBytes: 200 });
    expect(words(plan({ stores: [s] }), s)).toEqual(['kept:policy', 'kept:policy', 'removed:max_bytes']);
    const older = storeOf('shey', [ctx('c_a', 1), ctx('c_z', 5)], { maxBytes: 100 });
    expect(words(plan({ stores: [older] }), older)).toEqual(['kept:policy', 'removed:max_bytes']);
  });

  it('what a policy condemns but may not take stays in place, counted and named by the same codes', () => {
    const r = rootOf('a', [ses(40, { live: true, bytes: 500 }), ses(2)], {
      retain: { maxAgeSecs: 30 * 86_400 },
      maxBytes: 100,
    });
    const p = plan({ roots: [r] });
    expect(words(p, r)).toEqual(['kept:live<max_age', 'kept:policy']);
    expect(p.budget.unmet[0]).toMatchObject({
      bytes_short: 500,
      held: { live_session: { items: 1, bytes: 500 } },
      removable: { items: 1, bytes: 100 },
    });
    const s = storeOf('shey', [ctx('c_old', 100, { live: true, bytes: 500 }), ctx('c_new', 1)], {
      policies: [{ capsule: 'shey', retain: { maxAgeSecs: 90 * 86_400 } }],
      maxBytes: 100,
    });
    expect(plan({ stores: [s] }).budget.unmet[0]).toMatchObject({ held: { live_context: { items: 1, bytes: 500 } } });
  });

  it('takes nothing from a root it may not write', () => {
    const r = rootOf('a', [ses(3), ses(2)], { maxBytes: 150, writable: false });
    const p = plan({ roots: [r] });
    expect(words(p, r)).toEqual(['kept:policy', 'kept:policy']);
    expect(p.budget.unmet[0]).toMatchObject({
      bytes_short: 50,
      held: { not_writable: { items: 2, bytes: 200 } },
      removable: { items: 0, bytes: 0 },
    });
  });

  it("never takes what is live, protected, another user's, not owned, unmeasured or failed; all or nothing, naming the three largest it may not touch", () => {
    const r = rootOf(
      'a',
      [
        ses(9, { live: true, bytes: 500 }),
        ses(8, { protected: true, bytes: 400 }),
        ses(7, { owned: false, bytes: 300 }),
        ses(6, { bytes: undefined }),
        ses(5, { bytes: 50 }),
        ses(4, { bytes: 50 }),
      ],
      { maxBytes: 1000 },
    );
    const p = plan({ roots: [r], failed: new Set([itemKey(r.key, r.sessions[5]!.name)]) });
    // over by 300 with only 50 removable: nothing goes (were it not protected, the 400 would)
    expect(words(p, r)).toEqual([
      'kept:policy',
      'kept:protected<max_bytes',
      'kept:policy',
      'kept:policy',
      'kept:policy',
      'kept:policy',
    ]);
    expect(p.budget.unmet).toEqual([
      {
        store: r.key,
        label: r.label,
        reason: 'max_bytes',
        bytes_short: 300,
        held: {
          live_session: { items: 1, bytes: 500 },
          protected: { items: 1, bytes: 400 },
          foreign_owner: { items: 1, bytes: 300 },
          failed: { items: 1, bytes: 50 },
        },
        removable: { items: 1, bytes: 50 },
        removed: 0,
        largest: [
          { target: r.sessions[0]!.name, code: 'live_session', bytes: 500 },
          { target: r.sessions[1]!.name, code: 'protected', bytes: 400 },
          { target: r.sessions[2]!.name, code: 'foreign_owner', bytes: 300 },
        ],
      },
    ]);
    const s = storeOf(
      'shey',
      [ctx('c_bare', 9, { capsule: undefined, bytes: 500 }), ctx('c_live', 8, { live: true }), ctx('c_ok', 7)],
      { maxBytes: 150 },
    );
    const q = plan({ stores: [s] });
    expect(q.budget.unmet[0]!.held).toEqual({
      not_owned: { items: 1, bytes: 500 },
      live_context: { items: 1, bytes: 100 },
    });
  });

  it('the largest it may not touch: largest first, equal sizes by name, whatever the input order', () => {
    const live = [
      ses(6, { live: true, bytes: 300 }),
      ses(9, { live: true, bytes: 100 }),
      ses(7, { live: true, bytes: 200 }),
      ses(8, { live: true, bytes: 300 }),
    ];
    const want = [sid(8), sid(6), sid(7)];
    for (const sessions of [live, [...live].reverse()]) {
      const u = plan({ roots: [rootOf('a', sessions, { maxBytes: 100 })] }).budget.unmet[0]!;
      expect(u.largest.map((l) => l.target)).toEqual(want);
      expect(u.largest.map((l) => l.bytes)).toEqual([300, 300, 200]);
    }
  });

  it('the fewest oldest: in age order, none skipped, ties by name whatever the input order', () => {
    const a = [
      ses(3, { tag: 2, bytes: 10 }),
      ses(3, { tag: 1, bytes: 10 }),
      ses(2, { bytes: 500 }),
      ses(1, { bytes: 10 }),
    ];
    const r = rootOf('a', a, { maxBytes: 500 });
    expect(words(plan({ roots: [r] }), r)).toEqual([
      'removed:max_bytes',
      'removed:max_bytes',
      'removed:max_bytes',
      'kept:policy',
    ]);
    const rev = rootOf('a', [...a].reverse(), { maxBytes: 520 });
    // 530 in all: 10 over; the oldest by name goes (tag 1), nothing else
    expect(words(plan({ roots: [rev] }), rev)).toEqual([
      'kept:policy',
      'kept:policy',
      'removed:max_bytes',
      'kept:policy',
    ]);
  });

  it('child workdirs that stay count, and are named as what held the budget', () => {
    const r = rootOf('a', [ses(2)], {
      maxBytes: 150,
      fixed: [{ target: 'children/c-1', code: 'child_kept', bytes: 1000 }],
    });
    const p = plan({ roots: [r] });
    expect(words(p, r)).toEqual(['kept:policy']);
    expect(p.budget.unmet[0]).toMatchObject({
      bytes_short: 950,
      held: { child_kept: { items: 1, bytes: 1000 } },
      largest: [{ target: 'children/c-1', code: 'child_kept', bytes: 1000 }],
    });
  });

  it('a protected item a budget would have taken is kept saying so; one a budget would not take says nothing', () => {
    const r = rootOf('a', [ses(4, { protected: true }), ses(3), ses(2, { protected: true }), ses(1)], {
      maxBytes: 250,
    });
    const p = plan({ roots: [r] });
    expect(words(p, r)).toEqual(['kept:protected<max_bytes', 'removed:max_bytes', 'kept:policy', 'removed:max_bytes']);
    // with the undo window: it would have been held
    expect(words(plan({ roots: [r], quarantineMs: WEEK }), r)).toEqual([
      'kept:protected<max_bytes',
      'held:max_bytes',
      'kept:policy',
      'held:max_bytes',
    ]);
  });

  it('out of reach, nothing goes: only the protected item says a budget would have taken it, in a root and a store', () => {
    const r = rootOf('a', [ses(4, { protected: true }), ses(3), ses(2)], { maxBytes: 50 });
    const p = plan({ roots: [r] });
    expect(words(p, r)).toEqual(['kept:protected<max_bytes', 'kept:policy', 'kept:policy']);
    expect(p.budget.unmet[0]).toMatchObject({ bytes_short: 250, removable: { items: 2, bytes: 200 } });
    const s = storeOf('shey', [ctx('c_p', 4, { protected: true }), ctx('c_x', 3), ctx('c_y', 2)], { maxBytes: 50 });
    expect(words(plan({ stores: [s] }), s)).toEqual(['kept:protected<max_bytes', 'kept:policy', 'kept:policy']);
  });

  it('a protected item its policy condemns names the policy, and what else is in place still goes first to the budget', () => {
    // were nothing protected the oldest (condemned by max_age) would meet max_bytes: the other protected one says nothing
    const r = rootOf('a', [ses(40, { protected: true }), ses(3, { protected: true }), ses(2)], {
      retain: { maxAgeSecs: 30 * 86_400 },
      maxBytes: 250,
    });
    expect(words(plan({ roots: [r] }), r)).toEqual(['kept:protected<max_age', 'kept:policy', 'removed:max_bytes']);
    // a record nothing may take (not owned) is not taken either when protection is set aside
    const s = storeOf(
      'shey',
      [ctx('c_bare', 9, { capsule: undefined }), ctx('c_p', 5, { protected: true }), ctx('c_new', 1)],
      { maxBytes: 250 },
    );
    expect(words(plan({ stores: [s] }), s)).toEqual([
      'kept:not_owned',
      'kept:protected<max_bytes',
      'removed:max_bytes',
    ]);
  });
});

describe('keep_free', () => {
  it('takes the oldest in place across every store taking part, until no longer short; never holds it', () => {
    const a = rootOf('a', [ses(9), ses(2)], { keepFree: true });
    const s = storeOf('shey', [ctx('c_old', 5), ctx('c_new', 1)], { keepFree: true });
    const off = rootOf('off', [ses(20)], { retain: undefined, keepFree: false });
    const quiet = storeOf('quiet', [ctx('c_quiet', 20)], { keepFree: false });
    const p = plan({ roots: [a, off], stores: [s, quiet], keepFree: { short: 150, room: 0 }, quarantineMs: WEEK });
    expect(words(p, a)).toEqual(['removed:keep_free', 'kept:policy']);
    expect(words(p, s)).toEqual(['removed:keep_free', 'kept:policy']);
    expect(words(p, off)).toEqual(['kept:policy']);
    expect(words(p, quiet)).toEqual(['kept:policy']);
    expect(p.budget.keepFree).toEqual({
      short: 150,
      short_after: 0,
      room: 0,
      inodes_room: 0,
      inodes_short: 0,
      inodes_short_after: 0,
      freed_inodes: 0,
      purged: 0,
      removed: 2,
      freed: 200,
    });
    const taken = {
      max_bytes: null,
      bytes_before: 200,
      bytes_after: 100,
      removed: 1,
      bytes_freed: 100,
      held: 0,
      held_purged: 0,
    };
    expect(p.budget.stores).toEqual([
      { store: a.key, label: a.label, ...taken },
      { store: s.key, label: s.label, ...taken },
    ]);
  });

  it('holds go first, the window that ends first first; then what this sweep would hold; then the oldest in place', () => {
    const r = rootOf('a', [ses(40), ses(39), ses(2), ses(1)], { retain: { maxAgeSecs: 30 * 86_400 }, keepFree: true });
    const holds = [hold('/a/late', r.key, NOW + 2 * DAY), hold('/a/soon', r.key, NOW + DAY)];
    const p = plan({ roots: [r], holds, quarantineMs: WEEK, keepFree: { short: 350, room: 0 } });
    expect(p.holds.get('/a/soon')).toEqual({ fate: 'purged', rule: 'keep_free' });
    expect(p.holds.get('/a/late')).toEqual({ fate: 'purged', rule: 'keep_free' });
    expect(words(p, r)).toEqual([
      'removed:keep_free<max_age',
      'removed:keep_free<max_age',
      'kept:policy',
      'kept:policy',
    ]);
    expect(p.budget.keepFree).toMatchObject({ purged: 2, removed: 2, short_after: 0 });
    // a little less short: only the holds and one of this sweep's
    const less = plan({ roots: [r], holds, quarantineMs: WEEK, keepFree: { short: 250, room: 0 } });
    expect(words(less, r)).toEqual(['removed:keep_free<max_age', 'held:max_age', 'kept:policy', 'kept:policy']);
    // what max_age held and keep_free took for good is removed, not held, there
    expect(p.budget.stores[0]).toMatchObject({ removed: 2, bytes_freed: 200, held: 0, held_purged: 2 });
  });

  it('what this sweep would hold is taken first, and only that: a session or record it keeps is no such pick', () => {
    // 150 short: the held one frees 100, then the oldest kept one in place goes for the rest (were
    // a kept item counted among "what this sweep would hold", it would seem to free without going)
    const r = rootOf('a', [ses(40), ses(2), ses(1)], { retain: { maxAgeSecs: 30 * 86_400 }, keepFree: true });
    const p = plan({ roots: [r], quarantineMs: WEEK, keepFree: { short: 150, room: 0 } });
    expect(words(p, r)).toEqual(['removed:keep_free<max_age', 'removed:keep_free', 'kept:policy']);
    expect(p.budget.keepFree).toMatchObject({ removed: 2, freed: 200, short_after: 0 });
    const s = storeOf('shey', [ctx('c_old', 100), ctx('c_mid', 2), ctx('c_new', 1)], {
      policies: [{ capsule: 'shey', retain: { maxAgeSecs: 90 * 86_400 } }],
      keepFree: true,
    });
    const q = plan({ stores: [s], quarantineMs: WEEK, keepFree: { short: 150, room: 0 } });
    expect(words(q, s)).toEqual(['removed:keep_free<max_age', 'removed:keep_free', 'kept:policy']);
    expect(q.budget.keepFree).toMatchObject({ removed: 2, freed: 200, short_after: 0 });
  });

  it('what this sweep would hold is looked for in its own root or store, not in the first one', () => {
    const a = rootOf('a', [ses(1)], { keepFree: true });
    const b = rootOf('b', [ses(40), ses(2)], { retain: { maxAgeSecs: 30 * 86_400 }, keepFree: true });
    const p = plan({ roots: [a, b], quarantineMs: WEEK, keepFree: { short: 100, room: 0 } });
    expect(words(p, a)).toEqual(['kept:policy']);
    expect(words(p, b)).toEqual(['removed:keep_free<max_age', 'kept:policy']);
    const s0 = storeOf('s0', [ctx('c_new', 1)], { keepFree: true });
    const s1 = storeOf('s1', [ctx('c_old', 100), ctx('c_mid', 2)], {
      policies: [{ capsule: 'shey', retain: { maxAgeSecs: 90 * 86_400 } }],
      keepFree: true,
    });
    const q = plan({ stores: [s0, s1], quarantineMs: WEEK, keepFree: { short: 100, room: 0 } });
    expect(words(q, s0)).toEqual(['kept:policy']);
    expect(words(q, s1)).toEqual(['removed:keep_free<max_age', 'kept:policy']);
  });

  it('a reserve room out of reach is not wanted: what is short counts what the earlier rules freed', () => {
    // max_age frees 100 of the 150 short; the 10 000 of room cannot be found, so 50 is what is
    // wanted and the oldest kept session (100) meets it
    const r = rootOf('a', [ses(40), ses(2), ses(1)], { retain: { maxAgeSecs: 30 * 86_400 }, keepFree: true });
    const p = plan({ roots: [r], keepFree: { short: 150, room: 10_000 } });
    expect(words(p, r)).toEqual(['removed:max_age', 'removed:keep_free', 'kept:policy']);
    expect(p.budget.keepFree).toMatchObject({ short: 50, short_after: 0, removed: 1 });
    expect(p.budget.unmet).toEqual([]);
  });

  it('counts what the policies and max_bytes free for good (not what they hold), and what expired holds free', () => {
    const r = rootOf('a', [ses(40), ses(2), ses(1)], { retain: { maxAgeSecs: 30 * 86_400 }, keepFree: true });
    expect(words(plan({ roots: [r], keepFree: { short: 100, room: 0 } }), r)).toEqual([
      'removed:max_age',
      'kept:policy',
      'kept:policy',
    ]);
    expect(words(plan({ roots: [r], keepFree: { short: 101, room: 0 } }), r)).toEqual([
      'removed:max_age',
      'removed:keep_free',
      'kept:policy',
    ]);
    // held by the window it frees nothing: keep_free takes it for good instead
    expect(words(plan({ roots: [r], quarantineMs: WEEK, keepFree: { short: 100, room: 0 } }), r)).toEqual([
      'removed:keep_free<max_age',
      'kept:policy',
      'kept:policy',
    ]);
    const expired = plan({
      roots: [r],
      quarantineMs: WEEK,
      holds: [hold('/a/gone', r.key, NOW - 1)],
      keepFree: { short: 100, room: 0 },
    });
    expect(words(expired, r)).toEqual(['held:max_age', 'kept:policy', 'kept:policy']);
    const mb = { ...r, retain: undefined, maxBytes: 250 };
    expect(words(plan({ roots: [mb], keepFree: { short: 100, room: 0 } }), mb)).toEqual([
      'removed:max_bytes',
      'kept:policy',
      'kept:policy',
    ]);
    const taken = plan({ roots: [mb], quarantineMs: WEEK, keepFree: { short: 100, room: 0 } });
    expect(words(taken, mb)).toEqual(['removed:keep_free<max_bytes', 'kept:policy', 'kept:policy']);
    // max_bytes held it, keep_free took it for good: no longer held
    expect(taken.budget.stores[0]).toMatchObject({ held: 0, removed: 1, bytes_freed: 100 });
    const two = plan({ roots: [{ ...mb, maxBytes: 150 }], quarantineMs: WEEK, keepFree: { short: 100, room: 0 } });
    expect(words(two, mb)).toEqual(['removed:keep_free<max_bytes', 'held:max_bytes', 'kept:policy']);
    expect(two.budget.stores[0]).toMatchObject({ held: 1, removed: 1 });
  });

  it("inodes freed count alike: a policy's removal, max_bytes's, an expired hold's", () => {
    const r = rootOf(
      'a',
      [ses(40, { inodes: 10 }), ses(3, { inodes: 10 }), ses(2, { inodes: 10 }), ses(1, { inodes: 10 })],
      { retain: { maxAgeSecs: 30 * 86_400 }, maxBytes: 200, keepFree: true },
    );
    const holds = [hold('/a/gone', r.key, NOW - 1, { inodes: 10 })];
    const p = plan({ roots: [r], holds, keepFree: { short: 0, room: 0, inodesShort: 30 } });
    expect(words(p, r)).toEqual(['removed:max_age', 'removed:max_bytes', 'kept:policy', 'kept:policy']);
    expect(p.budget.keepFree).toMatchObject({ inodes_short: 0, inodes_short_after: 0, freed_inodes: 30, removed: 0 });
    // one more inode short: keep_free takes the oldest left
    expect(words(plan({ roots: [r], holds, keepFree: { short: 0, room: 0, inodesShort: 31 } }), r)).toEqual([
      'removed:max_age',
      'removed:max_bytes',
      'removed:keep_free',
      'kept:policy',
    ]);
  });

  it('counts what the policies free in every store taking part, records included', () => {
    const a = rootOf('a', [ses(9, { inodes: 5 })], { keepFree: true });
    const b = rootOf('b', [ses(40, { inodes: 10 }), ses(8, { inodes: 5 })], {
      retain: { maxAgeSecs: 30 * 86_400 },
      keepFree: true,
    });
    const s0 = storeOf('s0', [ctx('c_0', 7, { inodes: 5 })], { keepFree: true });
    const s1 = storeOf('s1', [ctx('c_old', 100, { inodes: 10 }), ctx('c_1', 6, { inodes: 5 })], {
      policies: [{ capsule: 'shey', retain: { maxAgeSecs: 90 * 86_400 } }],
      keepFree: true,
    });
    // b's and s1's removals free 200 bytes and 20 inodes: nothing more goes
    const p = plan({ roots: [a, b], stores: [s0, s1], keepFree: { short: 200, room: 0, inodesShort: 20 } });
    expect([...words(p, a), ...words(p, b), ...words(p, s0), ...words(p, s1)]).toEqual([
      'kept:policy',
      'removed:max_age',
      'kept:policy',
      'kept:policy',
      'removed:max_age',
      'kept:policy',
    ]);
    expect(p.budget.keepFree).toMatchObject({ short: 0, inodes_short: 0, freed: 200, freed_inodes: 20, removed: 0 });
    // the reserve's inodes on top: only they are wanted, the oldest in place gives them
    const room = plan({
      roots: [a, b],
      stores: [s0, s1],
      keepFree: { short: 200, room: 0, inodesShort: 20, inodesRoom: 5 },
    });
    expect(words(room, a)).toEqual(['removed:keep_free']);
    expect(room.budget.keepFree).toMatchObject({ inodes_short: 5, inodes_room: 5, freed_inodes: 25, removed: 1 });
  });

  it('what a store not taking part frees, or holds, is not counted nor taken (it is on another filesystem)', () => {
    const far = rootOf('far', [ses(40), ses(3), ses(2)], {
      retain: { maxAgeSecs: 30 * 86_400 },
      maxBytes: 100,
      keepFree: false,
    });
    const a = rootOf('a', [ses(9), ses(8)], { keepFree: true });
    const p = plan({ roots: [far, a], keepFree: { short: 150, room: 0 } });
    expect(words(p, far)).toEqual(['removed:max_age', 'removed:max_bytes', 'kept:policy']);
    expect(words(p, a)).toEqual(['removed:keep_free', 'removed:keep_free']);
    expect(p.budget.keepFree).toMatchObject({ short: 150, freed: 200, removed: 2 });
    const held = plan({ roots: [far, a], quarantineMs: WEEK, keepFree: { short: 150, room: 0 } });
    expect(words(held, far)).toEqual(['held:max_age', 'held:max_bytes', 'kept:policy']);
    expect(words(held, a)).toEqual(['removed:keep_free', 'removed:keep_free']);
  });

  it('an expired hold counts as freed, and is not purged again', () => {
    const r = rootOf('a', [ses(9)], { keepFree: true });
    const p = plan({ roots: [r], holds: [hold('/a/gone', r.key, NOW - 1)], keepFree: { short: 150, room: 0 } });
    expect(p.holds.get('/a/gone')).toEqual({ fate: 'purged', rule: 'expired' });
    expect(words(p, r)).toEqual(['removed:keep_free']);
    expect(p.budget.keepFree).toMatchObject({ short: 50, purged: 0, removed: 1, freed: 200 });
  });

  it('equal windows go by name, then by store order, whatever the order the holds are listed in', () => {
    const s0 = storeOf('s0', [], { keepFree: true });
    const s1 = storeOf('s1', [], { keepFree: true });
    const purged = { fate: 'purged', rule: 'keep_free' };
    const held = { fate: 'held', untilMs: NOW + DAY };
    // one context name, held from two stores until the same time: the first store's goes
    const same = [
      hold('/q/1', s1.key, NOW + DAY, { target: 'c_same' }),
      hold('/q/0', s0.key, NOW + DAY, { target: 'c_same' }),
    ];
    for (const holds of [same, [...same].reverse()]) {
      const p = plan({ stores: [s0, s1], holds, keepFree: { short: 100, room: 0 } });
      expect([p.holds.get('/q/0'), p.holds.get('/q/1')]).toEqual([purged, held]);
    }
    // by name before the store's order
    const named = [
      hold('/q/b', s0.key, NOW + DAY, { target: 'c_b' }),
      hold('/q/a', s1.key, NOW + DAY, { target: 'c_a' }),
    ];
    for (const holds of [named, [...named].reverse()]) {
      const p = plan({ stores: [s0, s1], holds, keepFree: { short: 100, room: 0 } });
      expect([p.holds.get('/q/a'), p.holds.get('/q/b')]).toEqual([purged, held]);
    }
  });

  it("a truncation's held lines count as a hold of this sweep: not holding them frees what the truncation drops", () => {
    const s = storeOf(
      'shey',
      [ctx('c_long', 5, { messages: 50, bytes: 1000, bytesAfterTruncation: 200 }), ctx('c_new', 1)],
      { policies: [{ capsule: 'shey', retain: { maxMessages: 10 } }], keepFree: true },
    );
    const p = plan({ stores: [s], quarantineMs: WEEK, keepFree: { short: 700, room: 0 } });
    expect(words(p, s)).toEqual(['truncated:10', 'kept:policy']);
    expect(p.budget.keepFree).toMatchObject({ purged: 1, removed: 0, short_after: 0 });
    expect(words(plan({ stores: [s], keepFree: { short: 700, room: 0 } }), s)).toEqual(['truncated:10', 'kept:policy']);
    expect(plan({ stores: [s], keepFree: { short: 700, room: 0 } }).budget.keepFree).toMatchObject({
      short: 0,
      freed: 800,
    });
    // not held, they are freed already: what is still short comes from the oldest in place (the record, whole)
    const more = plan({ stores: [s], keepFree: { short: 900, room: 0 } });
    expect(words(more, s)).toEqual(['removed:keep_free', 'kept:policy']);
    expect(more.budget.keepFree).toMatchObject({ short: 100, purged: 0, removed: 1, freed: 1000 });
    // held, but with no size predicted for what it leaves: not holding them frees nothing known, so it is no hold to take
    const unknown = storeOf('shey', [ctx('c_long', 5, { messages: 50, bytes: 1000 }), ctx('c_new', 1)], {
      policies: [{ capsule: 'shey', retain: { maxMessages: 10 } }],
      keepFree: true,
    });
    const u = plan({ stores: [unknown], quarantineMs: WEEK, keepFree: { short: 100, room: 0 } });
    expect(words(u, unknown)).toEqual(['removed:keep_free', 'kept:policy']);
    expect(u.budget.keepFree).toMatchObject({ purged: 0, removed: 1 });
  });

  it('all or nothing: out of reach takes nothing and is unmet; exactly what is short is in reach', () => {
    const r = rootOf('a', [ses(3), ses(2, { live: true })], { keepFree: true });
    const p = plan({ roots: [r], keepFree: { short: 101, room: 0 } });
    expect(words(p, r)).toEqual(['kept:policy', 'kept:policy']);
    expect(p.budget.unmet).toEqual([
      {
        store: undefined,
        label: 'keep_free',
        reason: 'keep_free',
        bytes_short: 101,
        held: { live_session: { items: 1, bytes: 100 } },
        removable: { items: 1, bytes: 100 },
        removed: 0,
        largest: [{ target: sid(2), code: 'live_session', bytes: 100 }],
      },
    ]);
    expect(p.budget.keepFree).toMatchObject({ short: 101, short_after: 101 });
    expect(words(plan({ roots: [r], keepFree: { short: 100, room: 0 } }), r)).toEqual([
      'removed:keep_free',
      'kept:policy',
    ]);
  });

  it('no shortfall takes nothing (a negative one is none); freeing more than is short leaves 0', () => {
    const r = rootOf('a', [ses(3, { bytes: 1000 })], { keepFree: true });
    expect(plan({ roots: [r], keepFree: { short: -500, room: 0 } }).budget.keepFree).toEqual({
      short: 0,
      short_after: 0,
      room: 0,
      inodes_room: 0,
      inodes_short: 0,
      inodes_short_after: 0,
      freed_inodes: 0,
      purged: 0,
      removed: 0,
      freed: 0,
    });
    expect(plan({ roots: [r], keepFree: { short: 1, room: 0 } }).budget.keepFree).toMatchObject({
      short: 1,
      short_after: 0,
      freed: 1000,
    });
  });

  it("the reserve's room is wanted on top while what may go can provide it, else keep_free alone", () => {
    const r = rootOf('a', [ses(3), ses(2)], { keepFree: true });
    expect(plan({ roots: [r], keepFree: { short: 50, room: 100 } }).budget.keepFree).toMatchObject({
      short: 150,
      room: 100,
      removed: 2,
    });
    expect(plan({ roots: [r], keepFree: { short: 150, room: 100 } }).budget.keepFree).toMatchObject({
      short: 150,
      room: 0,
      removed: 2,
    });
    // exactly in reach with the room
    expect(plan({ roots: [r], keepFree: { short: 100, room: 100 } }).budget.keepFree).toMatchObject({
      short: 200,
      room: 100,
      removed: 2,
    });
    // plenty free but the reserve missing: room alone, only as far as it is missing
    expect(plan({ roots: [r], keepFree: { short: -60, room: 100 } }).budget.keepFree).toMatchObject({
      short: 40,
      room: 40,
      removed: 1,
    });
    expect(plan({ roots: [r], keepFree: { short: -100, room: 100 } }).budget.keepFree).toMatchObject({
      short: 0,
      room: 0,
      removed: 0,
    });
  });

  it("takes at most its per-sweep share of each store's items (at least one), whatever the store's size; out of reach within it, nothing", () => {
    const small = rootOf('small', [ses(9), ses(8), ses(7), ses(6, { live: true })], { keepFree: true });
    const big = rootOf(
      'big',
      Array.from({ length: 10 }, (_, i) => ses(5 - i * 0.1)),
      { keepFree: true },
    );
    // half of four is two: the two oldest of the small root, then the big root's oldest
    const p = plan({ roots: [small, big], keepFree: { short: 350, room: 0, perSweep: 0.5 } });
    expect(words(p, small)).toEqual(['removed:keep_free', 'removed:keep_free', 'kept:policy', 'kept:policy']);
    expect(words(p, big).filter((w) => w === 'removed:keep_free')).toHaveLength(2);
    // a store of one item still gives it, one a sweep
    const one = rootOf('one', [ses(9)], { keepFree: true });
    expect(words(plan({ roots: [one], keepFree: { short: 50, room: 0, perSweep: 0.1 } }), one)).toEqual([
      'removed:keep_free',
    ]);
    // more than the shares can give this sweep: nothing goes, unmet
    const q = plan({ roots: [small], keepFree: { short: 250, room: 0, perSweep: 0.5 } });
    expect(words(q, small)).toEqual(['kept:policy', 'kept:policy', 'kept:policy', 'kept:policy']);
    expect(q.budget.unmet).toEqual([
      expect.objectContaining({
        reason: 'keep_free',
        bytes_short: 250,
        removable: { items: 2, bytes: 200 },
        beyond_per_sweep: { items: 1, bytes: 100 },
      }),
    ]);
  });

  it('counts inodes too: short of inodes, it takes until both are met; out of reach in either, nothing', () => {
    const r = rootOf('a', [ses(9, { inodes: 10 }), ses(8, { inodes: 1000 }), ses(7, { inodes: 10 })], {
      keepFree: true,
    });
    // bytes met, inodes short by 500: the oldest two go (10 + 1000 inodes)
    const p = plan({ roots: [r], keepFree: { short: -1e9, room: 0, inodesShort: 500 } });
    expect(words(p, r)).toEqual(['removed:keep_free', 'removed:keep_free', 'kept:policy']);
    expect(p.budget.keepFree).toMatchObject({
      short: 0,
      inodes_short: 500,
      inodes_short_after: 0,
      freed_inodes: 1010,
      removed: 2,
    });
    // short of both: taken until both are met
    expect(words(plan({ roots: [r], keepFree: { short: 250, room: 0, inodesShort: 5 } }), r)).toEqual([
      'removed:keep_free',
      'removed:keep_free',
      'removed:keep_free',
    ]);
    const far = plan({ roots: [r], keepFree: { short: 0, room: 0, inodesShort: 5000 } });
    expect(words(far, r)).toEqual(['kept:policy', 'kept:policy', 'kept:policy']);
    expect(far.budget.unmet).toEqual([expect.objectContaining({ reason: 'keep_free', inodes_short: 5000 })]);
    // the reserve's inodes are wanted on top while what may go can give them
    expect(
      plan({ roots: [r], keepFree: { short: -1e9, room: 0, inodesShort: -100, inodesRoom: 120 } }).budget.keepFree,
    ).toMatchObject({ inodes_short: 20, removed: 2 });
    expect(
      plan({ roots: [r], keepFree: { short: -1e9, room: 0, inodesShort: 5, inodesRoom: 10 } }).budget.keepFree,
    ).toMatchObject({ inodes_short: 15, inodes_room: 10, removed: 2 });
    // and not while they cannot: keep_free alone, met
    const few = rootOf('b', [ses(9, { inodes: 5 }), ses(8, { inodes: 5 })], { keepFree: true });
    const q = plan({ roots: [few], keepFree: { short: -1e9, room: 0, inodesShort: -100, inodesRoom: 120 } });
    expect(q.budget.keepFree).toMatchObject({ inodes_short: 0, inodes_room: 0, removed: 0 });
    expect(q.budget.unmet).toEqual([]);
  });

  it('without a reading of the free space (no keep_free input) it plans nothing; with no max_bytes, nothing is budgeted', () => {
    const r = rootOf('a', [ses(3)], { keepFree: true });
    const s = storeOf('shey', [ctx('c_1', 3)], { keepFree: true });
    const p = plan({ roots: [r], stores: [s] });
    expect([...words(p, r), ...words(p, s)]).toEqual(['kept:policy', 'kept:policy']);
    expect(p.budget).toEqual({ stores: [], keepFree: undefined, unmet: [] });
  });

  it('only the stores taking part and the holds it may count', () => {
    const r = rootOf('a', [ses(3), ses(2, { live: true })], { keepFree: false, maxBytes: 10_000 });
    const p = plan({
      roots: [r],
      holds: [hold('/x/h', 'quarantine', NOW + DAY, { keepFree: false })],
      keepFree: { short: 50, room: 0 },
    });
    expect(words(p, r)).toEqual(['kept:policy', 'kept:policy']);
    expect(p.holds.get('/x/h')).toEqual({ fate: 'held', untilMs: NOW + DAY });
    // nothing taking part, nothing named
    expect(p.budget.unmet).toEqual([
      {
        store: undefined,
        label: 'keep_free',
        reason: 'keep_free',
        bytes_short: 50,
        held: {},
        removable: { items: 0, bytes: 0 },
        removed: 0,
        largest: [],
      },
    ]);
  });
});

describe('the blast-radius guard', () => {
  const unattended = { unattended: true, confirmLarge: false };

  it('counts what every rule together takes of a store; a store it stops loses nothing, truncations included', () => {
    const ids = Array.from({ length: 40 }, (_, i) => ses(i < 15 ? 60 + i : 40 - i, { bytes: 100 }));
    const r = rootOf('a', ids, { retain: { maxAgeSecs: 30 * 86_400 }, maxBytes: 1500 });
    const p = plan({ roots: [r], guard: unattended });
    expect(new Set(words(p, r))).toEqual(new Set(['kept:blast_radius<max_age', 'kept:policy']));
    expect(p.stops).toEqual([
      expect.objectContaining({
        store: r.key,
        kind: 'sessions',
        present: 40,
        limit: expect.stringMatching(/at most half/) as unknown,
      }),
    ]);
    expect(p.stops[0]!.going).toHaveLength(25);
    expect(p.budget.unmet).toEqual([
      expect.objectContaining({ store: r.key, held: { blast_radius: { items: 40, bytes: 4000 } } }),
    ]);
    // what the undo window would hold counts the same
    const held = plan({ roots: [r], guard: unattended, quarantineMs: WEEK });
    expect(held.stops.map((x) => [x.store, x.going.length])).toEqual([[r.key, 25]]);
    const s = storeOf(
      'shey',
      Array.from({ length: 30 }, (_, i) => ctx(`c${String(i).padStart(2, '0')}`, 100 + i, { messages: 50 })),
      { policies: [{ capsule: 'shey', retain: { maxAgeSecs: 90 * 86_400 } }] },
    );
    const q = plan({ stores: [s], guard: unattended });
    expect(new Set(words(q, s))).toEqual(new Set(['kept:blast_radius<max_age']));
    const t = storeOf('shey', [...s.contexts.slice(0, 25), ctx('c_long', 1, { messages: 50 })], {
      policies: [{ capsule: 'shey', retain: { maxAgeSecs: 90 * 86_400, maxMessages: 10 } }],
    });
    expect(words(plan({ stores: [t], guard: unattended }), t).at(-1)).toBe('kept:blast_radius<max_messages');
  });

  it('keep_free turns to the other stores once one is stopped; --confirm-large and an unstopped plan take all', () => {
    const big = rootOf(
      'big',
      Array.from({ length: 30 }, (_, i) => ses(30 - i)),
      { keepFree: true },
    );
    const other = rootOf('other', [ses(100), ses(99)], { keepFree: true });
    const p = plan({ roots: [big, other], guard: unattended, keepFree: { short: 2500, room: 0 } });
    // big loses nothing; other cannot meet it alone: nothing goes there either (all or nothing)
    expect(p.stops.map((s) => s.store)).toEqual([big.key]);
    expect(new Set(words(p, big))).toEqual(new Set(['kept:policy']));
    expect(words(p, other)).toEqual(['kept:policy', 'kept:policy']);
    const small = plan({ roots: [big, other], guard: unattended, keepFree: { short: 150, room: 0 } });
    expect(small.stops).toEqual([]);
    expect(words(small, other)).toEqual(['removed:keep_free', 'removed:keep_free']);
    const confirmed = plan({
      roots: [big, other],
      guard: { unattended: true, confirmLarge: true },
      keepFree: { short: 2500, room: 0 },
    });
    expect(confirmed.stops).toEqual([]);
    expect(words(confirmed, big).filter((w) => w === 'removed:keep_free')).toHaveLength(23);
  });

  it('a store stopped earlier this sweep stays stopped; max_delete applies by hand too', () => {
    const r = rootOf('a', [ses(40), ses(39)], { retain: { maxAgeSecs: 30 * 86_400 } });
    expect(words(plan({ roots: [r], stopped: new Set([r.key]) }), r)).toEqual([
      'kept:blast_radius<max_age',
      'kept:blast_radius<max_age',
    ]);
    const p = plan({ roots: [r], guard: { maxDelete: { count: 1 }, unattended: false, confirmLarge: false } });
    expect(p.stops).toEqual([
      { store: r.key, kind: 'sessions', present: 2, going: [sid(40), sid(39)], limit: 'max_delete.count is 1' },
    ]);
  });
});

describe('planned again when an act did not happen', () => {
  it('a failed removal stays; the budget takes the next oldest instead', () => {
    const r = rootOf('a', [ses(4), ses(3), ses(2), ses(1)], { maxBytes: 350 });
    expect(words(plan({ roots: [r] }), r)).toEqual(['removed:max_bytes', 'kept:policy', 'kept:policy', 'kept:policy']);
    const again = plan({ roots: [r], failed: new Set([itemKey(r.key, sid(4))]) });
    expect(words(again, r)).toEqual(['kept:policy', 'removed:max_bytes', 'kept:policy', 'kept:policy']);
    const aged = rootOf('b', [ses(40), ses(2)], { retain: { maxAgeSecs: 30 * 86_400 } });
    expect(words(plan({ roots: [aged], failed: new Set([itemKey(aged.key, sid(40))]) }), aged)).toEqual([
      'kept:failed<max_age',
      'kept:policy',
    ]);
  });

  it('a hold keep_free failed to purge stays held; the next one goes instead', () => {
    const r = rootOf('a', [ses(9)], { keepFree: true });
    const holds = [hold('/a/first', r.key, NOW + DAY), hold('/a/next', r.key, NOW + 2 * DAY)];
    const p = plan({ roots: [r], holds, keepFree: { short: 100, room: 0 }, failed: new Set(['/a/first']) });
    expect(p.holds.get('/a/first')).toEqual({ fate: 'held', untilMs: NOW + DAY });
    expect(p.holds.get('/a/next')).toEqual({ fate: 'purged', rule: 'keep_free' });
    expect(words(p, r)).toEqual(['kept:policy']);
  });
});

describe('a root given packed (what a sweep gives the planner)', () => {
  /** The same sessions, packed column by column. */
  function packed(list: SessionIn[]): PackedSessions {
    const flags = Uint8Array.from(
      list,
      (s) =>
        (s.live ? PackedSessions.LIVE : 0) |
        (s.owned ? PackedSessions.OWNED : 0) |
        (s.protected ? PackedSessions.PROTECTED : 0),
    );
    const sizes = Float64Array.from(list.flatMap((s) => [s.bytes ?? Number.NaN, s.inodes ?? Number.NaN]));
    return new PackedSessions(
      list.map((s) => s.name),
      flags,
      sizes,
    );
  }

  it('gets the fates, budgets and stops the same sessions get as a list', () => {
    const list = [
      ses(50),
      ses(40, { live: true }),
      ses(35, { protected: true, bytes: 400 }),
      ses(31, { owned: false }),
      ses(9, { bytes: undefined }),
      ses(8, { inodes: 3 }),
      ses(7),
      ses(3),
      ses(2),
      ses(1),
    ];
    const o = { retain: { maxSessions: 8, maxAgeSecs: 30 * 86_400 }, maxBytes: 500, keepFree: true };
    const inputs = (sessions: SessionIn[] | PackedSessions): Partial<FateInput> => ({
      roots: [{ ...rootOf('a', []), ...o, sessions }],
      keepFree: { short: 150, room: 0, inodesShort: 1 },
      quarantineMs: WEEK,
    });
    const asList = plan(inputs(list));
    expect(plan(inputs(packed(list)))).toEqual(asList);
    expect(asList.items.size).toBeGreaterThan(4);
    const guarded = (sessions: SessionIn[] | PackedSessions) =>
      plan({ ...inputs(sessions), guard: { maxDelete: { count: 1 }, unattended: false, confirmLarge: false } });
    expect(guarded(packed(list))).toEqual(guarded(list));
    expect(guarded(list).stops).toHaveLength(1);
    expect([...packed(list)]).toEqual(list);
  });

  it('a session no budget measured has no bytes or inodes; without sizes, none has', () => {
    const names = [sid(2), sid(1)];
    const p = new PackedSessions(
      names,
      Uint8Array.of(PackedSessions.OWNED, PackedSessions.LIVE | PackedSessions.PROTECTED),
    );
    expect([...p]).toEqual([
      { name: names[0], live: false, owned: true, protected: false },
      { name: names[1], live: true, owned: false, protected: true },
    ]);
    expect(p.length).toBe(2);
  });
});
