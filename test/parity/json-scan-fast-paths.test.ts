// The scanner's fast paths must not change a single verdict. The WebAssembly string
// loop (json-string-wasm.ts: 16 bytes per SIMD step, a sentinel instead of bound checks, short
// strings finished in JavaScript) is compared with the JavaScript loop (`wasm: false`) and with
// the JSON.parse-based oracle on strings built to hit its edges: an escape, a quote or a control
// byte at every offset around the 16-byte steps and the 24-byte short-string cut, multi-byte
// UTF-8 across those edges, `\u` escapes cut short at the end of the scanned range, surrogate
// pairs (escaped, split, reversed, lone) and UTF-8-encoded surrogates and overlong forms (which
// the scanner passes through and the caller's UTF-8 check refuses, as the runtime does).
import { isUtf8 } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import {
  JsonScanner,
  T_OBJECT,
  T_STRING,
  classifyMessage,
  isMessageLine,
  jsonKeys,
  lastMessageIdSpan,
  spanString,
} from '../../src/json/scan.js';
import { wasmDoc } from '../../src/json/doc-wasm.js';

const KEYS = jsonKeys('role', 'id');
const fast = new JsonScanner();
const slow = new JsonScanner({ wasm: false });

/** serde_json's verdict for a message line, from JSON.parse plus its extra refusals. */
function oracle(bytes: Buffer): boolean {
  if (!isUtf8(bytes)) return false; // the caller's rule: not UTF-8, not a message
  let v: unknown;
  try {
    v = JSON.parse(bytes.toString('utf8'));
  } catch {
    return false;
  }
  const ok = (x: unknown): boolean =>
    typeof x === 'string'
      ? (x as unknown as { isWellFormed(): boolean }).isWellFormed()
      : typeof x === 'number'
        ? Number.isFinite(x)
        : x === null || typeof x !== 'object'
          ? true
          : Object.entries(x).every(([k, y]) => ok(k) && ok(y));
  if (!ok(v) || typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  return typeof (v as Record<string, unknown>)['role'] === 'string';
}

/** Both loops' verdicts and spans on one line, checked against each other and the oracle. */
function check(line: Buffer): boolean {
  const a = fast.scan(line, 0, line.length, KEYS);
  const b = slow.scan(line, 0, line.length, KEYS);
  expect(a, line.toString('latin1')).toBe(b);
  if (a) {
    for (let k = 0; k < 2; k++) {
      const fa = fast.fields[k]!;
      const fb = slow.fields[k]!;
      expect([fa.type, fa.start, fa.end, fa.escaped]).toEqual([fb.type, fb.start, fb.end, fb.escaped]);
    }
  }
  const message = isUtf8(line) && a && fast.top === T_OBJECT && fast.fields[0]!.type === T_STRING;
  expect(message, line.toString('latin1')).toBe(oracle(line));
  return a;
}

function line(content: Buffer | string, id = 'msg_1'): Buffer {
  const body = typeof content === 'string' ? Buffer.from(content, 'latin1') : content;
  return Buffer.concat([Buffer.from('{"role":"user","content":"'), body, Buffer.from(`","id":"${id}"}`)]);
}

describe('json-scan fast paths agree with the JavaScript loop and the oracle', () => {
  it('runs the WebAssembly loop on this Node (else these tests compare the fallback with itself)', () => {
    expect(wasmDoc()).toBeDefined();
  });

  it('a special byte at every offset from 0 to 70 of a string body', () => {
    const specials = [
      '\\"',
      '\\\\',
      '\\/',
      '\\b',
      '\\f',
      '\\n',
      '\\r',
      '\\t',
      '\\u00e9',
      '\\ud83d\\ude00',
      '\\x',
      '\\u12',
      '\\ud800',
      '\\udc00',
      '\\ud800\\u0041',
      '\\ude00\\ud83d',
      '\\udc00\\udc00',
      '\\ud800\\ud800',
      '\\uDBFF\\uDFFF',
      '\\uD7FF',
      '\\uE000',
      '\x01',
      '\x1f',
      '\x7f',
      '"',
      '\\',
    ];
    let accepted = 0;
    for (const sp of specials) {
      for (let at = 0; at <= 70; at++) {
        for (const tail of [0, 1, 15, 16, 17, 40]) {
          if (check(line('a'.repeat(at) + sp + 'b'.repeat(tail)))) accepted++;
        }
      }
    }
    expect(accepted).toBeGreaterThan(0);
  });

  it('multi-byte UTF-8 across the 16-byte steps, and the short-string cut', () => {
    for (const ch of ['é', '日', '😀']) {
      for (let at = 0; at <= 40; at++) {
        expect(
          check(line(Buffer.concat([Buffer.from('x'.repeat(at)), Buffer.from(ch), Buffer.from('y'.repeat(20))]))),
        ).toBe(true);
        expect(check(line(Buffer.concat([Buffer.from('x'.repeat(at)), Buffer.from(ch), Buffer.from('\\n')])))).toBe(
          true,
        );
      }
    }
  });

  it('UTF-8-encoded surrogates, overlong forms and stray bytes are refused by the UTF-8 rule', () => {
    const bad = [
      [0xed, 0xa0, 0x80],
      [0xed, 0xbf, 0xbf],
      [0xc0, 0xaf],
      [0xe0, 0x80, 0xaf],
      [0xf0, 0x80, 0x80, 0xaf],
      [0xf4, 0x90, 0x80, 0x80],
      [0x80],
      [0xff],
      [0xc3],
    ];
    for (const seq of bad) {
      for (const at of [0, 15, 16, 23, 24, 31, 32]) {
        const l = line(Buffer.concat([Buffer.from('z'.repeat(at)), Buffer.from(seq), Buffer.from('q'.repeat(5))]));
        expect(isUtf8(l)).toBe(false);
        check(l);
        expect(isMessageLine(l, 0, l.length) && isUtf8(l)).toBe(false);
      }
    }
  });

  it('a string cut at the end of the scanned range, at every length (the sentinel is the bound)', () => {
    const full = Buffer.from('{"role":"' + 'r'.repeat(30) + '\\u00e9\\ud83d\\ude00\\n' + 'r'.repeat(20) + '"}');
    for (let end = 0; end <= full.length; end++) {
      // the rest of the buffer holds a closing quote and brace that must not be read
      const a = fast.scan(full, 0, end, KEYS);
      const b = slow.scan(full, 0, end, KEYS);
      expect(a, `end ${end}`).toBe(b);
      expect(a).toBe(end === full.length);
    }
  });

  it('a line of only ASCII, long, in a buffer with bytes before and after it', () => {
    const plain = 'The quick brown fox jumps over the lazy dog. '.repeat(400);
    const l = line(plain);
    const framed = Buffer.concat([Buffer.from('"\\\x01'), l, Buffer.from('\x00"\\')]);
    const a = fast.scan(framed, 3, 3 + l.length, KEYS);
    expect(a).toBe(true);
    expect(spanString(framed, fast.fields[0]!)).toBe('user');
    expect(spanString(framed, fast.fields[1]!)).toBe('msg_1');
    expect(classifyMessage(framed, 3, 3 + l.length)).toEqual({ isMessage: true, id: 'msg_1' });
  });

  it('random escape-heavy lines (deterministic)', () => {
    let seed = 12;
    const rnd = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const parts = [
      'a',
      'bc',
      ' ',
      'é',
      '日本',
      '😀',
      '\\"',
      '\\\\',
      '\\n',
      '\\t',
      '\\/',
      '\\u0041',
      '\\ud83d\\ude00',
      '\\ud83d',
      '\\ude00',
      '\\udfff',
      '\\u00',
      '\\q',
      '\x1b',
      '\t',
      '"',
      '\\',
    ];
    let messages = 0;
    for (let n = 0; n < 4000; n++) {
      let s = '';
      const count = rnd(60);
      for (let k = 0; k < count; k++) s += parts[rnd(rnd(4) === 0 ? parts.length : 13)];
      const id = rnd(5) === 0 ? 'm\\u0073g' : 'msg_' + n;
      const l = line(Buffer.from(s, 'utf8'), id);
      if (check(l) && isUtf8(l) && isMessageLine(l, 0, l.length)) {
        messages++;
        const span = lastMessageIdSpan();
        expect(spanString(l, span)).toBe(id === 'm\\u0073g' ? 'msg' : id);
      }
    }
    expect(messages).toBeGreaterThan(200);
  });

  it('a document longer than the WebAssembly window is still judged exactly', () => {
    const big = line('x'.repeat(5 * 1024 * 1024) + '\\n');
    expect(check(big)).toBe(true);
    const bad = line('x'.repeat(5 * 1024 * 1024) + '\x01');
    expect(check(bad)).toBe(false);
  });
});
