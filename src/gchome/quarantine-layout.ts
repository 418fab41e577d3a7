// The undo window (`quarantine:`), pure: where a removed item is held, how its name and sidecar
// read, when it goes, and the order a disk budget purges held items in.
// Decisions:
// - A session directory is held inside its own sessions root as
//   `.murmur-gc-quarantine.<until_ms>.<ses_id>` (its name: src/runtime/gc-entries.ts): same directory, so the move is one rename, and the
//   runtime never counts it (it ranks `ses_` names only; so does our planner, src/plan/sessions.ts).
// - A context directory, and the lines a truncation dropped, are held in `<home>/gc/quarantine/`
//   (`mur conversation ls` lists every directory of a store, so a context cannot stay there) as
//   one directory per item, `<until_ms>.<nonce>`, holding `item.json` (the sidecar below) and the
//   payload: `ctx/` (the context directory, moved whole); for a truncation `record.jsonl`, a hard
//   link to the truncated record's old inode whose bytes `range` [from, to) are the dropped lines
//   (no copy: the hold costs no second copy of them; after the rewrite commits the inode is cut
//   to `to`, so the kept tail is not held twice), or — items written before, and records on
//   another filesystem than the quarantine — `dropped.jsonl` (a copy of the dropped bytes).
// - An item goes for good once `until_ms <= now` (a later sweep, or the daemon's). The deadline is
//   in the item's name, so an item whose sidecar is unreadable still goes (it cannot be restored).
// - A truncation's sidecar is written `staged` before the rewrite commits and `held` after; a
//   staged one whose record carries its truncation marker (`at_ms`) did land (promoted), any
//   other staged one never did (discarded) — so a crash never makes restore duplicate lines.
// - A restore puts back only the chain of held truncations ending at the marker the record
//   carries now (each item's `prior.at_ms` names the one before it): an item outside that chain
//   (its lines are back already, or a later cut was not held) is never put back again.
// No fs, no clock.
import type { TruncationMarker } from '../runtime/record.js';

/** `<home>/gc/<QUARANTINE_DIR>` */
export const QUARANTINE_DIR = 'quarantine';
export const ITEM_FILE = 'item.json';
export const CONTEXT_PAYLOAD = 'ctx';
export const DROPPED_PAYLOAD = 'dropped.jsonl';
/** A truncation's payload that is the record's old inode (hard link); the lines are `range`. */
export const RECORD_PAYLOAD = 'record.jsonl';

export type HeldKind = 'session' | 'context' | 'truncation';

/** `<until_ms>.<nonce>` under `<home>/gc/quarantine/`. */
export function itemDirName(untilMs: number, nonce: string): string {
  return `${untilMs}.${nonce}`;
}

export function parseItemDirName(name: string): { untilMs: number } | undefined {
  const m = /^([0-9]{1,16})\.[0-9a-f]{8,64}$/.exec(name);
  if (!m) return undefined;
  const untilMs = Number(m[1]);
  return Number.isSafeInteger(untilMs) ? { untilMs } : undefined;
}

/** The sidecar `item.json` of a context or truncation held in `<home>/gc/quarantine/`. */
export interface ItemMeta {
  kind: 'context' | 'truncation';
  /** record store name */
  store: string;
  /** context id */
  context: string;
  removed_ms: number;
  until_ms: number;
  /** max_age, max_messages, conversation_rm, conversation_truncate */
  reason: string;
  /** the murmur-gc run (audit session id) that moved it */
  run: string;
  /** truncation: message lines in dropped.jsonl */
  messages?: number;
  /** truncation: the header's marker before this truncation (null: there was none) */
  prior?: { dropped: string; oldest_surviving_id: string; last_dropped_id: string; at_ms: string } | null;
  /** truncation: the marker's at_ms the truncation writes (decimal) */
  at_ms?: string;
  /** truncation: staged before the rewrite commits, held after */
  state?: 'staged' | 'held';
  /** truncation held as `record.jsonl` (the old inode): the dropped lines are bytes [from, to) */
  range?: { from: number; to: number };
}

/** The payload entry of an item (see the layout above). */
export function payloadOf(m: Pick<ItemMeta, 'kind' | 'range'>): string {
  return m.kind === 'context' ? CONTEXT_PAYLOAD : m.range ? RECORD_PAYLOAD : DROPPED_PAYLOAD;
}

export function serializeMeta(m: ItemMeta): string {
  return JSON.stringify(m) + '\n';
}

/** Reads a sidecar; undefined when it is not one (never throws). */
export function parseMeta(text: string): ItemMeta | undefined {
  let o: unknown;
  try {
    o = JSON.parse(text);
  } catch {
    return undefined;
  }
  // (a number, string or boolean has none of the fields below, so it is refused by them)
  if (o === null) return undefined;
  const m = o as Record<string, unknown>;
  const str = (k: string) => typeof m[k] === 'string' && m[k].length > 0;
  const int = (k: string) => typeof m[k] === 'number' && Number.isSafeInteger(m[k]) && m[k] >= 0;
  if (
    (m['kind'] !== 'context' && m['kind'] !== 'truncation') ||
    !str('store') ||
    !str('context') ||
    !int('removed_ms') ||
    !int('until_ms') ||
    !str('reason') ||
    !str('run')
  )
    return undefined;
  // A store or context name is one path segment (docs/design.md §R1): nothing else is ever put back.
  for (const k of ['store', 'context']) {
    const v = m[k] as string;
    if (v.includes('/') || v.startsWith('.') || v.includes('\0')) return undefined;
  }
  if (m['kind'] === 'truncation' && (!int('messages') || typeof m['at_ms'] !== 'string')) return undefined;
  if (m['range'] !== undefined) {
    const r = m['range'] as Record<string, unknown> | null;
    const ok = (v: unknown) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
    if (
      m['kind'] !== 'truncation' ||
      r === null ||
      !ok(r['from']) ||
      !ok(r['to']) ||
      (r['to'] as number) < (r['from'] as number)
    )
      return undefined;
  }
  return m as unknown as ItemMeta;
}

export function markerToMeta(t: TruncationMarker | undefined): NonNullable<ItemMeta['prior']> | null {
  return t
    ? {
        dropped: t.dropped.toString(),
        oldest_surviving_id: t.oldest_surviving_id,
        last_dropped_id: t.last_dropped_id,
        at_ms: t.at_ms.toString(),
      }
    : null;
}

/** One held item, wherever it is. */
export interface HeldItem {
  kind: HeldKind;
  /** `ses_…` id or context id */
  target: string;
  /** the sessions root (path) or record store (name) it came from */
  origin: string;
  untilMs: number;
  /** undefined for sessions (the name carries only the deadline) */
  removedMs: number | undefined;
  bytes: number;
  /** the directory holding `entry` (a sessions root, or `<home>/gc/quarantine`) */
  parent: string;
  /** its name in `parent` */
  entry: string;
  reason?: string;
  /** truncation: message lines held */
  messages?: number;
  /** the murmur-gc run (its audit session id) that held it, when known: the item's sidecar, or the registry's record of a session's hold */
  run?: string;
}

export const heldKey = (i: { parent: string; entry: string }): string => `${i.parent}/${i.entry}`;

/** Gone for good once its window has passed. */
export function isExpired(untilMs: number, nowMs: number): boolean {
  return untilMs <= nowMs;
}

/** Code-unit order of two strings (as `<` compares them), -1, 0 or 1. */
const byText = (x: string, y: string): number => (x < y ? -1 : x > y ? 1 : 0);

/** Held items oldest first (the one whose window ends first), ties by target then entry. */
export function oldestFirst<T extends { untilMs: number; target: string; entry: string }>(items: T[]): T[] {
  return [...items].sort((a, b) => a.untilMs - b.untilMs || byText(a.target, b.target) || byText(a.entry, b.entry));
}

/**
 * The header a restore writes. `current` is the record's header now; `restoredMessages` the
 * message lines put back; `prior` the marker before the oldest truncation restored. `dropped`
 * goes down by what was restored, and when it reaches 0 the marker is removed (as the runtime
 * writes a header that was never truncated); otherwise the prior marker's ids and time stand.
 */
export function restoredMarker(
  current: TruncationMarker | undefined,
  restoredMessages: number,
  prior: ItemMeta['prior'],
): TruncationMarker | undefined {
  const left = (current?.dropped ?? 0n) - BigInt(restoredMessages);
  if (left <= 0n) return undefined;
  if (prior)
    return {
      dropped: left,
      oldest_surviving_id: prior.oldest_surviving_id,
      last_dropped_id: prior.last_dropped_id,
      at_ms: BigInt(prior.at_ms),
    };
  // Truncated earlier than anything held: the ids of that older cut are unknown here; keep the
  // current marker's time and ids, with the count corrected.
  return current ? { ...current, dropped: left } : undefined;
}

/**
 * The held truncations a restore puts back, oldest first: the chain ending at the marker the
 * record carries now (`currentAtMs`, decimal), each item found by the `prior.at_ms` of the one
 * after it. Empty when no held item carries the record's marker (nothing can go back in order).
 * Among items with the same `at_ms` the newest hold counts.
 */
export function restoreChain<T extends { meta: Pick<ItemMeta, 'at_ms' | 'prior' | 'removed_ms'> }>(
  items: T[],
  currentAtMs: string | undefined,
): T[] {
  const byAt = new Map<string, T>();
  for (const i of [...items].sort((a, b) => a.meta.removed_ms - b.meta.removed_ms))
    if (i.meta.at_ms !== undefined) byAt.set(i.meta.at_ms, i);
  const out: T[] = [];
  const seen = new Set<string>();
  for (let at = currentAtMs; at !== undefined && !seen.has(at);) {
    seen.add(at);
    const i = byAt.get(at);
    if (!i) break;
    out.unshift(i);
    at = i.meta.prior?.at_ms;
  }
  return out;
}
