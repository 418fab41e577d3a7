// Reads a session's trace.jsonl into a TraceSummary, streaming, parsing only the lines whose
// event type the sweep needs. Guarantees: never follows a link or opens a FIFO (Dir.openFile);
// reads at most the size seen at open; torn or garbage lines are counted and skipped; the
// summary of an unchanged file (same dev/ino/size/mtime) is served from a cache.
import type { Dir, BigIntStats } from './safe-fs.js';
import { forwardLines } from './jsonl.js';
import { TraceAccumulator, peekEventType, type TraceSummary } from '../murmur/trace.js';

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
  hits = 0;
  misses = 0;
  get(key: string, state: TraceFileState): TraceSummary | undefined {
    this.touched.add(key);
    const e = this.entries.get(key);
    if (e && sameFileState(e.state, state)) {
      this.hits++;
      return e.summary;
    }
    this.misses++;
    return undefined;
  }
  set(key: string, state: TraceFileState, summary: TraceSummary): void {
    this.touched.add(key);
    this.entries.set(key, { state, summary });
  }
  toJSON(): Record<string, { state: TraceFileState; summary: TraceSummary }> {
    return Object.fromEntries([...this.entries].filter(([k]) => this.touched.has(k)));
  }

  /** Message counts of conversation records, keyed by path; same staleness rule as traces. */
  readonly counts = new Map<string, { state: TraceFileState; messages: number }>();
  private readonly countsTouched = new Set<string>();
  getCount(key: string, state: TraceFileState): number | undefined {
    this.countsTouched.add(key);
    const e = this.counts.get(key);
    return e && sameFileState(e.state, state) ? e.messages : undefined;
  }
  setCount(key: string, state: TraceFileState, messages: number): void {
    this.countsTouched.add(key);
    this.counts.set(key, { state, messages });
  }
  countsToJSON(): Record<string, { state: TraceFileState; messages: number }> {
    return Object.fromEntries([...this.counts].filter(([k]) => this.countsTouched.has(k)));
  }
  loadCounts(raw: unknown): void {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return;
    for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
      const e = v as { state?: Partial<TraceFileState>; messages?: unknown };
      if (typeof e?.messages === 'number' && typeof e.state?.dev === 'string' && typeof e.state.ino === 'string' && typeof e.state.size === 'number' && typeof e.state.mtimeMs === 'number') {
        this.counts.set(k, { state: e.state as TraceFileState, messages: e.messages });
      }
    }
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
    typeof m.hasSessionEnd === 'boolean' &&
    typeof m.endsWithNewline === 'boolean' &&
    typeof m.taskTrust === 'object'
  );
}

export interface TraceRead {
  summary: TraceSummary;
  state: TraceFileState;
  fromCache: boolean;
}

/** Summarize `<sessionDir>/trace.jsonl`. Throws GcError(symlink|not_regular) or fs errors. */
export async function readTraceSummary(sessionDir: Dir, cache: TraceCache | undefined, signal?: AbortSignal): Promise<TraceRead> {
  const { fh, stat } = await sessionDir.openFile('trace.jsonl');
  try {
    const state = traceFileState(stat);
    const key = sessionDir.display('trace.jsonl');
    const cached = cache?.get(key, state);
    if (cached) return { summary: cached, state, fromCache: true };
    const acc = new TraceAccumulator();
    let lastTerminated = true;
    const opts = signal ? { to: state.size, signal } : { to: state.size };
    for await (const l of forwardLines(fh, opts)) {
      lastTerminated = l.terminated;
      if (l.end === l.start) continue;
      const t = peekEventType(l.bytes);
      if (t !== undefined && !TraceAccumulator.WANTED.has(t)) continue;
      let obj: unknown;
      try {
        obj = JSON.parse(l.bytes.toString('utf8'));
      } catch {
        acc.invalidLines++;
        continue;
      }
      acc.add(obj);
    }
    const summary = acc.finish(state.size === 0 || lastTerminated);
    cache?.set(key, state, summary);
    return { summary, state, fromCache: false };
  } finally {
    await fh.close();
  }
}
