// Reads a configuration or manifest file's YAML (serde_yaml's distinctions: integers bigint,
// floats `YamlFloat`, duplicate keys refused, nesting and aliases bounded) and validates the
// configuration's top-level shape with its zod schema (docs/design.md §9). Guarantees: every YAML
// error and every schema issue comes out as a ConfigError naming the file and key path; nothing
// else here touches the filesystem. The loader (src/config/load.ts) imports this module only when
// it has a file to read, so a command run with no configuration file loads neither yaml nor zod.
import { LineCounter, isMap, isScalar, isSeq, parseDocument, type Document } from 'yaml';
import { z } from 'zod';
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
  if (deep) throw new ConfigError('', `invalid YAML at line ${deep.line}, column ${deep.column}: nesting too deep (more than ${MAX_NESTING} levels)`, file, deep);
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
        return new ConfigError('', `invalid YAML at line ${line}, column ${col}: ${e.message}`, file, { line, column: col });
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

const TOP_KEYS = ['home', 'schedule', 'run_on_start', 'random_delay', 'live_grace', 'max_delete', 'keep_free', 'quarantine', 'sessions', 'records', 'audit', 'log', 'metrics'];
const MAX_DELETE_KEYS = ['count', 'fraction'];
const SESSION_KEYS = ['root', 'workdir', 'project', 'retain', 'max_bytes', 'children'];
const RECORD_KEYS = ['capsule', 'store', 'manifest', 'retain', 'max_bytes'];
const AUDIT_KEYS = ['retain'];
const LOG_KEYS = ['level'];
const METRICS_KEYS = ['textfile', 'interval'];

const blockOf = (keys: readonly string[]) => ({ error: `must be a block of keys (${keys.join(', ')})` });
/** A path or name. A bare `~` (or nothing) is YAML's null, a common slip for `"~"`. */
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
  },
  blockOf(RECORD_KEYS),
);

const ConfigSchema = z.strictObject(
  {
    home: text().optional(),
    schedule: z.string({ error: 'must be a string' }).optional(),
    run_on_start: z.boolean({ error: 'must be true or false' }).optional(),
    random_delay: z.unknown().optional(),
    live_grace: z.unknown().optional(),
    max_delete: z.strictObject({ count: z.unknown().optional(), fraction: z.unknown().optional() }, blockOf(MAX_DELETE_KEYS)).nullable().optional(),
    keep_free: z.unknown().optional(),
    quarantine: z.unknown().optional(),
    // A section with every entry commented out reads as null: the same as absent.
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
    metrics: z.strictObject({ textfile: text().optional(), interval: z.unknown().optional() }, blockOf(METRICS_KEYS)).nullable().optional(),
  },
  blockOf(TOP_KEYS),
);

export type RawConfig = z.infer<typeof ConfigSchema>;

/** `a.b[2].c` */
export function formatKeyPath(segments: readonly PropertyKey[]): string {
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
    default:
      return [];
  }
}

/** Every schema issue as an error; unknown keys (the likeliest root cause, a typo) first. */
function issuesToErrors(issues: readonly z.core.$ZodIssue[], file: string | undefined): ConfigError[] {
  const unknown: ConfigError[] = [];
  const other: ConfigError[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      const expected = expectedKeysAt(issue.path);
      for (const key of issue.keys) {
        unknown.push(new ConfigError(formatKeyPath([...issue.path, key]), `unknown key '${key}'${expected.length > 0 ? `; expected: ${expected.join(', ')}` : ''}`, file));
      }
    } else {
      other.push(new ConfigError(formatKeyPath(issue.path), issue.message, file));
    }
  }
  const all = [...unknown, ...other];
  return all.length > 0 ? all : [new ConfigError('', 'invalid configuration', file)];
}

export type SessionEntry = NonNullable<RawConfig['sessions']>[number];
export type RecordEntry = NonNullable<RawConfig['records']>[number];

/**
 * Validates the top-level block: every schema issue is collected; the keys without issues (and,
 * inside `sessions`/`records`, the entries without issues) are kept so they are checked too.
 */
export function validateSchema(doc: unknown, file: string | undefined, errors: ConfigError[]): { raw: RawConfig; sessions: [number, SessionEntry][]; records: [number, RecordEntry][] } {
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
  const raw: RawConfig = second.success ? second.data : {};
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
  return { raw, sessions: entries('sessions', SessionEntrySchema, raw.sessions), records: entries('records', RecordEntrySchema, raw.records) };
}
