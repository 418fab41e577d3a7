// Parity: what a message line is — serde_json's reader decides (depth limit 128, numbers within
// the double range, no lone surrogates, RFC 8259 only), and duplicate keys: the last one wins.
import { describe, expect, it } from 'vitest';
import { scanRecordBytes } from '../../src/runtime/jsonl.js';
import { classifyLine } from '../../src/runtime/record.js';

const b = (s: string): Buffer => Buffer.from(s, 'utf8');
const nestArr = (n: number): string => '['.repeat(n) + ']'.repeat(n);
const nestObj = (n: number): string => '{"a":'.repeat(n) + '1' + '}'.repeat(n);
const msg = (extra: string): string => `{"role":"user","id":"m",${extra}}`;

// [line, isMessage]: generated around each limit so an off-by-one shows.
const cases: Array<[string, string, boolean]> = [
  // nesting: the message object itself is level 1
  ['126 nested arrays inside the message (127 levels)', msg(`"x":${nestArr(126)}`), true],
  ['127 nested arrays inside the message (128 levels)', msg(`"x":${nestArr(127)}`), false],
  ['126 nested objects inside the message', msg(`"x":${nestObj(126)}`), true],
  ['127 nested objects inside the message', msg(`"x":${nestObj(127)}`), false],
  // numbers
  ['1e308', msg('"n":1e308'), true],
  ['1e400', msg('"n":1e400'), false],
  ['-1e400', msg('"n":-1e400'), false],
  ['1.8e308', msg('"n":1.8e308'), false],
  ['1e-400 (underflows to 0)', msg('"n":1e-400'), true],
  ['0e999', msg('"n":0e999'), true],
  ['u64 max', msg('"n":18446744073709551615'), true],
  ['a 300-digit integer (read as a float)', msg(`"n":1${'0'.repeat(299)}`), true],
  ['a 310-digit integer (beyond f64)', msg(`"n":1${'0'.repeat(309)}`), false],
  ['NaN', msg('"n":NaN'), false],
  ['Infinity', msg('"n":Infinity'), false],
  ['a leading zero', msg('"n":01'), false],
  ['a leading plus', msg('"n":+1'), false],
  ['a bare dot', msg('"n":1.'), false],
  ['hex', msg('"n":0x10'), false],
  // strings
  ['a raw tab inside a string', '{"role":"user","content":"a\tb"}', false],
  ['a raw DEL inside a string (allowed)', '{"role":"user","content":"a\u007fb"}', true],
  ['a lone high surrogate', '{"role":"user","content":"\\ud800"}', false],
  ['a lone low surrogate', '{"role":"user","content":"\\udc00"}', false],
  ['a high surrogate followed by a non-surrogate escape', '{"role":"user","content":"\\ud800\\u0041"}', false],
  ['a surrogate pair', '{"role":"user","content":"\\ud83d\\ude00"}', true],
  ['an unknown escape', '{"role":"user","content":"\\x41"}', false],
  ['a single-quoted string', "{'role':'user'}", false],
  // grammar
  ['a trailing comma in an object', '{"role":"user",}', false],
  ['a trailing comma in an array', '{"role":"user","a":[1,]}', false],
  ['a comment', '{"role":"user"} // x', false],
  ['a form feed as whitespace', '{"role":"user"}\f', false],
  ['a vertical tab as whitespace', '\u000b{"role":"user"}', false],
  ['CR and LF as whitespace', '\r{"role":\r"user"}\r', true],
  // duplicate keys: last wins
  ['role string then number', '{"role":"user","role":1}', false],
  ['role number then string', '{"role":1,"role":"user"}', true],
  ['role string then null', '{"role":"user","role":null}', false],
  ['role spelled with an escape, last', '{"role":1,"r\\u006fle":"user"}', true],
];

describe('parity: what a message line is', () => {
  it.each(cases)('%s', (_name, line, isMessage) => {
    expect(classifyLine(b(line)).isMessage).toBe(isMessage);
  });

  it('counts in a record exactly the lines the runtime counts (all cases in one record)', () => {
    const text = cases.map(([, line]) => line).join('\n') + '\n';
    expect(scanRecordBytes(b(text)).messages).toBe(cases.filter(([, , m]) => m).length);
  });

  it('the id of a message is its last id', () => {
    expect(classifyLine(b('{"role":"user","id":"a","id":"b"}')).id).toBe('b');
    expect(classifyLine(b('{"role":"user","id":"a","id":7}')).id).toBeUndefined();
  });
});
