// The configuration's shape check (src/config/parse.ts, validateSchema) gives, for every input, the
// errors (messages, key paths, order) and the kept keys and entries the zod schema it replaced gave.
// That schema is kept here as the oracle (zod stays a devDependency for src/schema/json-schemas.ts), and
// a few thousand documents from a seeded generator — every top key with every YAML-derived value
// (string, empty string, null, bigint, YamlFloat, YamlTagged, boolean, list, mapping, nested junk),
// unknown keys at each level, entries with bad members — are checked against both.
// Two of zod's answers are not kept, on purpose: where a path or name goes, zod read the `length`
// of any value (a list, or a block with a `length` key) and said "must not be empty" of it as well
// as "must be a string", or threw when that `length` could not be compared with 1. For exactly those
// inputs the oracle is asked about the same document with each such value replaced by `true` (a
// non-string without a length): a non-string is "must be a string" and nothing more, never a throw.
// And an unknown key under `max_delete` lists its block's keys, as every other block's does.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError } from '../../src/errors.js';
import { LOG_LEVELS, parseConfigYaml, validateSchema } from '../../src/config/parse.js';
import { YamlFloat, YamlTagged, isMapping } from '../../src/config/retain.js';
import { prng } from '../helpers/fixtures.js';

// ── the oracle: the zod schema and its issue handling as src/config/parse.ts had them ─────────

type Mapping = Record<string, unknown>;
const TOP_KEYS = [
  'home',
  'force_home',
  'schedule',
  'run_on_start',
  'random_delay',
  'live_grace',
  'max_delete',
  'keep_free',
  'quarantine',
  'sessions',
  'records',
  'audit',
  'log',
  'metrics',
];
const MAX_DELETE_KEYS = ['count', 'fraction'];
const SESSION_KEYS = ['root', 'workdir', 'project', 'retain', 'max_bytes', 'children', 'keep_free'];
const RECORD_KEYS = ['capsule', 'store', 'manifest', 'retain', 'max_bytes', 'keep_free'];
const AUDIT_KEYS = ['retain'];
const LOG_KEYS = ['level'];
const METRICS_KEYS = ['textfile', 'interval'];

const blockOf = (keys: readonly string[]) => ({ error: `must be a block of keys (${keys.join(', ')})` });
const text = () =>
  z
    .string({
      error: (iss) =>
        iss.input === null ? 'must be a string (a bare ~ is YAML\'s null: write "~" or ~/…)' : 'must be a string',
    })
    .min(1, { error: 'must not be empty' });

const SessionEntrySchema = z.strictObject(
  {
    root: text().optional(),
    workdir: text().optional(),
    project: text().optional(),
    retain: z.unknown().optional(),
    max_bytes: z.unknown().optional(),
    children: z.unknown().optional(),
    keep_free: z.boolean({ error: 'must be true or false' }).optional(),
  },
  blockOf(SESSION_KEYS),
);

const RecordEntrySchema = z.strictObject(
  {
    capsule: z.string({ error: 'must be a string' }).optional(),
    store: z.string({ error: 'must be a string' }).optional(),
    manifest: text().optional(),
    retain: z.unknown().optional(),
    max_bytes: z.unknown().optional(),
    keep_free: z.boolean({ error: 'must be true or false' }).optional(),
  },
  blockOf(RECORD_KEYS),
);

const ConfigSchema = z.strictObject(
  {
    home: text().optional(),
    force_home: z.boolean({ error: 'must be true or false' }).optional(),
    schedule: z.string({ error: 'must be a string' }).optional(),
    run_on_start: z.boolean({ error: 'must be true or false' }).optional(),
    random_delay: z.unknown().optional(),
    live_grace: z.unknown().optional(),
    max_delete: z
      .strictObject({ count: z.unknown().optional(), fraction: z.unknown().optional() }, blockOf(MAX_DELETE_KEYS))
      .nullable()
      .optional(),
    keep_free: z.unknown().optional(),
    quarantine: z.unknown().optional(),
    sessions: z.array(SessionEntrySchema, { error: 'must be a list' }).nullable().optional(),
    records: z.array(RecordEntrySchema, { error: 'must be a list' }).nullable().optional(),
    audit: z.strictObject({ retain: z.unknown().optional() }, blockOf(AUDIT_KEYS)).nullable().optional(),
    log: z
      .strictObject(
        { level: z.enum(LOG_LEVELS, { error: `must be one of: ${LOG_LEVELS.join(', ')}` }).optional() },
        blockOf(LOG_KEYS),
      )
      .nullable()
      .optional(),
    metrics: z
      .strictObject({ textfile: text().optional(), interval: z.unknown().optional() }, blockOf(METRICS_KEYS))
      .nullable()
      .optional(),
  },
  blockOf(TOP_KEYS),
);

type OracleRaw = z.infer<typeof ConfigSchema>;
type OracleSession = NonNullable<OracleRaw['sessions']>[number];
type OracleRecord = NonNullable<OracleRaw['records']>[number];

function formatKeyPath(segments: readonly PropertyKey[]): string {
  let out = '';
  for (const s of segments) {
    if (typeof s === 'number') out += `[${s}]`;
    else out += out === '' ? String(s) : `.${String(s)}`;
  }
  return out;
}

function expectedKeysAt(segments: readonly PropertyKey[]): readonly string[] {
  const shape = segments.map((s) => (typeof s === 'number' ? '[]' : String(s))).join('.');
  switch (shape) {
    case '':
      return TOP_KEYS;
    case 'sessions.[]':
      return SESSION_KEYS;
    case 'records.[]':
      return RECORD_KEYS;
    case 'audit':
      return AUDIT_KEYS;
    case 'log':
      return LOG_KEYS;
    case 'metrics':
      return METRICS_KEYS;
    case 'max_delete':
      return MAX_DELETE_KEYS;
    default:
      return [];
  }
}

function issuesToErrors(issues: readonly z.core.$ZodIssue[], file: string | undefined): ConfigError[] {
  const unknown: ConfigError[] = [];
  const other: ConfigError[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      const expected = expectedKeysAt(issue.path);
      for (const key of issue.keys) {
        unknown.push(
          new ConfigError(
            formatKeyPath([...issue.path, key]),
            `unknown key '${key}'${expected.length > 0 ? `; expected: ${expected.join(', ')}` : ''}`,
            file,
          ),
        );
      }
    } else {
      other.push(new ConfigError(formatKeyPath(issue.path), issue.message, file));
    }
  }
  const all = [...unknown, ...other];
  return all.length > 0 ? all : [new ConfigError('', 'invalid configuration', file)];
}

function oracleValidate(
  doc: unknown,
  file: string | undefined,
  errors: ConfigError[],
): { raw: OracleRaw; sessions: [number, OracleSession][]; records: [number, OracleRecord][] } {
  const parsed = ConfigSchema.safeParse(doc);
  if (parsed.success) {
    const raw = parsed.data;
    return { raw, sessions: [...(raw.sessions ?? []).entries()], records: [...(raw.records ?? []).entries()] };
  }
  errors.push(...issuesToErrors(parsed.error.issues, file));
  if (!isMapping(doc)) return { raw: {}, sessions: [], records: [] };
  const badTop = new Set<string>();
  for (const issue of parsed.error.issues) {
    if (issue.path.length > 0) badTop.add(String(issue.path[0]));
    else if (issue.code === 'unrecognized_keys') issue.keys.forEach((k) => badTop.add(k));
  }
  const good: Mapping = {};
  for (const [k, v] of Object.entries(doc)) if (!badTop.has(k)) good[k] = v;
  const second = ConfigSchema.safeParse(good);
  const raw: OracleRaw = second.success ? second.data : {};
  const entries = <T>(key: 'sessions' | 'records', schema: z.ZodType<T>, ok: T[] | null | undefined): [number, T][] => {
    if (ok) return [...ok.entries()];
    const list = doc[key];
    if (!Array.isArray(list)) return [];
    const out: [number, T][] = [];
    list.forEach((item: unknown, i) => {
      const r = schema.safeParse(item);
      if (r.success) out.push([i, r.data]);
    });
    return out;
  };
  return {
    raw,
    sessions: entries('sessions', SessionEntrySchema, raw.sessions),
    records: entries('records', RecordEntrySchema, raw.records),
  };
}

// ── comparing: every error's fields in order, every kept value with its key order and types ───

function canon(v: unknown): string {
  if (v === undefined) return 'undefined';
  if (v === null) return 'null';
  if (typeof v === 'bigint') return `${v}n`;
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'boolean') return String(v);
  if (v instanceof YamlFloat) return `float(${Object.is(v.value, -0) ? '-0' : String(v.value)})`;
  if (v instanceof YamlTagged) return `!${v.tag}(${canon(v.value)})`;
  if (Array.isArray(v)) return `[${v.map(canon).join(',')}]`;
  if (typeof v === 'object') {
    const proto = Object.getPrototypeOf(v) === Object.prototype ? '' : '?proto';
    return `{${proto}${Object.keys(v)
      .map((k) => `${JSON.stringify(k)}:${canon((v as Mapping)[k])}`)
      .join(',')}}`;
  }
  return `?${typeof v}`;
}

type Outcome = { errors: string[]; raw: string; sessions: string; records: string } | { threw: string };

function outcome(
  validate: (
    doc: unknown,
    file: string | undefined,
    errors: ConfigError[],
  ) => { raw: unknown; sessions: unknown; records: unknown },
  doc: unknown,
  file: string | undefined,
): Outcome {
  const errors: ConfigError[] = [];
  let r: { raw: unknown; sessions: unknown; records: unknown };
  try {
    r = validate(doc, file, errors);
  } catch (err) {
    // zod: a block whose `length` key holds a block with `valueOf`/`toString` keys cannot be compared with 1.
    return { threw: err instanceof Error ? `${err.name}: ${err.message}` : String(err) };
  }
  return {
    errors: errors.map((e) =>
      [e.code, e.file, e.keyPath, e.detail, e.message, e.line, e.column].map((x) => String(x)).join(' | '),
    ),
    raw: canon(r.raw),
    sessions: canon(r.sessions),
    records: canon(r.records),
  };
}

// ── zod's length quirk: the inputs it concerns, and the same inputs without it ───────────────

const isPlain = (v: unknown): v is Mapping => isMapping(v);

/** Whether zod's emptiness check, run on this non-string, said "must not be empty" or threw. */
function lengthQuirk(v: unknown): boolean {
  if (typeof v === 'string' || v === null || v === undefined) return false;
  const length = (v as { length?: unknown }).length;
  if (length === undefined) return false;
  try {
    return !((length as number) >= 1);
  } catch {
    return true;
  }
}

function copyWith(m: Mapping, f: (key: string, v: unknown) => unknown): Mapping {
  const out: Mapping = {};
  for (const k of Object.keys(m))
    Object.defineProperty(out, k, { value: f(k, m[k]), enumerable: true, writable: true, configurable: true });
  return out;
}

/**
 * The document with every value at a path-or-name key (home, metrics.textfile, sessions[].root,
 * .workdir, .project, records[].manifest) that zod's length quirk concerns replaced by `true`, and
 * how many were replaced.
 */
function withoutLengthQuirk(doc: unknown): { doc: unknown; replaced: number } {
  let replaced = 0;
  const text = (v: unknown): unknown => {
    if (!lengthQuirk(v)) return v;
    replaced++;
    return true;
  };
  const entries = (list: unknown, keys: readonly string[]): unknown =>
    Array.isArray(list)
      ? list.map((e: unknown) => (isPlain(e) ? copyWith(e, (k, v) => (keys.includes(k) ? text(v) : v)) : e))
      : list;
  const out = isPlain(doc)
    ? copyWith(doc, (k, v) => {
        if (k === 'home') return text(v);
        if (k === 'metrics' && isPlain(v)) return copyWith(v, (k2, v2) => (k2 === 'textfile' ? text(v2) : v2));
        if (k === 'sessions') return entries(v, ['root', 'workdir', 'project']);
        if (k === 'records') return entries(v, ['manifest']);
        return v;
      })
    : doc;
  return { doc: out, replaced };
}

/** What the checker must give for `doc`: the oracle's answer, for the document without zod's length quirk. */
function expected(doc: unknown, file: string | undefined): { want: Outcome; quirk: boolean } {
  const sane = withoutLengthQuirk(doc);
  const want = outcome(oracleValidate, sane.doc, file);
  if (sane.replaced > 0) {
    // Excluded exactly: zod's own answer for the document differs (an extra "must not be empty", or a throw).
    const zod = outcome(oracleValidate, doc, file);
    expect(JSON.stringify(zod)).not.toBe(JSON.stringify(want));
  }
  return { want, quirk: sane.replaced > 0 };
}

// ── the documents: a seeded generator of what the YAML reader can give ───────────────────────

class Gen {
  constructor(private readonly rand: () => number) {}
  chance(p: number): boolean {
    return this.rand() < p;
  }
  int(n: number): number {
    return Math.floor(this.rand() * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }
  shuffle<T>(xs: readonly T[]): T[] {
    const out = [...xs];
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  }

  /** A mapping as the YAML reader builds it (own keys by defineProperty: `__proto__` stays a key). */
  mapping(pairs: readonly [string, unknown][]): Mapping {
    const out: Mapping = {};
    for (const [k, v] of pairs)
      Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    return out;
  }

  string(): string {
    return this.pick([
      'x',
      '/srv/murmur',
      '~/sessions',
      '~',
      'info',
      'warn',
      'silent',
      'TRACE',
      'Info',
      ' ',
      'null',
      'true',
      '0',
      '*/5 * * * *',
      'ü',
      '',
    ]);
  }

  scalar(): unknown {
    switch (this.int(9)) {
      case 0:
        return this.string();
      case 1:
        return '';
      case 2:
        return null;
      case 3:
        return this.chance(0.5);
      case 4:
        return this.pick([0n, 1n, 5n, -1n, 2n ** 64n - 1n, -(2n ** 127n)]);
      case 5:
        return new YamlFloat(this.pick([1.5, 0, -0, 1e3, Number.NaN, Infinity, -Infinity]));
      case 6:
        return new YamlTagged(
          this.pick(['custom', 'env', '!x']),
          this.chance(0.5) ? this.string() : this.mapping([['a', 1n]]),
        );
      case 7:
        return this.pick(LOG_LEVELS);
      default:
        return this.pick(['30d', '5m', '1h', '2GiB', '10%']);
    }
  }

  /** Any value, lists and mappings of junk included, `depth` levels deep at most. */
  junk(depth: number): unknown {
    if (depth <= 0 || this.chance(0.55)) return this.scalar();
    if (this.chance(0.5)) return Array.from({ length: this.int(4) }, () => this.junk(depth - 1));
    const keys = [
      'a',
      'value',
      'tag',
      '1',
      '0',
      '__proto__',
      'constructor',
      'length',
      'length',
      'valueOf',
      'toString',
      'root',
      'level',
      'retain',
      'max_age',
      '',
    ];
    return this.mapping(
      this.shuffle(keys)
        .slice(0, this.int(4))
        .map((k) => [k, this.junk(depth - 1)]),
    );
  }

  /** An unknown key for a block with `known` keys: typos, near misses, integer-like and prototype names. */
  unknownKey(known: readonly string[]): string {
    const base = this.pick(known);
    return this.pick([
      `${base}s`,
      base.toUpperCase(),
      base.replace('_', '-'),
      'zzz',
      'aaa',
      '1',
      '10',
      '0',
      '__proto__',
      'constructor',
      'toString',
      'value',
      'tag',
      'length',
      '',
      'hasOwnProperty',
    ]);
  }

  /**
   * A block with some of `known` keys (each a good value from `good`, or junk), maybe unknown keys
   * among them, in a random order; now and then not a block at all.
   */
  block(known: readonly string[], good: (key: string) => unknown, badRate: number): unknown {
    if (this.chance(badRate / 4)) return this.junk(2);
    const pairs: [string, unknown][] = [];
    for (const k of known) if (this.chance(0.45)) pairs.push([k, this.chance(badRate) ? this.junk(2) : good(k)]);
    if (this.chance(badRate)) {
      for (let n = 1 + this.int(3); n > 0; n--) {
        const k = this.unknownKey(known);
        if (!pairs.some(([p]) => p === k)) pairs.push([k, this.junk(1)]);
      }
    }
    return this.mapping(this.shuffle(pairs));
  }

  sessionEntry(badRate: number): unknown {
    return this.block(
      SESSION_KEYS,
      (k) =>
        k === 'retain' || k === 'children'
          ? this.mapping([['max_age', '30d']])
          : k === 'max_bytes'
            ? '2GiB'
            : k === 'keep_free'
              ? this.chance(0.5)
              : this.pick(['/srv/a', '~/b', 'c']),
      badRate,
    );
  }

  recordEntry(badRate: number): unknown {
    return this.block(
      RECORD_KEYS,
      (k) =>
        k === 'retain'
          ? this.mapping([['max_messages', 100n]])
          : k === 'max_bytes'
            ? 1024n
            : k === 'keep_free'
              ? this.chance(0.5)
              : this.pick(['chat', 'main', '', 'm.yaml']),
      badRate,
    );
  }

  list(entry: (badRate: number) => unknown, badRate: number): unknown {
    if (this.chance(0.1)) return null;
    if (this.chance(badRate / 3)) return this.junk(2);
    return Array.from({ length: this.int(5) }, () => entry(badRate));
  }

  good(key: string, badRate: number): unknown {
    switch (key) {
      case 'home':
      case 'schedule':
        return this.pick(['/srv/murmur', '~/.murmur', '*/5 * * * *']);
      case 'run_on_start':
      case 'force_home':
        return this.chance(0.5);
      case 'max_delete':
        return this.chance(0.1)
          ? null
          : this.block(MAX_DELETE_KEYS, () => this.pick([5n, new YamlFloat(0.5)]), badRate);
      case 'sessions':
        return this.list((r) => this.sessionEntry(r), badRate);
      case 'records':
        return this.list((r) => this.recordEntry(r), badRate);
      case 'audit':
        return this.chance(0.1) ? null : this.block(AUDIT_KEYS, () => this.mapping([['max_age', '90d']]), badRate);
      case 'log':
        return this.chance(0.1) ? null : this.block(LOG_KEYS, () => this.pick(LOG_LEVELS), badRate);
      case 'metrics':
        return this.chance(0.1)
          ? null
          : this.block(METRICS_KEYS, (k) => (k === 'textfile' ? this.pick(['/run/m.prom', '']) : '1m'), badRate);
      default:
        return this.scalar();
    }
  }

  /** A whole document: mostly a mapping of top keys (good, junk or missing), sometimes no mapping at all. */
  document(): unknown {
    if (this.chance(0.04)) return this.junk(3);
    const badRate = this.pick([0, 0.05, 0.2, 0.5]);
    const pairs: [string, unknown][] = [];
    for (const k of TOP_KEYS)
      if (this.chance(0.5)) pairs.push([k, this.chance(badRate) ? this.junk(3) : this.good(k, badRate)]);
    if (this.chance(badRate)) {
      for (let n = 1 + this.int(3); n > 0; n--) {
        const k = this.unknownKey(TOP_KEYS);
        if (!pairs.some(([p]) => p === k)) pairs.push([k, this.junk(2)]);
      }
    }
    return this.mapping(this.shuffle(pairs));
  }
}

const FILE = '/etc/murmur-gc/config.yaml';

describe('the shape check gives what the zod schema gave', () => {
  it('for 4000 generated documents: the same errors in the same order, the same keys and entries kept', () => {
    const gen = new Gen(prng(0x5eed2));
    const seen = { ok: 0, failed: 0, partlyKept: 0, quirk: 0, zodThrew: 0, messages: new Set<string>() };
    for (let n = 0; n < 4000; n++) {
      const doc = gen.document();
      const file = n % 7 === 0 ? undefined : FILE;
      const { want, quirk } = expected(doc, file);
      const got = outcome(validateSchema, doc, file);
      if (JSON.stringify(got) !== JSON.stringify(want))
        expect({ n, doc: canon(doc), ...got }).toEqual({ n, doc: canon(doc), ...want });
      if ('threw' in want) throw new Error(`the oracle threw on a document without the length quirk: ${canon(doc)}`);
      if (quirk) {
        seen.quirk++;
        if ('threw' in outcome(oracleValidate, doc, file)) seen.zodThrew++;
      }
      if (want.errors.length === 0) seen.ok++;
      else {
        seen.failed++;
        if (want.raw !== '{}' || want.sessions !== '[]' || want.records !== '[]') seen.partlyKept++;
      }
      for (const e of want.errors) seen.messages.add(e.split(' | ')[3]!.replace(/'[^']*'/, "'K'"));
    }
    // The generator reaches every kind of outcome and every message the schema has.
    expect(seen.ok).toBeGreaterThan(400);
    expect(seen.failed).toBeGreaterThan(1000);
    expect(seen.partlyKept).toBeGreaterThan(500);
    expect(seen.quirk).toBeGreaterThan(50);
    expect(seen.zodThrew).toBeGreaterThan(0);
    expect([...seen.messages].sort()).toEqual(
      [
        `unknown key 'K'; expected: ${TOP_KEYS.join(', ')}`,
        `unknown key 'K'; expected: ${MAX_DELETE_KEYS.join(', ')}`,
        `unknown key 'K'; expected: ${SESSION_KEYS.join(', ')}`,
        `unknown key 'K'; expected: ${RECORD_KEYS.join(', ')}`,
        `unknown key 'K'; expected: ${AUDIT_KEYS.join(', ')}`,
        `unknown key 'K'; expected: ${LOG_KEYS.join(', ')}`,
        `unknown key 'K'; expected: ${METRICS_KEYS.join(', ')}`,
        ...[TOP_KEYS, MAX_DELETE_KEYS, SESSION_KEYS, RECORD_KEYS, AUDIT_KEYS, LOG_KEYS, METRICS_KEYS].map(
          (keys) => blockOf(keys).error,
        ),
        'must be a list',
        'must be a string',
        'must be a string (a bare ~ is YAML\'s null: write "~" or ~/…)',
        'must not be empty',
        'must be true or false',
        `must be one of: ${LOG_LEVELS.join(', ')}`,
      ].sort(),
    );
  });

  it.each([
    ['a float as the whole document', '1.5\n'],
    ['a tagged mapping as the whole document', '!custom {home: /x}\n'],
    ['a list as the whole document', '- home: /x\n'],
    [
      'floats and tags where blocks go',
      'max_delete: 0.5\naudit: !x {retain: {max_age: 1d}}\nlog: .inf\nsessions: [1.5, !t {root: /a}]\n',
    ],
    ['integer-like, prototype and empty keys', '10: a\n2: b\n__proto__: c\nconstructor: d\n"": e\nhome: /x\n'],
    [
      'unknown keys at every level, and bad members',
      'zzz: 1\nmax_delete: {count: 1, counts: 2}\nsessions:\n  - {root: ~, roots: /a}\n  - {workdir: ""}\nrecords:\n  - {capsule: 1, stores: x}\nlog: {level: loud, lvl: 1}\nmetrics: {textfile: "", path: /x}\nhome: 5\nrun_on_start: "yes"\n',
    ],
    [
      'a length where a path goes (zod read it; the checker does not)',
      'home: {length: 0}\nsessions: [{root: []}, {root: [x]}, {project: {length: "2"}}]\nrecords: [{manifest: {length: ~}}]\nmetrics: {textfile: {length: [[1]]}}\n',
    ],
    ['a length that cannot be compared (zod threw)', 'home: {length: {toString: x}}\n'],
    ['null sections, which are the same as absent', 'sessions:\nrecords: ~\nmax_delete:\naudit:\nlog:\nmetrics:\n'],
  ])('for YAML text as the reader gives it: %s', (_name, yaml) => {
    const doc = parseConfigYaml(yaml, FILE);
    expect(outcome(validateSchema, doc, FILE)).toEqual(expected(doc, FILE).want);
  });

  it.each([
    ['home: {length: {toString: x}}\n', ['home: must be a string']],
    ['home: {length: {valueOf: x}}\n', ['home: must be a string']],
    ['home: []\n', ['home: must be a string']],
    ['home: {length: 0}\n', ['home: must be a string']],
    ['home: ""\n', ['home: must not be empty']],
    ['home:\n', ['home: must be a string (a bare ~ is YAML\'s null: write "~" or ~/…)']],
    [
      'sessions: [{root: [], workdir: {length: {toString: 1}}, project: ""}]\n',
      [
        'sessions[0].root: must be a string',
        'sessions[0].workdir: must be a string',
        'sessions[0].project: must not be empty',
      ],
    ],
    [
      'records: [{manifest: {length: [[1]]}}]\nmetrics: {textfile: []}\n',
      ['records[0].manifest: must be a string', 'metrics.textfile: must be a string'],
    ],
  ])(
    'a value where a path or name goes: %j is only "must be a string" unless it is a string, never a throw',
    (yaml, want) => {
      const errors: ConfigError[] = [];
      validateSchema(parseConfigYaml(yaml, FILE), FILE, errors);
      expect(errors.map((e) => `${e.keyPath}: ${e.detail}`)).toEqual(want);
    },
  );

  it("reports a block's unknown keys after its members' unknown keys, and unknown keys before every other issue", () => {
    const doc = parseConfigYaml(
      'zzz: 1\nhome: ""\nsessions:\n  - {root: 5, roots: /a}\nmax_delete: {counts: 1}\n',
      FILE,
    );
    const errors: ConfigError[] = [];
    const { raw, sessions } = validateSchema(doc, FILE, errors);
    expect(errors.map((e) => `${e.keyPath}: ${e.detail}`)).toEqual([
      `max_delete.counts: unknown key 'counts'; expected: ${MAX_DELETE_KEYS.join(', ')}`,
      `sessions[0].roots: unknown key 'roots'; expected: ${SESSION_KEYS.join(', ')}`,
      `zzz: unknown key 'zzz'; expected: ${TOP_KEYS.join(', ')}`,
      'home: must not be empty',
      'sessions[0].root: must be a string',
    ]);
    expect(raw).toEqual({});
    expect(sessions).toEqual([]);
  });
});
