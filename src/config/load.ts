// Loads murmur-gc's configuration (DESIGN §4) into a fully resolved `GcConfig`.
//
// Invariants and decisions:
// - Source: `--config FILE` (must exist), else `$XDG_CONFIG_HOME/murmur-gc/config.yaml`
//   (XDG_CONFIG_HOME unset, empty or relative → `$HOME/.config`), else built-in defaults, which
//   delete nothing: no sessions roots, no record policies, `audit.retain = { max_age: 90d }`.
// - Validation is strict and fails closed: unknown keys are refused, and every error is a
//   `ConfigError` (exit 2, code `config_invalid`) naming its file and key path
//   (`sessions[1].retain.max_age`). The first problem found is reported.
// - YAML is read with serde_yaml's distinctions: integers are bigint, floats are `YamlFloat`
//   (so `max_sessions: 5.0` is refused as the runtime refuses it), duplicate keys are an error.
// - Retain blocks, wherever they come from (this file or a `murmur.yaml`), follow the runtime's
//   rules and wording exactly (src/config/retain.ts). An explicit `retain:` replaces the
//   manifest's block entirely (the manifest's block is then not read). An entry with no policy
//   deletes nothing.
// - Paths: `~` and `~/x` expand to $HOME (`~user` is refused); relative paths resolve against the
//   config file's directory (`--home` and `--config` against the working directory); all paths
//   come out absolute and normalized. Only `sessions[].root` is globbed (src/io/config-files.ts).
// - $HOME is only consulted when something needs it, and then it must be set, non-empty and
//   absolute (the runtime's `murmur_home_dir` rule and wording).
// - A `workdir:` manifest (`<D>/murmur.yaml`) sits in a directory the capsule can write, so a
//   symlink there is refused rather than followed, and an invalid one does not fail the load: the
//   entry gets no policy and carries a `problem` every sweep reports (a capsule must not be able to
//   stop all sweeps). Every other invalid input (the config, `project:` and `records[].manifest`
//   manifests, which the user owns) fails the load with exit 2. FIFOs and other non-regular files
//   are refused everywhere. A missing `workdir:`/`project:` manifest means no policy; a missing
//   `records[].manifest` is an error (it is where the capsule name comes from).
// - A manifest whose `context.record` is `off` or whose `inference.transport` is `process` never
//   records, and the runtime treats its `context.retain` as inert: so do we (unless overridden).
import * as path from 'node:path';
import { validateCronExpression } from 'cron';
import { LineCounter, parseDocument } from 'yaml';
import { z } from 'zod';
import { ConfigError, GcError, describeError } from '../errors.js';
import { ConfigFileError, expandGlob, readTextFileIfExists } from '../io/config-files.js';
import type { ReadTextOptions } from '../io/config-files.js';
import { YamlFloat, parseDurationValue, parseRetainBlock } from './retain.js';
import { documentToData } from './yaml-serde.js';
import { parseKeepFree, parseSizeValue } from './size.js';
import type { GcConfig, RecordPolicyConfig, RecordRetain, SessionRetain, SessionsRootConfig } from './types.js';

export interface LoadConfigOptions {
  /** `--config FILE`: must exist. Relative to `cwd`. */
  configPath?: string;
  /** `--home DIR`: beats the config's `home`. Relative to `cwd`. */
  home?: string;
  env: Record<string, string | undefined>;
  /** Base for `--config`/`--home` (default: process.cwd()). */
  cwd?: string;
}

export const DEFAULT_SCHEDULE = '*/30 * * * *';
export const DEFAULT_LIVE_GRACE_SECS = 3600;
export const DEFAULT_AUDIT_RETAIN: Readonly<SessionRetain> = Object.freeze({ maxAgeSecs: 90 * 86_400 });
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export const CONFIG_FILE_NAME = 'murmur-gc/config.yaml';
export const MANIFEST_FILE_NAME = 'murmur.yaml';

/** The runtime's `validate_store_name` sentence. */
export const SEGMENT_RULE =
  "must be a single path segment: no '/', no '.' or '..', not absolute, and not starting with a dot";
export const HOME_NOT_SET = 'the home directory could not be resolved: HOME is not set in the environment';
export const HOME_NOT_ABSOLUTE = 'the home directory could not be resolved: HOME is not an absolute path';

// ── YAML ────────────────────────────────────────────────────────────────────────────────────

/** Rebuilds plain data, turning every JS number (a YAML float under intAsBigInt) into YamlFloat. */
function markFloats(value: unknown): unknown {
  if (typeof value === 'number') return new YamlFloat(value);
  if (Array.isArray(value)) return value.map(markFloats);
  if (typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      // defineProperty: a `__proto__` key stays an ordinary (unknown, refused) key.
      Object.defineProperty(out, k, { value: markFloats(v), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return value;
}

/**
 * Parses one YAML document the way the loader does: YAML 1.2 core schema, integers as bigint,
 * floats as `YamlFloat`, duplicate keys refused, aliases bounded. An empty document is `null`.
 * @throws ConfigError naming `file`, line and column.
 */
export function parseConfigYaml(text: string, file?: string): unknown {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { intAsBigInt: true, prettyErrors: false, uniqueKeys: true, lineCounter });
  const first = doc.errors[0];
  if (first !== undefined) {
    const { line, col } = lineCounter.linePos(first.pos[0]);
    throw new ConfigError('', `invalid YAML at line ${line}, column ${col}: ${first.message}`, file);
  }
  let js: unknown;
  try {
    // Scalars as the runtime's serde_yaml 0.9 reads them (not the yaml package's core schema).
    js = documentToData(doc, 100);
  } catch (err) {
    throw new ConfigError('', `invalid YAML: ${describeError(err)}`, file);
  }
  return markFloats(js);
}

// ── schema ──────────────────────────────────────────────────────────────────────────────────

const TOP_KEYS = ['home', 'schedule', 'run_on_start', 'random_delay', 'live_grace', 'max_delete', 'keep_free', 'quarantine', 'sessions', 'records', 'audit', 'log', 'metrics'];
const MAX_DELETE_KEYS = ['count', 'fraction'];
const SESSION_KEYS = ['root', 'workdir', 'project', 'retain', 'max_bytes'];
const RECORD_KEYS = ['capsule', 'store', 'manifest', 'retain', 'max_bytes'];
const AUDIT_KEYS = ['retain'];
const LOG_KEYS = ['level'];
const METRICS_KEYS = ['textfile'];

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
    metrics: z.strictObject({ textfile: text().optional() }, blockOf(METRICS_KEYS)).nullable().optional(),
  },
  blockOf(TOP_KEYS),
);

type RawConfig = z.infer<typeof ConfigSchema>;

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

function issueToError(issues: readonly z.core.$ZodIssue[], file: string | undefined): ConfigError {
  // An unknown key is the likeliest root cause (a typo), so it is reported first.
  const issue = issues.find((i) => i.code === 'unrecognized_keys') ?? issues[0];
  if (issue === undefined) return new ConfigError('', 'invalid configuration', file);
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0] ?? '';
    const expected = expectedKeysAt(issue.path);
    return new ConfigError(
      formatKeyPath([...issue.path, key]),
      `unknown key '${key}'${expected.length > 0 ? `; expected: ${expected.join(', ')}` : ''}`,
      file,
    );
  }
  return new ConfigError(formatKeyPath(issue.path), issue.message, file);
}

// ── paths ───────────────────────────────────────────────────────────────────────────────────

/** $HOME per the runtime's rule: set, non-empty, absolute. */
export function homeFromEnv(env: Record<string, string | undefined>, keyPath: string, file?: string): string {
  const home = env['HOME'];
  if (home === undefined || home === '') throw new ConfigError(keyPath, HOME_NOT_SET, file);
  if (!path.isAbsolute(home)) throw new ConfigError(keyPath, HOME_NOT_ABSOLUTE, file);
  return path.resolve(home);
}

interface PathContext {
  env: Record<string, string | undefined>;
  /** Directory relative paths resolve against. */
  base: string;
  /** File errors name (the config file), if any. */
  file: string | undefined;
}

/** `~`/`~/x` → $HOME; relative → against ctx.base; normalized absolute. */
function resolvePath(value: string, keyPath: string, ctx: PathContext): string {
  if (value.includes('\0')) throw new ConfigError(keyPath, 'must not contain a NUL character', ctx.file);
  let expanded = value;
  if (value === '~' || value.startsWith('~/')) {
    expanded = homeFromEnv(ctx.env, keyPath, ctx.file) + value.slice(1);
  } else if (value.startsWith('~')) {
    throw new ConfigError(keyPath, `'${value}': only '~' and '~/…' are expanded; write the path out`, ctx.file);
  }
  return path.resolve(ctx.base, expanded);
}

function checkSegment(value: string, keyPath: string, file: string | undefined): string {
  if (value.length === 0 || value.includes('/') || value.startsWith('.') || value.includes('\0')) {
    throw new ConfigError(keyPath, SEGMENT_RULE, file);
  }
  return value;
}

// ── files ───────────────────────────────────────────────────────────────────────────────────

async function readFileOrFail(file: string, options: ReadTextOptions = {}): Promise<string | undefined> {
  try {
    return await readTextFileIfExists(file, options);
  } catch (err) {
    if (err instanceof ConfigFileError) throw new ConfigError('', err.reason, file);
    throw new ConfigError('', `could not be read (${describeError(err)})`, file);
  }
}

type Mapping = Record<string, unknown>;

function isMapping(value: unknown): value is Mapping {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.getPrototypeOf(value) === Object.prototype;
}

/** A manifest as a mapping, or undefined when the file does not exist. */
async function readManifest(file: string, options: ReadTextOptions): Promise<Mapping | undefined> {
  const source = await readFileOrFail(file, options);
  if (source === undefined) return undefined;
  const doc = parseConfigYaml(source, file);
  if (doc === null) return {};
  if (!isMapping(doc)) throw new ConfigError('', 'must be a block of keys', file);
  return doc;
}

/** `manifest[key]` as a mapping; undefined when absent or null (serde: `Option<Raw…>`). */
function subBlock(manifest: Mapping, key: string, file: string): Mapping | undefined {
  const value = manifest[key];
  if (value === undefined || value === null) return undefined;
  if (!isMapping(value)) throw new ConfigError(key, 'must be a block of keys', file);
  return value;
}

async function manifestTraceRetain(file: string, options: ReadTextOptions): Promise<SessionRetain | undefined> {
  const manifest = await readManifest(file, options);
  if (manifest === undefined) return undefined; // no manifest: no policy
  const trace = subBlock(manifest, 'trace', file);
  if (trace === undefined || !Object.hasOwn(trace, 'retain')) return undefined;
  return parseRetainBlock(trace['retain'], 'trace.retain', 'trace', file);
}

function optionalTrimmedString(block: Mapping | undefined, key: string, keyPath: string, file: string): string | undefined {
  const value = block?.[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new ConfigError(keyPath, 'must be a string', file);
  return value.trim();
}

// ── entries ─────────────────────────────────────────────────────────────────────────────────

type SessionEntry = NonNullable<RawConfig['sessions']>[number];
type RecordEntry = NonNullable<RawConfig['records']>[number];

async function resolveSessionEntry(entry: SessionEntry, index: number, ctx: PathContext): Promise<SessionsRootConfig[]> {
  const origin = `sessions[${index}]`;
  const maxBytes = entry.max_bytes === undefined ? undefined : parseSizeValue(entry.max_bytes, `${origin}.max_bytes`, ctx.file);
  const roots = await resolveSessionRoots(entry, origin, ctx);
  // An entry whose manifest is broken deletes nothing until it is fixed: no budget either.
  return maxBytes === undefined ? roots : roots.map((r) => (r.problem ? r : { ...r, maxBytes }));
}

async function resolveSessionRoots(entry: SessionEntry, origin: string, ctx: PathContext): Promise<SessionsRootConfig[]> {
  const given = (['root', 'workdir', 'project'] as const).filter((k) => entry[k] !== undefined);
  if (given.length !== 1) {
    throw new ConfigError(
      origin,
      given.length === 0
        ? 'must name one of root, workdir or project'
        : `names ${given.join(' and ')}; give exactly one of root, workdir or project`,
      ctx.file,
    );
  }
  const explicit = parseRetainBlock(entry.retain, `${origin}.retain`, 'trace', ctx.file);
  const hasExplicit = entry.retain !== undefined;

  if (entry.root !== undefined) {
    const pattern = resolvePath(entry.root, `${origin}.root`, ctx);
    const roots = await expandGlob(pattern);
    return roots.map((root) => ({ root, retain: explicit, origin }));
  }
  if (entry.workdir !== undefined) {
    const dir = resolvePath(entry.workdir, `${origin}.workdir`, ctx);
    // The workdir is writable by the capsule: its manifest is never read through a symlink, and a
    // broken one must not stop every sweep — the entry deletes nothing and the problem is reported
    // by each sweep (code config_invalid) while the rest of the configuration keeps working.
    if (hasExplicit) return [{ root: path.join(dir, '.murmur'), retain: explicit, origin }];
    try {
      const retain = await manifestTraceRetain(path.join(dir, MANIFEST_FILE_NAME), { followSymlinks: false });
      return [{ root: path.join(dir, '.murmur'), retain, origin }];
    } catch (err) {
      if (!(err instanceof GcError)) throw err;
      return [{ root: path.join(dir, '.murmur'), retain: undefined, origin, problem: { code: err.code, detail: `${origin}: ${err.message}; no policy applies to this entry until it is fixed` } }];
    }
  }
  const project = resolvePath(entry.project ?? '', `${origin}.project`, ctx);
  const retain = hasExplicit ? explicit : await manifestTraceRetain(path.join(project, MANIFEST_FILE_NAME), {});
  return [{ root: path.join(project, 'workdir'), retain, origin }];
}

async function resolveRecordEntry(entry: RecordEntry, index: number, ctx: PathContext): Promise<RecordPolicyConfig> {
  const origin = `records[${index}]`;
  const maxBytes = entry.max_bytes === undefined ? undefined : parseSizeValue(entry.max_bytes, `${origin}.max_bytes`, ctx.file);
  const policy = await resolveRecordPolicy(entry, origin, ctx);
  return maxBytes === undefined ? policy : { ...policy, maxBytes };
}

async function resolveRecordPolicy(entry: RecordEntry, origin: string, ctx: PathContext): Promise<RecordPolicyConfig> {
  if (entry.capsule !== undefined && entry.manifest !== undefined) {
    throw new ConfigError(origin, 'names capsule and manifest; give exactly one of them', ctx.file);
  }
  if (entry.capsule === undefined && entry.manifest === undefined) {
    throw new ConfigError(origin, 'must name one of capsule or manifest', ctx.file);
  }
  const explicit = parseRetainBlock(entry.retain, `${origin}.retain`, 'context', ctx.file);

  if (entry.capsule !== undefined) {
    const capsule = checkSegment(entry.capsule, `${origin}.capsule`, ctx.file);
    const store = entry.store === undefined ? capsule : checkSegment(entry.store, `${origin}.store`, ctx.file);
    return { capsule, store, retain: explicit, origin };
  }

  if (entry.store !== undefined) {
    throw new ConfigError(
      `${origin}.store`,
      "is read from the manifest's context.record_store; remove it, or use capsule: and store: instead",
      ctx.file,
    );
  }
  const file = resolvePath(entry.manifest ?? '', `${origin}.manifest`, ctx);
  const manifest = await readManifest(file, {});
  if (manifest === undefined) throw new ConfigError(`${origin}.manifest`, `'${file}' does not exist`, ctx.file);

  const name = manifest['name'];
  if (typeof name !== 'string' || name.trim() === '') {
    throw new ConfigError('name', "missing required field 'name'", file);
  }
  const capsule = checkSegment(name.trim(), 'name', file);
  const context = subBlock(manifest, 'context', file);
  const recordStore = optionalTrimmedString(context, 'record_store', 'context.record_store', file);
  const store = recordStore === undefined ? capsule : checkSegment(recordStore, 'context.record_store', file);

  let retain: RecordRetain | undefined;
  if (entry.retain !== undefined) {
    retain = explicit;
  } else if (context !== undefined && Object.hasOwn(context, 'retain')) {
    retain = parseRetainBlock(context['retain'], 'context.retain', 'context', file);
    // Parsed (and so validated) even when inert, as the runtime does.
    const record = optionalTrimmedString(context, 'record', 'context.record', file);
    const transport = optionalTrimmedString(subBlock(manifest, 'inference', file), 'transport', 'inference.transport', file);
    if (record === 'off' || transport === 'process') retain = undefined;
  }
  return { capsule, store, retain, origin };
}

// ── entry point ─────────────────────────────────────────────────────────────────────────────

/** The XDG location, or throws when neither XDG_CONFIG_HOME (absolute) nor HOME is usable. */
/** `max_delete: { count, fraction }` (src/plan/guards.ts): a whole count >= 1 and/or 0 < fraction <= 1. */
function parseMaxDelete(raw: { count?: unknown; fraction?: unknown }, file: string | undefined): { count?: number; fraction?: number } {
  const out: { count?: number; fraction?: number } = {};
  if (raw.count !== undefined) {
    const c = raw.count;
    // serde_yaml's rule: a count is an integer (bigint here); 10.0 is a float and is refused.
    const n = typeof c === 'bigint' ? c : undefined;
    if (n === undefined) throw new ConfigError('max_delete.count', 'must be a whole number', file);
    if (n < 1n) throw new ConfigError('max_delete.count', 'must be at least 1', file);
    if (n > BigInt(Number.MAX_SAFE_INTEGER)) throw new ConfigError('max_delete.count', 'is too large', file);
    out.count = Number(n);
  }
  if (raw.fraction !== undefined) {
    const v = raw.fraction;
    const x = typeof v === 'bigint' ? Number(v) : v instanceof YamlFloat && Number.isFinite(v.value) ? v.value : undefined;
    if (x === undefined) throw new ConfigError('max_delete.fraction', 'must be a number (0 < fraction <= 1)', file);
    if (x <= 0) throw new ConfigError('max_delete.fraction', 'must be more than 0', file);
    if (x > 1) throw new ConfigError('max_delete.fraction', 'must be at most 1', file);
    out.fraction = x;
  }
  if (out.count === undefined && out.fraction === undefined) throw new ConfigError('max_delete', 'needs count and/or fraction', file);
  return out;
}

export function defaultConfigPath(env: Record<string, string | undefined>): string {
  const xdg = env['XDG_CONFIG_HOME'];
  const base = xdg !== undefined && xdg !== '' && path.isAbsolute(xdg) ? path.resolve(xdg) : path.join(homeFromEnv(env, ''), '.config');
  return path.join(base, CONFIG_FILE_NAME);
}

/** Resolves the configuration. Touches the filesystem only to read files and expand globs. */
export async function loadConfig(opts: LoadConfigOptions): Promise<GcConfig> {
  const cwd = opts.cwd ?? process.cwd();
  const env = opts.env;

  let file: string | undefined;
  let source: string | undefined;
  if (opts.configPath !== undefined) {
    if (opts.configPath === '') throw new ConfigError('--config', 'must not be empty');
    file = resolvePath(opts.configPath, '--config', { env, base: cwd, file: undefined });
    source = await readFileOrFail(file);
    if (source === undefined) throw new ConfigError('', 'the configuration file does not exist', file);
  } else {
    const candidate = defaultConfigPath(env);
    source = await readFileOrFail(candidate);
    if (source !== undefined) file = candidate;
  }

  let doc: unknown = source === undefined ? null : parseConfigYaml(source, file);
  if (doc === null) doc = {};
  const parsed = ConfigSchema.safeParse(doc);
  if (!parsed.success) throw issueToError(parsed.error.issues, file);
  const raw = parsed.data;
  const ctx: PathContext = { env, base: file === undefined ? cwd : path.dirname(file), file };

  let home: string;
  if (opts.home !== undefined) {
    if (opts.home === '') throw new ConfigError('--home', 'must not be empty');
    home = resolvePath(opts.home, '--home', { env, base: cwd, file: undefined });
  } else if (raw.home !== undefined) {
    home = resolvePath(raw.home, 'home', ctx);
  } else {
    home = path.join(homeFromEnv(env, 'home', file), '.murmur');
  }

  const schedule = raw.schedule ?? DEFAULT_SCHEDULE;
  const cron = validateCronExpression(schedule);
  if (!cron.valid) {
    const why = cron.error?.message;
    throw new ConfigError('schedule', `'${schedule}' is not a valid cron expression${why ? ` (${why})` : ''}`, file);
  }

  const randomDelaySecs =
    raw.random_delay === undefined ? 0 : parseDurationValue(raw.random_delay, 'random_delay', file, { allowZero: true });
  const liveGraceSecs =
    raw.live_grace === undefined ? DEFAULT_LIVE_GRACE_SECS : parseDurationValue(raw.live_grace, 'live_grace', file);
  const keepFree = raw.keep_free === undefined ? undefined : parseKeepFree(raw.keep_free, 'keep_free', file);
  const quarantineSecs = raw.quarantine === undefined ? undefined : parseDurationValue(raw.quarantine, 'quarantine', file);

  const sessions: SessionsRootConfig[] = [];
  for (const [i, entry] of (raw.sessions ?? []).entries()) {
    sessions.push(...(await resolveSessionEntry(entry, i, ctx)));
  }
  const records: RecordPolicyConfig[] = [];
  for (const [i, entry] of (raw.records ?? []).entries()) {
    records.push(await resolveRecordEntry(entry, i, ctx));
  }

  let metrics: { textfile: string } | undefined;
  if (raw.metrics?.textfile !== undefined) {
    const textfile = resolvePath(raw.metrics.textfile, 'metrics.textfile', ctx);
    // node_exporter's textfile collector reads `*.prom` only: anything else would never be seen.
    if (!textfile.endsWith('.prom') || textfile.endsWith('/.prom')) {
      throw new ConfigError('metrics.textfile', `'${raw.metrics.textfile}' must name a file ending in .prom (the textfile collector reads only *.prom)`, file);
    }
    metrics = { textfile };
  }

  const auditRetain =
    raw.audit?.retain === undefined
      ? { ...DEFAULT_AUDIT_RETAIN }
      : parseRetainBlock(raw.audit.retain, 'audit.retain', 'trace', file);

  return {
    home,
    schedule,
    runOnStart: raw.run_on_start ?? true,
    randomDelaySecs,
    liveGraceSecs,
    ...(raw.max_delete ? { maxDelete: parseMaxDelete(raw.max_delete, file) } : {}),
    sessions,
    records,
    ...(keepFree !== undefined ? { keepFree } : {}),
    ...(quarantineSecs !== undefined ? { quarantine: { windowSecs: quarantineSecs } } : {}),
    audit: { retain: auditRetain },
    log: { level: raw.log?.level ?? 'info' },
    ...(metrics ? { metrics } : {}),
    source: file,
  };
}
