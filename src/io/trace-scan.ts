// Reads a session's trace.jsonl into a TraceSummary, streaming, parsing only the lines whose
// event type the sweep needs. Guarantees: never follows a link or opens a FIFO (Dir.openFile);
// reads at most the size seen at open; torn or garbage lines are counted and skipped; the
// summary of an unchanged file (same dev/ino/size/mtime) is served from a cache.
import type { Dir, BigIntStats } from './safe-fs.js';
import { forwardLines } from './jsonl.js';
import { parseHeaderLine, serializeHeader, type RecordHeader } from '../murmur/record.js';
import { TraceAccumulator, type DetachedWork, type TraceSummary, type Trust } from '../murmur/trace.js';

export interface TraceFileState {
  dev: string;
  ino: string;
  size: number;
  mtimeMs: number;
}

export function traceFileState(st: BigIntStats): TraceFileState {
  return { dev: st.dev.toString(), ino: st.ino.toString(), size: Number(st.size), mtimeMs: Number(st.mtimeMs) };
}

export function sameFileState(a: TraceFileState, b: TraceFileState): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs;
}

/**
 * Summaries keyed by where the trace is: `dir` (the report path of the directory holding the session
 * directory) and `name` (the session directory's name); the caller persists it (under <home>/gc/)
 * between sweeps.
 */
export interface TraceCache {
  get(dir: string, name: string, state: TraceFileState): TraceSummary | undefined;
  set(dir: string, name: string, state: TraceFileState, summary: TraceSummary): void;
  /** Nothing more will be looked up under `dir` in this sweep: entries loaded for it and not used are dropped. */
  forget(dir: string): void;
}

export interface CachedRecord {
  header: RecordHeader | null;
  messages?: number;
  /** Not valid UTF-8: the runtime reads nothing in it (set only when the whole file was read). */
  unreadable?: boolean;
  /** False: the file ends with a torn line (set only when the whole file was read). */
  terminated?: boolean;
}

const EMPTY_TRUST: Record<string, Trust> = Object.freeze({});
const EMPTY_WORK: DetachedWork[] = Object.freeze([]) as unknown as DetachedWork[];

const TRACE_SUFFIX = '/trace.jsonl';
const RECORD_SUFFIX = '/conversation.jsonl';

/** A directory's report path as a cache key (no trailing slash, so `display()` round-trips). */
function dirKey(dir: string): string {
  return dir.endsWith('/') ? dir.slice(0, -1) : dir;
}

/** dir → name → encoded entry */
type Entries = Map<string, Map<string, string>>;

function entryOf(m: Entries, dir: string, name: string): string | undefined {
  return m.get(dir)?.get(name);
}

function put(m: Entries, dir: string, name: string, raw: string): void {
  let d = m.get(dir);
  if (!d) m.set(dir, (d = new Map<string, string>()));
  d.set(name, raw);
}

function countOf(m: Entries): number {
  let n = 0;
  for (const d of m.values()) n += d.size;
  return n;
}

/**
 * The trace-summary and record-count cache, kept as the serialized entries it is persisted as.
 * Guarantees:
 * - An entry is returned only when the file's dev/ino/size/mtime equal the ones it was built from;
 *   an entry that does not decode to well-typed values (corrupt, older format) is a miss, never
 *   an error, and the file is read again. A cached record header is re-validated with the
 *   runtime's own header rule.
 * - Entries are decoded only when looked up (loading a cache of 100 000 entries parses no entry);
 *   only the entries looked up or stored in this sweep are persisted (stale ones fall away).
 * - Memory: entries are held per directory by name (the name string the caller already holds, once
 *   looked up), each encoded entry as its own string (never a slice pinning the loaded file); an
 *   entry moves from "loaded" to "kept" when used, and `forget(dir)` drops the unused rest.
 * - `changed` is false when persisting would write back exactly what was loaded.
 */
export class MemoryTraceCache implements TraceCache {
  /** as loaded, not yet used in this sweep */
  private readonly loadedTraces: Entries = new Map();
  private readonly loadedRecords: Entries = new Map();
  private loadedTraceCount = 0;
  private loadedRecordCount = 0;
  /** what this sweep keeps */
  private readonly keptTraces: Entries = new Map();
  private readonly keptRecords: Entries = new Map();
  private dirty = false;

  get(dir: string, name: string, state: TraceFileState): TraceSummary | undefined {
    return this.take(this.keptTraces, this.loadedTraces, dirKey(dir), name, (raw) => decodeTrace(raw, state));
  }

  set(dir: string, name: string, state: TraceFileState, summary: TraceSummary): void {
    this.store(this.keptTraces, dirKey(dir), name, encodeTrace(state, summary));
  }

  forget(dir: string): void {
    this.loadedTraces.delete(dirKey(dir));
    this.loadedRecords.delete(dirKey(dir));
  }

  /**
   * What an earlier sweep learnt about a conversation record (`<dir>/<name>/conversation.jsonl`) —
   * its header (null: none) and, when it was counted, its message lines; same staleness rule as traces.
   */
  getRecord(dir: string, name: string, state: TraceFileState): CachedRecord | undefined {
    return this.take(this.keptRecords, this.loadedRecords, dirKey(dir), name, (raw) => decodeRecord(raw, state));
  }

  setRecord(dir: string, name: string, state: TraceFileState, value: CachedRecord): void {
    this.store(this.keptRecords, dirKey(dir), name, encodeRecord(state, value));
  }

  /**
   * The decoded entry for (dir, name): kept already, or loaded (then, when it is valid for the
   * caller's state, kept under the caller's name string; a stale loaded entry is dropped).
   */
  private take<T>(kept: Entries, loaded: Entries, dir: string, name: string, decode: (raw: string) => T | undefined): T | undefined {
    const k = entryOf(kept, dir, name);
    if (k !== undefined) return decode(k);
    const d = loaded.get(dir);
    const raw = d?.get(name);
    if (raw === undefined) return undefined;
    d?.delete(name);
    const value = decode(raw);
    if (value !== undefined) put(kept, dir, name, raw);
    return value;
  }

  private store(kept: Entries, dir: string, name: string, raw: string): void {
    if (entryOf(kept, dir, name) !== raw) this.dirty = true;
    put(kept, dir, name, raw);
  }

  /** True when the persisted form would differ from what was loaded. */
  get changed(): boolean {
    return this.dirty || countOf(this.keptTraces) !== this.loadedTraceCount || countOf(this.keptRecords) !== this.loadedRecordCount;
  }

  /**
   * Load the persisted lines (`T|R \t key-json \t entry-json \n`, from `from` on); malformed lines
   * are skipped. Every string is copied out of `data`, which is not retained.
   */
  load(data: Buffer, from = 0): void {
    let at = from;
    while (at < data.length) {
      let end = data.indexOf(10, at);
      if (end < 0) end = data.length;
      this.loadLine(data, at, end);
      at = end + 1;
    }
    this.loadedTraceCount = countOf(this.loadedTraces);
    this.loadedRecordCount = countOf(this.loadedRecords);
  }

  private loadLine(data: Buffer, start: number, end: number): void {
    const kind = data[start];
    if (data[start + 1] !== 9 || (kind !== 84 && kind !== 82)) return; // 'T' | 'R', then a tab
    const tab = data.indexOf(9, start + 2);
    if (tab < 0 || tab >= end) return;
    let path: unknown;
    try {
      path = JSON.parse(data.toString('utf8', start + 2, tab));
    } catch {
      return;
    }
    const suffix = kind === 84 ? TRACE_SUFFIX : RECORD_SUFFIX;
    if (typeof path !== 'string' || !path.endsWith(suffix)) return;
    const item = path.slice(0, -suffix.length);
    const slash = item.lastIndexOf('/');
    if (slash < 0 || slash === item.length - 1) return;
    put(kind === 84 ? this.loadedTraces : this.loadedRecords, item.slice(0, slash), item.slice(slash + 1), data.toString('utf8', tab + 1, end));
  }

  /** The persisted lines of this sweep's entries. */
  *lines(): Generator<string> {
    for (const [dir, d] of this.keptTraces) for (const [name, v] of d) yield `T\t${JSON.stringify(`${dir}/${name}${TRACE_SUFFIX}`)}\t${v}`;
    for (const [dir, d] of this.keptRecords) for (const [name, v] of d) yield `R\t${JSON.stringify(`${dir}/${name}${RECORD_SUFFIX}`)}\t${v}`;
  }
}

function parseArray(raw: string): unknown[] | undefined {
  try {
    const v: unknown = JSON.parse(raw);
    return Array.isArray(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

function sameState(a: unknown[], st: TraceFileState): boolean {
  return a[0] === st.dev && a[1] === st.ino && a[2] === st.size && a[3] === st.mtimeMs;
}

function encodeTrace(st: TraceFileState, s: TraceSummary): string {
  const work = s.unaccounted.length ? s.unaccounted : 0;
  const trust = Object.keys(s.taskTrust).length ? s.taskTrust : 0;
  // session_start's event id is only ever needed to reconcile unaccounted work (shell_lost's parent).
  const startId = work === 0 ? null : (s.sessionStartEventId ?? null);
  return JSON.stringify([st.dev, st.ino, st.size, st.mtimeMs, s.hasSessionEnd ? 1 : 0, s.endsWithNewline ? 1 : 0, s.invalidLines, startId, s.contextIds, work, trust, s.utf8 === false ? 0 : 1]);
}

function isWork(w: unknown): w is DetachedWork {
  if (typeof w !== 'object' || w === null) return false;
  const o = w as Record<string, unknown>;
  return typeof o['workId'] === 'string' && typeof o['binary'] === 'string' && typeof o['command'] === 'string' && typeof o['detachedAtMs'] === 'number' && typeof o['detachedAtText'] === 'string' && (o['taskId'] === null || typeof o['taskId'] === 'string');
}

function decodeTrace(raw: string, st: TraceFileState): TraceSummary | undefined {
  const a = parseArray(raw);
  if (!a || a.length !== 12 || !sameState(a, st)) return undefined;
  const [, , , , end, nl, invalid, startId, contexts, work, trust, utf8] = a;
  if ((end !== 0 && end !== 1) || (nl !== 0 && nl !== 1) || (utf8 !== 0 && utf8 !== 1) || !Number.isSafeInteger(invalid) || (startId !== null && typeof startId !== 'string')) return undefined;
  if (!Array.isArray(contexts) || !contexts.every((c) => typeof c === 'string')) return undefined;
  if (work !== 0 && !(Array.isArray(work) && work.every(isWork))) return undefined;
  if (trust !== 0 && !(typeof trust === 'object' && trust !== null && !Array.isArray(trust) && Object.values(trust).every((t) => t === 'trusted' || t === 'untrusted'))) return undefined;
  if (work !== 0) {
    return {
      sessionStartEventId: startId ?? undefined,
      contextIds: contexts,
      hasSessionEnd: end === 1,
      taskTrust: trust === 0 ? EMPTY_TRUST : (trust as Record<string, Trust>),
      unaccounted: work,
      endsWithNewline: nl === 1,
      invalidLines: invalid as number,
      utf8: utf8 === 1,
    };
  }
  // The common case — nothing unaccounted: keep the flags, and the validated entry's text for the
  // fields only a live session's planning reads (its context ids), decoded again on demand.
  return new CachedSummary(raw, end === 1, nl === 1, invalid as number, utf8 === 1);
}

/** A validated cache entry with no unaccounted work; context ids are decoded from its text when read. */
class CachedSummary implements TraceSummary {
  constructor(
    private readonly raw: string,
    readonly hasSessionEnd: boolean,
    readonly endsWithNewline: boolean,
    readonly invalidLines: number,
    readonly utf8: boolean,
  ) {}
  get taskTrust(): Record<string, Trust> {
    return EMPTY_TRUST;
  }
  get unaccounted(): DetachedWork[] {
    return EMPTY_WORK;
  }
  /** Not kept: only reconciliation reads it, and only for a session with unaccounted work. */
  get sessionStartEventId(): undefined {
    return undefined;
  }
  get contextIds(): string[] {
    return (JSON.parse(this.raw) as unknown[])[8] as string[];
  }
  toJSON(): TraceSummary {
    return { sessionStartEventId: undefined, contextIds: this.contextIds, hasSessionEnd: this.hasSessionEnd, taskTrust: {}, unaccounted: [], endsWithNewline: this.endsWithNewline, invalidLines: this.invalidLines, utf8: this.utf8 };
  }
}

/** Headers are stored as their exact line (u64 values above 2^53 survive) and re-validated on use. */
function encodeRecord(st: TraceFileState, r: CachedRecord): string {
  const header = r.header === null ? null : serializeHeader(r.header).slice(0, -1);
  return JSON.stringify([st.dev, st.ino, st.size, st.mtimeMs, header, r.messages ?? -1, r.unreadable === true ? 1 : 0, r.terminated === undefined ? -1 : r.terminated ? 1 : 0]);
}

function decodeRecord(raw: string, st: TraceFileState): CachedRecord | undefined {
  const a = parseArray(raw);
  if (!a || a.length !== 8 || !sameState(a, st)) return undefined;
  const [, , , , h, messages, unreadable, terminated] = a;
  // A cached header is re-validated with the runtime's own rule; anything odd is a miss.
  const header = h === null ? null : typeof h === 'string' ? parseHeaderLine(h) : undefined;
  if (header === undefined) return undefined;
  if (!(typeof messages === 'number' && Number.isSafeInteger(messages) && messages >= -1)) return undefined;
  if ((unreadable !== 0 && unreadable !== 1) || (terminated !== -1 && terminated !== 0 && terminated !== 1)) return undefined;
  return {
    header,
    unreadable: unreadable === 1,
    ...(messages === -1 ? {} : { messages }),
    ...(terminated === -1 ? {} : { terminated: terminated === 1 }),
  };
}

/** Traces up to this size are read in one synchronous call; larger ones are streamed. */
const SMALL_TRACE_BYTES = 1 << 20;

export interface TraceRead {
  summary: TraceSummary;
  state: TraceFileState;
  fromCache: boolean;
}

/** Where a trace sits, as the cache keys it: `<dir>/<name>/trace.jsonl`. */
export interface TraceAt {
  dir: string;
  name: string;
}

/**
 * Summarize `<sessionDir>/trace.jsonl` (`at`: the session directory's parent and name). Throws
 * GcError(symlink|not_regular) or fs errors.
 */
export async function readTraceSummary(sessionDir: Dir, at: TraceAt, cache: TraceCache | undefined, signal?: AbortSignal, pre?: BigIntStats): Promise<TraceRead> {
  if (pre?.isFile() && cache) {
    // An unchanged trace (same dev/ino/size/mtime as when it was summarized) is not even opened.
    const state = traceFileState(pre);
    const cached = cache.get(at.dir, at.name, state);
    if (cached) return { summary: cached, state, fromCache: true };
  }
  const acc = new TraceAccumulator();
  let lastTerminated = true;
  const feed = (bytes: Buffer, terminated: boolean) => {
    lastTerminated = terminated;
    acc.addLine(bytes, 0, bytes.length);
  };
  // Most traces are small: read them in one go (no thread-pool round trips); stream the rest.
  const small = sessionDir.readSmallSync('trace.jsonl', SMALL_TRACE_BYTES);
  let state: TraceFileState;
  if (small) {
    state = traceFileState(small.stat);
    const cached = cache?.get(at.dir, at.name, state);
    if (cached) return { summary: cached, state, fromCache: true };
    let from = 0;
    while (from < small.data.length) {
      const nl = small.data.indexOf(10, from);
      if (nl < 0) {
        feed(small.data.subarray(from), false);
        break;
      }
      feed(small.data.subarray(from, nl), true);
      from = nl + 1;
    }
  } else {
    const { fh, stat } = await sessionDir.openFile('trace.jsonl');
    try {
      state = traceFileState(stat);
      const cached = cache?.get(at.dir, at.name, state);
      if (cached) return { summary: cached, state, fromCache: true };
      const opts = signal ? { to: state.size, signal } : { to: state.size };
      for await (const l of forwardLines(fh, opts)) feed(l.bytes, l.terminated);
    } finally {
      await fh.close();
    }
  }
  const summary = acc.finish(state.size === 0 || lastTerminated);
  if (!cache) return { summary, state, fromCache: false };
  cache.set(at.dir, at.name, state, summary);
  // What the sweep keeps of it is the compact cached form (the same values, decoded on demand).
  return { summary: cache.get(at.dir, at.name, state) ?? summary, state, fromCache: false };
}
