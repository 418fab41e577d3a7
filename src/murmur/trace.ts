// The trace (`trace.jsonl`) lines murmur-gc reads and writes, pure.
// Guarantees:
// - Every line built here starts with the five common fields in the seed's order
//   (event_type, event_id, parent_id, session_id, timestamp) and is compact JSON + '\n'.
// - Field order of `retention`, `shell_lost`, `task_start`, `task_end`, `session_start`,
//   `session_end` follows the seed / reference §8, §9.4 exactly; optional keys are omitted, never null
//   (except `parent_id: null` on session_start and `messages_dropped` only for max_messages).
// - `summarizeTraceLine` reads only the few event types the sweep needs and never throws.

export type RetentionStore = 'sessions' | 'records';
export type RetentionReason = 'max_sessions' | 'max_age' | 'max_messages';
export type Trust = 'trusted' | 'untrusted';

/** The runtime's order of retention lines (runtime.rs::apply_retention). */
export const RETENTION_ORDER: ReadonlyArray<readonly [RetentionStore, RetentionReason]> = [
  ['sessions', 'max_sessions'],
  ['sessions', 'max_age'],
  ['records', 'max_age'],
  ['records', 'max_messages'],
];

function line(obj: Record<string, unknown>): string {
  return JSON.stringify(obj) + '\n';
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
): string {
  const o: Record<string, unknown> = { ...common('retention', c), store, reason, removed: targets.length, targets };
  if (reason === 'max_messages') o['messages_dropped'] = messagesDropped ?? 0;
  return line(o);
}

export interface LostWorkLine {
  workId: string;
  binary: string;
  command: string;
  detachedAtMs: number;
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
  o['detached_at_ms'] = work.detachedAtMs;
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
 * The text a `detached_lost` task carries (reference §9.5, detached.rs `LostReport::message_text`).
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
    parts.push('', `work_id: ${w.workId}`, `binary: ${w.binary}`, `command: ${w.command}`, `detached_at_ms: ${w.detachedAtMs}`);
  }
  parts.push('', 'None of them is known to have succeeded or failed; restart one only if its result still matters.');
  return parts.join('\n');
}

// ---- reading ---------------------------------------------------------------------------------

export interface DetachedWork {
  workId: string;
  binary: string;
  command: string;
  detachedAtMs: number;
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
}

/** Mutable accumulator used while scanning one trace. */
export class TraceAccumulator {
  sessionStartEventId: string | undefined;
  private readonly contexts = new Set<string>();
  hasSessionEnd = false;
  private readonly trust = new Map<string, Trust>();
  private readonly detached = new Map<string, DetachedWork>();
  private readonly accounted = new Set<string>();
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
  ]);

  add(obj: unknown): void {
    if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) {
      this.invalidLines++;
      return;
    }
    const o = obj as Record<string, unknown>;
    const t = o['event_type'];
    switch (t) {
      case 'session_start':
        if (typeof o['event_id'] === 'string') this.sessionStartEventId = o['event_id'];
        if (typeof o['context_id'] === 'string') this.contexts.add(o['context_id']);
        break;
      case 'session_end':
        this.hasSessionEnd = true;
        break;
      case 'task_start':
        if (typeof o['context_id'] === 'string') this.contexts.add(o['context_id']);
        if (typeof o['task_id'] === 'string' && (o['trust'] === 'trusted' || o['trust'] === 'untrusted')) {
          this.trust.set(o['task_id'], o['trust']);
        }
        break;
      case 'shell_detached':
        if (typeof o['work_id'] === 'string') {
          this.detached.set(o['work_id'], {
            workId: o['work_id'],
            binary: typeof o['binary'] === 'string' ? o['binary'] : '',
            command: typeof o['command'] === 'string' ? o['command'] : '',
            detachedAtMs: typeof o['timestamp'] === 'number' ? o['timestamp'] : 0,
            taskId: typeof o['task_id'] === 'string' ? o['task_id'] : null,
          });
        }
        break;
      case 'shell_completed':
      case 'shell_abandoned':
      case 'shell_lost':
        if (typeof o['work_id'] === 'string') this.accounted.add(o['work_id']);
        break;
      default:
        break;
    }
  }

  finish(endsWithNewline: boolean): TraceSummary {
    const unaccounted = [...this.detached.values()]
      .filter((w) => !this.accounted.has(w.workId))
      .sort((a, b) => (a.workId < b.workId ? -1 : a.workId > b.workId ? 1 : 0));
    const taskTrust: Record<string, Trust> = {};
    for (const w of unaccounted) {
      if (w.taskId !== null) {
        const tr = this.trust.get(w.taskId);
        if (tr) taskTrust[w.taskId] = tr;
      }
    }
    return {
      sessionStartEventId: this.sessionStartEventId,
      contextIds: [...this.contexts],
      hasSessionEnd: this.hasSessionEnd,
      taskTrust,
      unaccounted,
      endsWithNewline,
      invalidLines: this.invalidLines,
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

/**
 * Cheap read of a line's event type without parsing it: the common fields put `event_type`
 * first, so it is found in the first bytes. Returns undefined when it is not where expected.
 */
export function peekEventType(lineBytes: Buffer): string | undefined {
  const head = lineBytes.subarray(0, Math.min(lineBytes.length, 64));
  const at = head.indexOf(EVENT_TYPE_PREFIX);
  if (at < 0) return undefined;
  const start = at + EVENT_TYPE_PREFIX.length;
  const end = head.indexOf(0x22, start);
  if (end < 0) return undefined;
  return head.toString('latin1', start, end);
}
