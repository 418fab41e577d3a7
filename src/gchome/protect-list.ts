// The protection list, pure: the items murmur-gc must not act on until the operator releases
// them (`<home>/gc/protected.json`; docs/protect.md).
// Guarantees:
// - An item is keyed by what it is and where: a session by its sessions root (absolute path) and
//   `ses_` id, a context by its record store and context id. The same id elsewhere is another item.
// - Parsing never trusts the file: anything that is not a JSON object of the known version with an
//   `items` array is "not a protection list" (undefined); an entry with a missing or ill-typed
//   field is dropped, never guessed. Serialising and parsing round-trip.
// - Holds ids, paths, store names, times and the operator's note — never record content.

import { isSessionName } from '../runtime/ids.js';
import type { ProtectedItem } from '../schema/json-schemas.js';

export const PROTECT_FILE = 'protected.json';
export const PROTECT_VERSION = 1;
/** The file is never read past this (a garbage or planted huge file is refused, not slurped). */
export const PROTECT_LIMIT = 4 << 20;

/** An item of the list: what `protection ls --json` shows of it (src/schema/json-schemas.ts), under the file's keys. */
export type { ProtectedItem };
export type ProtectedKind = ProtectedItem['kind'];

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A session id (`ses_` and at least 12 hex digits, as the sweep ranks sessions) is a session; anything else a context. */
export function kindOf(target: string): ProtectedKind {
  return isSessionName(target) ? 'session' : 'context';
}

export function sameItem(
  a: Pick<ProtectedItem, 'kind' | 'target' | 'where'>,
  b: Pick<ProtectedItem, 'kind' | 'target' | 'where'>,
): boolean {
  return a.kind === b.kind && a.target === b.target && a.where === b.where;
}

/** The items of a protection list, or undefined when `text` is not one. */
export function parseProtected(text: string): ProtectedItem[] | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObj(v) || v['version'] !== PROTECT_VERSION || !Array.isArray(v['items'])) return undefined;
  const out: ProtectedItem[] = [];
  for (const e of v['items'] as unknown[]) {
    if (!isObj(e)) continue;
    const { kind, target, where, since_ms: since, by, note } = e;
    if (
      (kind !== 'session' && kind !== 'context') ||
      typeof target !== 'string' ||
      target === '' ||
      typeof where !== 'string' ||
      where === ''
    )
      continue;
    if (typeof since !== 'number' || !Number.isFinite(since)) continue;
    const item: ProtectedItem = { kind, target, where, since_ms: since, by: by === 'restore' ? 'restore' : 'protect' };
    if (typeof note === 'string') item.note = note;
    if (!out.some((o) => sameItem(o, item))) out.push(item);
  }
  return out;
}

export function protectedText(items: ProtectedItem[]): string {
  return JSON.stringify({ version: PROTECT_VERSION, items }, null, 2) + '\n';
}

/**
 * What the sweep's planners consult. `all` is set when the list could not be read: every item
 * then counts as protected (a damaged list never lets a sweep delete what it named).
 */
export class ProtectionSet {
  private readonly sessions = new Map<string, Set<string>>();
  private readonly contexts = new Map<string, Set<string>>();
  readonly all: boolean;
  readonly size: number;
  /** the list's items, as read (their notes and times: `murmur-gc explain`) */
  readonly items: readonly ProtectedItem[];

  constructor(items: ProtectedItem[], all = false) {
    this.all = all;
    this.size = items.length;
    this.items = items;
    for (const i of items) {
      const m = i.kind === 'session' ? this.sessions : this.contexts;
      const s = m.get(i.where) ?? new Set<string>();
      s.add(i.target);
      m.set(i.where, s);
    }
  }

  static readonly none = new ProtectionSet([]);

  /** Is session `name` of sessions root `root` (absolute) protected? */
  session(root: string): (name: string) => boolean {
    const s = this.sessions.get(root);
    return (name) => this.all || (s?.has(name) ?? false);
  }

  /** Is context `context` of record store `store` protected? */
  context(store: string): (context: string) => boolean {
    const s = this.contexts.get(store);
    return (context) => this.all || (s?.has(context) ?? false);
  }
}
