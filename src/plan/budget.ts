// Disk budgets, pure: which sessions roots and record stores a budget reaches, and the shapes the
// sweep's report gives them. Which items go, in which order, is the fate planner's
// (src/plan/fates.ts: policies first, then `max_bytes` store by store, then `keep_free`, all or
// nothing; docs/fates.md).
// Guarantees: a sessions root takes part by its own `max_bytes`, and in keep_free only with a
// policy on the home's filesystem and unless its entry says `keep_free: false`; the policies
// naming one record store act as one (the smallest `max_bytes`, every capsule; any of them saying
// `keep_free: false` keeps the store out of keep_free). No fs, no clock.
import type { RecordPolicyConfig } from '../config/types.js';

/** The sweep report's `budget` section, and its parts: their schema's (src/schema/json-schemas.ts). */
export type { BudgetReport, BudgetStoreOutcome, BudgetUnmet } from '../schema/json-schemas.js';
export { UNMET_LARGEST } from './fates.js';

export type BudgetReason = 'max_bytes' | 'keep_free';
/** Why a sweep removes (or holds) a session: its root's policy, or a disk budget. */
export type SessionRemovalReason = 'max_age' | 'max_sessions' | BudgetReason;

/** One store a budget reaches. */
export interface BudgetStore {
  /** unique key (`sessions:<root>`, `records:<store>`) */
  key: string;
  /** for messages: the root path or the record store name */
  label: string;
  maxBytes: number | undefined;
  /** takes part in keep_free: has a policy and sits on the home's filesystem */
  keepFree: boolean;
}

// ---- which stores take part ---------------------------------------------------------------------

/**
 * The budget store of a sessions root, or undefined when no budget reaches it: its own
 * `max_bytes`, and keep_free when it has a policy (retain or max_bytes) and sits on the home's
 * filesystem.
 */
export function sessionsRootBudget(
  e: { root: string; retain: unknown; maxBytes?: number | undefined; keepFree?: false | undefined },
  keepFree: boolean,
  onHomeFs: boolean,
): BudgetStore | undefined {
  const takesKeepFree =
    keepFree && e.keepFree !== false && (e.retain !== undefined || e.maxBytes !== undefined) && onHomeFs;
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
export function recordStoreBudgets(
  policies: readonly Pick<RecordPolicyConfig, 'store' | 'capsule' | 'retain' | 'maxBytes' | 'keepFree'>[],
  keepFree: boolean,
): RecordStoreBudget[] {
  const byStore = new Map<
    string,
    { capsules: Set<string>; maxBytes: number | undefined; hasPolicy: boolean; optedOut: boolean }
  >();
  for (const r of policies) {
    const e = byStore.get(r.store) ?? {
      capsules: new Set<string>(),
      maxBytes: undefined,
      hasPolicy: false,
      optedOut: false,
    };
    e.capsules.add(r.capsule);
    if (r.maxBytes !== undefined) e.maxBytes = Math.min(e.maxBytes ?? Infinity, r.maxBytes);
    e.hasPolicy ||= r.retain !== undefined || r.maxBytes !== undefined;
    e.optedOut ||= r.keepFree === false;
    byStore.set(r.store, e);
  }
  const out: RecordStoreBudget[] = [];
  for (const [name, e] of byStore) {
    const takesKeepFree = keepFree && e.hasPolicy && !e.optedOut;
    if (e.maxBytes === undefined && !takesKeepFree) continue;
    out.push({
      name,
      capsules: e.capsules,
      store: { key: `records:${name}`, label: `record store ${name}`, maxBytes: e.maxBytes, keepFree: takesKeepFree },
    });
  }
  return out;
}
