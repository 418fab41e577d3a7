// The classifier's contract, guarded differentially: on every generated line, `classifyMessage`
// must agree with an independent oracle built on JSON.parse (RFC 8259 grammar, last duplicate key
// wins) plus serde_json's extra refusals checked on the parsed value (nesting deeper than 127,
// a number that parsed to ±Infinity, a lone surrogate in any string or key). This is the guard
// for any rewrite of src/json/scan.ts (speed), so it is deliberately broad.
import { describe, expect, it } from 'vitest';
import {
  JsonScanner,
  T_ARRAY,
  T_OBJECT,
  T_STRING,
  classifyMessage,
  jsonKeys,
  spanString,
  spanU64,
} from '../../src/json/scan.js';
import { mutate } from './helpers.js';

function wellFormed(s: string): boolean {
  return (s as unknown as { isWellFormed(): boolean }).isWellFormed();
}

/** serde_json's verdict on a value JSON.parse produced: depth, ±Infinity, lone surrogates. */
function serdeAccepts(v: unknown, depth: number): boolean {
  if (typeof v === 'number') return Number.isFinite(v);
  if (typeof v === 'string') return wellFormed(v);
  if (v === null || typeof v !== 'object') return true;
  if (depth >= 127) return false; // this container would be level depth+1 = 128
  if (Array.isArray(v)) return v.every((x) => serdeAccepts(x, depth + 1));
  return Object.entries(v).every(([k, x]) => wellFormed(k) && serdeAccepts(x, depth + 1));
}

function oracle(text: string): { isMessage: boolean; id: string | undefined } {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return { isMessage: false, id: undefined };
  }
  if (!serdeAccepts(v, 0) || typeof v !== 'object' || v === null || Array.isArray(v))
    return { isMessage: false, id: undefined };
  const o = v as Record<string, unknown>;
  if (!Object.hasOwn(o, 'role') || typeof o['role'] !== 'string') return { isMessage: false, id: undefined };
  return { isMessage: true, id: typeof o['id'] === 'string' ? o['id'] : undefined };
}

const SEEDS = [
  '{"role":"user","content":[{"type":"text","text":"hé 😀 \\n \\" \\\\ \\u00e9"}],"id":"msg_1"}',
  '{"role":"assistant","content":"x","id":"msg_2","tool_calls":[{"id":"c","args":{"a":[1,2.5,-3e2,true,false,null]}}]}',
  '{"role":"tool","tool_call_id":"c","is_error":false,"content":"ok","id":"msg_3"}',
  '{"type":"murmur.record","capsule":"c","created_ms":1756400000000}',
  '{"role":1,"role":"user","id":"a","id":"b"}',
  '{"r\\u006fle":"user","n":1e308,"m":-0.0,"k":0,"s":"\\ud83d\\ude00"}',
  '[{"role":"user"}]',
  ' \t{"role" : "user" ,"id":"x"}\r',
];
const ALPHABET = [
  '{',
  '}',
  '[',
  ']',
  '"',
  ':',
  ',',
  '\\',
  'u',
  'd',
  '8',
  '0',
  'e',
  '1',
  '9',
  '-',
  '+',
  '.',
  ' ',
  '\t',
  '\r',
  '\f',
  'x',
  'role',
  '"role"',
  'id',
  'null',
  'true',
  '\u0001',
  'é',
  '😀',
  '\\ud800',
  '\\udc00',
  '1e400',
  '00',
];

describe('json-scan: agrees with the JSON.parse-based oracle', () => {
  it('on 30 000 mutated lines (deterministic)', () => {
    let seed = 20261130;
    const rnd = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    let disagreements = 0;
    const samples: string[] = [];
    for (let n = 0; n < 30_000; n++) {
      const seedLine = SEEDS[rnd(SEEDS.length)]!;
      const edits = 1 + rnd(3);
      const s = mutate(seedLine, edits, rnd, ALPHABET);
      if (!wellFormed(s)) continue; // the file-level UTF-8 check is not the line classifier's
      const buf = Buffer.from(s, 'utf8');
      const got = classifyMessage(buf, 0, buf.length);
      const want = oracle(s);
      if (got.isMessage !== want.isMessage || got.id !== want.id) {
        disagreements++;
        if (samples.length < 5) samples.push(s);
      }
    }
    expect(samples).toEqual([]);
    expect(disagreements).toBe(0);
  });

  it('at the depth limit, exactly (arrays and objects, any position)', () => {
    for (let d = 120; d <= 130; d++) {
      for (const inner of ['['.repeat(d) + ']'.repeat(d), '{"a":'.repeat(d) + '0' + '}'.repeat(d)]) {
        const line = `{"role":"user","x":${inner}}`;
        const buf = Buffer.from(line);
        expect(classifyMessage(buf, 0, buf.length).isMessage, `depth ${d + 1}`).toBe(oracle(line).isMessage);
      }
    }
  });
});

describe('json-scan: the scanner interface', () => {
  it('gives the last span of each wanted top-level key, and only top-level ones', () => {
    const sc = new JsonScanner();
    const buf = Buffer.from('{"a":{"k":1},"k":"x","k":"y\\n","n":18446744073709551615,"m":[1,2]}');
    expect(sc.scan(buf, 0, buf.length, jsonKeys('k', 'n', 'absent'))).toBe(true);
    expect(sc.top).toBe(T_OBJECT);
    expect(spanString(buf, sc.fields[0]!)).toBe('y\n');
    expect(spanU64(buf, sc.fields[1]!)).toBe(18446744073709551615n);
    expect(sc.fields[2]!.type).toBe(0);
  });

  it('scans a sub-range of a larger buffer and lists a top-level array', () => {
    const sc = new JsonScanner();
    const buf = Buffer.from('xx["a",2,[3]]yy');
    expect(sc.scan(buf, 2, buf.length - 2)).toBe(true);
    expect(sc.top).toBe(T_ARRAY);
    expect(sc.itemCount).toBe(3);
    expect(sc.items[0]!.type).toBe(T_STRING);
    expect(sc.scan(buf, 0, buf.length)).toBe(false);
  });

  it('is reusable: a failed scan leaves no field behind', () => {
    const sc = new JsonScanner();
    const keys = jsonKeys('role');
    const ok = Buffer.from('{"role":"u"}');
    const bad = Buffer.from('{"x":1}');
    expect(sc.scan(ok, 0, ok.length, keys)).toBe(true);
    expect(sc.scan(bad, 0, bad.length, keys)).toBe(true);
    expect(sc.fields[0]!.type).toBe(0);
  });
});
