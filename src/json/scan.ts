// A byte-level validating JSON scanner with serde_json's acceptance rules, pure (no fs).
//
// Contract (what the runtime's `serde_json::from_str::<Value>` accepts, which is what decides
// whether a line is a message, a header or a trace event):
// - RFC 8259 grammar only: whitespace is space / \t / \n / \r; no trailing commas, no leading
//   zeros, no NaN/Infinity, no comments; one value per document, whitespace around it allowed.
// - Strings: raw bytes < 0x20 are refused; escapes are `\" \\ \/ \b \f \n \r \t \uXXXX` only; a
//   `\u` high surrogate must be followed at once by a `\u` low surrogate, a lone one (either half)
//   is refused. Bytes >= 0x80 are accepted as they are: UTF-8 validity is a property of the whole
//   file in the runtime (`read_to_string`) and is the CALLER's check (`isUtf8`).
// - Nesting: serde_json's recursion limit of 128 — 127 nested arrays/objects parse, 128 do not.
// - Numbers: a number that does not fit a double is refused (`1e400`, a 400-digit integer;
//   serde_json reads integers beyond u64/i64 as f64). `1e-400` is 0 and accepted. The range test
//   uses JS's correctly rounded conversion; serde_json's default float parser may differ by one
//   unit in the last place, so a literal within an ulp of f64::MAX may be judged differently.
// - Duplicate keys: the LAST occurrence wins (serde_json's map insert), everywhere. Which wanted
//   top-level keys occurred more than once is reported too (`dupes`): a typed serde struct (the
//   record header, src/runtime/record.ts) refuses a repeated field where a map keeps the last.
//
// Interface: `scanner.scan(buf, start, end, keys)` validates buf[start, end) and, when the top
// value is an object, records for each wanted top-level key the span of the value of its last
// occurrence (and in `dupes` bit k, whether key k occurred more than once); when it is an array,
// the spans of its first items. No allocation per call on the
// common path (a key written with escapes is decoded, which allocates). `classifyMessage` is the
// runtime's "is this line a message?" (`parse_message_line`: an object whose `role` is a string).
//
// Speed (docs/benchmarks.md): `scan` copies the document once into the WebAssembly memory and asks
// doc-wasm.ts's `doc` to validate it whole (same rules, spans of the wanted keys); what it
// leaves undecided (a number with an exponent or over 300 integer characters, an escaped
// top-level key while keys are wanted) and documents over 4 MiB take the JavaScript walk below,
// whose long strings still run in WebAssembly (string-wasm.ts). Without WebAssembly (e.g.
// `node --jitless`) everything is the JavaScript walk. `countMessageLines` counts the message
// lines of a chunk of whole lines in one WebAssembly call (`lines`), without a copy when the
// chunk was read into the memory (jsonl.ts). The parity tests run every path side by side
// (test/parity/json-scan-wasm-doc.test.ts, json-scan-fast-paths.test.ts).

import {
  DATA_BASE,
  MAX_COPY,
  FIELDS,
  ITEMS,
  OUT_COUNT,
  OUT_DUPES,
  OUT_ITEMS,
  OUT_LAST,
  OUT_STOP,
  OUT_TOP,
  keysFit,
  wasmDoc,
  type WasmDoc,
} from './doc-wasm.js';

export const T_NONE = 0;
export const T_OBJECT = 1;
export const T_ARRAY = 2;
export const T_STRING = 3;
export const T_NUMBER = 4;
export const T_TRUE = 5;
export const T_FALSE = 6;
export const T_NULL = 7;
export type JsonType = 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7;

const MAX_DEPTH = 128;
/** Plain strings up to this many bytes are finished by the JavaScript loop. */
const SHORT_STRING = 24;
/**
 * Longer documents keep the JavaScript loop: the WebAssembly memory never shrinks, so it is
 * bounded (a few MiB) rather than grown to the longest line ever seen.
 */
const WASM_MAX_DOCUMENT = MAX_COPY;
const MAX_ITEMS = 8;

class Invalid extends Error {}
const INVALID = new Invalid('invalid JSON');

/** A value's span: [start, end) in the buffer; a string's span includes its quotes. */
export interface Span {
  type: JsonType;
  start: number;
  end: number;
  /** strings only: the span holds a backslash escape */
  escaped: boolean;
}

function isWs(b: number): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}

function hexVal(b: number): number {
  if (b >= 0x30 && b <= 0x39) return b - 0x30;
  if (b >= 0x61 && b <= 0x66) return b - 0x57;
  if (b >= 0x41 && b <= 0x46) return b - 0x37;
  return -1;
}

export class JsonScanner {
  /** Type of the top-level value of the last scan (T_NONE when invalid). */
  top: JsonType = T_NONE;
  /** Per wanted key (same index as `keys`): the span of its last value, or type T_NONE. */
  readonly fields: Span[] = [];
  /** Bit k set: wanted key k occurs more than once among the top-level object's keys. */
  dupes = 0;
  /** Top-level array: its first MAX_ITEMS items, and how many it has. */
  readonly items: Span[] = [];
  itemCount = 0;

  private b: Uint8Array = new Uint8Array(0);
  private i = 0;
  private end = 0;
  private depth = 0;
  private keys: readonly Uint8Array[] = [];
  private keyStrings: readonly string[] = [];
  private lastStringEscaped = false;
  /** The WebAssembly module, when used; `delta` maps a buffer index to its memory offset. */
  private readonly wasm: WasmDoc | undefined;
  /** `wasm` while the current scan uses it. */
  private w: WasmDoc | undefined;
  private delta = 0;
  private readonly useDoc: boolean;

  /**
   * `opts.wasm: false` keeps everything in JavaScript; `opts.doc: false` keeps the JavaScript walk
   * with the WebAssembly string loop (tests compare the three).
   */
  constructor(opts: { wasm?: boolean; doc?: boolean } = {}) {
    this.wasm = opts.wasm === false ? undefined : wasmDoc();
    this.useDoc = opts.doc !== false;
    for (let k = 0; k < MAX_ITEMS; k++) this.items.push({ type: T_NONE, start: 0, end: 0, escaped: false });
  }

  /**
   * Validates buf[start, end) as one JSON document. Returns false when serde_json would refuse it.
   * `keys` (ASCII, pre-encoded with `jsonKeys`) are looked up among the top-level object's keys.
   */
  scan(buf: Uint8Array, start: number, end: number, keys: JsonKeys = NO_KEYS): boolean {
    this.b = buf;
    this.i = start;
    this.end = end;
    this.depth = MAX_DEPTH;
    this.keys = keys.bytes;
    this.keyStrings = keys.strings;
    const f = this.fields;
    while (f.length < keys.bytes.length) f.push({ type: T_NONE, start: 0, end: 0, escaped: false });
    for (let k = 0; k < f.length; k++) (f[k] as Span).type = T_NONE;
    this.dupes = 0;
    this.itemCount = 0;
    this.top = T_NONE;
    this.w = undefined;
    const w = this.wasm;
    if (w !== undefined && end - start <= WASM_MAX_DOCUMENT && w.ensure(end - start)) {
      const n = end - start;
      const mem = w.bytes;
      mem.set(start === 0 && end === buf.length ? buf : buf.subarray(start, end), DATA_BASE);
      mem[DATA_BASE + n] = 0; // the sentinel the loop relies on
      this.delta = DATA_BASE - start;
      this.w = w;
      if (this.useDoc && (w.keys === keys || (keysFit(keys.bytes) && (w.setKeys(keys, keys.bytes), true)))) {
        const r = w.doc(DATA_BASE, DATA_BASE + n, 0);
        if (r === 0) return false;
        if (r === 1) {
          this.docResult(w, keys.bytes.length);
          return true;
        }
        // undecided: the JavaScript walk below decides
      }
    }
    try {
      this.ws();
      if (this.i >= end) return false;
      const t = this.value(true);
      this.ws();
      if (this.i !== end) return false;
      this.top = t;
      return true;
    } catch (e) {
      if (e === INVALID) {
        this.top = T_NONE;
        return false;
      }
      throw e;
    }
  }

  /** Copies a `doc` answer of 1 out of the WebAssembly memory. */
  private docResult(w: WasmDoc, nkeys: number): void {
    const words = w.words;
    const d = this.delta;
    this.top = words[OUT_TOP >> 2] as JsonType;
    this.dupes = words[OUT_DUPES >> 2] as number;
    for (let k = 0; k < nkeys; k++) {
      const at = (FIELDS >> 2) + 4 * k;
      const f = this.fields[k] as Span;
      f.type = words[at] as JsonType;
      if (f.type === T_NONE) continue;
      f.start = (words[at + 1] as number) - d;
      f.end = (words[at + 2] as number) - d;
      f.escaped = words[at + 3] === 1;
    }
    if (this.top !== T_ARRAY) return;
    this.itemCount = words[OUT_ITEMS >> 2] as number;
    for (let k = 0; k < this.itemCount && k < MAX_ITEMS; k++) {
      const at = (ITEMS >> 2) + 4 * k;
      const f = this.items[k] as Span;
      f.type = words[at] as JsonType;
      f.start = (words[at + 1] as number) - d;
      f.end = (words[at + 2] as number) - d;
      f.escaped = words[at + 3] === 1;
    }
  }

  private ws(): void {
    const b = this.b;
    let i = this.i;
    while (i < this.end && isWs(b[i] as number)) i++;
    this.i = i;
  }

  private value(topLevel: boolean): JsonType {
    if (this.i >= this.end) throw INVALID;
    const c = this.b[this.i] as number;
    switch (c) {
      case 0x7b /* { */:
        this.object(topLevel);
        return T_OBJECT;
      case 0x5b /* [ */:
        this.array(topLevel);
        return T_ARRAY;
      case 0x22 /* " */:
        this.string();
        return T_STRING;
      case 0x74 /* t */:
        this.word(0x74, 0x72, 0x75, 0x65);
        return T_TRUE;
      case 0x66 /* f */:
        if (this.i + 5 > this.end || this.b[this.i + 4] !== 0x65) throw INVALID;
        this.word(0x66, 0x61, 0x6c, 0x73);
        this.i++;
        return T_FALSE;
      case 0x6e /* n */:
        this.word(0x6e, 0x75, 0x6c, 0x6c);
        return T_NULL;
      default:
        if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
          this.number();
          return T_NUMBER;
        }
        throw INVALID;
    }
  }

  private word(a: number, b1: number, c: number, d: number): void {
    const b = this.b;
    const i = this.i;
    if (i + 4 > this.end || b[i] !== a || b[i + 1] !== b1 || b[i + 2] !== c || b[i + 3] !== d) throw INVALID;
    this.i = i + 4;
  }

  private object(topLevel: boolean): void {
    if (--this.depth === 0) throw INVALID;
    const b = this.b;
    this.i++;
    this.ws();
    if (this.i < this.end && b[this.i] === 0x7d /* } */) {
      this.i++;
      this.depth++;
      return;
    }
    for (;;) {
      this.ws();
      if (this.i >= this.end || b[this.i] !== 0x22) throw INVALID;
      const keyStart = this.i;
      this.string();
      const keyEnd = this.i;
      const keyEscaped = this.lastStringEscaped;
      this.ws();
      if (this.i >= this.end || b[this.i] !== 0x3a /* : */) throw INVALID;
      this.i++;
      this.ws();
      const vStart = this.i;
      const t = this.value(false);
      if (topLevel && this.keys.length > 0) {
        const k = this.matchKey(keyStart, keyEnd, keyEscaped);
        if (k >= 0) {
          const s = this.fields[k] as Span;
          if (s.type !== T_NONE) this.dupes |= 1 << k;
          s.type = t;
          s.start = vStart;
          s.end = this.i;
          s.escaped = t === T_STRING && this.lastStringEscaped;
        }
      }
      this.ws();
      if (this.i >= this.end) throw INVALID;
      const c = b[this.i++];
      if (c === 0x7d) break;
      if (c !== 0x2c) throw INVALID;
    }
    this.depth++;
  }

  /** Index of the wanted key spelled by the string at [s, e) (quotes included), or -1. */
  private matchKey(s: number, e: number, escaped: boolean): number {
    const keys = this.keys;
    if (escaped) {
      const text = decodeJsonString(this.b, s, e, true);
      return this.keyStrings.indexOf(text);
    }
    const len = e - s - 2;
    const b = this.b;
    outer: for (let k = 0; k < keys.length; k++) {
      const key = keys[k] as Uint8Array;
      if (key.length !== len) continue;
      for (let j = 0; j < len; j++) if (b[s + 1 + j] !== key[j]) continue outer;
      return k;
    }
    return -1;
  }

  private array(topLevel: boolean): void {
    if (--this.depth === 0) throw INVALID;
    const b = this.b;
    this.i++;
    this.ws();
    if (this.i < this.end && b[this.i] === 0x5d /* ] */) {
      this.i++;
      this.depth++;
      return;
    }
    for (;;) {
      this.ws();
      const vStart = this.i;
      const t = this.value(false);
      if (topLevel) {
        if (this.itemCount < MAX_ITEMS) {
          const s = this.items[this.itemCount] as Span;
          s.type = t;
          s.start = vStart;
          s.end = this.i;
          s.escaped = t === T_STRING && this.lastStringEscaped;
        }
        this.itemCount++;
      }
      this.ws();
      if (this.i >= this.end) throw INVALID;
      const c = b[this.i++];
      if (c === 0x5d) break;
      if (c !== 0x2c) throw INVALID;
    }
    this.depth++;
  }

  private string(): void {
    const w = this.w;
    if (w !== undefined) {
      // Short plain strings (keys, ids, roles) end here, cheaper than a call into WebAssembly.
      const b = this.b;
      const stop = Math.min(this.end, this.i + 1 + SHORT_STRING);
      for (let i = this.i + 1; i < stop; i++) {
        const c = b[i] as number;
        if (c === 0x22) {
          this.i = i + 1;
          this.lastStringEscaped = false;
          return;
        }
        if (c < 0x20 || c === 0x5c) break;
      }
      const d = this.delta;
      const r = w.scanString(this.i + 1 + d, this.end + d);
      if (r === -1) throw INVALID;
      if (r >= 0) {
        this.i = r - d + 1;
        this.lastStringEscaped = false;
      } else {
        this.i = -2 - r - d + 1;
        this.lastStringEscaped = true;
      }
      return;
    }
    const b = this.b;
    const end = this.end;
    let i = this.i + 1;
    let escaped = false;
    for (;;) {
      if (i >= end) throw INVALID;
      const c = b[i] as number;
      if (c === 0x22) break;
      if (c < 0x20) throw INVALID;
      if (c !== 0x5c) {
        i++;
        continue;
      }
      escaped = true;
      if (i + 1 >= end) throw INVALID;
      const e = b[i + 1] as number;
      if (e === 0x75 /* u */) {
        const cu = this.hex4(i + 2);
        i += 6;
        if (cu >= 0xd800 && cu <= 0xdbff) {
          // serde_json: a high surrogate must be followed at once by `\u` + a low surrogate.
          if (i + 1 >= end || b[i] !== 0x5c || b[i + 1] !== 0x75) throw INVALID;
          const lo = this.hex4(i + 2);
          if (lo < 0xdc00 || lo > 0xdfff) throw INVALID;
          i += 6;
        } else if (cu >= 0xdc00 && cu <= 0xdfff) {
          throw INVALID;
        }
        continue;
      }
      if (
        e === 0x22 ||
        e === 0x5c ||
        e === 0x2f ||
        e === 0x62 ||
        e === 0x66 ||
        e === 0x6e ||
        e === 0x72 ||
        e === 0x74
      ) {
        i += 2;
        continue;
      }
      throw INVALID;
    }
    this.i = i + 1;
    this.lastStringEscaped = escaped;
  }

  private hex4(at: number): number {
    if (at + 4 > this.end) throw INVALID;
    const b = this.b;
    const h0 = hexVal(b[at] as number);
    const h1 = hexVal(b[at + 1] as number);
    const h2 = hexVal(b[at + 2] as number);
    const h3 = hexVal(b[at + 3] as number);
    if ((h0 | h1 | h2 | h3) < 0) throw INVALID;
    return (h0 << 12) | (h1 << 8) | (h2 << 4) | h3;
  }

  private number(): void {
    const b = this.b;
    const end = this.end;
    const start = this.i;
    let i = start;
    if (b[i] === 0x2d) i++;
    if (i >= end) throw INVALID;
    let c = b[i] as number;
    if (c === 0x30) {
      i++;
    } else if (c >= 0x31 && c <= 0x39) {
      i++;
      while (i < end && (c = b[i] as number) >= 0x30 && c <= 0x39) i++;
    } else {
      throw INVALID;
    }
    const intDigits = i - start;
    let plain = true;
    if (i < end && b[i] === 0x2e /* . */) {
      plain = false;
      i++;
      const d0 = i;
      while (i < end && (c = b[i] as number) >= 0x30 && c <= 0x39) i++;
      if (i === d0) throw INVALID;
    }
    if (i < end && (b[i] === 0x65 || b[i] === 0x45)) {
      plain = false;
      i++;
      if (i < end && (b[i] === 0x2b || b[i] === 0x2d)) i++;
      const d0 = i;
      while (i < end && (c = b[i] as number) >= 0x30 && c <= 0x39) i++;
      if (i === d0) throw INVALID;
    }
    this.i = i;
    // A plain integer of up to 300 characters is always a finite double; check the rest.
    if (!plain || intDigits > 300) {
      let s = '';
      for (let j = start; j < i; j++) s += String.fromCharCode(b[j] as number);
      if (!Number.isFinite(Number(s))) throw INVALID;
    }
  }
}

/** Wanted keys, pre-encoded once. */
export interface JsonKeys {
  strings: readonly string[];
  bytes: readonly Uint8Array[];
}

export function jsonKeys(...keys: string[]): JsonKeys {
  return { strings: keys, bytes: keys.map((k) => Buffer.from(k, 'utf8')) };
}

const NO_KEYS = jsonKeys();

/**
 * The decoded text of a JSON string at buf[s, e) (quotes included) that `scan` accepted. Bytes
 * are read as UTF-8.
 */
export function decodeJsonString(buf: Uint8Array, s: number, e: number, escaped: boolean): string {
  const view = buf instanceof Buffer ? buf : Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  if (!escaped) return view.toString('utf8', s + 1, e - 1);
  return JSON.parse(view.toString('utf8', s, e)) as string;
}

/** The lexeme of a span (numbers). */
export function spanText(buf: Uint8Array, s: Span): string {
  return Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength).toString('latin1', s.start, s.end);
}

const U64_MAX = 18446744073709551615n;

/** serde's u64 rule for a number span: a plain non-negative integer that fits 64 bits. */
export function spanU64(buf: Uint8Array, s: Span): bigint | undefined {
  if (s.type !== T_NUMBER) return undefined;
  const text = spanText(buf, s);
  if (!/^(?:0|[1-9][0-9]*)$/.test(text) || text.length > 20) return undefined;
  const v = BigInt(text);
  return v <= U64_MAX ? v : undefined;
}

/** A string span's decoded value, or undefined when the span is not a string. */
export function spanString(buf: Uint8Array, s: Span): string | undefined {
  return s.type === T_STRING ? decodeJsonString(buf, s.start, s.end, s.escaped) : undefined;
}

// ---- messages ------------------------------------------------------------------------------

export interface LineClass {
  isMessage: boolean;
  /** The message's `id` when it is a string; undefined for non-messages and id-less messages. */
  id: string | undefined;
}

const MESSAGE_KEYS = jsonKeys('role', 'id');
const shared = new JsonScanner();

/**
 * The runtime's `parse_message_line` over buf[start, end) (one line without its `\n`): a message
 * iff the line is a JSON document serde_json accepts whose top value is an object and whose last
 * `role` is a string. The caller guarantees the file is valid UTF-8 (else nothing in it is a
 * message). Never throws.
 */
export function classifyMessage(buf: Uint8Array, start: number, end: number): LineClass {
  // Fast refusal: a message starts with `{` after optional whitespace.
  let i = start;
  while (i < end && isWs(buf[i] as number)) i++;
  if (i >= end || buf[i] !== 0x7b) return NOT_A_MESSAGE;
  const sc = shared;
  if (!sc.scan(buf, i, end, MESSAGE_KEYS) || sc.top !== T_OBJECT) return NOT_A_MESSAGE;
  const role = sc.fields[0] as Span;
  if (role.type !== T_STRING) return NOT_A_MESSAGE;
  const id = sc.fields[1] as Span;
  return {
    isMessage: true,
    id: id.type === T_STRING ? decodeJsonString(buf, id.start, id.end, id.escaped) : undefined,
  };
}

/**
 * `classifyMessage(...).isMessage` without building the result or decoding the id: when it
 * returns true, `lastMessageIdSpan()` is the line's `id` span (type T_NONE or not T_STRING when
 * the id is absent or not a string), valid until the next call.
 */
export function isMessageLine(buf: Uint8Array, start: number, end: number): boolean {
  let i = start;
  while (i < end && isWs(buf[i] as number)) i++;
  if (i >= end || buf[i] !== 0x7b) return false;
  const sc = shared;
  if (!sc.scan(buf, i, end, MESSAGE_KEYS) || sc.top !== T_OBJECT) return false;
  return (sc.fields[0] as Span).type === T_STRING;
}

/** See isMessageLine. */
export function lastMessageIdSpan(): Readonly<Span> {
  return shared.fields[1] as Span;
}

export const NOT_A_MESSAGE: LineClass = Object.freeze({ isMessage: false, id: undefined });

/** What `countMessageLines` found. */
export interface MessageCount {
  messages: number;
  /** The last counted message's `id` span in the buffer (type T_NONE when it has none). */
  readonly id: Span;
}

const jsOnly = new JsonScanner({ wasm: false });
const noId: Span = Object.freeze({ type: T_NONE, start: 0, end: 0, escaped: false });

/**
 * Counts the message lines (`isMessageLine`) among the lines of buf[from, to), which must be whole
 * lines each ended by `\n` and valid UTF-8 (the caller's check). Sets `out.messages` and, when it
 * is not 0, `out.id` (the last message's id span; T_NONE when absent). The lines are walked
 * inside WebAssembly (`lines`, doc-wasm.ts) from one copy of the range; a line it leaves
 * undecided is decided by the JavaScript scanner, and without WebAssembly every line is.
 */
export function countMessageLines(buf: Uint8Array, from: number, to: number, out: MessageCount): void {
  out.messages = 0;
  const id = out.id;
  const w = wasmDoc();
  if (w === undefined) {
    countMessageLinesJs(buf, from, to, out);
    return;
  }
  let delta: number;
  if (buf.buffer === w.bytes.buffer) {
    // already in the memory (jsonl.ts reads chunks into `chunkRegion`): no copy
    delta = buf.byteOffset;
  } else {
    if (to - from > WASM_MAX_DOCUMENT || !w.ensure(to - from)) {
      countMessageLinesJs(buf, from, to, out);
      return;
    }
    w.bytes.set(buf.subarray(from, to), DATA_BASE);
    delta = DATA_BASE - from;
  }
  if (w.keys !== MESSAGE_KEYS) w.setKeys(MESSAGE_KEYS, MESSAGE_KEYS.bytes);
  const end = to + delta;
  let p = from + delta;
  for (;;) {
    const r = w.lines(p, end);
    const words = w.words;
    const n = words[OUT_COUNT >> 2] as number;
    if (n > 0) {
      out.messages += n;
      id.type = words[OUT_LAST >> 2] as JsonType;
      id.start = (words[(OUT_LAST >> 2) + 1] as number) - delta;
      id.end = (words[(OUT_LAST >> 2) + 2] as number) - delta;
      id.escaped = words[(OUT_LAST >> 2) + 3] === 1;
    }
    if (r === 0) return;
    // an undecided line: the JavaScript scanner (which leaves the WebAssembly memory alone)
    const s = (words[OUT_STOP >> 2] as number) - delta;
    let e = s;
    while (e < to && buf[e] !== 0x0a) e++;
    if (isMessageLineWith(jsOnly, buf, s, e)) {
      out.messages++;
      copySpan(jsOnly.fields[1] as Span, id);
    }
    p = e + 1 + delta;
  }
}

/** countMessageLines without WebAssembly. */
export function countMessageLinesJs(buf: Uint8Array, from: number, to: number, out: MessageCount): void {
  out.messages = 0;
  let s = from;
  while (s < to) {
    let e = s;
    while (e < to && buf[e] !== 0x0a) e++;
    if (isMessageLineWith(jsOnly, buf, s, e)) {
      out.messages++;
      copySpan(jsOnly.fields[1] as Span, out.id);
    }
    s = e + 1;
  }
}

/** A fresh MessageCount. */
export function messageCount(): MessageCount {
  return { messages: 0, id: { ...noId } };
}

function copySpan(from: Span, to: Span): void {
  to.type = from.type;
  to.start = from.start;
  to.end = from.end;
  to.escaped = from.escaped;
}

function isMessageLineWith(sc: JsonScanner, buf: Uint8Array, start: number, end: number): boolean {
  let i = start;
  while (i < end && isWs(buf[i] as number)) i++;
  if (i >= end || buf[i] !== 0x7b) return false;
  if (!sc.scan(buf, i, end, MESSAGE_KEYS) || sc.top !== T_OBJECT) return false;
  return (sc.fields[0] as Span).type === T_STRING;
}
