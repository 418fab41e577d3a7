// Reading murmur-gc's audit traces (`<home>/gc/ses_*/trace.jsonl`) for `history`.
// Guarantees: read-only; descriptor-relative, never following links; each trace is streamed
// (src/runtime/jsonl.ts forwardLines, small buffer) up to READ_CAP bytes; only the event types
// history needs are parsed; a torn or garbage line is counted and skipped; an unreadable
// session is reported as a problem and the rest is still read. Sessions minted before
// `sinceMs` are not opened at all (their id carries their mint time).
import { Codes, describeError, errnoCode } from '../errors.js';
import { forwardLines } from '../runtime/jsonl.js';
import { GC_DIR_NAME } from '../gchome/paths.js';
import { Dir, lstatPath, readSmallFile } from '../fsx/safe-fs.js';
import { DETAILS_FILE, WHERE_FILE, type AuditDetails } from '../gchome/audit.js';
import { idTimestampMs, isSessionName } from '../runtime/ids.js';
import { applyDetails, summarizeAuditTrace, targetMatches, type SweepHistory } from './history.js';

/** Bytes read per trace at most (a gc trace is a few lines; this bounds a damaged one). */
export const READ_CAP = 64 << 20;
const WANTED = new Set([
  'session_start',
  'retention',
  'task_start',
  'task_end',
  'session_end',
  'quarantine_purge',
  'quarantine_restore',
  'protection',
]);
const INTENT_FILE = 'intent.jsonl';

export interface AuditRead {
  auditRoot: string;
  exists: boolean;
  sweeps: SweepHistory[];
  problems: { target: string; code: string; detail: string }[];
  /** With a target: sweep id → the sessions root or record store directory it was in. */
  where: Record<string, string>;
}

/** The event_type of a line, read from its first bytes without parsing the whole line. */
export function peekType(line: Buffer): string | undefined {
  const m = /^\s*\{\s*"event_type"\s*:\s*"([a-z_]+)"/.exec(line.subarray(0, 64).toString('latin1'));
  return m?.[1];
}

export async function readAuditHistory(
  home: string,
  opts: { sinceMs?: number; target?: string } = {},
): Promise<AuditRead> {
  const auditRoot = `${home}/${GC_DIR_NAME}`;
  const out: AuditRead = { auditRoot, exists: false, sweeps: [], problems: [], where: {} };
  if (!(await lstatPath(home))) return out;
  await using h = await Dir.open(home, { followFinal: true });
  const gst = await h.lstat(GC_DIR_NAME);
  if (!gst?.isDirectory()) return out;
  out.exists = true;
  await using gc = await h.openDir(GC_DIR_NAME);
  for (const name of await gc.list()) {
    if (!isSessionName(name)) continue;
    // A sweep's audit session is minted when its first destructive step runs, i.e. after the
    // sweep started: a session minted before `since` started before it too.
    const minted = idTimestampMs(name, 'ses_');
    if (opts.sinceMs !== undefined && minted !== undefined && minted < opts.sinceMs - 24 * 3600_000) continue;
    try {
      const s = await readOne(gc, name);
      if (s) out.sweeps.push(s);
      const t = opts.target;
      if (s && t !== undefined && s.retention.some((r) => r.targets.some((x) => targetMatches(x, t)))) {
        const parent = await whereOf(gc, name, t);
        if (parent !== undefined) out.where[name] = parent;
      }
    } catch (err) {
      const c = errnoCode(err);
      if (c === 'ENOENT') continue; // retained away while we listed
      out.problems.push({ target: gc.display(name), code: Codes.ioError, detail: describeError(err) });
    }
  }
  return out;
}

async function readOne(gc: Dir, name: string): Promise<SweepHistory | undefined> {
  const st = await gc.lstat(name);
  if (!st?.isDirectory()) return undefined;
  await using dir = await gc.openDir(name);
  const tst = await dir.lstat('trace.jsonl');
  if (!tst?.isFile()) return undefined;
  const intentPending = (await dir.lstat(INTENT_FILE))?.isFile() === true;
  const { fh, stat } = await dir.openFile('trace.jsonl');
  await using _ = fh;
  const size = Number(stat.size);
  const to = Math.min(size, READ_CAP);
  const lines: unknown[] = [];
  let invalid = 0;
  for await (const line of forwardLines(fh, { to, bufferSize: 64 * 1024 })) {
    if (line.bytes.length === 0) continue;
    const type = peekType(line.bytes);
    if (type !== undefined && !WANTED.has(type)) continue;
    try {
      lines.push(JSON.parse(line.bytes.toString('utf8')));
    } catch {
      invalid++;
    }
  }
  const h = summarizeAuditTrace(name, lines, {
    invalidLines: invalid,
    intentPending,
    truncatedRead: size > READ_CAP,
  });
  if (h) applyDetails(h, await readDetails(dir));
  return h;
}

/** The sweep's DETAILS_FILE (per-record messages dropped, reconciled sessions); undefined when absent or unreadable. */
async function readDetails(dir: Dir): Promise<AuditDetails | undefined> {
  try {
    if (!(await dir.lstat(DETAILS_FILE))?.isFile()) return undefined;
    const o = JSON.parse((await readSmallFile(dir, DETAILS_FILE, 64 << 20)).toString('utf8')) as unknown;
    return typeof o === 'object' && o !== null ? o : undefined;
  } catch {
    return undefined;
  }
}

/** The directory `target` was in, from the sweep's WHERE_FILE (absent in older sweeps: undefined). */
async function whereOf(gc: Dir, name: string, target: string): Promise<string | undefined> {
  await using dir = await gc.openDir(name);
  try {
    if (!(await dir.lstat(WHERE_FILE))?.isFile()) return undefined;
    const o = JSON.parse((await readSmallFile(dir, WHERE_FILE, 64 << 20)).toString('utf8')) as unknown;
    if (typeof o !== 'object' || o === null) return undefined;
    // `target` may be a unique prefix of the id (history --target): the one key it starts.
    const m = o as Record<string, unknown>;
    const key = target in m ? target : Object.keys(m).find((k) => targetMatches(k, target));
    const v = key === undefined ? undefined : m[key];
    return typeof v === 'string' ? v : undefined;
  } catch {
    return undefined;
  }
}

/**
 * One sweep's WHERE_FILE whole: each target it took → the sessions root or record store directory
 * it was in (empty for sweeps that did not record it, or when it cannot be read).
 */
export async function readSweepWhere(home: string, sweep: string): Promise<Record<string, string>> {
  if (!isSessionName(sweep) || !(await lstatPath(home))) return {};
  await using h = await Dir.open(home, { followFinal: true });
  try {
    if (!(await h.lstat(GC_DIR_NAME))?.isDirectory()) return {};
    await using gc = await h.openDir(GC_DIR_NAME);
    if (!(await gc.lstat(sweep))?.isDirectory()) return {};
    await using dir = await gc.openDir(sweep);
    if (!(await dir.lstat(WHERE_FILE))?.isFile()) return {};
    const o = JSON.parse((await readSmallFile(dir, WHERE_FILE, 64 << 20)).toString('utf8')) as unknown;
    if (typeof o !== 'object' || o === null || Array.isArray(o)) return {};
    return Object.fromEntries(
      Object.entries(o as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === 'string'),
    );
  } catch {
    return {};
  }
}
