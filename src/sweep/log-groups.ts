// The skips, errors and per-item warnings of one sweep, logged one line per cause.
// Guarantees:
// - Each item is logged at debug when it happens (its code, target, detail and fields).
// - When the sweep ends, one line per (level, code, place) — the place being the sessions root,
//   the record store, or else the directory the target is in — gives the count and the first
//   TARGETS_SHOWN targets ("and N more"): at warn for skips and warnings, at error for errors.
//   The report (stdout, --json) keeps every item.
// - The normal state (a live session, a context a live session uses, a protected item kept
//   although a rule condemns it) is never a warning: it is logged at debug only (the report and
//   the summary line count it).
// - A cause with a single item is logged as that item (its fields and detail), as it happened.
// See docs/daemon.md "Reading the journal".
import { dirname } from 'node:path';
import type { Logger } from '../log.js';

/** How many targets a grouped line names before "and N more". */
export const TARGETS_SHOWN = 3;

export interface NotedItem {
  /** `normal`: the normal state (src/errors.ts NORMAL_CODES): logged at debug only, never grouped at warn */
  level: 'warn' | 'error' | 'normal';
  code: string;
  target: string;
  detail: string;
  /** Extra fields of the item's own line (paths, sizes, pids): logged as they are for a single item. */
  fields?: Record<string, unknown>;
}

/** Where an item belongs: a sessions root, a record store (by name), or a directory. */
export interface Place {
  kind: 'root' | 'record' | 'path';
  name: string;
}

/** Collects one sweep's noted items; `flush` logs them grouped (and forgets them). */
export class GroupedLog {
  private items: NotedItem[] = [];

  constructor(private readonly log: Logger) {}

  note(item: NotedItem): void {
    this.items.push(item);
    this.log.debug({ code: item.code, target: item.target, ...item.fields }, item.detail);
  }

  /** One line per (level, code, place), in the order each cause first occurred. */
  flush(placeOf: (target: string) => Place): void {
    const groups = new Map<string, { place: Place; items: NotedItem[] }>();
    for (const item of this.items) {
      if (item.level === 'normal') continue;
      const place = placeOf(item.target);
      const key = `${item.level}\0${item.code}\0${place.kind}\0${place.name}`;
      let g = groups.get(key);
      if (!g) groups.set(key, (g = { place, items: [] }));
      g.items.push(item);
    }
    this.items = [];
    for (const { place, items } of groups.values()) {
      const first = items[0]!;
      const emit = first.level === 'error' ? this.log.error.bind(this.log) : this.log.warn.bind(this.log);
      if (items.length === 1) {
        emit({ code: first.code, target: first.target, ...first.fields }, first.detail);
        continue;
      }
      const shown = items.slice(0, TARGETS_SHOWN).map((i) => relativeTo(place, i.target));
      const more = items.length - shown.length;
      const where = place.kind === 'record' ? `record store ${place.name}` : place.name;
      emit(
        {
          code: first.code,
          count: items.length,
          [place.kind]: place.name,
          targets: items.slice(0, TARGETS_SHOWN).map((i) => i.target),
        },
        `${items.length} items in ${where} [${first.code}]: ${shown.join(', ')}${more > 0 ? ` and ${more} more` : ''}; the first: ${first.detail}`,
      );
    }
  }
}

/** A target as shown in a grouped line: relative to its root or store when it is inside it. */
function relativeTo(place: Place, target: string): string {
  if (place.kind === 'record') {
    if (target.startsWith(`${place.name}/`)) return target.slice(place.name.length + 1);
    const i = target.indexOf(`/${place.name}/`);
    return i >= 0 ? target.slice(i + place.name.length + 2) : target;
  }
  if (target.startsWith(`${place.name}/`)) return target.slice(place.name.length + 1);
  return target;
}

/**
 * The place of a target: the longest sessions root holding it; a record store (`store/ctx`
 * targets, or a path under `<home>/conversations/<store>`); else the directory it is in (the home
 * itself stays the home).
 */
export function placeOf(target: string, roots: readonly string[], home: string): Place {
  if (!target.startsWith('/')) {
    const i = target.indexOf('/');
    return { kind: 'record', name: i > 0 ? target.slice(0, i) : target };
  }
  let best: string | undefined;
  for (const r of roots) {
    if ((target === r || target.startsWith(`${r}/`)) && (best === undefined || r.length > best.length)) best = r;
  }
  if (best !== undefined) return { kind: 'root', name: best };
  const conv = `${home}/conversations/`;
  if (target.startsWith(conv)) {
    const store = target.slice(conv.length).split('/')[0];
    if (store) return { kind: 'record', name: store };
  }
  return { kind: 'path', name: target === home ? home : dirname(target) };
}
