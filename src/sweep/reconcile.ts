// Reconciliation of background work a killed runtime never accounted for (docs/design.md §7):
// for one dead or finished session, append one `shell_lost` line per unaccounted work id to that
// session's own trace and record the `detached_lost` task that reports them in the audit trace.
// Guarantees: append-only, under the trace's lock, only if the trace is still the file that was
// scanned (same dev/ino and size); a work id whose line did not land is neither reported nor
// joined to the task (a later sweep tries again); the writing is the run's effect (markLost), so
// a dry run reports every work id (task_id null) and writes nothing. An append that landed whole
// with no other writer between is remembered (`ownAppend`, src/gchome/trace-appends.ts) with the
// runtime's last write, so that murmur-gc's own write never makes the session look live.
import { Codes, codeOf, describeError, isAbort } from '../errors.js';
import { mintId } from '../runtime/ids.js';
import { lowestTrust, lostReportText, shellLostLine } from '../runtime/trace.js';
import { acquireLock, ensureLockDir, traceLockPath, type HeldLock } from '../gchome/lock.js';
import { Dir, type Identity } from '../fsx/safe-fs.js';
import { appendTraceLines } from '../runtime/trace-append.js';
import type { Logger } from '../log.js';
import type { LostTask } from '../gchome/audit.js';
import type { LostMarks } from './steps/effects.js';
import type { Action, ErrorEntry, Skipped } from './report.js';
import type { SessionView } from './world.js';

export interface ReconcileContext {
  home: string;
  homeDir: Dir | undefined;
  /** The running sweep's audit session id (`reconciled_by_session`). */
  auditId: string;
  now: () => number;
  log: Logger;
  /** The run's effect (src/sweep/steps/effects.ts markLost): `write` runs only in a real run. */
  markLost: <W>(works: W[], write: () => Promise<LostMarks<W> | undefined>) => Promise<LostMarks<W> | undefined>;
  /** An action done (or that would be): reported and logged with `fields`. */
  action: (a: Action, fields: Record<string, unknown>) => void;
  skip: (s: Skipped) => void;
  fail: (e: ErrorEntry) => void;
  task: (t: LostTask) => void;
  /** The trace after murmur-gc's append, and the runtime's last write before it. */
  ownAppend: (root: string, session: string, after: { identity: Identity; size: number; mtimeMs: number }, runtimeWriteMs: number) => void;
}

export async function reconcileSession(ctx: ReconcileContext, v: SessionView): Promise<void> {
  if (!v.scan.trace?.ok) return;
  const { summary, identity: traceIdentity, size: traceSize, mtimeMs: traceMtimeMs } = v.scan.trace;
  const works = summary.unaccounted;
  if (works.length === 0) return;
  const session = v.scan.name;
  const target = `${v.root}/${session}`;
  const lostAction = (w: (typeof works)[number], taskId: string | null): Action => ({
    kind: 'shell_lost',
    session_id: session,
    root: v.root,
    work_id: w.workId,
    binary: w.binary,
    command: w.command,
    detached_at_ms: w.detachedAtMs,
    task_id: taskId,
  });
  let rootDir: Dir | undefined;
  let sdir: Dir | undefined;
  let lock: HeldLock | undefined;
  try {
    const marks = await ctx.markLost(works, async () => {
      if (!ctx.homeDir) return undefined;
      const taskId = mintId('tsk_'); // minted before any marker is written (docs/design.md §R9)
      await ensureLockDir(ctx.homeDir, ['traces']);
      lock = await acquireLock(traceLockPath(ctx.home, v.root, session), { waitMs: 2000 });
      if (!lock) {
        ctx.skip({ target, code: Codes.storageBusy, detail: `${target}/trace.jsonl is locked by another murmur-gc; not reconciled this sweep` });
        return undefined;
      }
      rootDir = await Dir.open(v.root);
      sdir = await rootDir.openDir(session, v.scan.identity);
      const ts = ctx.now();
      const lines = works.map((w) =>
        shellLostLine({ eventId: mintId('evt_'), parentId: summary.sessionStartEventId, sessionId: session, timestamp: ts }, w, ctx.auditId, taskId),
      );
      const res = await appendTraceLines(sdir, traceIdentity, traceSize, lines);
      // Remembered only when the trace was as scanned (its mtime too): else the runtime's last write is not known.
      if (res.after && res.beforeMtimeMs === traceMtimeMs) ctx.ownAppend(v.root, session, res.after, v.lastWriteMs);
      const landed = works.filter((w, i) => {
        const why = res.failures[i];
        if (why !== undefined) {
          ctx.fail({ target, code: Codes.ioError, detail: `could not mark background command ${w.workId} of session ${session} as lost (${why}); it is not reported` });
        }
        return why === undefined;
      });
      if (landed.length === 0) return undefined;
      ctx.task({
        taskId,
        contextId: mintId('ctx_'),
        trust: lowestTrust(summary, landed),
        messagePartsBytes: Buffer.byteLength(lostReportText(session, landed)),
        session: { id: session, root: v.root, workIds: landed.map((w) => w.workId) },
      });
      return { landed, taskId };
    });
    for (const w of marks?.landed ?? []) ctx.action(lostAction(w, marks?.taskId ?? null), { session_id: session, work_id: w.workId, task_id: marks?.taskId ?? null });
  } catch (err) {
    if (isAbort(err)) throw err;
    const code = codeOf(err);
    (code === Codes.changedSinceScan || code === Codes.symlink || code === Codes.notRegular ? ctx.skip : ctx.fail)({ target, code, detail: describeError(err) });
  } finally {
    await sdir?.close();
    await rootDir?.close();
    await lock?.release();
  }
}
