// The sweep's report: the one JSON document of docs/design.md §8 and its human rendering.
// Guarantees: actions carry ids, names, counts, sizes and paths only — never record content;
// key names and reason words are the runtime's; the document is a plain JSON value.
// The human rendering is grouped (per sessions root / record store and reason, skips and errors
// by code), so it fits one screen whatever the number of actions; `verbose` adds every item,
// `quiet` keeps only the errors, one whole line each. Other lines fit the layout's width
// (src/layout.ts: 80 columns unless a terminal says otherwise). Real runs speak in the past
// tense, dry runs in the conditional; every action is told in its own words (src/sweep/voice.ts),
// the same the logs use.

import { fmtBytes, humanTime } from '../runtime/conversation-format.js';
import type { BudgetReport } from '../plan/budget.js';
import type { GcConfig } from '../config/types.js';
import { PLAIN, elidePath, fitLine, tilde, wrap, type Layout } from '../layout.js';
import { say, sayItem, wordsOf } from './voice.js';
import { NORMAL_CODES } from '../errors.js';
import type { Action, HeldAt, KeptAside, SweepReport } from '../schema/json-schemas.js';
import { groupBy } from '../group-by.js';

// The report's types are its schema's (src/schema/json-schemas.ts).
export type {
  Action,
  HeldAt,
  KeptAside,
  StopInfo,
  SweepReport,
  Problem as Skipped,
  Problem as ErrorEntry,
} from '../schema/json-schemas.js';

export function countByKind(actions: Action[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const a of actions) out[a.kind] = (out[a.kind] ?? 0) + 1;
  return out;
}

/**
 * What an action did, as one word for counts: its kind, with a removal the undo window held
 * counted apart (`hold_session`, `hold_record`, `hold_child_workdir`, `hold_work_log`) — no count
 * ever calls a hold a removal.
 */
export function fateKind(a: Action): string {
  switch (a.kind) {
    case 'remove_session':
    case 'remove_record':
    case 'remove_child_workdir':
    case 'remove_work_log':
      return a.held ? a.kind.replace('remove_', 'hold_') : a.kind;
    default:
      return a.kind;
  }
}

/** Actions counted by fateKind. */
export function countByFate(actions: Action[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const a of actions) {
    const k = fateKind(a);
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}

/** The one size style of every murmur-gc output (`812 B`, `1.2 KiB`, `2.0 GiB`). */
export function formatBytes(n: number): string {
  return fmtBytes(Math.max(0, Math.round(n)));
}

/** `3 min ago`, `in 12 min`, `just now` — the distance between `ms` and `nowMs`. */
export function relativeTime(ms: number, nowMs: number): string {
  const d = ms - nowMs;
  const a = Math.abs(d);
  if (a < 5_000) return 'just now';
  const words =
    a < 60_000
      ? `${Math.round(a / 1000)} s`
      : a < 3_600_000
        ? `${Math.round(a / 60_000)} min`
        : a < 2 * 86_400_000
          ? `${Math.round(a / 3_600_000)} h`
          : `${Math.round(a / 86_400_000)} days`;
  return d < 0 ? `${words} ago` : `in ${words}`;
}

/** `2026-11-30 20:16:44 UTC (3 min ago)`: an absolute time marked as UTC, and how far it is. */
export function formatWhen(ms: number, nowMs: number): string {
  return `${humanTime(Math.max(0, ms))} (${relativeTime(ms, nowMs)})`;
}

export function plural(n: number, one: string, many = one + 's'): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** Columns padded to the widest cell of each column (numbers right-aligned); no trailing spaces. */
export function formatTable(rows: string[][], rightAligned: ReadonlySet<number> = new Set(), indent = '  '): string[] {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
  return rows.map((r) =>
    (
      indent + r.map((c, i) => (rightAligned.has(i) ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0))).join('  ')
    ).trimEnd(),
  );
}

export type Verbosity = 'quiet' | 'normal' | 'verbose';

/** At most this many error lines in the default output; -v lists all, --json has all. */
const ERRORS_SHOWN = 10;

function byCode(items: { code: string }[]): string {
  const m = new Map<string, number>();
  for (const i of items) m.set(i.code, (m.get(i.code) ?? 0) + 1);
  return [...m.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .map(([c, n]) => `${c} ${n}`)
    .join(', ');
}

/** One action of `-v`: the verb and the item, its details after it (or wrapped below it when the line would pass the width). */
function itemLines(a: Action, dry: boolean, L: Layout): string[] {
  const v = sayItem(dry, wordsOf(a));
  switch (a.kind) {
    case 'remove_session':
      return fitLine(
        `  ${v} `,
        `${a.root}/${a.target}`,
        `  (${a.reason}, ${formatBytes(a.bytes)}${heldWords(a.held)})`,
        L,
        24,
        true,
      );
    case 'remove_record':
      return fitLine(
        `  ${v} `,
        `${a.record}/${a.target}`,
        `  (${a.reason}, ${formatBytes(a.bytes)}${heldWords(a.held)})`,
        L,
        24,
        true,
      );
    case 'remove_orphan_workdir':
      return fitLine(
        `  ${v} `,
        a.path,
        `  (children.max_age: last written ${formatDuration(a.age_ms)} ago, ${formatBytes(a.bytes)})`,
        L,
        24,
        true,
      );
    case 'remove_child_workdir':
    case 'remove_work_log':
      return fitLine(
        `  ${v} `,
        a.path,
        `  (with session ${a.parent_session}, ${a.reason}, ${formatBytes(a.bytes)}${heldWords(a.held)})`,
        L,
        24,
        true,
      );
    case 'truncate_record':
      return fitLine(
        `  ${v} `,
        `${a.record}/${a.target}`,
        `  (${a.reason}: ${plural(a.messages_dropped, 'message')} dropped, ${a.kept} kept${heldWords(a.held)})`,
        L,
        24,
        true,
      );
    case 'purge_quarantine':
      if (a.held_kind === 'unreadable')
        return fitLine(
          `  ${v} held item `,
          a.path,
          `  (its item.json cannot be read; the window in its name passed, ${formatBytes(a.bytes)})`,
          L,
          24,
          true,
        );
      return fitLine(
        `  ${v} held ${a.held_kind} `,
        `${a.origin}/${a.target}`,
        `  (${a.reason === 'expired' ? 'its undo window passed' : `${a.reason}: purged for space before its window passed`}, ${formatBytes(a.bytes)})`,
        L,
        24,
        true,
      );
    case 'shell_lost':
      return wrap(
        `${v} background command ${a.work_id} of session ${a.target} (binary ${tilde(a.binary, L.homeDir)}, detached at ${humanTime(a.detached_at_ms)}) — no exit code, output or log exists for it`,
        L.width,
        '  ',
      );
    case 'repair_torn_tail':
      return fitLine(`  ${v} record `, `${a.record}/${a.target}`, '', L, 24, true);
    case 'chmod':
      return fitLine(`  ${v} `, a.path, `  ${a.from} -> ${a.to}`, L, 24, true);
    case 'remove_debris':
      return fitLine(`  ${v} `, a.path, `  (${a.code}: ${a.detail})`, L, 24, true);
  }
}

/** A skipped item or an error: the target, then `[code] detail` (wrapped below it when long). */
function problemLines(
  word: string,
  p: { target: string; code: string; detail: string },
  L: Layout,
  whole = false,
): string[] {
  return fitLine(`  ${word} `, p.target, `  [${p.code}] ${p.detail}`, L, 24, whole);
}

interface Group {
  what: string;
  place: string;
  reason: string;
  n: number;
  bytes: number;
  dropped: number;
  hasBytes: boolean;
}

/**
 * The grouped table: one heading per sessions root or record store (the path fitted to the width),
 * under it one row per (what, reason): items, size, messages dropped.
 */
function groupedLines(r: SweepReport, L: Layout): string[] {
  const dry = r.dry_run;
  const groups = new Map<string, Group>();
  const add = (key: string, what: string, place: string, reason: string, bytes: number | undefined, dropped = 0) => {
    const g = groups.get(key) ?? { what, place, reason, n: 0, bytes: 0, dropped: 0, hasBytes: bytes !== undefined };
    g.n++;
    g.bytes += bytes ?? 0;
    g.dropped += dropped;
    groups.set(key, g);
  };
  for (const a of r.actions) {
    const what = say(dry, wordsOf(a).row);
    switch (a.kind) {
      case 'remove_session':
        add(`${a.held ? 'sh' : 's'}\0${a.root}\0${a.reason}`, what, a.root, a.reason, a.bytes);
        break;
      case 'remove_record':
        add(`${a.held ? 'rh' : 'r'}\0${a.record}\0${a.reason}`, what, `record store ${a.record}`, a.reason, a.bytes);
        break;
      case 'remove_orphan_workdir':
        add(`o\0${a.root}`, what, a.root, a.reason, a.bytes);
        break;
      case 'remove_child_workdir':
      case 'remove_work_log':
        add(`${a.held ? 'bh' : 'b'}\0${a.kind}\0${a.root}\0${a.reason}`, what, a.root, a.reason, a.bytes);
        break;
      case 'truncate_record':
        add(`t\0${a.record}\0${a.reason}`, what, `record store ${a.record}`, a.reason, a.bytes, a.messages_dropped);
        break;
      case 'shell_lost':
        add(`l\0${a.root}`, what, a.root, 'shell_lost', undefined);
        break;
      case 'repair_torn_tail':
        add(`x\0${a.record}`, what, `record store ${a.record}`, 'torn_tail', undefined);
        break;
      case 'chmod':
        add('c', what, 'modes and leftovers', '0700/0600', undefined);
        break;
      case 'purge_quarantine':
        add(`q\0${a.reason}`, what, 'the quarantine', a.reason, a.bytes);
        break;
      case 'remove_debris':
        add(`d\0${a.code}`, what, 'modes and leftovers', a.code, a.bytes);
        break;
    }
  }
  if (groups.size === 0) return [];
  const places = groupBy(groups.values(), (g) => g.place);
  // One table for every row, so the columns line up across headings; headings are lines of their own.
  const rows: string[][] = [['', 'reason', 'items', 'size', '']];
  const marks: (string | undefined)[] = [undefined];
  for (const [place, gs] of places) {
    rows.push([]);
    marks.push(place);
    for (const g of gs) {
      rows.push([
        g.what,
        g.reason,
        String(g.n),
        g.hasBytes ? formatBytes(g.bytes) : '',
        g.dropped > 0 ? `${g.dropped} dropped` : '',
      ]);
      marks.push(undefined);
    }
  }
  const table = formatTable(rows, new Set([2, 3]), '    ');
  return table.map((line, i) => {
    const place = marks[i];
    return place === undefined ? line : `  ${elidePath(tilde(place, L.homeDir), L.width - 2)}`;
  });
}

/** Human report for the terminal (stdout), fitted to `layout` (80 columns when not a terminal). */
export function renderHuman(
  r: SweepReport,
  verbosity: Verbosity = 'normal',
  layout: Layout = PLAIN,
  nowMs = Date.now(),
): string {
  const L = layout;
  // -q: one whole line per error (what a script greps), whatever the width.
  if (verbosity === 'quiet') return r.errors.map((e) => `  error ${e.target}  [${e.code}] ${e.detail}\n`).join('');
  const lines: string[] = [];
  const prose = (text: string) => lines.push(...wrap(text, L.width, '', '  '));
  const what =
    r.forecast_ms !== undefined
      ? `forecast for ${formatWhen(r.forecast_ms, nowMs)}, a dry run (nothing is changed)`
      : say(r.dry_run, ['dry run (nothing is changed)', 'sweep']);
  prose(`murmur-gc ${what} — home ${tilde(r.home, L.homeDir)}`);
  if (r.message) prose(r.message);
  if (!r.home_exists && r.actions.length === 0 && r.errors.length === 0 && r.skipped.length === 0 && r.message) {
    return lines.join('\n') + '\n';
  }
  if (verbosity === 'verbose') {
    // -v lists every item with its path whole (what a script or a person reads back)
    for (const a of r.actions) lines.push(...itemLines(a, r.dry_run, L));
    for (const s of r.skipped) lines.push(...problemLines('skipped', s, L, true));
    lines.push(...r.errors.flatMap((e) => problemLines('error', e, L, true)));
  } else {
    lines.push(...groupedLines(r, L));
    const normal = r.skipped.filter((x) => NORMAL_CODES.has(x.code));
    const other = r.skipped.filter((x) => !NORMAL_CODES.has(x.code));
    if (normal.length)
      lines.push(
        ...wrap(`kept although a rule condemns them: ${byCode(normal)} (-v lists them)`, L.width, '  ', '    '),
      );
    if (other.length) lines.push(...wrap(`skipped: ${byCode(other)} (-v lists them)`, L.width, '  ', '    '));
    if (r.errors.length) {
      lines.push(...wrap(`errors: ${byCode(r.errors)}`, L.width, '  ', '    '));
      const shown = r.errors.slice(0, ERRORS_SHOWN).flatMap((e) => problemLines('error', e, L));
      lines.push(...shown);
      if (r.errors.length > ERRORS_SHOWN)
        lines.push(
          ...wrap(
            `… and ${r.errors.length - ERRORS_SHOWN} more errors (-v lists them all, --json has them all)`,
            L.width,
            '  ',
            '    ',
          ),
        );
    }
  }
  const c = countByFate(r.actions);
  const parts = [
    plural(c['remove_session'] ?? 0, 'session') + ' removed',
    ...(c['hold_session'] ? [plural(c['hold_session'], 'session') + ' held'] : []),
    plural(c['remove_record'] ?? 0, 'record') + ' removed',
    ...(c['hold_record'] ? [plural(c['hold_record'], 'record') + ' held'] : []),
    plural(c['truncate_record'] ?? 0, 'record') + ' truncated',
    plural(c['shell_lost'] ?? 0, 'lost command') + ' reconciled',
    plural(c['chmod'] ?? 0, 'mode') + ' fixed',
  ];
  if (c['remove_orphan_workdir']) parts.push(plural(c['remove_orphan_workdir'], 'orphaned child workdir') + ' removed');
  if (c['remove_child_workdir']) parts.push(plural(c['remove_child_workdir'], 'child workdir') + ' removed');
  if (c['hold_child_workdir']) parts.push(plural(c['hold_child_workdir'], 'child workdir') + ' held');
  if (c['remove_work_log']) parts.push(plural(c['remove_work_log'], 'work log') + ' removed');
  if (c['hold_work_log']) parts.push(plural(c['hold_work_log'], 'work log') + ' held');
  if (c['purge_quarantine']) parts.push(plural(c['purge_quarantine'], 'held item') + ' purged');
  if (c['remove_debris']) parts.push(plural(c['remove_debris'], 'leftover') + ' cleaned');
  if (c['repair_torn_tail']) parts.push(plural(c['repair_torn_tail'], 'torn line') + ' terminated');
  const skippedOther = r.skipped.filter((x) => !NORMAL_CODES.has(x.code)).length;
  prose(
    `${say(r.dry_run, ['Would have: ', 'Done: '])}${parts.join(', ')}; ${formatBytes(r.bytes_freed)} ${say(r.dry_run, ['to free', 'freed'])}; ${plural(skippedOther, 'item')} skipped; ${plural(r.errors.length, 'error')}.`,
  );
  prose(
    `Scanned ${plural(r.inventory.sessions_roots, 'sessions root')}, ${plural(r.inventory.sessions, 'session')}, ${plural(r.inventory.records, 'conversation record')}${scanTime(r)}.`,
  );
  if (r.budget) for (const b of budgetLines(r.budget, r.dry_run)) prose(tildeAll(b, L));
  const q = r.quarantine;
  if (q && (q.held > 0 || q.purged > 0)) {
    // Held: the bytes of what this sweep held, as its acts measured them (a dry run the same);
    // `quarantine ls` counts the window's own files too.
    const heldPart =
      q.held > 0
        ? `${plural(q.held, 'item')} ${say(r.dry_run, ['would be held', 'held'])} for ${formatWindow(q.window_secs)} (${formatBytes(q.held_bytes)}; murmur-gc restore puts one back)`
        : '';
    const purgedPart =
      q.purged > 0
        ? `${plural(q.purged, 'held item')} ${say(r.dry_run, ['would be deleted', 'deleted'])} for good (${formatBytes(q.purged_bytes)})`
        : '';
    prose(`Quarantine: ${[heldPart, purgedPart].filter((x) => x !== '').join('; ')}.`);
  }
  for (const o of r.orphans ?? []) {
    prose(
      `Orphaned child workdirs in ${tilde(o.root, L.homeDir)}/children: ${o.count} (${formatBytes(o.bytes)}, the oldest last written ${humanTime(Math.max(0, o.oldest_ms))}); ${o.policy_secs === null ? 'no children.max_age policy: kept' : `${o.removed} ${say(r.dry_run, ['would be removed', 'removed'])} under children.max_age`}.`,
    );
  }
  if (r.kept) prose(tildeAll(keptLine(r.kept, r.forecast_ms ?? (r.dry_run ? nowMs : r.started_ms + r.duration_ms)), L));
  if (r.audit)
    prose(`Audit trace: ${tilde(r.home, L.homeDir)}/gc/${r.audit}/trace.jsonl (murmur-gc history shows every sweep)`);
  return lines.join('\n') + '\n';
}

/**
 * ` in 3.1 s; the whole sweep took 5.0 s`: the time of the scan steps (`scan_*`), then the run's;
 * only the run's, said as such, when the report has no step timings.
 */
function scanTime(r: SweepReport): string {
  const scans = (r.steps ?? []).filter((s) => s.step.startsWith('scan_'));
  const whole = `the whole ${r.dry_run ? 'dry run' : 'sweep'} took ${formatDuration(r.duration_ms)}`;
  if (scans.length === 0) return `; ${whole}`;
  return ` in ${formatDuration(scans.reduce((n, s) => n + s.ms, 0))}; ${whole}`;
}

/** Every mention of the operator's home directory in `text` shown as `~`. */
function tildeAll(text: string, L: Layout): string {
  const h = L.homeDir;
  if (h === undefined || h === '' || h === '/') return text;
  return text
    .split(' ')
    .map((w) => tilde(w, h))
    .join(' ');
}

/** Paths a one-line mention of what is kept aside names at most (--json and status have them all). */
const KEPT_PATHS_SHOWN = 3;

/** The one line about what is kept aside (sweep report, status). */
export function keptLine(k: KeptAside, nowMs: number): string {
  const shown = k.paths.slice(0, KEPT_PATHS_SHOWN).join(', ');
  const more = k.paths.length > KEPT_PATHS_SHOWN ? ` and ${k.paths.length - KEPT_PATHS_SHOWN} more` : '';
  const since = k.oldest_ms !== null ? `, the oldest since ${formatWhen(k.oldest_ms, nowMs)}` : '';
  return `Kept aside: ${plural(k.items, 'directory', 'directories')} murmur-gc could not remove whole (${formatBytes(k.bytes)}${since}; another user's files or a mount inside): ${shown}${more} — each sweep tries again; remove what blocks it by hand.`;
}

function heldWords(h: HeldAt | undefined): string {
  return h ? `; held until ${humanTime(h.until_ms)}` : '';
}

/** `24h`, `90m`, `7d`, `45s`: a window as the config spells it. */
export function formatWindow(secs: number): string {
  if (secs % 86_400 === 0 && secs > 2 * 86_400) return `${secs / 86_400}d`;
  if (secs % 3600 === 0) return `${secs / 3600}h`;
  if (secs % 60 === 0) return `${secs / 60}m`;
  return `${secs}s`;
}

/** `812 ms`, `4.2 s`, `3 min 12 s`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}

/**
 * One line per budget that acted or is short (sizes measured before the sweep acted, once the
 * policies' takings are counted): a store whose budget held or removed items or is still over its
 * max_bytes, and keep_free when it was short before or after, or the reserve was released or put
 * back. A budget met without taking anything says nothing here (`--json` has every one under `budget`).
 */
export function budgetLines(b: BudgetReport, dry = false): string[] {
  const over = new Set(b.unmet.flatMap((u) => (u.store !== undefined ? [u.store] : [])));
  const out = b.stores
    .filter((s) => s.removed > 0 || s.held > 0 || s.held_purged > 0 || over.has(s.store))
    .map((s) => {
      const did = [
        ...(s.held > 0 ? [`${plural(s.held, 'item')} ${say(dry, ['would be held', 'held'])} for space`] : []),
        ...(s.removed > 0 || s.held === 0
          ? [`${plural(s.removed, 'item')} ${say(dry, ['would be removed', 'removed'])} for space`]
          : []),
        ...(s.held_purged > 0
          ? [
              `${plural(s.held_purged, 'of its held items', 'of its held items')} ${say(dry, ['would be purged', 'purged'])} for keep_free`,
            ]
          : []),
      ];
      return `Budget: ${s.label} ${formatBytes(s.bytes_before)} -> ${formatBytes(s.bytes_after)}${s.max_bytes !== null ? ` (max_bytes ${formatBytes(s.max_bytes)})` : ''}, ${did.join(', ')}`;
    });
  const k = b.keep_free;
  const i = k?.inodes;
  const inodesActed = i !== null && i !== undefined && (i.short > 0 || i.short_after > 0);
  if (
    k &&
    (k.short_bytes > 0 ||
      k.short_bytes_after > 0 ||
      inodesActed ||
      k.reserve.released_bytes > 0 ||
      k.reserve.released_inodes > 0 ||
      k.reserve.put_back ||
      k.reserve.put_back_inodes)
  ) {
    const r = k.reserve;
    const released =
      r.released_bytes > 0
        ? ` (${formatBytes(r.released_bytes)} of it from ${say(dry, ['the reserve a real run releases', 'releasing the reserve'])} ${r.path}, so the audit can be written)`
        : '';
    const room = r.room_bytes > 0 ? ` (+${formatBytes(r.room_bytes)} of room for the reserve)` : '';
    const inodes =
      i && inodesActed
        ? `; inodes: ${i.required} free wanted, ${i.free} free before${r.released_inodes > 0 ? ` (${r.released_inodes} of them from the reserve)` : ''}, ${i.short_after > 0 ? `still ${i.short_after} short` : 'met'}`
        : '';
    const live =
      k.largest_live.length > 0
        ? `; largest live sessions: ${k.largest_live.map((l) => `${l.path} (${formatBytes(l.bytes)})`).join(', ')}`
        : '';
    out.push(
      `Budget: keep_free ${formatBytes(k.required_bytes)}${room}, ${formatBytes(k.free_bytes)} free before${released}, ${k.short_bytes_after > 0 ? `still ${formatBytes(k.short_bytes_after)} short` : 'met'}${inodes}${putBackText(r, dry)}${live}`,
    );
  }
  return out;
}

function putBackText(r: { put_back: boolean; put_back_inodes: boolean }, dry: boolean): string {
  const what =
    r.put_back && r.put_back_inodes
      ? 'the reserve (bytes and inodes)'
      : r.put_back
        ? 'the reserve'
        : r.put_back_inodes
          ? "the reserve's inodes"
          : undefined;
  const verb = dry ? 'would be' : r.put_back_inodes && !r.put_back ? 'are' : 'is';
  return what ? `; ${what} ${verb} put back` : '';
}

/** The report of a sweep that has done nothing yet (the pipeline fills it; an empty dry run returns it as is). */
export function newReport(config: GcConfig, dryRun: boolean, nowMs: number): SweepReport {
  return {
    dry_run: dryRun,
    home: config.home,
    home_exists: false,
    started_ms: nowMs,
    duration_ms: 0,
    actions: [],
    skipped: [],
    errors: [],
    audit: null,
    bytes_freed: 0,
    inventory: {
      sessions_roots: 0,
      sessions: 0,
      records: 0,
      traces_read: 0,
      traces_cached: 0,
      records_counted: 0,
      records_count_cached: 0,
    },
    config: config.source ?? null,
    steps: [],
  };
}
