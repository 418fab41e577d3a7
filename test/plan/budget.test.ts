import { describe, expect, it } from 'vitest';
import { BudgetLedger, planBudgets, type BudgetItem, type BudgetStore } from '../../src/plan/budget.js';

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
    const items = [item(S.key, 'old-live', 1, 90, 'live_session'), item(S.key, 'mid', 2, 30), item(S.key, 'new-foreign', 3, 50, 'foreign_owner')];
    const { remove, unmet } = planBudgets([S], items, 0);
    expect(remove.map((c) => c.item.target)).toEqual(['mid']);
    expect(unmet).toEqual([
      { store: S.key, label: '/r', reason: 'max_bytes', bytesShort: 40, held: { live_session: { items: 1, bytes: 90 }, foreign_owner: { items: 1, bytes: 50 } } },
    ]);
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

  it('max_bytes acts first and what it frees counts towards keep_free', () => {
    const items = [item(S.key, 's-old', 5, 80), item(R.key, 'r-older', 1, 50), item(S.key, 's-new', 9, 80)];
    const { remove } = planBudgets([S, R], items, 60);
    // sessions over by 60: s-old goes for max_bytes (frees 80 >= 60 short): keep_free met too.
    expect(remove.map((c) => [c.item.target, c.reason])).toEqual([['s-old', 'max_bytes']]);
  });

  it('reports what could not be freed when nothing removable is left', () => {
    const items = [item(R.key, 'live', 1, 10, 'live_context'), item(R.key, 'mine', 2, 10), item(R.key, 'theirs', 3, 10, 'not_owned')];
    const { remove, unmet } = planBudgets([R], items, 100);
    expect(remove.map((c) => c.item.target)).toEqual(['mine']);
    expect(unmet).toEqual([
      { store: undefined, label: 'keep_free', reason: 'keep_free', bytesShort: 90, held: { live_context: { items: 1, bytes: 10 }, not_owned: { items: 1, bytes: 10 } } },
    ]);
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

  it('a failed removal is reported among what held the budget', () => {
    const ledger = new BudgetLedger([{ ...S, maxBytes: 50 }], [item(S.key, 'a', 1, 60), item(S.key, 'b', 2, 60), item(S.key, 'c', 3, 60)], 0);
    for (let c = ledger.next(); c; c = ledger.next()) ledger.settle(c, c.item.target === 'a' ? undefined : c.item.bytes);
    expect(ledger.unmet()).toEqual([{ store: S.key, label: '/r', reason: 'max_bytes', bytesShort: 10, held: { failed: { items: 1, bytes: 60 } } }]);
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

  it('keep_free purges every hold (a store with no part in it too, through the quarantine pseudo-store) before anything in place', () => {
    const items = [item(R.key, 'ctx-old', 1, 100), heldItem(Q.key, 'held-other-store', 7_000, 50), heldItem(R.key, 'held', 3_000, 50)];
    const { remove } = planBudgets([R, Q], items, 120);
    expect(remove.map((c) => [c.item.target, c.reason])).toEqual([['held', 'keep_free'], ['held-other-store', 'keep_free'], ['ctx-old', 'keep_free']]);
  });
});
