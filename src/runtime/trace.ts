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
//   `parent_id` (README.md, "What it deletes"); lost work is
//   ordered by the bytes of its id; `detached_at_ms` is the `shell_detached` line's `timestamp`
//   when it is a u64, else 0, kept digit for digit.

import { isUtf8 } from 'node:buffer';
import { stringifyExact } from '../json/exact.js';
import { JsonScanner, T_OBJECT, jsonKeys, spanString, spanU64, type Span } from '../json/scan.js';

export type RetentionStore = 'sessions' | 'records';
/**
 * The runtime's three reasons, then murmur-gc's disk budgets (`max_bytes`, `keep_free`), then
 * `manual`: a context removed by hand (`murmur-gc conversation rm`; its line carries
 * `"trigger":"manual_cli"`, as does a `conversation truncate`, whose reason is `max_messages`).
 */
export type RetentionReason = 'max_sessions' | 'max_age' | 'max_messages' | 'max_bytes' | 'keep_free' | 'children_max_age' | 'manual';
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
  return { event_type: type, event_id: c.eventId, parent_id: c.parentId, session_id: c.sessionId, timestamp: c.timestamp };
}

export function sessionStartLine(c: Omit<Common, 'parentId'>, capsuleName: string, capsuleVersion: string): string {
  return line({ ...common('session_start', { ...c, parentId: null }), capsule_name: capsuleName, capsule_version: capsuleVersion, resumed_from: null, context_id: null });
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
export function quarantinePurgeLine(c: Common, store: RetentionStore, reason: string, targets: string[], kinds: string[]): string {
  return line({ ...common('quarantine_purge', c), store, reason, removed: targets.length, targets, kinds });
}

/**
 * murmur-gc's own event: one held item put back by `murmur-gc restore`. `held` is session,
 * context or truncation; `messages_restored` only for truncations.
 */
export function quarantineRestoreLine(c: Common, r: { store: RetentionStore; held: string; target: string; origin: string; messagesRestored?: number }): string {
  const o: Record<string, unknown> = { ...common('quarantine_restore', c), store: r.store, held: r.held, target: r.target, origin: r.origin };
  if (r.messagesRestored !== undefined) o['messages_restored'] = r.messagesRestored;
  return line(o);
}

/**
 * murmur-gc's own event: an item put on the protection list or taken off it (`change` protect or
 * release; `by` restore when `murmur-gc restore` protected what it put back, else protect/release).
 */
export function protectionLine(c: Common, p: { change: 'protect' | 'release'; store: RetentionStore; target: string; origin: string; by: string }): string {
  return line({ ...common('protection', c), change: p.change, store: p.store, target: p.target, origin: p.origin, by: p.by });
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
  if (w.detachedAtText !== undefined && /^(?:0|[1-9][0-9]{0,19})$/.test(w.detachedAtText)) return BigInt(w.detachedAtText);
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
    parts.push('', `work_id: ${w.workId}`, `binary: ${w.binary}`, `command: ${w.command}`, `detached_at_ms: ${detachedAt(w)}`);
  }
  parts.push('', 'None of them is known to have succeeded or failed; restart one only if its result still matters.');
  return parts.join('\n');
}

// ---- reading ---------------------------------------------------------------------------------

export interface DetachedWork {
  workId: string;
  binary: string;
  command: string;
  /** `Number(detachedAtText)`: for display (may round above 2^53). */
  detachedAtMs: number;
  /** The exact u64 digits written back in `shell_lost.detached_at_ms`. */
  detachedAtText: string;
  taskId: string | null;
}

/** What the sweep needs from one session's trace. Serializable (it is cached). */
export interface TraceSummary {
  sessionStartEventId: string | undefined;
  /** session_start.context_id and every task_start.context_id, deduplicated, in order seen. */
  contextIds: string[];
  hasSessionEnd: boolean;
  /** task_id → trust, only for tasks that own unaccounted work (filled by finishSummary). */
  taskTrust: Record<string, Trust>;
  /** shell_detached lines with no completed/abandoned/lost line, keyed by work id (lexical order). */
  unaccounted: DetachedWork[];
  /** True when the file ends with '\n' (or is empty). */
  endsWithNewline: boolean;
  /** Lines that did not parse (torn tail, garbage). Counted, never fatal. */
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

/** Mutable accumulator used while scanning one trace. */
export class TraceAccumulator {
  sessionStartEventId: string | undefined;
  private readonly contexts = new Set<string>();
  hasSessionEnd = false;
  private readonly trust = new Map<string, Trust>();
  private readonly detached = new Map<string, DetachedWork>();
  private readonly accounted = new Set<string>();
  private readonly workIds = new Set<string>();
  private readonly delegations = new Map<string, Delegation>();
  private readonly ended = new Set<string>();
  invalidLines = 0;

  /** Event types whose lines must be parsed; everything else is skipped without parsing. */
  static readonly WANTED = new Set([
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

  private utf8 = true;

  /** Finds `"event_type"` keys and `\u` escapes in the buffer of the lines (see `mayRespell`). */
  private readonly finder = new RespellFinder();

  /**
   * One line (without its `\n`) of the trace, as buf[start, end). Lines whose event type the
   * sweep does not need are not parsed (only checked for UTF-8).
   */
  addLine(buf: Buffer, start: number, end: number): void {
    if (this.utf8 && !isUtf8(buf.subarray(start, end))) this.utf8 = false;
    this.finder.reset(buf);
    this.line(buf, start, end);
  }

  /**
   * Every line of buf[0, buf.length) — a whole trace, the last line unterminated unless the buffer
   * ends with `\n` — the same as `addLine` for each, but with one UTF-8 check for the whole (a
   * `\n` never falls inside a UTF-8 sequence, so the buffer is valid iff each line is) and no
   * view made per line. `buf` is only read during the call. Returns whether it ends with `\n`.
   */
  addLines(buf: Buffer): boolean {
    if (this.utf8 && !isUtf8(buf)) this.utf8 = false;
    this.finder.reset(buf);
    let from = 0;
    while (from < buf.length) {
      const nl = buf.indexOf(10, from);
      if (nl < 0) {
        this.line(buf, from, buf.length);
        return false;
      }
      this.line(buf, from, nl);
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

  private line(buf: Buffer, start: number, end: number): void {
    if (start === end) return;
    const peeked = peekEventTypeAt(buf, start, end);
    if (peeked !== undefined && !TraceAccumulator.WANTED.has(peeked) && !this.finder.mayRespell(start, end)) return;
    const sc = lineScanner;
    if (!sc.scan(buf, start, end, TRACE_KEYS) || sc.top !== T_OBJECT) {
      this.invalidLines++;
      return;
    }
    const f = sc.fields;
    const str = (k: number): string | undefined => spanString(buf, f[k] as Span);
    switch (str(K_EVENT_TYPE)) {
      case 'session_start': {
        // The last session_start decides, even one without a string event_id: then there is no
        // parent, and shell_lost omits parent_id.
        this.sessionStartEventId = str(K_EVENT_ID);
        const ctx = str(K_CONTEXT_ID);
        if (ctx !== undefined) this.contexts.add(ctx);
        break;
      }
      case 'session_end':
        this.hasSessionEnd = true;
        break;
      case 'task_start': {
        const ctx = str(K_CONTEXT_ID);
        if (ctx !== undefined) this.contexts.add(ctx);
        const task = str(K_TASK_ID);
        const trust = str(K_TRUST);
        if (task !== undefined && (trust === 'trusted' || trust === 'untrusted')) this.trust.set(task, trust);
        break;
      }
      case 'shell_detached': {
        const work = str(K_WORK_ID);
        if (work === undefined) break;
        if (isWorkId(work)) this.workIds.add(work);
        const at = spanU64(buf, f[K_TIMESTAMP] as Span) ?? 0n;
        this.detached.set(work, {
          workId: work,
          binary: str(K_BINARY) ?? '',
          command: str(K_COMMAND) ?? '',
          detachedAtMs: Number(at),
          detachedAtText: at.toString(),
          taskId: str(K_TASK_ID) ?? null,
        });
        break;
      }
      case 'shell_completed':
      case 'shell_abandoned':
      case 'shell_lost': {
        const work = str(K_WORK_ID);
        if (work !== undefined) this.accounted.add(work);
        if (work !== undefined && isWorkId(work)) this.workIds.add(work);
        break;
      }
      case 'delegation_start': {
        const id = str(K_DELEGATION_ID);
        const child = str(K_CHILD_WORKDIR);
        if (id !== undefined && child !== undefined) this.delegations.set(id, { delegationId: id, childWorkdir: child, ended: false });
        break;
      }
      case 'delegation':
      case 'delegation_late': {
        const id = str(K_DELEGATION_ID);
        if (id !== undefined) this.ended.add(id);
        break;
      }
      default:
        break;
    }
  }

  finish(endsWithNewline: boolean): TraceSummary {
    // A trace the runtime cannot read (not UTF-8) reports nothing; lost work in id byte order.
    const unaccounted = this.utf8
      ? [...this.detached.values()].filter((w) => !this.accounted.has(w.workId)).sort((a, b) => Buffer.compare(Buffer.from(a.workId), Buffer.from(b.workId)))
      : [];
    const taskTrust: Record<string, Trust> = {};
    for (const w of unaccounted) {
      if (w.taskId !== null) {
        const tr = this.trust.get(w.taskId);
        if (tr) taskTrust[w.taskId] = tr;
      }
    }
    const delegations = [...this.delegations.values()].map((d) => ({ ...d, ended: this.ended.has(d.delegationId) }));
    return {
      sessionStartEventId: this.sessionStartEventId,
      contextIds: [...this.contexts],
      hasSessionEnd: this.hasSessionEnd,
      taskTrust,
      unaccounted,
      endsWithNewline,
      invalidLines: this.invalidLines,
      utf8: this.utf8,
      ...(this.workIds.size ? { workIds: [...this.workIds].sort() } : {}),
      ...(delegations.length ? { delegations } : {}),
    };
  }
}

/** Lowest trust across the work a report names; an unjoinable task makes it untrusted. */
export function lowestTrust(summary: TraceSummary, works: DetachedWork[]): Trust {
  for (const w of works) {
    if (w.taskId === null) return 'untrusted';
    if (summary.taskTrust[w.taskId] !== 'trusted') return 'untrusted';
  }
  return 'trusted';
}

const EVENT_TYPE_PREFIX = Buffer.from('"event_type":"');
const EVENT_TYPE_KEY = Buffer.from('"event_type"');
const ESCAPE_U = Buffer.from('\\u');

/**
 * `mayRespell(start, end)`: true when the line buf[start, end) could name its event type other
 * than by its first `"event_type":"…"`: a second `"event_type"` key (the last one wins) or a `\u`
 * escape (a key spelled with escapes).
 * Lines of one buffer are asked about in increasing order, so each needle's next occurrence is
 * remembered and searched for again only once a line has passed it: the whole buffer is searched
 * about once per needle, and no view is made per line. `reset` starts on a buffer (always: a
 * reused buffer object holds other bytes the next time).
 */
class RespellFinder {
  private readonly key = new NeedleCursor(EVENT_TYPE_KEY);
  private readonly esc = new NeedleCursor(ESCAPE_U);

  /** Start on `buf` (its contents may differ from the last time the same object was seen). */
  reset(buf: Buffer): void {
    this.key.reset(buf);
    this.esc.reset(buf);
  }

  /** Lines of the buffer given to `reset`, in increasing order. */
  mayRespell(start: number, end: number): boolean {
    if (this.esc.next(start) < end) return true;
    const first = this.key.next(start);
    return first < end && this.key.next(first + 1) < end;
  }
}

/** The next occurrence of one needle in a buffer, searched again only once a query has passed it. */
class NeedleCursor {
  private buf: Buffer = Buffer.alloc(0);
  /** First occurrence at or after `from` (buf.length: none); -1: not searched yet. */
  private at = -1;
  private from = 0;

  constructor(private readonly needle: Buffer) {}

  reset(buf: Buffer): void {
    this.buf = buf;
    this.at = -1;
    this.from = 0;
  }

  /** The first occurrence at or after `pos` (the buffer's length when there is none). */
  next(pos: number): number {
    if (this.at < pos || pos < this.from) {
      const found = this.buf.indexOf(this.needle, pos);
      this.at = found < 0 ? this.buf.length : found;
      this.from = pos;
    }
    return this.at;
  }
}

const TRACE_KEYS = jsonKeys('event_type', 'event_id', 'context_id', 'task_id', 'trust', 'work_id', 'binary', 'command', 'timestamp', 'delegation_id', 'child_workdir');
const [K_EVENT_TYPE, K_EVENT_ID, K_CONTEXT_ID, K_TASK_ID, K_TRUST, K_WORK_ID, K_BINARY, K_COMMAND, K_TIMESTAMP, K_DELEGATION_ID, K_CHILD_WORKDIR] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10] as const;
const lineScanner = new JsonScanner();

/**
 * Cheap read of a line's event type without parsing it: the common fields put `event_type`
 * first, so it is found in the first bytes. Returns undefined when it is not where expected.
 */
export function peekEventType(lineBytes: Buffer): string | undefined {
  return peekEventTypeAt(lineBytes, 0, lineBytes.length);
}

/** `peekEventType` of the line buf[start, end), without making a view of it. */
function peekEventTypeAt(buf: Buffer, start: number, end: number): string | undefined {
  const headEnd = Math.min(end, start + 64);
  const p = EVENT_TYPE_PREFIX;
  const last = headEnd - p.length;
  for (let i = start; i <= last; i++) {
    if (buf[i] !== 0x22) continue; // every match starts with the key's opening quote
    let k = 1;
    while (k < p.length && buf[i + k] === p[k]) k++;
    if (k < p.length) continue;
    const from = i + p.length;
    for (let j = from; j < headEnd; j++) if (buf[j] === 0x22) return buf.toString('latin1', from, j);
    return undefined;
  }
  return undefined;
}
