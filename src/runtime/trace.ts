// The trace (`trace.jsonl`) lines murmur-gc reads and writes, pure.
// Guarantees:
// - Every line built here starts with the five common fields in the order of docs/design.md §R8
//   (event_type, event_id, parent_id, session_id, timestamp) and is compact JSON + '\n'.
// - Field order of `retention`, `shell_lost`, `task_start`, `task_end`, `session_start`,
//   `session_end` follows docs/design.md §R8, §R9 exactly; optional keys are omitted, never null
//   (except `parent_id: null` on session_start and `messages_dropped` only for max_messages).
// - Reading (`TraceAccumulator.addLine`) is the runtime's reader (`detached_reconcile.rs`): each
//   line is read as serde_json reads it (src/json/scan.ts: last duplicate key wins, depth
//   128, no lone surrogates, no out-of-range numbers); a trace that is not valid UTF-8 anywhere is
//   unreadable to the runtime, so nothing in it is reconciled (its contexts still count for
//   liveness: that only ever keeps more); the last `session_start` is the parent — when its
//   `event_id` is not a string there is none, whatever came before, and `shell_lost` omits
//   `parent_id` (docs/design.md §R9); lost work is
//   ordered by the bytes of its id; `detached_at_ms` is the `shell_detached` line's `timestamp`
//   when it is a u64, else 0, kept digit for digit.
// - What a summary keeps of a trace is bounded whatever the trace holds (docs/limits.md): ids of
//   at most MAX_ID_BYTES, line offsets and counts — never a `binary` or `command`, which
//   reconciliation reads again from the `shell_detached` line itself (`detachedLine`) — and at most
//   MAX_LOST_PER_TRACE unaccounted works (`unaccountedMore` says more wait for a later sweep).
//   Where a cap changes a verdict it only ever reports less (a work id over the cap is not
//   reconciled, a task id over it joins nothing: untrusted), never a work that was accounted for.

import { isUtf8 } from 'node:buffer';
import { stringifyExact } from '../json/exact.js';
import { JsonScanner, T_OBJECT, T_STRING, jsonKeys, spanString, spanU64, type Span } from '../json/scan.js';
import { CANONICAL, VALUE, stringBytes, writeString } from '../json/string-bytes.js';

export type RetentionStore = 'sessions' | 'records';
/**
 * The runtime's three reasons, then murmur-gc's disk budgets (`max_bytes`, `keep_free`), then
 * `manual`: a context removed by hand (`murmur-gc conversation rm`; its line carries
 * `"trigger":"manual_cli"`, as does a `conversation truncate`, whose reason is `max_messages`).
 */
export type RetentionReason =
  'max_sessions' | 'max_age' | 'max_messages' | 'max_bytes' | 'keep_free' | 'children_max_age' | 'manual';
/** The field murmur-gc adds to a `retention` line for an action an operator ran by hand. */
export type RetentionTrigger = 'manual_cli';
export const MANUAL_TRIGGER: RetentionTrigger = 'manual_cli';
export type Trust = 'trusted' | 'untrusted';

/** The runtime's order of retention lines (runtime.rs::apply_retention). */
export const RETENTION_ORDER: ReadonlyArray<readonly [RetentionStore, RetentionReason]> = [
  ['sessions', 'max_sessions'],
  ['sessions', 'max_age'],
  ['records', 'max_age'],
  ['records', 'max_messages'],
  // murmur-gc's disk budgets act after age and count, sessions before records (src/plan/budget.ts).
  ['sessions', 'max_bytes'],
  ['sessions', 'keep_free'],
  // orphaned child workdirs beside a workdir's sessions root (`children: { max_age }`)
  ['sessions', 'children_max_age'],
  ['records', 'max_bytes'],
  ['records', 'keep_free'],
  // by hand (conversation rm): only ever alone in a murmur-gc audit session of its own
  ['records', 'manual'],
];

function line(obj: Record<string, unknown>): string {
  return stringifyExact(obj) + '\n';
}

interface Common {
  eventId: string;
  parentId: string | null;
  sessionId: string;
  timestamp: number;
}

function common(type: string, c: Common): Record<string, unknown> {
  return {
    event_type: type,
    event_id: c.eventId,
    parent_id: c.parentId,
    session_id: c.sessionId,
    timestamp: c.timestamp,
  };
}

export function sessionStartLine(c: Omit<Common, 'parentId'>, capsuleName: string, capsuleVersion: string): string {
  return line({
    ...common('session_start', { ...c, parentId: null }),
    capsule_name: capsuleName,
    capsule_version: capsuleVersion,
    resumed_from: null,
    context_id: null,
  });
}

export function retentionLine(
  c: Common,
  store: RetentionStore,
  reason: RetentionReason,
  targets: string[],
  messagesDropped?: number,
  trigger?: RetentionTrigger,
): string {
  const o: Record<string, unknown> = { ...common('retention', c), store, reason, removed: targets.length, targets };
  if (reason === 'max_messages') o['messages_dropped'] = messagesDropped ?? 0;
  // murmur-gc's one added field, last, only on actions run by hand (the runtime's schema otherwise).
  if (trigger !== undefined) o['trigger'] = trigger;
  return line(o);
}

/**
 * murmur-gc's own event (its audit trail only; the runtime writes no such line): held items of
 * one store deleted for good, by one reason (`expired`: the undo window passed; `max_bytes`,
 * `keep_free`: a disk budget took the quarantine first). `kinds` parallels `targets`.
 */
export function quarantinePurgeLine(
  c: Common,
  store: RetentionStore,
  reason: string,
  targets: string[],
  kinds: string[],
): string {
  return line({ ...common('quarantine_purge', c), store, reason, removed: targets.length, targets, kinds });
}

/**
 * murmur-gc's own event: one held item put back by `murmur-gc restore`. `held` is session,
 * context or truncation; `messages_restored` only for truncations.
 */
export function quarantineRestoreLine(
  c: Common,
  r: { store: RetentionStore; held: string; target: string; origin: string; messagesRestored?: number },
): string {
  const o: Record<string, unknown> = {
    ...common('quarantine_restore', c),
    store: r.store,
    held: r.held,
    target: r.target,
    origin: r.origin,
  };
  if (r.messagesRestored !== undefined) o['messages_restored'] = r.messagesRestored;
  return line(o);
}

/**
 * murmur-gc's own event: an item put on the protection list or taken off it (`change` protect or
 * release; `by` restore when `murmur-gc restore` protected what it put back, else protect/release).
 */
export function protectionLine(
  c: Common,
  p: { change: 'protect' | 'release'; store: RetentionStore; target: string; origin: string; by: string },
): string {
  return line({
    ...common('protection', c),
    change: p.change,
    store: p.store,
    target: p.target,
    origin: p.origin,
    by: p.by,
  });
}

export interface LostWorkLine {
  workId: string;
  binary: string;
  command: string;
  detachedAtMs: number;
  /** The exact u64 digits of `detached_at_ms` (wins over `detachedAtMs` when present). */
  detachedAtText?: string;
}

function detachedAt(w: LostWorkLine): bigint {
  if (w.detachedAtText !== undefined && /^(?:0|[1-9][0-9]{0,19})$/.test(w.detachedAtText))
    return BigInt(w.detachedAtText);
  return Number.isSafeInteger(w.detachedAtMs) && w.detachedAtMs >= 0 ? BigInt(w.detachedAtMs) : 0n;
}

/** `shell_lost`, appended to the trace of the session that started the command. */
export function shellLostLine(
  c: { eventId: string; parentId: string | undefined; sessionId: string; timestamp: number },
  work: LostWorkLine,
  reconciledBySession: string,
  reconciledTaskId: string,
): string {
  const o: Record<string, unknown> = { event_type: 'shell_lost', event_id: c.eventId };
  if (c.parentId !== undefined) o['parent_id'] = c.parentId;
  o['session_id'] = c.sessionId;
  o['timestamp'] = c.timestamp;
  o['work_id'] = work.workId;
  o['binary'] = work.binary;
  o['command'] = work.command;
  o['detached_at_ms'] = detachedAt(work);
  o['reconciled_by_session'] = reconciledBySession;
  o['reconciled_task_id'] = reconciledTaskId;
  return line(o);
}

/** Placeholders `shellLostLineBytes` builds the line around, with the keys before them (JSON writes NUL as `\u0000`). */
const SPLICES = [
  ['parent_id', '\u0000P'],
  ['binary', '\u0000B'],
  ['command', '\u0000C'],
] as const;

/**
 * `shellLostLine` as bytes, byte for byte, with the `parent_id` (its JSON text, or undefined: none),
 * `binary` and `command` written from the lines they were read from (LineString.writeJson: a
 * command of tens of MiB is never decoded nor held twice), into `scratch` (grown as needed; the
 * result is a view of it, valid until it is used again).
 */
export function shellLostLineBytes(
  c: { eventId: string; parentJson: Buffer | undefined; sessionId: string; timestamp: number },
  work: { workId: string; binary: LineString; command: LineString; detachedAtMs: number; detachedAtText?: string },
  reconciledBySession: string,
  reconciledTaskId: string,
  scratch: Scratch,
): Buffer {
  const marked = {
    workId: work.workId,
    binary: SPLICES[1][1],
    command: SPLICES[2][1],
    detachedAtMs: work.detachedAtMs,
    ...(work.detachedAtText === undefined ? {} : { detachedAtText: work.detachedAtText }),
  };
  const text = shellLostLine(
    {
      eventId: c.eventId,
      parentId: c.parentJson ? SPLICES[0][1] : undefined,
      sessionId: c.sessionId,
      timestamp: c.timestamp,
    },
    marked,
    reconciledBySession,
    reconciledTaskId,
  );
  const parts: (string | Buffer | LineString)[] = [];
  let from = 0;
  for (const [key, mark] of SPLICES) {
    if (key === 'parent_id' && !c.parentJson) continue;
    // (a quote inside a value is written escaped: `"key":"<mark>"` is found only where the key is)
    const value = JSON.stringify(mark);
    const at = text.indexOf(`"${key}":${value}`, from) + key.length + 3;
    parts.push(
      text.slice(from, at),
      key === 'parent_id' ? (c.parentJson as Buffer) : key === 'binary' ? work.binary : work.command,
    );
    from = at + value.length;
  }
  parts.push(text.slice(from));
  let n = 0;
  for (const p of parts)
    n += typeof p === 'string' ? 3 * p.length : p instanceof LineString ? p.jsonBytesAtMost : p.length;
  const out = scratchOf(scratch, n);
  let at = 0;
  for (const p of parts)
    at += typeof p === 'string' ? out.write(p, at) : p instanceof LineString ? p.writeJson(out, at) : p.copy(out, at);
  return out.subarray(0, at);
}

export function taskStartLine(
  c: Common,
  t: { taskId: string; contextId: string; trust: Trust; messagePartsBytes: number },
): string {
  return line({
    ...common('task_start', c),
    task_id: t.taskId,
    context_id: t.contextId,
    source: 'detached_lost',
    origin: 'completion',
    trust: t.trust,
    lane: 'bg',
    message_parts_bytes: t.messagePartsBytes,
  });
}

export function taskEndLine(c: Common, taskId: string, exitStatus: 'ok' | 'failed', durationMs: number): string {
  return line({
    ...common('task_end', c),
    task_id: taskId,
    exit_status: exitStatus,
    duration_ms: durationMs,
    turns: 0,
    input_tokens: 0,
    output_tokens: 0,
    tool_calls: 0,
    shell_calls: 0,
    reopen_count: 0,
  });
}

export function sessionEndLine(c: Common, durationMs: number, exitStatus: 'ok' | 'failed' | 'canceled'): string {
  return line({
    ...common('session_end', c),
    total_turns: 0,
    total_input_tokens: 0,
    total_output_tokens: 0,
    total_tool_calls: 0,
    total_shell_calls: 0,
    duration_ms: durationMs,
    exit_status: exitStatus,
  });
}

/**
 * The text a `detached_lost` task carries (docs/design.md §R9; the runtime's `LostReport::message_text`).
 * murmur-gc does not enqueue it anywhere; its byte length is the task's `message_parts_bytes`,
 * and the same facts are shown to the operator.
 */
export function lostReportText(sessionId: string, works: LostWorkLine[]): string {
  const parts = [
    'Background shell commands from an earlier session were never accounted for.',
    '',
    `Session ${sessionId} ended without recording how they finished: no exit code, no output and no log file exists for them, so whether they completed is unknown.`,
  ];
  for (const w of works) {
    parts.push(
      '',
      `work_id: ${w.workId}`,
      `binary: ${w.binary}`,
      `command: ${w.command}`,
      `detached_at_ms: ${detachedAt(w)}`,
    );
  }
  parts.push('', 'None of them is known to have succeeded or failed; restart one only if its result still matters.');
  return parts.join('\n');
}

/** What `lostReportBytes` needs of one work: its id, the UTF-8 lengths of its binary and command, its time. */
export interface LostWorkSize {
  workId: string;
  binaryBytes: number;
  commandBytes: number;
  detachedAtMs: number;
  detachedAtText?: string;
}

/**
 * `Buffer.byteLength(lostReportText(sessionId, works))` without building the text (a command may
 * be tens of MiB): the task's `message_parts_bytes` from the lengths alone.
 */
export function lostReportBytes(sessionId: string, works: readonly LostWorkSize[]): number {
  const head = lostReportText(sessionId, []);
  let n = Buffer.byteLength(head);
  for (const w of works) {
    // '\n\nwork_id: ' id '\nbinary: ' b '\ncommand: ' c '\ndetached_at_ms: ' n
    n +=
      2 +
      9 +
      Buffer.byteLength(w.workId) +
      9 +
      w.binaryBytes +
      10 +
      w.commandBytes +
      17 +
      detachedAt({ ...w, binary: '', command: '' }).toString().length;
  }
  return n;
}

// ---- reading ---------------------------------------------------------------------------------

/** Where a line is in the trace: its first byte's offset and its length (without its `\n`). */
export interface LineAt {
  at: number;
  length: number;
}

/**
 * An unaccounted `shell_detached` as a summary keeps it: ids and where its line is, never its
 * `binary` or `command` (a capsule writes them, of any length). Reconciliation reads the line
 * again (`detachedLine`) when it writes the `shell_lost` that repeats them.
 */
export interface DetachedWork extends LineAt {
  workId: string;
  /** `Number(detachedAtText)`: for display (may round above 2^53). */
  detachedAtMs: number;
  /** The exact u64 digits written back in `shell_lost.detached_at_ms`. */
  detachedAtText: string;
  taskId: string | null;
}

/** What the sweep needs from one session's trace. Serializable (it is cached). Bounded whatever the trace holds. */
export interface TraceSummary {
  /** The last `session_start` line (undefined: none): `shell_lost`'s parent is its `event_id` (`sessionStartEventId`). */
  sessionStart: LineAt | undefined;
  /** session_start.context_id and every task_start.context_id, deduplicated, in order seen. */
  contextIds: string[];
  hasSessionEnd: boolean;
  /** task_id → trust, only for tasks that own unaccounted work (filled by finishSummary). */
  taskTrust: Record<string, Trust>;
  /**
   * shell_detached lines with no completed/abandoned/lost line, keyed by work id (byte order of
   * the id): at most MAX_LOST_PER_TRACE of them.
   */
  unaccounted: DetachedWork[];
  /** True when the trace holds unaccounted work beyond `unaccounted` (a later sweep takes it). */
  unaccountedMore?: boolean;
  /** True when the file ends with '\n' (or is empty). */
  endsWithNewline: boolean;
  /**
   * Lines parsed that did not parse (torn tail, garbage). Counted, never fatal; a line skipped
   * for its event type (LineFilter) is not parsed, so not counted however it ends.
   */
  invalidLines: number;
  /** False when the trace is not valid UTF-8: the runtime cannot read it, nothing is reconciled. */
  utf8?: boolean;
  /**
   * Every well-formed `wrk_` id a `shell_detached|completed|abandoned|lost` line names, sorted
   * (absent when none): the `W/logs/<id>.log` files this session's runtime wrote (docs/design.md §R11).
   */
  workIds?: string[];
  /** Each `delegation_start` with a string `child_workdir`, in order (absent when none; §R11). */
  delegations?: Delegation[];
}

/** A sub-capsule launch a session's trace records (docs/design.md §R11). */
export interface Delegation {
  delegationId: string;
  /** as written: relative to the accessible workdir W (`.murmur/children/<name>`); not yet checked */
  childWorkdir: string;
  /** a later `delegation` or `delegation_late` line names the same `delegation_id` */
  ended: boolean;
}

/** `wrk_` + 32 lowercase hex: the only names murmur-gc ever turns into a `logs/<id>.log` path. */
export function isWorkId(s: string): boolean {
  return /^wrk_[0-9a-f]{32}$/.test(s);
}

/**
 * The longest id a summary keeps (UTF-8 bytes): NAME_MAX, the longest directory entry name, so a
 * longer context id names no record. The runtime mints 36-byte ids; a longer work id is not
 * reconciled by murmur-gc (left to the runtime's own resume), a longer task id joins no task (its
 * work counts as untrusted), a longer delegation id is never ended by a line (docs/limits.md).
 */
export const MAX_ID_BYTES = 255;
/** A `child_workdir` longer than PATH_MAX names nothing: kept as '' (refused, `child_workdir_outside`). */
export const MAX_CHILD_WORKDIR_BYTES = 4096;
/** Unaccounted work kept per trace (docs/limits.md): the rest waits for later sweeps (`unaccountedMore`). */
export const MAX_LOST_PER_TRACE = 4096;
/** Unaccounted work one sweep holds and reconciles across all its traces (LostQuota): the rest waits. */
export const MAX_LOST_PER_SWEEP = 16_384;

/**
 * How much unaccounted work a sweep still holds: each trace's summary as the scan keeps it is cut
 * to what is left (`unaccountedMore` then says the rest waits for a later sweep). The cache keeps
 * the whole summary; only what this sweep holds is cut.
 */
export class LostQuota {
  constructor(private left = MAX_LOST_PER_SWEEP) {}
  /** `s` as the sweep keeps it: itself when the quota covers its unaccounted work, else cut. */
  take(s: TraceSummary): TraceSummary {
    const n = s.unaccounted.length;
    if (n === 0) return s;
    if (n <= this.left) {
      this.left -= n;
      return s;
    }
    const kept = s.unaccounted.slice(0, this.left);
    this.left = 0;
    return { ...s, unaccounted: kept, unaccountedMore: true };
  }
}

/**
 * Accounted work ids remembered while a trace is read; past it (a trace naming more), a second
 * pass checks the kept unaccounted ids against every accounting line again.
 */
export const MAX_ACCOUNTED_IDS = 262_144;
/** Tasks whose trust is remembered; a kept work's task not among them (only past it) counts as untrusted. */
export const MAX_TRUST_TASKS = 65_536;

/**
 * Distinct context ids, `wrk_` ids or delegations one trace may name (each): a trace naming more is
 * not judged (`too_many_ids`, as a trace with an overlong line: its session is judged by its mtime).
 */
export const MAX_NAMED_IDS = 100_000;

/** The caps a TraceAccumulator keeps to (the constants above; a test may make them small). */
export interface TraceLimits {
  lost: number;
  accounted: number;
  trust: number;
  named: number;
}
const LIMITS: TraceLimits = {
  lost: MAX_LOST_PER_TRACE,
  accounted: MAX_ACCOUNTED_IDS,
  trust: MAX_TRUST_TASKS,
  named: MAX_NAMED_IDS,
};

/** A string longer than the cap (see boundedString). */
const TOO_LONG = Symbol('too long');

/**
 * The decoded string of a span when it is a string of at most `maxBytes` UTF-8 bytes; TOO_LONG for
 * a longer string (decoded only when its escapes could make it short enough: an escape is at most 6
 * bytes for 1); undefined when the span is not a string.
 */
function boundedString(buf: Buffer, s: Span, maxBytes: number): string | undefined | typeof TOO_LONG {
  if (s.type !== T_STRING) return undefined;
  const raw = s.end - s.start - 2;
  if (raw > (s.escaped ? 6 * maxBytes : maxBytes)) return TOO_LONG;
  const v = spanString(buf, s) as string;
  return s.escaped && Buffer.byteLength(v) > maxBytes ? TOO_LONG : v;
}

/** A string id of at most MAX_ID_BYTES, else undefined (not a string, or longer). */
function idOf(buf: Buffer, s: Span): string | undefined {
  const v = boundedString(buf, s, MAX_ID_BYTES);
  return v === TOO_LONG ? undefined : v;
}

/** A set of event types asked about by a type's place in a text, not by a string made of it. */
export interface WantedTypes {
  /** text[from, to) is one of the types. */
  hasAt(text: string, from: number, to: number): boolean;
}

/** Event type names, looked up by length first: most lines' types are not a wanted length. */
class TypeNames implements WantedTypes {
  private readonly byLength: (string[] | undefined)[] = [];

  constructor(names: readonly string[]) {
    for (const n of names) {
      const same = this.byLength[n.length];
      if (same) same.push(n);
      else this.byLength[n.length] = [n];
    }
  }

  hasAt(text: string, from: number, to: number): boolean {
    const names = this.byLength[to - from];
    if (names === undefined) return false;
    for (const n of names) if (text.startsWith(n, from)) return true;
    return false;
  }
}

/**
 * How the second pass over a trace works (see TraceAccumulator.secondPass): `fill` rebuilds the
 * kept work from every detached line whose id is not accounted (the accounted ids are all known);
 * `verify` keeps the first pass's work and drops what an accounting line names (they are not).
 */
type Pass =
  | { kind: 'first' }
  | { kind: 'fill'; accounted: ReadonlySet<string> }
  | { kind: 'verify'; kept: Map<string, DetachedWork> };

/**
 * Mutable accumulator used while scanning one trace. What it holds is bounded whatever the trace
 * holds: ids (each at most MAX_ID_BYTES), offsets and counts — never a command — and at most
 * MAX_LOST_PER_TRACE unaccounted works, MAX_ACCOUNTED_IDS accounted ids, MAX_TRUST_TASKS tasks and
 * MAX_NAMED_IDS context ids, `wrk_` ids and delegations each (past that, `tooMany`: the caller
 * stops and does not judge the trace). docs/limits.md.
 */
export class TraceAccumulator {
  private sessionStart: LineAt | undefined;
  private readonly contexts = new Set<string>();
  hasSessionEnd = false;
  private readonly trust = new Map<string, Trust>();
  private trustFull = false;
  /** unaccounted so far (first pass: not yet named by an accounting line), at most MAX_LOST_PER_TRACE */
  private readonly detached: Map<string, DetachedWork>;
  /** detached ids not kept (the map was full) */
  private more = false;
  private readonly accounted = new Set<string>();
  private accountedFull = false;
  private readonly workIds = new Set<string>();
  private readonly delegations = new Map<string, Delegation>();
  private readonly ended = new Set<string>();
  invalidLines = 0;
  /** What the trace names more of than MAX_NAMED_IDS (then it is not judged), or undefined. */
  tooMany: 'context ids' | 'work ids' | 'child workdirs' | undefined;

  constructor(
    private readonly limits: TraceLimits = LIMITS,
    private readonly pass: Pass = { kind: 'first' },
  ) {
    this.detached = pass.kind === 'verify' ? pass.kept : new Map<string, DetachedWork>();
  }

  /** Event types whose lines must be parsed; everything else is skipped without parsing. */
  static readonly WANTED = new TypeNames([
    'session_start',
    'session_end',
    'task_start',
    'shell_detached',
    'shell_completed',
    'shell_abandoned',
    'shell_lost',
    'delegation_start',
    'delegation',
    'delegation_late',
  ]);

  /** Lines a second pass parses (the rest it skips as the first pass does). */
  private static readonly SECOND = new TypeNames([
    'shell_detached',
    'shell_completed',
    'shell_abandoned',
    'shell_lost',
  ]);

  private utf8 = true;

  /** Finds a line's event type and what could respell it, in the text of the lines (see LineFilter). */
  private readonly filter = new LineFilter();

  /**
   * One line (without its `\n`) of the trace, as buf[start, end); `at`: the file offset of
   * buf[start]. Lines whose event type the sweep does not need are not parsed (only checked for UTF-8).
   */
  addLine(buf: Buffer, start: number, end: number, at = start): void {
    if (this.utf8 && !isUtf8(buf.subarray(start, end))) this.utf8 = false;
    if (start === end) return;
    // A line alone is not copied into a string (it may be the line cap's 32 MiB): its head is, and
    // what could respell it is searched for in its bytes.
    const head = buf.toString('latin1', start, Math.min(end, start + HEAD_BYTES));
    this.filter.reset(head);
    if (this.filter.peekSkippable(0, head.length, this.wantedTypes()) && !mayRespellBytes(buf, start, end)) return;
    this.parseLine(buf, start, end, at - start);
  }

  /**
   * Every line of buf[0, buf.length) — a whole trace, the last line unterminated unless the buffer
   * ends with `\n` — the same as `addLine` for each, but with one UTF-8 check for the whole (a
   * `\n` never falls inside a UTF-8 sequence, so the buffer is valid iff each line is), one
   * string made of its bytes for the whole, and no view made per line. `buf` is only read during
   * the call; buf[0] is at file offset 0. Returns whether it ends with `\n`.
   */
  addLines(buf: Buffer): boolean {
    if (this.utf8 && !isUtf8(buf)) this.utf8 = false;
    const text = buf.toString('latin1', 0, buf.length);
    this.filter.reset(text);
    let from = 0;
    while (from < text.length) {
      const nl = text.indexOf('\n', from);
      if (nl < 0) {
        this.line(buf, from, text.length, 0);
        return false;
      }
      this.line(buf, from, nl, 0);
      from = nl + 1;
    }
    return true;
  }

  /**
   * A line longer than the scan's line cap that cannot be a JSON object (src/runtime/jsonl.ts): no
   * event, an invalid line; `utf8` tells whether its bytes were valid UTF-8.
   */
  addOverlongLine(utf8: boolean): void {
    if (!utf8) this.utf8 = false;
    this.invalidLines++;
  }

  /** The event types this pass parses. */
  private wantedTypes(): WantedTypes {
    return this.pass.kind === 'first' ? TraceAccumulator.WANTED : TraceAccumulator.SECOND;
  }

  /**
   * buf[start, end) is a line at file offset `start + base`, at the same offsets in the filter's
   * text (addLines: the whole buffer's).
   */
  private line(buf: Buffer, start: number, end: number, base: number): void {
    if (start === end) return;
    if (this.filter.skippable(start, end, this.wantedTypes())) return;
    this.parseLine(buf, start, end, base);
  }

  /** buf[start, end), a line at file offset `start + base`, parsed and taken into the summary. */
  private parseLine(buf: Buffer, start: number, end: number, base: number): void {
    const second = this.pass.kind !== 'first';
    const f = scanEvent(buf, start, end);
    if (!f) {
      if (!second) this.invalidLines++;
      return;
    }
    const type = spanString(buf, f[K_EVENT_TYPE] as Span);
    if (second) {
      this.secondLine(type, buf, f, start + base, end - start);
      return;
    }
    switch (type) {
      case 'session_start': {
        // The last session_start decides, even one without a string event_id: then there is no
        // parent, and shell_lost omits parent_id. Its line is read again when one is written.
        this.sessionStart = { at: start + base, length: end - start };
        const ctx = idOf(buf, f[K_CONTEXT_ID] as Span);
        if (ctx !== undefined) this.context(ctx);
        break;
      }
      case 'session_end':
        this.hasSessionEnd = true;
        break;
      case 'task_start': {
        const ctx = idOf(buf, f[K_CONTEXT_ID] as Span);
        if (ctx !== undefined) this.context(ctx);
        const task = idOf(buf, f[K_TASK_ID] as Span);
        const trust = spanString(buf, f[K_TRUST] as Span);
        if (task !== undefined && (trust === 'trusted' || trust === 'untrusted')) {
          if (this.trust.size < this.limits.trust || this.trust.has(task)) this.trust.set(task, trust);
          else this.trustFull = true;
        }
        break;
      }
      case 'shell_detached': {
        const work = boundedString(buf, f[K_WORK_ID] as Span, MAX_ID_BYTES);
        // (a work id longer than MAX_ID_BYTES is left to the runtime's own resume)
        if (work === undefined || work === TOO_LONG) break;
        if (isWorkId(work)) this.workId(work);
        if (this.accounted.has(work)) break;
        this.keep(work, buf, f, start + base, end - start);
        break;
      }
      case 'shell_completed':
      case 'shell_abandoned':
      case 'shell_lost': {
        const work = idOf(buf, f[K_WORK_ID] as Span);
        if (work === undefined) break;
        if (isWorkId(work)) this.workId(work);
        this.detached.delete(work);
        if (this.accounted.size < this.limits.accounted) this.accounted.add(work);
        else if (!this.accounted.has(work)) this.accountedFull = true;
        break;
      }
      case 'delegation_start': {
        const id = boundedString(buf, f[K_DELEGATION_ID] as Span, MAX_ID_BYTES);
        const child = boundedString(buf, f[K_CHILD_WORKDIR] as Span, MAX_CHILD_WORKDIR_BYTES);
        if (id === undefined || child === undefined) break;
        // A longer id is kept under a key of its own that no delegation line matches (never ended by one).
        const key = id === TOO_LONG ? `\u0000${start + base}` : id;
        this.delegations.set(key, {
          delegationId: id === TOO_LONG ? '' : id,
          childWorkdir: child === TOO_LONG ? '' : child,
          ended: false,
        });
        if (this.delegations.size > this.limits.named) this.tooMany ??= 'child workdirs';
        break;
      }
      case 'delegation':
      case 'delegation_late': {
        const id = idOf(buf, f[K_DELEGATION_ID] as Span);
        if (id !== undefined) this.ended.add(id);
        break;
      }
      default:
        break;
    }
  }

  private context(id: string): void {
    this.contexts.add(id);
    if (this.contexts.size > this.limits.named) this.tooMany ??= 'context ids';
  }

  private workId(id: string): void {
    this.workIds.add(id);
    if (this.workIds.size > this.limits.named) this.tooMany ??= 'work ids';
  }

  /** A second pass's line: `fill` keeps unaccounted detached work again, `verify` drops what an outcome names. */
  private secondLine(type: string | undefined, buf: Buffer, f: Span[], at: number, length: number): void {
    const pass = this.pass;
    if (type === 'shell_detached' && pass.kind === 'fill') {
      const work = idOf(buf, f[K_WORK_ID] as Span);
      if (work !== undefined && !pass.accounted.has(work)) this.keep(work, buf, f, at, length);
    } else if (
      (type === 'shell_completed' || type === 'shell_abandoned' || type === 'shell_lost') &&
      pass.kind === 'verify'
    ) {
      const work = idOf(buf, f[K_WORK_ID] as Span);
      if (work !== undefined) this.detached.delete(work);
    }
  }

  /** Keep (or update: the last detached line of an id wins) one detached work, while there is room. */
  private keep(work: string, buf: Buffer, f: Span[], at: number, length: number): void {
    if (!this.detached.has(work) && this.detached.size >= this.limits.lost) {
      this.more = true;
      return;
    }
    const stamp = spanU64(buf, f[K_TIMESTAMP] as Span) ?? 0n;
    this.detached.set(work, {
      workId: work,
      detachedAtMs: Number(stamp),
      detachedAtText: stamp.toString(),
      taskId: idOf(buf, f[K_TASK_ID] as Span) ?? null,
      at,
      length,
    });
  }

  /**
   * After `finish`: the second pass over the same lines that makes the kept work exact, or
   * undefined when none is needed. `fill`: some detached ids were not kept and fewer than the cap
   * are left (every accounted id is known, so the pass keeps exactly the first unaccounted ones);
   * `verify`: more accounted ids than MAX_ACCOUNTED_IDS were named and some work is kept (a
   * detached id kept may be accounted by a line read before it was, no longer remembered).
   */
  secondPass(): TraceAccumulator | undefined {
    if (!this.utf8) return undefined;
    if (this.accountedFull)
      return this.detached.size
        ? new TraceAccumulator(this.limits, { kind: 'verify', kept: new Map(this.detached) })
        : undefined;
    if (this.more && this.detached.size < this.limits.lost)
      return new TraceAccumulator(this.limits, { kind: 'fill', accounted: this.accounted });
    return undefined;
  }

  /** The summary, with the work a second pass (`again`, fed the same lines) made exact. */
  finish(endsWithNewline: boolean, again?: TraceAccumulator): TraceSummary {
    const works = again ? again.detached : this.detached;
    const more = again?.pass.kind === 'fill' ? again.more : this.more;
    // A trace the runtime cannot read (not UTF-8) reports nothing; lost work in id byte order.
    const unaccounted = this.utf8
      ? [...works.values()].sort((a, b) => Buffer.compare(Buffer.from(a.workId), Buffer.from(b.workId)))
      : [];
    const taskTrust: Record<string, Trust> = {};
    for (const w of unaccounted) {
      if (w.taskId !== null) {
        const tr = this.trust.get(w.taskId);
        if (tr) taskTrust[w.taskId] = tr;
      }
    }
    const delegations = [...this.delegations].map(([key, d]) => ({
      ...d,
      ended: key.charCodeAt(0) !== 0 && this.ended.has(key),
    }));
    return {
      sessionStart: this.sessionStart,
      contextIds: [...this.contexts],
      hasSessionEnd: this.hasSessionEnd,
      taskTrust,
      unaccounted,
      ...(this.utf8 && more ? { unaccountedMore: true } : {}),
      endsWithNewline,
      invalidLines: this.invalidLines,
      utf8: this.utf8,
      ...(this.workIds.size ? { workIds: [...this.workIds].sort() } : {}),
      ...(delegations.length ? { delegations } : {}),
    };
  }
}

/** Lowest trust across the work a report names; an unjoinable task makes it untrusted. */
export function lowestTrust(summary: TraceSummary, works: readonly { taskId: string | null }[]): Trust {
  for (const w of works) {
    if (w.taskId === null) return 'untrusted';
    if (summary.taskTrust[w.taskId] !== 'trusted') return 'untrusted';
  }
  return 'trusted';
}

/** The fields of a trace line the sweep reads, when it is a JSON object (undefined otherwise). */
function scanEvent(buf: Buffer, start: number, end: number): Span[] | undefined {
  const sc = lineScanner;
  return sc.scan(buf, start, end, TRACE_KEYS) && sc.top === T_OBJECT ? sc.fields : undefined;
}

/** Characters of a binary or command shown whole; a longer one is shown by its ends and its length. */
export const SHOWN_CHARS = 100;
const HEAD_CHARS = 60;
const TAIL_CHARS = 30;

/**
 * What the report, `--json` and the logs show of a capsule's `binary` or `command` (docs/json.md):
 * itself when it has at most SHOWN_CHARS characters (code points), else its first 60 and last 30
 * around `…[<its UTF-8 length> bytes]…`. Never longer than ~120 characters, whatever it holds.
 * `head` and `tail`: at least its first and last 120 characters (all of it when shorter).
 */
export function shownText(head: string, tail: string, whole: boolean, bytes: number): string {
  if (whole) {
    let n = 0;
    for (const _ of head) if (++n > SHOWN_CHARS) break;
    if (n <= SHOWN_CHARS) return head;
  }
  // (a surrogate pair cut at a slice's end is beyond the characters kept)
  const h = Array.from(head.slice(0, 2 * HEAD_CHARS))
    .slice(0, HEAD_CHARS)
    .join('');
  const t = Array.from(tail.slice(-2 * TAIL_CHARS))
    .slice(-TAIL_CHARS)
    .join('');
  return `${h}…[${bytes} bytes]…${t}`;
}

/** The bytes of the first and last 120 characters a string's value could need (4 bytes a character). */
const ENDS_BYTES = 4 * 2 * HEAD_CHARS;

/** A buffer a caller lends for scratch work, grown as needed and kept for the next use. */
export interface Scratch {
  buf: Buffer;
}

function scratchOf(s: Scratch, n: number): Buffer {
  if (s.buf.length < n) s.buf = Buffer.allocUnsafe(Math.max(n, 2 * s.buf.length, 64 << 10));
  return s.buf;
}

/**
 * A string field of a line read again (its bytes must stay as they are while it is used): its
 * length, its bounded form and its JSON text, never decoded whole into a JS string (a command may
 * be tens of MiB; src/json/string-bytes.ts counts and writes it from the bytes). A field that is
 * absent or not a string is "" (the runtime's default).
 */
export class LineString {
  private readonly span: Span | undefined;
  constructor(
    private readonly buf: Buffer,
    span: Span | undefined,
  ) {
    this.span = span?.type === T_STRING ? span : undefined;
  }

  /** its UTF-8 length, once counted */
  private length: number | undefined;

  /** Its UTF-8 length. */
  get bytes(): number {
    const s = this.span;
    if (!s) return 0;
    return (this.length ??= s.escaped ? stringBytes(this.buf, s.start + 1, s.end - 1, VALUE) : s.end - s.start - 2);
  }

  /** At least the length of its JSON text (quotes included): the bytes it was read from (an escape is never written longer). */
  get jsonBytesAtMost(): number {
    return this.span ? this.span.end - this.span.start : 2;
  }

  /** Writes its JSON text, as JSON.stringify and serde_json write it, at out[at] (out holds `jsonBytesAtMost` more); returns how many bytes. */
  writeJson(out: Buffer, at: number): number {
    const s = this.span;
    out[at] = 0x22;
    // (a string with no escape holds no quote, backslash or control character: JSON writes it as it is)
    const n = !s
      ? 0
      : s.escaped
        ? writeString(this.buf, s.start + 1, s.end - 1, CANONICAL, out, at + 1)
        : this.buf.copy(out, at + 1, s.start + 1, s.end - 1);
    out[at + 1 + n] = 0x22;
    return n + 2;
  }

  /** Its value (for a short string; a long one is never needed whole). */
  value(scratch: Scratch = { buf: Buffer.alloc(0) }): string {
    const s = this.span;
    if (!s) return '';
    if (!s.escaped) return this.buf.toString('utf8', s.start + 1, s.end - 1);
    const out = scratchOf(scratch, s.end - s.start);
    return out.toString('utf8', 0, writeString(this.buf, s.start + 1, s.end - 1, VALUE, out, 0));
  }

  /** Its bounded form (shownText); `scratch` holds the value of an escaped one while it is cut. */
  shown(scratch: Scratch = { buf: Buffer.alloc(0) }): string {
    const s = this.span;
    if (!s) return '';
    let src = this.buf;
    let from = s.start + 1;
    let to = s.end - 1;
    if (s.escaped) {
      src = scratchOf(scratch, to - from);
      to = this.length = writeString(this.buf, from, to, VALUE, src, 0);
      from = 0;
    }
    if (to - from <= ENDS_BYTES) {
      const v = src.toString('utf8', from, to);
      return shownText(v, v, true, to - from);
    }
    // (a character cut at either end decodes as U+FFFD there, beyond the characters shown)
    return shownText(
      src.toString('utf8', from, from + ENDS_BYTES),
      src.toString('utf8', to - ENDS_BYTES, to),
      false,
      to - from,
    );
  }
}

/** A `shell_detached` line read again when its `shell_lost` is written (see `detachedLine`). */
export interface DetachedLine {
  workId: string;
  binary: LineString;
  command: LineString;
  detachedAtMs: number;
  detachedAtText: string;
  taskId: string | null;
}

/**
 * The `shell_detached` line `line` (its bytes without `\n`, as the scan saw them; they must stay
 * as they are while the result is used) as the runtime reads it — `binary` and `command` default
 * to "" — or undefined when it is not a shell_detached line with a string `work_id` (then the
 * trace changed since it was scanned). Its event type is judged as the scan judges it (the last
 * `event_type` key wins).
 */
export function detachedLine(line: Buffer): DetachedLine | undefined {
  if (!isUtf8(line)) return undefined;
  const f = scanEvent(line, 0, line.length);
  if (!f || spanString(line, f[K_EVENT_TYPE] as Span) !== 'shell_detached') return undefined;
  const workId = spanString(line, f[K_WORK_ID] as Span);
  if (workId === undefined) return undefined;
  const stamp = spanU64(line, f[K_TIMESTAMP] as Span) ?? 0n;
  return {
    workId,
    binary: new LineString(line, { ...(f[K_BINARY] as Span) }),
    command: new LineString(line, { ...(f[K_COMMAND] as Span) }),
    detachedAtMs: Number(stamp),
    detachedAtText: stamp.toString(),
    taskId: spanString(line, f[K_TASK_ID] as Span) ?? null,
  };
}

/**
 * The JSON text of the `event_id` of the `session_start` line `line` (a copy: the parent of each
 * `shell_lost`), undefined when it has none that is a string, `false` when the line is not a
 * session_start line (the trace changed since it was scanned).
 */
export function sessionStartParentJson(line: Buffer): Buffer | undefined | false {
  if (!isUtf8(line)) return false;
  const f = scanEvent(line, 0, line.length);
  if (!f || spanString(line, f[K_EVENT_TYPE] as Span) !== 'session_start') return false;
  if ((f[K_EVENT_ID] as Span).type !== T_STRING) return undefined;
  const id = new LineString(line, { ...(f[K_EVENT_ID] as Span) });
  const out = Buffer.allocUnsafe(id.jsonBytesAtMost);
  return out.subarray(0, id.writeJson(out, 0));
}

/**
 * The `event_id` of the `session_start` line `line` (undefined: it has none that is a string),
 * or `false` when the line is not a session_start line (the trace changed since it was scanned).
 */
export function sessionStartEventId(line: Buffer): string | undefined | false {
  if (!isUtf8(line)) return false;
  const f = scanEvent(line, 0, line.length);
  if (!f || spanString(line, f[K_EVENT_TYPE] as Span) !== 'session_start') return false;
  return spanString(line, f[K_EVENT_ID] as Span);
}

/** The first bytes of a line in which its event type is looked for without parsing it. */
const HEAD_BYTES = 64;
const EVENT_TYPE_PREFIX = '"event_type":"';
const EVENT_TYPE_KEY = '"event_type"';
const ESCAPE_U = '\\u';

/**
 * Which lines of a text need no parse: those whose event type, read from their first bytes, is
 * not wanted, and which could not name another one — no second `"event_type"` key (the last one
 * wins) and no `\u` escape (a key spelled with escapes). The text is the lines' bytes as latin1
 * (one character per byte, so its offsets are the bytes'); lines are asked about in increasing
 * order, so each needle's next occurrence is remembered and searched for again only once a line
 * has passed it: the whole text is searched about once per needle, whatever the lines hold.
 * The type is read after the line's first `"event_type"` only: where that key is not followed by
 * `:"`, any `"event_type":"` later in the line is a second key, and the line is parsed either way.
 */
class LineFilter {
  private text = '';
  private readonly key = new NeedleCursor(EVENT_TYPE_KEY, 2);
  private readonly esc = new NeedleCursor(ESCAPE_U);

  /** Start on `text` (a new text: nothing remembered of the last one holds). */
  reset(text: string): void {
    this.text = text;
    this.key.reset(text);
    this.esc.reset(text);
  }

  /** text[start, end) is a line that needs no parse. */
  skippable(start: number, end: number, wanted: WantedTypes): boolean {
    return this.peekSkippable(start, end, wanted) && !this.mayRespell(start, end);
  }

  /** The event type peeked in text[start, end)'s head is known and not `wanted`. */
  peekSkippable(start: number, end: number, wanted: WantedTypes): boolean {
    const first = this.key.next(start);
    const text = this.text;
    const colon = first + EVENT_TYPE_KEY.length;
    const prefixAt = text.charCodeAt(colon) === 0x3a && text.charCodeAt(colon + 1) === 0x22 ? first : text.length; // `:"`
    const from = prefixAt + EVENT_TYPE_PREFIX.length;
    const quote = peekEnd(text, start, end, prefixAt);
    return quote >= 0 && !wanted.hasAt(text, from, quote);
  }

  /** text[start, end) could name its event type other than by its first `"event_type":"…"`. */
  private mayRespell(start: number, end: number): boolean {
    if (this.esc.next(start) < end) return true;
    const first = this.key.next(start);
    return first < end && this.key.next(first + 1) < end;
  }
}

/** `LineFilter`'s respell test on one line's bytes (a line fed alone: `addLine`). */
function mayRespellBytes(buf: Buffer, start: number, end: number): boolean {
  const line = buf.subarray(start, end);
  if (line.includes(ESCAPE_U, 0, 'latin1')) return true;
  const first = line.indexOf(EVENT_TYPE_KEY, 0, 'latin1');
  return first >= 0 && line.indexOf(EVENT_TYPE_KEY, first + 1, 'latin1') >= 0;
}

/**
 * The next occurrence of one needle in a text, searched again only once a query has passed it.
 * What is searched for is the needle without its first `lead` characters, each hit then checked
 * for them: a needle starting with a character the text is full of (`"` in JSON) makes V8's
 * search stop at each one, its tail does not (the key `"event_type"`, searched as `vent_type"`:
 * 4× faster on generated traces). The occurrences found are the needle's, exactly.
 */
class NeedleCursor {
  private text = '';
  /** First occurrence at or after `from` (text.length: none); -1: not searched yet. */
  private at = -1;
  private from = 0;
  private readonly tail: string;
  private readonly head: string;

  constructor(needle: string, lead = 0) {
    this.head = needle.slice(0, lead);
    this.tail = needle.slice(lead);
  }

  reset(text: string): void {
    this.text = text;
    this.at = -1;
    this.from = 0;
  }

  /** The first occurrence at or after `pos` (the text's length when there is none). */
  next(pos: number): number {
    if (this.at < pos || pos < this.from) {
      this.at = this.search(pos);
      this.from = pos;
    }
    return this.at;
  }

  private search(pos: number): number {
    const { text, head, tail } = this;
    const lead = head.length;
    for (let q = text.indexOf(tail, pos + lead); q >= 0; q = text.indexOf(tail, q + 1))
      if (text.startsWith(head, q - lead)) return q - lead;
    return text.length;
  }
}

const TRACE_KEYS = jsonKeys(
  'event_type',
  'event_id',
  'context_id',
  'task_id',
  'trust',
  'work_id',
  'binary',
  'command',
  'timestamp',
  'delegation_id',
  'child_workdir',
);
const [
  K_EVENT_TYPE,
  K_EVENT_ID,
  K_CONTEXT_ID,
  K_TASK_ID,
  K_TRUST,
  K_WORK_ID,
  K_BINARY,
  K_COMMAND,
  K_TIMESTAMP,
  K_DELEGATION_ID,
  K_CHILD_WORKDIR,
] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10] as const;
const lineScanner = new JsonScanner();

/**
 * Cheap read of a line's event type without parsing it: the common fields put `event_type`
 * first, so it is found in the first bytes. Returns undefined when it is not where expected.
 */
export function peekEventType(lineBytes: Buffer): string | undefined {
  const head = lineBytes.toString('latin1', 0, Math.min(lineBytes.length, HEAD_BYTES));
  const at = head.indexOf(EVENT_TYPE_PREFIX);
  return peekAt(head, 0, head.length, at < 0 ? head.length : at);
}

/**
 * The event type of the line text[start, end): the value of the first `"event_type":"` that
 * starts at `prefixAt` (its first occurrence at or after `start`) and ends, with its closing
 * quote, within the line's first HEAD_BYTES.
 */
function peekAt(text: string, start: number, end: number, prefixAt: number): string | undefined {
  const quote = peekEnd(text, start, end, prefixAt);
  return quote < 0 ? undefined : text.slice(prefixAt + EVENT_TYPE_PREFIX.length, quote);
}

/** Where peekAt's value ends (its closing quote), or -1 when it has none. */
function peekEnd(text: string, start: number, end: number, prefixAt: number): number {
  const headEnd = Math.min(end, start + HEAD_BYTES);
  const from = prefixAt + EVENT_TYPE_PREFIX.length;
  if (from > headEnd) return -1;
  for (let j = from; j < headEnd; j++) if (text.charCodeAt(j) === 0x22) return j;
  return -1;
}
