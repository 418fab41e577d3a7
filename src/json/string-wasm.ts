// The hot loop of the JSON scanner — validating one string body — as a WebAssembly function,
// written with the labelled assembler (wasm-asm.ts). Pure. See src/json/README.md.
//
// Guarantees: `scanString(p, end)` applies exactly the string rules of scan.ts to the bytes
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
// doc-wasm.ts embeds the function (`scanStringFunction`, in a scalar and a SIMD variant) in the
// module scan.ts runs, and writes the tables (`initTables`) into its memory. Where WebAssembly is
// unavailable (e.g. node --jitless) scan.ts keeps its JavaScript loop, which follows the same rules.

import {
  I32,
  V128,
  add,
  and,
  bitmask,
  block,
  br,
  brIf,
  ctz,
  eq,
  eqz,
  geU,
  get,
  gtU,
  i8x16Eq,
  i8x16LtU,
  ifElse,
  inc,
  k,
  ld8,
  loop,
  ltU,
  ne,
  or,
  ret,
  set,
  shl,
  sub,
  tee,
  v128Load,
  v128Or,
  splat8,
  when,
  type Code,
  type WasmFunction,
} from './wasm-asm.js';

// ---- the function: scanString(p, end) -> i32 ----------------------------------------------------

// params: 0 p, 1 end; locals: 2 c (byte / class / scratch), 3 escaped, 4 cu (code unit), 5 m (mask),
// 6 bit (of the mask), 7 q (byte offset), 8 v (v128)
const P = 0;
const END = 1;
const C = 2;
const ESC = 3;
const CU = 4;
const M = 5;
const BIT = 6;
const Q = 7;
const V = 8;

/** Scalar: advance p over plain bytes one at a time; leaves c = class of mem[p] (non-zero). */
function skipPlainScalar(): Code {
  return loop('plain', when(eqz(tee(C, ld8(ld8(get(P))))), inc(P), br('plain')));
}

/**
 * SIMD: 16 bytes per step; a step stops at the first byte < 0x20, `"` or `\\` (the sentinel at end
 * is one, so p never passes end; the load may read up to 15 bytes past it, see `ensure`). The
 * common escapes (a backslash and one of `" \\ / b f n r t`) are consumed inside the step, bit by
 * bit of its mask, without reloading; anything else leaves p at that byte with c = its class.
 */
function skipPlainSimd(): Code {
  // m: one bit per special byte of the 16 at p
  const special = bitmask(
    v128Or(
      v128Or(i8x16LtU(tee(V, v128Load(get(P))), splat8(0x20)), i8x16Eq(get(V), splat8(0x22))),
      i8x16Eq(get(V), splat8(0x5c)),
    ),
  );
  return block(
    'found',
    loop(
      'step',
      when(eqz(tee(M, special)), inc(P, 16), br('step')),
      loop(
        'bits',
        // bit: the lowest special byte left, q: its offset, c: its class; not a backslash: found
        when(ne(tee(C, ld8(ld8(tee(Q, add(tee(BIT, ctz(get(M))), get(P)))))), k(2)), set(P, get(Q)), br('found')),
        // not a one-letter escape (`\u`, invalid, or the sentinel): found
        when(eqz(ld8(ld8(get(Q), 1), 256)), set(P, get(Q)), br('found')),
        set(ESC, k(1)),
        // the escape ends at or past this step's 16 bytes: load the next 16 after it
        when(geU(tee(BIT, add(get(BIT), k(2))), k(16)), set(P, add(get(Q), k(2))), br('step')),
        // nothing else special in these 16 bytes
        when(eqz(tee(M, and(get(M), shl(k(-1), get(BIT))))), inc(P, 16), br('step')),
        br('bits'),
      ),
    ),
  );
}

/** hex4(p + at) (0..0xffff) as a value; branches to `fail` when a digit is invalid. C is scratch. */
function hex4(at: number, fail: string): Code {
  // hex value + 1 from the table (0 = not a hex digit)
  const digit = (i: number): Code => [brIf(fail, eqz(tee(C, ld8(ld8(get(P), at + i), 512)))), sub(get(C), k(1))];
  return or(or(or(shl(digit(0), k(12)), shl(digit(1), k(8))), shl(digit(2), k(4))), digit(3));
}

function scanStringBody(simd: boolean): Code {
  return [
    block(
      'invalid',
      loop(
        'next',
        // fast path: skip plain bytes; c = the class of the byte p stops at
        simd ? skipPlainSimd() : skipPlainScalar(),
        // quote: the end of the body (a quote byte at p < end is real: the sentinel is 0x00)
        when(eq(get(C), k(1)), ret(ifElse(get(ESC), [sub(k(-2), get(P))], [get(P)], I32))),
        // control byte (or the sentinel at end): invalid
        brIf('invalid', eq(get(C), k(3))),
        // backslash at p: the escape needs p + 1 < end
        set(ESC, k(1)),
        brIf('invalid', geU(add(get(P), k(1)), get(END))),
        when(
          ne(tee(C, ld8(get(P), 1)), k(0x75)),
          // a one-letter escape
          brIf('invalid', eqz(ld8(get(C), 256))),
          inc(P, 2),
          br('next'),
        ),
        // \uXXXX: needs p + 6 <= end
        brIf('invalid', gtU(add(get(P), k(6)), get(END))),
        set(CU, hex4(2, 'invalid')),
        inc(P, 6),
        when(
          ltU(sub(get(CU), k(0xd800)), k(0x800)), // a surrogate half
          // a low half first is refused
          brIf('invalid', geU(get(CU), k(0xdc00))),
          // a high half needs `\u` + a low half at once: p + 6 <= end, bytes `\` `u`
          brIf('invalid', gtU(add(get(P), k(6)), get(END))),
          brIf('invalid', ne(ld8(get(P)), k(0x5c))),
          brIf('invalid', ne(ld8(get(P), 1), k(0x75))),
          brIf('invalid', geU(sub(hex4(2, 'invalid'), k(0xdc00)), k(0x400))),
          inc(P, 6),
        ),
        br('next'),
      ),
    ),
    k(-1),
  ];
}

/** scanString(p, end) -> i32, for the module doc-wasm.ts builds. */
export function scanStringFunction(simd: boolean): WasmFunction {
  // locals after the two params: 6 i32 (c, escaped, cu, m, bit, q), then 1 v128 (v)
  return {
    params: [I32, I32],
    results: [I32],
    locals: [
      [6, I32],
      [1, V128],
    ],
    body: scanStringBody(simd),
  };
}

// ---- tables ----------------------------------------------------------------------------------

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
