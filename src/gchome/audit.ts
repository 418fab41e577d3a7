// murmur-gc's own audit trail: `<home>/gc/ses_<uuidv7>/trace.jsonl` (docs/design.md §6).
// Guarantees:
// - Created lazily, just before the first destructive action; a run that changes nothing writes nothing.
// - Intent before action: each planned destructive action is appended to `intent.jsonl` before it
//   runs and marked done after, so a run killed in between is detected by the next run and its
//   audit completed (`process_interrupted`) from what actually happened on disk.
// - Trace lines follow docs/design.md §R8: five common fields first, `evt_` ids minted at write,
//   every parent_id names an earlier line (retention/task_start/session_end → session_start,
//   task_end → its task_start); retention lines in the runtime's (store, reason) order.
// - Files are 0600, directories 0700; the trace is fsync'ed when the run finishes.
// - The intent log opens with an `owner` line (pid + start time): a recovery run by another
//   process leaves the audit of a live owner alone (a `conversation rm|truncate` writes its audit
//   outside the sweep lock). Actions run by hand carry `trigger: manual_cli` in their retention
//   line (murmur-gc's one added field); a sweep's lines keep the runtime's schema exactly.
// - Creating the audit either succeeds whole (directory, trace with its session_start on disk,
//   intent log; built under a staging name and renamed into place, so a kill at any instant
//   leaves either no `ses_` directory or a complete one) or leaves nothing behind and throws `AuditUnavailable` — which stops the run like
//   an abort, once, before anything condemned is removed (no action without its audit).
import { failpoint } from '../failpoint.js';
import { Codes, GcError, describeError } from '../errors.js';
import { mintId } from '../runtime/ids.js';
import {
  RETENTION_ORDER,
  quarantinePurgeLine,
  quarantineRestoreLine,
  protectionLine,
  retentionLine,
  sessionEndLine,
  sessionStartLine,
  taskEndLine,
  taskStartLine,
  type RetentionReason,
  type RetentionStore,
  type RetentionTrigger,
  type Trust,
} from '../runtime/trace.js';
import { startTimeOf } from '../runtime/running.js';
import { Dir, identityOf, type FileHandle } from '../fsx/safe-fs.js';

export const GC_DIR = 'gc';
export const INTENT_FILE = 'intent.jsonl';

export interface RetentionItem {
  store: RetentionStore;
  reason: RetentionReason;
  target: string;
  messagesDropped?: number;
  /** The sessions root or record store directory it was in (kept in WHERE_FILE, not the trace). */
  parent?: string;
  /** Set for an action run by hand (`conversation rm|truncate`): the line's `trigger` field. */
  trigger?: RetentionTrigger;
  /** A child workdir or work log that went with a session: that session (kept in DETAILS_FILE). */
  session?: string;
  /** Held by the undo window until then, not removed (kept in DETAILS_FILE). */
  heldUntilMs?: number;
}

/**
 * Beside the trace: `{"<target>": "<sessions root or record store dir>"}` for every retention
 * target, so `history --target` can name where a target was. The retention lines themselves keep
 * the runtime's schema (store, reason, targets).
 */
export const WHERE_FILE = 'where.json';

export function whereText(items: RetentionItem[]): string | undefined {
  const where: Record<string, string> = {};
  for (const i of items) if (i.parent !== undefined) where[i.target] = i.parent;
  return Object.keys(where).length === 0 ? undefined : JSON.stringify(where) + '\n';
}

/** A held item deleted for good (a `quarantine_purge` line, grouped by store and reason). */
export interface PurgedItem {
  store: RetentionStore;
  reason: string;
  target: string;
  held: string;
}

/** A held item put back by `murmur-gc restore` (a `quarantine_restore` line). */
export interface RestoredItem {
  store: RetentionStore;
  held: string;
  target: string;
  /** the sessions root or record store it went back to */
  origin: string;
  messagesRestored?: number;
}

/** An item put on (or taken off) the protection list (a `protection` line). */
export interface ProtectionChange {
  change: 'protect' | 'release';
  store: RetentionStore;
  target: string;
  /** the sessions root or record store */
  origin: string;
  by: 'restore' | 'protect' | 'release';
}

export function groupPurges(
  items: PurgedItem[],
): { store: RetentionStore; reason: string; targets: string[]; kinds: string[] }[] {
  const out = new Map<string, { store: RetentionStore; reason: string; targets: string[]; kinds: string[] }>();
  for (const i of items) {
    const k = `${i.store}\0${i.reason}`;
    const g = out.get(k) ?? { store: i.store, reason: i.reason, targets: [], kinds: [] };
    g.targets.push(i.target);
    g.kinds.push(i.held);
    out.set(k, g);
  }
  return [...out.values()];
}

export interface LostTask {
  taskId: string;
  contextId: string;
  trust: Trust;
  messagePartsBytes: number;
  /** The session reconciled, its sessions root and the work ids marked lost (kept in DETAILS_FILE, not the trace). */
  session?: { id: string; root: string; workIds: string[] };
}

/**
 * Beside the trace: what its lines, in the runtime's schema, cannot say — the messages each
 * truncated record lost (`dropped`: target → count), the session each `detached_lost` task
 * reconciled (`reconciled`: task id → session, root, work ids), the session each child workdir
 * or work log went with (`beside`: target → session) and what the undo window held rather than
 * removed (`held`: target → until_ms). For `history`; written with
 * WHERE_FILE, absent for older sweeps and for audits completed by recovery.
 */
export const DETAILS_FILE = 'details.json';

export interface AuditDetails {
  dropped?: Record<string, number>;
  reconciled?: Record<string, { session: string; root: string; work_ids: string[] }>;
  /** a child workdir or work log (its target) → the session it went with */
  beside?: Record<string, string>;
  /** a target the undo window held (not removed) → until when */
  held?: Record<string, number>;
}

export function detailsText(items: RetentionItem[], tasks: LostTask[]): string | undefined {
  const d: AuditDetails = {};
  for (const i of items)
    if (i.reason === 'max_messages' && i.messagesDropped !== undefined)
      (d.dropped ??= {})[i.target] = i.messagesDropped;
  for (const t of tasks)
    if (t.session)
      (d.reconciled ??= {})[t.taskId] = { session: t.session.id, root: t.session.root, work_ids: t.session.workIds };
  for (const i of items) if (i.session !== undefined) (d.beside ??= {})[i.target] = i.session;
  for (const i of items) if (i.heldUntilMs !== undefined) (d.held ??= {})[i.target] = i.heldUntilMs;
  return d.dropped || d.reconciled || d.beside || d.held ? JSON.stringify(d) + '\n' : undefined;
}

export interface IntentLine {
  /** `owner` (first line): the process writing this audit, so a recovery leaves a live one alone. */
  op: 'intent' | 'done' | 'owner';
  seq: number;
  pid?: number;
  start_time?: string | null;
  trigger?: RetentionTrigger;
  kind?: string;
  store?: RetentionStore;
  reason?: RetentionReason;
  /** Directory holding the target (sessions root or record store path). */
  parent?: string;
  target?: string;
  messages_dropped?: number;
  /** truncate_record: the `at_ms` the new header's truncation marker will carry (decimal u64). */
  at_ms?: string;
  /** truncate_record: the header's cumulative `dropped` before this truncation (decimal u64). */
  dropped_before?: string;
  /** purge_quarantine: what its `quarantine_purge` line names (`target` is the held entry's name). */
  purge?: PurgedItem;
  /**
   * restore_session | restore_context | restore_truncation (`parent`/`target`: the sessions root
   * and held entry, or the quarantine directory and the first held item): what the
   * `quarantine_restore` line names, where the item goes back to (`to`: the session, context or
   * record path), the held items put back (`entries`, in `parent`), and for dropped lines the
   * record's first line once they are back (`header`, the restored header) — recovery reads it
   * (and the bytes after it) to decide whether the rewrite landed (src/gchome/audit-recovery.ts).
   */
  restore?: RestoredItem & { to: string; entries: string[]; header?: string };
}

/**
 * The audit trace could not be created: the run must stop before removing anything. Named
 * AbortError so every per-item handler lets it through (as it does a stop signal).
 */
export class AuditUnavailable extends GcError {
  constructor(path: string, cause: unknown) {
    super(
      Codes.ioError,
      `the audit trace could not be created in ${path} (${describeError(cause)}); nothing was removed — free space or fix the directory, then run again`,
      { cause },
    );
    this.name = 'AbortError';
  }
}

export interface RetentionGroup {
  store: RetentionStore;
  reason: RetentionReason;
  targets: string[];
  messagesDropped: number;
  trigger?: RetentionTrigger;
}

/**
 * Group retention items into the runtime's lines: one per (store, reason), in its order (and
 * apart per trigger: an action by hand never shares a line with a policy's).
 */
export function groupRetention(items: RetentionItem[]): RetentionGroup[] {
  const out: RetentionGroup[] = [];
  for (const [store, reason] of RETENTION_ORDER) {
    for (const trigger of [undefined, MANUAL]) {
      const mine = items.filter((i) => i.store === store && i.reason === reason && i.trigger === trigger);
      if (mine.length === 0) continue;
      let targets = mine.map((i) => i.target);
      // sessions newest-first (as the runtime ranks them); records ascending by context id.
      targets = store === 'sessions' ? [...targets].sort().reverse() : [...targets].sort();
      out.push({
        store,
        reason,
        targets,
        messagesDropped: mine.reduce((n, i) => n + (i.messagesDropped ?? 0), 0),
        ...(trigger ? { trigger } : {}),
      });
    }
  }
  return out;
}

const MANUAL: RetentionTrigger = 'manual_cli';

/** `.<ses_id>.<pid>.<hex>.tmp`: where an audit directory is built before it is renamed into place. */
export function auditStagingName(sessionId: string): string {
  return `.${sessionId}.${process.pid}.${Date.now().toString(16)}${Math.random().toString(16).slice(2, 10)}.tmp`;
}

export class AuditSession {
  private seq = 0;
  private constructor(
    readonly sessionId: string,
    readonly dirPath: string,
    private readonly dir: Dir,
    private readonly trace: FileHandle,
    private readonly intent: FileHandle,
    private readonly sessionEventId: string,
    private readonly startedMs: number,
  ) {}

  static async begin(home: Dir, sessionId: string, version: string, nowMs: number): Promise<AuditSession> {
    const where = `${home.display(GC_DIR)}/${sessionId}`;
    let gc: Dir | undefined;
    let dir: Dir | undefined;
    let trace: FileHandle | undefined;
    let intent: FileHandle | undefined;
    // Built under a staging name and renamed into place complete: a `ses_` audit directory never
    // exists without its intent log (owner line) and its session_start, whenever a kill lands.
    // A killed run's staging directory is debris (src/gchome/leftovers.ts).
    const staging = auditStagingName(sessionId);
    let placed: string | undefined;
    try {
      gc = await home.mkdir(GC_DIR, 0o700);
      dir = await gc.mkdir(staging, 0o700);
      placed = staging;
      intent = await dir.createExclusive(INTENT_FILE, 0o600);
      // Who writes this audit: a recovery (another sweep) leaves it alone while this process lives.
      await intent.write(
        JSON.stringify({
          op: 'owner',
          seq: 0,
          pid: process.pid,
          start_time: (await startTimeOf(process.pid)) ?? null,
        }) + '\n',
      );
      trace = await dir.createExclusive('trace.jsonl', 0o600);
      const eventId = mintId('evt_');
      const start = Buffer.from(sessionStartLine({ eventId, sessionId, timestamp: nowMs }, 'murmur-gc', version));
      // Appended at the descriptor's offset (later lines follow it); a short write is a failure.
      const { bytesWritten } = await trace.write(start);
      if (bytesWritten !== start.length) throw new Error(`short write (${bytesWritten} of ${start.length} bytes)`);
      await trace.sync();
      await intent.sync();
      await dir.sync();
      await gc.rename(staging, sessionId);
      placed = sessionId;
      const final = await gc.openDir(sessionId, identityOf(dir.stat));
      await dir.close();
      dir = final;
      await gc.sync();
      const session = new AuditSession(sessionId, dir.path, dir, trace, intent, eventId, nowMs);
      dir = undefined; // owned by the session now
      return session;
    } catch (err) {
      // Leave nothing half-made: a trace without its session_start is never left for recovery.
      await trace?.close().catch(() => undefined);
      await intent?.close().catch(() => undefined);
      if (dir) {
        await dir.unlink(INTENT_FILE).catch(() => undefined);
        await dir.unlink('trace.jsonl').catch(() => undefined);
        await dir.close();
        dir = undefined;
        if (placed) await gc?.rmdir(placed).catch(() => undefined);
      }
      throw new AuditUnavailable(where, err);
    } finally {
      await dir?.close();
      await gc?.close();
    }
  }

  get tracePath(): string {
    return `${this.dirPath}/trace.jsonl`;
  }

  /** Record an intended action durably before it is carried out; returns its sequence number. */
  async intend(entry: Omit<IntentLine, 'op' | 'seq'>): Promise<number> {
    const seq = ++this.seq;
    await this.intent.write(JSON.stringify({ op: 'intent', seq, ...entry }) + '\n');
    await this.intent.sync();
    failpoint('audit:after_intent');
    return seq;
  }

  /** Mark an intent carried out; `durable` fsyncs it (what follows relies on it surviving a crash). */
  async done(seq: number, extra: { messages_dropped?: number } = {}, durable = false): Promise<void> {
    await this.intent.write(JSON.stringify({ op: 'done', seq, ...extra }) + '\n');
    if (durable) await this.intent.sync();
  }

  /** Write the retention lines, the reconciliation tasks and session_end; drop the intent log. */
  async finish(
    items: RetentionItem[],
    tasks: LostTask[],
    exitStatus: 'ok' | 'failed' | 'canceled',
    nowMs: number,
    extra: { purged?: PurgedItem[]; restored?: RestoredItem[]; protection?: ProtectionChange[] } = {},
  ): Promise<void> {
    const common = (parentId: string) => ({
      eventId: mintId('evt_'),
      parentId,
      sessionId: this.sessionId,
      timestamp: nowMs,
    });
    let text = '';
    for (const g of groupRetention(items)) {
      text += retentionLine(
        common(this.sessionEventId),
        g.store,
        g.reason,
        g.targets,
        g.reason === 'max_messages' ? g.messagesDropped : undefined,
        g.trigger,
      );
    }
    for (const g of groupPurges(extra.purged ?? []))
      text += quarantinePurgeLine(common(this.sessionEventId), g.store, g.reason, g.targets, g.kinds);
    for (const r of extra.restored ?? []) text += quarantineRestoreLine(common(this.sessionEventId), r);
    for (const p of extra.protection ?? []) text += protectionLine(common(this.sessionEventId), p);
    for (const t of tasks) {
      const start = common(this.sessionEventId);
      text += taskStartLine(start, t);
      text += taskEndLine(common(start.eventId), t.taskId, 'ok', 0);
    }
    text += sessionEndLine(common(this.sessionEventId), Math.max(0, nowMs - this.startedMs), exitStatus);
    const where = whereText(items);
    if (where !== undefined)
      await this.dir.writeFileAtomic(WHERE_FILE, where, 0o600, { durable: false }).catch(() => undefined);
    const details = detailsText(items, tasks);
    if (details !== undefined)
      await this.dir.writeFileAtomic(DETAILS_FILE, details, 0o600, { durable: false }).catch(() => undefined);
    await this.trace.write(text);
    await this.trace.sync();
    await this.trace.close();
    await this.intent.close();
    await this.dir.unlink(INTENT_FILE).catch(() => undefined);
    await this.dir.sync().catch(() => undefined);
    await this.dir.close();
  }

  /**
   * Changed nothing after all (a `conversation truncate` that had nothing to drop): remove this
   * session whole — a run that changed nothing writes nothing. `gc` is `<home>/gc`.
   */
  async discard(gc: Dir): Promise<void> {
    await this.trace.close().catch(() => undefined);
    await this.intent.close().catch(() => undefined);
    await this.dir.unlink('trace.jsonl').catch(() => undefined);
    await this.dir.unlink(INTENT_FILE).catch(() => undefined);
    await this.dir.close();
    await gc.rmdir(this.sessionId).catch(() => undefined);
  }

  /** Close without finishing (the intent log stays for the next run to complete). */
  async abandon(): Promise<void> {
    await this.trace.close().catch(() => undefined);
    await this.intent.close().catch(() => undefined);
    await this.dir.close();
  }
}

/** Parse an intent log; unknown lines are ignored. */
export function parseIntentLog(text: string): {
  intents: Map<number, IntentLine>;
  done: Map<number, IntentLine>;
  owner?: IntentLine;
} {
  const intents = new Map<number, IntentLine>();
  const done = new Map<number, IntentLine>();
  let owner: IntentLine | undefined;
  for (const raw of text.split('\n')) {
    if (!raw.trim()) continue;
    let o: unknown;
    try {
      o = JSON.parse(raw);
    } catch {
      continue;
    }
    if (typeof o !== 'object' || o === null) continue;
    const l = o as IntentLine;
    if (typeof l.seq !== 'number') continue;
    if (l.op === 'intent') intents.set(l.seq, l);
    else if (l.op === 'done') done.set(l.seq, l);
    else if (l.op === 'owner') owner = l;
  }
  return { intents, done, ...(owner ? { owner } : {}) };
}
