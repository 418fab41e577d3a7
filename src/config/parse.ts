// Reads a configuration or manifest file's YAML (serde_yaml's distinctions: integers bigint,
// floats `YamlFloat`, duplicate keys refused, nesting and aliases bounded) and checks the
// configuration's top-level shape (docs/design.md §9) with a small hand-written schema: which keys
// each block takes, and which values must be a string, a boolean, a log level, a block or a list.
// Guarantees: every YAML error and every shape issue comes out as a ConfigError naming the file and
// key path, never a throw, whatever the value; an unknown key's error lists the keys its block
// takes; unknown keys come first, then every other issue, each group in check order (a block's
// keys in the order declared below, then its unknown keys; a list's entries in order); the keys
// and list entries without an issue are kept so the loader checks them too; nothing here touches
// the filesystem. No schema library is loaded: the loader (src/config/load.ts) imports this module
// only when it has a file to read, and with it only yaml (docs/benchmarks.md, "Start-up").
import { LineCounter, isMap, isScalar, isSeq, parseDocument, type Document } from 'yaml';
import { ConfigError, describeError } from '../errors.js';
import { isMapping } from './retain.js';
import { MAX_NESTING, nestingBeyond } from './nesting.js';
import { documentToData, libyamlQuotedContinuations } from './yaml-serde.js';
import { YamlSyntaxError, type Locator } from './yaml-error.js';

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

type Mapping = Record<string, unknown>;

function locatorOf(doc: Document, lc: LineCounter): Locator {
  return (segments) => {
    let node: unknown = doc.contents;
    let at: number | undefined;
    for (const seg of segments) {
      if (isMap(node)) {
        const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(seg));
        if (!pair) break;
        at = (pair.key as { range?: [number, number, number] }).range?.[0] ?? at;
        node = pair.value;
      } else if (isSeq(node) && typeof seg === 'number') {
        const item = node.items[seg] as { range?: [number, number, number] } | undefined;
        if (!item) break;
        at = item.range?.[0] ?? at;
        node = item;
      } else break;
    }
    if (at === undefined) return undefined;
    const { line, col } = lc.linePos(at);
    return { line, column: col };
  };
}

export function parseYaml(text: string, file: string | undefined): { data: unknown; locate: Locator } {
  const deep = nestingBeyond(text);
  if (deep)
    throw new ConfigError(
      '',
      `invalid YAML at line ${deep.line}, column ${deep.column}: nesting too deep (more than ${MAX_NESTING} levels)`,
      file,
      deep,
    );
  let lineCounter = new LineCounter();
  const options = { intAsBigInt: true, prettyErrors: false, uniqueKeys: true } as const;
  let doc = parseDocument(text, { ...options, lineCounter });
  if (doc.errors.length > 0) {
    // A quoted scalar continued at any indentation, as the runtime's libyaml reads it, is cut
    // short by the yaml package (always an error): read again with its continuation indented.
    const repaired = libyamlQuotedContinuations(text);
    if (repaired !== text) {
      lineCounter = new LineCounter();
      doc = parseDocument(repaired, { ...options, lineCounter });
    }
  }
  if (doc.errors.length > 0) {
    throw new YamlSyntaxError(
      doc.errors.map((e) => {
        const { line, col } = lineCounter.linePos(e.pos[0]);
        return new ConfigError('', `invalid YAML at line ${line}, column ${col}: ${e.message}`, file, {
          line,
          column: col,
        });
      }),
    );
  }
  let js: unknown;
  try {
    // Scalars as the runtime's serde_yaml 0.9 reads them (not the yaml package's core schema).
    js = documentToData(doc, 100);
  } catch (err) {
    throw new ConfigError('', `invalid YAML: ${describeError(err)}`, file);
  }
  return { data: js, locate: locatorOf(doc, lineCounter) };
}

/**
 * Parses one YAML document the way the loader does: YAML 1.2 core schema, integers as bigint,
 * floats as `YamlFloat`, duplicate keys refused, aliases bounded. An empty document is `null`.
 * @throws ConfigError naming `file`, line and column (a `YamlSyntaxError` holding every one).
 */
export function parseConfigYaml(text: string, file?: string): unknown {
  return parseYaml(text, file).data;
}

// ── schema ──────────────────────────────────────────────────────────────────────────────────

export type LogLevel = (typeof LOG_LEVELS)[number];

export type SessionEntry = {
  root?: string | undefined;
  workdir?: string | undefined;
  project?: string | undefined;
  retain?: unknown;
  max_bytes?: unknown;
  children?: unknown;
  keep_free?: boolean | undefined;
};

export type RecordEntry = {
  capsule?: string | undefined;
  store?: string | undefined;
  manifest?: string | undefined;
  retain?: unknown;
  max_bytes?: unknown;
  keep_free?: boolean | undefined;
};

/** The configuration's top level once its shape is checked; the values typed `unknown` are checked by the loader. */
export type RawConfig = {
  home?: string | undefined;
  force_home?: boolean | undefined;
  schedule?: string | undefined;
  run_on_start?: boolean | undefined;
  random_delay?: unknown;
  live_grace?: unknown;
  max_delete?: { count?: unknown; fraction?: unknown } | null | undefined;
  keep_free?: unknown;
  quarantine?: unknown;
  // A section with every entry commented out reads as null: the same as absent.
  sessions?: SessionEntry[] | null | undefined;
  records?: RecordEntry[] | null | undefined;
  audit?: { retain?: unknown } | null | undefined;
  log?: { level?: LogLevel | undefined } | null | undefined;
  metrics?: { textfile?: string | undefined; interval?: unknown } | null | undefined;
};

type Path = readonly (string | number)[];
/** One shape issue: a block's unknown keys (all of them, in `for…in` order) with the keys it takes, or one message. */
type Issue =
  { path: Path; keys: string[]; expected: readonly string[] } | { path: Path; keys?: undefined; message: string };
/** Checks `value` (never undefined) at `path`, appends its issues, returns the value kept. */
type Check = (value: unknown, path: Path, issues: Issue[]) => unknown;

/** Anything with keys: a YAML mapping, but also a `YamlFloat` or `YamlTagged` (whose own keys are then unknown keys). */
const hasKeys = (v: unknown): v is Mapping => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A block of optional keys. The known keys are checked in `shape`'s order (a key counts as present
 * when `key in value`), then every other enumerable key (in `for…in` order: integer-like keys
 * ascending, then the others as written) is one unknown-keys issue. The block kept holds the known
 * keys present, in `shape`'s order.
 */
function block(shape: Readonly<Record<string, Check>>): Check {
  const keys = Object.keys(shape);
  const known = new Set(keys);
  const error = `must be a block of keys (${keys.join(', ')})`;
  return (value, path, issues) => {
    if (!hasKeys(value)) {
      issues.push({ path, message: error });
      return value;
    }
    const out: Mapping = {};
    for (const key of keys) {
      if (!(key in value)) continue;
      const v = value[key];
      out[key] = v === undefined ? undefined : shape[key]!(v, [...path, key], issues);
    }
    const unknown: string[] = [];
    for (const key in value) if (!known.has(key)) unknown.push(key);
    if (unknown.length > 0) issues.push({ path, keys: unknown, expected: keys });
    return out;
  };
}

const nullable =
  (check: Check): Check =>
  (value, path, issues) =>
    value === null ? null : check(value, path, issues);

const listOf =
  (entry: Check): Check =>
  (value, path, issues) => {
    if (!Array.isArray(value)) {
      issues.push({ path, message: 'must be a list' });
      return value;
    }
    const out: unknown[] = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = entry(value[i], [...path, i], issues);
    return out;
  };

const anything: Check = (value) => value;

const string: Check = (value, path, issues) => {
  if (typeof value !== 'string') issues.push({ path, message: 'must be a string' });
  return value;
};

/**
 * A path or name: a string, not empty. A bare `~` (or nothing) is YAML's null, a common slip for
 * `"~"`. Any other value (a list, a block, a number) is only "must be a string": nothing of it is
 * read, so no value can make the check throw.
 */
const text: Check = (value, path, issues) => {
  if (typeof value !== 'string')
    issues.push({
      path,
      message: value === null ? 'must be a string (a bare ~ is YAML\'s null: write "~" or ~/…)' : 'must be a string',
    });
  else if (value.length === 0) issues.push({ path, message: 'must not be empty' });
  return value;
};

const boolean: Check = (value, path, issues) => {
  if (typeof value !== 'boolean') issues.push({ path, message: 'must be true or false' });
  return value;
};

const logLevel: Check = (value, path, issues) => {
  if (!(LOG_LEVELS as readonly unknown[]).includes(value))
    issues.push({ path, message: `must be one of: ${LOG_LEVELS.join(', ')}` });
  return value;
};

const sessionEntry = block({
  root: text,
  workdir: text,
  project: text,
  retain: anything,
  max_bytes: anything,
  children: anything,
  keep_free: boolean,
});
const recordEntry = block({
  capsule: string,
  store: string,
  manifest: text,
  retain: anything,
  max_bytes: anything,
  keep_free: boolean,
});

const configBlock = block({
  home: text,
  force_home: boolean,
  schedule: string,
  run_on_start: boolean,
  random_delay: anything,
  live_grace: anything,
  max_delete: nullable(block({ count: anything, fraction: anything })),
  keep_free: anything,
  quarantine: anything,
  sessions: nullable(listOf(sessionEntry)),
  records: nullable(listOf(recordEntry)),
  audit: nullable(block({ retain: anything })),
  log: nullable(block({ level: logLevel })),
  metrics: nullable(block({ textfile: text, interval: anything })),
});

/** The value kept (meaningful only when there is no issue) and every issue, in check order. */
function check<T>(schema: Check, value: unknown): { ok: true; data: T } | { ok: false; issues: Issue[] } {
  const issues: Issue[] = [];
  const data = schema(value, [], issues);
  return issues.length === 0 ? { ok: true, data: data as T } : { ok: false, issues };
}

/** `a.b[2].c` */
export function formatKeyPath(segments: readonly PropertyKey[]): string {
  let out = '';
  for (const s of segments) {
    if (typeof s === 'number') out += `[${s}]`;
    else out += out === '' ? String(s) : `.${String(s)}`;
  }
  return out;
}

/** Every shape issue as an error; unknown keys (the likeliest root cause, a typo) first. */
function issuesToErrors(issues: readonly Issue[], file: string | undefined): ConfigError[] {
  const unknown: ConfigError[] = [];
  const other: ConfigError[] = [];
  for (const issue of issues) {
    if (issue.keys !== undefined) {
      for (const key of issue.keys) {
        unknown.push(
          new ConfigError(
            formatKeyPath([...issue.path, key]),
            `unknown key '${key}'; expected: ${issue.expected.join(', ')}`,
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

/**
 * Validates the top-level block: every shape issue is collected; the keys without issues (and,
 * inside `sessions`/`records`, the entries without issues) are kept so they are checked too.
 */
export function validateSchema(
  doc: unknown,
  file: string | undefined,
  errors: ConfigError[],
): { raw: RawConfig; sessions: [number, SessionEntry][]; records: [number, RecordEntry][] } {
  const parsed = check<RawConfig>(configBlock, doc);
  if (parsed.ok) {
    const raw = parsed.data;
    return { raw, sessions: [...(raw.sessions ?? []).entries()], records: [...(raw.records ?? []).entries()] };
  }
  errors.push(...issuesToErrors(parsed.issues, file));
  if (!isMapping(doc)) return { raw: {}, sessions: [], records: [] };
  const badTop = new Set<string>();
  for (const issue of parsed.issues) {
    if (issue.path.length > 0) badTop.add(String(issue.path[0]));
    else if (issue.keys !== undefined) issue.keys.forEach((k) => badTop.add(k));
  }
  const good: Mapping = {};
  for (const [k, v] of Object.entries(doc)) if (!badTop.has(k)) good[k] = v;
  const second = check<RawConfig>(configBlock, good);
  const raw: RawConfig = second.ok ? second.data : {};
  const entries = <T>(key: 'sessions' | 'records', schema: Check, ok: T[] | null | undefined): [number, T][] => {
    if (ok) return [...ok.entries()];
    const list = doc[key];
    if (!Array.isArray(list)) return [];
    const out: [number, T][] = [];
    list.forEach((item: unknown, i) => {
      const r = check<T>(schema, item);
      if (r.ok) out.push([i, r.data]);
    });
    return out;
  };
  return {
    raw,
    sessions: entries('sessions', sessionEntry, raw.sessions),
    records: entries('records', recordEntry, raw.records),
  };
}
