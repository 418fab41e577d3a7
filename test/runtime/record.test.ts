import { describe, it, expect, vi, afterEach } from 'vitest';
import {
  RECORD_HEADER_TYPE,
  classifyLine,
  messageIdOf,
  nextHeader,
  parseHeaderLine,
  serializeHeader,
  type RecordHeader,
} from '../../src/runtime/record.js';

const b = (s: string): Buffer => Buffer.from(s, 'utf8');

describe('serializeHeader', () => {
  it('writes the runtime bytes without a marker', () => {
    expect(serializeHeader({ type: 'murmur.record', capsule: 'shey', created_ms: 1756400000000n })).toBe(
      '{"type":"murmur.record","capsule":"shey","created_ms":1756400000000}\n',
    );
  });

  it('writes the runtime bytes with a marker', () => {
    const h: RecordHeader = {
      type: RECORD_HEADER_TYPE,
      capsule: 'shey',
      created_ms: 1n,
      truncated: { dropped: 7n, oldest_surviving_id: 'msg_8', last_dropped_id: 'msg_7', at_ms: 2n },
    };
    expect(serializeHeader(h)).toBe(
      '{"type":"murmur.record","capsule":"shey","created_ms":1,' +
        '"truncated":{"dropped":7,"oldest_surviving_id":"msg_8","last_dropped_id":"msg_7","at_ms":2}}\n',
    );
  });

  it('keeps the declaration order whatever the key order of its input', () => {
    const shuffled = {
      truncated: { at_ms: 2n, last_dropped_id: 'b', dropped: 3n, oldest_surviving_id: 'a' },
      created_ms: 9n,
      capsule: 'c',
      type: 'murmur.record',
    } as RecordHeader;
    expect(serializeHeader(shuffled)).toBe(
      '{"type":"murmur.record","capsule":"c","created_ms":9,' +
        '"truncated":{"dropped":3,"oldest_surviving_id":"a","last_dropped_id":"b","at_ms":2}}\n',
    );
  });

  it('drops keys that are not part of the header', () => {
    const h = { type: 'murmur.record', extra: 1, capsule: 'c', created_ms: 0n } as unknown as RecordHeader;
    expect(serializeHeader(h)).toBe('{"type":"murmur.record","capsule":"c","created_ms":0}\n');
  });

  it('escapes strings the way serde_json does', () => {
    const line = serializeHeader({ type: 'murmur.record', capsule: 'a"b\\c\n\u0001é😀\u2028', created_ms: 0n });
    expect(line).toBe('{"type":"murmur.record","capsule":"a\\"b\\\\c\\n\\u0001é😀\u2028","created_ms":0}\n');
    expect(parseHeaderLine(line.slice(0, -1))?.capsule).toBe('a"b\\c\n\u0001é😀\u2028');
  });

  it('round-trips through parseHeaderLine', () => {
    const hs: RecordHeader[] = [
      { type: 'murmur.record', capsule: 'x', created_ms: 0n },
      { type: 'murmur.record', capsule: '', created_ms: 18446744073709551615n },
      {
        type: 'murmur.record',
        capsule: 'bot',
        created_ms: 1756400000000n,
        truncated: { dropped: 0n, oldest_surviving_id: '', last_dropped_id: '', at_ms: 1756400000001n },
      },
    ];
    for (const h of hs) {
      const line = serializeHeader(h);
      expect(line.endsWith('\n')).toBe(true);
      expect(line.indexOf('\n')).toBe(line.length - 1);
      expect(parseHeaderLine(b(line.slice(0, -1)))).toEqual(h);
      expect(serializeHeader(parseHeaderLine(line.slice(0, -1))!)).toBe(line);
    }
  });

  it('refuses values the runtime could not read back', () => {
    const base = { type: 'murmur.record' as const, capsule: 'c', created_ms: 0n };
    expect(() => serializeHeader({ ...base, created_ms: -1n })).toThrow(RangeError);
    expect(() => serializeHeader({ ...base, created_ms: 1.5 as unknown as bigint })).toThrow(RangeError);
    expect(() => serializeHeader({ ...base, created_ms: 2n ** 64n })).toThrow(RangeError);
    expect(() => serializeHeader({ ...base, capsule: '\ud800' })).toThrow(RangeError);
    expect(() => serializeHeader({ ...base, type: 'other' } as unknown as RecordHeader)).toThrow(TypeError);
    expect(() =>
      serializeHeader({
        ...base,
        truncated: { dropped: -2n, oldest_surviving_id: '', last_dropped_id: '', at_ms: 0n },
      }),
    ).toThrow(RangeError);
  });
});

describe('parseHeaderLine', () => {
  it('reads a header from a string or a Buffer, stripping one trailing \\r', () => {
    const want = { type: 'murmur.record', capsule: 'shey', created_ms: 5n };
    const line = '{"type":"murmur.record","capsule":"shey","created_ms":5}';
    expect(parseHeaderLine(line)).toEqual(want);
    expect(parseHeaderLine(b(line))).toEqual(want);
    expect(parseHeaderLine(b(line + '\r'))).toEqual(want);
    expect(parseHeaderLine(`  ${line}  `)).toEqual(want);
  });

  it('tolerates extra keys and treats truncated:null as absent', () => {
    const h = parseHeaderLine(
      '{"extra":{"deep":[1,2,{"x":null}]},"type":"murmur.record","capsule":"c","created_ms":0,"truncated":null,"z":1e300}',
    );
    expect(h).toEqual({ type: 'murmur.record', capsule: 'c', created_ms: 0n });
    expect(h && 'truncated' in h).toBe(false);
  });

  it('decodes escaped keys and values like serde', () => {
    expect(parseHeaderLine('{"typ\\u0065":"murmur\\u002erecord","capsule":"\\ud83d\\ude00","created_ms":1}')).toEqual({
      type: 'murmur.record',
      capsule: '😀',
      created_ms: 1n,
    });
  });

  it('reads the marker', () => {
    const h = parseHeaderLine(
      '{"type":"murmur.record","capsule":"c","created_ms":1,"truncated":{"at_ms":4,"dropped":2,"last_dropped_id":"b","oldest_surviving_id":"a","x":true}}',
    );
    expect(h?.truncated).toEqual({ dropped: 2n, oldest_surviving_id: 'a', last_dropped_id: 'b', at_ms: 4n });
  });

  it("accepts serde's sequence form of the struct", () => {
    expect(parseHeaderLine('["murmur.record","c",3]')).toEqual({ type: 'murmur.record', capsule: 'c', created_ms: 3n });
    expect(parseHeaderLine('["murmur.record","c",3,null]')).toEqual({
      type: 'murmur.record',
      capsule: 'c',
      created_ms: 3n,
    });
    expect(parseHeaderLine('["murmur.record","c",3,[1,"a","b",2]]')?.truncated).toEqual({
      dropped: 1n,
      oldest_surviving_id: 'a',
      last_dropped_id: 'b',
      at_ms: 2n,
    });
    expect(parseHeaderLine('["murmur.record","c"]')).toBeUndefined();
    expect(parseHeaderLine('["murmur.record","c",3,null,5]')).toBeUndefined();
  });

  it('a header read right after a longer one is read on its own (no field of the previous scan leaks in)', () => {
    const long = '["murmur.record","c",3,[1,"a","b",2]]';
    const longObject =
      '{"type":"murmur.record","capsule":"c","created_ms":3,"truncated":{"dropped":1,"oldest_surviving_id":"a","last_dropped_id":"b","at_ms":2}}';
    for (const first of [long, longObject]) {
      expect(parseHeaderLine(first)?.truncated?.dropped).toBe(1n);
      expect(parseHeaderLine('["murmur.record","d",4]')).toEqual({
        type: 'murmur.record',
        capsule: 'd',
        created_ms: 4n,
      });
      expect(parseHeaderLine(first)?.truncated?.dropped).toBe(1n);
      expect(parseHeaderLine('{"type":"murmur.record","capsule":"d","created_ms":4}')).toEqual({
        type: 'murmur.record',
        capsule: 'd',
        created_ms: 4n,
      });
    }
  });

  it('accepts the whole u64 range and nothing outside it', () => {
    expect(
      parseHeaderLine('{"type":"murmur.record","capsule":"c","created_ms":18446744073709551615}')?.created_ms,
    ).toBe(18446744073709551615n);
    expect(parseHeaderLine('{"type":"murmur.record","capsule":"c","created_ms":18446744073709551616}')).toBeUndefined();
  });

  it('stops at serde_json’s recursion limit', () => {
    const nest = (n: number): string => '['.repeat(n) + ']'.repeat(n);
    expect(parseHeaderLine(`{"type":"murmur.record","capsule":"c","created_ms":1,"x":${nest(126)}}`)).toBeDefined();
    expect(parseHeaderLine(`{"type":"murmur.record","capsule":"c","created_ms":1,"x":${nest(127)}}`)).toBeUndefined();
  });

  it.each([
    ['another type', '{"type":"murmur.other","capsule":"c","created_ms":1}'],
    ['type missing', '{"capsule":"c","created_ms":1}'],
    ['capsule missing', '{"type":"murmur.record","created_ms":1}'],
    ['created_ms missing', '{"type":"murmur.record","capsule":"c"}'],
    ['capsule not a string', '{"type":"murmur.record","capsule":5,"created_ms":1}'],
    ['capsule null', '{"type":"murmur.record","capsule":null,"created_ms":1}'],
    ['created_ms negative', '{"type":"murmur.record","capsule":"c","created_ms":-1}'],
    ['created_ms -0', '{"type":"murmur.record","capsule":"c","created_ms":-0}'],
    ['created_ms float', '{"type":"murmur.record","capsule":"c","created_ms":1.0}'],
    ['created_ms exponent', '{"type":"murmur.record","capsule":"c","created_ms":1e3}'],
    ['created_ms string', '{"type":"murmur.record","capsule":"c","created_ms":"1"}'],
    ['truncated a string', '{"type":"murmur.record","capsule":"c","created_ms":1,"truncated":"x"}'],
    ['truncated a number', '{"type":"murmur.record","capsule":"c","created_ms":1,"truncated":0}'],
    ['truncated empty', '{"type":"murmur.record","capsule":"c","created_ms":1,"truncated":{}}'],
    [
      'truncated field missing',
      '{"type":"murmur.record","capsule":"c","created_ms":1,"truncated":{"dropped":1,"oldest_surviving_id":"a","last_dropped_id":"b"}}',
    ],
    [
      'truncated field of the wrong type',
      '{"type":"murmur.record","capsule":"c","created_ms":1,"truncated":{"dropped":"1","oldest_surviving_id":"a","last_dropped_id":"b","at_ms":1}}',
    ],
    [
      'truncated id null',
      '{"type":"murmur.record","capsule":"c","created_ms":1,"truncated":{"dropped":1,"oldest_surviving_id":null,"last_dropped_id":"b","at_ms":1}}',
    ],
    ['an out-of-range number in an extra key', '{"type":"murmur.record","capsule":"c","created_ms":1,"z":1e400}'],
    ['lone surrogate in capsule', '{"type":"murmur.record","capsule":"\\ud800","created_ms":1}'],
    ['lone surrogate in a key', '{"type":"murmur.record","capsule":"c","created_ms":1,"\\udc00":1}'],
    ['trailing characters', '{"type":"murmur.record","capsule":"c","created_ms":1} x'],
    ['two documents', '{"type":"murmur.record","capsule":"c","created_ms":1}{}'],
    ['trailing comma', '{"type":"murmur.record","capsule":"c","created_ms":1,}'],
    ['raw control character', '{"type":"murmur.record","capsule":"a\tb","created_ms":1}'],
    ['garbage', 'not json at all'],
    ['torn', '{"type":"murmur.record","capsule":"c","crea'],
    ['empty', ''],
    ['a message line', '{"role":"user","content":"hi","id":"msg_0190000000000000000000000000000"}'],
    ['a bare string', '"murmur.record"'],
    ['null', 'null'],
    ['a BOM', '\ufeff{"type":"murmur.record","capsule":"c","created_ms":1}'],
  ])('is not a header: %s', (_name, line) => {
    expect(parseHeaderLine(line)).toBeUndefined();
    expect(parseHeaderLine(b(line))).toBeUndefined();
  });

  it('is not a header when the bytes are not UTF-8', () => {
    const line = Buffer.concat([b('{"type":"murmur.record","capsule":"'), Buffer.from([0xff]), b('","created_ms":1}')]);
    expect(parseHeaderLine(line)).toBeUndefined();
  });

  it.each([
    ['capsule twice', '{"type":"murmur.record","capsule":"a","capsule":"cap","created_ms":1}'],
    ['type twice', '{"type":"murmur.record","type":"murmur.record","capsule":"c","created_ms":1}'],
    ['created_ms twice (first ill-typed)', '{"type":"murmur.record","capsule":"c","created_ms":"x","created_ms":7}'],
    ['created_ms twice (same value)', '{"type":"murmur.record","capsule":"c","created_ms":7,"created_ms":7}'],
    [
      'truncated twice (both null)',
      '{"type":"murmur.record","capsule":"c","created_ms":1,"truncated":null,"truncated":null}',
    ],
    [
      'capsule twice, the second spelled with an escape',
      '{"type":"murmur.record","capsule":"a","c\\u0061psule":"cap","created_ms":1}',
    ],
    [
      'a field of the truncated marker twice',
      '{"type":"murmur.record","capsule":"c","created_ms":1,"truncated":{"dropped":1,"dropped":2,"oldest_surviving_id":"","last_dropped_id":"","at_ms":1}}',
    ],
  ])(
    'is not a header when it repeats one of its own fields, as a typed serde struct refuses it (%s)',
    (_name, line) => {
      expect(parseHeaderLine(line)).toBeUndefined();
      expect(parseHeaderLine(b(line))).toBeUndefined();
    },
  );

  it('tolerates repeated unknown keys, at the top and in the marker', () => {
    const line =
      '{"x":1,"type":"murmur.record","x":2,"capsule":"c","created_ms":1,"truncated":{"y":1,"dropped":1,"y":2,"oldest_surviving_id":"","last_dropped_id":"","at_ms":1}}';
    expect(parseHeaderLine(line)?.capsule).toBe('c');
    expect(parseHeaderLine(b(line))?.truncated?.dropped).toBe(1n);
  });

  it('refuses a lone surrogate anywhere in the line (serde_json refuses the line)', () => {
    expect(parseHeaderLine('{"type":"murmur.record","capsule":"c","created_ms":1,"x":"\\ud800"}')).toBeUndefined();
  });

  it('never throws on random input', () => {
    let seed = 7;
    const rnd = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const alphabet = '{}[]",:0123456789-.eE truenfalsnul\\u"typecapsulecreated_msmurmur.record';
    for (let n = 0; n < 2000; n++) {
      let s = '';
      const len = Math.floor(rnd() * 60);
      for (let i = 0; i < len; i++) s += alphabet[Math.floor(rnd() * alphabet.length)];
      expect(() => parseHeaderLine(s)).not.toThrow();
    }
  });
});

describe('classifyLine', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it.each([
    ['a message with an id', '{"role":"user","content":"hi","id":"msg_1"}', true, 'msg_1'],
    ['a message without an id', '{"role":"assistant","content":"x"}', true, undefined],
    ['a message whose id is not a string', '{"role":"tool","id":7}', true, undefined],
    ['a message with an empty role', '{"role":""}', true, undefined],
    ['role in another position', '{"content":"x","id":"a","role":"user"}', true, 'a'],
    ['an escaped role key', '{"\\u0072ole":"user","id":"m"}', true, 'm'],
    ['an escaped role value', '{"role":"\\u0075ser"}', true, undefined],
    ['a CRLF line', '{"role":"user","id":"c"}\r', true, 'c'],
    ['leading and trailing whitespace', ' \t{"role":"user"} ', true, undefined],
    ['paired surrogate escapes', '{"role":"user","content":"\\ud83d\\ude00"}', true, undefined],
    ['duplicate role, last one wins (string)', '{"role":1,"role":"user"}', true, undefined],
    ['no role', '{"content":"hi","id":"msg_1"}', false, undefined],
    ['role in content only', '{"content":"\\"role\\":\\"user\\""}', false, undefined],
    ['role nested', '{"x":{"role":"user"}}', false, undefined],
    ['role a number', '{"role":1}', false, undefined],
    ['role null', '{"role":null}', false, undefined],
    ['role an object', '{"role":{"name":"user"}}', false, undefined],
    ['duplicate role, last one wins (number)', '{"role":"user","role":1}', false, undefined],
    ['an array', '[{"role":"user"}]', false, undefined],
    ['a string', '"role"', false, undefined],
    ['garbage', 'role: user', false, undefined],
    ['a torn line', '{"role":"user","content":"h', false, undefined],
    ['trailing garbage', '{"role":"user"} x', false, undefined],
    ['blank', '', false, undefined],
    ['whitespace', '   \t ', false, undefined],
    ['a lone CR', '\r', false, undefined],
    ['the header', '{"type":"murmur.record","capsule":"c","created_ms":1}', false, undefined],
    ['a lone surrogate (serde_json refuses it)', '{"role":"user","content":"\\ud800"}', false, undefined],
    ['a lone surrogate in a key', '{"role":"user","\\udc00":1}', false, undefined],
    ['__proto__ holding a role', '{"__proto__":{"role":"user"}}', false, undefined],
    ['a BOM', '\ufeff{"role":"user"}', false, undefined],
  ])('%s', (_name, line, isMessage, id) => {
    expect(classifyLine(b(line))).toEqual({ isMessage, id });
    expect(messageIdOf(b(line))).toBe(id);
  });

  it('decodes the id as UTF-8', () => {
    expect(classifyLine(b('{"role":"user","id":"é😀"}')).id).toBe('é😀');
    expect(classifyLine(b('{"role":"user","id":"\\u00e9x"}')).id).toBe('éx');
    expect(classifyLine(b('{"role":"日本","content":"語","id":"msg_1"}'))).toEqual({ isMessage: true, id: 'msg_1' });
    const badId = Buffer.concat([b('{"role":"user","id":"a'), Buffer.from([0xff]), b('"}')]);
    expect(classifyLine(badId)).toEqual({ isMessage: true, id: 'a\ufffd' });
  });

  it('gives the verdict of a UTF-8 JSON.parse on random lines with non-ASCII and invalid bytes', () => {
    let seed = 3;
    const rnd = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const pieces = [
      '{',
      '}',
      '"role"',
      '"id"',
      ':',
      ',',
      '"',
      'user',
      '\\u0072',
      '\\"',
      '[',
      ']',
      '1',
      ' ',
      'é',
      '😀',
      '\u2028',
    ];
    const raw = [0x80, 0xc3, 0xe2, 0xf0, 0xff, 0x22, 0x5c];
    const oracle = (buf: Buffer): { isMessage: boolean; id: string | undefined } => {
      try {
        const v: unknown = JSON.parse(buf.toString('utf8'));
        if (
          typeof v === 'object' &&
          v !== null &&
          !Array.isArray(v) &&
          typeof (v as { role?: unknown }).role === 'string'
        ) {
          const id = (v as { id?: unknown }).id;
          return { isMessage: true, id: typeof id === 'string' ? id : undefined };
        }
      } catch {
        // not JSON
      }
      return { isMessage: false, id: undefined };
    };
    let messages = 0;
    for (let n = 0; n < 20000; n++) {
      const parts: Buffer[] = [b(rnd() < 0.5 ? '{"role":"user","id":"' : '{"id":"')];
      const len = Math.floor(rnd() * 8);
      for (let k = 0; k < len; k++) {
        parts.push(
          rnd() < 0.3
            ? Buffer.from([raw[Math.floor(rnd() * raw.length)]!])
            : b(pieces[Math.floor(rnd() * pieces.length)]!),
        );
      }
      parts.push(b(rnd() < 0.7 ? '"}' : '",' + '"role":"x"}'));
      const line = Buffer.concat(parts);
      const got = classifyLine(line);
      expect(got).toEqual(oracle(line));
      if (got.isMessage) messages++;
    }
    expect(messages).toBeGreaterThan(1000);
  });

  it('classifies without JSON.parse (only an escaped id is decoded with it)', () => {
    const spy = vi.spyOn(JSON, 'parse');
    for (const line of [
      'garbage',
      '',
      '   ',
      '[{"role":"user"}]',
      '{"content":"x","id":"y"}',
      '"x"',
      '{"rol":"e"}',
      '{"role":"user","id":"m"}',
    ]) {
      classifyLine(b(line));
    }
    expect(spy).not.toHaveBeenCalled();
    expect(classifyLine(b('{"role":"user","id":"a\\u0041"}')).id).toBe('aA');
    expect(spy).toHaveBeenCalledTimes(1);
  });

  it('never throws, even on invalid UTF-8 and random bytes', () => {
    let seed = 11;
    const rnd = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    expect(() => classifyLine(Buffer.from([0x7b, 0xff, 0xfe, 0x22, 0x72]))).not.toThrow();
    for (let n = 0; n < 2000; n++) {
      const len = Math.floor(rnd() * 40);
      const bytes = Buffer.alloc(len + 8);
      b('{"role"').copy(bytes);
      for (let i = 7; i < bytes.length; i++) bytes[i] = Math.floor(rnd() * 256);
      expect(() => classifyLine(bytes)).not.toThrow();
    }
  });
});

describe('nextHeader', () => {
  it('adopts with the fallback capsule and now when there is no header', () => {
    expect(nextHeader(undefined, 'store', 7, 'msg_8', 'msg_7', 1000)).toEqual({
      type: 'murmur.record',
      capsule: 'store',
      created_ms: 1000n,
      truncated: { dropped: 7n, oldest_surviving_id: 'msg_8', last_dropped_id: 'msg_7', at_ms: 1000n },
    });
  });

  it('keeps capsule and created_ms, accumulates dropped, stamps at_ms now', () => {
    const first = nextHeader({ type: 'murmur.record', capsule: 'owner', created_ms: 5n }, 'other', 4, 'a', 'b', 100);
    expect(first).toEqual({
      type: 'murmur.record',
      capsule: 'owner',
      created_ms: 5n,
      truncated: { dropped: 4n, oldest_surviving_id: 'a', last_dropped_id: 'b', at_ms: 100n },
    });
    const second = nextHeader(first, 'other', 4, 'c', '', 200);
    expect(second).toEqual({
      type: 'murmur.record',
      capsule: 'owner',
      created_ms: 5n,
      truncated: { dropped: 8n, oldest_surviving_id: 'c', last_dropped_id: '', at_ms: 200n },
    });
    expect(serializeHeader(second)).toBe(
      '{"type":"murmur.record","capsule":"owner","created_ms":5,"truncated":{"dropped":8,"oldest_surviving_id":"c","last_dropped_id":"","at_ms":200}}\n',
    );
  });

  it('refuses a negative drop', () => {
    expect(() => nextHeader(undefined, 'c', -1, '', '', 0)).toThrow(RangeError);
  });
});

describe('what a refused header says (the words reach the error a truncation reports)', () => {
  const base = { type: 'murmur.record' as const, capsule: 'c', created_ms: 0n };
  const marker = { dropped: 0n, oldest_surviving_id: '', last_dropped_id: '', at_ms: 0n };

  it('names the field that cannot be written, and why', () => {
    expect(() => serializeHeader({ ...base, type: 'other' } as unknown as RecordHeader)).toThrow(
      new TypeError('header type must be murmur.record'),
    );
    expect(() => serializeHeader({ ...base, created_ms: -1n })).toThrow(
      new RangeError('created_ms must be a non-negative integer below 2^64'),
    );
    expect(() => serializeHeader({ ...base, created_ms: 7 as unknown as bigint })).toThrow(
      new RangeError('created_ms must be a non-negative integer below 2^64'),
    );
    expect(() => serializeHeader({ ...base, truncated: { ...marker, dropped: 2n ** 64n } })).toThrow(
      new RangeError('truncated.dropped must be a non-negative integer below 2^64'),
    );
    expect(() => serializeHeader({ ...base, truncated: { ...marker, at_ms: -1n } })).toThrow(
      new RangeError('truncated.at_ms must be a non-negative integer below 2^64'),
    );
    expect(() => serializeHeader({ ...base, capsule: 'a\udc00' })).toThrow(
      new RangeError('header string field holds a lone surrogate'),
    );
    expect(() => serializeHeader({ ...base, truncated: { ...marker, last_dropped_id: '\ud800x' } })).toThrow(
      new RangeError('header string field holds a lone surrogate'),
    );
    expect(() => serializeHeader({ ...base, capsule: 5 as unknown as string })).toThrow(
      new TypeError('header string field is not a string'),
    );
    expect(() =>
      serializeHeader({ ...base, truncated: { ...marker, oldest_surviving_id: null as unknown as string } }),
    ).toThrow(new TypeError('header string field is not a string'));
  });
});

describe('nextHeader bounds', () => {
  it('a truncation that drops nothing more keeps the cumulative count', () => {
    const h = nextHeader(
      {
        type: 'murmur.record',
        capsule: 'o',
        created_ms: 5n,
        truncated: { dropped: 9n, oldest_surviving_id: 'x', last_dropped_id: 'y', at_ms: 1n },
      },
      'f',
      0,
      'a',
      'b',
      0,
    );
    expect(h).toEqual({
      type: 'murmur.record',
      capsule: 'o',
      created_ms: 5n,
      truncated: { dropped: 9n, oldest_surviving_id: 'a', last_dropped_id: 'b', at_ms: 0n },
    });
    expect(nextHeader(undefined, 'f', 0, '', '', 0)).toEqual({
      type: 'murmur.record',
      capsule: 'f',
      created_ms: 0n,
      truncated: { dropped: 0n, oldest_surviving_id: '', last_dropped_id: '', at_ms: 0n },
    });
  });

  it('refuses a drop or a clock that is not a non-negative safe integer, saying which', () => {
    for (const dropped of [-1, 1.5, Number.NaN, 2 ** 53]) {
      expect(() => nextHeader(undefined, 'c', dropped, '', '', 0)).toThrow(
        new RangeError('dropped must be a non-negative integer'),
      );
    }
    for (const nowMs of [-1, 0.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) {
      expect(() => nextHeader(undefined, 'c', 1, '', '', nowMs)).toThrow(
        new RangeError('nowMs must be a non-negative integer'),
      );
    }
  });
});

describe('parseHeaderLine whitespace', () => {
  it('skips the JSON whitespace serde_json skips before the value (space, tab, LF, CR), and nothing else', () => {
    const line = '{"type":"murmur.record","capsule":"c","created_ms":1}';
    const want = { type: 'murmur.record', capsule: 'c', created_ms: 1n };
    for (const ws of [' ', '\t', '\n', '\r', ' \t\r\n ', '\r\r']) {
      expect(parseHeaderLine(ws + line)).toEqual(want);
      expect(parseHeaderLine(b(ws + '["murmur.record","c",1]'))).toEqual(want);
    }
    for (const notWs of ['\f', '\v', '\u00a0', '\u2028', '\0']) expect(parseHeaderLine(notWs + line)).toBeUndefined();
  });
});
