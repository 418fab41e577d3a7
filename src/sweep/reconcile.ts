// Reconciliation of background work a killed runtime never accounted for (docs/design.md §7):
// for one dead or finished session, append one `shell_lost` line per unaccounted work id to that
// session's own trace and record the `detached_lost` task that reports them in the audit trace.
// Guarantees: append-only, under the trace's lock, only if the trace is still the file that was
// scanned (same dev/ino and size); a work id whose line did not land is neither reported nor
// joined to the task (a later sweep tries again); the writing is the run's effect (markLost), so
// a dry run reports every work id (task_id null) and writes nothing. An append that landed whole
// with no other writer between is remembered (`ownAppend`, src/gchome/trace-appends.ts) with the
// runtime's last write, so that murmur-gc's own write never makes the session look live.
// Memory: the scan keeps ids and line offsets only (src/runtime/trace.ts); the `shell_detached`
// line a `shell_lost` repeats (its binary and command, of any length up to the line cap) is read
// again from the trace just before that line is written, one line at a time, and must still be
// the line the scan saw (else that work is skipped, `changed_since_scan`); a command with no escape
// is copied as the bytes it is, never decoded whole. What is reported of a binary or command (the
// action, `--json`, the report) is its bounded form (src/runtime/trace.ts shownText) and its
// length; a trace with more unaccounted work than the caps says so (`lost_work_deferred`).
import { Codes, GcError, codeOf, describeError, isAbort } from '../errors.js';
import { mintId } from '../runtime/ids.js';
import {
  MAX_LOST_PER_SWEEP,
  MAX_LOST_PER_TRACE,
  detachedLine,
  lostReportBytes,
  lowestTrust,
  sessionStartParentJson,
  shellLostLineBytes,
  type DetachedLine,
  type DetachedWork,
  type LineAt,
  type LostWorkSize,
  type Scratch,
} from '../runtime/trace.js';
import { acquireLock, ensureLockDir, traceLockPath, type HeldLock } from '../gchome/lock.js';
import { Dir, sameIdentity, identityOf, type FileHandle, type Identity } from '../fsx/safe-fs.js';
import { appendTraceLines } from '../runtime/trace-append.js';
import type { Logger } from '../log.js';
import type { LostTask } from '../gchome/audit.js';
import type { LostMarks } from './effects.js';
import type { Action, ErrorEntry, Skipped } from './report.js';
import type { SessionView } from './world.js';

export interface ReconcileContext {
  home: string;
  homeDir: Dir | undefined;
  /** The running sweep's audit session id (`reconciled_by_session`). */
  auditId: string;
  now: () => number;
  log: Logger;
  /** The run's effect (src/sweep/effects.ts markLost): `write` runs only in a real run. */
  markLost: <W>(works: W[], write: () => Promise<LostMarks<W> | undefined>) => Promise<LostMarks<W> | undefined>;
  /** An action done (or that would be): reported and logged with `fields`. */
  action: (a: Action, fields: Record<string, unknown>) => void;
  skip: (s: Skipped) => void;
  fail: (e: ErrorEntry) => void;
  task: (t: LostTask) => void;
  /** The trace after murmur-gc's append, and the runtime's last write before it. */
  ownAppend: (
    root: string,
    session: string,
    after: { identity: Identity; size: number; mtimeMs: number },
    runtimeWriteMs: number,
  ) => void;
}

/** One unaccounted work as reconciliation reports it: the scan's ids, and what its line holds (bounded). */
interface Lost {
  work: DetachedWork;
  shown?: { binary: string; binaryBytes: number; command: string; commandBytes: number };
}

/** The trace of one session, open for reading the lines the scan located (must be the scanned file). */
class TraceLines {
  private constructor(
    private readonly fh: FileHandle,
    private readonly display: string,
  ) {}

  static async open(sdir: Dir, identity: Identity, size: number): Promise<TraceLines> {
    const { fh, stat } = await sdir.openFile('trace.jsonl');
    if (!sameIdentity(identityOf(stat), identity) || Number(stat.size) < size) {
      await fh.close();
      throw new GcError(
        Codes.changedSinceScan,
        `${sdir.display('trace.jsonl')} changed since it was scanned; not reconciled this sweep`,
      );
    }
    return new TraceLines(fh, sdir.display('trace.jsonl'));
  }

  /** one buffer the lines are read into, grown as needed (never over the scan's line cap) */
  private buf = Buffer.alloc(0);
  /** one buffer the shell_lost lines are built into (and a long value shown is cut in), likewise */
  readonly out: Scratch = { buf: Buffer.alloc(0) };

  /** The bytes of the line at `l` (the scan read it whole: never over its line cap), valid until the next read. */
  async read(l: LineAt): Promise<Buffer> {
    if (this.buf.length < l.length) this.buf = Buffer.allocUnsafe(Math.max(l.length, 2 * this.buf.length, 64 << 10));
    const buf = this.buf.subarray(0, l.length);
    let off = 0;
    while (off < l.length) {
      const { bytesRead } = await this.fh.read(buf, off, l.length - off, l.at + off);
      if (bytesRead === 0) break;
      off += bytesRead;
    }
    if (off < l.length) throw this.changed(`the line at byte ${l.at}`);
    return buf;
  }

  /** The `shell_detached` line of `w`, which must still name `w`. */
  async detached(w: DetachedWork): Promise<DetachedLine> {
    const d = detachedLine(await this.read(w));
    if (!d || d.workId !== w.workId || d.detachedAtText !== w.detachedAtText)
      throw this.changed(`the shell_detached line of ${w.workId} at byte ${w.at}`);
    return d;
  }

  /** shell_lost's parent: the last session_start's event id as its JSON text (undefined: none). */
  async parent(at: LineAt | undefined): Promise<Buffer | undefined> {
    if (!at) return undefined;
    const id = sessionStartParentJson(await this.read(at));
    if (id === false) throw this.changed(`the session_start line at byte ${at.at}`);
    return id;
  }

  changed(what: string): GcError {
    return new GcError(
      Codes.changedSinceScan,
      `${this.display}: ${what} is not what the scan read; not reconciled this sweep`,
    );
  }

  close(): Promise<void> {
    return this.fh.close();
  }
}

function shownOf(d: DetachedLine, scratch: Scratch): NonNullable<Lost['shown']> {
  return {
    binary: d.binary.shown(scratch),
    binaryBytes: d.binary.bytes,
    command: d.command.shown(scratch),
    commandBytes: d.command.bytes,
  };
}

export async function reconcileSession(ctx: ReconcileContext, v: SessionView): Promise<void> {
  if (!v.scan.trace?.ok) return;
  const { summary, identity: traceIdentity, size: traceSize, mtimeMs: traceMtimeMs } = v.scan.trace;
  const session = v.scan.name;
  const target = `${v.root}/${session}`;
  if (summary.unaccountedMore) {
    ctx.skip({
      target,
      code: Codes.lostWorkDeferred,
      detail: `${target}/trace.jsonl holds more background commands never accounted for than one sweep marks lost (${summary.unaccounted.length} now; at most ${MAX_LOST_PER_TRACE} a trace and ${MAX_LOST_PER_SWEEP} a sweep): later sweeps mark the rest (docs/limits.md)`,
    });
  }
  const lost: Lost[] = summary.unaccounted.map((work) => ({ work }));
  if (lost.length === 0) return;
  const lostAction = (l: Lost, taskId: string | null): Action => ({
    kind: 'shell_lost',
    target: session,
    root: v.root,
    work_id: l.work.workId,
    binary: l.shown?.binary ?? '',
    binary_bytes: l.shown?.binaryBytes ?? 0,
    command: l.shown?.command ?? '',
    command_bytes: l.shown?.commandBytes ?? 0,
    detached_at_ms: l.work.detachedAtMs,
    task_id: taskId,
  });
  let rootDir: Dir | undefined;
  let sdir: Dir | undefined;
  let lock: HeldLock | undefined;
  let lines: TraceLines | undefined;
  try {
    const marks = await ctx.markLost(lost, async () => {
      if (!ctx.homeDir) return undefined;
      const taskId = mintId('tsk_'); // minted before any marker is written (docs/design.md §R9)
      await ensureLockDir(ctx.homeDir, ['traces']);
      lock = await acquireLock(traceLockPath(ctx.home, v.root, session), { waitMs: 2000 });
      if (!lock) {
        ctx.skip({
          target,
          code: Codes.storageBusy,
          detail: `${target}/trace.jsonl is locked by another murmur-gc; not reconciled this sweep`,
        });
        return undefined;
      }
      rootDir = await Dir.open(v.root);
      sdir = await rootDir.openDir(session, v.scan.identity);
      const from = (lines = await TraceLines.open(sdir, traceIdentity, traceSize));
      const parentJson = await from.parent(summary.sessionStart);
      const ts = ctx.now();
      const sizes = new Map<Lost, LostWorkSize>();
      // Each line is built from its shell_detached line read again, just before it is written.
      const res = await appendTraceLines(
        sdir,
        traceIdentity,
        traceSize,
        lost.map((l) => async () => {
          const d = await from.detached(l.work);
          l.shown = shownOf(d, from.out);
          sizes.set(l, {
            workId: d.workId,
            binaryBytes: l.shown.binaryBytes,
            commandBytes: l.shown.commandBytes,
            detachedAtMs: d.detachedAtMs,
            detachedAtText: d.detachedAtText,
          });
          // (built into one reused buffer: each line is written before the next is built)
          return shellLostLineBytes(
            { eventId: mintId('evt_'), parentJson, sessionId: session, timestamp: ts },
            d,
            ctx.auditId,
            taskId,
            from.out,
          );
        }),
      );
      // Remembered only when the trace was as scanned (its mtime too): else the runtime's last write is not known.
      if (res.after && res.beforeMtimeMs === traceMtimeMs) ctx.ownAppend(v.root, session, res.after, v.lastWriteMs);
      const landed = lost.filter((l, i) => {
        const why = res.failures[i];
        if (why?.code === Codes.changedSinceScan)
          ctx.skip({
            target,
            code: why.code,
            detail: `background command ${l.work.workId} of session ${session} is not marked lost: ${why.detail}`,
          });
        else if (why !== undefined)
          ctx.fail({
            target,
            code: Codes.ioError,
            detail: `could not mark background command ${l.work.workId} of session ${session} as lost (${why.detail}); it is not reported`,
          });
        return why === undefined;
      });
      if (landed.length === 0) return undefined;
      ctx.task({
        taskId,
        contextId: mintId('ctx_'),
        trust: lowestTrust(
          summary,
          landed.map((l) => l.work),
        ),
        messagePartsBytes: lostReportBytes(
          session,
          landed.map((l) => sizes.get(l) as LostWorkSize),
        ),
        session: { id: session, root: v.root, workIds: landed.map((l) => l.work.workId) },
      });
      return { landed, taskId };
    });
    // A run that did not write (a dry run) reads what it shows from the same lines.
    const shown = marks?.landed ?? [];
    if (shown.some((l) => !l.shown)) {
      rootDir ??= await Dir.open(v.root);
      sdir ??= await rootDir.openDir(session, v.scan.identity);
      lines ??= await TraceLines.open(sdir, traceIdentity, traceSize);
      for (const l of shown) if (!l.shown) l.shown = shownOf(await lines.detached(l.work), lines.out);
    }
    for (const l of shown)
      ctx.action(lostAction(l, marks?.taskId ?? null), {
        target: session,
        work_id: l.work.workId,
        task_id: marks?.taskId ?? null,
      });
  } catch (err) {
    if (isAbort(err)) throw err;
    const code = codeOf(err);
    (code === Codes.changedSinceScan || code === Codes.symlink || code === Codes.notRegular ? ctx.skip : ctx.fail)({
      target,
      code,
      detail: describeError(err),
    });
  } finally {
    await lines?.close();
    await sdir?.close();
    await rootDir?.close();
    await lock?.release();
  }
}
