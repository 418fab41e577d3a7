// Whole-document JSON validation in WebAssembly (docs/benchmarks.md): one call validates a document (a
// line) with scan.ts's rules, another walks many lines of a chunk and counts the message lines.
// The module is written with the labelled assembler (wasm-asm.ts) and built on first use: no binary
// file, no toolchain. Pure. Contract, memory layout and how to change it: src/json/README.md.
//
// Guarantees (scan.ts's `JsonScanner` is the reference; the parity tests run both):
// - `doc(p, end)` judges the bytes [p, end) of its memory and answers 1 (serde_json accepts the
//   document), 0 (it refuses it) or 2 (undecided: the caller must ask the JavaScript scanner). It
//   never answers 0/1 where the JavaScript scanner would answer the opposite. Undecided: a number
//   with an exponent or more than 300 integer characters (its f64 range needs checking), and a
//   top-level key written with an escape while keys are wanted (it might spell a wanted key).
// - Rules applied in full: RFC 8259 grammar, whitespace space/\t/\n/\r only around tokens,
//   strings through scanString (string-wasm.ts: control bytes, escapes, surrogate pairs),
//   depth: 127 nested containers pass, 128 fail. Bytes >= 0x80 pass (UTF-8 is the caller's).
// - Outputs (after a 1): the top-level type at OUT_TOP; for each wanted key (KEYS table, set by
//   `setKeys`), the LAST occurrence's value span at FIELDS + 16k as i32 [type, start, end,
//   escaped] (type 0: absent), and at OUT_DUPES bit k when key k occurred more than once at the
//   top level; for a top-level array, its first 8 items at ITEMS and their count
//   at OUT_ITEMS. Offsets are memory offsets.
// - `lines(p, end)`: [p, end) must be whole lines, each ended by `\n` (end - 1 is one). For each
//   line it finds the `\n` (16 bytes per SIMD step), and counts the line when it is a message —
//   optional whitespace, `{`, `doc` says 1, the top value is an object and the LAST wanted key 0
//   (`role`) is a string — keeping the span of wanted key 1 (`id`) of the last message counted.
//   It stops at the first undecided line (answer 1, OUT_STOP = its start) or the end (answer 0);
//   OUT_COUNT holds the messages counted before the stop.
// - The byte at `end` must be a sentinel that is neither whitespace-after-a-token nor part of a
//   token: a 0x00 after a single document, or the line's `\n` in `lines` (whitespace is
//   bound-checked; every other loop stops at either byte). 16 bytes past `end` must be
//   addressable (SIMD loads).
// Memory layout: [0, 768) scanString's tables (string-wasm.ts), [768, 1024) whitespace,
// [1024, 1280) whitespace inside a line (no `\n`), [1280, 1408) container stack, then the wanted
// keys, the outputs; copies of caller data from DATA_BASE (under MAX_COPY bytes), and from
// CHUNK_BASE the chunk region runtime/jsonl.ts reads files into. The memory grows only to make room for
// these (`ensure`, `chunkRegion`), never past CHUNK_BASE + CHUNK_SIZE + 64 once the region exists,
// so Buffer views of the region stay attached.
// Without WebAssembly (e.g. `node --jitless`) `wasmDoc()` is undefined and scan.ts keeps
// its JavaScript scanner. The module is assembled and compiled on the instance's first use, not
// when this file is imported, so a command that reads no line never compiles it.

import { initTables, scanStringFunction } from './string-wasm.js';
import {
  I32,
  add,
  and,
  bitmask,
  block,
  br,
  brIf,
  call,
  ctz,
  eq,
  eqz,
  geU,
  get,
  gtU,
  i8x16Eq,
  ifElse,
  inc,
  k,
  ld32,
  ld8,
  loop,
  ltS,
  ltU,
  ne,
  or,
  ret,
  select,
  set,
  shl,
  splat8,
  st32,
  st8,
  sub,
  v128Load,
  wasmModule,
  when,
  type Code,
  type WasmFunction,
} from './wasm-asm.js';

export const WS_TABLE = 768;
/** Whitespace inside a line: the same without `\n`. */
export const WS_LINE_TABLE = 1024;
const STACK = 1280;
/** Wanted keys: MAX_KEYS slots of KEY_SLOT bytes: [length, bytes...]. */
export const KEYS = 1408;
export const KEY_SLOT = 32;
export const MAX_KEYS = 16;
export const NKEYS = KEYS + MAX_KEYS * KEY_SLOT; // i32
export const OUT_TOP = NKEYS + 4;
export const OUT_ITEMS = OUT_TOP + 4;
export const OUT_COUNT = OUT_TOP + 8;
export const OUT_STOP = OUT_TOP + 12;
/** `lines`: the last counted message's wanted key 1, as a FIELDS entry. */
export const OUT_LAST = OUT_TOP + 16;
/** `doc`: where it stopped (a 1: the end of the document; a 0: at or before the error). */
export const OUT_END = OUT_TOP + 32;
/** `doc`: bit k set when wanted key k occurs more than once at the top level. */
export const OUT_DUPES = OUT_TOP + 36;
export const FIELDS = OUT_TOP + 48;
export const ITEMS = FIELDS + MAX_KEYS * 16;
export const MAX_ITEMS = 8;
export const DATA_BASE = 4096;
if (ITEMS + MAX_ITEMS * 16 > DATA_BASE) throw new Error('doc-wasm: the memory layout overlaps');
/** Copies of caller data stay below this size (scan.ts), so [DATA_BASE, CHUNK_BASE) holds them. */
export const MAX_COPY = 4 * 1024 * 1024;
/**
 * A region for reading file chunks straight into the memory (`chunkRegion`), above every copy:
 * once it exists the memory never grows again, so views of it stay attached.
 */
export const CHUNK_BASE = DATA_BASE + MAX_COPY + 65536;
export const CHUNK_SIZE = 1024 * 1024;
const PAGE = 65536;

// Function indexes in the module (what `call` takes; `moduleBytes` places each function at its own).
const F_STRING = 0;
const F_DOC = 1;
const F_MATCH = 2;
const F_LINES = 3;

/** Whitespace skip: p over the bytes the table at local `table` marks, never past end. */
function ws(p: number, end: number, table: number): Code {
  return block(
    'ws',
    loop(
      'wsl',
      brIf('ws', geU(get(p), get(end))),
      brIf('ws', eqz(ld8(add(ld8(get(p)), get(table))))),
      inc(p),
      br('wsl'),
    ),
  );
}

// ---- doc(p, end, inLine) -> 0 invalid, 1 valid, 2 undecided --------------------------------------
// inLine = 0: the document is [p, end). inLine = 1 (`lines`): it is the line starting at p, ended
// by the first `\n` before end, which is not whitespace there; every token test fails on it.

function docFunction(): WasmFunction {
  const P = 0,
    END = 1,
    LINE = 2,
    DEPTH = 3,
    STATE = 4,
    C = 5,
    T = 6,
    ESC = 7,
    FSTART = 8,
    CUR = 9,
    R = 10,
    S = 11,
    KIND = 12,
    N = 13,
    WSB = 14;
  const STATE_VALUE = 0;
  // The listing proper. States: VALUE (p at a value) and KEY (p at an object key); AFTER (a value
  // of type t just ended at p) is reached by falling through or from a closing bracket.
  const body: Code = [
    st32(k(0), k(0), OUT_TOP),
    st32(k(0), k(0), OUT_ITEMS),
    st32(k(0), k(0), OUT_DUPES),
    set(N, k(0)),
    loop('reset', when(ltU(get(N), ld32(k(0), NKEYS)), st32(shl(get(N), k(4)), k(0), FIELDS), inc(N), br('reset'))),
    set(WSB, add(k(WS_TABLE), shl(get(LINE), k(8)))),
    set(DEPTH, k(0)),
    set(STATE, k(STATE_VALUE)),
    set(CUR, k(-1)),
    set(ESC, k(0)),
    ws(P, END, WSB),
    st32(k(0), get(P), OUT_END),
    when(geU(get(P), get(END)), ret(k(0))),
    block(
      'invalid',
      block(
        'undecided',
        loop(
          'top',
          block(
            'after',
            block(
              'value',
              brIf('value', eqz(get(STATE))),
              // KEY: a string, `:`, then a value
              brIf('invalid', ne(ld8(get(P)), k(0x22))),
              set(S, get(P)),
              set(R, call(F_STRING, add(get(P), k(1)), get(END))),
              brIf('invalid', eq(get(R), k(-1))),
              // (only a top-level key sets CUR: it must survive the nested keys of its value)
              ifElse(
                ltS(get(R), k(0)),
                [
                  set(R, sub(k(-2), get(R))),
                  // an escaped top-level key might spell a wanted key: the JavaScript scanner decodes it
                  when(eq(get(DEPTH), k(1)), brIf('undecided', ne(ld32(k(0), NKEYS), k(0))), set(CUR, k(-1))),
                ],
                [when(eq(get(DEPTH), k(1)), set(CUR, call(F_MATCH, add(get(S), k(1)), get(R))))],
              ),
              set(P, add(get(R), k(1))),
              ws(P, END, WSB),
              brIf('invalid', ne(ld8(get(P)), k(0x3a))),
              inc(P),
              ws(P, END, WSB),
            ),
            // VALUE
            when(eq(get(DEPTH), k(1)), set(FSTART, get(P))),
            set(C, ld8(get(P))),
            when(
              eq(get(C), k(0x22)),
              set(R, call(F_STRING, add(get(P), k(1)), get(END))),
              brIf('invalid', eq(get(R), k(-1))),
              set(ESC, k(0)),
              when(ltS(get(R), k(0)), set(ESC, k(1)), set(R, sub(k(-2), get(R)))),
              set(P, add(get(R), k(1))),
              set(T, k(3)),
              br('after'),
            ),
            when(
              eq(or(get(C), k(0x20)), k(0x7b)), // `{` or `[`
              brIf('invalid', eq(get(DEPTH), k(127))),
              set(KIND, select(eq(get(C), k(0x7b)), k(1), k(2))),
              st8(get(DEPTH), get(KIND), STACK),
              inc(DEPTH),
              inc(P),
              ws(P, END, WSB),
              when(eq(ld8(get(P)), add(get(C), k(2))), inc(P), inc(DEPTH, -1), set(T, get(KIND)), br('after')),
              set(STATE, sub(k(2), get(KIND))),
              br('top'),
            ),
            when(
              eq(get(C), k(0x74)),
              brIf('invalid', gtU(add(get(P), k(4)), get(END))),
              brIf('invalid', ne(ld32(get(P)), k(0x65757274))), // "true"
              inc(P, 4),
              set(T, k(5)),
              br('after'),
            ),
            when(
              eq(get(C), k(0x66)),
              brIf('invalid', gtU(add(get(P), k(5)), get(END))),
              brIf('invalid', ne(ld32(get(P), 1), k(0x65736c61))), // "alse"
              inc(P, 5),
              set(T, k(6)),
              br('after'),
            ),
            when(
              eq(get(C), k(0x6e)),
              brIf('invalid', gtU(add(get(P), k(4)), get(END))),
              brIf('invalid', ne(ld32(get(P)), k(0x6c6c756e))), // "null"
              inc(P, 4),
              set(T, k(7)),
              br('after'),
            ),
            // a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?, then an exponent is undecided
            set(S, get(P)),
            when(eq(get(C), k(0x2d)), inc(P), set(C, ld8(get(P)))),
            ifElse(
              eq(get(C), k(0x30)),
              [inc(P)],
              [
                brIf('invalid', geU(sub(get(C), k(0x31)), k(9))),
                loop('int', inc(P), brIf('int', ltU(sub(ld8(get(P)), k(0x30)), k(10)))),
              ],
            ),
            set(N, sub(get(P), get(S))),
            when(
              eq(ld8(get(P)), k(0x2e)),
              inc(P),
              set(S, get(P)),
              loop('frac', when(ltU(sub(ld8(get(P)), k(0x30)), k(10)), inc(P), br('frac'))),
              brIf('invalid', eq(get(P), get(S))),
            ),
            brIf('undecided', eq(or(ld8(get(P)), k(0x20)), k(0x65))), // e / E
            brIf('undecided', gtU(get(N), k(300))),
            set(T, k(4)),
          ),
          // AFTER: a value of type t ended at p
          loop(
            'close',
            when(
              eqz(get(DEPTH)),
              ws(P, END, WSB),
              // the end of the range, or in a line its `\n` (which is not whitespace there)
              brIf('invalid', and(ne(get(P), get(END)), or(eqz(get(LINE)), ne(ld8(get(P)), k(0x0a))))),
              st32(k(0), get(T), OUT_TOP),
              st32(k(0), get(P), OUT_END),
              ret(k(1)),
            ),
            when(
              eq(get(DEPTH), k(1)),
              ifElse(
                eq(ld8(k(0), STACK), k(1)),
                [
                  when(
                    ltS(k(-1), get(CUR)),
                    set(S, add(shl(get(CUR), k(4)), k(FIELDS))),
                    // a wanted key seen before: flag it (a typed struct refuses the repeat)
                    when(ne(ld32(get(S)), k(0)), st32(k(0), or(ld32(k(0), OUT_DUPES), shl(k(1), get(CUR))), OUT_DUPES)),
                    st32(get(S), get(T)),
                    st32(get(S), get(FSTART), 4),
                    st32(get(S), get(P), 8),
                    st32(get(S), and(get(ESC), eq(get(T), k(3))), 12),
                  ),
                ],
                [
                  set(N, ld32(k(0), OUT_ITEMS)),
                  when(
                    ltU(get(N), k(MAX_ITEMS)),
                    set(S, add(shl(get(N), k(4)), k(ITEMS))),
                    st32(get(S), get(T)),
                    st32(get(S), get(FSTART), 4),
                    st32(get(S), get(P), 8),
                    st32(get(S), and(get(ESC), eq(get(T), k(3))), 12),
                  ),
                  st32(k(0), add(get(N), k(1)), OUT_ITEMS),
                ],
              ),
            ),
            ws(P, END, WSB),
            set(C, ld8(get(P))),
            brIf('invalid', geU(get(P), get(END))),
            set(KIND, ld8(get(DEPTH), STACK - 1)),
            when(eq(get(C), k(0x2c)), inc(P), ws(P, END, WSB), set(STATE, sub(k(2), get(KIND))), br('top')),
            // `}` closes an object, `]` an array
            brIf('invalid', ne(get(C), add(k(0x5d), shl(sub(k(2), get(KIND)), k(5))))),
            inc(P),
            inc(DEPTH, -1),
            set(T, get(KIND)),
            br('close'),
          ),
        ),
      ),
      ret(k(2)),
    ),
    st32(k(0), get(P), OUT_END),
    k(0),
  ];
  // params p, end, inLine; 12 i32 locals
  return { params: [I32, I32, I32], results: [I32], locals: [[12, I32]], body, export: 'd' };
}

// ---- match(s, e) -> index of the wanted key spelled by bytes [s, e), or -1 ------------------------

function matchFunction(): WasmFunction {
  const S = 0,
    E = 1,
    LEN = 2,
    KI = 3,
    BASE = 4,
    J = 5;
  const body: Code = [
    set(LEN, sub(get(E), get(S))),
    set(KI, k(0)),
    loop(
      'keys',
      when(geU(get(KI), ld32(k(0), NKEYS)), ret(k(-1))),
      set(BASE, add(shl(get(KI), k(5)), k(KEYS))),
      block(
        'next',
        brIf('next', ne(ld8(get(BASE)), get(LEN))),
        set(J, k(0)),
        loop(
          'cmp',
          when(eq(get(J), get(LEN)), ret(get(KI))),
          brIf('next', ne(ld8(add(get(S), get(J))), ld8(add(get(BASE), get(J)), 1))),
          inc(J),
          br('cmp'),
        ),
      ),
      inc(KI),
      br('keys'),
    ),
    k(-1),
  ];
  // params s, e; 4 i32 locals
  return { params: [I32, I32], results: [I32], locals: [[4, I32]], body };
}

// ---- lines(p, end) -> 0 done, 1 stopped at an undecided line ------------------------------------

function linesFunction(simd: boolean): WasmFunction {
  const P = 0,
    END = 1,
    Q = 2,
    M = 3,
    S = 4,
    R = 5,
    COUNT = 6,
    WSB = 7;
  // from q to the next `\n` (there is one before end)
  const findNewline: Code = simd
    ? loop(
        'nl',
        set(M, bitmask(i8x16Eq(v128Load(get(Q)), splat8(0x0a)))),
        when(eqz(get(M)), inc(Q, 16), br('nl')),
        set(Q, add(get(Q), ctz(get(M)))),
      )
    : loop('nl', when(ne(ld8(get(Q)), k(0x0a)), inc(Q), br('nl')));
  const body: Code = [
    set(COUNT, k(0)),
    set(WSB, k(WS_LINE_TABLE)),
    loop(
      'line',
      when(geU(get(P), get(END)), st32(k(0), get(COUNT), OUT_COUNT), st32(k(0), get(P), OUT_STOP), ret(k(0))),
      set(S, get(P)),
      ws(S, END, WSB),
      set(Q, get(S)),
      when(
        eq(ld8(get(S)), k(0x7b)),
        set(R, call(F_DOC, get(S), get(END), k(1))),
        when(eq(get(R), k(2)), st32(k(0), get(COUNT), OUT_COUNT), st32(k(0), get(P), OUT_STOP), ret(k(1))),
        // where doc stopped: the line's `\n` after a valid line, at or before it otherwise
        set(Q, ld32(k(0), OUT_END)),
        when(
          and(and(eq(get(R), k(1)), eq(ld32(k(0), OUT_TOP), k(1))), eq(ld32(k(0), FIELDS), k(3))),
          inc(COUNT),
          st32(k(0), ld32(k(0), FIELDS + 16), OUT_LAST),
          st32(k(0), ld32(k(0), FIELDS + 20), OUT_LAST + 4),
          st32(k(0), ld32(k(0), FIELDS + 24), OUT_LAST + 8),
          st32(k(0), ld32(k(0), FIELDS + 28), OUT_LAST + 12),
        ),
      ),
      findNewline,
      set(P, add(get(Q), k(1))),
      br('line'),
    ),
    k(0),
  ];
  // params p, end; 6 i32 locals
  return { params: [I32, I32], results: [I32], locals: [[6, I32]], body, export: 'l' };
}

/**
 * The module's bytes: each function at its index (the F_ constants `call` takes), memory 0 exported
 * as `m`. Exported for test/json/doc-wasm.test.ts, which pins them.
 */
export function moduleBytes(simd: boolean): Uint8Array {
  const fns: WasmFunction[] = [];
  fns[F_STRING] = { ...scanStringFunction(simd), export: 's' };
  fns[F_DOC] = docFunction();
  fns[F_MATCH] = matchFunction();
  fns[F_LINES] = linesFunction(simd);
  return wasmModule(fns, { minPages: 1, export: 'm' });
}

// ---- instance ---------------------------------------------------------------------------------

// The few WebAssembly JS-API members used here (the configured libs do not declare them).
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
}

/**
 * Instantiates the module: the SIMD variant unless `simd` is false or the CPU cannot run it, then
 * the scalar one; null without WebAssembly (e.g. node --jitless) or when neither instantiates.
 * A listing the assembler refuses (wasm-asm.ts) throws here: it is a bug, not a missing feature.
 */
function instantiate(simd: boolean): { exports: Record<string, unknown> } | null {
  const api = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
  if (api === undefined) return null;
  if (simd) {
    const bytes = moduleBytes(true);
    try {
      return new api.Instance(new api.Module(bytes), {});
    } catch {
      // a CPU without SIMD: the scalar variant below
    }
  }
  const bytes = moduleBytes(false);
  try {
    return new api.Instance(new api.Module(bytes), {});
  } catch {
    return null;
  }
}

export interface WasmDoc {
  scanString(p: number, end: number): number;
  doc(p: number, end: number, inLine: number): number;
  lines(p: number, end: number): number;
  /** The memory's bytes and i32 words; both replaced after `ensure` grows it. */
  bytes: Uint8Array;
  words: Int32Array;
  /** Makes [DATA_BASE, DATA_BASE + n + 17) addressable; false when the memory cannot grow. */
  ensure(n: number): boolean;
  /** The wanted keys `doc` currently looks up (the object last given to `setKeys`). */
  keys: unknown;
  /** Writes the wanted keys table: at most MAX_KEYS keys of at most KEY_SLOT - 1 bytes each. */
  setKeys(id: unknown, keys: readonly Uint8Array[]): void;
}

let instance: WasmDoc | null | undefined;

/** Whether `keys` fit the table (else the caller keeps the JavaScript scanner). */
export function keysFit(keys: readonly Uint8Array[]): boolean {
  return keys.length <= MAX_KEYS && keys.every((x) => x.length < KEY_SLOT);
}

/**
 * A WasmDoc not instantiated yet: the first `ensure` (every caller asks it before reading `bytes`
 * or calling in) or any call assembles and compiles the module into this same object, so a command
 * that never validates or counts a line never pays for it. When it cannot be instantiated,
 * `ensure` answers false from then on and callers keep the JavaScript scanner.
 */
function unbuilt(simd: boolean): WasmDoc {
  const ready = (): WasmDoc => {
    if (build(simd, w) === null) {
      const none = (): never => {
        throw new Error('doc-wasm: WebAssembly could not be instantiated');
      };
      Object.assign(w, { ensure: () => false, scanString: none, doc: none, lines: none, setKeys: none });
    }
    return w;
  };
  const w: WasmDoc = {
    scanString: (p, end) => ready().scanString(p, end),
    doc: (p, end, inLine) => ready().doc(p, end, inLine),
    lines: (p, end) => ready().lines(p, end),
    bytes: new Uint8Array(0),
    words: new Int32Array(0),
    keys: undefined,
    ensure: (n) => ready().ensure(n),
    setKeys: (id, keys) => ready().setKeys(id, keys),
  };
  return w;
}

/** `simd: false` builds the scalar variant only (what a CPU without SIMD runs; tests compare). */
function build(simd: boolean, w: WasmDoc): WasmDoc | null {
  const inst = instantiate(simd);
  if (inst === null) return null;
  const memory = inst.exports['m'] as WasmMemory;
  Object.assign(w, {
    scanString: inst.exports['s'] as (p: number, end: number) => number,
    doc: inst.exports['d'] as (p: number, end: number, inLine: number) => number,
    lines: inst.exports['l'] as (p: number, end: number) => number,
    bytes: new Uint8Array(memory.buffer),
    words: new Int32Array(memory.buffer),
    keys: undefined,
    ensure(n: number): boolean {
      const need = DATA_BASE + n + 17;
      if (need <= memory.buffer.byteLength) return true;
      try {
        memory.grow(Math.ceil((need - memory.buffer.byteLength) / PAGE));
      } catch {
        return false;
      }
      w.bytes = new Uint8Array(memory.buffer);
      w.words = new Int32Array(memory.buffer);
      return true;
    },
    setKeys(id: unknown, keys: readonly Uint8Array[]): void {
      const m = w.bytes;
      keys.forEach((key, i) => {
        m[KEYS + i * KEY_SLOT] = key.length;
        m.set(key, KEYS + i * KEY_SLOT + 1);
      });
      w.words[NKEYS >> 2] = keys.length;
      w.keys = id;
    },
  } satisfies WasmDoc);
  initTables(w.bytes);
  for (const c of [0x20, 0x09, 0x0a, 0x0d]) w.bytes[WS_TABLE + c] = 1;
  for (const c of [0x20, 0x09, 0x0d]) w.bytes[WS_LINE_TABLE + c] = 1;
  return w;
}

/**
 * The chunk region as a Buffer view ([CHUNK_BASE, + CHUNK_SIZE), 64 addressable bytes after it),
 * or undefined without WebAssembly or memory. One reader at a time: `release()` when done.
 */
export function chunkRegion(): { buf: Buffer; release(): void } | undefined {
  const w = wasmDoc();
  if (w === undefined || regionBusy || !w.ensure(CHUNK_BASE - DATA_BASE + CHUNK_SIZE + 64)) return undefined;
  regionBusy = true;
  let held = true;
  return {
    buf: Buffer.from(w.bytes.buffer, CHUNK_BASE, CHUNK_SIZE),
    release(): void {
      if (held) regionBusy = false;
      held = false;
    },
  };
}
let regionBusy = false;

/** A separate instance of the scalar (no SIMD) variant, for tests. */
export function scalarWasmDocForTests(): WasmDoc | undefined {
  return build(false, unbuilt(false)) ?? undefined;
}

/**
 * The shared instance, or undefined when this runtime has no WebAssembly (e.g. node --jitless).
 * Instantiated on first use (`unbuilt`), not when it is asked for here.
 */
export function wasmDoc(): WasmDoc | undefined {
  if (instance === undefined)
    instance = (globalThis as { WebAssembly?: unknown }).WebAssembly === undefined ? null : unbuilt(true);
  return instance ?? undefined;
}
