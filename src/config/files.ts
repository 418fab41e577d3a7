// The only filesystem access the configuration loader makes: reading small text files (the
// config, `murmur.yaml` manifests) and expanding `sessions[].root` globs.
//
// Guarantees:
// - A file is stat'ed before it is opened and only a regular file is opened, with O_NONBLOCK, and
//   `fstat` must then show the same dev/ino: a FIFO, socket or device is never read (and never
//   blocks us even if swapped in between). With `followSymlinks: false` (manifests inside a
//   capsule-writable workdir) a symlink is refused and the open uses O_NOFOLLOW.
// - Files over 1 MiB are refused with `file_too_large` (checked on stat and again while reading,
//   so at most 1 MiB + 1 byte is ever held). Content must be UTF-8.
// - Missing files (ENOENT, ENOTDIR) are `undefined`, never an error.
// - `expandGlob` is lexical: it returns the paths it built, never realpaths, so a caller that
//   acts on them still has to `lstat` (a sessions root may be a planted symlink).
// - Errors carry a stable code (`not_regular`, `symlink`, `file_too_large`, `io_error`, `changed_since_scan`) and
//   the path; messages never contain file content.
import { constants as C, promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { Codes, GcError, describeError, errnoCode } from '../errors.js';

/** 1 MiB: no configuration or manifest is anywhere near this. */
export const MAX_CONFIG_FILE_BYTES = 1 << 20;

/** A file the loader could not read; `reason` is the message without the path. */
export class ConfigFileError extends GcError {
  readonly path: string;
  readonly reason: string;
  constructor(code: string, filePath: string, reason: string, cause?: unknown) {
    super(code, `${filePath}: ${reason}`, cause === undefined ? {} : { cause });
    this.name = 'ConfigFileError';
    this.path = filePath;
    this.reason = reason;
  }
}

export interface ReadTextOptions {
  /** Follow a symlink at `path` itself (default true). false: refuse it (code `symlink`). */
  followSymlinks?: boolean;
  /** Size limit in bytes (default 1 MiB). */
  maxBytes?: number;
}

function isMissing(err: unknown): boolean {
  const code = errnoCode(err);
  return code === 'ENOENT' || code === 'ENOTDIR';
}

function kindOf(st: {
  isDirectory(): boolean;
  isFIFO(): boolean;
  isSocket(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
  isSymbolicLink(): boolean;
}): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  if (st.isSymbolicLink()) return 'a symbolic link';
  return 'not a regular file';
}

/**
 * The text of a small regular file, or `undefined` when it does not exist.
 * @throws ConfigFileError for a non-regular file, a symlink (when not followed), a file over the
 *   size limit, invalid UTF-8, or any other I/O error.
 */
export async function readTextFileIfExists(
  filePath: string,
  options: ReadTextOptions = {},
): Promise<string | undefined> {
  const follow = options.followSymlinks ?? true;
  const maxBytes = options.maxBytes ?? MAX_CONFIG_FILE_BYTES;
  let st;
  try {
    st = follow ? await fsp.stat(filePath, { bigint: true }) : await fsp.lstat(filePath, { bigint: true });
  } catch (err) {
    if (isMissing(err)) return undefined;
    throw new ConfigFileError(Codes.ioError, filePath, `could not be read (${describeError(err)})`, err);
  }
  if (st.isSymbolicLink()) {
    throw new ConfigFileError(Codes.symlink, filePath, 'is a symbolic link, which is not followed here');
  }
  if (!st.isFile()) {
    throw new ConfigFileError(Codes.notRegular, filePath, `is not a regular file (${kindOf(st)})`);
  }
  if (st.size > BigInt(maxBytes)) {
    throw new ConfigFileError(
      Codes.fileTooLarge,
      filePath,
      `is larger than ${maxBytes} bytes (${st.size} bytes; not read)`,
    );
  }

  const flags = C.O_RDONLY | C.O_NONBLOCK | (follow ? 0 : C.O_NOFOLLOW);
  let fh;
  try {
    fh = await fsp.open(filePath, flags);
  } catch (err) {
    if (isMissing(err)) return undefined;
    if (errnoCode(err) === 'ELOOP') {
      throw new ConfigFileError(Codes.symlink, filePath, 'is a symbolic link, which is not followed here', err);
    }
    throw new ConfigFileError(Codes.ioError, filePath, `could not be opened (${describeError(err)})`, err);
  }
  await using _ = fh;
  try {
    const fst = await fh.stat({ bigint: true });
    if (!fst.isFile() || fst.dev !== st.dev || fst.ino !== st.ino) {
      throw new ConfigFileError(Codes.changedSinceScan, filePath, 'changed while it was being opened');
    }
    // Read at most maxBytes + 1: a file that grew past the limit since the stat is still refused.
    const buf = Buffer.alloc(maxBytes + 1);
    let total = 0;
    for (;;) {
      const { bytesRead } = await fh.read(buf, total, buf.length - total, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > maxBytes) {
        throw new ConfigFileError(
          Codes.fileTooLarge,
          filePath,
          `is larger than ${maxBytes} bytes (it grew while read; not read)`,
        );
      }
    }
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(buf.subarray(0, total));
    } catch (err) {
      throw new ConfigFileError(Codes.ioError, filePath, 'is not valid UTF-8', err);
    }
  } catch (err) {
    if (err instanceof ConfigFileError) throw err;
    throw new ConfigFileError(Codes.ioError, filePath, `could not be read (${describeError(err)})`, err);
  }
}

// ── globs ──────────────────────────────────────────────────────────────────────────────────

/** Index of the `]` closing a class opened at `open`, or -1 (then the `[` is literal). */
function classEnd(chars: readonly string[], open: number): number {
  let j = open + 1;
  if (chars[j] === '!' || chars[j] === '^') j++;
  if (chars[j] === ']') j++; // a `]` first in the class is literal
  while (j < chars.length && chars[j] !== ']') j++;
  return j < chars.length ? j : -1;
}

/** True when a path segment holds a wildcard: `*`, `?`, or a `[...]` class that is closed. */
export function segmentHasGlob(segment: string): boolean {
  if (segment.includes('*') || segment.includes('?')) return true;
  const chars = [...segment];
  return chars.some((c, i) => c === '[' && classEnd(chars, i) !== -1);
}

/** True when any segment of the pattern holds a wildcard. */
export function hasGlob(pattern: string): boolean {
  return pattern.split('/').some(segmentHasGlob);
}

const REGEX_SPECIAL = /[\\^$.*+?()[\]{}|/]/;

/**
 * One pattern segment as an anchored RegExp: `*` any run, `?` one character, `[abc]`, `[a-z]`,
 * `[!x]` / `[^x]` a class (a `]` right after the opening bracket is literal). No `**`, no escapes.
 */
export function segmentToRegExp(segment: string): RegExp {
  let re = '';
  const chars = [...segment];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i] ?? '';
    if (c === '*') {
      re += '.*';
    } else if (c === '?') {
      re += '.';
    } else if (c === '[') {
      const j = classEnd(chars, i);
      if (j === -1) {
        re += '\\[';
        continue;
      }
      let body = chars.slice(i + 1, j);
      let negate = false;
      if (body[0] === '!' || body[0] === '^') {
        negate = true;
        body = body.slice(1);
      }
      const cls = body.map((b) => (b === '\\' || b === ']' || b === '[' || b === '^' ? `\\${b}` : b)).join('');
      re += `[${negate ? '^' : ''}${cls}]`;
      i = j;
    } else {
      re += REGEX_SPECIAL.test(c) ? `\\${c}` : c;
    }
  }
  return new RegExp(`^${re}$`, 'su');
}

async function readDirNames(dir: string): Promise<string[]> {
  try {
    return await fsp.readdir(dir);
  } catch {
    // Missing, not a directory, or unreadable: it contributes no matches (the sweep reports
    // roots it cannot reach; a glob that reaches nothing simply names nothing).
    return [];
  }
}

async function exists(p: string): Promise<boolean> {
  try {
    await fsp.lstat(p);
    return true;
  } catch {
    return false;
  }
}

/**
 * Expands `*`, `?` and `[...]` within path segments (no `**`). A wildcard never matches a name
 * starting with '.' unless that pattern segment itself starts with '.'. Returns sorted, absolute,
 * normalized paths of entries that exist (lstat: a dangling symlink is an entry). A pattern with
 * no wildcard is returned as-is (normalized) whether or not it exists — the sweep reports missing
 * roots itself. A relative pattern is resolved against the process's working directory.
 */
export async function expandGlob(pattern: string): Promise<string[]> {
  const absolute = path.resolve(pattern);
  if (!hasGlob(absolute)) return [absolute];
  const segments = absolute.split('/').filter((s) => s.length > 0);
  let bases: string[] = ['/'];
  for (const segment of segments) {
    if (!segmentHasGlob(segment)) {
      bases = bases.map((b) => path.join(b, segment));
      continue;
    }
    const re = segmentToRegExp(segment);
    const dotOk = segment.startsWith('.');
    const next: string[] = [];
    for (const base of bases) {
      for (const name of await readDirNames(base)) {
        if (name.startsWith('.') && !dotOk) continue;
        if (re.test(name)) next.push(path.join(base, name));
      }
    }
    bases = next;
    if (bases.length === 0) return [];
  }
  const found: string[] = [];
  for (const p of new Set(bases)) {
    if (await exists(p)) found.push(p);
  }
  return found.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** What is at `p` (following links, as the loader's reads do): missing only on ENOENT/ENOTDIR. */
export async function pathKind(p: string): Promise<'directory' | 'file' | 'other' | 'missing' | 'unreadable'> {
  try {
    const st = await fsp.stat(p);
    return st.isDirectory() ? 'directory' : st.isFile() ? 'file' : 'other';
  } catch (err) {
    const code = errnoCode(err);
    return code === 'ENOENT' || code === 'ENOTDIR' ? 'missing' : 'unreadable';
  }
}
