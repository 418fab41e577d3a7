// What `murmur-gc conversation ls|rm|truncate` print, pure (no fs): the runtime's `mur conversation`
// texts, columns, JSON shapes and refusal wordings (docs/design.md §R6), with `murmur-gc` in
// the hints where the runtime says `mur`.
//
// Decisions:
// - Widths are counted in Unicode scalar values, as Rust's `{:<24}` counts chars (not UTF-16
//   units); a longer value is never cut.
// - `fmtBytes` rounds an exact tie to even, as Rust's `{:.1}` does (1280 B is `1.2 KiB`, where
//   JS `toFixed` says `1.3`); the quotient is computed exactly in integers.
// - `fmtTimestamp` is the runtime's hand-rolled civil-from-days over UTC (no Date, no locale);
//   `humanTime` is the one way murmur-gc's own texts print a time (the same clock, marked UTC).
// - JSON key order: the runtime's serde_json maps serialize keys alphabetically and the reference
//   says not to rely on order; murmur-gc writes them in the documented (declaration) order —
//   `record, context_id, path, …` and the header's marker order — and that order is its contract.
// - Texts carry ids, counts and paths only; never message content.
import { idTimestampMs } from './ids.js';
import { stringifyExact } from '../json/exact.js';
import type { RecordHeader, TruncationMarker } from './record.js';

// ---- scalars ----------------------------------------------------------------------------------

const KIB = 1024n;
const MIB = 1024n * 1024n;
const GIB = 1024n * MIB;

/**
 * `<n> B` below 1 KiB, else `<x.y> KiB` below 1 MiB, `<x.y> MiB` below 1 GiB, else `<x.y> GiB`
 * (one decimal, ties to even). The runtime stops at MiB (`2048.0 MiB`); murmur-gc uses this one
 * style in every output (ls, sweep report, status, history), so 2 GiB reads `2.0 GiB` everywhere.
 */
export function fmtBytes(n: number): string {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`a byte count must be a non-negative integer, got ${n}`);
  if (n < 1024) return `${n} B`;
  const big = BigInt(n);
  const unit = big < MIB ? KIB : big < GIB ? MIB : GIB;
  const tenths = big * 10n;
  let q = tenths / unit;
  const twiceRem = (tenths % unit) * 2n;
  if (twiceRem > unit || (twiceRem === unit && q % 2n === 1n)) q += 1n;
  return `${q / 10n}.${q % 10n} ${unit === KIB ? 'KiB' : unit === MIB ? 'MiB' : 'GiB'}`;
}

/** Days since 1970-01-01 → proleptic Gregorian (year, month 1–12, day 1–31). */
function civilFromDays(days: number): [number, number, number] {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  return [y, m, d];
}

const two = (n: number): string => String(n).padStart(2, '0');

/** UTC wall clock `YYYY-MM-DD HH:MM:SS` of a non-negative ms timestamp (sub-second part dropped). */
export function fmtTimestamp(ms: number): string {
  if (!Number.isSafeInteger(ms) || ms < 0)
    throw new RangeError(`a timestamp must be a non-negative integer of ms, got ${ms}`);
  const secs = Math.floor(ms / 1000);
  const days = Math.floor(secs / 86_400);
  const sod = secs - days * 86_400;
  const [y, mo, d] = civilFromDays(days);
  return `${String(y).padStart(4, '0')}-${two(mo)}-${two(d)} ${two(Math.floor(sod / 3600))}:${two(Math.floor((sod % 3600) / 60))}:${two(sod % 60)}`;
}

/**
 * `YYYY-MM-DD HH:MM:SS UTC`: a point in time as every human-facing text of murmur-gc prints it
 * (sub-second part dropped; `formatWhen` in src/sweep/report.ts adds how far it is from now).
 * A value no wall clock reads — not finite, before the epoch, beyond 2^53 ms (a u64 from a
 * trace) — prints as its raw `<n> ms`, never throws. JSON output keeps its ISO / `*_ms` fields.
 */
export function humanTime(ms: number): string {
  const t = Math.floor(ms);
  return Number.isSafeInteger(t) && t >= 0 ? `${fmtTimestamp(t)} UTC` : `${ms} ms`;
}

/** ms since the epoch, or null when unknown or before the epoch (the runtime's `None`). */
export function lastTouchedMs(mtimeMs: number | undefined): number | null {
  if (mtimeMs === undefined || !Number.isFinite(mtimeMs) || mtimeMs < 0) return null;
  return Math.floor(mtimeMs);
}

function width(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

export function padRight(s: string, w: number): string {
  const n = width(s);
  return n >= w ? s : s + ' '.repeat(w - n);
}

export function padLeft(s: string, w: number): string {
  const n = width(s);
  return n >= w ? s : ' '.repeat(w - n) + s;
}

/**
 * Byte-wise (UTF-8) order, as Rust's `String` ordering (negative, 0 or positive). Allocates nothing
 * unless the strings first differ at or right after a UTF-16 surrogate: below U+D800 the first
 * differing code unit orders the UTF-8 bytes alike (a string that ends first is less); from there
 * (pairs, lone surrogates, which UTF-8 encoding makes U+FFFD) their encoded bytes are compared.
 */
export function compareUtf8(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  const x = i < a.length ? a.charCodeAt(i) : -1;
  const y = i < b.length ? b.charCodeAt(i) : -1;
  const afterHigh = i > 0 && (a.charCodeAt(i - 1) & 0xfc00) === 0xd800;
  if (x < 0xd800 && y < 0xd800 && !afterHigh) return x - y;
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

// ---- ls -----------------------------------------------------------------------------------------

/** One row of `conversation ls` (also its `--json` object, keys in this order). */
export interface RecordListing {
  record: string;
  context_id: string;
  /** path of conversation.jsonl */
  path: string;
  /** message lines only; the header never counts */
  messages: number;
  bytes: number;
  last_touched_ms: number | null;
  capsule: string | null;
  truncated: TruncationMarker | null;
}

/** The `truncated` marker in its declaration order, or null. */
export function markerJson(m: TruncationMarker | undefined): TruncationMarker | null {
  if (!m) return null;
  return {
    dropped: m.dropped,
    oldest_surviving_id: m.oldest_surviving_id,
    last_dropped_id: m.last_dropped_id,
    at_ms: m.at_ms,
  };
}

export function listingOf(input: {
  record: string;
  context: string;
  path: string;
  messages: number;
  bytes: number;
  mtimeMs: number | undefined;
  header: RecordHeader | undefined;
}): RecordListing {
  return {
    record: input.record,
    context_id: input.context,
    path: input.path,
    messages: input.messages,
    bytes: input.bytes,
    last_touched_ms: lastTouchedMs(input.mtimeMs),
    capsule: input.header?.capsule ?? null,
    truncated: markerJson(input.header?.truncated),
  };
}

/** Sorted by (record, context_id) in byte order, as the runtime lists them. */
export function sortListings<T extends { record: string; context_id: string }>(rows: T[]): T[] {
  return [...rows].sort((a, b) => compareUtf8(a.record, b.record) || compareUtf8(a.context_id, b.context_id));
}

/** Column widths of `ls`: the runtime's (24, 28, 8, 10, 20), widened to the longest value. */
export interface LsWidths {
  record: number;
  context: number;
  messages: number;
  size: number;
}

const RUNTIME_WIDTHS: LsWidths = { record: 24, context: 28, messages: 8, size: 10 };

export function lsWidths(rows: RecordListing[]): LsWidths {
  const w = { ...RUNTIME_WIDTHS };
  for (const r of rows) {
    w.record = Math.max(w.record, width(r.record));
    w.context = Math.max(w.context, width(r.context_id));
    w.messages = Math.max(w.messages, String(r.messages).length);
    w.size = Math.max(w.size, fmtBytes(r.bytes).length);
  }
  return w;
}

function lsLine(
  w: LsWidths,
  record: string,
  context: string,
  messages: string,
  size: string,
  touched: string,
  truncated: string,
): string {
  return `${padRight(record, w.record)} ${padRight(context, w.context)} ${padLeft(messages, w.messages)} ${padLeft(size, w.size)}  ${padRight(touched, 20)} ${truncated}`;
}

export function lsHeaderLine(w: LsWidths = RUNTIME_WIDTHS): string {
  return lsLine(w, 'RECORD', 'CONTEXT', 'MESSAGES', 'SIZE', 'LAST TOUCHED (UTC)', 'TRUNCATED');
}

export function lsRowLine(r: RecordListing, w: LsWidths = RUNTIME_WIDTHS): string {
  return lsLine(
    w,
    r.record,
    r.context_id,
    String(r.messages),
    fmtBytes(r.bytes),
    r.last_touched_ms === null ? '-' : fmtTimestamp(r.last_touched_ms),
    r.truncated ? `${r.truncated.dropped} dropped` : '-',
  );
}

/** The whole `ls` text (newline-terminated); `record` is the `--record` filter when given. */
export function renderLsText(rows: RecordListing[], record: string | undefined): string {
  if (rows.length === 0) {
    return record === undefined
      ? 'No conversation records.\n'
      : `No conversation records under record store '${record}'.\n`;
  }
  const w = lsWidths(rows);
  return [lsHeaderLine(w), ...rows.map((r) => lsRowLine(r, w))].join('\n') + '\n';
}

/** `ls --json`: always an array, on one line. */
export function renderLsJson(rows: RecordListing[]): string {
  return stringifyExact(rows) + '\n';
}

export { stringifyExact };

// ---- ls --message ---------------------------------------------------------------------------

export type MessageLocation =
  | { record: string; context_id: string; path: string; status: 'present'; position: number; total: number }
  | {
      record: string;
      context_id: string;
      path: string;
      status: 'truncated';
      dropped: bigint;
      oldest_surviving_id: string;
      last_dropped_id: string;
    };

export type LocateAnswer =
  | { status: 'present'; position: number; total: number }
  | { status: 'truncated'; dropped: bigint; oldest_surviving_id: string; last_dropped_id: string }
  | { status: 'unknown' };

/**
 * Reference §5.4 for one record: present (1-based position of the last line carrying the id,
 * total = max(position, messages)); else truncated when the header's marker exists and the id's
 * uuid-v7 time is at or before that of `last_dropped_id`; else unknown (also when either id's
 * time cannot be read). `last_dropped_id` is kept for the text (not part of the JSON shape).
 */
export function locateAnswer(
  msgId: string,
  scan: { position: number | undefined; messages: number; header: RecordHeader | undefined },
): LocateAnswer {
  if (scan.position !== undefined)
    return { status: 'present', position: scan.position, total: Math.max(scan.position, scan.messages) };
  const marker = scan.header?.truncated;
  if (!marker) return { status: 'unknown' };
  const minted = idTimestampMs(msgId, 'msg_');
  const last = idTimestampMs(marker.last_dropped_id, 'msg_');
  if (minted === undefined || last === undefined || minted > last) return { status: 'unknown' };
  return {
    status: 'truncated',
    dropped: marker.dropped,
    oldest_surviving_id: marker.oldest_surviving_id,
    last_dropped_id: marker.last_dropped_id,
  };
}

export function locationOf(
  where: { record: string; context_id: string; path: string },
  a: LocateAnswer,
): MessageLocation | undefined {
  const base = { record: where.record, context_id: where.context_id, path: where.path };
  if (a.status === 'present') return { ...base, status: 'present', position: a.position, total: a.total };
  if (a.status === 'truncated')
    return {
      ...base,
      status: 'truncated',
      dropped: a.dropped,
      oldest_surviving_id: a.oldest_surviving_id,
      last_dropped_id: a.last_dropped_id,
    };
  return undefined;
}

/** The header names this id as the last message its truncations dropped: a fact, not an inference. */
function droppedExactly(msgId: string, l: MessageLocation): boolean {
  return l.status === 'truncated' && l.last_dropped_id === msgId;
}

/**
 * The text answer says only what is true. `present` and a record whose header names the id as
 * its `last_dropped_id` are facts, in mur's words ("was dropped from"). Any other `truncated`
 * answer is an inference from mint order alone (the id is older than the last message dropped; a
 * record does not list the ids it dropped): said so, once per record, and left out when a fact
 * already says where the id is. Records that cannot hold it (no truncation, or it is newer than
 * everything dropped) say nothing. The JSON keeps mur's answer (renderLocateJson).
 */
export function renderLocateText(msgId: string, locations: MessageLocation[]): string {
  if (locations.length === 0) return `unknown: ${msgId} is in no record on this host\n`;
  const known = locations.some((l) => l.status === 'present' || droppedExactly(msgId, l));
  const lines: string[] = [];
  for (const l of locations) {
    if (l.status === 'present')
      lines.push(`present:   ${msgId} is message ${l.position} of ${l.total} in ${l.record}/${l.context_id}`);
    else if (droppedExactly(msgId, l))
      lines.push(
        `truncated: ${msgId} was dropped from ${l.record}/${l.context_id} (${l.dropped} messages dropped; oldest surviving is ${l.oldest_surviving_id})`,
      );
    else if (!known) {
      lines.push(
        `truncated: ${msgId} is not in ${l.record}/${l.context_id}; if it ever was, it is among the ${l.dropped} messages dropped (by mint order: it is no newer than the last one dropped, ${l.last_dropped_id}; oldest surviving is ${l.oldest_surviving_id})`,
      );
    }
  }
  return lines.join('\n') + '\n';
}

export function renderLocateJson(msgId: string, locations: MessageLocation[]): string {
  const shaped = locations.map((l) =>
    l.status === 'present'
      ? l
      : {
          record: l.record,
          context_id: l.context_id,
          path: l.path,
          status: l.status,
          dropped: l.dropped,
          oldest_surviving_id: l.oldest_surviving_id,
        },
  );
  return (
    stringifyExact({ message_id: msgId, status: locations.length > 0 ? 'found' : 'unknown', locations: shaped }) + '\n'
  );
}

// ---- rm / truncate ----------------------------------------------------------------------------

export interface RemoveResult {
  action: 'remove';
  record: string;
  context_id: string;
  /** the context directory */
  path: string;
  messages: number;
  dry_run: boolean;
  /** With `quarantine:` on: where the context is held, until when (murmur-gc restore puts it back). */
  held?: { until_ms: number; path: string };
}

export interface TruncateResult {
  action: 'truncate';
  record: string;
  context_id: string;
  /** conversation.jsonl */
  path: string;
  dropped: number;
  kept: number;
  /** `""` when nothing was dropped or the message had no id (the runtime's outcome) */
  oldest_surviving_id: string;
  last_dropped_id: string;
  dry_run: boolean;
  /**
   * Present only when a writer kept racing the rewrite and some of its lines had to be appended
   * after newer ones (they are in the record): how many.
   */
  concurrent_append?: { lines_out_of_order: number };
  /**
   * Present only when processes that opened the record during the rewrite still held the replaced
   * file open for writing when it stopped waiting: their pids (what they write there is not in the record).
   */
  held_open_by?: number[];
  /** With `quarantine:` on: where the dropped lines are held, until when. */
  held?: { until_ms: number; path: string };
}

function heldText(h: { until_ms: number; path: string } | undefined, target: string, dry: boolean): string {
  return h
    ? `${dry ? 'would be held' : 'held'} in ${h.path} until ${humanTime(h.until_ms)} (murmur-gc restore ${target} puts it back)\n`
    : '';
}

export function renderRemoveText(r: RemoveResult): string {
  return `${r.dry_run ? 'would remove' : 'removed'} ${r.path} (${r.messages} messages)\n${heldText(r.held, r.context_id, r.dry_run)}`;
}

export function renderTruncateText(r: TruncateResult): string {
  if (r.dropped === 0) return `${r.path} already holds ${r.kept} messages; nothing dropped\n`;
  // "none lost" only when it was checked: no process still held the replaced file.
  const held = r.held_open_by && r.held_open_by.length > 0 ? r.held_open_by : undefined;
  const reorder = r.concurrent_append
    ? `warning[concurrent_append]: a writer kept appending during the rewrite; ${r.concurrent_append.lines_out_of_order} line(s) were placed after newer ones${held ? '' : ' (none lost)'}\n`
    : '';
  const kept = held
    ? `error[record_held_open]: ${held.length === 1 ? 'pid' : 'pids'} ${held.join(', ')} opened the record during the rewrite and still held the replaced file open for writing when it stopped waiting: lines written there from then on are not in the record\n`
    : '';
  const warn = reorder + kept;
  return `${r.dry_run ? 'would drop' : 'dropped'} ${r.dropped} messages from ${r.path} (${r.kept} kept; oldest surviving is ${r.oldest_surviving_id})\n${warn}${heldText(r.held, r.context_id, r.dry_run)}`;
}

/** Key order as declared: action, record, context_id, path, … , dry_run. */
export function renderResultJson(r: RemoveResult | TruncateResult): string {
  if (r.action === 'remove') {
    const o: RemoveResult = {
      action: 'remove',
      record: r.record,
      context_id: r.context_id,
      path: r.path,
      messages: r.messages,
      dry_run: r.dry_run,
      ...(r.held ? { held: r.held } : {}),
    };
    return JSON.stringify(o) + '\n';
  }
  const o: TruncateResult = {
    action: 'truncate',
    record: r.record,
    context_id: r.context_id,
    path: r.path,
    dropped: r.dropped,
    kept: r.kept,
    oldest_surviving_id: r.oldest_surviving_id,
    last_dropped_id: r.last_dropped_id,
    dry_run: r.dry_run,
    ...(r.concurrent_append
      ? { concurrent_append: { lines_out_of_order: r.concurrent_append.lines_out_of_order } }
      : {}),
    ...(r.held_open_by && r.held_open_by.length > 0 ? { held_open_by: [...r.held_open_by] } : {}),
    ...(r.held ? { held: r.held } : {}),
  };
  return JSON.stringify(o) + '\n';
}

// ---- refusals (docs/design.md §R6) ------------------------------------------------------------

export const CNV_NO_CONTEXT = 'E-CNV-001';
export const CNV_AMBIGUOUS = 'E-CNV-002';
export const CNV_BAD_KEEP = 'E-CNV-003';

export interface RefusalText {
  code: string;
  message: string;
  hint: string;
}

/** `conversationsRoot` is shown as given (the real path of `<home>/conversations/`). */
export function noContextRefusal(context: string, record: string | undefined, conversationsRoot: string): RefusalText {
  return {
    code: CNV_NO_CONTEXT,
    message:
      record === undefined
        ? `no context '${context}' in any record under ${conversationsRoot}`
        : `no context '${context}' under record store '${record}' in ${conversationsRoot}`,
    hint: '`murmur-gc conversation ls` lists every record and context on this host',
  };
}

/** `stores` in list order (at least two). */
export function ambiguousContextRefusal(context: string, stores: string[]): RefusalText {
  return {
    code: CNV_AMBIGUOUS,
    message: `context '${context}' is present under ${stores.length} record stores: ${stores.join(', ')}`,
    hint: `pass --record <NAME> to say which one, e.g. --record ${stores[0] ?? ''}`,
  };
}

export function badKeepRefusal(context: string): RefusalText {
  return {
    code: CNV_BAD_KEEP,
    message: '--keep must be at least 1',
    hint: `truncating a record to nothing is \`murmur-gc conversation rm ${context}\``,
  };
}

/** A context a live session uses (murmur-gc's own refusal; code `live_context`). */
export function liveContextRefusal(
  context: string,
  session: { id: string; root: string; why: string } | undefined,
  action: 'remove' | 'truncate',
): RefusalText {
  const who = session ? `live session ${session.id} in ${session.root} (${session.why})` : 'a live session';
  return {
    code: 'live_context',
    message: `context '${context}' is in use by ${who}; not ${action === 'remove' ? 'removed' : 'truncated'}`,
    hint: `wait for the session to end, or pass --force to ${action === 'remove' ? 'remove' : 'truncate'} it anyway (the session may keep appending to it)`,
  };
}
