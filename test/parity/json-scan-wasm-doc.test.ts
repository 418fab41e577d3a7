// The WebAssembly document validator (json-doc-wasm.ts) must not change one verdict of
// the JavaScript scanner it speeds up. Side by side on the same generated and mutated lines, three
// scanners must give identical answers: the default one (WebAssembly `doc`, JavaScript for what it
// leaves undecided), the JavaScript walk with the WebAssembly string loop (`doc: false`) and the
// JavaScript scanner alone (`wasm: false`, what `node --jitless` runs) — validity, top-level type,
// and every wanted key's / top-level item's span, type and escape flag. And the chunk walk
// (`countMessageLines`, WebAssembly `lines`) must count what `isMessageLine` counts line by line
// and report the same last message id. The lines are built to hit the validator's edges: escapes
// and quotes at 16-byte boundaries, numbers near the f64 limits (the undecided path), depth
// 127/128, duplicate `role` keys with different value types, keys with escapes that decode to
// `role`, whitespace around the document, documents that are only a number, a string or an array.
// Which wanted keys occur more than once at the top level (`dupes`: a typed serde struct, the
// record header, refuses those) is part of every answer compared.
import { describe, expect, it } from 'vitest';
import {
  JsonScanner,
  T_NONE,
  countMessageLines,
  countMessageLinesJs,
  isMessageLine,
  jsonKeys,
  lastMessageIdSpan,
  messageCount,
  type JsonKeys,
  type Span,
} from '../../src/json/scan.js';
import {
  DATA_BASE,
  FIELDS,
  OUT_COUNT,
  OUT_DUPES,
  OUT_LAST,
  OUT_STOP,
  OUT_TOP,
  keysFit,
  scalarWasmDocForTests,
  wasmDoc,
  type WasmDoc,
} from '../../src/json/doc-wasm.js';
import { mutate } from './helpers.js';

const doc = new JsonScanner();
const strings = new JsonScanner({ doc: false });
const js = new JsonScanner({ wasm: false });

const KEY_SETS: JsonKeys[] = [
  jsonKeys('role', 'id'),
  jsonKeys('type', 'capsule', 'created_ms', 'truncated'),
  jsonKeys('event_type', 'event_id', 'context_id', 'task_id', 'trust', 'work_id', 'binary', 'command', 'timestamp'),
  jsonKeys(),
];

function answer(sc: JsonScanner, buf: Buffer, keys: JsonKeys): unknown {
  if (!sc.scan(buf, 0, buf.length, keys)) return false;
  const span = (s: Span): unknown =>
    s.type === T_NONE ? 0 : [s.type, s.start, s.end, s.type === 3 ? s.escaped : false];
  return {
    top: sc.top,
    dupes: sc.dupes,
    fields: keys.bytes.map((_, k) => span(sc.fields[k]!)),
    items: sc.top === 2 ? [sc.itemCount, sc.items.slice(0, Math.min(8, sc.itemCount)).map(span)] : 0,
  };
}

/** Asserts the three scanners agree on `line`; returns whether it is valid. */
function agree(line: Buffer, keys: JsonKeys = KEY_SETS[0]!): boolean {
  const want = answer(js, line, keys);
  expect(answer(doc, line, keys), line.toString('latin1')).toEqual(want);
  expect(answer(strings, line, keys), line.toString('latin1')).toEqual(want);
  return want !== false;
}

/** An id span as compared: its position only when there is an id (a span of type T_NONE is stale). */
function idOf(s: Span): unknown {
  return s.type === T_NONE ? 0 : [s.type, s.start, s.end, s.type === 3 ? s.escaped : false];
}

/** countMessageLines (WebAssembly) against isMessageLine per line, on `lines` joined by `\n`. */
function agreeCount(lines: Buffer[]): void {
  const buf = Buffer.concat(lines.flatMap((l) => [l, Buffer.from('\n')]));
  let messages = 0;
  let id: unknown = 0;
  let from = 0;
  for (const l of lines) {
    if (isMessageLine(buf, from, from + l.length)) {
      messages++;
      id = idOf(lastMessageIdSpan());
    }
    from += l.length + 1;
  }
  for (const count of [countMessageLines, countMessageLinesJs]) {
    const out = messageCount();
    count(buf, 0, buf.length, out);
    expect(out.messages).toBe(messages);
    if (messages > 0) expect(idOf(out.id)).toEqual(id);
  }
}

const SEEDS = [
  '{"role":"user","content":[{"type":"text","text":"hé 😀 \\n \\" \\\\ \\u00e9"}],"id":"msg_1"}',
  '{"role":"assistant","content":"x","id":"msg_2","tool_calls":[{"id":"c","args":{"a":[1,2.5,-3e2,true,false,null]}}]}',
  '{"role":"tool","tool_call_id":"c","is_error":false,"content":"ok","id":"msg_3"}',
  '{"type":"murmur.record","capsule":"c","created_ms":1756400000000,"truncated":{"dropped":3,"oldest_surviving_id":"a","last_dropped_id":"b","at_ms":5}}',
  '["murmur.record","c",1756400000000,null]',
  '{"event_type":"shell_detached","event_id":"e","work_id":"w","binary":"b","command":"c d","timestamp":17564,"task_id":null}',
  '{"role":1,"role":"user","id":"a","id":["b"]}',
  '{"role":"user","role":{"x":1},"id":"a"}',
  '{"r\\u006fle":"user","\\u0072ole":"u","id":"x","n":1e308,"m":-0.0,"k":0,"s":"\\ud83d\\ude00"}',
  ' \t{"role" : "user" ,"id":"x"}\r ',
  '[{"role":"user"}]',
  '-12.5',
  '"just a string \\t"',
  '[1,[2,[3,{"a":"b"}]],"c",true,false,null,{},[],-0,1.5]',
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
  'E',
  '1',
  '9',
  '-',
  '+',
  '.',
  ' ',
  '\t',
  '\r',
  '\n',
  '\f',
  'x',
  'role',
  '"role"',
  'r\\u006fle',
  'id',
  '"id":',
  'null',
  'true',
  'fals',
  '\u0001',
  '\u007f',
  'é',
  '😀',
  '\\ud800',
  '\\udc00',
  '\\"',
  '1e400',
  '1e-400',
  '00',
  '0.',
  '-',
  '123456789012345678901234567890',
];

describe('the WebAssembly document validator agrees with the JavaScript scanner', () => {
  it('runs WebAssembly on this Node, for every key set used here (else the comparisons below compare the fallback with itself)', () => {
    expect(wasmDoc()).toBeDefined();
    for (const keys of KEY_SETS) expect(keysFit(keys.bytes), keys.strings.join(',')).toBe(true);
  });

  it('the scalar variant (a CPU without SIMD) answers as the SIMD one, document by document and chunk by chunk', () => {
    const simd = wasmDoc()!;
    const scalar = scalarWasmDocForTests()!;
    const keys = KEY_SETS[0]!;
    const run = (w: WasmDoc, line: Buffer): number[] => {
      w.ensure(line.length);
      w.setKeys(keys, keys.bytes);
      w.bytes.set(line, DATA_BASE);
      w.bytes[DATA_BASE + line.length] = 0;
      const r = w.doc(DATA_BASE, DATA_BASE + line.length, 0);
      const out = [r, w.words[OUT_TOP >> 2]!, r === 1 ? w.words[OUT_DUPES >> 2]! : -1];
      for (let k = 0; k < 2 && r === 1; k++) {
        const at = (FIELDS >> 2) + 4 * k;
        const type = w.words[at]!;
        out.push(type, ...(type === 0 ? [] : [w.words[at + 1]!, w.words[at + 2]!, w.words[at + 3]!]));
      }
      return out;
    };
    const chunk = (w: WasmDoc, all: Buffer): number[] => {
      w.ensure(all.length);
      w.setKeys(keys, keys.bytes);
      w.bytes.set(all, DATA_BASE);
      const out: number[] = [];
      for (let p = DATA_BASE, r = 1; r === 1;) {
        r = w.lines(p, DATA_BASE + all.length);
        out.push(
          r,
          w.words[OUT_COUNT >> 2]!,
          ...(w.words[OUT_COUNT >> 2]! > 0 ? [w.words[OUT_LAST >> 2]!, w.words[(OUT_LAST >> 2) + 1]!] : []),
        );
        if (r === 1) p = all.indexOf(10, w.words[OUT_STOP >> 2]! - DATA_BASE) + 1 + DATA_BASE;
      }
      return out;
    };
    const lines: Buffer[] = [];
    for (const seed of SEEDS) {
      for (let cut = 0; cut <= seed.length; cut += 3) {
        for (const s of [
          seed.slice(0, cut) + seed.slice(cut + 1),
          seed.slice(0, cut) + '\\' + seed.slice(cut),
          seed.slice(0, cut) + '"' + seed.slice(cut),
        ]) {
          const b = Buffer.from(s);
          expect(run(scalar, b), s).toEqual(run(simd, b));
          if (!s.includes('\n')) lines.push(b);
        }
      }
    }
    const all = Buffer.concat(lines.flatMap((l) => [l, Buffer.from('\n')]));
    expect(chunk(scalar, all)).toEqual(chunk(simd, all));
  });

  it('on 20 000 mutated lines, for four sets of wanted keys; and the chunk walk counts the same', () => {
    let seed = 20261201;
    const rnd = (n: number): number => {
      // xorshift32 (deterministic)
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) % n;
    };
    let valid = 0;
    let batch: Buffer[] = [];
    for (let n = 0; n < 20_000; n++) {
      const seedLine = SEEDS[rnd(SEEDS.length)]!;
      const edits = rnd(4);
      const s = mutate(seedLine, edits, rnd, ALPHABET);
      const buf = Buffer.from(s, 'utf8');
      if (agree(buf, KEY_SETS[n % KEY_SETS.length])) valid++;
      if (!s.includes('\n')) batch.push(buf);
      if (batch.length === 200) {
        agreeCount(batch);
        batch = [];
      }
    }
    agreeCount(batch);
    expect(valid).toBeGreaterThan(3000); // the mutations leave many lines valid, and many not
    expect(valid).toBeLessThan(17_000);
  });

  it('an escape, a quote or a control byte at every offset around the 16-byte steps', () => {
    const specials = [
      '\\"',
      '\\\\',
      '\\n',
      '\\u00e9',
      '\\ud83d\\ude00',
      '\\ud800',
      '\\udc00',
      '\\x',
      '\\u12',
      '"',
      '\\',
      '\x01',
      '\x1f',
      'é',
    ];
    const lines: Buffer[] = [];
    for (const sp of specials) {
      for (let at = 0; at <= 40; at++) {
        for (const where of ['value', 'key', 'id']) {
          const body = 'a'.repeat(at) + sp + 'b'.repeat(40 - at);
          const s =
            where === 'value'
              ? `{"role":"user","content":"${body}","id":"m"}`
              : where === 'key'
                ? `{"${body}":1,"role":"user","id":"m"}`
                : `{"role":"user","id":"${body}"}`;
          const b = Buffer.from(s, 'utf8');
          agree(b);
          lines.push(b);
        }
      }
    }
    agreeCount(lines);
  });

  it('numbers near the f64 limits and long integers (decided by JavaScript where WebAssembly cannot)', () => {
    const numbers = [
      '1.7976931348623157e308',
      '1.7976931348623159e308',
      '-1.7976931348623157e308',
      '1e308',
      '1e309',
      '-1e309',
      '1E400',
      '1e-400',
      '4.9e-324',
      '0e0',
      '0E+0',
      '1e',
      '1e+',
      '-',
      '-0',
      '01',
      '1.',
      '.5',
      '1.5e3',
      '9'.repeat(299),
      '9'.repeat(300),
      '9'.repeat(301),
      '-' + '9'.repeat(300),
      '9'.repeat(308),
      '9'.repeat(309),
      '9'.repeat(310),
      '9'.repeat(308) + '.5',
      '9'.repeat(309) + '.5',
      '1' + '0'.repeat(400),
    ];
    const lines: Buffer[] = [];
    for (const n of numbers) {
      for (const s of [n, `{"role":"user","n":${n},"id":"x"}`, `{"role":"user","id":${n}}`, `[${n},1]`, ` ${n} `]) {
        const b = Buffer.from(s);
        agree(b);
        agree(b, KEY_SETS[1]);
        lines.push(b);
      }
    }
    agreeCount(lines);
  });

  it('depth 126 to 129, arrays and objects, at the top and inside a message', () => {
    const lines: Buffer[] = [];
    for (let d = 125; d <= 130; d++) {
      for (const inner of [
        '['.repeat(d) + ']'.repeat(d),
        '{"a":'.repeat(d) + '0' + '}'.repeat(d),
        '[{"a":'.repeat(d >> 1) + '1' + '}]'.repeat(d >> 1),
      ]) {
        for (const s of [inner, `{"role":"user","x":${inner},"id":"i"}`, `{"role":${inner},"id":"i"}`]) {
          const b = Buffer.from(s);
          agree(b);
          lines.push(b);
        }
      }
    }
    agreeCount(lines);
  });

  it('duplicate role keys of different types, keys spelled with escapes, whitespace, bare values', () => {
    const values = ['"u"', '1', 'null', 'true', 'false', '[]', '{}', '["u"]', '{"role":"u"}', '"\\u0075"'];
    const lines: Buffer[] = [];
    for (const a of values) {
      for (const b of values) {
        for (const key of ['role', 'r\\u006fle', '\\u0072\\u006f\\u006c\\u0065', 'rol', 'roles', 'ROLE', 'ro\\"le']) {
          for (const s of [
            `{"role":${a},"${key}":${b},"id":"x"}`,
            `{"${key}":${a},"role":${b}}`,
            ` \t\r{ "role" :${a} , "${key}" : ${b} }\r\t `,
          ]) {
            const buf = Buffer.from(s);
            agree(buf);
            lines.push(buf);
          }
        }
      }
    }
    for (const s of [
      '',
      ' ',
      '\t\r',
      '1',
      '"x"',
      '[]',
      '{}',
      'true',
      'nul',
      'null ',
      '[1,]',
      '{"a":1,}',
      '{,}',
      '{"a"}',
      '{"a":}',
      '{"a" 1}',
      '[1 2]',
      '{}{}',
      '{} x',
    ]) {
      const buf = Buffer.from(s);
      agree(buf);
      for (const keys of KEY_SETS) agree(buf, keys);
      lines.push(buf);
    }
    agreeCount(lines);
  });

  it('wanted keys repeated at the top level (not inside a value), plain or escaped, are flagged alike', () => {
    const keys = KEY_SETS[1]!;
    const flagged: number[] = [];
    for (const s of [
      '{"type":"murmur.record","capsule":"a","capsule":"cap","created_ms":1}',
      '{"capsule":"a","type":"murmur.record","created_ms":1,"truncated":null,"capsule":"b","truncated":null}',
      '{"type":"murmur.record","capsule":"a","c\\u0061psule":"cap","created_ms":1}',
      '{"type":"t","x":{"type":"u","type":"v"},"y":[{"capsule":1},{"capsule":2}],"created_ms":1}',
      '{"x":1,"x":2,"type":"t"}',
      '{"created_ms":1,"created_ms":2,"created_ms":3}',
      '["murmur.record","c",1,{"dropped":1,"dropped":2}]',
    ]) {
      agree(Buffer.from(s), keys);
      flagged.push(js.scan(Buffer.from(s), 0, s.length, keys) ? js.dupes : -1);
    }
    expect(flagged).toEqual([0b10, 0b1010, 0b10, 0, 0, 0b100, 0]);
  });
});
