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

/** Summaries keyed by trace path; the caller persists it (under <home>/gc/) between sweeps. */
export interface TraceCache {
  get(key: string, state: TraceFileState): TraceSummary | undefined;
  set(key: string, state: TraceFileState, summary: TraceSummary): void;
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

/**
 * The trace-summary and record-count cache, kept as the serialized lines it is persisted as.
 * Guarantees:
 * - An entry is returned only when the file's dev/ino/size/mtime equal the ones it was built from;
 *   an entry that does not decode to well-typed values (corrupt, older format) is a miss, never
 *   an error, and the file is read again. A cached record header is re-validated with the
 *   runtime's own header rule.
 * - Entries are decoded only when looked up (loading a cache of 100 000 entries parses nothing);
 *   only the entries looked up or stored in this sweep are persisted (stale ones fall away).
 * - `changed` is false when persisting would write back exactly what was loaded.
 */
export class MemoryTraceCache implements TraceCache {
  /** key (JSON-encoded) → encoded entry, as loaded */
  private readonly loadedTraces = new Map<string, string>();
  private readonly loadedRecords = new Map<string, string>();
  /** what this sweep keeps: key (JSON-encoded) → encoded entry */
  private readonly keptTraces = new Map<string, string>();
  private readonly keptRecords = new Map<string, string>();
  private dirty = false;

  get(key: string, state: TraceFileState): TraceSummary | undefined {
    const k = JSON.stringify(key);
    const raw = this.keptTraces.get(k) ?? this.loadedTraces.get(k);
    if (raw === undefined) return undefined;
    const summary = decodeTrace(raw, state);
    if (summary) this.keptTraces.set(k, raw);
    return summary;
  }

  set(key: string, state: TraceFileState, summary: TraceSummary): void {
    const k = JSON.stringify(key);
    const raw = encodeTrace(state, summary);
    if (this.keptTraces.get(k) !== raw) this.dirty = true;
    this.keptTraces.set(k, raw);
  }

  /**
   * What an earlier sweep learnt about a conversation record — its header (null: none) and, when it
   * was counted, its message lines — keyed by path; same staleness rule as traces.
   */
  getRecord(key: string, state: TraceFileState): CachedRecord | undefined {
    const k = JSON.stringify(key);
    const raw = this.keptRecords.get(k) ?? this.loadedRecords.get(k);
    if (raw === undefined) return undefined;
    const r = decodeRecord(raw, state);
    if (r) this.keptRecords.set(k, raw);
    return r;
  }

  setRecord(key: string, state: TraceFileState, value: CachedRecord): void {
    const k = JSON.stringify(key);
    const raw = encodeRecord(state, value);
    if (this.keptRecords.get(k) !== raw) this.dirty = true;
    this.keptRecords.set(k, raw);
  }

  /** True when the persisted form would differ from what was loaded. */
  get changed(): boolean {
    return this.dirty || this.keptTraces.size !== this.loadedTraces.size || this.keptRecords.size !== this.loadedRecords.size;
  }

  /** Load persisted lines (`T|R \t key-json \t entry-json`); malformed lines are skipped. */
  load(lines: Iterable<string>): void {
    for (const line of lines) {
      const a = line.indexOf('\t', 2);
      if (a < 0 || line[1] !== '\t') continue;
      const map = line[0] === 'T' ? this.loadedTraces : line[0] === 'R' ? this.loadedRecords : undefined;
      map?.set(line.slice(2, a), line.slice(a + 1));
    }
  }

  /** The persisted lines of this sweep's entries. */
  *lines(): Generator<string> {
    for (const [k, v] of this.keptTraces) yield `T\t${k}\t${v}`;
    for (const [k, v] of this.keptRecords) yield `R\t${k}\t${v}`;
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

/** Summarize `<sessionDir>/trace.jsonl`. Throws GcError(symlink|not_regular) or fs errors. */
export async function readTraceSummary(sessionDir: Dir, cache: TraceCache | undefined, signal?: AbortSignal, pre?: BigIntStats): Promise<TraceRead> {
  if (pre?.isFile() && cache) {
    // An unchanged trace (same dev/ino/size/mtime as when it was summarized) is not even opened.
    const state = traceFileState(pre);
    const cached = cache.get(sessionDir.display('trace.jsonl'), state);
    if (cached) return { summary: cached, state, fromCache: true };
  }
  const key = sessionDir.display('trace.jsonl');
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
    const cached = cache?.get(key, state);
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
      const cached = cache?.get(key, state);
      if (cached) return { summary: cached, state, fromCache: true };
      const opts = signal ? { to: state.size, signal } : { to: state.size };
      for await (const l of forwardLines(fh, opts)) feed(l.bytes, l.terminated);
    } finally {
      await fh.close();
    }
  }
  const summary = acc.finish(state.size === 0 || lastTerminated);
  if (!cache) return { summary, state, fromCache: false };
  cache.set(key, state, summary);
  // What the sweep keeps of it is the compact cached form (the same values, decoded on demand).
  return { summary: cache.get(key, state) ?? summary, state, fromCache: false };
}
