// A JSON string's value and JSON text, written from its bytes (src/json/string-bytes.ts), are
// exactly what JSON.parse and JSON.stringify give, on generated strings of every kind of character
// spelled every way JSON allows (as they are, `\uXXXX`, surrogate pairs, `\/`, short escapes); and
// neither is ever longer than the bytes it comes from.
import { describe, expect, it } from 'vitest';
import { CANONICAL, VALUE, stringBytes, writeString } from '../../src/json/string-bytes.js';
import { prng } from '../helpers/fixtures.js';

const CHARS = [
  'a',
  ' ',
  '/',
  '"',
  '\\',
  '\b',
  '\f',
  '\n',
  '\r',
  '\t',
  '\u0000',
  '\u0001',
  '\u001f',
  '\u007f',
  'é',
  '€',
  '\u2028',
  '\u2029',
  '\uffff',
  '😀',
  '\u{10ffff}',
];

/** `s` spelled as JSON, each character as it is or escaped, at random (valid JSON whatever the choice). */
function spell(rnd: () => number, s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0) as number;
    const plain = JSON.stringify(ch).slice(1, -1);
    const r = rnd();
    if (r < 0.4) out += plain;
    else if (r < 0.5 && ch === '/') out += '\\/';
    else if (cp > 0xffff) {
      const hi = 0xd800 + ((cp - 0x10000) >> 10);
      const lo = 0xdc00 + ((cp - 0x10000) & 0x3ff);
      out += `\\u${hi.toString(16).padStart(4, '0')}\\u${(r < 0.7 ? lo.toString(16) : lo.toString(16).toUpperCase()).padStart(4, '0')}`;
    } else out += `\\u${(r < 0.7 ? cp.toString(16) : cp.toString(16).toUpperCase()).padStart(4, '0')}`;
  }
  return out + '"';
}

describe('string-bytes', () => {
  it('writes the value and the JSON text JSON.parse and JSON.stringify give, on 3 000 generated strings', () => {
    const rnd = prng(7);
    for (let t = 0; t < 3000; t++) {
      const s = Array.from({ length: Math.floor(rnd() * 40) }, () => CHARS[Math.floor(rnd() * CHARS.length)]).join('');
      const raw = Buffer.from(spell(rnd, s));
      expect(JSON.parse(raw.toString())).toBe(s);
      const value = Buffer.from(s);
      const canonical = Buffer.from(JSON.stringify(s).slice(1, -1));
      expect(stringBytes(raw, 1, raw.length - 1, VALUE), raw.toString()).toBe(value.length);
      expect(stringBytes(raw, 1, raw.length - 1, CANONICAL), raw.toString()).toBe(canonical.length);
      for (const [mode, want] of [
        [VALUE, value],
        [CANONICAL, canonical],
      ] as const) {
        const out = Buffer.alloc(raw.length + 4, 0xee);
        const n = writeString(raw, 1, raw.length - 1, mode, out, 2);
        expect(out.subarray(2, 2 + n).equals(want), raw.toString()).toBe(true);
        expect(n).toBeLessThanOrEqual(raw.length - 2);
        expect([out[0], out[1], out[2 + n]]).toEqual([0xee, 0xee, n + 2 < out.length ? 0xee : undefined]);
      }
    }
  });
});
