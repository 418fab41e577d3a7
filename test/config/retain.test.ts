import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { parseConfigYaml } from '../../src/config/parse.js';
import {
  DurationError,
  YamlFloat,
  YamlTagged,
  isMapping,
  parseDurationSecs,
  parseDurationValue,
  parseRetainBlock,
  rustDebug,
  rustDebugString,
  rustFloat,
} from '../../src/config/retain.js';

const FORM = 'must be a duration: an integer, optionally suffixed s/m/h/d';
const EMPTY =
  'must declare at least one key — omit the block entirely to keep everything, which is what no policy means';
const WHOLE = 'must be a whole number of at least 1';
const ZERO =
  'must be at least 1 — a limit of zero would delete what retention exists to keep; remove the key to leave it unbounded';
const AGE_ZERO = `must be greater than zero; ${FORM}`;
const FILE = '/m/murmur.yaml';

/** The value of `retain:` in a one-key YAML document, parsed as the loader parses YAML. */
function block(yamlValue: string): unknown {
  const doc = parseConfigYaml(`retain: ${yamlValue}\n`) as Record<string, unknown>;
  return doc['retain'];
}

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('parseDurationSecs', () => {
  it.each([
    ['90', 90],
    ['30s', 30],
    ['15m', 900],
    ['1h', 3600],
    ['14d', 14 * 86_400],
    ['90d', 90 * 86_400],
    ['  5m  ', 300],
    ['\t7\n', 7],
    ['5\u00a0', 5], // NBSP is whitespace to Rust's trim
    ['\u00855', 5], // so is NEL (JS's trim keeps it)
    ['007', 7],
    ['0', 0],
    ['0s', 0],
    ['9007199254740991', Number.MAX_SAFE_INTEGER],
    ['2501999792983h', 2501999792983 * 3600],
    ['104249991374d', 104249991374 * 86_400],
  ])('%j → %d seconds', (input, secs) => {
    expect(parseDurationSecs(input)).toBe(secs);
  });

  it.each([
    '30S',
    '5 minutes',
    '30 m',
    '1.5h',
    '-5',
    '+5',
    '1w',
    '',
    '   ',
    's',
    'd',
    '5ms',
    '5ss',
    '1h30m',
    '0x10',
    '1e3',
    '١٢', // non-ASCII digits
    '\ufeff5', // BOM is not whitespace to Rust's trim
  ])('%j is refused with the accepted form, quoting the input untrimmed', (input) => {
    expect(() => parseDurationSecs(input)).toThrow(DurationError);
    expect(() => parseDurationSecs(input)).toThrow(expect.objectContaining({ name: 'DurationError' }));
    expect(() => parseDurationSecs(input)).toThrow(`'${input}' ${FORM}`);
  });

  it.each([
    '18446744073709551616', // u64::MAX + 1
    '18446744073709551615d', // fits u64 only before the multiplication
    '99999999999999999999999999999s',
    '213503982334602d', // past u64 only after the multiplication
  ])('%j overflows', (input) => {
    expect(() => parseDurationSecs(input)).toThrow(`'${input}' overflows a 64-bit second count`);
  });

  it.each(['9007199254740992', '2501999792984h', '104249991375d', '18446744073709551615', '213503982334601d'])(
    '%j fits u64: accepted, clamped to 2^53 - 1 seconds (every decision is the same)',
    (input) => {
      expect(parseDurationSecs(input)).toBe(Number.MAX_SAFE_INTEGER);
    },
  );

  it('quotes the input as given, surrounding whitespace included', () => {
    expect(() => parseDurationSecs(' 30S ')).toThrow(`' 30S ' ${FORM}`);
  });
});

describe('parseRetainBlock: block shape', () => {
  it('absent → undefined (no policy)', () => {
    expect(parseRetainBlock(undefined, 'trace.retain', 'trace', FILE)).toBeUndefined();
    expect(parseRetainBlock(undefined, 'context.retain', 'context', FILE)).toBeUndefined();
  });

  it.each([
    ['null (retain: with nothing under it)', ''],
    ['explicit ~', '~'],
    ['explicit null', 'null'],
    ['{}', '{}'],
  ])('%s is refused naming the block', (_label, yaml) => {
    for (const kind of ['trace', 'context'] as const) {
      const path = `${kind}.retain`;
      const err = configError(() => parseRetainBlock(block(yaml), path, kind, FILE));
      expect(err.keyPath).toBe(path);
      expect(err.file).toBe(FILE);
      expect(err.message).toBe(`${FILE}: ${path}: ${EMPTY}`);
      expect(err.code).toBe('config_invalid');
      expect(err.exitCode).toBe(2);
    }
  });

  it.each([
    ['[1, 2]', 'trace', 'Sequence [Number(1), Number(2)]'],
    ['[]', 'trace', 'Sequence []'],
    ['[max_sessions: 5]', 'trace', 'Sequence [Mapping {"max_sessions": Number(5)}]'],
    ['5', 'trace', 'Number(5)'],
    ['5.0', 'context', 'Number(5.0)'],
    ['"50"', 'trace', 'String("50")'],
    ['keep', 'context', 'String("keep")'],
    ['true', 'trace', 'Bool(true)'],
    ['"no\\u00a0break"', 'context', 'String("no\\u{a0}break")'],
  ] as const)('a non-mapping %s is refused quoting its value', (yaml, kind, debug) => {
    const keys = kind === 'trace' ? 'max_sessions, max_age' : 'max_messages, max_age';
    const err = configError(() => parseRetainBlock(block(yaml), 'sessions[0].retain', kind, FILE));
    expect(err.keyPath).toBe('sessions[0].retain');
    expect(err.message).toBe(`${FILE}: sessions[0].retain: must be a block of keys (${keys}), got '${debug}'`);
  });

  it.each([
    ['trace', '{max_traces: 3}', 'max_traces', 'max_sessions, max_age'],
    ['trace', '{max_messages: 3}', 'max_messages', 'max_sessions, max_age'],
    ['context', '{max_sessions: 3}', 'max_sessions', 'max_messages, max_age'],
    ['context', '{max_age: 1d, keep: 3}', 'keep', 'max_messages, max_age'],
    ['trace', '{MAX_AGE: 1d}', 'MAX_AGE', 'max_sessions, max_age'],
  ] as const)('%s: an unknown key in %s is refused naming the block', (kind, yaml, key, expected) => {
    const err = configError(() => parseRetainBlock(block(yaml), `${kind}.retain`, kind, FILE));
    expect(err.keyPath).toBe(`${kind}.retain`);
    expect(err.message).toBe(`${FILE}: ${kind}.retain: unknown key '${key}'; expected: ${expected}`);
  });

  it('reports the first problem in the block’s own order', () => {
    const err = configError(() => parseRetainBlock(block('{max_age: 1w, bogus: 1}'), 'trace.retain', 'trace', FILE));
    expect(err.keyPath).toBe('trace.retain.max_age');
    const err2 = configError(() => parseRetainBlock(block('{bogus: 1, max_age: 1w}'), 'trace.retain', 'trace', FILE));
    expect(err2.keyPath).toBe('trace.retain');
  });

  it('works without a file', () => {
    const err = configError(() => parseRetainBlock(block('{}'), 'audit.retain', 'trace'));
    expect(err.file).toBeUndefined();
    expect(err.message).toBe(`audit.retain: ${EMPTY}`);
  });
});

describe('parseRetainBlock: counts', () => {
  it.each([
    ['1', 1],
    ['50', 50],
    ['4294967295', 4294967295],
    ['+5', 5],
    ['0x10', 16],
    ['0o17', 15],
  ])('max_sessions: %s → %d', (yaml, n) => {
    expect(parseRetainBlock(block(`{max_sessions: ${yaml}}`), 'trace.retain', 'trace', FILE)).toEqual({
      maxSessions: n,
    });
    expect(parseRetainBlock(block(`{max_messages: ${yaml}}`), 'context.retain', 'context', FILE)).toEqual({
      maxMessages: n,
    });
  });

  it.each([
    ['a quoted count', '"5"'],
    ['a single-quoted count', "'5'"],
    ['a negative', '-1'],
    ['a float', '1.5'],
    ['an integral float', '5.0'],
    ['an exponent', '1e3'],
    ['infinity', '.inf'],
    ['past u32::MAX', '4294967296'],
    ['past u64::MAX', '18446744073709551616'],
    ['a bool', 'true'],
    ['null', 'null'],
    ['a list', '[5]'],
    ['a mapping', '{n: 5}'],
    ['a word', 'fifty'],
  ])('%s (%s) is refused', (_label, yaml) => {
    for (const [kind, key] of [
      ['trace', 'max_sessions'],
      ['context', 'max_messages'],
    ] as const) {
      const err = configError(() => parseRetainBlock(block(`{${key}: ${yaml}}`), `${kind}.retain`, kind, FILE));
      expect(err.keyPath).toBe(`${kind}.retain.${key}`);
      expect(err.message).toBe(`${FILE}: ${kind}.retain.${key}: ${WHOLE}`);
    }
  });

  it.each(['0', '-0', '0x0'])('zero (%s) is refused with the runtime’s reason', (yaml) => {
    const err = configError(() => parseRetainBlock(block(`{max_sessions: ${yaml}}`), 'trace.retain', 'trace', FILE));
    expect(err.keyPath).toBe('trace.retain.max_sessions');
    expect(err.message).toBe(`${FILE}: trace.retain.max_sessions: ${ZERO}`);
  });

  it('accepts a block built without a prototype (Object.create(null)) as a mapping', () => {
    const value = Object.assign(Object.create(null) as Record<string, unknown>, { max_sessions: 3n });
    expect(parseRetainBlock(value, 'trace.retain', 'trace')).toEqual({ maxSessions: 3 });
  });

  it('accepts a plain JS integer from a programmatic caller, refuses a fractional one', () => {
    expect(parseRetainBlock({ max_sessions: 50 }, 'trace.retain', 'trace')).toEqual({ maxSessions: 50 });
    expect(() => parseRetainBlock({ max_sessions: 1.5 }, 'trace.retain', 'trace')).toThrow(WHOLE);
    expect(() => parseRetainBlock({ max_sessions: new YamlFloat(5) }, 'trace.retain', 'trace')).toThrow(WHOLE);
  });
});

describe('parseRetainBlock: max_age', () => {
  it.each([
    ['14d', 14 * 86_400],
    ['"14d"', 14 * 86_400],
    ['90', 90], // a YAML integer is seconds
    ['"90"', 90],
    ['3600', 3600],
    ['12h', 43_200],
    ['"  30m "', 1800],
    ['0x10', 16], // serde_yaml reads it as the integer 16 and displays it as "16"
    ['+5', 5], // unquoted, a YAML integer 5 (displayed "5"); quoted, refused (below)
  ])('max_age: %s → %d seconds', (yaml, secs) => {
    expect(parseRetainBlock(block(`{max_age: ${yaml}}`), 'trace.retain', 'trace', FILE)).toEqual({ maxAgeSecs: secs });
    expect(parseRetainBlock(block(`{max_age: ${yaml}}`), 'context.retain', 'context', FILE)).toEqual({
      maxAgeSecs: secs,
    });
  });

  it.each([
    ['30S', '30S'],
    ['5 minutes', '5 minutes'],
    ['30 m', '30 m'],
    ['1.5h', '1.5h'],
    ['"-5"', '-5'],
    ['"+5"', '+5'],
    ['1w', '1w'],
    ['""', ''],
    ['-5', '-5'], // a YAML integer, displayed as -5
  ])('max_age: %s is refused quoting %j', (yaml, quoted) => {
    const err = configError(() => parseRetainBlock(block(`{max_age: ${yaml}}`), 'trace.retain', 'trace', FILE));
    expect(err.keyPath).toBe('trace.retain.max_age');
    expect(err.message).toBe(`${FILE}: trace.retain.max_age: '${quoted}' ${FORM}`);
  });

  it.each([
    ['1.5', '1.5'],
    ['5.0', '5.0'],
    ['1e3', '1000.0'],
    ['.inf', '.inf'],
  ])('a YAML float %s is refused quoting its Rust rendering %j', (yaml, quoted) => {
    const err = configError(() => parseRetainBlock(block(`{max_age: ${yaml}}`), 'context.retain', 'context', FILE));
    expect(err.message).toBe(`${FILE}: context.retain.max_age: '${quoted}' ${FORM}`);
  });

  it.each([
    ['true', 'Bool(true)'],
    ['null', 'Null'],
    ['', 'Null'],
    ['[1d]', 'Sequence [String("1d")]'],
    ['{d: 1}', 'Mapping {"d": Number(1)}'],
  ])('a non-scalar max_age %j is refused quoting its debug form', (yaml, debug) => {
    const err = configError(() => parseRetainBlock(block(`{max_age: ${yaml}}`), 'trace.retain', 'trace', FILE));
    expect(err.keyPath).toBe('trace.retain.max_age');
    expect(err.message).toBe(`${FILE}: trace.retain.max_age: '${debug}' ${FORM}`);
  });

  it.each(['0', '"0"', '0s', '0d', '"000m"'])('zero (%s) is refused', (yaml) => {
    const err = configError(() => parseRetainBlock(block(`{max_age: ${yaml}}`), 'trace.retain', 'trace', FILE));
    expect(err.keyPath).toBe('trace.retain.max_age');
    expect(err.message).toBe(`${FILE}: trace.retain.max_age: ${AGE_ZERO}`);
  });

  it.each([
    ['"18446744073709551616"', '18446744073709551616'],
    ['18446744073709551616', '18446744073709551616'], // a YAML integer past u64, stringified
    ['213503982334602d', '213503982334602d'],
  ])('max_age: %s overflows', (yaml, quoted) => {
    const err = configError(() => parseRetainBlock(block(`{max_age: ${yaml}}`), 'trace.retain', 'trace', FILE));
    expect(err.keyPath).toBe('trace.retain.max_age');
    expect(err.message).toBe(`${FILE}: trace.retain.max_age: '${quoted}' overflows a 64-bit second count`);
  });
});

describe('parseRetainBlock: both keys', () => {
  it('parses both keys of each kind', () => {
    expect(parseRetainBlock(block('{max_sessions: 50, max_age: 14d}'), 'trace.retain', 'trace', FILE)).toEqual({
      maxSessions: 50,
      maxAgeSecs: 14 * 86_400,
    });
    expect(parseRetainBlock(block('{max_messages: 2000, max_age: 90d}'), 'context.retain', 'context', FILE)).toEqual({
      maxMessages: 2000,
      maxAgeSecs: 90 * 86_400,
    });
  });

  it('parses a block-style mapping', () => {
    const doc = parseConfigYaml('trace:\n  retain:\n    max_sessions: 3\n    max_age: 1h\n') as {
      trace: { retain: unknown };
    };
    expect(parseRetainBlock(doc.trace.retain, 'trace.retain', 'trace')).toEqual({ maxSessions: 3, maxAgeSecs: 3600 });
  });
});

describe('isMapping', () => {
  it('is true for plain objects only', () => {
    expect(isMapping({})).toBe(true);
    expect(isMapping(Object.create(null))).toBe(true);
    for (const v of [null, undefined, [], [1], 5, 5n, 'x', true, new YamlFloat(1), new Date(0), Buffer.from('x')]) {
      expect(isMapping(v)).toBe(false);
    }
  });
});

describe('parseDurationValue', () => {
  it('quotes an absent value as Null', () => {
    expect(() => parseDurationValue(undefined, 'live_grace', FILE)).toThrow(`${FILE}: live_grace: 'Null' ${FORM}`);
  });

  it('allows zero only when asked', () => {
    expect(parseDurationValue('0', 'random_delay', undefined, { allowZero: true })).toBe(0);
    expect(() => parseDurationValue('0', 'live_grace', undefined)).toThrow(`live_grace: ${AGE_ZERO}`);
    expect(parseDurationValue(30n, 'live_grace', undefined)).toBe(30);
  });
});

describe('Rust renderings', () => {
  it.each([
    [5, '5.0'],
    [1.5, '1.5'],
    [1000, '1000.0'],
    [-2.5, '-2.5'],
    [0, '0.0'],
    [-0, '-0.0'],
    [0.001, '0.001'],
    [0.00001, '0.00001'],
    [0.000001, '1e-6'],
    [1.5e-7, '1.5e-7'],
    [0.5, '0.5'],
    [0.25, '0.25'],
    [1e15, '1000000000000000.0'],
    [1000000000000000.5, '1000000000000000.5'],
    [1e16, '1e16'],
    [1.8446744073709552e19, '1.8446744073709552e19'],
    [Infinity, '.inf'],
    [-Infinity, '-.inf'],
    [NaN, '.nan'],
  ])('rustFloat(%d) = %s', (f, s) => {
    expect(rustFloat(f)).toBe(s);
  });

  it('rustDebug escapes strings as Rust does', () => {
    expect(rustDebug('a"b\\c\nd\te\u0001')).toBe('String("a\\"b\\\\c\\nd\\te\\u{1}")');
    expect(rustDebug("it's")).toBe(`String("it's")`);
  });

  // Each expectation is what rustc 1.x prints for `format!("{:?}", s)`: the named escapes, then
  // `\u{..}` for a grapheme extender or a character Rust does not print (categories C*, Z* but
  // the space), everything else as is.
  it.each([
    ['\r', '"\\r"'],
    ['\0', '"\\0"'],
    [' ~é', '" ~é"'],
    ['\u001f', '"\\u{1f}"'],
    ['\u007f', '"\\u{7f}"'],
    ['\u009f', '"\\u{9f}"'],
    ['\u00a0', '"\\u{a0}"'],
    ['\u00a1', '"\u00a1"'],
    ['\u00ad', '"\\u{ad}"'],
    ['\u200b', '"\\u{200b}"'],
    ['\u2028', '"\\u{2028}"'],
    ['\u3000', '"\\u{3000}"'],
    ['\ue000', '"\\u{e000}"'],
    ['e\u0301', '"e\\u{301}"'],
    ['日本', '"日本"'],
  ])('rustDebugString(%j) = %s', (s, debug) => {
    expect(rustDebugString(s)).toBe(debug);
  });

  it('rustDebug renders numbers, null, tags and mappings as serde_yaml’s Debug does', () => {
    expect(rustDebug(5)).toBe('Number(5)');
    expect(rustDebug(1.5)).toBe('Number(1.5)');
    expect(rustDebug(5n)).toBe('Number(5)');
    expect(rustDebug(undefined)).toBe('Null');
    expect(rustDebug(new YamlTagged('custom', 5n))).toBe('TaggedValue { tag: !custom, value: Number(5) }');
    expect(rustDebug(new YamlTagged('!custom', null))).toBe('TaggedValue { tag: !custom, value: Null }');
    expect(rustDebug(new YamlTagged('a!b', 'x'))).toBe('TaggedValue { tag: !a!b, value: String("x") }');
    expect(rustDebug(block('[{a: 1, b: [x, 2]}]'))).toBe(
      'Sequence [Mapping {"a": Number(1), "b": Sequence [String("x"), Number(2)]}]',
    );
  });

  it('rustDebug prints only a type tag for a value YAML does not produce, never its content', () => {
    expect(rustDebug(Buffer.from('secret'))).toBe('[object Uint8Array]');
    expect(rustDebug(new Date(0))).toBe('[object Date]');
  });
});
