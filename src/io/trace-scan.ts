// Reads a session's trace.jsonl into a TraceSummary, streaming, parsing only the lines whose
// event type the sweep needs. Guarantees: never follows a link or opens a FIFO (Dir.openFile);
// reads at most the size seen at open; torn or garbage lines are counted and skipped; the
// summary of an unchanged file (same dev/ino/size/mtime) is served from a cache.
import type { Dir, BigIntStats } from './safe-fs.js';
import { forwardLines } from './jsonl.js';
import { parseHeaderLine, serializeHeader, type RecordHeader } from '../murmur/record.js';
import { TraceAccumulator, type TraceSummary } from '../murmur/trace.js';

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

export class MemoryTraceCache implements TraceCache {
  readonly entries = new Map<string, { state: TraceFileState; summary: TraceSummary }>();
  /** Keys looked up or stored this sweep; only these are persisted (stale entries fall away). */
  readonly touched = new Set<string>();
  get(key: string, state: TraceFileState): TraceSummary | undefined {
    this.touched.add(key);
    const e = this.entries.get(key);
    if (e && sameFileState(e.state, state)) {
      return e.summary;
    }
    return undefined;
  }
  set(key: string, state: TraceFileState, summary: TraceSummary): void {
    this.touched.add(key);
    this.entries.set(key, { state, summary });
  }
  toJSON(): Record<string, { state: TraceFileState; summary: TraceSummary }> {
    return Object.fromEntries([...this.entries].filter(([k]) => this.touched.has(k)));
  }

  /**
   * What an earlier sweep learnt about a conversation record — its header (null: none), whether
   * it is unreadable (not UTF-8) and, when it was counted, its message lines — keyed by path;
   * same staleness rule as traces.
   */
  readonly records = new Map<string, { state: TraceFileState } & CachedRecord>();
  private readonly recordsTouched = new Set<string>();
  getRecord(key: string, state: TraceFileState): CachedRecord | undefined {
    this.recordsTouched.add(key);
    const e = this.records.get(key);
    return e && sameFileState(e.state, state) ? e : undefined;
  }
  setRecord(key: string, state: TraceFileState, value: CachedRecord): void {
    this.recordsTouched.add(key);
    this.records.set(key, { state, ...value });
  }
  /** Headers are stored as their exact line (u64 values above 2^53 survive). */
  recordsToJSON(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [k, e] of this.records) {
      if (!this.recordsTouched.has(k)) continue;
      out[k] = {
        state: e.state,
        header: e.header === null ? null : serializeHeader(e.header).slice(0, -1),
        unreadable: e.unreadable === true,
        ...(e.messages !== undefined ? { messages: e.messages } : {}),
        ...(e.terminated !== undefined ? { terminated: e.terminated } : {}),
      };
    }
    return out;
  }
  static fromJSON(raw: unknown): MemoryTraceCache {
    const c = new MemoryTraceCache();
    if (typeof raw === 'object' && raw !== null && !Array.isArray(raw)) {
      for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
        if (isCacheEntry(v)) c.entries.set(k, v);
      }
    }
    return c;
  }

  loadRecords(raw: unknown): void {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return;
    for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
      const e = v as { state?: Partial<TraceFileState>; header?: unknown; messages?: unknown; unreadable?: unknown; terminated?: unknown };
      const st = e?.state;
      if (!(typeof st?.dev === 'string' && typeof st.ino === 'string' && typeof st.size === 'number' && typeof st.mtimeMs === 'number')) continue;
      // Entries written before records were read as the runtime reads them carry no `unreadable`
      // and are dropped (re-read once). A cached header is re-validated with the runtime's rule.
      if (typeof e.unreadable !== 'boolean') continue;
      const header = e.header === null ? null : typeof e.header === 'string' ? parseHeaderLine(e.header) : undefined;
      if (header === undefined) continue;
      this.records.set(k, {
        state: st as TraceFileState,
        header,
        unreadable: e.unreadable,
        ...(typeof e.terminated === 'boolean' ? { terminated: e.terminated } : {}),
        ...(typeof e.messages === 'number' && Number.isSafeInteger(e.messages) && e.messages >= 0 ? { messages: e.messages } : {}),
      });
    }
  }
}

export interface CachedRecord {
  header: RecordHeader | null;
  messages?: number;
  /** Not valid UTF-8: the runtime reads nothing in it (set only when the whole file was read). */
  unreadable?: boolean;
  /** False: the file ends with a torn line (set only when the whole file was read). */
  terminated?: boolean;
}

function isCacheEntry(v: unknown): v is { state: TraceFileState; summary: TraceSummary } {
  if (typeof v !== 'object' || v === null) return false;
  const e = v as { state?: unknown; summary?: unknown };
  const s = e.state as Partial<TraceFileState> | undefined;
  const m = e.summary as Partial<TraceSummary> | undefined;
  return (
    typeof s?.dev === 'string' &&
    typeof s.ino === 'string' &&
    typeof s.size === 'number' &&
    typeof s.mtimeMs === 'number' &&
    Array.isArray(m?.contextIds) &&
    Array.isArray(m.unaccounted) &&
    // summaries made before traces were read as the runtime reads them are re-read once
    typeof m.utf8 === 'boolean' &&
    typeof m.hasSessionEnd === 'boolean' &&
    typeof m.endsWithNewline === 'boolean' &&
    typeof m.taskTrust === 'object'
  );
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
  cache?.set(key, state, summary);
  return { summary, state, fromCache: false };
}
