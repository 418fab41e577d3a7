// What a `mur run --workdir W` session writes beside its sessions root `W/.murmur/`
// (docs/design.md §R11), read without changing anything: the child workdirs under
// `W/.murmur/children/`, the background-command logs `W/logs/wrk_<id>.log`, and (for `status`)
// the capsule-owned entries of W murmur-gc never manages.
// Guarantees:
// - Read-only. W is opened as configured (it is the anchor, like the sessions root it holds, whose
//   identity it must still have); everything below it is reached descriptor-relatively with
//   O_NOFOLLOW and never across a mount: a symlinked `children/`, `logs/` or child directory is
//   reported (`symlink`) and never entered; a FIFO or device is never opened.
// - A child's sessions — its own `.murmur/ses_*` and those of its grandchildren, at any depth up
//   to MAX_DEPTH — are listed with what liveness needs (trace mtime, `session_end`), read through
//   the trace cache (the same one-pass summary as any session). A tree deeper than that, or one
//   that cannot be read, is marked `unjudged`: nothing can prove it finished. lookInsideChild
//   lists the same sessions of an open child by lstats alone (the look after a child is moved).
// - `completion.json` is read only when lstat calls it a regular file, never past 64 KiB.
import { Codes, GcError, describeError, errnoCode } from '../errors.js';
import { Dir, identityOf, sameIdentity, type BigIntStats, type Identity } from '../fsx/safe-fs.js';
import { allocatedBytes } from '../fsx/remove.js';
import { idTimestampMs } from './ids.js';
import { TRASH_PREFIX, type Debris, type Problem } from './inventory.js';
import { isWorkId } from './trace.js';
import { readTraceSummary } from './trace-scan.js';
import { type TraceCache } from './summary-cache.js';

/** The sessions root of a `--workdir` run is `W/.murmur`; its children live in `W/.murmur/children`. */
export const WORKDIR_ROOT_NAME = '.murmur';
export const CHILDREN_DIR = 'children';
export const LOGS_DIR = 'logs';
export const COMPLETION_FILE = 'completion.json';
/** `completion.json` statuses that say a child ended (docs/design.md §R11). */
export const FINAL_STATUSES: ReadonlySet<string> = new Set(['ok', 'error', 'crashed', 'terminated']);
/** Entries of W that belong to the capsule (docs/design.md §R11): never touched, sized for `status`. */
export const CAPSULE_ENTRIES: readonly string[] = [
  'checkpoints',
  'task.md',
  'murmur.yaml',
  'out',
  '.capsule-home',
  'peer-in',
];
/** Grandchildren deeper than this are not walked: such a child is `unjudged` (kept). */
export const MAX_DEPTH = 16;
const COMPLETION_MAX_BYTES = 64 * 1024;

/** A session somewhere inside a child workdir, with what liveness needs. */
export interface InnerSession {
  /** its `ses_` id (running records are keyed by it) */
  name: string;
  /** the trace's mtime, or the session directory's when it has no readable trace */
  lastWriteMs: number;
  /** set when the session directory holds no `trace.jsonl` entry at all */
  noTrace?: true;
  /** undefined: no readable trace */
  hasSessionEnd: boolean | undefined;
}

export interface ChildEntry {
  name: string;
  kind: 'dir' | 'symlink' | 'other';
  identity: Identity;
  uid: number;
  mtimeMs: number;
  /** `completion.json`'s status when it is a final one */
  completion?: string;
  /** every session inside (grandchildren's too) */
  sessions: InnerSession[];
  /** why nothing can be judged inside (too deep, unreadable); such a child is never removed */
  unjudged?: string;
}

export interface LogEntry {
  name: string;
  workId: string;
  kind: 'file' | 'symlink' | 'other';
  identity: Identity;
  uid: number;
  bytes: number;
}

export interface BesideScan {
  /** W (the sessions root's parent) */
  workdir: string;
  /** `W/.murmur/children` exists as a directory (identity for re-checks) */
  children: { identity: Identity; entries: ChildEntry[] } | undefined;
  /** `W/logs` exists as a directory */
  logs: { identity: Identity; wrk: LogEntry[]; other: { count: number; bytes: number } } | undefined;
  problems: Problem[];
  /** what a killed murmur-gc left in `children/` (trash directories of removals it had started) */
  debris: Debris[];
}

function problemOf(target: string, err: unknown): Problem {
  const c = errnoCode(err);
  const code =
    c === 'ELOOP'
      ? Codes.symlink
      : c === 'EXDEV'
        ? Codes.crossDevice
        : typeof err === 'object' &&
            err !== null &&
            'code' in err &&
            Object.values(Codes).includes(String(err.code) as never)
          ? String(err.code)
          : Codes.ioError;
  return {
    target,
    code,
    detail:
      code === Codes.symlink ? `${target} is a symbolic link; never followed` : `${target}: ${describeError(err)}`,
  };
}

/** Open `parent/name` as a directory when it is one; undefined when absent; problems for links and the rest. */
async function openSub(parent: Dir, name: string, problems: Problem[]): Promise<Dir | undefined> {
  const st = await parent.lstat(name);
  if (!st) return undefined;
  if (st.isSymbolicLink()) {
    problems.push({
      target: parent.display(name),
      code: Codes.symlink,
      detail: `${parent.display(name)} is a symbolic link; never followed`,
    });
    return undefined;
  }
  if (!st.isDirectory()) return undefined;
  try {
    return await parent.openDir(name, identityOf(st));
  } catch (err) {
    problems.push(problemOf(parent.display(name), err));
    return undefined;
  }
}

function kindOf(st: BigIntStats): 'dir' | 'symlink' | 'other' {
  return st.isSymbolicLink() ? 'symlink' : st.isDirectory() ? 'dir' : 'other';
}

/** The final status in a child's `completion.json`, or undefined. */
function readCompletion(child: Dir): string | undefined {
  try {
    const st = child.lstatSync(COMPLETION_FILE);
    if (!st?.isFile()) return undefined;
    const r = child.readSmallSync(COMPLETION_FILE, COMPLETION_MAX_BYTES, st);
    if (!r) return undefined;
    const o: unknown = JSON.parse(r.data.toString('utf8'));
    const status =
      typeof o === 'object' && o !== null && !Array.isArray(o) ? (o as Record<string, unknown>)['status'] : undefined;
    return typeof status === 'string' && FINAL_STATUSES.has(status) ? status : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The sessions of the sessions root `root` (a child's `.murmur`) and of its children, at most
 * MAX_DEPTH levels down. Returns why it could not judge, if anything stopped it.
 */
/** How a child's sessions are read: through the trace cache (or none), or by their lstats alone. */
interface InnerRead {
  cache: TraceCache | undefined;
  /** false: the traces are not read (`hasSessionEnd` stays undefined): for the look after a move */
  traces: boolean;
  signal: AbortSignal | undefined;
}

async function innerSessions(
  root: Dir,
  depth: number,
  read: InnerRead,
  out: InnerSession[],
): Promise<string | undefined> {
  const { cache, signal } = read;
  for (const name of await root.list()) {
    signal?.throwIfAborted();
    if (idTimestampMs(name, 'ses_') === undefined) continue;
    const st = await root.lstat(name);
    if (!st?.isDirectory()) continue;
    let sdir: Dir;
    try {
      sdir = await root.openDir(name, identityOf(st));
    } catch (err) {
      return `${root.display(name)}: ${describeError(err)}`;
    }
    await using _ = sdir;
    const tst = await sdir.lstat('trace.jsonl');
    let hasSessionEnd: boolean | undefined;
    if (read.traces && tst?.isFile()) {
      try {
        hasSessionEnd = (await readTraceSummary(sdir, { dir: root.path, name }, cache, signal, tst)).summary
          .hasSessionEnd;
      } catch {
        hasSessionEnd = undefined;
      }
    }
    out.push(
      tst
        ? { name, lastWriteMs: Number(tst.mtimeMs), hasSessionEnd }
        : { name, lastWriteMs: Number(st.mtimeMs), noTrace: true, hasSessionEnd },
    );
  }
  const problems: Problem[] = [];
  await using children = await openSub(root, CHILDREN_DIR, problems);
  if (problems.length) return problems[0]!.detail;
  if (!children) return undefined;
  for (const name of await children.list()) {
    const why = await walkChild(children, name, depth + 1, read, out);
    if (why) return why;
  }
  return undefined;
}

/** A child workdir's own sessions root and everything below it. */
async function walkChild(
  children: Dir,
  name: string,
  depth: number,
  read: InnerRead,
  out: InnerSession[],
): Promise<string | undefined> {
  if (depth > MAX_DEPTH) return `${children.display(name)} is nested deeper than ${MAX_DEPTH} child workdirs`;
  const st = await children.lstat(name);
  if (!st?.isDirectory()) return undefined;
  const problems: Problem[] = [];
  await using child = await openSub(children, name, problems);
  if (problems.length) return problems[0]!.detail;
  if (!child) return undefined;
  try {
    return await walkChildDir(child, depth, read, out);
  } catch (err) {
    if (err instanceof Error && err.name === 'AbortError') throw err;
    return `${children.display(name)}: ${describeError(err)}`;
  }
}

/** The sessions inside the open child workdir `child` (its `.murmur` and what is below it). */
async function walkChildDir(
  child: Dir,
  depth: number,
  read: InnerRead,
  out: InnerSession[],
): Promise<string | undefined> {
  const problems: Problem[] = [];
  await using root = await openSub(child, WORKDIR_ROOT_NAME, problems);
  if (problems.length) return problems[0]!.detail;
  if (!root) return undefined;
  return await innerSessions(root, depth, read, out);
}

/** One entry of `W/.murmur/children`. */
async function scanChild(
  children: Dir,
  name: string,
  cache: TraceCache | undefined,
  signal?: AbortSignal,
): Promise<ChildEntry | undefined> {
  const st = await children.lstat(name);
  if (!st) return undefined;
  const entry: ChildEntry = {
    name,
    kind: kindOf(st),
    identity: identityOf(st),
    uid: Number(st.uid),
    mtimeMs: Number(st.mtimeMs),
    sessions: [],
  };
  if (entry.kind !== 'dir') return entry;
  let child: Dir;
  try {
    child = await children.openDir(name, entry.identity);
  } catch (err) {
    entry.unjudged = `${children.display(name)}: ${describeError(err)}`;
    return entry;
  }
  try {
    const c = readCompletion(child);
    if (c !== undefined) entry.completion = c;
  } finally {
    await child.close();
  }
  const why = await walkChild(children, name, 1, { cache, traces: true, signal }, entry.sessions);
  if (why) entry.unjudged = why;
  return entry;
}

/**
 * What is inside the open child workdir `child` now, by lstats alone (no trace is read: every
 * `hasSessionEnd` is undefined): the look right after a child was moved (into trash, or into a
 * hold), compared with the look just before (rescanChild) to tell whether anything started or
 * was written inside it meanwhile. `unjudged` when something cannot be read or is too deep.
 */
export async function lookInsideChild(
  child: Dir,
  signal?: AbortSignal,
): Promise<{ sessions: InnerSession[]; unjudged?: string }> {
  const sessions: InnerSession[] = [];
  try {
    const why = await walkChildDir(child, 1, { cache: undefined, traces: false, signal }, sessions);
    return why ? { sessions, unjudged: why } : { sessions };
  } catch (err) {
    if (err instanceof Error && err.name === 'AbortError') throw err;
    return { sessions, unjudged: `${child.path}: ${describeError(err)}` };
  }
}

/**
 * The child `children/name` read again now (no cache), only while it is still the entry scanned
 * (`expect`): for the re-check of its liveness at the moment it would be removed or held.
 */
export async function rescanChild(
  children: Dir,
  name: string,
  expect: Identity,
  signal?: AbortSignal,
): Promise<ChildEntry> {
  const st = await children.lstat(name);
  if (!st || !sameIdentity(identityOf(st), expect))
    throw new GcError(Codes.changedSinceScan, `${children.display(name)} changed since it was scanned; left alone`);
  const e = await scanChild(children, name, undefined, signal);
  if (!e || !sameIdentity(e.identity, expect))
    throw new GcError(Codes.changedSinceScan, `${children.display(name)} changed since it was scanned; left alone`);
  return e;
}

/**
 * What lies beside the sessions root `rootPath` (whose name is `.murmur`) in its workdir W. The
 * root's parent is opened as given (it is the configured or discovered workdir); everything below
 * it descriptor-relatively.
 */
export async function scanBeside(
  rootPath: string,
  rootIdentity: Identity | undefined,
  cache: TraceCache | undefined,
  signal?: AbortSignal,
): Promise<BesideScan | undefined> {
  const slash = rootPath.replace(/\/+$/, '').lastIndexOf('/');
  const base = rootPath.replace(/\/+$/, '').slice(slash + 1);
  if (base !== WORKDIR_ROOT_NAME || slash < 0) return undefined;
  const workdir = slash === 0 ? '/' : rootPath.slice(0, slash);
  const out: BesideScan = { workdir, children: undefined, logs: undefined, problems: [], debris: [] };
  let w: Dir;
  try {
    w = await Dir.open(workdir, { followFinal: true });
  } catch (err) {
    const c = errnoCode(err);
    if (c !== 'ENOENT' && c !== 'ENOTDIR') out.problems.push(problemOf(workdir, err));
    return out;
  }
  await using _ = w;
  try {
    const root = await openSub(w, WORKDIR_ROOT_NAME, out.problems);
    if (root && rootIdentity && !sameIdentity(root.identity, rootIdentity)) {
      out.problems.push({
        target: root.path,
        code: Codes.changedSinceScan,
        detail: `${root.path} is not the sessions root scanned; what lies beside it is left for the next sweep`,
      });
      await root.close();
      return out;
    }
    if (root) {
      await using _ = root;
      await using children = await openSub(root, CHILDREN_DIR, out.problems);
      if (children) {
        const entries: ChildEntry[] = [];
        for (const name of await children.list()) {
          signal?.throwIfAborted();
          if (name.startsWith(TRASH_PREFIX)) {
            // a child (or orphan) whose removal a killed murmur-gc had started: the debris step finishes it
            const st = await children.lstat(name);
            if (st?.isDirectory())
              out.debris.push({
                kind: 'trash_dir',
                ref: { anchor: root.path, chain: [CHILDREN_DIR, name] },
                path: children.display(name),
                identity: identityOf(st),
                birth: st.birthtimeNs,
                detail: 'a child workdir an interrupted murmur-gc run had started to remove',
              });
          }
          if (name.startsWith('.')) continue; // murmur-gc's own trash/kept names, never a child
          const e = await scanChild(children, name, cache, signal);
          if (e) entries.push(e);
        }
        out.children = { identity: children.identity, entries };
      }
    }
    await using logs = await openSub(w, LOGS_DIR, out.problems);
    if (logs) {
      const wrk: LogEntry[] = [];
      const other = { count: 0, bytes: 0 };
      for (const name of await logs.list()) {
        const st = await logs.lstat(name);
        if (!st) continue;
        const id = name.endsWith('.log') ? name.slice(0, -4) : '';
        if (isWorkId(id)) {
          wrk.push({
            name,
            workId: id,
            kind: st.isSymbolicLink() ? 'symlink' : st.isFile() ? 'file' : 'other',
            identity: identityOf(st),
            uid: Number(st.uid),
            bytes: allocatedBytes(st),
          });
        } else {
          other.count++;
          other.bytes += allocatedBytes(st);
        }
      }
      out.logs = { identity: logs.identity, wrk, other };
    }
  } catch (err) {
    if (err instanceof Error && err.name === 'AbortError') throw err;
    out.problems.push(problemOf(workdir, err));
  }
  return out;
}
