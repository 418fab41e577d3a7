import { describe, expect, it } from 'vitest';
import { BudgetLedger, dropUnreachableRoom, planBudgets, recordStoreBudgets, sessionsRootBudget, withReserveRoom, type BudgetItem, type BudgetStore } from '../../src/plan/budget.js';

const S: BudgetStore = { key: 'sessions:/r', label: '/r', maxBytes: 100, keepFree: true };
const R: BudgetStore = { key: 'records:shey', label: 'shey', maxBytes: undefined, keepFree: true };

const item = (store: string, target: string, ageMs: number, bytes: number, held?: string): BudgetItem => ({ store, target, ageMs, bytes, held });

describe('max_bytes', () => {
  it('removes the oldest removable items until the store is at or under its budget', () => {
    const items = [item(S.key, 'c', 3, 40), item(S.key, 'a', 1, 40), item(S.key, 'b', 2, 40), item(S.key, 'd', 4, 40)];
    const { remove, unmet } = planBudgets([S], items, 0);
    // 160 bytes, budget 100: a (160→120) and b (→80) go, c and d stay.
    expect(remove.map((c) => [c.item.target, c.reason])).toEqual([['a', 'max_bytes'], ['b', 'max_bytes']]);
    expect(unmet).toEqual([]);
  });

  it('a store at its budget loses nothing; no budget and no keep_free loses nothing', () => {
    expect(planBudgets([S], [item(S.key, 'a', 1, 60), item(S.key, 'b', 2, 40)], 0).remove).toEqual([]);
    expect(planBudgets([R], [item(R.key, 'a', 1, 1e9)], 0).remove).toEqual([]);
  });

  it('live and foreign items are never chosen; they are reported as what held the budget', () => {
    const items = [item(S.key, 'old-live', 1, 60, 'live_session'), item(S.key, 'mid', 2, 30), item(S.key, 'new-foreign', 3, 20, 'foreign_owner')];
    const { remove, unmet } = planBudgets([S], items, 0);
    expect(remove.map((c) => c.item.target)).toEqual(['mid']);
    expect(unmet).toEqual([]);
  });

  it('all or nothing: when every removable item together cannot bring the store under, none is removed and the largest it may not touch are named', () => {
    const items = [item(S.key, 'old-live', 1, 90, 'live_session'), item(S.key, 'mid', 2, 30), item(S.key, 'new-foreign', 3, 50, 'foreign_owner')];
    const { remove, unmet } = planBudgets([S], items, 0);
    expect(remove).toEqual([]);
    expect(unmet).toEqual([
      {
        store: S.key,
        label: '/r',
        reason: 'max_bytes',
        bytes_short: 70,
        held: { live_session: { items: 1, bytes: 90 }, foreign_owner: { items: 1, bytes: 50 } },
        removable: { items: 1, bytes: 30 },
        removed: 0,
        largest: [
          { target: 'old-live', code: 'live_session', bytes: 90 },
          { target: 'new-foreign', code: 'foreign_owner', bytes: 50 },
        ],
      },
    ]);
  });

  it('a live session grown to 5 MB under a 1M budget: none of the 15 finished sessions goes', () => {
    const M = 1 << 20;
    const items = [item(S.key, 'live', 0, 5 * M, 'live_session'), ...Array.from({ length: 15 }, (_, i) => item(S.key, `done-${i}`, i + 1, 20_000))];
    const { remove, unmet } = planBudgets([{ ...S, maxBytes: M }], items, 0);
    expect(remove).toEqual([]);
    expect(unmet[0]).toMatchObject({ bytes_short: 4 * M + 15 * 20_000, removable: { items: 15, bytes: 300_000 }, largest: [{ target: 'live', code: 'live_session', bytes: 5 * M }] });
  });

  it('at most three of the largest untouchable items are named, largest first', () => {
    const items = [1, 5, 3, 4, 2].map((b) => item(S.key, `held-${b}`, b, b * 100, 'live_session'));
    expect(planBudgets([S], items, 0).unmet[0]?.largest.map((l) => l.target)).toEqual(['held-5', 'held-4', 'held-3']);
  });

  it('the fewest oldest: the oldest go in order, none skipped, until the budget is met', () => {
    // 130 bytes, budget 100, 30 over: a and b (20) are not enough, c makes it; d stays. (c alone
    // would be fewer items, but it is not the oldest: the age order is never skipped.)
    const items = [item(S.key, 'a', 1, 10), item(S.key, 'b', 2, 10), item(S.key, 'c', 3, 100), item(S.key, 'd', 4, 10)];
    expect(planBudgets([S], items, 0).remove.map((c) => c.item.target)).toEqual(['a', 'b', 'c']);
  });

  it('what the quarantine holds for the store counts towards what is reachable', () => {
    const held = { ...item(S.key, 'held', 9_000, 50), quarantined: true };
    const items = [item(S.key, 'live', 1, 100, 'live_session'), item(S.key, 'done', 2, 30), held];
    // 180 bytes, 80 over: done (30) alone cannot, with the held item (50) it can.
    expect(planBudgets([S], items, 0).remove.map((c) => c.item.target)).toEqual(['held', 'done']);
    // the same held item of another user (not purgeable): done alone cannot reach, so it stays
    expect(planBudgets([S], [...items.slice(0, 2), { ...held, held: 'foreign_owner' }], 0).remove).toEqual([]);
  });

  it('ties in age go by name; the oldest goes first whatever the input order', () => {
    const items = [item(S.key, 'b', 5, 100), item(S.key, 'a', 5, 100)];
    expect(planBudgets([S], items, 0).remove.map((c) => c.item.target)).toEqual(['a']);
  });
});

describe('keep_free', () => {
  it('removes the oldest removable item across every store taking part until the shortfall is covered', () => {
    const T: BudgetStore = { key: 'sessions:/other-fs', label: '/other-fs', maxBytes: undefined, keepFree: false };
    const items = [item(R.key, 'r1', 10, 30), item(S.key, 's1', 20, 30), item(R.key, 'r2', 30, 30), item(T.key, 't0', 0, 500)];
    const { remove, unmet } = planBudgets([{ ...S, maxBytes: undefined }, R, T], items, 50);
    // t0 is oldest but on another filesystem: freeing it does not help the home's.
    expect(remove.map((c) => [c.item.target, c.reason])).toEqual([['r1', 'keep_free'], ['s1', 'keep_free']]);
    expect(unmet).toEqual([]);
  });

  it('bytes freed on another filesystem do not count towards keep_free', () => {
    const T: BudgetStore = { key: 'sessions:/other-fs', label: '/other-fs', maxBytes: 50, keepFree: false };
    const items = [item(T.key, 't-old', 1, 100), item(R.key, 'r1', 2, 30), item(R.key, 'r2', 3, 40)];
    // t-old goes for T's max_bytes (frees 100, elsewhere); keep_free is still 60 short: r1 and r2 go.
    const ledger = new BudgetLedger([T, R], items, 60);
    const seen: [string, string][] = [];
    for (let c = ledger.next(); c; c = ledger.next()) {
      seen.push([c.item.target, c.reason]);
      ledger.settle(c, c.item.bytes);
      if (c.item.target === 't-old') expect(ledger.keepFreeShortBytes).toBe(60);
    }
    expect(seen).toEqual([['t-old', 'max_bytes'], ['r1', 'keep_free'], ['r2', 'keep_free']]);
    expect(ledger.keepFreeShortBytes).toBe(0);
  });

  it('max_bytes acts first and what it frees counts towards keep_free', () => {
    const items = [item(S.key, 's-old', 5, 80), item(R.key, 'r-older', 1, 50), item(S.key, 's-new', 9, 80)];
    const { remove } = planBudgets([S, R], items, 60);
    // sessions over by 60: s-old goes for max_bytes (frees 80 >= 60 short): keep_free met too.
    expect(remove.map((c) => [c.item.target, c.reason])).toEqual([['s-old', 'max_bytes']]);
  });

  it('all or nothing: when every removable item together cannot free enough, none is removed', () => {
    const items = [item(R.key, 'live', 1, 10, 'live_context'), item(R.key, 'mine', 2, 10), item(R.key, 'theirs', 3, 10, 'not_owned')];
    const { remove, unmet } = planBudgets([R], items, 100);
    expect(remove).toEqual([]);
    expect(unmet).toEqual([
      {
        store: undefined,
        label: 'keep_free',
        reason: 'keep_free',
        bytes_short: 100,
        held: { live_context: { items: 1, bytes: 10 }, not_owned: { items: 1, bytes: 10 } },
        removable: { items: 1, bytes: 10 },
        removed: 0,
        largest: [
          { target: 'live', code: 'live_context', bytes: 10 },
          { target: 'theirs', code: 'not_owned', bytes: 10 },
        ],
      },
    ]);
  });

  it('a max_bytes out of reach removes nothing for itself; keep_free may still take from that store', () => {
    const items = [item(S.key, 'live', 1, 500, 'live_session'), item(S.key, 's-old', 2, 40), item(R.key, 'r', 3, 40)];
    const { remove, unmet } = planBudgets([S, R], items, 30);
    expect(remove.map((c) => [c.item.target, c.reason])).toEqual([['s-old', 'keep_free']]);
    // (s-old went for keep_free: the store is 400 over after it)
    expect(unmet.map((u) => [u.reason, u.bytes_short, u.removed])).toEqual([['max_bytes', 400, 0]]);
  });
});

describe('ledger', () => {
  it('a removal that did not happen frees nothing: the next oldest is chosen instead', () => {
    const ledger = new BudgetLedger([S], [item(S.key, 'a', 1, 60), item(S.key, 'b', 2, 60), item(S.key, 'c', 3, 60)], 0);
    const first = ledger.next();
    expect(first?.item.target).toBe('a');
    ledger.settle(first!, undefined); // e.g. written since the scan: kept
    const second = ledger.next();
    expect(second?.item.target).toBe('b');
    ledger.settle(second!, 60); // 180 - 60 = 120, still over 100
    const third = ledger.next();
    expect(third?.item.target).toBe('c');
    ledger.settle(third!, 60); // 60: met
    expect(ledger.next()).toBeUndefined();
    expect(ledger.unmet()).toEqual([]);
    expect(ledger.outcomes()).toEqual([{ store: S.key, label: '/r', max_bytes: 100, bytes_before: 180, bytes_after: 60, removed: 2, bytes_freed: 120, held_purged: 0 }]);
  });

  it('a failed removal is reported among what held the budget; when the rest can no longer meet it, they stay', () => {
    const ledger = new BudgetLedger([{ ...S, maxBytes: 50 }], [item(S.key, 'a', 1, 60), item(S.key, 'b', 2, 60), item(S.key, 'c', 3, 60)], 0);
    const first = ledger.next()!;
    ledger.settle(first, undefined);
    // 130 over; b and c (120) would leave it 10 over: nothing more is removed
    expect(ledger.next()).toBeUndefined();
    expect(ledger.unmet()).toEqual([
      {
        store: S.key,
        label: '/r',
        reason: 'max_bytes',
        bytes_short: 130,
        held: { failed: { items: 1, bytes: 60 } },
        removable: { items: 2, bytes: 120 },
        removed: 0,
        largest: [{ target: 'a', code: 'failed', bytes: 60 }],
      },
    ]);
  });

  it('a failure after removals: what was removed for the budget is counted in the unmet report', () => {
    const ledger = new BudgetLedger([{ ...S, maxBytes: 60 }], [item(S.key, 'a', 1, 60), item(S.key, 'b', 2, 60), item(S.key, 'c', 3, 60), item(S.key, 'd', 4, 60)], 0);
    const seen: string[] = [];
    for (let c = ledger.next(); c; c = ledger.next()) {
      seen.push(c.item.target);
      ledger.settle(c, c.item.target === 'b' ? undefined : c.item.bytes);
    }
    // 180 over: a goes (120 over), b fails, c and d (120) still reach: both go.
    expect(seen).toEqual(['a', 'b', 'c', 'd']);
    expect(ledger.unmet()).toEqual([]);
    const l2 = new BudgetLedger([{ ...S, maxBytes: 60 }], [item(S.key, 'a', 1, 60), item(S.key, 'b', 2, 60), item(S.key, 'c', 3, 60), item(S.key, 'd', 4, 60)], 0);
    for (let c = l2.next(); c; c = l2.next()) l2.settle(c, c.item.target === 'c' ? undefined : c.item.bytes);
    // a, b go (60 over), c fails, d (60) still reaches: goes; met.
    expect(l2.unmet()).toEqual([]);
    const l3 = new BudgetLedger([{ ...S, maxBytes: 30 }], [item(S.key, 'a', 1, 60), item(S.key, 'b', 2, 60), item(S.key, 'c', 3, 60)], 0);
    for (let c = l3.next(); c; c = l3.next()) l3.settle(c, c.item.target === 'b' ? undefined : c.item.bytes);
    // 150 over: a goes (90 over), b fails, c (60) cannot reach: stays.
    expect(l3.unmet()).toEqual([expect.objectContaining({ bytes_short: 90, removed: 1, removable: { items: 1, bytes: 60 } })]);
  });

  it('settle() must answer the choice next() made', () => {
    const ledger = new BudgetLedger([S], [item(S.key, 'a', 1, 200)], 0);
    const c = ledger.next()!;
    expect(() => ledger.next()).toThrow(/settle/);
    expect(() => ledger.settle({ ...c }, 1)).toThrow(/did not make/);
  });
});

describe('the undo window under pressure', () => {
  const Q: BudgetStore = { key: 'quarantine', label: 'quarantine', maxBytes: undefined, keepFree: true };
  const heldItem = (store: string, target: string, untilMs: number, bytes: number): BudgetItem => ({ store, target, ageMs: untilMs, bytes, held: undefined, quarantined: true });

  it('max_bytes purges what the quarantine holds for the store (oldest hold first) before removing anything in place', () => {
    const items = [item(S.key, 'old', 1, 40), item(S.key, 'new', 2, 40), heldItem(S.key, 'held-late', 9_000, 30), heldItem(S.key, 'held-early', 5_000, 30)];
    const { remove } = planBudgets([S], items, 0);
    // 140 bytes, budget 100: both holds go (140→80); nothing in place is touched.
    expect(remove.map((c) => [c.item.target, c.reason])).toEqual([['held-early', 'max_bytes'], ['held-late', 'max_bytes']]);
    const ledger = new BudgetLedger([S], items, 0);
    for (let c = ledger.next(); c; c = ledger.next()) ledger.settle(c, c.item.bytes);
    expect(ledger.outcomes()[0]).toMatchObject({ removed: 2, held_purged: 2 });
  });

  it('holds go first, oldest hold first, then the oldest in place, whatever the input order', () => {
    const items = [item(S.key, 'old', 1, 40), item(S.key, 'new', 2, 40), heldItem(S.key, 'held-late', 9_000, 30), heldItem(S.key, 'held-early', 5_000, 30)];
    const perms = (xs: BudgetItem[]): BudgetItem[][] =>
      xs.length <= 1 ? [xs] : xs.flatMap((x, i) => perms([...xs.slice(0, i), ...xs.slice(i + 1)]).map((rest) => [x, ...rest]));
    for (const order of perms(items)) {
      // 140 bytes, budget 10: everything goes, in that order
      expect(planBudgets([{ ...S, maxBytes: 10 }], order, 0).remove.map((c) => c.item.target)).toEqual(['held-early', 'held-late', 'old', 'new']);
      // keep_free (no max_bytes) draws in the same order
      expect(planBudgets([{ ...S, maxBytes: undefined }], order, 100).remove.map((c) => c.item.target)).toEqual(['held-early', 'held-late', 'old']);
    }
  });

  it('keep_free purges every hold (a store with no part in it too, through the quarantine pseudo-store) before anything in place', () => {
    const items = [item(R.key, 'ctx-old', 1, 100), heldItem(Q.key, 'held-other-store', 7_000, 50), heldItem(R.key, 'held', 3_000, 50)];
    const { remove } = planBudgets([R, Q], items, 120);
    expect(remove.map((c) => [c.item.target, c.reason])).toEqual([['held', 'keep_free'], ['held-other-store', 'keep_free'], ['ctx-old', 'keep_free']]);
  });
});

describe('ties and bounds', () => {
  it('equal ages go by name in either input order, in place and among holds', () => {
    const q = (target: string, untilMs: number): BudgetItem => ({ ...item(S.key, target, untilMs, 100), quarantined: true });
    for (const items of [
      [item(S.key, 'b', 5, 100), item(S.key, 'a', 5, 100), item(S.key, 'c', 5, 100)],
      [item(S.key, 'a', 5, 100), item(S.key, 'c', 5, 100), item(S.key, 'b', 5, 100)],
      [item(S.key, 'c', 5, 100), item(S.key, 'b', 5, 100), item(S.key, 'a', 5, 100)],
    ]) {
      expect(planBudgets([{ ...S, maxBytes: 100 }], items, 0).remove.map((c) => c.item.target)).toEqual(['a', 'b']);
      const held = items.map((i) => q(i.target, i.ageMs));
      expect(planBudgets([{ ...S, maxBytes: 100 }], held, 0).remove.map((c) => c.item.target)).toEqual(['a', 'b']);
    }
  });

  it('the largest untouchable items of equal size are named in name order, whatever the input order', () => {
    const names = ['held-c', 'held-a', 'held-d', 'held-b'];
    for (const order of [names, [...names].reverse(), ['held-b', 'held-d', 'held-a', 'held-c']]) {
      const items = order.map((n, k) => item(S.key, n, k, 100, 'live_session'));
      expect(planBudgets([S], items, 0).unmet[0]?.largest).toEqual([
        { target: 'held-a', code: 'live_session', bytes: 100 },
        { target: 'held-b', code: 'live_session', bytes: 100 },
        { target: 'held-c', code: 'live_session', bytes: 100 },
      ]);
    }
  });

  it('a negative shortfall is no shortfall; freeing more than is short leaves it at 0, not below', () => {
    const ledger = new BudgetLedger([R], [item(R.key, 'a', 1, 50)], -10);
    expect(ledger.keepFreeShortBytes).toBe(0);
    expect(ledger.next()).toBeUndefined();
    const l2 = new BudgetLedger([R], [item(R.key, 'a', 1, 50), item(R.key, 'b', 2, 50)], 20);
    const c = l2.next()!;
    l2.settle(c, 50);
    expect(l2.keepFreeShortBytes).toBe(0);
    expect(l2.next()).toBeUndefined();
    expect(l2.unmet()).toEqual([]);
  });
});

describe('each budget reports only what is its own', () => {
  it('a store over max_bytes names only its own held items, not another store\'s', () => {
    const T: BudgetStore = { key: 'sessions:/t', label: '/t', maxBytes: undefined, keepFree: false };
    const items = [item(S.key, 's-live', 1, 200, 'live_session'), item(S.key, 's-done', 2, 10), item(T.key, 't-live', 3, 900, 'live_session'), item(T.key, 't-done', 4, 5)];
    expect(planBudgets([S, T], items, 0)).toEqual({
      remove: [],
      unmet: [
        {
          store: S.key,
          label: '/r',
          reason: 'max_bytes',
          bytes_short: 110,
          held: { live_session: { items: 1, bytes: 200 } },
          removable: { items: 1, bytes: 10 },
          removed: 0,
          largest: [{ target: 's-live', code: 'live_session', bytes: 200 }],
        },
      ],
    });
  });

  it('keep_free counts only the stores taking part: removable bytes on another filesystem do not make it reachable', () => {
    const T: BudgetStore = { key: 'sessions:/other-fs', label: '/other-fs', maxBytes: undefined, keepFree: false };
    const items = [item(R.key, 'r1', 1, 30), item(T.key, 't1', 2, 1000)];
    const { remove, unmet } = planBudgets([R, T], items, 50);
    expect(remove).toEqual([]);
    expect(unmet).toEqual([{ store: undefined, label: 'keep_free', reason: 'keep_free', bytes_short: 50, held: {}, removable: { items: 1, bytes: 30 }, removed: 0, largest: [] }]);
  });

  it('keep_free is acted on when what can go is exactly what is short', () => {
    const items = [item(R.key, 'r1', 1, 30), item(R.key, 'r2', 2, 20)];
    expect(planBudgets([R], items, 50).remove.map((c) => c.item.target)).toEqual(['r1', 'r2']);
    expect(planBudgets([{ ...S, maxBytes: 50 }], [item(S.key, 'a', 1, 30), item(S.key, 'b', 2, 20), item(S.key, 'c', 3, 50, 'live_session')], 0).remove.map((c) => c.item.target)).toEqual(['a', 'b']);
  });

  it('keep_free found out of reach after removals (one failed) counts what it removed', () => {
    const ledger = new BudgetLedger([R], [item(R.key, 'a', 1, 30), item(R.key, 'b', 2, 30), item(R.key, 'c', 3, 30)], 70);
    const seen: string[] = [];
    for (let c = ledger.next(); c; c = ledger.next()) {
      seen.push(c.item.target);
      ledger.settle(c, c.item.target === 'b' ? undefined : c.item.bytes);
    }
    // 70 short: a goes (40 short), b fails, c (30) cannot cover 40: stays.
    expect(seen).toEqual(['a', 'b']);
    expect(ledger.unmet()).toEqual([
      {
        store: undefined,
        label: 'keep_free',
        reason: 'keep_free',
        bytes_short: 40,
        held: { failed: { items: 1, bytes: 30 } },
        removable: { items: 1, bytes: 30 },
        removed: 1,
        largest: [{ target: 'b', code: 'failed', bytes: 30 }],
      },
    ]);
  });

  it('items of the same name and age in two stores go in store order, and are named in that order', () => {
    const T: BudgetStore = { key: 'records:t', label: 't', maxBytes: undefined, keepFree: true };
    for (const [first, second] of [[R, T], [T, R]] as const) {
      const items = [item(first.key, 'same', 5, 40), item(second.key, 'same', 5, 40)];
      expect(planBudgets([R, T], items, 30).remove.map((c) => c.item.store)).toEqual([first.key]);
      const held = [item(first.key, 'same', 5, 40, 'live_context'), item(second.key, 'same', 5, 40, 'not_owned')];
      expect(planBudgets([R, T], held, 30).unmet[0]?.largest.map((l) => l.code)).toEqual(held.map((h) => h.held));
    }
  });
});

describe('which stores take part', () => {
  it('a sessions root: by its own max_bytes, and by keep_free only with a policy on the home\'s filesystem', () => {
    const retain = { maxAgeSecs: 60 };
    expect(sessionsRootBudget({ root: '/r', retain: undefined, maxBytes: 100 }, false, false)).toEqual({ key: 'sessions:/r', label: 'sessions root /r', maxBytes: 100, keepFree: false });
    expect(sessionsRootBudget({ root: '/r', retain, maxBytes: undefined }, true, true)).toEqual({ key: 'sessions:/r', label: 'sessions root /r', maxBytes: undefined, keepFree: true });
    expect(sessionsRootBudget({ root: '/r', retain: undefined, maxBytes: 100 }, true, true)?.keepFree).toBe(true);
    expect(sessionsRootBudget({ root: '/r', retain, maxBytes: undefined }, true, false)).toBeUndefined();
    expect(sessionsRootBudget({ root: '/r', retain: undefined, maxBytes: undefined }, true, true)).toBeUndefined();
    expect(sessionsRootBudget({ root: '/r', retain, maxBytes: undefined }, false, true)).toBeUndefined();
  });

  it('a record store: its policies act as one (the smallest max_bytes, every capsule), in configuration order', () => {
    const policies = [
      { store: 'b', capsule: 'bee', retain: undefined, maxBytes: 500 },
      { store: 'a', capsule: 'ay', retain: { maxAgeSecs: 60 } },
      { store: 'b', capsule: 'bea', retain: undefined, maxBytes: 300 },
      { store: 'c', capsule: 'see', retain: undefined },
    ];
    expect(recordStoreBudgets(policies, false)).toEqual([{ name: 'b', capsules: new Set(['bee', 'bea']), store: { key: 'records:b', label: 'record store b', maxBytes: 300, keepFree: false } }]);
    expect(recordStoreBudgets(policies, true).map((r) => [r.name, r.store.maxBytes, r.store.keepFree])).toEqual([
      ['b', 300, true],
      ['a', undefined, true],
    ]);
  });
});

describe("keep_free's room for a missing reserve", () => {
  const kf = { required: 100, free: 60, short: 40, room: 0 };
  it('is wanted on top while the removable items can provide it, else keep_free alone', () => {
    expect(withReserveRoom(kf, [R], [item(R.key, 'a', 1, 70)], 25)).toEqual({ required: 100, free: 60, short: 65, room: 25 });
    expect(withReserveRoom(kf, [R], [item(R.key, 'a', 1, 50)], 25)).toBe(kf);
    expect(withReserveRoom({ ...kf, free: 200, short: 0 }, [R], [item(R.key, 'a', 1, 70)], 25)).toEqual({ required: 100, free: 200, short: 0, room: 0 });
  });

  it('a max_bytes out of reach in the same store does not make the room unreachable (only keep_free counts)', () => {
    const items = [item(S.key, 'live', 1, 500, 'live_session'), item(S.key, 'a', 2, 70)];
    // S is 470 over its 100 bytes and only 70 can go: max_bytes stays unmet, keep_free + room (65) is met.
    expect(withReserveRoom(kf, [S], items, 25)).toEqual({ required: 100, free: 60, short: 65, room: 25 });
    const withRoom = { required: 100, free: 60, short: 65, room: 25 };
    expect(dropUnreachableRoom(withRoom, [S], items)).toBe(withRoom);
  });

  it('is dropped once what could provide it is held', () => {
    const withRoom = { required: 100, free: 60, short: 65, room: 25 };
    expect(dropUnreachableRoom(withRoom, [R], [item(R.key, 'a', 1, 70)])).toBe(withRoom);
    expect(dropUnreachableRoom(withRoom, [R], [item(R.key, 'a', 1, 70, 'blast_radius')])).toEqual(kf);
    expect(dropUnreachableRoom(kf, [R], [])).toBe(kf);
  });
});
