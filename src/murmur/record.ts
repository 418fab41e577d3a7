// The conversation record's line formats (runtime reference §1.2, §5), pure: no fs.
//
// Invariants kept here:
// - A *message line* is a line that parses as a JSON object with a string `role`
//   (`conversation.rs::parse_message_line`); nothing else is ever a message. The rule is applied
//   to every line alike — the runtime does not special-case the header line, it simply never has
//   a `role` (so a hand-made "header" that also carries a string `role` is a message, as in the
//   runtime).
// - The header is the first line when it deserializes (serde derive, serde_json) as the runtime's
//   `RecordHeader` and its `type` is `murmur.record`. `parseHeaderLine` follows serde's rules, not
//   just JSON.parse's: u64 fields must be written as plain non-negative integers (`1.0`, `1e3`,
//   `-0` are not u64), a duplicated known field is an error, `truncated: null` means "absent",
//   extra keys are tolerated, and — serde's sequence form of a struct — a JSON array
//   `["murmur.record", capsule, created_ms(, truncated)]` is a header too.
// - `serializeHeader` writes the runtime's bytes: compact JSON, declaration key order, `truncated`
//   omitted when absent, `\n`-terminated, whatever the key order of the object it is given.
// - Known differences from serde_json, all on lines no writer produces: a message line nested
//   128+ levels deep or holding a number outside f64 range is a message here and not in the
//   runtime; invalid UTF-8 inside a message line is decoded with U+FFFD here, while the runtime
//   fails to read the whole file. A header line that is not valid UTF-8 is not a header here.
//   u64 values above 2^53 are accepted in a header but lose precision as JS numbers.
import { isUtf8 } from 'node:buffer';

export const RECORD_HEADER_TYPE = 'murmur.record';

/** The `truncated` marker of a record header (field order = the runtime's declaration order). */
export interface TruncationMarker {
  /** Cumulative count of messages dropped over the record's life. */
  dropped: number;
  /** `""` when the first kept message had no id. */
  oldest_surviving_id: string;
  /** `""` when the last dropped message had no id. */
  last_dropped_id: string;
  at_ms: number;
}

export interface RecordHeader {
  type: typeof RECORD_HEADER_TYPE;
  /** The owning capsule's manifest `name:`. */
  capsule: string;
  created_ms: number;
  /** Absent until the first truncation. */
  truncated?: TruncationMarker;
}

export interface LineClass {
  isMessage: boolean;
  /** The message's `id` when it is a string; undefined for non-messages and id-less messages. */
  id: string | undefined;
}

const NOT_A_MESSAGE: LineClass = Object.freeze({ isMessage: false, id: undefined });

// ---------------------------------------------------------------------------------------------
// Message lines
// ---------------------------------------------------------------------------------------------

const ROLE_KEY = Buffer.from('"role"');
const ESCAPE_U = Buffer.from('\\u');
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
const NON_ASCII = /[^\x00-\x7f]/;

/** JSON whitespace (RFC 8259): space, tab, LF, CR. */
function isJsonWs(b: number): boolean {
  return b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d;
}

/**
 * Classifies one record line (without its `\n`). Never throws.
 *
 * Fast path, no parsing: a line whose first non-whitespace byte is not `{`, or whose bytes
 * contain neither `"role"` nor a `\u` escape (the only other way to spell the key), cannot be a
 * message. Otherwise the line is JSON.parse'd (one trailing `\r` stripped, as Rust's
 * `str::lines` does — JSON whitespace either way).
 *
 * The parse decodes the bytes as latin1, not UTF-8: JSON's grammar is ASCII, so every byte
 * >= 0x80 is legal exactly where it is legal in the UTF-8 reading (inside a string) and the
 * verdict is the same, but latin1 decoding is ~10x cheaper on non-ASCII text and keeps the
 * string one-byte. Only an `id` that came out non-ASCII is re-read as UTF-8.
 */
export function classifyLine(line: Buffer): LineClass {
  const len = line.length;
  let i = 0;
  while (i < len && isJsonWs(line[i] as number)) i++;
  if (i >= len || line[i] !== 0x7b /* { */) return NOT_A_MESSAGE;
  if (line.indexOf(ROLE_KEY, i) === -1 && line.indexOf(ESCAPE_U, i) === -1) return NOT_A_MESSAGE;

  let end = len;
  if (line[end - 1] === 0x0d) end--;
  let value: unknown;
  let text: string;
  try {
    text = line.toString('latin1', i, end);
    value = JSON.parse(text);
  } catch {
    return NOT_A_MESSAGE;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return NOT_A_MESSAGE;
  const obj = value as Record<string, unknown>;
  if (!Object.hasOwn(obj, 'role') || typeof obj['role'] !== 'string') return NOT_A_MESSAGE;
  // serde_json refuses a lone surrogate in any decoded string (keys included); JSON.parse
  // accepts it. Only a line holding a surrogate escape can differ, so only those are walked.
  if (SURROGATE_ESCAPE.test(text) && !allStringsWellFormed(value, 0)) return NOT_A_MESSAGE;
  let id = obj['id'];
  if (typeof id === 'string' && NON_ASCII.test(id)) id = utf8Id(line, i, end);
  return { isMessage: true, id: typeof id === 'string' ? id : undefined };
}

function utf8Id(line: Buffer, start: number, end: number): unknown {
  try {
    return (JSON.parse(line.toString('utf8', start, end)) as Record<string, unknown>)['id'];
  } catch {
    return undefined; // unreachable: the UTF-8 reading parses whenever the latin1 one does
  }
}

/** The `id` of a message line when it is a string; undefined otherwise (also for non-messages). */
export function messageIdOf(line: Buffer): string | undefined {
  return classifyLine(line).id;
}

function isWellFormed(s: string): boolean {
  return (s as unknown as { isWellFormed(): boolean }).isWellFormed();
}

function allStringsWellFormed(v: unknown, depth: number): boolean {
  if (typeof v === 'string') return isWellFormed(v);
  if (typeof v !== 'object' || v === null) return true;
  if (depth > 1000) return true; // JSON.parse output is finite; this only bounds the recursion
  if (Array.isArray(v)) {
    for (const x of v) if (!allStringsWellFormed(x, depth + 1)) return false;
    return true;
  }
  for (const [k, x] of Object.entries(v)) {
    if (!isWellFormed(k) || !allStringsWellFormed(x, depth + 1)) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Header
// ---------------------------------------------------------------------------------------------

/**
 * Parses a record's first line (without its `\n`) as the runtime does; undefined when it is not
 * a header. One trailing `\r` is stripped first. Never throws.
 */
export function parseHeaderLine(line: Buffer | string): RecordHeader | undefined {
  let text: string;
  if (typeof line === 'string') {
    text = line;
  } else {
    if (!isUtf8(line)) return undefined;
    text = line.toString('utf8');
  }
  if (text.endsWith('\r')) text = text.slice(0, -1);
  // Cheap rejection before the strict parse: a header is an object or (serde seq form) an array.
  let k = 0;
  while (k < text.length && isJsonWs(text.charCodeAt(k))) k++;
  const first = text.charCodeAt(k);
  if (first !== 0x7b && first !== 0x5b) return undefined;
  let tree: JValue;
  try {
    tree = new StrictJson(text).parseDocument();
  } catch {
    return undefined;
  }
  const h = asStruct(tree, HEADER_FIELDS, 3);
  if (!h) return undefined;
  const type = asString(h[0]);
  const capsule = asString(h[1]);
  const created = asU64(h[2]);
  if (type !== RECORD_HEADER_TYPE || capsule === undefined || created === undefined) return undefined;
  const header: RecordHeader = { type: RECORD_HEADER_TYPE, capsule, created_ms: created };
  const t = h[3];
  if (t !== undefined && t.t !== 'null') {
    const m = asStruct(t, MARKER_FIELDS, 4);
    if (!m) return undefined;
    const dropped = asU64(m[0]);
    const oldest = asString(m[1]);
    const last = asString(m[2]);
    const at = asU64(m[3]);
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
 * The header a truncation writes (reference §5.3 step 5): the existing header's `capsule` and
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
  return {
    type: RECORD_HEADER_TYPE,
    capsule: existing?.capsule ?? fallbackCapsule,
    created_ms: existing?.created_ms ?? nowMs,
    truncated: {
      dropped: (existing?.truncated?.dropped ?? 0) + dropped,
      oldest_surviving_id: oldestSurvivingId,
      last_dropped_id: lastDroppedId,
      at_ms: nowMs,
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

function u64(n: number, name: string): string {
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || BigInt(n) > U64_MAX) {
    throw new RangeError(`${name} must be a non-negative integer below 2^64`);
  }
  return BigInt(n).toString();
}

// ---------------------------------------------------------------------------------------------
// A small strict JSON reader with serde_json's rules, for the header line only (one line per
// record, so speed does not matter). Numbers keep their lexeme (serde's u64 rule is lexical);
// strings remember whether they are well-formed (serde rejects a lone surrogate in a string it
// decodes — keys, typed fields — but tolerates one in a value it ignores).
// ---------------------------------------------------------------------------------------------

type JValue =
  | { t: 'obj'; entries: Array<[JString, JValue]> }
  | { t: 'arr'; items: JValue[] }
  | JString
  | { t: 'num'; lex: string }
  | { t: 'bool'; v: boolean }
  | { t: 'null' };

interface JString {
  t: 'str';
  v: string;
  wellFormed: boolean;
}

const HEADER_FIELDS = ['type', 'capsule', 'created_ms', 'truncated'] as const;
const MARKER_FIELDS = ['dropped', 'oldest_surviving_id', 'last_dropped_id', 'at_ms'] as const;

/**
 * serde derive's struct rules over a parsed value: a map (known keys once each, unknown keys
 * ignored, every key decoded) or a sequence (fields in declaration order, at least `required`,
 * no extras). Returns the field values by declaration index, or undefined when not that struct.
 */
function asStruct(v: JValue, fields: readonly string[], required: number): Array<JValue | undefined> | undefined {
  const out: Array<JValue | undefined> = new Array<JValue | undefined>(fields.length).fill(undefined);
  if (v.t === 'arr') {
    if (v.items.length < required || v.items.length > fields.length) return undefined;
    v.items.forEach((x, i) => (out[i] = x));
    return out;
  }
  if (v.t !== 'obj') return undefined;
  for (const [key, val] of v.entries) {
    if (!key.wellFormed) return undefined;
    const idx = fields.indexOf(key.v);
    if (idx === -1) continue;
    if (out[idx] !== undefined) return undefined; // duplicate field
    out[idx] = val;
  }
  for (let i = 0; i < required; i++) if (out[i] === undefined) return undefined;
  return out;
}

function asString(v: JValue | undefined): string | undefined {
  return v !== undefined && v.t === 'str' && v.wellFormed ? v.v : undefined;
}

function asU64(v: JValue | undefined): number | undefined {
  if (v === undefined || v.t !== 'num' || !/^(?:0|[1-9][0-9]*)$/.test(v.lex)) return undefined;
  if (v.lex.length > 20 || BigInt(v.lex) > U64_MAX) return undefined;
  return Number(v.lex);
}

class JsonSyntaxError extends Error {}

class StrictJson {
  private i = 0;
  private depth = 128; // serde_json's recursion limit
  constructor(private readonly s: string) {}

  parseDocument(): JValue {
    this.ws();
    const v = this.value();
    this.ws();
    if (this.i !== this.s.length) this.fail();
    return v;
  }

  private fail(): never {
    throw new JsonSyntaxError(`invalid JSON at ${this.i}`);
  }

  private ws(): void {
    const s = this.s;
    while (this.i < s.length && isJsonWs(s.charCodeAt(this.i))) this.i++;
  }

  private value(): JValue {
    const s = this.s;
    const c = s[this.i];
    switch (c) {
      case '{':
        return this.object();
      case '[':
        return this.array();
      case '"':
        return this.string();
      case 't':
        return this.word('true', { t: 'bool', v: true });
      case 'f':
        return this.word('false', { t: 'bool', v: false });
      case 'n':
        return this.word('null', { t: 'null' });
      default:
        if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return this.number();
        return this.fail();
    }
  }

  private word<T extends JValue>(w: string, v: T): T {
    if (!this.s.startsWith(w, this.i)) this.fail();
    this.i += w.length;
    return v;
  }

  private enter(): void {
    if (--this.depth === 0) this.fail();
  }

  private object(): JValue {
    this.enter();
    this.i++; // {
    const entries: Array<[JString, JValue]> = [];
    this.ws();
    if (this.s[this.i] === '}') {
      this.i++;
      this.depth++;
      return { t: 'obj', entries };
    }
    for (;;) {
      this.ws();
      if (this.s[this.i] !== '"') this.fail();
      const k = this.string();
      this.ws();
      if (this.s[this.i] !== ':') this.fail();
      this.i++;
      this.ws();
      entries.push([k, this.value()]);
      this.ws();
      const c = this.s[this.i++];
      if (c === '}') break;
      if (c !== ',') this.fail();
    }
    this.depth++;
    return { t: 'obj', entries };
  }

  private array(): JValue {
    this.enter();
    this.i++; // [
    const items: JValue[] = [];
    this.ws();
    if (this.s[this.i] === ']') {
      this.i++;
      this.depth++;
      return { t: 'arr', items };
    }
    for (;;) {
      this.ws();
      items.push(this.value());
      this.ws();
      const c = this.s[this.i++];
      if (c === ']') break;
      if (c !== ',') this.fail();
    }
    this.depth++;
    return { t: 'arr', items };
  }

  private number(): JValue {
    const m = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
    m.lastIndex = this.i;
    const r = m.exec(this.s);
    if (!r) this.fail();
    this.i += r[0].length;
    // `01`, `1.`, `1e`: the regex stops early and the next token check fails, as serde_json does.
    const next = this.s[this.i];
    if (next !== undefined && /[0-9.eE+-]/.test(next)) this.fail();
    return { t: 'num', lex: r[0] };
  }

  private string(): JString {
    const s = this.s;
    this.i++; // opening quote
    let out = '';
    let runStart = this.i;
    for (;;) {
      if (this.i >= s.length) this.fail();
      const c = s.charCodeAt(this.i);
      if (c === 0x22 /* " */) {
        out += s.slice(runStart, this.i);
        this.i++;
        return { t: 'str', v: out, wellFormed: isWellFormed(out) };
      }
      if (c < 0x20) this.fail();
      if (c !== 0x5c /* \ */) {
        this.i++;
        continue;
      }
      out += s.slice(runStart, this.i);
      const e = s[this.i + 1];
      this.i += 2;
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          const hex = s.slice(this.i, this.i + 4);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.fail();
          this.i += 4;
          // Consecutive escapes pair up naturally; a lone surrogate shows in `isWellFormed`.
          out += String.fromCharCode(Number.parseInt(hex, 16));
          break;
        }
        default:
          this.fail();
      }
      runStart = this.i;
    }
  }
}
