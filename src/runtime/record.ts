// The conversation record's line formats (docs/design.md §R1, §R5), pure: no fs.
//
// Invariants kept here:
// - A *message line* is exactly what the runtime's `parse_message_line` accepts: a line that
//   serde_json reads as an object whose (last) `role` is a string (src/json/scan.ts holds
//   the grammar: depth limit 128, no out-of-range numbers, no lone surrogates, last duplicate key
//   wins). The rule is applied to every line alike — the runtime does not special-case the header.
// - A record that is not valid UTF-8 ANYWHERE is unreadable to the runtime (`read_to_string`
//   fails): it has no header, no messages, no owner. That is a file-level property checked by the
//   readers (src/runtime/jsonl.ts); the line functions here assume a UTF-8 file.
// - The header is the first line when serde_json reads it as a value and that value deserializes
//   as the runtime's `RecordHeader` with `type` = `murmur.record`: u64 fields must be plain
//   non-negative integers below 2^64 (`1.0`, `1e3`, `-0` are not u64), `truncated: null` means
//   "absent", extra keys are tolerated (repeated too), and — serde's sequence form of a struct —
//   `["murmur.record", capsule, created_ms(, truncated)]` is a header too. A line repeating one of
//   the header's own fields (`type`, `capsule`, `created_ms`, `truncated`, or one of the marker's
//   inside `truncated`), however spelled, is NOT a header: the typed struct refuses a duplicate
//   field (docs/design.md §R5). The record then has no owner, as a header-less one.
// - Header integers are exact: `created_ms`, `dropped`, `at_ms` are bigints, written back digit
//   for digit (u64 max included).
// - `serializeHeader` writes the runtime's bytes: compact JSON, declaration key order, `truncated`
//   omitted when absent, `\n`-terminated, whatever the key order of the object it is given.
import { isUtf8 } from 'node:buffer';
import {
  JsonScanner,
  T_ARRAY,
  T_NULL,
  T_OBJECT,
  classifyMessage,
  jsonKeys,
  spanString,
  spanU64,
  type LineClass,
  type Span,
} from '../json/scan.js';

export type { LineClass } from '../json/scan.js';

export const RECORD_HEADER_TYPE = 'murmur.record';

/** The `truncated` marker of a record header (field order = the runtime's declaration order). */
export interface TruncationMarker {
  /** Cumulative count of messages dropped over the record's life (u64, exact). */
  dropped: bigint;
  /** `""` when the first kept message had no id. */
  oldest_surviving_id: string;
  /** `""` when the last dropped message had no id. */
  last_dropped_id: string;
  at_ms: bigint;
}

export interface RecordHeader {
  type: typeof RECORD_HEADER_TYPE;
  /** The owning capsule's manifest `name:`. */
  capsule: string;
  /** u64, exact. */
  created_ms: bigint;
  /** Absent until the first truncation. */
  truncated?: TruncationMarker;
}

// ---------------------------------------------------------------------------------------------
// Message lines
// ---------------------------------------------------------------------------------------------

/** Classifies one record line (without its `\n`) of a UTF-8 record. Never throws. */
export function classifyLine(line: Buffer): LineClass {
  return classifyMessage(line, 0, line.length);
}

/** The `id` of a message line when it is a string; undefined otherwise (also for non-messages). */
export function messageIdOf(line: Buffer): string | undefined {
  return classifyLine(line).id;
}

function isWellFormed(s: string): boolean {
  return (s as unknown as { isWellFormed(): boolean }).isWellFormed();
}

// ---------------------------------------------------------------------------------------------
// Header
// ---------------------------------------------------------------------------------------------

const HEADER_KEYS = jsonKeys('type', 'capsule', 'created_ms', 'truncated');
const MARKER_KEYS = jsonKeys('dropped', 'oldest_surviving_id', 'last_dropped_id', 'at_ms');
const headerScanner = new JsonScanner();
const markerScanner = new JsonScanner();

/**
 * serde derive's struct over a scanned value (the scan's wanted keys are exactly the struct's
 * fields): map fields, none of them repeated ("duplicate field"), or sequence items.
 */
function structFields(sc: JsonScanner, count: number, required: number): Span[] | undefined {
  if (sc.top === T_OBJECT) {
    if (sc.dupes !== 0) return undefined;
    const out = sc.fields.slice(0, count);
    for (let k = 0; k < required; k++) if ((out[k] as Span).type === 0) return undefined;
    return out;
  }
  if (sc.top === T_ARRAY) {
    if (sc.itemCount < required || sc.itemCount > count) return undefined;
    const out: Span[] = [];
    for (let k = 0; k < count; k++)
      out.push(k < sc.itemCount ? { ...(sc.items[k] as Span) } : { type: 0, start: 0, end: 0, escaped: false });
    return out;
  }
  return undefined;
}

/**
 * Parses a record's first line (without its `\n`) as the runtime does; undefined when it is not
 * a header (or not valid UTF-8). Never throws.
 */
export function parseHeaderLine(line: Buffer | string): RecordHeader | undefined {
  const buf = typeof line === 'string' ? Buffer.from(line, 'utf8') : line;
  if (typeof line !== 'string' && !isUtf8(buf)) return undefined;
  let k = 0;
  while (k < buf.length && (buf[k] === 0x20 || buf[k] === 0x09 || buf[k] === 0x0a || buf[k] === 0x0d)) k++;
  if (buf[k] !== 0x7b && buf[k] !== 0x5b) return undefined;
  const sc = headerScanner;
  if (!sc.scan(buf, 0, buf.length, HEADER_KEYS)) return undefined;
  const h = structFields(sc, 4, 3);
  if (!h) return undefined;
  const [tSpan, cSpan, crSpan, trSpan] = h as [Span, Span, Span, Span];
  const type = spanString(buf, tSpan);
  const capsule = spanString(buf, cSpan);
  const created = spanU64(buf, crSpan);
  if (type !== RECORD_HEADER_TYPE || capsule === undefined || created === undefined) return undefined;
  const header: RecordHeader = { type: RECORD_HEADER_TYPE, capsule, created_ms: created };
  if (trSpan.type !== 0 && trSpan.type !== T_NULL) {
    const ms = markerScanner;
    if (!ms.scan(buf, trSpan.start, trSpan.end, MARKER_KEYS)) return undefined;
    const m = structFields(ms, 4, 4);
    if (!m) return undefined;
    const [dSpan, oSpan, lSpan, aSpan] = m as [Span, Span, Span, Span];
    const dropped = spanU64(buf, dSpan);
    const oldest = spanString(buf, oSpan);
    const last = spanString(buf, lSpan);
    const at = spanU64(buf, aSpan);
    if (dropped === undefined || oldest === undefined || last === undefined || at === undefined) return undefined;
    header.truncated = { dropped, oldest_surviving_id: oldest, last_dropped_id: last, at_ms: at };
  }
  return header;
}

/**
 * The runtime's header bytes: compact JSON in declaration order + `\n`. Throws (TypeError /
 * RangeError) on a value the runtime could not read back: a wrong `type`, a string that is not
 * well-formed UTF-16, a number that is not a non-negative integer below 2^64.
 */
export function serializeHeader(h: RecordHeader): string {
  if (h.type !== RECORD_HEADER_TYPE) throw new TypeError(`header type must be ${RECORD_HEADER_TYPE}`);
  let s = `{"type":${str(h.type)},"capsule":${str(h.capsule)},"created_ms":${u64(h.created_ms, 'created_ms')}`;
  const t = h.truncated;
  if (t !== undefined) {
    s +=
      `,"truncated":{"dropped":${u64(t.dropped, 'truncated.dropped')}` +
      `,"oldest_surviving_id":${str(t.oldest_surviving_id)}` +
      `,"last_dropped_id":${str(t.last_dropped_id)}` +
      `,"at_ms":${u64(t.at_ms, 'truncated.at_ms')}}`;
  }
  return s + '}\n';
}

/**
 * The header a truncation writes (docs/design.md §R5): the existing header's `capsule` and
 * `created_ms` are kept (truncation never transfers ownership); without one, `fallbackCapsule`
 * and `nowMs`. `truncated.dropped` is cumulative; `at_ms` is now.
 */
export function nextHeader(
  existing: RecordHeader | undefined,
  fallbackCapsule: string,
  dropped: number,
  oldestSurvivingId: string,
  lastDroppedId: string,
  nowMs: number,
): RecordHeader {
  if (!Number.isSafeInteger(dropped) || dropped < 0) throw new RangeError(`dropped must be a non-negative integer`);
  if (!Number.isSafeInteger(nowMs) || nowMs < 0) throw new RangeError(`nowMs must be a non-negative integer`);
  return {
    type: RECORD_HEADER_TYPE,
    capsule: existing?.capsule ?? fallbackCapsule,
    created_ms: existing?.created_ms ?? BigInt(nowMs),
    truncated: {
      dropped: (existing?.truncated?.dropped ?? 0n) + BigInt(dropped),
      oldest_surviving_id: oldestSurvivingId,
      last_dropped_id: lastDroppedId,
      at_ms: BigInt(nowMs),
    },
  };
}

function str(s: string): string {
  if (typeof s !== 'string') throw new TypeError('header string field is not a string');
  if (!isWellFormed(s)) throw new RangeError('header string field holds a lone surrogate');
  // JSON.stringify escapes exactly what serde_json escapes for well-formed strings
  // (`"`, `\`, and C0 controls; \b \f \n \r \t short, the rest \u00xx lowercase).
  return JSON.stringify(s);
}

const U64_MAX = 18446744073709551615n;

function u64(n: bigint, name: string): string {
  if (typeof n !== 'bigint' || n < 0n || n > U64_MAX) {
    throw new RangeError(`${name} must be a non-negative integer below 2^64`);
  }
  return n.toString();
}
