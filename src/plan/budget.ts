// Disk budgets, pure: which stores take part, which items go, in which order, when a store is
// over its `max_bytes` or the home's filesystem is short of `keep_free` — and what could not be
// freed.
//
// Ordering between keys (written down here and tested in test/plan/budget.test.ts):
// 1. Age and count first: `max_age`/`max_sessions`/`max_messages` act before any budget is
//    looked at (the sweep's remove and truncate steps run before the budget step), and what they
//    removed is no longer an item here; sizes are measured after them.
// 2. Then `max_bytes`, store by store in configuration order: the oldest removable item of a store
//    over its budget goes first (sessions by the time in their `ses_` id, contexts by the mtime of
//    conversation.jsonl; ties by name), until the store is at or under its budget.
// 3. Then `keep_free`: while the home's filesystem is short, the oldest removable item across
//    every store taking part (a store with a policy on the home's filesystem) goes first.
// All or nothing (README "Disk budgets"): a budget is acted on only while the removable items
//    left could still meet it — the store's for `max_bytes` (what the quarantine holds for it
//    included), every store taking part for `keep_free`. When even all of them together would
//    not, nothing more is removed for that budget (none at all when that is so from the start)
//    and it is reported unmet with the largest items it may not touch. When they could, the
//    oldest go in order, none skipped, until it is met: the fewest oldest items that meet it.
// Under 2 and 3, what the undo window (`quarantine:`) holds goes first, oldest hold first: a
// held item counts towards the store it came from (sessions are held inside their root; held
// contexts and dropped lines are charged to their record store, or — when that store takes no
// part — to a `quarantine` pseudo-store that only keep_free draws on), and it is purged for good
// before any item still in place is removed. Removals for space are never held themselves.
//    Bytes freed under step 2 count towards step 3 when the store is on that filesystem.
// Guarantees: an item that is not removable (live session or context, another user's, a record
// whose header does not name the policy's capsule) is never chosen; a removal that did not
// happen (settled with `undefined`) frees nothing and the next item is chosen instead (while the
// rest can still meet the budget); every store left over its budget, and a keep_free still short,
// is reported with what held it, the largest items it could not touch and what it left in place.
// No fs, no clock.
import type { RecordPolicyConfig } from '../config/types.js';

export type BudgetReason = 'max_bytes' | 'keep_free';
/** Why a sweep removes (or holds) a session: its root's policy, or a disk budget. */
export type SessionRemovalReason = 'max_age' | 'max_sessions' | BudgetReason;

export interface BudgetStore {
  /** unique key (`sessions:<root>`, `records:<store>`) */
  key: string;
  /** for messages: the root path or the record store name */
  label: string;
  maxBytes: number | undefined;
  /** takes part in keep_free: has a policy and sits on the home's filesystem */
  keepFree: boolean;
}

export interface BudgetItem {
  store: string;
  /** `ses_…` id or context id */
  target: string;
  /** ms: session id time / record mtime; smaller is older */
  ageMs: number;
  bytes: number;
  /** undefined: removable; otherwise the stable code that keeps it (live_session, live_context, foreign_owner, not_owned) */
  held: string | undefined;
  /**
   * Held by the undo window (`quarantine:`): already removed from the store's point of view, so
   * it goes before anything still in place (ageMs is then its deadline: the oldest hold first).
   */
  quarantined?: boolean;
}

export interface BudgetChoice {
  item: BudgetItem;
  reason: BudgetReason;
}

export interface BudgetUnmet {
  /** store key, or undefined for keep_free */
  store: string | undefined;
  label: string;
  reason: BudgetReason;
  /** bytes still over the budget / still missing from keep_free */
  bytesShort: number;
  /** what stayed, by code, with bytes (`failed` counts removals that did not happen) */
  held: Record<string, { items: number; bytes: number }>;
  /** removable items left in place because all of them together would not meet the budget */
  removable: { items: number; bytes: number };
  /** items removed for this budget before it was found out of reach (a removal failed); usually 0 */
  removed: number;
  /** the largest items the budget may not touch, largest first (at most UNMET_LARGEST) */
  largest: { target: string; code: string; bytes: number }[];
}

/** How many of the largest untouchable items an unmet budget names. */
export const UNMET_LARGEST = 3;

export interface BudgetStoreOutcome {
  store: string;
  label: string;
  max_bytes: number | null;
  bytes_before: number;
  bytes_after: number;
  removed: number;
  bytes_freed: number;
  /** of `removed`: held items (quarantine) purged before anything in place */
  held_purged: number;
}

/** The sweep report's `budget` section. */
export interface BudgetReport {
  stores: BudgetStoreOutcome[];
  /** null when keep_free is not configured */
  keep_free: {
    required_bytes: number;
    /** free before the budgets acted (what the reserve released, if it was, included) */
    free_bytes: number;
    short_bytes: number;
    short_bytes_after: number;
    /** the reserve (`<home>/gc/.reserve`, src/gchome/reserve.ts): released this sweep, put back this sweep (a dry run: would be) */
    reserve: {
      path: string;
      released_bytes: number;
      /** added to what keep_free wants while the reserve is missing (0 or RESERVE_BYTES); short_bytes include it */
      room_bytes: number;
      put_back: boolean;
    };
  } | null;
  unmet: BudgetUnmet[];
}

const byAge = (a: BudgetItem, b: BudgetItem): number =>
  Number(b.quarantined === true) - Number(a.quarantined === true) ||
  a.ageMs - b.ageMs || (a.target < b.target ? -1 : a.target > b.target ? 1 : 0);

/**
 * Walks the budgets one removal at a time: `next()` names the item to remove, `settle()` tells
 * what it freed. Feeding it the real outcome keeps a failed or skipped removal from counting.
 */
export class BudgetLedger {
  private readonly stores: BudgetStore[];
  private readonly items: BudgetItem[];
  private readonly total = new Map<string, number>();
  private readonly before = new Map<string, number>();
  private readonly removed = new Map<string, { n: number; bytes: number; held: number }>();
  private readonly tried = new Set<BudgetItem>();
  private readonly failed = new Set<BudgetItem>();
  private keepFreeShort: number;
  private pending: BudgetChoice | undefined;
  /** per store: bytes of the removable items not yet tried */
  private readonly untried = new Map<string, number>();
  /** removals per budget: store key for max_bytes, '' for keep_free */
  private readonly removedFor = new Map<string, number>();

  /** `keepFreeShort`: bytes missing from keep_free now (0 when met or not configured). */
  constructor(stores: BudgetStore[], items: BudgetItem[], keepFreeShort: number) {
    this.stores = stores;
    this.items = [...items].sort(byAge);
    this.keepFreeShort = Math.max(0, keepFreeShort);
    for (const s of stores) this.total.set(s.key, 0);
    for (const i of items) this.total.set(i.store, (this.total.get(i.store) ?? 0) + i.bytes);
    for (const [k, v] of this.total) this.before.set(k, v);
    for (const i of items) if (i.held === undefined) this.untried.set(i.store, (this.untried.get(i.store) ?? 0) + i.bytes);
  }

  private store(key: string): BudgetStore | undefined {
    return this.stores.find((s) => s.key === key);
  }

  private over(s: BudgetStore): number {
    return s.maxBytes === undefined ? 0 : (this.total.get(s.key) ?? 0) - s.maxBytes;
  }

  private candidate(i: BudgetItem): boolean {
    return i.held === undefined && !this.tried.has(i);
  }

  private inStore(key: string): (i: BudgetItem) => boolean {
    return (i) => i.store === key;
  }

  private readonly inKeepFree = (i: BudgetItem): boolean => this.store(i.store)?.keepFree === true;

  /** Bytes all removable items not yet tried in `store` would free together. */
  private reachable(store: string): number {
    return this.untried.get(store) ?? 0;
  }

  private reachableForKeepFree(): number {
    let n = 0;
    for (const s of this.stores) if (s.keepFree) n += this.reachable(s.key);
    return n;
  }

  /**
   * The next removal, or undefined when every budget is met or out of reach (what is removable
   * would not meet it: then nothing is removed for it).
   */
  next(): BudgetChoice | undefined {
    if (this.pending) throw new Error('BudgetLedger: settle() the previous choice first');
    for (const s of this.stores) {
      const over = this.over(s);
      if (over <= 0 || this.reachable(s.key) < over) continue;
      const item = this.items.find((i) => i.store === s.key && this.candidate(i));
      if (item) return (this.pending = { item, reason: 'max_bytes' });
    }
    if (this.keepFreeShort > 0 && this.reachableForKeepFree() >= this.keepFreeShort) {
      const item = this.items.find((i) => this.candidate(i) && this.inKeepFree(i));
      if (item) return (this.pending = { item, reason: 'keep_free' });
    }
    return undefined;
  }

  /** What the chosen removal freed (bytes), or undefined when it did not happen. */
  settle(choice: BudgetChoice, freed: number | undefined): void {
    if (this.pending !== choice) throw new Error('BudgetLedger: settle() names a choice next() did not make');
    this.pending = undefined;
    const { item } = choice;
    this.tried.add(item);
    this.untried.set(item.store, (this.untried.get(item.store) ?? 0) - item.bytes);
    const budget = choice.reason === 'max_bytes' ? item.store : '';
    this.removedFor.set(budget, (this.removedFor.get(budget) ?? 0) + (freed === undefined ? 0 : 1));
    if (freed === undefined) {
      this.failed.add(item);
      return;
    }
    this.total.set(item.store, (this.total.get(item.store) ?? 0) - item.bytes);
    const r = this.removed.get(item.store) ?? { n: 0, bytes: 0, held: 0 };
    this.removed.set(item.store, { n: r.n + 1, bytes: r.bytes + freed, held: r.held + (item.quarantined ? 1 : 0) });
    if (this.store(item.store)?.keepFree) this.keepFreeShort = Math.max(0, this.keepFreeShort - freed);
  }

  private heldIn(filter: (i: BudgetItem) => boolean): BudgetUnmet['held'] {
    const out: BudgetUnmet['held'] = {};
    for (const i of this.items) {
      if (!filter(i)) continue;
      const code = this.failed.has(i) ? 'failed' : i.held;
      if (code === undefined) continue;
      const h = (out[code] ??= { items: 0, bytes: 0 });
      h.items++;
      h.bytes += i.bytes;
    }
    return out;
  }

  private removableIn(filter: (i: BudgetItem) => boolean): BudgetUnmet['removable'] {
    const r = { items: 0, bytes: 0 };
    for (const i of this.items) {
      if (filter(i) && this.candidate(i)) {
        r.items++;
        r.bytes += i.bytes;
      }
    }
    return r;
  }

  private largestIn(filter: (i: BudgetItem) => boolean): BudgetUnmet['largest'] {
    const out: BudgetUnmet['largest'] = [];
    for (const i of this.items) {
      const code = this.failed.has(i) ? 'failed' : i.held;
      if (filter(i) && code !== undefined) out.push({ target: i.target, code, bytes: i.bytes });
    }
    out.sort((a, b) => b.bytes - a.bytes || (a.target < b.target ? -1 : a.target > b.target ? 1 : 0));
    return out.slice(0, UNMET_LARGEST);
  }

  private unmetOf(store: string | undefined, label: string, reason: BudgetReason, bytesShort: number, filter: (i: BudgetItem) => boolean): BudgetUnmet {
    return {
      store,
      label,
      reason,
      bytesShort,
      held: this.heldIn(filter),
      removable: this.removableIn(filter),
      removed: this.removedFor.get(store ?? '') ?? 0,
      largest: this.largestIn(filter),
    };
  }

  /** Budgets still not met once `next()` has nothing left. */
  unmet(): BudgetUnmet[] {
    const out: BudgetUnmet[] = [];
    for (const s of this.stores) {
      const over = this.over(s);
      if (over > 0) out.push(this.unmetOf(s.key, s.label, 'max_bytes', over, this.inStore(s.key)));
    }
    if (this.keepFreeShort > 0) out.push(this.unmetOf(undefined, 'keep_free', 'keep_free', this.keepFreeShort, this.inKeepFree));
    return out;
  }

  /** Per store: size before and after, what was removed. */
  outcomes(): BudgetStoreOutcome[] {
    return this.stores.map((s) => {
      const r = this.removed.get(s.key) ?? { n: 0, bytes: 0, held: 0 };
      return {
        store: s.key,
        label: s.label,
        max_bytes: s.maxBytes ?? null,
        bytes_before: this.before.get(s.key) ?? 0,
        bytes_after: this.total.get(s.key) ?? 0,
        removed: r.n,
        bytes_freed: r.bytes,
        held_purged: r.held,
      };
    });
  }

  get keepFreeShortBytes(): number {
    return this.keepFreeShort;
  }
}

/** Every choice the ledger makes when each removal frees what was measured (dry planning, tests). */
export function planBudgets(stores: BudgetStore[], items: BudgetItem[], keepFreeShort: number): { remove: BudgetChoice[]; unmet: BudgetUnmet[] } {
  const ledger = new BudgetLedger(stores, items, keepFreeShort);
  const remove: BudgetChoice[] = [];
  for (let c = ledger.next(); c; c = ledger.next()) {
    remove.push(c);
    ledger.settle(c, c.item.bytes);
  }
  return { remove, unmet: ledger.unmet() };
}

// ---- which stores take part ---------------------------------------------------------------------

/**
 * The budget store of a sessions root, or undefined when no budget reaches it: its own
 * `max_bytes`, and keep_free when it has a policy (retain or max_bytes) and sits on the home's
 * filesystem.
 */
export function sessionsRootBudget(e: { root: string; retain: unknown; maxBytes?: number | undefined }, keepFree: boolean, onHomeFs: boolean): BudgetStore | undefined {
  const takesKeepFree = keepFree && (e.retain !== undefined || e.maxBytes !== undefined) && onHomeFs;
  if (e.maxBytes === undefined && !takesKeepFree) return undefined;
  return { key: `sessions:${e.root}`, label: `sessions root ${e.root}`, maxBytes: e.maxBytes, keepFree: takesKeepFree };
}

export interface RecordStoreBudget {
  name: string;
  store: BudgetStore;
  /** the capsules whose policies name this store: a record whose header names another is not its to remove */
  capsules: Set<string>;
}

/**
 * The record stores a budget reaches, in the order the configuration first names them. The
 * policies of one store act as one: its `max_bytes` is the smallest of theirs, and it takes part
 * in keep_free when any of them has a policy (retain or max_bytes).
 */
export function recordStoreBudgets(policies: readonly Pick<RecordPolicyConfig, 'store' | 'capsule' | 'retain' | 'maxBytes'>[], keepFree: boolean): RecordStoreBudget[] {
  const byStore = new Map<string, { capsules: Set<string>; maxBytes: number | undefined; hasPolicy: boolean }>();
  for (const r of policies) {
    const e = byStore.get(r.store) ?? { capsules: new Set<string>(), maxBytes: undefined, hasPolicy: false };
    e.capsules.add(r.capsule);
    if (r.maxBytes !== undefined) e.maxBytes = Math.min(e.maxBytes ?? Infinity, r.maxBytes);
    e.hasPolicy ||= r.retain !== undefined || r.maxBytes !== undefined;
    byStore.set(r.store, e);
  }
  const out: RecordStoreBudget[] = [];
  for (const [name, e] of byStore) {
    if (e.maxBytes === undefined && !(keepFree && e.hasPolicy)) continue;
    out.push({ name, capsules: e.capsules, store: { key: `records:${name}`, label: `record store ${name}`, maxBytes: e.maxBytes, keepFree: keepFree && e.hasPolicy } });
  }
  return out;
}

// ---- keep_free and the reserve's room ---------------------------------------------------------

/** What keep_free asks of this sweep, in bytes. */
export interface KeepFreeNeed {
  required: number;
  /** free before the budgets act */
  free: number;
  /** what the budgets are to free: required − free, plus `room` */
  short: number;
  /** room wanted for the missing reserve on top of keep_free (0 or the reserve's size) */
  room: number;
}

/** Whether removing what may go for space would meet keep_free `short` bytes short. */
function reachesKeepFree(stores: BudgetStore[], items: BudgetItem[], short: number): boolean {
  return planBudgets(stores, items, short).unmet.every((u) => u.reason !== 'keep_free');
}

/** keep_free with `roomBytes` more for a missing reserve, when the items can provide that; else unchanged. */
export function withReserveRoom(kf: KeepFreeNeed, stores: BudgetStore[], items: BudgetItem[], roomBytes: number): KeepFreeNeed {
  const withRoom = Math.max(0, kf.required + roomBytes - kf.free);
  return withRoom > kf.short && reachesKeepFree(stores, items, withRoom) ? { ...kf, short: withRoom, room: roomBytes } : kf;
}

/** keep_free without the reserve's room once the room is out of reach (items held since it was added); else unchanged. */
export function dropUnreachableRoom(kf: KeepFreeNeed, stores: BudgetStore[], items: BudgetItem[]): KeepFreeNeed {
  return kf.room > 0 && !reachesKeepFree(stores, items, kf.short) ? { ...kf, short: Math.max(0, kf.required - kf.free), room: 0 } : kf;
}
