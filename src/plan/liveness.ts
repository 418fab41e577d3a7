// Liveness of a session as murmur-gc must decide it from outside the runtime (docs/design.md §2), pure.
// Guarantees: a session is `live` when any signal says so — a running record whose process is
// alive, a trace written in the last 60 s, or no `session_end` and a write inside `live_grace`;
// a clock that reads earlier than the last write counts as "just written" (never dooms a session).

export type Liveness = 'live' | 'finished' | 'dead';
export type RunningProbe = 'alive' | 'dead' | 'none';

/** A trace written this recently is live even after `session_end` (teardown still writing). */
export const TEARDOWN_WINDOW_MS = 60_000;

export interface LivenessInput {
  running: RunningProbe;
  /** mtime of trace.jsonl, or of the session directory when there is no readable trace. */
  lastWriteMs: number;
  /** undefined when the trace could not be read (then only a finished trace can prove death). */
  hasSessionEnd: boolean | undefined;
}

/** Which test made a session live: a running record, a write in the last 60 s, a write within live_grace without session_end. */
export type LiveTest = 'running_record' | 'recent_write' | 'live_grace';

export interface LivenessVerdict {
  state: Liveness;
  why: string;
  /** set when live: the test that made it so */
  test?: LiveTest;
}

export function judgeLiveness(input: LivenessInput, nowMs: number, liveGraceMs: number): LivenessVerdict {
  if (input.running === 'alive')
    return { state: 'live', why: 'its running record names a live process', test: 'running_record' };
  const sinceWrite = nowMs - input.lastWriteMs;
  if (sinceWrite < TEARDOWN_WINDOW_MS)
    return { state: 'live', why: 'its trace was written in the last 60 s', test: 'recent_write' };
  if (input.hasSessionEnd === true) return { state: 'finished', why: 'its trace has session_end' };
  if (sinceWrite < liveGraceMs) {
    return { state: 'live', why: 'its trace has no session_end and was written within live_grace', test: 'live_grace' };
  }
  return { state: 'dead', why: 'no session_end and no write within live_grace' };
}
