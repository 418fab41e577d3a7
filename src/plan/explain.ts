// When one item's fate changes, if nothing but the clock moves (`murmur-gc explain`;
// docs/explain.md), pure.
// Guarantees:
// - Every instant is the fate planner's own (src/plan/fates.ts): the instant the policy's
//   comparison gives is checked against planFates at that millisecond and the one before it, and
//   found by bisection with planFates itself when the two disagree; a liveness end likewise
//   against judgeLiveness (src/plan/liveness.ts). So explain never names an instant a sweep
//   would not agree with, to the millisecond.
// - "If nothing else changes": the same sessions, records, sizes, protection list and
//   configuration, only the clock moving. What does move an instant is counted here (sessions a
//   rank has left under `max_sessions`, messages under `max_messages`, bytes under `max_bytes`) and
//   said by the caller.
// - Ranks are the runtime's: every `ses_` name present, newest first by its UTF-8 bytes, as
//   src/plan/sessions.ts ranks them (live and protected sessions keep their rank).
import { TEARDOWN_WINDOW_MS, judgeLiveness, type LivenessInput } from './liveness.js';
import {
  fateOf,
  itemKey,
  planFates,
  type Fate,
  type FateInput,
  type PolicyRule,
  type RootIn,
  type StoreIn,
} from './fates.js';
import { idTimestampMs } from '../runtime/ids.js';

/** The policy rule (`max_age`, `max_sessions`, `max_messages`) a fate carries out or is kept in spite of, if any. */
export function policyRuleOf(f: Fate): PolicyRule | undefined {
  if (f.fate === 'truncated') return 'max_messages';
  const rule = f.fate === 'kept' ? f.condemnedBy : f.rule;
  return rule === 'max_age' || rule === 'max_sessions' || rule === 'max_messages' ? rule : undefined;
}

/**
 * The one store of `input` holding `store`, with its policies only: no budget, no hold, no guard.
 * `ageOnly`: its retain blocks keep only `max_age`.
 */
function policyOnly(input: FateInput, store: string, nowMs: number, ageOnly: boolean): FateInput {
  const trim = <R extends { maxAgeSecs?: number }>(r: R | undefined): R | undefined => {
    if (!ageOnly || r === undefined) return r;
    return (r.maxAgeSecs === undefined ? undefined : { maxAgeSecs: r.maxAgeSecs }) as R | undefined;
  };
  const roots: RootIn[] = [];
  const stores: StoreIn[] = [];
  for (const r of input.roots) {
    if (r.key !== store) continue;
    const { maxBytes: _b, retain, ...rest } = r;
    const kept = trim(retain);
    roots.push({ ...rest, retain: kept, keepFree: false });
  }
  for (const s of input.stores) {
    if (s.key !== store) continue;
    const { maxBytes: _b, ...rest } = s;
    stores.push({
      ...rest,
      keepFree: false,
      policies: s.policies.map((p) => ({ capsule: p.capsule, retain: trim(p.retain) })),
    });
  }
  return { nowMs, guard: { unattended: false, confirmLarge: true }, roots, stores, holds: [] };
}

/** The policy rule that condemns `name` of `store` at `nowMs` by the planner (budgets, holds and the guard left out), or undefined. */
export function policyRuleAt(
  input: FateInput,
  store: string,
  name: string,
  nowMs: number,
  ageOnly = false,
): PolicyRule | undefined {
  return policyRuleOf(fateOf(planFates(policyOnly(input, store, nowMs, ageOnly)), store, name));
}

/** The smallest integer `t` with `pred(t)` true, for a predicate false then true as `t` grows, starting from a guess; undefined when it is never true. */
export function firstTrue(pred: (t: number) => boolean, guess: number): number | undefined {
  const g = Math.floor(guess);
  if (pred(g) && !pred(g - 1)) return g;
  // Bracket it: lo false, hi true, the span doubling from the guess.
  let lo = g;
  let hi = g;
  let span = 1;
  const LIMIT = 2 ** 52;
  while (pred(lo)) {
    hi = lo;
    lo = g - span;
    span *= 2;
    if (span > LIMIT) return undefined;
  }
  span = 1;
  while (!pred(hi)) {
    lo = Math.max(lo, hi);
    hi = g + span;
    span *= 2;
    if (span > LIMIT) return undefined;
  }
  while (hi - lo > 1) {
    const mid = lo + Math.floor((hi - lo) / 2);
    if (pred(mid)) hi = mid;
    else lo = mid;
  }
  return hi;
}

/** The age of an item as the planner reads it: a session's mint time from its id, a record's mtime. */
export function bornMs(input: FateInput, store: string, name: string): number | undefined {
  if (input.roots.some((r) => r.key === store)) return idTimestampMs(name, 'ses_');
  return input.stores.find((s) => s.key === store)?.contexts.find((c) => c.context === name)?.mtimeMs;
}

/** The retain block whose `max_age` applies to the item (a record: the first policy naming its capsule). */
function ageSecsOf(input: FateInput, store: string, name: string): number | undefined {
  const root = input.roots.find((r) => r.key === store);
  if (root) return root.retain?.maxAgeSecs;
  const s = input.stores.find((x) => x.key === store);
  const capsule = s?.contexts.find((c) => c.context === name)?.capsule;
  return capsule === undefined ? undefined : s?.policies.find((p) => p.capsule === capsule)?.retain?.maxAgeSecs;
}

/**
 * The first millisecond from which `max_age` condemns the item (in the past when it already
 * does), by the planner's own comparison; undefined when no `max_age` reaches it.
 */
export function ageCondemnsFromMs(input: FateInput, store: string, name: string): number | undefined {
  const secs = ageSecsOf(input, store, name);
  const born = bornMs(input, store, name);
  if (secs === undefined || born === undefined) return undefined;
  // sessions.ts: minted < now − max_age; records.ts: mtime < now − max_age. The first integer
  // now with born < now − max_age is floor(born + max_age) + 1; the planner has the last word.
  const guess = Math.floor(born + secs * 1000) + 1;
  return firstTrue((t) => policyRuleAt(input, store, name, t, true) === 'max_age', guess);
}

/** Where a session ranks under `max_sessions`: 1 is the newest, of every `ses_` name the root holds. */
export function rankOf(root: Pick<RootIn, 'sessions'>, name: string): { rank: number; of: number } | undefined {
  if (idTimestampMs(name, 'ses_') === undefined) return undefined;
  const me = Buffer.from(name, 'utf8');
  let newer = 0;
  let of = 0;
  for (const s of root.sessions) {
    if (idTimestampMs(s.name, 'ses_') === undefined) continue;
    of++;
    if (Buffer.compare(Buffer.from(s.name, 'utf8'), me) > 0) newer++;
  }
  return { rank: newer + 1, of };
}

/** Newer sessions still to come before `max_sessions` condemns the session at `rank` (0: it does now). */
export function sessionsToCondemn(rank: number, maxSessions: number): number {
  return Math.max(0, maxSessions - rank + 1);
}

/** Messages still to come before `max_messages` truncates a record holding `messages` (0: it does now). */
export function messagesToCondemn(messages: number, maxMessages: number): number {
  return Math.max(0, maxMessages - messages + 1);
}

/**
 * The first millisecond at which a live session is no longer live by its trace (no further
 * write), by judgeLiveness itself; undefined when it is not live now, or when a running record of
 * a live process makes it so (that ends with the process, at no instant known in advance).
 */
export function liveUntilMs(l: LivenessInput, nowMs: number, liveGraceMs: number): number | undefined {
  if (l.running === 'alive' || judgeLiveness(l, nowMs, liveGraceMs).state !== 'live') return undefined;
  const window = l.hasSessionEnd === true ? TEARDOWN_WINDOW_MS : Math.max(TEARDOWN_WINDOW_MS, liveGraceMs);
  return firstTrue(
    (t) => t >= nowMs && judgeLiveness(l, t, liveGraceMs).state !== 'live',
    Math.ceil(l.lastWriteMs + window),
  );
}

/** A `max_bytes` budget as it bears on one item in place: what goes before it, and how much more the store must hold for it to go. */
export interface BytesBudget {
  limit: number;
  /** what the store holds in place once the policies acted (what max_bytes counts) */
  inPlace: number;
  /** the item's allocated bytes (with what goes beside it); undefined: not measured */
  itemBytes: number | undefined;
  /** the removable items older than it, with those max_bytes takes now (it takes the oldest first) */
  olderRemovable: { items: number; bytes: number };
  /** bytes the store must grow by, in place, before max_bytes takes it; undefined: it may not take it */
  growsBy: number | undefined;
}

/**
 * `max_bytes` of the item's store as it bears on the item, from the plan: the store's removable
 * items (kept by its policy, measured, and nothing keeping them: not live, protected, another
 * user's, unwritable, failed or stopped) oldest first, as the planner orders them.
 */
export function bytesBudget(
  input: FateInput,
  items: ReadonlyMap<string, Fate>,
  stopped: ReadonlySet<string>,
  store: string,
  name: string,
  inPlace: number,
): BytesBudget | undefined {
  const root = input.roots.find((r) => r.key === store);
  const st = input.stores.find((s) => s.key === store);
  const limit = root?.maxBytes ?? st?.maxBytes;
  if (limit === undefined) return undefined;
  const all: { name: string; ageMs: number; bytes: number | undefined; removable: boolean; byBytes: boolean }[] = [];
  const failed = input.failed ?? new Set<string>();
  const writable = (root ?? st)?.writable !== false && !stopped.has(store);
  const mayGo = (key: string, i: { live: boolean; protected: boolean; owned: boolean }): boolean => {
    const f = items.get(key);
    const kept = f === undefined || (f.fate === 'kept' && f.why === 'policy') || f.fate === 'truncated';
    return kept && !i.live && !i.protected && i.owned && writable && !failed.has(key);
  };
  // taken now by max_bytes (or for good by keep_free in place of max_bytes' hold): it goes first
  const byBytes = (key: string): boolean => {
    const f = items.get(key);
    return (
      f !== undefined &&
      (((f.fate === 'held' || f.fate === 'removed') && f.rule === 'max_bytes') ||
        (f.fate === 'removed' && f.condemnedBy === 'max_bytes'))
    );
  };
  for (const s of root?.sessions ?? [])
    all.push({
      name: s.name,
      ageMs: idTimestampMs(s.name, 'ses_') ?? 0,
      bytes: s.bytes,
      removable: s.bytes !== undefined && mayGo(itemKey(store, s.name), s),
      byBytes: byBytes(itemKey(store, s.name)),
    });
  for (const c of st?.contexts ?? []) {
    const key = itemKey(store, c.context);
    // a record its max_messages truncates weighs what the truncation leaves
    const bytes = items.get(key)?.fate === 'truncated' ? (c.bytesAfterTruncation ?? c.bytes) : c.bytes;
    all.push({
      name: c.context,
      ageMs: c.mtimeMs,
      bytes,
      removable: bytes !== undefined && mayGo(key, c),
      byBytes: byBytes(key),
    });
  }
  const me = all.find((i) => i.name === name);
  const older = all.filter(
    (i) =>
      (i.removable || i.byBytes) &&
      i.name !== name &&
      me !== undefined &&
      (i.ageMs < me.ageMs || (i.ageMs === me.ageMs && i.name < name)),
  );
  const olderBytes = older.reduce((n, i) => n + (i.bytes ?? 0), 0);
  // max_bytes takes the oldest removable while the store is over it: this one once
  // inPlace − olderBytes > limit (those it takes now counted among the older).
  const growsBy = me?.removable === true ? Math.max(0, limit + olderBytes - inPlace + 1) : undefined;
  return { limit, inPlace, itemBytes: me?.bytes, olderRemovable: { items: older.length, bytes: olderBytes }, growsBy };
}
