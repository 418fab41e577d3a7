// Reads a session's trace.jsonl into a TraceSummary (readTraceSummary), through the cache of
// src/runtime/summary-cache.ts. Guarantees: never follows a link or opens a FIFO
// (Dir.readSmallSync, Dir.openFile); reads at most the size seen at open; a trace up to 1 MiB is
// read in one synchronous call, a larger one streamed, and a trace is read a second time only
// when the first pass could not keep its unaccounted work exactly within its caps; torn or
// garbage lines are counted and skipped (src/runtime/trace.ts parses the lines); an unchanged file
// (same dev/ino/size/mtime) is served from the cache without being opened. Memory is bounded
// whatever the trace holds (docs/limits.md): a line over the line cap is read past (or, when it
// may be JSON, the trace is not judged: `line_too_long`), a trace of any size more than 16 times
// what it holds on disk is not read (`sparse_file`), and a summary is ids, line offsets and counts
// with a cap on each (a trace naming more ids than kept is not judged: `too_many_ids`) — never a
// command.
import type { BigIntStats, Dir } from '../fsx/safe-fs.js';
import { Codes, GcError } from '../errors.js';
import { forwardLines, sparseFileError, type Line } from './jsonl.js';
import { traceFileState, type TraceCache, type TraceFileState } from './summary-cache.js';
import { MAX_NAMED_IDS, TraceAccumulator, type TraceSummary } from './trace.js';

/** Traces up to this size are read in one synchronous call; larger ones are streamed. */
const SMALL_TRACE_BYTES = 1 << 20;

/** The buffer small traces are read into: grown as needed (powers of two), up to SMALL_TRACE_BYTES. */
let traceBuf: Buffer | undefined;
function traceBuffer(pre: BigIntStats | undefined): Buffer | undefined {
  if (!pre?.isFile() || pre.size > BigInt(SMALL_TRACE_BYTES)) return undefined;
  const size = Number(pre.size);
  if (!traceBuf || traceBuf.length < size)
    traceBuf = Buffer.allocUnsafe(Math.min(SMALL_TRACE_BYTES, Math.max(64 << 10, 2 ** Math.ceil(Math.log2(size + 1)))));
  return traceBuf;
}

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

function tooManyIds(what: string): GcError {
  return new GcError(
    Codes.tooManyIds,
    `the trace names more than ${MAX_NAMED_IDS} distinct ${what}; it is not judged (docs/limits.md)`,
  );
}

/**
 * Summarize `<sessionDir>/trace.jsonl` (`at`: the session directory's parent and name). Throws
 * GcError(symlink|not_regular|sparse_file|line_too_long|too_many_ids) or fs errors. A trace that looks mostly
 * holes (src/runtime/jsonl.ts sparseFileError: more than 16× what it holds on disk) is not read, at
 * any size. A trace read twice: only when the first pass could not keep its unaccounted work
 * exactly within its caps (TraceAccumulator.secondPass), a trace with thousands of it.
 */
export async function readTraceSummary(
  sessionDir: Dir,
  at: TraceAt,
  cache: TraceCache | undefined,
  signal?: AbortSignal,
  pre?: BigIntStats,
): Promise<TraceRead> {
  if (pre?.isFile() && cache) {
    // An unchanged trace (same dev/ino/size/mtime as when it was summarized) is not even opened.
    const state = traceFileState(pre);
    const cached = cache.get(at.dir, at.name, state);
    if (cached) return { summary: cached, state, fromCache: true };
  }
  // Judged before anything is read: a small file too (a 1 MiB hole costs no disk either).
  const seen = pre ?? sessionDir.lstatSync('trace.jsonl');
  if (seen?.isFile()) {
    const sparse = sparseFileError(seen);
    if (sparse) throw sparse;
  }
  let acc = new TraceAccumulator();
  let again: TraceAccumulator | undefined;
  let lastTerminated = true;
  const feed = (l: Line) => {
    lastTerminated = l.terminated;
    if (l.overlong) acc.addOverlongLine(l.overlong.utf8);
    else acc.addLine(l.bytes, 0, l.bytes.length, l.start);
  };
  // Most traces are small: read them in one go (no thread-pool round trips) into one reused
  // buffer, and summarize them in the same synchronous stretch (nothing else can reuse the buffer
  // meanwhile; the summary copies out what it keeps); stream the rest.
  const small = sessionDir.readSmallSync('trace.jsonl', SMALL_TRACE_BYTES, seen, traceBuffer(seen));
  let state: TraceFileState;
  if (small) {
    state = traceFileState(small.stat);
    // (the file opened is the one lstat saw: when its size and mtime are too, it was looked up above)
    const looked = pre !== undefined && pre.size === small.stat.size && pre.mtimeMs === small.stat.mtimeMs;
    const cached = looked ? undefined : cache?.get(at.dir, at.name, state);
    if (cached) return { summary: cached, state, fromCache: true };
    lastTerminated = acc.addLines(small.data);
    if (acc.tooMany) throw tooManyIds(acc.tooMany);
    again = acc.secondPass();
    again?.addLines(small.data);
  } else {
    const { fh, stat } = await sessionDir.openFile('trace.jsonl');
    await using _ = fh;
    state = traceFileState(stat);
    const cached = cache?.get(at.dir, at.name, state);
    if (cached) return { summary: cached, state, fromCache: true };
    // (judged again when what was opened is not what was judged: it may have grown since)
    const sparse = seen && seen.size === stat.size && seen.blocks === stat.blocks ? undefined : sparseFileError(stat);
    if (sparse) throw sparse;
    const opts = signal ? { to: state.size, signal } : { to: state.size };
    for await (const l of forwardLines(fh, opts)) {
      feed(l);
      if (acc.tooMany) throw tooManyIds(acc.tooMany);
    }
    again = acc.secondPass();
    if (again) {
      const first = acc;
      acc = again;
      for await (const l of forwardLines(fh, opts)) feed(l);
      acc = first;
    }
  }
  const summary = acc.finish(state.size === 0 || lastTerminated, again);
  if (!cache) return { summary, state, fromCache: false };
  cache.set(at.dir, at.name, state, summary);
  // What the sweep keeps of it is the compact cached form (the same values, decoded on demand).
  return { summary: cache.get(at.dir, at.name, state) ?? summary, state, fromCache: false };
}
