// Step "remove": sessions over their root's max_age/max_sessions, then records over max_age.
// Guarantees:
// - Only what the plan step chose; a session or record owned by another uid is skipped
//   (foreign_owner); the intent is in the audit log before the removal starts.
// - A removal is a rename into a `.murmur-gc-trash.*` directory of the same parent, a re-check
//   there (the session's trace / the record's file unchanged since the scan; otherwise it is put
//   back and skipped), then deletion — all through the parent's descriptor.
// - Acts only through ctx.fx: a dry run opens, verifies and measures the same entries, and
//   changes nothing.
import { Codes, GcError, codeOf, describeError, isAbort } from '../../errors.js';
import { CONVERSATIONS_DIR, RECORD_FILE, type ContextScan } from '../../runtime/inventory.js';
import type { HeldLock } from '../../gchome/lock.js';
import type { ItemMeta } from '../../gchome/quarantine-layout.js';
import type { HeldAt } from '../report.js';
import type { SessionView } from '../world.js';
import { Dir, identityOf, sameIdentity } from '../../fsx/safe-fs.js';
import { acted, fail, notWritable, progress, skip, type SessionsRootPlan, type SweepContext, type StepTally } from './context.js';
import { openChain } from '../../fsx/dirs.js';
import { holdRecord, recordFailure } from './record-lock.js';
import { besidePlanFor, completeHeldBeside, openBesideDirs, removeBeside, reportBesideSkips } from './beside.js';
import type { BudgetReason, SessionRemovalReason } from '../../plan/budget.js';
import { failpoint } from '../../failpoint.js';
import { tooLarge } from './guard.js';

export async function removeStep(ctx: SweepContext): Promise<StepTally> {
  const tally = { items: 0, bytes: 0 };
  const total =
    ctx.sessionPlans.reduce((n, p) => n + p.plan.remove.length, 0) + ctx.recordPlans.reduce((n, p) => n + p.plan.remove.length, 0);
  let done = 0;
  const tick = () => progress(ctx, ++done, total, tally.bytes);
  for (const p of ctx.sessionPlans) {
    await completeHeldBeside(ctx, p, tally);
    await removeSessions(ctx, p, tally, tick);
  }
  const home = ctx.homeDir;
  if (!home) return tally;
  for (const { policy, contexts, plan } of ctx.recordPlans) {
    for (const s of plan.skip) skip(ctx, { target: `${policy.store}/${s.context}`, code: s.code, detail: s.detail });
    if (tooLarge(ctx, `${home.path}/${CONVERSATIONS_DIR}/${policy.store}`, 'records', contexts.length, plan.remove.map((r) => r.context))) continue;
    for (const r of plan.remove) {
      ctx.signal?.throwIfAborted();
      const c = contexts.find((x) => x.context === r.context);
      if (!c) continue;
      const bytes = await removeRecord(ctx, home, c, policy.store, r.reason);
      if (bytes !== undefined) {
        tally.items++;
        tally.bytes += bytes;
      }
      tick();
    }
  }
  return tally;
}

/** Removes the sessions `plan` names in one root (also used by the budget step, with its reasons). */
export async function removeSessions(
  ctx: SweepContext,
  { input, scan, views, plan, beside }: Omit<SessionsRootPlan, 'plan'> & { plan: { remove: { name: string; reason: SessionRemovalReason }[]; skip: SessionsRootPlan['plan']['skip'] } },
  tally: { items: number; bytes: number },
  tick: () => void,
): Promise<void> {
  for (const s of plan.skip) skip(ctx, { target: `${input.root}/${s.name}`, code: s.code, detail: s.detail });
  if (plan.remove.length === 0) return;
  if (notWritable(ctx, input.root, plan.remove.length === 1 ? 'session to remove' : 'sessions to remove', plan.remove.length)) return;
  // What goes with them from beside the root (docs/design.md §9a), chosen from the traces the
  // scan read before anything is removed; the blast-radius guard counts it too.
  const besidePlan = input.isAuditRoot ? undefined : besidePlanFor(ctx, beside, views, plan.remove.map((r) => r.name));
  const besidePresent = (beside?.children?.entries.length ?? 0) + (beside?.logs?.wrk.length ?? 0);
  const besideNames = (besidePlan?.remove ?? []).map((i) => (i.kind === 'child_workdir' ? `children/${i.name}` : `logs/${i.name}`));
  if (tooLarge(ctx, input.root, 'sessions', views.length + besidePresent, [...plan.remove.map((r) => r.name), ...besideNames])) return;
  let rootDir: Dir;
  try {
    rootDir = await Dir.open(input.root);
    if (!scan.identity || !sameIdentity(rootDir.identity, scan.identity)) {
      await rootDir.close();
      throw new GcError(Codes.changedSinceScan, `${input.root} was replaced since it was scanned`);
    }
  } catch (err) {
    fail(ctx, { target: input.root, code: codeOf(err), detail: `${input.root}: ${describeError(err)}` });
    return;
  }
  const dirs = besidePlan?.remove.length && beside ? await openBesideDirs(ctx, rootDir, beside) : undefined;
  const gone = new Set<string>();
  try {
    for (const r of plan.remove) {
      ctx.signal?.throwIfAborted();
      const view = views.find((v) => v.scan.name === r.name);
      if (!view) continue;
      const target = `${input.root}/${r.name}`;
      if (view.scan.uid !== ctx.uid) {
        skip(ctx, { target, code: Codes.foreignOwner, detail: `${target} belongs to uid ${view.scan.uid}; not removed` });
        continue;
      }
      // murmur-gc's own audit sessions are not held: the undo window is for the runtime's data.
      const hold = input.isAuditRoot ? undefined : holdsFor(ctx, r.reason);
      try {
        const verify = sessionUnchanged(view, target);
        const signal = ctx.signal;
        const retention = { store: 'sessions', reason: r.reason, target: r.name, parent: input.root } as const;
        const mine = besidePlan?.remove.filter((i) => i.session === r.name) ?? [];
        let besideBytes = 0;
        if (hold === undefined && mine.length && dirs && beside) {
          // Removed at once, what goes with a session goes before it, while its trace (the
          // evidence) is still there: killed in between, the next sweep finds the session still
          // due and finishes (docs/design.md §9a).
          await checkSession(rootDir, r.name, view, verify);
          besideBytes = await removeBeside(ctx, rootDir, beside, dirs, mine, r.reason, undefined);
          tally.bytes += besideBytes;
          failpoint('beside:session_boundary');
        }
        const { bytes, held } = await ctx.fx.audited(
          { kind: 'remove_session', ...retention },
          async (): Promise<{ bytes: number; held?: HeldAt }> => {
            if (hold === undefined) return { bytes: await ctx.fx.remove(rootDir, r.name, view.scan.identity, { verify, ...(signal ? { signal } : {}) }) };
            const h = await ctx.fx.holdSession(rootDir, r.name, view.scan.identity, hold, verify);
            return { bytes: h.bytes, held: { until_ms: hold, path: `${input.root}/${h.entry}` } };
          },
          () => ({ retention }),
        );
        ctx.removedSessions.add(target);
        gone.add(r.name);
        if (held && mine.length && dirs && beside) {
          // Held, they go into the session's hold, which exists only now; killed in between, the
          // next sweep finishes from the held session's trace (completeHeldBeside).
          failpoint('beside:session_boundary');
          besideBytes = await removeBeside(ctx, rootDir, beside, dirs, mine, r.reason, { entry: held.path.slice(input.root.length + 1), identity: view.scan.identity });
          tally.bytes += besideBytes;
        }
        if (held) {
          // (a held session holds what went with it, src/gchome/quarantine-beside.ts)
          const entry = held.path.slice(input.root.length + 1);
          // What went with it sits in its hold now, under directories of its own: measured whole.
          const heldBytes = mine.length > 0 ? await ctx.fx.heldBytes(rootDir, entry, bytes + besideBytes) : bytes;
          ctx.heldNow.push({ kind: 'session', target: r.name, origin: input.root, untilMs: held.until_ms, removedMs: ctx.nowMs, bytes: heldBytes, parent: input.root, entry });
        }
        acted(ctx, { kind: 'remove_session', root: input.root, target: r.name, reason: r.reason, bytes, ...(held ? { held } : {}) }, 'debug', { root: input.root, target: r.name, reason: r.reason, bytes });
        tally.items++;
        tally.bytes += bytes;
      } catch (err) {
        if (isAbort(err)) throw err;
        const code = codeOf(err);
        (code === Codes.changedSinceScan ? skip : fail)(ctx, { target, code, detail: `${target}: ${describeError(err)}` });
      }
      tick();
    }
    reportBesideSkips(ctx, besidePlan, gone);
  } finally {
    await dirs?.close();
    await rootDir.close();
  }
}

/** `verify` run on the session `root/name` in place (before what goes with it is removed). */
async function checkSession(root: Dir, name: string, view: SessionView, verify: (sdir: Dir) => Promise<void>): Promise<void> {
  const d = await root.openDir(name, view.scan.identity);
  try {
    await verify(d);
  } finally {
    await d.close();
  }
}

/**
 * A session written since the scan (a resume reading or reconciling it, a late teardown) is put
 * back and kept: liveness is re-checked at the moment of action.
 */
function sessionUnchanged(view: SessionView, target: string): (sdir: Dir) => Promise<void> {
  return async (sdir: Dir) => {
    const st = await sdir.lstat('trace.jsonl');
    const scanned = view.scan.trace?.ok ? view.scan.trace : undefined;
    const same = scanned
      ? st !== undefined && Number(st.size) === scanned.size && Number(st.mtimeMs) === scanned.mtimeMs
      : st === undefined || view.scan.trace !== undefined;
    if (!same) throw new GcError(Codes.changedSinceScan, `${target} was written since it was scanned; kept`);
  };
}

/**
 * The undo window's deadline for a removal with this reason, or undefined when it is removed at
 * once: quarantine off, or a disk budget (it removes to free space; holding would free nothing).
 */
export function holdsFor(ctx: SweepContext, reason: string): number | undefined {
  if (ctx.quarantineMs === undefined || reason === 'max_bytes' || reason === 'keep_free') return undefined;
  return ctx.nowMs + ctx.quarantineMs;
}

/** Removes one record's context directory; the bytes freed, or undefined when it was not removed. */
export async function removeRecord(ctx: SweepContext, home: Dir, c: ContextScan, store: string, reason: 'max_age' | BudgetReason): Promise<number | undefined> {
  const target = `${store}/${c.context}`;
  if (c.dirUid !== ctx.uid || c.file.uid !== ctx.uid) {
    skip(ctx, { target, code: Codes.foreignOwner, detail: `${c.path} belongs to another user; not removed` });
    return undefined;
  }
  let lock: HeldLock | undefined;
  let storeDir: Dir | undefined;
  try {
    const locked = await holdRecord(ctx, home, store, c);
    if (locked === 'busy') return undefined;
    lock = locked;
    storeDir = await openChain(home, [CONVERSATIONS_DIR, store]);
    const verify = async (dir: Dir) => {
      const st = await dir.lstat(RECORD_FILE);
      if (!st || !sameIdentity(identityOf(st), c.file.identity) || Number(st.size) !== c.file.size || Number(st.mtimeMs) !== c.file.mtimeMs) {
        throw new GcError(Codes.concurrentAppend, `${c.path} was written since it was scanned; kept`);
      }
    };
    let hold = holdsFor(ctx, reason);
    if (hold !== undefined && storeDir.identity.dev !== home.identity.dev) {
      // The quarantine is under the home: a store on another filesystem cannot be moved there.
      skip(ctx, { target, code: Codes.crossDevice, detail: `${storeDir.path} is on another filesystem than ${home.path}: ${c.context} cannot be held in the quarantine and is removed at once` });
      hold = undefined;
    }
    const sdir = storeDir;
    const retention = { store: 'records', reason, target: c.context, parent: sdir.path } as const;
    const { bytes, held } = await ctx.fx.audited(
      { kind: 'remove_record', ...retention },
      async (): Promise<{ bytes: number; held?: HeldAt }> => {
        if (hold !== undefined) {
          const meta: ItemMeta = { kind: 'context', store, context: c.context, removed_ms: ctx.nowMs, until_ms: hold, reason, run: ctx.auditId };
          try {
            const h = await ctx.fx.holdContext(home, sdir, c.context, c.dirIdentity, meta, verify);
            // the item as the quarantine holds it: the context, its sidecar and directory
            const heldBytes = await ctx.fx.heldBytes(ctx.quarantineDir, h.entry, h.bytes);
            ctx.heldNow.push({ kind: 'context', target: c.context, origin: store, untilMs: hold, removedMs: ctx.nowMs, bytes: heldBytes, parent: h.parent, entry: h.entry, reason });
            return { bytes: h.bytes, held: { until_ms: hold, path: h.path } };
          } catch (err) {
            // Only a move the kernel refuses across filesystems falls back to removal at once.
            if (!(err instanceof GcError && err.code === Codes.crossDevice)) throw err;
            skip(ctx, { target, code: Codes.crossDevice, detail: `${describeError(err)}; removed at once` });
          }
        }
        const lockSignal = lock?.signal;
        return { bytes: await ctx.fx.remove(sdir, c.context, c.dirIdentity, { verify, ...(lockSignal ? { signal: lockSignal } : {}) }) };
      },
      () => ({ retention }),
    );
    acted(ctx, { kind: 'remove_record', record: store, target: c.context, reason, path: c.path, bytes, ...(held ? { held } : {}) }, 'debug', { record: store, target: c.context, reason, bytes });
    return bytes;
  } catch (err) {
    recordFailure(ctx, err, target, lock);
    return undefined;
  } finally {
    await storeDir?.close();
    await lock?.release();
  }
}
