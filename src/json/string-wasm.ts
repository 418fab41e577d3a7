// The hot loop of the JSON scanner — validating one string body — as a tiny WebAssembly function,
// assembled here from the listing below (no binary file, no toolchain, no dependency). Pure.
//
// Guarantees: `scanString(p, end)` applies exactly the string rules of json-scan.ts to the bytes
// of its memory from `p` (just past the opening quote) up to `end` (exclusive):
// - a raw byte < 0x20 is refused; bytes >= 0x80 are accepted as they are (UTF-8 validity is the
//   caller's whole-line check);
// - escapes are `\" \\ \/ \b \f \n \r \t \uXXXX` only (hex digits of either case);
// - a `\u` high surrogate (D800–DBFF) must be followed at once by `\u` + a low surrogate
//   (DC00–DFFF); a lone half is refused;
// - it returns the offset of the closing quote when the body has no escape, `-2 - offset` when it
//   has one, and -1 when the body is invalid or no closing quote comes before `end`.
// The caller must place one byte 0x00 at `end` (a sentinel: the scan loop does not test bounds;
// the sentinel is a control byte, so the loop stops there and the bound is checked once).
// Memory layout: [0, 256) byte class (0 plain, 1 quote, 2 backslash, 3 control), [256, 512) simple
// escape letters (1 = valid after `\`), [512, 768) hex digit value + 1 (0 = not a hex digit)
// (`initTables` writes them).
// This file holds the assembler helpers, the function body (`scanStringFunction`), the tables and
// `instantiate`; json-doc-wasm.ts embeds the function in the module json-scan.ts runs. Where
// WebAssembly is unavailable (e.g. node --jitless) json-scan.ts keeps its JavaScript loop, which
// follows the same rules.

// ---- a minimal assembler ----------------------------------------------------------------------

export const I32 = 0x7f;
const EMPTY = 0x40;

export function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return out;
}

export function sleb(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (b & 0x40) === 0) || (n === -1 && (b & 0x40) !== 0)) {
      out.push(b);
      return out;
    }
    out.push(b | 0x80);
  }
}

export const op = {
  block: (t = EMPTY) => [0x02, t],
  loop: (t = EMPTY) => [0x03, t],
  if: (t = EMPTY) => [0x04, t],
  end: [0x0b],
  br: (l: number) => [0x0c, ...uleb(l)],
  brIf: (l: number) => [0x0d, ...uleb(l)],
  ret: [0x0f],
  get: (x: number) => [0x20, ...uleb(x)],
  set: (x: number) => [0x21, ...uleb(x)],
  tee: (x: number) => [0x22, ...uleb(x)],
  load8: (offset = 0) => [0x2d, 0x00, ...uleb(offset)],
  const: (v: number) => [0x41, ...sleb(v)],
  eqz: [0x45],
  eq: [0x46],
  ne: [0x47],
  ltU: [0x49],
  gtU: [0x4b],
  geU: [0x4f],
  add: [0x6a],
  sub: [0x6b],
  and: [0x71],
  or: [0x72],
  shl: [0x74],
  ctz: [0x68],
  // SIMD (0xfd prefix; every sub-opcode used here is < 128, one LEB byte)
  v128Load: (offset = 0) => [0xfd, 0x00, 0x00, ...uleb(offset)],
  v128Splat8: (b: number) => [0xfd, 0x0c, ...new Array<number>(16).fill(b)], // v128.const
  i8x16Eq: [0xfd, 0x23],
  i8x16LtU: [0xfd, 0x26],
  v128Or: [0xfd, 0x50],
  i8x16Bitmask: [0xfd, 0x64],
};
export const V128 = 0x7b;

export function section(id: number, body: number[]): number[] {
  return [id, ...uleb(body.length), ...body];
}

export function name(s: string): number[] {
  return [...uleb(s.length), ...Array.from(s, (c) => c.charCodeAt(0))];
}

// ---- the function: scanString(p, end) -> i32 ----------------------------------------------------

// locals: 0 p, 1 end, 2 c (byte / class / scratch), 3 escaped, 4 cu (code unit), 5 m (mask),
// 6 k (bit), 7 q (byte offset), 8 v (v128)
const P = 0;
const END = 1;
const C = 2;
const ESC = 3;
const CU = 4;
const M = 5;
const K = 6;
const Q = 7;
const V = 8;

/** Scalar: advance p over plain bytes one at a time; leaves c = class of mem[p] (non-zero). */
function skipPlainScalar(): number[] {
  return [
    ...op.loop(),
    ...op.get(P), ...op.load8(0), ...op.load8(0), ...op.tee(C),
    ...op.eqz,
    ...op.if(),
    ...op.get(P), ...op.const(1), ...op.add, ...op.set(P),
    ...op.br(1), // continue the loop (if=0, loop=1)
    ...op.end,
    ...op.end,
  ];
}

/**
 * SIMD: 16 bytes per step; a step stops at the first byte < 0x20, `"` or `\\` (the sentinel at end
 * is one, so p never passes end; the load may read up to 15 bytes past it, see `ensure`). The
 * common escapes (a backslash and one of `" \\ / b f n r t`) are consumed inside the step, bit by
 * bit of its mask, without reloading; anything else leaves p at that byte with c = its class.
 */
function skipPlainSimd(): number[] {
  // labels inside $bits: 0 $bits, 1 $block, 2 $found; inside an `if` there: one more
  return [
    ...op.block(), // $found
    ...op.loop(), // $block
    ...op.get(P), ...op.v128Load(0), ...op.tee(V),
    ...op.v128Splat8(0x20), ...op.i8x16LtU,
    ...op.get(V), ...op.v128Splat8(0x22), ...op.i8x16Eq, ...op.v128Or,
    ...op.get(V), ...op.v128Splat8(0x5c), ...op.i8x16Eq, ...op.v128Or,
    ...op.i8x16Bitmask, ...op.tee(M),
    ...op.eqz,
    ...op.if(),
    ...op.get(P), ...op.const(16), ...op.add, ...op.set(P),
    ...op.br(1), // next block
    ...op.end,
    ...op.loop(), // $bits
    ...op.get(M), ...op.ctz, ...op.tee(K),
    ...op.get(P), ...op.add, ...op.tee(Q),
    ...op.load8(0), ...op.load8(0), ...op.tee(C),
    ...op.const(2), ...op.ne,
    ...op.if(), // not a backslash: found
    ...op.get(Q), ...op.set(P), ...op.br(3),
    ...op.end,
    ...op.get(Q), ...op.load8(1), ...op.load8(256), ...op.eqz,
    ...op.if(), // not a one-letter escape (`\u`, invalid, or the sentinel): found
    ...op.get(Q), ...op.set(P), ...op.br(3),
    ...op.end,
    ...op.const(1), ...op.set(ESC),
    ...op.get(K), ...op.const(2), ...op.add, ...op.tee(K),
    ...op.const(16), ...op.geU,
    ...op.if(), // the escape ends at or past this block's end: load the next one after it
    ...op.get(Q), ...op.const(2), ...op.add, ...op.set(P), ...op.br(2),
    ...op.end,
    ...op.get(M), ...op.const(-1), ...op.get(K), ...op.shl, ...op.and, ...op.tee(M),
    ...op.eqz,
    ...op.if(), // nothing else special in this block
    ...op.get(P), ...op.const(16), ...op.add, ...op.set(P), ...op.br(2),
    ...op.end,
    ...op.br(0), // next special bit
    ...op.end, // $bits
    ...op.end, // $block
    ...op.end, // $found
  ];
}

/** Pushes hex4(p + at) (0..0xffff) or leaves -1 when a digit is invalid: uses C as scratch. */
function hex4(at: number, fail: number[]): number[] {
  const digit = (k: number): number[] => [
    ...op.get(P), ...op.load8(at + k), // byte
    ...op.load8(512), // hex value + 1
    ...op.tee(C), ...op.eqz, ...fail, // invalid digit -> fail
    ...op.get(C), ...op.const(1), ...op.sub,
  ];
  return [
    ...digit(0), ...op.const(12), ...op.shl,
    ...digit(1), ...op.const(8), ...op.shl, ...op.or,
    ...digit(2), ...op.const(4), ...op.shl, ...op.or,
    ...digit(3), ...op.or,
  ];
}

function scanStringBody(simd: boolean): number[] {
  // Block structure (labels counted from the innermost):
  //   block $invalid
  //     loop $next
  //       loop $plain: c = class[mem[p]]; if c == 0 { p++; br $plain }
  //       if c == 1 -> return (quote)
  //       if c == 3 -> br $invalid (control byte, or the sentinel at end)
  //       backslash: escape handling, then br $next
  //   end; return -1
  const invalidFromEscape = op.brIf(1); // inside `loop $next` (depth: loop=0, block=1)
  return [
    ...op.block(),
    ...op.loop(),
    // fast path: skip plain bytes
    ...(simd ? skipPlainSimd() : skipPlainScalar()),
    // quote: the end of the body (a quote byte at p < end is real: the sentinel is 0x00)
    ...op.get(C), ...op.const(1), ...op.eq,
    ...op.if(),
    ...op.get(ESC),
    ...op.if(I32),
    ...op.const(-2), ...op.get(P), ...op.sub,
    [0x05], // else
    ...op.get(P),
    ...op.end,
    ...op.ret,
    ...op.end,
    // control byte (or the sentinel at end): invalid
    ...op.get(C), ...op.const(3), ...op.eq, ...invalidFromEscape,
    // backslash at p: the escape needs p + 1 < end
    ...op.const(1), ...op.set(ESC),
    ...op.get(P), ...op.const(1), ...op.add, ...op.get(END), ...op.geU, ...invalidFromEscape,
    ...op.get(P), ...op.load8(1), ...op.tee(C),
    ...op.const(0x75), ...op.ne,
    ...op.if(),
    // simple escape
    ...op.get(C), ...op.load8(256), ...op.eqz, ...op.brIf(2), // if=0, next=1, invalid=2
    ...op.get(P), ...op.const(2), ...op.add, ...op.set(P),
    ...op.br(1), // continue $next
    ...op.end,
    // \uXXXX: needs p + 6 <= end
    ...op.get(P), ...op.const(6), ...op.add, ...op.get(END), ...op.gtU, ...invalidFromEscape,
    ...hex4(2, invalidFromEscape), ...op.set(CU),
    ...op.get(P), ...op.const(6), ...op.add, ...op.set(P),
    // cu - 0xd800 < 0x800: a surrogate half
    ...op.get(CU), ...op.const(0xd800), ...op.sub, ...op.const(0x800), ...op.ltU,
    ...op.if(),
    // a low half first is refused
    ...op.get(CU), ...op.const(0xdc00), ...op.geU, ...op.brIf(2),
    // a high half needs `\u` + low at once: p + 6 <= end, bytes `\` `u`
    ...op.get(P), ...op.const(6), ...op.add, ...op.get(END), ...op.gtU, ...op.brIf(2),
    ...op.get(P), ...op.load8(0), ...op.const(0x5c), ...op.ne, ...op.brIf(2),
    ...op.get(P), ...op.load8(1), ...op.const(0x75), ...op.ne, ...op.brIf(2),
    ...hex4(2, op.brIf(2)), ...op.const(0xdc00), ...op.sub, ...op.const(0x400), ...op.geU, ...op.brIf(2),
    ...op.get(P), ...op.const(6), ...op.add, ...op.set(P),
    ...op.end,
    ...op.br(0), // continue $next
    ...op.end, // end $next
    ...op.end, // end $invalid
    ...op.const(-1),
  ].flat();
}

/** The whole body (locals and code) of scanString, for modules that embed it as a function. */
export function scanStringFunction(simd: boolean): number[] {
  // locals: 6 i32 (c, escaped, cu, m, k, q), then 1 v128 (v)
  return [...uleb(2), ...uleb(6), I32, ...uleb(1), V128, ...scanStringBody(simd), ...op.end];
}

// ---- instance ---------------------------------------------------------------------------------

// The few WebAssembly JS-API members used here (the configured libs do not declare them).
export interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
export interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
}

/**
 * Instantiates the module `moduleBytes(simd)` assembles: the SIMD variant unless `simd` is false
 * or the CPU cannot run it, then the scalar one; null without WebAssembly (e.g. node --jitless)
 * or when neither instantiates.
 */
export function instantiate(moduleBytes: (simd: boolean) => Uint8Array, simd = true): { exports: Record<string, unknown> } | null {
  const api = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
  if (api === undefined) return null;
  if (simd) {
    try {
      return new api.Instance(new api.Module(moduleBytes(true)), {});
    } catch {
      // a CPU without SIMD: the scalar variant below
    }
  }
  try {
    return new api.Instance(new api.Module(moduleBytes(false)), {});
  } catch {
    return null;
  }
}

/** Writes the lookup tables of the memory layout above into a fresh memory's first 768 bytes. */
export function initTables(m: Uint8Array): void {
  for (let c = 0; c < 0x20; c++) m[c] = 3;
  m[0x22] = 1;
  m[0x5c] = 2;
  for (const e of '"\\/bfnrt') m[256 + e.charCodeAt(0)] = 1;
  for (let d = 0; d < 10; d++) m[512 + 0x30 + d] = d + 1;
  for (let d = 0; d < 6; d++) {
    m[512 + 0x61 + d] = d + 11;
    m[512 + 0x41 + d] = d + 11;
  }
}
