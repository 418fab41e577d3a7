// Retain blocks and durations, parsed on exactly the runtime's terms (murmur-artifact
// `runtime_manifest.rs`: `parse_retain_block`, `parse_duration_secs`, `scalar_text`; docs/design.md §R2).
//
// Invariants:
// - Pure: no fs, no clock, no environment.
// - Absent (`undefined`) means no policy; a block that is present must declare at least one key.
//   YAML `retain:` with nothing under it (null) and `retain: {}` are refused alike.
// - Keys are checked in the block's own order and the first problem is reported, as the runtime
//   does. Field paths: the block path for block-level problems (not a mapping, empty, unknown
//   key), `<block>.<key>` for a bad value.
// - Every message is the runtime's, word for word. Where the runtime quotes a value with Rust's
//   `{:?}` (a serde_yaml `Value`), `rustDebug` renders the same text (`Number(5)`, `Bool(true)`,
//   `Sequence [..]`, `String("..")`, `Null`, `Mapping {..}`).
//
// Values come from YAML parsed by `parseConfigYaml` (src/config/parse.ts), which keeps the
// integer/float distinction serde_yaml keeps: a YAML integer is a `bigint`, a YAML float is a
// `YamlFloat`. A plain JS `number` (a programmatic caller) counts as an integer when it is one.
//
// Decision (JS numbers): the runtime holds durations in u64 seconds and refuses only what
// overflows u64 (e.g. '18446744073709551616', with its overflow message). We hold them in a JS
// number: a duration above 2^53 - 1 seconds (about 285 million years) is accepted and clamped to
// Number.MAX_SAFE_INTEGER — every decision is the same (the age floor saturates at the epoch
// either way), and the block's other key is still enforced.
//
// YAML values come from src/config/yaml-serde.ts: scalars resolved as serde_yaml 0.9 resolves
// them (docs/config.md, "Integer forms", has the table).
import { ConfigError } from '../errors.js';
import type { RecordRetain, SessionRetain } from './types.js';

/** A value carrying a tag other than the core schema's (`!custom {…}`): serde_yaml's `Value::Tagged`. */
export class YamlTagged {
  constructor(
    readonly tag: string,
    readonly value: unknown,
  ) {}
}

/** A YAML float (`5.0`, `1e3`, `.inf`), kept distinct from a YAML integer as serde_yaml does. */
export class YamlFloat {
  constructor(readonly value: number) {}
}

/** The accepted spelling of every duration, stated once (runtime: `DURATION_ACCEPTED_FORM`). */
export const DURATION_ACCEPTED_FORM = 'must be a duration: an integer, optionally suffixed s/m/h/d';

export const RETAIN_EMPTY_BLOCK =
  'must declare at least one key — omit the block entirely to keep everything, which is what no policy means';
export const COUNT_NOT_WHOLE = 'must be a whole number of at least 1';
export const COUNT_ZERO =
  'must be at least 1 — a limit of zero would delete what retention exists to keep; remove the key to leave it unbounded';
export const DURATION_ZERO = `must be greater than zero; ${DURATION_ACCEPTED_FORM}`;

/** Keys each block accepts, in the order an error lists them. */
export const TRACE_RETAIN_KEYS = ['max_sessions', 'max_age'] as const;
export const CONTEXT_RETAIN_KEYS = ['max_messages', 'max_age'] as const;

/** Thrown by `parseDurationSecs`; `message` is the runtime's sentence. */
export class DurationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DurationError';
  }
}

const U32_MAX = 4294967295n;
const U64_MAX = 18446744073709551615n;
const MAX_SECS = BigInt(Number.MAX_SAFE_INTEGER);
const SUFFIX_SECS: Record<string, bigint> = { s: 1n, m: 60n, h: 3600n, d: 86400n };

// Rust's `char::is_whitespace` (Unicode White_Space), which `str::trim` strips. Not JS's `trim`:
// that also strips U+FEFF and keeps U+0085.
const RUST_WS = '\\u0009-\\u000D\\u0020\\u0085\\u00A0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000';
const RUST_TRIM = new RegExp(`^[${RUST_WS}]+|[${RUST_WS}]+$`, 'gu');

/**
 * `90`, `30s`, `15m`, `1h`, `14d` → whole seconds. Trims surrounding whitespace; one optional
 * lowercase suffix; the rest must be ASCII digits. Zero is returned as 0 (callers that need a
 * positive duration refuse it with `DURATION_ZERO`).
 * @throws DurationError "'<input>' must be a duration: …" or "'<input>' overflows a 64-bit second count"
 */
export function parseDurationSecs(input: string): number {
  const trimmed = input.replace(RUST_TRIM, '');
  const last = trimmed.slice(-1);
  const suffix = SUFFIX_SECS[last];
  const digits = suffix === undefined ? trimmed : trimmed.slice(0, -1);
  const multiplier = suffix ?? 1n;
  if (digits.length === 0 || !/^[0-9]+$/.test(digits)) {
    throw new DurationError(`'${input}' ${DURATION_ACCEPTED_FORM}`);
  }
  const secs = BigInt(digits) * multiplier;
  if (secs > U64_MAX) throw new DurationError(`'${input}' overflows a 64-bit second count`);
  return Number(secs > MAX_SECS ? MAX_SECS : secs);
}

/**
 * A YAML value as the text the duration parser reads (runtime `scalar_text`): a string as-is, a
 * number as serde_yaml displays it; `undefined` for anything else (null, bool, list, mapping).
 */
export function scalarText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') return Number.isSafeInteger(value) ? String(value) : rustFloat(value);
  if (value instanceof YamlFloat) return rustFloat(value.value);
  return undefined;
}

/**
 * A duration-valued config key (`max_age`, `live_grace`, …): string or number, the runtime's
 * grammar, errors naming `fieldPath`. Zero is refused unless `allowZero`.
 */
export function parseDurationValue(
  value: unknown,
  fieldPath: string,
  file: string | undefined,
  options: { allowZero?: boolean } = {},
): number {
  const text = scalarText(value);
  if (text === undefined) {
    throw new ConfigError(fieldPath, `'${rustDebug(value)}' ${DURATION_ACCEPTED_FORM}`, file);
  }
  let secs: number;
  try {
    secs = parseDurationSecs(text);
  } catch (err) {
    if (err instanceof DurationError) throw new ConfigError(fieldPath, err.message, file);
    throw err;
  }
  if (secs === 0 && options.allowZero !== true) throw new ConfigError(fieldPath, DURATION_ZERO, file);
  return secs;
}

/** A count key (`max_sessions`, `max_messages`): a YAML integer in 1..=u32::MAX. */
function parseCount(value: unknown, fieldPath: string, file: string | undefined): number {
  let n: bigint | undefined;
  if (typeof value === 'bigint') n = value;
  else if (typeof value === 'number' && Number.isSafeInteger(value)) n = BigInt(value);
  // serde_yaml's `as_u64` then `u32::try_from`: negatives, floats, strings, > u32::MAX all fail.
  if (n === undefined || n < 0n || n > U32_MAX) throw new ConfigError(fieldPath, COUNT_NOT_WHOLE, file);
  if (n === 0n) throw new ConfigError(fieldPath, COUNT_ZERO, file);
  return Number(n);
}

/** A YAML mapping as read (a plain object); sequences, scalars and null are not. */
export function isMapping(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * One `retain:` block. `value` undefined (key absent) → undefined: no policy. Errors are
 * `ConfigError(<field path>, <runtime message>, file)`.
 */
export function parseRetainBlock(
  value: unknown,
  blockPath: string,
  kind: 'trace',
  file?: string,
): SessionRetain | undefined;
export function parseRetainBlock(
  value: unknown,
  blockPath: string,
  kind: 'context',
  file?: string,
): RecordRetain | undefined;
export function parseRetainBlock(
  value: unknown,
  blockPath: string,
  kind: 'trace' | 'context',
  file?: string,
): SessionRetain | RecordRetain | undefined;
export function parseRetainBlock(
  value: unknown,
  blockPath: string,
  kind: 'trace' | 'context',
  file?: string,
): SessionRetain | RecordRetain | undefined {
  if (value === undefined) return undefined;
  const accepted = kind === 'trace' ? TRACE_RETAIN_KEYS : CONTEXT_RETAIN_KEYS;
  const countKey = accepted[0];
  // `retain:` with nothing under it parses as null and means exactly `retain: {}`.
  if (value === null) throw new ConfigError(blockPath, RETAIN_EMPTY_BLOCK, file);
  if (!isMapping(value)) {
    throw new ConfigError(
      blockPath,
      `must be a block of keys (${accepted.join(', ')}), got '${rustDebug(value)}'`,
      file,
    );
  }
  const entries = Object.entries(value);
  if (entries.length === 0) throw new ConfigError(blockPath, RETAIN_EMPTY_BLOCK, file);

  let count: number | undefined;
  let maxAgeSecs: number | undefined;
  for (const [key, v] of entries) {
    const field = `${blockPath}.${key}`;
    if (key === countKey) {
      count = parseCount(v, field, file);
    } else if (key === 'max_age') {
      maxAgeSecs = parseDurationValue(v, field, file);
    } else {
      throw new ConfigError(blockPath, `unknown key '${key}'; expected: ${accepted.join(', ')}`, file);
    }
  }
  if (kind === 'trace') {
    const out: SessionRetain = {};
    if (count !== undefined) out.maxSessions = count;
    if (maxAgeSecs !== undefined) out.maxAgeSecs = maxAgeSecs;
    return out;
  }
  const out: RecordRetain = {};
  if (count !== undefined) out.maxMessages = count;
  if (maxAgeSecs !== undefined) out.maxAgeSecs = maxAgeSecs;
  return out;
}

// ── Rust renderings, for messages that quote a value ─────────────────────────────────────────

/**
 * An f64 as Rust's `ryu` prints it (serde_yaml's `Number` Display): `5.0`, `1.5`, `1000.0`,
 * `1e20`, `1.5e-7`, `.inf`, `-.inf`, `.nan`.
 */
export function rustFloat(f: number): string {
  if (Number.isNaN(f)) return '.nan';
  if (f === Infinity) return '.inf';
  if (f === -Infinity) return '-.inf';
  const sign = f < 0 || Object.is(f, -0) ? '-' : '';
  const abs = Math.abs(f);
  if (abs === 0) return `${sign}0.0`;
  // Shortest round-trip digits, as ryu computes them: "d.ddde±x".
  const [mantissa = '', expText = '0'] = abs.toExponential().split('e');
  const digits = mantissa.replace('.', '');
  const length = digits.length;
  const kk = Number(expText) + 1; // 10^(kk-1) <= abs < 10^kk
  const k = kk - length; // abs = digits × 10^k
  let body: string;
  if (k >= 0 && kk <= 16) body = `${digits}${'0'.repeat(k)}.0`;
  else if (kk > 0 && kk <= 16) body = `${digits.slice(0, kk)}.${digits.slice(kk)}`;
  else if (kk > -5 && kk <= 0) body = `0.${'0'.repeat(-kk)}${digits}`;
  else if (length === 1) body = `${digits}e${kk - 1}`;
  else body = `${digits.slice(0, 1)}.${digits.slice(1)}e${kk - 1}`;
  return sign + body;
}

// What Rust's `{:?}` of a str writes as `\u{..}`: a grapheme extender, or a character its
// `is_printable` refuses (general categories C* and Z*, the space excepted).
const RUST_UNPRINTED = /[\p{C}\p{Z}\p{Grapheme_Extend}]/u;

/**
 * Rust's `{:?}` of a str: quoted, with `\"`, `\\`, `\n`, `\r`, `\t`, `\0` escapes, and `\u{..}`
 * for every other character Rust does not print as is (`RUST_UNPRINTED`).
 */
export function rustDebugString(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0) ?? 0;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (cp === 0) out += '\\0';
    else if (ch !== ' ' && RUST_UNPRINTED.test(ch)) out += `\\u{${cp.toString(16)}}`;
    else out += ch;
  }
  return `${out}"`;
}

function rustNumber(value: bigint | number | YamlFloat): string {
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof YamlFloat) return rustFloat(value.value);
  return Number.isSafeInteger(value) ? String(value) : rustFloat(value);
}

/** serde_yaml 0.9's `Debug` for a `Value`, compact form (`{:?}`). */
export function rustDebug(value: unknown): string {
  if (value === null || value === undefined) return 'Null';
  if (value instanceof YamlTagged)
    return `TaggedValue { tag: !${value.tag.replace(/^!/, '')}, value: ${rustDebug(value.value)} }`;
  if (typeof value === 'boolean') return `Bool(${value})`;
  if (typeof value === 'bigint' || typeof value === 'number' || value instanceof YamlFloat) {
    return `Number(${rustNumber(value)})`;
  }
  if (typeof value === 'string') return `String(${rustDebugString(value)})`;
  if (Array.isArray(value)) return `Sequence [${value.map((v) => rustDebug(v)).join(', ')}]`;
  if (isMapping(value)) {
    // serde_yaml's `Mapping` Debug prints a string key quoted (JS keys are always strings).
    const entries = Object.entries(value).map(([k, v]) => `${rustDebugString(k)}: ${rustDebug(v)}`);
    return `Mapping {${entries.join(', ')}}`;
  }
  // Not produced by YAML parsing (e.g. a `!!binary` Buffer): a neutral, content-free tag.
  return Object.prototype.toString.call(value);
}
