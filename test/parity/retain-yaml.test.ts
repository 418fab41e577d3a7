// Parity: retain blocks accept and refuse what the runtime's YAML reader (serde_yaml 0.9) does —
// integer forms (the table in docs/config.md "Integer forms"), custom tags, max_age above 2^53 s, and a
// quoted scalar continued on a line indented no deeper than its key (libyaml accepts it).
import { describe, expect, it } from 'vitest';
import { parseConfigYaml } from '../../src/config/parse.js';
import { parseRetainBlock } from '../../src/config/retain.js';
import { MAX_QUOTED_REPAIRS } from '../../src/config/yaml-serde.js';

function retain(yaml: string, kind: 'trace' | 'context' = 'trace'): unknown {
  const doc = parseConfigYaml(`retain:\n${yaml}`) as { retain: unknown };
  return parseRetainBlock(doc.retain, `${kind}.retain`, kind);
}

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('not refused');
}

// [plain scalar, max_sessions it gives (undefined: refused)]
const COUNT_FORMS: Array<[string, number | undefined]> = [
  ['5', 5],
  ['+5', 5],
  ['0x10', 16],
  ['+0x10', 16],
  ['0x+10', 16],
  ['0o17', 15],
  ['+0o17', 15],
  ['0b11', 3],
  ['+0b11', 3],
  ['0', undefined], // zero: refused as zero
  ['010', undefined], // a leading zero then digits is a string in YAML 1.2
  ['+010', undefined],
  ['00', undefined],
  ['0X10', undefined],
  ['0B11', undefined],
  ['0x', undefined],
  ['1_000', undefined],
  ['-5', undefined],
  ['-0x10', undefined],
  ['4294967296', undefined],
  ['0x100000000', undefined],
  ['5.0', undefined],
  ['1e3', undefined],
  ['.inf', undefined],
  ['True', undefined],
  ['"5"', undefined],
];

describe('parity: retain blocks read as serde_yaml 0.9 reads them', () => {
  it.each(COUNT_FORMS)('max_sessions: %s', (form, want) => {
    if (want === undefined) {
      expect(() => retain(`  max_sessions: ${form}\n`)).toThrow(
        /max_sessions: must be (a whole number of at least 1|at least 1)/,
      );
    } else {
      expect(retain(`  max_sessions: ${form}\n`)).toEqual({ maxSessions: want });
    }
  });

  it.each([
    ['010', 10], // a string: the duration grammar reads its digits
    ['0b11', 3],
    ['+0x10', 16],
    ['+5', 5], // a YAML integer, stringified as 5
    ['0o17', 15],
  ])('max_age: %s is %d seconds', (form, secs) => {
    expect(retain(`  max_age: ${form}\n`)).toEqual({ maxAgeSecs: secs });
  });

  it.each([
    ['"+5"', "'+5' must be a duration: an integer, optionally suffixed s/m/h/d"],
    ['True', "'True' must be a duration: an integer, optionally suffixed s/m/h/d"], // a string, not a bool
    ['1e3', "'1000.0' must be a duration: an integer, optionally suffixed s/m/h/d"],
  ])('max_age: %s is refused as the runtime words it', (form, message) => {
    expect(refusal(() => retain(`  max_age: ${form}\n`))).toContain(message);
  });

  it('a block with a custom tag is refused', () => {
    const doc = parseConfigYaml('retain: !custom {max_sessions: 3}\n') as { retain: unknown };
    expect(refusal(() => parseRetainBlock(doc.retain, 'trace.retain', 'trace'))).toContain(
      'must be a block of keys (max_sessions, max_age), got \'TaggedValue { tag: !custom, value: Mapping {"max_sessions": Number(3)} }\'',
    );
    expect(() => retain('  max_sessions: !custom 3\n')).toThrow(/must be a whole number/);
  });

  it('Null and NULL are strings, not null (only ~ and null are)', () => {
    expect(
      refusal(() =>
        parseRetainBlock((parseConfigYaml('retain: Null\n') as { retain: unknown }).retain, 'trace.retain', 'trace'),
      ),
    ).toContain(`got 'String("Null")'`);
  });

  it('max_age above 2^53 seconds is accepted (the runtime accepts it) and the other key is still enforced', () => {
    expect(retain('  max_sessions: 3\n  max_age: 100000000000000d\n')).toEqual({
      maxSessions: 3,
      maxAgeSecs: Number.MAX_SAFE_INTEGER,
    });
    expect(retain('  max_age: 18446744073709551615\n')).toEqual({ maxAgeSecs: Number.MAX_SAFE_INTEGER });
    expect(() => retain('  max_age: 18446744073709551616\n')).toThrow(
      "'18446744073709551616' overflows a 64-bit second count",
    );
  });

  describe('a quoted scalar continued on a line indented no deeper than its key', () => {
    const manifest = (maxAge: string): unknown => {
      const doc = parseConfigYaml(`trace:\n  retain:\n    max_age: ${maxAge}\n    max_sessions: 3\n`) as {
        trace: { retain: unknown };
      };
      return parseRetainBlock(doc.trace.retain, 'trace.retain', 'trace');
    };

    it.each([
      ["at the key's own indentation", '"7\n    "'],
      ['at column 0', '"7\n"'],
      ['shallower than its key', '"7\n  "'],
      ['led by a tab', '"7\n\t"'],
      ['over several lines, escaped line break included', '"7\\\n  \n"'],
      ['single-quoted', "'7\n  '"],
    ])('is accepted as libyaml folds it, %s, and the block goes on', (_name, value) => {
      expect(manifest(value)).toEqual({ maxSessions: 3, maxAgeSecs: 7 });
    });

    it('folds to the same string libyaml does', () => {
      const doc = parseConfigYaml('a:\n  b: "x\n y\n\n  z\\\nw"\n  c: \'p\n\n q\'\n') as { a: unknown };
      expect(doc.a).toEqual({ b: 'x y\nzw', c: 'p\nq' });
    });

    it.each([
      ['a document marker at column 0 inside it', 'a: "x\n---\ny"\n'],
      ['no closing quote', 'a: "x\n  y\n'],
    ])('is still refused with %s (libyaml refuses it too)', (_name, text) => {
      expect(() => parseConfigYaml(text)).toThrow(/invalid YAML/);
    });

    it(`repairs at most ${MAX_QUOTED_REPAIRS} such scalars in one document (each costs a parse); more are refused`, () => {
      const doc = (n: number) => Array.from({ length: n }, (_, i) => `k${i}: "v\n"\n`).join('');
      expect(Object.keys(parseConfigYaml(doc(MAX_QUOTED_REPAIRS)) as object)).toHaveLength(MAX_QUOTED_REPAIRS);
      expect(() => parseConfigYaml(doc(MAX_QUOTED_REPAIRS + 1))).toThrow(/invalid YAML/);
    });

    it('a quote in a comment, a plain scalar or a block scalar starts nothing', () => {
      const text = "# it's \"\na: b\"c\nd: |\n  \"x\ne: 'it''s\n'\n";
      expect(parseConfigYaml(text)).toEqual({ a: 'b"c', d: '"x\n', e: "it's " });
    });
  });
});
