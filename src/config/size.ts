// Byte sizes for disk budgets (`max_bytes`, `keep_free`), parsed strictly.
//
// Grammar (decided here, journald's spelling and base): a whole number of bytes, optionally
// followed by exactly one of K, M, G, T (powers of 1024; uppercase only, no `B`, no spaces, no
// fraction): `500M`, `10G`, `1048576`. A YAML integer is a byte count. `keep_free` also takes a
// whole percentage of the filesystem's size, `1%`…`99%`, alone or as the `free` of a block that also
// bounds what it takes of one store in one sweep (`per_sweep`). Zero is refused (a budget of zero would
// delete everything it may); values above 2^53 − 1 bytes are refused.
// Invariants: pure (no fs, no clock); every error is a ConfigError naming the key path.
import { ConfigError } from '../errors.js';
import { YamlFloat, rustDebug } from './retain.js';
import type { KeepFree } from './types.js';

export const SIZE_ACCEPTED_FORM =
  'must be a size: a whole number of bytes, optionally suffixed K, M, G or T (powers of 1024), e.g. 500M or 10G';
export const KEEP_FREE_ACCEPTED_FORM = `${SIZE_ACCEPTED_FORM}; or a whole percentage of the filesystem from 1% to 99%`;
export const SIZE_ZERO = 'must be greater than zero (a budget of zero would delete everything it may)';

const UNIT: Record<string, bigint> = { '': 1n, K: 1024n, M: 1024n ** 2n, G: 1024n ** 3n, T: 1024n ** 4n };
const MAX = BigInt(Number.MAX_SAFE_INTEGER);

function sizeText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  return undefined;
}

/** A size key (`max_bytes`): bytes, > 0. */
export function parseSizeValue(value: unknown, fieldPath: string, file: string | undefined): number {
  const text = value instanceof YamlFloat ? undefined : sizeText(value);
  const quoted = typeof value === 'string' ? `'${value}'` : `'${rustDebug(value)}'`;
  const m = text === undefined ? null : /^([0-9]+)([KMGT]?)$/.exec(text);
  if (!m) throw new ConfigError(fieldPath, `${quoted} ${SIZE_ACCEPTED_FORM}`, file);
  const bytes = BigInt(m[1] ?? '0') * (UNIT[m[2] ?? ''] ?? 1n);
  if (bytes === 0n) throw new ConfigError(fieldPath, SIZE_ZERO, file);
  if (bytes > MAX) throw new ConfigError(fieldPath, `${quoted} is too large (more than 2^53 - 1 bytes)`, file);
  return Number(bytes);
}

/** The share of a store's items keep_free takes at most in one sweep, unless `per_sweep` says otherwise. */
export const KEEP_FREE_PER_SWEEP_DEFAULT = 50;
const KEEP_FREE_KEYS = ['free', 'per_sweep'];

/**
 * `keep_free`: a size as above or `N%` (N in 1..=99) — or a block `{ free: <that>, per_sweep: N% }`,
 * `per_sweep` (1%..100%, default 50%) the most keep_free takes of any one store's items in one
 * sweep (at least one item).
 */
export function parseKeepFree(value: unknown, fieldPath: string, file: string | undefined): KeepFree {
  if (typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof YamlFloat)) {
    const b = value as Record<string, unknown>;
    for (const k of Object.keys(b))
      if (!KEEP_FREE_KEYS.includes(k))
        throw new ConfigError(`${fieldPath}.${k}`, `unknown key '${k}'; expected: ${KEEP_FREE_KEYS.join(', ')}`, file);
    if (b['free'] === undefined)
      throw new ConfigError(fieldPath, 'must set free (e.g. keep_free: { free: 10%, per_sweep: 25% })', file);
    const free = parseFreeValue(b['free'], `${fieldPath}.free`, file);
    const ps = b['per_sweep'];
    if (ps === undefined) return { ...free, perSweepPercent: KEEP_FREE_PER_SWEEP_DEFAULT };
    const m = typeof ps === 'string' ? /^([0-9]{1,3})%$/.exec(ps) : null;
    const n = m ? Number(m[1]) : NaN;
    if (!(n >= 1 && n <= 100))
      throw new ConfigError(
        `${fieldPath}.per_sweep`,
        `'${typeof ps === 'string' ? ps : rustDebug(ps)}' must be a whole percentage from 1% to 100% (the most keep_free takes of one store's items in one sweep)`,
        file,
      );
    return { ...free, perSweepPercent: n };
  }
  return { ...parseFreeValue(value, fieldPath, file), perSweepPercent: KEEP_FREE_PER_SWEEP_DEFAULT };
}

function parseFreeValue(
  value: unknown,
  fieldPath: string,
  file: string | undefined,
): { kind: 'bytes'; bytes: number } | { kind: 'percent'; percent: number } {
  if (typeof value === 'string' && value.endsWith('%')) {
    const m = /^([0-9]{1,2})%$/.exec(value);
    const n = m ? Number(m[1]) : NaN;
    if (!(n >= 1 && n <= 99)) throw new ConfigError(fieldPath, `'${value}' ${KEEP_FREE_ACCEPTED_FORM}`, file);
    return { kind: 'percent', percent: n };
  }
  try {
    return { kind: 'bytes', bytes: parseSizeValue(value, fieldPath, file) };
  } catch (err) {
    if (err instanceof ConfigError && err.message.includes(SIZE_ACCEPTED_FORM)) {
      const quoted = typeof value === 'string' ? `'${value}'` : `'${rustDebug(value)}'`;
      throw new ConfigError(fieldPath, `${quoted} ${KEEP_FREE_ACCEPTED_FORM}`, file);
    }
    throw err;
  }
}

/** The byte count `keep_free` asks for on a filesystem of `totalBytes`. */
export function keepFreeBytes(
  k: { kind: 'bytes'; bytes: number } | { kind: 'percent'; percent: number },
  totalBytes: number,
): number {
  return k.kind === 'bytes' ? k.bytes : Math.ceil((totalBytes * k.percent) / 100);
}

/**
 * The inodes `keep_free` asks to stay free on a filesystem of `totalInodes`: the same share of its
 * inodes as of its bytes (0 where the filesystem has no fixed number of inodes).
 */
export function keepFreeInodes(k: KeepFree, totalBytes: number, totalInodes: number): number {
  if (totalInodes <= 0 || totalBytes <= 0) return 0;
  const share = k.kind === 'percent' ? k.percent / 100 : Math.min(1, k.bytes / totalBytes);
  return Math.ceil(totalInodes * share);
}
