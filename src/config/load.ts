// Loads murmur-gc's configuration (docs/design.md §9) into a fully resolved `GcConfig`.
//
// Invariants and decisions:
// - Source: `--config FILE` (must exist), else `$XDG_CONFIG_HOME/murmur-gc/config.yaml`
//   (XDG_CONFIG_HOME unset, empty or relative → `$HOME/.config`), else built-in defaults, which
//   delete nothing: no sessions roots, no record policies, `audit.retain = { max_age: 90d }`.
// - Validation is strict and fails closed: unknown keys are refused, and every error is a
//   `ConfigError` (exit 2, code `config_invalid`) naming its file and key path
//   (`sessions[1].retain.max_age`). Errors are collected, not thrown at the first: `checkConfig`
//   returns every one in line order (with line:column in the file that holds the key) plus
//   warnings; `loadConfig` throws the first, its hint counting the rest.
// - Warnings (code `config_path_missing`, never fatal): a sessions root, workdir or project that
//   does not exist (or a root pattern that matches nothing), a workdir/project without its
//   murmur.yaml (no policy), a `records[].manifest` that does not exist (that entry is left out:
//   it deletes nothing until the file exists — the rest of the configuration works), a metrics
//   directory or a home that does not exist. Sweeps log them too (`logConfigWarnings`: every
//   one-shot sweep, the daemon at start and after each reload), except a missing home.
// - One sessions root under two entries (a path twice, a glob and a `workdir:` that meet, a
//   symlink to another entry's root) is an error naming both entries: one policy per root.
// - Warnings (code `config_destructive`, `config check` only): `keep_free` of 90% or more, a
//   `max_age` without a unit in this file (read as seconds).
// - YAML is read with serde_yaml's distinctions: integers are bigint, floats are `YamlFloat`
//   (so `max_sessions: 5.0` is refused as the runtime refuses it), duplicate keys are an error.
//   The reader and its hand-written shape check (src/config/parse.ts, with yaml; no schema
//   library) are imported only when a file is read: with no configuration file nothing here loads
//   them.
// - Retain blocks, wherever they come from (this file or a `murmur.yaml`), follow the runtime's
//   rules and wording exactly (src/config/retain.ts). An explicit `retain:` replaces the
//   manifest's block entirely (the manifest's block is then not read). An entry with no policy
//   deletes nothing.
// - Paths: `~` and `~/x` expand to $HOME (`~user` is refused); relative paths resolve against the
//   config file's directory (`--home` and `--config` against the working directory); all paths
//   come out absolute and normalized. Only `sessions[].root` is globbed (src/config/files.ts).
// - A capsule or record store name (`records[].capsule`, `records[].store`, a manifest's `name:`
//   and `context.record_store`) follows the runtime's `validate_store_name` rule (one path
//   segment, SEGMENT_RULE) and holds no control character (CONTROL_RULE, checked on the value as
//   written, before it is trimmed): a newline in a name would be another line in every log.
// - The home must be one (src/config/home.ts): a system path, or an existing directory that is not
//   recognisably a murmur home, is a `config_invalid` error at `--home` or `home` (the default home
//   names no file), unless forced (`--force-home`, `force_home: true`), which is a
//   `config_destructive` warning there instead. The resolved config carries what the sweep needs
//   to judge it again at the moment of action (`forceHome`, `userHomes`, `homeKey`).
// - $HOME is only consulted when something needs it, and then it must be set, non-empty and
//   absolute (the runtime's `murmur_home_dir` rule and wording).
// - A `workdir:` manifest (`<D>/murmur.yaml`) sits in a directory the capsule can write, so a
//   symlink there is refused rather than followed, and an invalid one does not fail the load: the
//   entry gets no policy and carries a `problem` every sweep reports (a capsule must not be able to
//   stop all sweeps). Every other invalid input (the config, `project:` and `records[].manifest`
//   manifests, which the user owns) fails the load with exit 2. FIFOs and other non-regular files
//   are refused everywhere. A missing `workdir:`/`project:` manifest means no policy; a missing
//   `records[].manifest` leaves that entry out (it is where the capsule name comes from) with a
//   warning, so a shipped or copied configuration loads before every path in it exists.
// - A manifest whose `context.record` is `off` or whose `inference.transport` is `process` never
//   records, and the runtime treats its `context.retain` as inert: so do we (unless overridden).
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type { Logger } from '../log.js';
import { Codes, ConfigError, GcError, describeError } from '../errors.js';
import { ConfigFileError, expandGlob, hasGlob, pathKind, readTextFileIfExists } from './files.js';
import { judgeHome, refusedHomeMessage } from './home.js';
import { realpath } from '../fsx/safe-fs.js';
import type { ReadTextOptions } from './files.js';
import { YamlFloat, isMapping, parseDurationValue, parseRetainBlock } from './retain.js';
import { YamlSyntaxError, type Locator } from './yaml-error.js';
import type { RawConfig, RecordEntry, SessionEntry } from './parse.js';
import { parseKeepFree, parseSizeValue } from './size.js';
import type {
  GcConfig,
  KeepFree,
  RecordPolicyConfig,
  RecordRetain,
  SessionRetain,
  SessionsRootConfig,
} from './types.js';
import { definedOnly } from '../defined.js';

export interface LoadConfigOptions {
  /** `--config FILE`: must exist. Relative to `cwd`. */
  configPath?: string;
  /** `--home DIR`: beats the config's `home`. Relative to `cwd`. */
  home?: string;
  /** `--force-home`: use the home even when it is not recognised as one (src/config/home.ts). */
  forceHome?: boolean;
  env: Record<string, string | undefined>;
  /** Base for `--config`/`--home` (default: process.cwd()). */
  cwd?: string;
}

export const DEFAULT_SCHEDULE = '*/30 * * * *';
export const DEFAULT_LIVE_GRACE_SECS = 3600;
export const DEFAULT_AUDIT_RETAIN: Readonly<SessionRetain> = Object.freeze({ maxAgeSecs: 90 * 86_400 });
export const CONFIG_FILE_NAME = 'murmur-gc/config.yaml';
export const MANIFEST_FILE_NAME = 'murmur.yaml';
/** The keys of a `sessions[].children` block. */
const CHILDREN_KEYS = ['max_age'];

/** The runtime's `validate_store_name` sentence. */
export const SEGMENT_RULE =
  "must be a single path segment: no '/', no '.' or '..', not absolute, and not starting with a dot";
/** A control character (C0, DEL, C1) or a line or paragraph separator: never in a name murmur-gc takes. */
const CONTROL_CHAR = /[\p{Cc}\u2028\u2029]/u;
/** What a capsule or record store name with a control character is told (murmur-gc's rule beside the runtime's). */
export const CONTROL_RULE =
  'must not hold a control character (a newline, a tab, …): a capsule or record store name is one line in every record header, log, report and audit line';
export const HOME_NOT_SET = 'the home directory could not be resolved: HOME is not set in the environment';
export const HOME_NOT_ABSOLUTE = 'the home directory could not be resolved: HOME is not an absolute path';

/** `sessions[1].retain.max_age` → ['sessions', 1, 'retain', 'max_age'] */
export function parseKeyPath(keyPath: string): (string | number)[] {
  const out: (string | number)[] = [];
  for (const m of keyPath.matchAll(/\[(\d+)\]|([^.[\]]+)/g)) out.push(m[1] !== undefined ? Number(m[1]) : (m[2] ?? ''));
  return out;
}

// ── paths ───────────────────────────────────────────────────────────────────────────────────

/** $HOME per the runtime's rule: set, non-empty, absolute. */
export function homeFromEnv(env: Record<string, string | undefined>, keyPath: string, file?: string): string {
  const home = env['HOME'];
  if (home === undefined || home === '') throw new ConfigError(keyPath, HOME_NOT_SET, file);
  if (!path.isAbsolute(home)) throw new ConfigError(keyPath, HOME_NOT_ABSOLUTE, file);
  return path.resolve(home);
}

/** Where an entry's retain block came from, for `config check`. */
export interface PolicySource {
  from: 'config' | 'manifest' | 'none';
  /** The manifest read (or looked for), when the entry names one. */
  manifest?: string;
  /** Why a manifest's block does not apply (inert, missing…). */
  note?: string;
}

/** A warning: the configuration loads, but something it names is not there. */
export interface ConfigWarning {
  code: string;
  file: string | undefined;
  keyPath: string;
  message: string;
  line?: number;
  column?: number;
}

/** What resolving collects: every error, every warning, and where each policy came from. */
interface Sink {
  /** Fatal: the configuration is invalid. */
  errors: ConfigError[];
  /** Not fatal to the load (a capsule-writable workdir manifest); every sweep reports it. */
  problems: ConfigError[];
  warnings: ConfigWarning[];
  sources: Map<string, PolicySource>;
  locators: Map<string, Locator>;
}

function newSink(): Sink {
  return { errors: [], problems: [], warnings: [], sources: new Map(), locators: new Map() };
}

function collect(into: ConfigError[], err: unknown): void {
  if (err instanceof YamlSyntaxError) into.push(...err.all);
  else if (err instanceof ConfigError) into.push(err);
  else throw err;
}

/** Runs one independent piece of resolution; a ConfigError is collected and undefined returned. */
async function attempt<T>(sink: Sink, fn: () => T | Promise<T>): Promise<T | undefined> {
  try {
    return await fn();
  } catch (err) {
    collect(sink.errors, err);
    return undefined;
  }
}

function warn(ctx: PathContext, keyPath: string, message: string): void {
  ctx.sink.warnings.push({ code: Codes.configPathMissing, file: ctx.file, keyPath, message });
}

interface PathContext {
  env: Record<string, string | undefined>;
  /** Directory relative paths resolve against. */
  base: string;
  /** File errors name (the config file), if any. */
  file: string | undefined;
  sink: Sink;
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

/**
 * A capsule or record store name (`records[].capsule`, `records[].store`, a manifest's `name:` and
 * `context.record_store`): the runtime's `validate_store_name` rule (SEGMENT_RULE), and no control
 * character anywhere in `raw` — the value as written, before any trimming (so `name: "bot\n"` is
 * refused, not read as another capsule's `bot`). The refusal shows the value JSON-escaped.
 */
function checkSegment(value: string, keyPath: string, file: string | undefined, raw: string = value): string {
  const control = CONTROL_CHAR.exec(raw);
  if (control) {
    const at = `U+${control[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
    throw new ConfigError(keyPath, `${JSON.stringify(raw)} holds ${at}: ${CONTROL_RULE}`, file);
  }
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

/** A manifest as a mapping, or undefined when the file does not exist. */
async function readManifest(file: string, options: ReadTextOptions, sink: Sink): Promise<Mapping | undefined> {
  const source = await readFileOrFail(file, options);
  if (source === undefined) return undefined;
  const { parseYaml } = await import('./parse.js');
  const { data: doc, locate } = parseYaml(source, file);
  sink.locators.set(file, locate);
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

/** The manifest's `trace.retain`; `exists: false` when there is no manifest (no policy). */
async function manifestTraceRetain(
  file: string,
  options: ReadTextOptions,
  sink: Sink,
): Promise<{ exists: boolean; retain: SessionRetain | undefined }> {
  const manifest = await readManifest(file, options, sink);
  if (manifest === undefined) return { exists: false, retain: undefined };
  const trace = subBlock(manifest, 'trace', file);
  if (trace === undefined || !Object.hasOwn(trace, 'retain')) return { exists: true, retain: undefined };
  return { exists: true, retain: parseRetainBlock(trace['retain'], 'trace.retain', 'trace', file) };
}

/** Warn when a configured directory is not there (or is not a directory). */
async function checkDir(ctx: PathContext, keyPath: string, dir: string, what: string): Promise<boolean> {
  const kind = await pathKind(dir);
  if (kind === 'directory' || kind === 'unreadable') return true;
  warn(ctx, keyPath, kind === 'missing' ? `'${dir}' does not exist: ${what}` : `'${dir}' is not a directory: ${what}`);
  return false;
}

function optionalTrimmedString(
  block: Mapping | undefined,
  key: string,
  keyPath: string,
  file: string,
): string | undefined {
  const value = block?.[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new ConfigError(keyPath, 'must be a string', file);
  return value.trim();
}

// ── entries ─────────────────────────────────────────────────────────────────────────────────

/** `children: { max_age: <duration> }` of a sessions entry: the age in seconds. */
function parseChildrenBlock(value: unknown, keyPath: string, file: string | undefined): number {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ConfigError(keyPath, `must be a block of keys (${CHILDREN_KEYS.join(', ')})`, file);
  const block = value as Record<string, unknown>;
  for (const k of Object.keys(block))
    if (!CHILDREN_KEYS.includes(k))
      throw new ConfigError(`${keyPath}.${k}`, `unknown key '${k}'; expected: ${CHILDREN_KEYS.join(', ')}`, file);
  if (block['max_age'] === undefined)
    throw new ConfigError(keyPath, 'must set max_age (e.g. children: { max_age: 30d })', file);
  return parseDurationValue(block['max_age'], `${keyPath}.max_age`, file);
}

async function resolveSessionEntry(
  entry: SessionEntry,
  index: number,
  ctx: PathContext,
): Promise<SessionsRootConfig[]> {
  const origin = `sessions[${index}]`;
  const maxBytes =
    entry.max_bytes === undefined
      ? undefined
      : await attempt(ctx.sink, () => parseSizeValue(entry.max_bytes, `${origin}.max_bytes`, ctx.file));
  const childrenAge =
    entry.children === undefined
      ? undefined
      : await attempt(ctx.sink, () =>
          Promise.resolve(parseChildrenBlock(entry.children, `${origin}.children`, ctx.file)),
        );
  const roots = await attempt(ctx.sink, () => resolveSessionRoots(entry, origin, ctx));
  if (
    roots === undefined ||
    (entry.max_bytes !== undefined && maxBytes === undefined) ||
    (entry.children !== undefined && childrenAge === undefined)
  )
    return [];
  // An entry whose manifest is broken deletes nothing until it is fixed: no budget either.
  const keepFree = entry.keep_free === false ? { keepFree: false as const } : {};
  return roots.map((r) =>
    r.problem ? r : { ...r, ...definedOnly({ maxBytes, childrenMaxAgeSecs: childrenAge }), ...keepFree },
  );
}

async function resolveSessionRoots(
  entry: SessionEntry,
  origin: string,
  ctx: PathContext,
): Promise<SessionsRootConfig[]> {
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
  // A bad retain block is reported after the paths are checked (so both are in `config check`).
  let explicit: SessionRetain | undefined;
  let retainError: Error | undefined;
  try {
    explicit = parseRetainBlock(entry.retain, `${origin}.retain`, 'trace', ctx.file);
  } catch (err) {
    retainError = err instanceof Error ? err : new Error(String(err));
  }
  const hasExplicit = entry.retain !== undefined;
  const sources = ctx.sink.sources;
  const checked = (): SessionRetain | undefined => {
    if (retainError !== undefined) throw retainError;
    return explicit;
  };

  if (entry.root !== undefined) {
    const pattern = resolvePath(entry.root, `${origin}.root`, ctx);
    const roots = await expandGlob(pattern);
    if (!hasGlob(pattern)) await checkDir(ctx, `${origin}.root`, pattern, 'nothing there is swept until it exists');
    else if (roots.length === 0)
      warn(
        ctx,
        `${origin}.root`,
        `'${pattern}' matches no directory: nothing is swept for this entry until one exists`,
      );
    checked();
    sources.set(origin, { from: hasExplicit ? 'config' : 'none' });
    return roots.map((root) => ({ root, retain: explicit, origin }));
  }
  if (entry.workdir !== undefined) {
    const dir = resolvePath(entry.workdir, `${origin}.workdir`, ctx);
    const root = path.join(dir, '.murmur');
    const exists = await checkDir(ctx, `${origin}.workdir`, dir, 'its sessions are not swept until it exists');
    checked();
    // The workdir is writable by the capsule: its manifest is never read through a symlink, and a
    // broken one must not stop every sweep — the entry deletes nothing and the problem is reported
    // by each sweep (code config_invalid) while the rest of the configuration keeps working.
    if (hasExplicit) {
      sources.set(origin, { from: 'config' });
      return [{ root, retain: explicit, origin }];
    }
    const manifest = path.join(dir, MANIFEST_FILE_NAME);
    try {
      const m = await manifestTraceRetain(manifest, { followSymlinks: false }, ctx.sink);
      if (!m.exists && exists)
        warn(
          ctx,
          `${origin}.workdir`,
          `'${manifest}' does not exist: no policy applies to this entry (nothing is deleted there)`,
        );
      sources.set(
        origin,
        m.retain
          ? { from: 'manifest', manifest }
          : { from: 'none', manifest, note: m.exists ? 'the manifest has no trace.retain' : 'no manifest' },
      );
      return [{ root, retain: m.retain, origin }];
    } catch (err) {
      if (!(err instanceof GcError)) throw err;
      collect(
        ctx.sink.problems,
        err instanceof ConfigError ? err : new ConfigError(`${origin}.workdir`, err.message, ctx.file),
      );
      sources.set(origin, { from: 'none', manifest, note: 'the manifest is invalid' });
      return [
        {
          root,
          retain: undefined,
          origin,
          problem: {
            code: err.code,
            detail: `${origin}: ${err.message}; no policy applies to this entry until it is fixed`,
          },
        },
      ];
    }
  }
  const project = resolvePath(entry.project ?? '', `${origin}.project`, ctx);
  const exists = await checkDir(ctx, `${origin}.project`, project, 'its sessions are not swept until it exists');
  checked();
  if (hasExplicit) {
    sources.set(origin, { from: 'config' });
    return [{ root: path.join(project, 'workdir'), retain: explicit, origin }];
  }
  const manifest = path.join(project, MANIFEST_FILE_NAME);
  const m = await manifestTraceRetain(manifest, {}, ctx.sink);
  if (!m.exists && exists)
    warn(
      ctx,
      `${origin}.project`,
      `'${manifest}' does not exist: no policy applies to this entry (nothing is deleted there)`,
    );
  sources.set(
    origin,
    m.retain
      ? { from: 'manifest', manifest }
      : { from: 'none', manifest, note: m.exists ? 'the manifest has no trace.retain' : 'no manifest' },
  );
  return [{ root: path.join(project, 'workdir'), retain: m.retain, origin }];
}

async function resolveRecordEntry(
  entry: RecordEntry,
  index: number,
  ctx: PathContext,
): Promise<RecordPolicyConfig | undefined> {
  const origin = `records[${index}]`;
  const maxBytes =
    entry.max_bytes === undefined
      ? undefined
      : await attempt(ctx.sink, () => parseSizeValue(entry.max_bytes, `${origin}.max_bytes`, ctx.file));
  const policy = await attempt(ctx.sink, () => resolveRecordPolicy(entry, origin, ctx));
  if (policy === undefined || (entry.max_bytes !== undefined && maxBytes === undefined)) return undefined;
  return {
    ...policy,
    ...(maxBytes !== undefined ? { maxBytes } : {}),
    ...(entry.keep_free === false ? { keepFree: false as const } : {}),
  };
}

/** The entry's policy; undefined (with a warning) when its manifest does not exist. */
async function resolveRecordPolicy(
  entry: RecordEntry,
  origin: string,
  ctx: PathContext,
): Promise<RecordPolicyConfig | undefined> {
  if (entry.capsule !== undefined && entry.manifest !== undefined) {
    throw new ConfigError(origin, 'names capsule and manifest; give exactly one of them', ctx.file);
  }
  if (entry.capsule === undefined && entry.manifest === undefined) {
    throw new ConfigError(origin, 'must name one of capsule or manifest', ctx.file);
  }
  const explicit = parseRetainBlock(entry.retain, `${origin}.retain`, 'context', ctx.file);
  const sources = ctx.sink.sources;

  if (entry.capsule !== undefined) {
    const capsule = checkSegment(entry.capsule, `${origin}.capsule`, ctx.file);
    const store = entry.store === undefined ? capsule : checkSegment(entry.store, `${origin}.store`, ctx.file);
    sources.set(origin, { from: entry.retain !== undefined ? 'config' : 'none' });
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
  const manifest = await readManifest(file, {}, ctx.sink);
  if (manifest === undefined) {
    // Nothing names the capsule or the store: the entry is left out (it deletes nothing) and said so.
    warn(
      ctx,
      `${origin}.manifest`,
      `'${file}' does not exist: this entry is left out (nothing in its record store is deleted) until it does`,
    );
    sources.set(origin, { from: 'none', manifest: file, note: 'the manifest does not exist' });
    return undefined;
  }

  const name = manifest['name'];
  if (typeof name !== 'string' || name.trim() === '') {
    throw new ConfigError('name', "missing required field 'name'", file);
  }
  const capsule = checkSegment(name.trim(), 'name', file, name);
  const context = subBlock(manifest, 'context', file);
  const recordStore = optionalTrimmedString(context, 'record_store', 'context.record_store', file);
  const rawStore = context?.['record_store'];
  const store =
    recordStore === undefined
      ? capsule
      : checkSegment(recordStore, 'context.record_store', file, typeof rawStore === 'string' ? rawStore : recordStore);

  let retain: RecordRetain | undefined;
  if (entry.retain !== undefined) {
    retain = explicit;
    sources.set(origin, { from: 'config', manifest: file });
  } else if (context !== undefined && Object.hasOwn(context, 'retain')) {
    retain = parseRetainBlock(context['retain'], 'context.retain', 'context', file);
    // Parsed (and so validated) even when inert, as the runtime does.
    const record = optionalTrimmedString(context, 'record', 'context.record', file);
    const transport = optionalTrimmedString(
      subBlock(manifest, 'inference', file),
      'transport',
      'inference.transport',
      file,
    );
    if (record === 'off' || transport === 'process') {
      retain = undefined;
      sources.set(origin, {
        from: 'none',
        manifest: file,
        note:
          record === 'off'
            ? 'context.record is off: its context.retain is inert'
            : 'inference.transport is process: its context.retain is inert',
      });
    } else {
      sources.set(origin, { from: 'manifest', manifest: file });
    }
  } else {
    sources.set(origin, { from: 'none', manifest: file, note: 'the manifest has no context.retain' });
  }
  return { capsule, store, retain, origin };
}

/** `keep_free` at or above this percentage of the filesystem is warned about (config_destructive). */
export const KEEP_FREE_WARN_PERCENT = 90;

/**
 * Values that load but would delete nearly everything: `keep_free` of 90% or more, and a
 * `max_age` without a unit — the runtime's grammar reads `max_age: 30` as thirty seconds, not
 * days. Warnings (code config_destructive) for `config check`; a unit (`30s`) silences the second.
 */
function warnDestructive(
  raw: RawConfig,
  sessions: readonly [number, SessionEntry][],
  records: readonly [number, RecordEntry][],
  keepFree: KeepFree | undefined,
  ctx: PathContext,
): void {
  const push = (keyPath: string, message: string) =>
    ctx.sink.warnings.push({ code: Codes.configDestructive, file: ctx.file, keyPath, message });
  if (keepFree?.kind === 'percent' && keepFree.percent >= KEEP_FREE_WARN_PERCENT) {
    push(
      'keep_free',
      `${keepFree.percent}% of the filesystem must stay free: every sweep removes the oldest removable items of every entry with a policy on it until it does — on a filesystem more than ${100 - keepFree.percent}% full, nearly all of them`,
    );
  }
  const bareAge = (block: unknown, keyPath: string) => {
    if (!isMapping(block)) return;
    const v = block['max_age'];
    const digits =
      typeof v === 'bigint' ? String(v) : typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? v.trim() : undefined;
    // A refused value (`max_age: 0`) is an error already.
    if (digits === undefined || ctx.sink.errors.some((e) => e.keyPath === `${keyPath}.max_age`)) return;
    push(
      `${keyPath}.max_age`,
      `${digits} has no unit and is read as ${digits} second${digits === '1' ? '' : 's'} (the runtime's grammar); write ${digits}s to mean seconds, or ${digits}d for days`,
    );
  };
  for (const [i, e] of sessions) bareAge(e.retain, `sessions[${i}].retain`);
  for (const [i, e] of records) bareAge(e.retain, `records[${i}].retain`);
  bareAge(raw.audit?.retain, 'audit.retain');
}

/**
 * One sessions root under two entries (the same path twice, a glob and a `workdir:` that meet, a
 * symlink to another entry's root) is refused: the runtime keeps one policy per root, and no rule
 * of precedence between two entries would be the operator's. Identity is the directory's device
 * and inode where it exists (so symlinks and bind mounts meet), else its absolute path. Each later
 * entry is reported once, naming the first entry and its line.
 */
async function refuseSharedRoots(sessions: readonly SessionsRootConfig[], ctx: PathContext): Promise<void> {
  const first = new Map<string, SessionsRootConfig>();
  const reported = new Set<string>();
  for (const s of sessions) {
    const st = await fsp.stat(s.root).catch(() => undefined);
    const key = st ? `${st.dev}:${st.ino}` : `path:${s.root}`;
    const prev = first.get(key);
    if (!prev) {
      first.set(key, s);
      continue;
    }
    if (prev.origin === s.origin || reported.has(`${s.origin}<${prev.origin}`)) continue;
    reported.add(`${s.origin}<${prev.origin}`);
    const at = ctx.file === undefined ? undefined : ctx.sink.locators.get(ctx.file)?.(parseKeyPath(prev.origin));
    const same = prev.root === s.root ? '' : ` ('${prev.root}')`;
    ctx.sink.errors.push(
      new ConfigError(
        s.origin,
        `'${s.root}' is the same sessions root as ${prev.origin}${at ? ` (line ${at.line})` : ''}${same}: a root has one policy; keep one entry for it (narrow the glob, or merge the two)`,
        ctx.file,
      ),
    );
  }
}

// ── entry point ─────────────────────────────────────────────────────────────────────────────

/**
 * `max_delete: { count, fraction }` (src/plan/guards.ts): a whole count >= 1 and/or 0 < fraction
 * <= 1. Each key is checked on its own, so a block with two bad keys reports both.
 */
function parseMaxDelete(
  raw: { count?: unknown; fraction?: unknown },
  file: string | undefined,
  sink: Sink,
): { count?: number; fraction?: number } | undefined {
  const out: { count?: number; fraction?: number } = {};
  const before = sink.errors.length;
  const check = (fn: () => void) => {
    try {
      fn();
    } catch (err) {
      collect(sink.errors, err);
    }
  };
  if (raw.count !== undefined) {
    check(() => {
      const c = raw.count;
      // serde_yaml's rule: a count is an integer (bigint here); 10.0 is a float and is refused.
      const n = typeof c === 'bigint' ? c : undefined;
      if (n === undefined) throw new ConfigError('max_delete.count', 'must be a whole number', file);
      if (n < 1n) throw new ConfigError('max_delete.count', 'must be at least 1', file);
      if (n > BigInt(Number.MAX_SAFE_INTEGER)) throw new ConfigError('max_delete.count', 'is too large', file);
      out.count = Number(n);
    });
  }
  if (raw.fraction !== undefined) {
    check(() => {
      const v = raw.fraction;
      const x =
        typeof v === 'bigint' ? Number(v) : v instanceof YamlFloat && Number.isFinite(v.value) ? v.value : undefined;
      if (x === undefined) throw new ConfigError('max_delete.fraction', 'must be a number (0 < fraction <= 1)', file);
      if (x <= 0) throw new ConfigError('max_delete.fraction', 'must be more than 0', file);
      if (x > 1) throw new ConfigError('max_delete.fraction', 'must be at most 1', file);
      out.fraction = x;
    });
  }
  if (sink.errors.length > before) return undefined;
  if (out.count === undefined && out.fraction === undefined) {
    collect(sink.errors, new ConfigError('max_delete', 'needs count and/or fraction', file));
    return undefined;
  }
  return out;
}

/** The XDG location, or throws when neither XDG_CONFIG_HOME (absolute) nor HOME is usable. */
export function defaultConfigPath(env: Record<string, string | undefined>): string {
  const xdg = env['XDG_CONFIG_HOME'];
  const base =
    xdg !== undefined && xdg !== '' && path.isAbsolute(xdg)
      ? path.resolve(xdg)
      : path.join(homeFromEnv(env, ''), '.config');
  return path.join(base, CONFIG_FILE_NAME);
}

/** Everything `config check` reports: every error and warning, located, and the result. */
export interface ConfigCheck {
  /** The configuration file used (undefined: built-in defaults). */
  source: string | undefined;
  /** Fatal errors first (the load fails on them), then capsule-writable manifest problems. */
  errors: ConfigError[];
  /** How many of `errors` are fatal (the rest: a workdir manifest each sweep reports). */
  fatal: number;
  warnings: ConfigWarning[];
  /** The resolved configuration; undefined when there is a fatal error. */
  config: GcConfig | undefined;
  /** Per entry origin (`sessions[0]`, `records[1]`): where its retain block came from. */
  sources: Map<string, PolicySource>;
  /** The home, when it could be resolved — also when other keys are invalid (read-only views use it). */
  home: string | undefined;
  /** The sessions roots and record stores of the entries that resolved — also when others did not. */
  resolved: { sessions: SessionsRootConfig[]; records: RecordPolicyConfig[] };
  /** Where a key path of a configuration file read by this check is (line, column). */
  locate?: (file: string | undefined, keyPath: string) => { line: number; column: number } | undefined;
}

function located(sink: Sink): void {
  const place = (file: string | undefined, keyPath: string) =>
    file === undefined ? undefined : sink.locators.get(file)?.(parseKeyPath(keyPath));
  for (const e of [...sink.errors, ...sink.problems]) {
    if (e.line !== undefined) continue;
    const at = place(e.file, e.keyPath);
    if (at) {
      e.line = at.line;
      e.column = at.column;
    }
  }
  for (const w of sink.warnings) {
    const at = place(w.file, w.keyPath);
    if (at) {
      w.line = at.line;
      w.column = at.column;
    }
  }
}

/**
 * Errors as a reader meets them: grouped by file (in the order the files were first named), and
 * within a file by line and column; an error about the file as a whole comes first.
 */
function inLineOrder<T extends { file: string | undefined; line?: number | undefined; column?: number | undefined }>(
  items: readonly T[],
): T[] {
  const fileRank = new Map<string | undefined, number>();
  for (const i of items) if (!fileRank.has(i.file)) fileRank.set(i.file, fileRank.size);
  return items
    .map((item, n) => ({ item, n }))
    .sort(
      (a, b) =>
        (fileRank.get(a.item.file) ?? 0) - (fileRank.get(b.item.file) ?? 0) ||
        (a.item.line ?? 0) - (b.item.line ?? 0) ||
        (a.item.column ?? 0) - (b.item.column ?? 0) ||
        a.n - b.n,
    )
    .map(({ item }) => item);
}

/**
 * Resolves the configuration, collecting every error and warning (never throwing a ConfigError).
 * Touches the filesystem only to read files, expand globs and see whether configured paths exist.
 */
export async function checkConfig(opts: LoadConfigOptions): Promise<ConfigCheck> {
  const cwd = opts.cwd ?? process.cwd();
  const env = opts.env;
  const sink = newSink();
  const found: { home?: string } = {};
  const resolved: ConfigCheck['resolved'] = { sessions: [], records: [] };
  const done = (file: string | undefined, config: GcConfig | undefined): ConfigCheck => {
    located(sink);
    const fatal = sink.errors.length;
    return {
      home: found.home,
      resolved,
      source: file,
      errors: [...inLineOrder(sink.errors), ...inLineOrder(sink.problems)],
      fatal,
      warnings: inLineOrder(sink.warnings),
      config: fatal === 0 ? config : undefined,
      sources: sink.sources,
      locate: (f, keyPath) => (f === undefined ? undefined : sink.locators.get(f)?.(parseKeyPath(keyPath))),
    };
  };

  let file: string | undefined;
  let source: string | undefined;
  try {
    if (opts.configPath !== undefined) {
      if (opts.configPath === '') throw new ConfigError('--config', 'must not be empty');
      file = resolvePath(opts.configPath, '--config', { env, base: cwd, file: undefined, sink });
      source = await readFileOrFail(file);
      if (source === undefined) throw new ConfigError('', 'the configuration file does not exist', file);
    } else {
      const candidate = defaultConfigPath(env);
      source = await readFileOrFail(candidate);
      if (source !== undefined) file = candidate;
    }
  } catch (err) {
    collect(sink.errors, err);
    return done(file, undefined);
  }

  // No file: the built-in defaults, which are what an empty file gives. The YAML parser and the
  // schema (src/config/parse.ts) are loaded only when there is a file to read.
  let shape: { raw: RawConfig; sessions: [number, SessionEntry][]; records: [number, RecordEntry][] } = {
    raw: {},
    sessions: [],
    records: [],
  };
  if (source !== undefined) {
    const { parseYaml, validateSchema } = await import('./parse.js');
    let doc: unknown;
    try {
      const parsed = parseYaml(source, file);
      doc = parsed.data;
      if (file !== undefined) sink.locators.set(file, parsed.locate);
    } catch (err) {
      collect(sink.errors, err);
      return done(file, undefined);
    }
    shape = validateSchema(doc === null ? {} : doc, file, sink.errors);
  }
  const { raw, sessions: sessionEntries, records: recordEntries } = shape;
  const ctx: PathContext = { env, base: file === undefined ? cwd : path.dirname(file), file, sink };

  const home = await attempt(sink, async () => {
    if (opts.home !== undefined) {
      if (opts.home === '') throw new ConfigError('--home', 'must not be empty');
      const h = resolvePath(opts.home, '--home', { env, base: cwd, file: undefined, sink });
      if ((await pathKind(h)) === 'missing')
        sink.warnings.push({
          code: Codes.configPathMissing,
          file: undefined,
          keyPath: '--home',
          message: `'${h}' does not exist: there is nothing to sweep until the runtime creates it`,
        });
      return h;
    }
    const h =
      raw.home !== undefined
        ? resolvePath(raw.home, 'home', ctx)
        : path.join(homeFromEnv(env, 'home', file), '.murmur');
    if ((await pathKind(h)) === 'missing') {
      // The default home is not in the file: the warning names no file then.
      const message = `'${h}' does not exist: there is nothing to sweep until the runtime creates it`;
      if (raw.home !== undefined) warn(ctx, 'home', message);
      else sink.warnings.push({ code: Codes.configPathMissing, file: undefined, keyPath: 'home', message });
    }
    return h;
  });

  if (home !== undefined) found.home = home;
  const forceHome = opts.forceHome === true || raw.force_home === true;
  const userHomes = await userHomesOf(env);
  if (home !== undefined)
    await guardHome(
      home,
      opts.home !== undefined ? '--home' : 'home',
      raw.home !== undefined && opts.home === undefined ? file : undefined,
      forceHome,
      userHomes,
      sink,
    );
  const schedule = raw.schedule ?? DEFAULT_SCHEDULE;
  await attempt(sink, async () => {
    // `cron` is loaded only to check a configured schedule (the default is known good, see
    // test/cli/startup.test.ts): a one-shot command on a configuration without one does not pay for it.
    if (raw.schedule === undefined) return;
    const { validateCronExpression } = await import('cron');
    const cron = validateCronExpression(schedule);
    if (!cron.valid) {
      const why = cron.error?.message;
      throw new ConfigError('schedule', `'${schedule}' is not a valid cron expression${why ? ` (${why})` : ''}`, file);
    }
  });

  const randomDelaySecs =
    raw.random_delay === undefined
      ? 0
      : await attempt(sink, () => parseDurationValue(raw.random_delay, 'random_delay', file, { allowZero: true }));
  const liveGraceSecs =
    raw.live_grace === undefined
      ? DEFAULT_LIVE_GRACE_SECS
      : await attempt(sink, () => parseDurationValue(raw.live_grace, 'live_grace', file));
  const keepFree =
    raw.keep_free === undefined
      ? undefined
      : await attempt(sink, () => parseKeepFree(raw.keep_free, 'keep_free', file));
  const quarantineSecs =
    raw.quarantine === undefined
      ? undefined
      : await attempt(sink, () => parseDurationValue(raw.quarantine, 'quarantine', file));

  const sessions: SessionsRootConfig[] = [];
  for (const [i, entry] of sessionEntries) sessions.push(...(await resolveSessionEntry(entry, i, ctx)));
  resolved.sessions = sessions;
  await refuseSharedRoots(sessions, ctx);
  warnDestructive(raw, sessionEntries, recordEntries, keepFree, ctx);
  const records: RecordPolicyConfig[] = [];
  for (const [i, entry] of recordEntries) {
    const r = await resolveRecordEntry(entry, i, ctx);
    if (r) records.push(r);
  }
  resolved.records = records;

  let metrics: GcConfig['metrics'];
  const textfileRaw = raw.metrics?.textfile;
  const intervalRaw = raw.metrics?.interval;
  if (textfileRaw === undefined && intervalRaw !== undefined) {
    await attempt(sink, () => {
      throw new ConfigError('metrics.interval', 'has no effect without metrics.textfile', file);
    });
  }
  if (textfileRaw !== undefined) {
    metrics = await attempt(sink, async () => {
      const textfile = resolvePath(textfileRaw, 'metrics.textfile', ctx);
      // node_exporter's textfile collector reads `*.prom` only: anything else would never be seen.
      if (!textfile.endsWith('.prom') || textfile.endsWith('/.prom')) {
        throw new ConfigError(
          'metrics.textfile',
          `'${textfileRaw}' must name a file ending in .prom (the textfile collector reads only *.prom)`,
          file,
        );
      }
      await checkDir(
        ctx,
        'metrics.textfile',
        path.dirname(textfile),
        'the metrics file cannot be written (each real sweep reports io_error) until it exists',
      );
      // The cadence the shipped alert rules compare against (docs/metrics.md): with the timer,
      // whose OnCalendar= murmur-gc cannot see, this is how a changed cadence reaches them.
      if (intervalRaw === undefined) return { textfile };
      return { textfile, intervalSecs: parseDurationValue(intervalRaw, 'metrics.interval', file) };
    });
  }

  const auditRetain =
    raw.audit?.retain === undefined
      ? { ...DEFAULT_AUDIT_RETAIN }
      : await attempt(sink, () => parseRetainBlock(raw.audit?.retain, 'audit.retain', 'trace', file));
  const maxDelete = raw.max_delete ? parseMaxDelete(raw.max_delete, file, sink) : undefined;

  if (sink.errors.length > 0 || home === undefined || randomDelaySecs === undefined || liveGraceSecs === undefined)
    return done(file, undefined);
  return done(file, {
    home,
    ...(forceHome ? { forceHome: true } : {}),
    userHomes,
    homeKey: opts.home !== undefined ? '--home' : 'home',
    schedule,
    runOnStart: raw.run_on_start ?? true,
    randomDelaySecs,
    liveGraceSecs,
    ...(maxDelete ? { maxDelete } : {}),
    sessions,
    records,
    ...definedOnly({ keepFree }),
    ...(quarantineSecs !== undefined ? { quarantine: { windowSecs: quarantineSecs } } : {}),
    audit: { retain: auditRetain },
    log: { level: raw.log?.level ?? 'info' },
    ...(metrics ? { metrics } : {}),
    source: file,
  });
}

/**
 * The configuration a read-only view (`status`, `history`, `quarantine ls`) falls back to when the
 * real one is invalid: the home the check resolved (else `--home`, else `$HOME/.murmur`), the
 * sessions roots and record stores of the entries that resolved, the built-in defaults otherwise.
 * Nothing may act on it (no sweep, restore or protect loads it); it says where to look.
 */
export function viewFallbackConfig(check: ConfigCheck, opts: LoadConfigOptions): GcConfig {
  const home =
    check.home ??
    (opts.home !== undefined && opts.home !== ''
      ? path.resolve(opts.cwd ?? process.cwd(), opts.home)
      : path.join(homeFromEnv(opts.env, 'home', check.source), '.murmur'));
  return {
    home,
    schedule: DEFAULT_SCHEDULE,
    runOnStart: true,
    randomDelaySecs: 0,
    liveGraceSecs: DEFAULT_LIVE_GRACE_SECS,
    sessions: check.resolved.sessions,
    records: check.resolved.records,
    audit: { retain: { ...DEFAULT_AUDIT_RETAIN } },
    log: { level: 'info' },
    source: check.source,
  };
}

/** $HOME as set (when it is absolute) and its real path: the homes a murmur home may not be (src/config/home.ts). */
async function userHomesOf(env: Record<string, string | undefined>): Promise<string[]> {
  const u = env['HOME'];
  if (u === undefined || u === '' || !path.isAbsolute(u)) return [];
  const lexical = path.resolve(u);
  const real = await realpath(lexical).catch(() => lexical);
  return real === lexical ? [lexical] : [lexical, real];
}

/**
 * The home rule (src/config/home.ts): a home that is a system path or not recognisably a murmur
 * home is a `config_invalid` error at its key (`--home`, or `home` in `file`, or the default home,
 * which names no file) — unless forced, which is a `config_destructive` warning there instead.
 */
async function guardHome(
  home: string,
  key: 'home' | '--home',
  file: string | undefined,
  force: boolean,
  userHomes: readonly string[],
  sink: Sink,
): Promise<void> {
  const why = await judgeHome(home, userHomes).catch(() => undefined);
  if (why === undefined) return;
  if (force) {
    sink.warnings.push({
      code: Codes.configDestructive,
      file,
      keyPath: key,
      message: `'${home}' ${why}; it is used anyway (--force-home / force_home): every sweep makes it private and creates gc/ in it`,
    });
    return;
  }
  sink.errors.push(new ConfigError(key, refusedHomeMessage(home, why, key), file));
}

/** The warnings of each configuration `loadConfig` returned (see `configWarnings`). */
const loadedWarnings = new WeakMap<GcConfig, readonly ConfigWarning[]>();
const loadedSources = new WeakMap<GcConfig, ReadonlyMap<string, PolicySource>>();

/**
 * Resolves the configuration; the first error (in line order) is thrown, its hint saying how many
 * more there are and that `murmur-gc config check` lists every one.
 */
export async function loadConfig(opts: LoadConfigOptions): Promise<GcConfig> {
  const check = await checkConfig(opts);
  const first = check.errors[0];
  if (check.fatal > 0 && first) {
    if (check.fatal > 1)
      first.hint = `${check.fatal - 1} more error${check.fatal === 2 ? '' : 's'}: \`murmur-gc config check\` lists every one`;
    throw first;
  }
  if (!check.config) throw new ConfigError('', 'invalid configuration', check.source);
  loadedWarnings.set(check.config, check.warnings);
  loadedSources.set(check.config, check.sources);
  return check.config;
}

/**
 * The warnings found when `config` was loaded by `loadConfig` that a sweep should say every time
 * it runs with it: a configured path that does not exist (a mistyped root sweeps nothing, and
 * only `config check` would otherwise tell). A missing home is left out: the sweep's own report
 * says so ("nothing to sweep"), and a fresh machine has none yet.
 */
export function sweepConfigWarnings(config: GcConfig): readonly ConfigWarning[] {
  return (loadedWarnings.get(config) ?? []).filter(
    (w) => w.code === Codes.configPathMissing && w.keyPath !== 'home' && w.keyPath !== '--home',
  );
}

/** Where the retain block of the entry `origin` (`sessions[2]`, `records[0]`) of a loaded `config` came from (`config check`'s words); undefined when not known. */
export function policySourceOf(config: GcConfig, origin: string): PolicySource | undefined {
  return loadedSources.get(config)?.get(origin);
}

/** Logs `sweepConfigWarnings(config)`, one warning line each (code, file:line, key path). */
export function logConfigWarnings(log: Pick<Logger, 'warn'>, config: GcConfig): void {
  for (const w of sweepConfigWarnings(config)) {
    const at =
      w.file === undefined
        ? undefined
        : `${w.file}${w.line !== undefined ? `:${w.line}${w.column !== undefined ? `:${w.column}` : ''}` : ''}`;
    log.warn(
      { code: w.code, key: w.keyPath, ...definedOnly({ config: at }) },
      `${at !== undefined ? `${at}: ` : ''}${w.keyPath}: ${w.message}`,
    );
  }
}
