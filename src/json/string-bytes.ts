// A JSON string's value and its JSON text, from the bytes of a string `scan` accepted (src/json/scan.ts:
// valid escapes, surrogate escapes in pairs), without decoding it into a JS string, pure. For a
// string of tens of MiB that would be two copies of it in the heap; here it is counted in one pass
// with no allocation and written straight into a buffer the caller holds.
// - `stringBytes(buf, s, e, mode)`: the length of what `writeString` writes, for buf[s, e) (the
//   bytes between the quotes);
// - `writeString(buf, s, e, mode, out, at)`: writes it at out[at] and returns its length.
// Modes: VALUE, the string's value as UTF-8; CANONICAL, its content as JSON.stringify (and
// serde_json) writes it — `"` and `\` escaped, `\b \f \n \r \t`, other characters below U+0020 as
// `\u00xx` (lowercase), everything else (`/`, U+2028, U+2029, non-ASCII) as its UTF-8. Either is
// never longer than the bytes it comes from (test/json/string-bytes.test.ts compares both with
// JSON.parse and JSON.stringify).

export const VALUE = 0;
export const CANONICAL = 1;
export type StringMode = typeof VALUE | typeof CANONICAL;

/** The character a two-byte escape `\x` stands for, by x (0: not one) */
const SHORT = new Uint8Array(128);
for (const [x, c] of [
  [0x22, 0x22],
  [0x5c, 0x5c],
  [0x2f, 0x2f],
  [0x62, 0x08],
  [0x66, 0x0c],
  [0x6e, 0x0a],
  [0x72, 0x0d],
  [0x74, 0x09],
] as const)
  SHORT[x] = c;
/** How CANONICAL writes a character below 0x80: 0 as it is, else the letter of its two-byte escape, 0xff as `\u00xx` */
const CANON = new Uint8Array(128);
for (let c = 0; c < 0x20; c++) CANON[c] = 0xff;
for (const [c, x] of [
  [0x22, 0x22],
  [0x5c, 0x5c],
  [0x08, 0x62],
  [0x0c, 0x66],
  [0x0a, 0x6e],
  [0x0d, 0x72],
  [0x09, 0x74],
] as const)
  CANON[c] = x;
const HEX = Buffer.from('0123456789abcdef');

function hexVal(c: number): number {
  return c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x57;
}

function hex4(buf: Uint8Array, i: number): number {
  return (
    (hexVal(buf[i] as number) << 12) |
    (hexVal(buf[i + 1] as number) << 8) |
    (hexVal(buf[i + 2] as number) << 4) |
    hexVal(buf[i + 3] as number)
  );
}

/** Length (and, with `out`, the bytes) of code point `cp` in `mode`. */
function emit(cp: number, mode: StringMode, out: Uint8Array | undefined, at: number): number {
  if (cp < 0x80) {
    const x = mode === CANONICAL ? (CANON[cp] as number) : 0;
    if (x === 0) {
      if (out) out[at] = cp;
      return 1;
    }
    if (x !== 0xff) {
      if (out) {
        out[at] = 0x5c;
        out[at + 1] = x;
      }
      return 2;
    }
    if (out) {
      out[at] = 0x5c;
      out[at + 1] = 0x75;
      out[at + 2] = 0x30;
      out[at + 3] = 0x30;
      out[at + 4] = HEX[cp >> 4] as number;
      out[at + 5] = HEX[cp & 15] as number;
    }
    return 6;
  }
  if (cp < 0x800) {
    if (out) {
      out[at] = 0xc0 | (cp >> 6);
      out[at + 1] = 0x80 | (cp & 63);
    }
    return 2;
  }
  if (cp < 0x10000) {
    if (out) {
      out[at] = 0xe0 | (cp >> 12);
      out[at + 1] = 0x80 | ((cp >> 6) & 63);
      out[at + 2] = 0x80 | (cp & 63);
    }
    return 3;
  }
  if (out) {
    out[at] = 0xf0 | (cp >> 18);
    out[at + 1] = 0x80 | ((cp >> 12) & 63);
    out[at + 2] = 0x80 | ((cp >> 6) & 63);
    out[at + 3] = 0x80 | (cp & 63);
  }
  return 4;
}

function walk(
  buf: Uint8Array,
  s: number,
  e: number,
  mode: StringMode,
  out: Uint8Array | undefined,
  at: number,
): number {
  let n = 0;
  let i = s;
  while (i < e) {
    const b = buf[i] as number;
    if (b !== 0x5c) {
      // a run of bytes as they are (none is a quote, a backslash or a control character: scan refused those)
      let j = i + 1;
      while (j < e && buf[j] !== 0x5c) j++;
      if (out) {
        if (j - i > 16) out.set(buf.subarray(i, j), at + n);
        else for (let k = i; k < j; k++) out[at + n + k - i] = buf[k] as number;
      }
      n += j - i;
      i = j;
      continue;
    }
    const c = buf[i + 1] as number;
    if (c !== 0x75) {
      const cp = SHORT[c] as number;
      i += 2;
      if (mode === VALUE || CANON[cp] === 0) {
        if (out) out[at + n] = cp;
        n++;
      } else {
        // (a short escape's character is written as the same short escape, `\/` as `/`)
        if (out) {
          out[at + n] = 0x5c;
          out[at + n + 1] = CANON[cp] as number;
        }
        n += 2;
      }
      continue;
    }
    let cp = hex4(buf, i + 2);
    i += 6;
    if (cp >= 0xd800 && cp <= 0xdbff && buf[i] === 0x5c && buf[i + 1] === 0x75) {
      const lo = hex4(buf, i + 2);
      if (lo >= 0xdc00 && lo <= 0xdfff) {
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        i += 6;
      }
    }
    n += emit(cp, mode, out, at + n);
  }
  return n;
}

/** The length of buf[s, e)'s string in `mode` (the bytes between its quotes). */
export function stringBytes(buf: Uint8Array, s: number, e: number, mode: StringMode): number {
  return walk(buf, s, e, mode, undefined, 0);
}

/** Writes buf[s, e)'s string in `mode` at out[at]; returns how many bytes (out must hold stringBytes of them). */
export function writeString(
  buf: Uint8Array,
  s: number,
  e: number,
  mode: StringMode,
  out: Uint8Array,
  at: number,
): number {
  return walk(buf, s, e, mode, out, at);
}
