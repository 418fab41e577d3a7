// Step "remove": what the policies take — sessions over their root's max_age/max_sessions, then
// records over max_age — held by the undo window or removed at once, as their fates say
// (src/plan/fates.ts); the same code acts for the budget step. It reports what the policies
// condemn and the plan keeps (live, protected, another user's), and every store the blast-radius
// guard stopped (one `blast_radius` error each; nothing there is taken by any rule).
// Guarantees:
// - Only what the plan chose; the intent is in the audit log before the removal starts, and the
//   names it gives entries in a capsule's directory (the hold, the trash, the kept-aside name) are
//   in murmur-gc's registry before that (src/gchome/registry.ts; docs/design.md §4a).
// - A removal is a rename into a `.murmur-gc-trash.*` directory of the same parent, a re-check
//   there (the session's trace / the record's file unchanged since the scan; otherwise it is put
//   back and skipped), then deletion — all through the parent's descriptor. A hold is a rename
//   within the root (a session) or into `<home>/gc/quarantine` (a context), re-checked the same way.
// - An act that does not happen is reported, and its item counts as staying for a budget planned
//   again (ctx.failed).
// - Acts only through ctx.fx: a dry run opens, verifies and measures the same entries, and
//   changes nothing.
import { Codes, GcError, codeOf, describeError, isAbort } from '../../errors.js';
import { CONVERSATIONS_DIR, RECORD_FILE, type ContextScan } from '../../runtime/inventory.js';
import type { HeldLock } from '../../gchome/lock.js';
import type { ItemMeta } from '../../gchome/quarantine-layout.js';
import type { HeldAt } from '../report.js';
import type { SessionView } from '../world.js';
import { Dir, identityOf, sameIdentity } from '../../fsx/safe-fs.js';
import {
  acted,
  fail,
  notWritable,
  progress,
  skip,
  type RecordStorePlan,
  type SessionsRootPlan,
  type SweepContext,
  type StepTally,
} from './context.js';
import { openChain } from '../../fsx/dirs.js';
import { holdRecord, recordFailure } from './record-lock.js';
import {
  besidePlanFor,
  completeHeldBeside,
  openBesideDirs,
  removeBeside,
  reportBesideSkips,
  type BesideDirs,
} from './beside.js';
import { fingerprintOf, placing, type Placed } from '../../gchome/registry.js';
import { keptName, trashName } from '../../fsx/remove.js';
import { sessionQuarantineName } from '../../runtime/gc-entries.js';
import type { BudgetReason, SessionRemovalReason } from '../../plan/budget.js';
import { itemKey, type Fate, type Stop } from '../../plan/fates.js';
import { failpoint } from '../../failpoint.js';
import { proceedHint } from './guard.js';

/** A taking fate: held, or removed for good. */
export type Taking = Extract<Fate, { fate: 'held' } | { fate: 'removed' }>;

/** The rules a policy takes by (the remove step acts on them; a budget's are the budget step's). */
const POLICY = new Set(['max_age', 'max_sessions']);
/** The rules of a policy, a truncation's included: what the remove step reports as condemning a kept item. */
const POLICY_RULES = new Set(['max_age', 'max_sessions', 'max_messages']);

/** Whether the remove step acts on this fate (what a policy takes); the budget step acts on the rest. */
export function policyTakes(f: Fate | undefined): f is Taking {
  if (f?.fate === 'held') return POLICY.has(f.rule);
  if (f?.fate === 'removed') return POLICY.has(f.rule) || (f.condemnedBy !== undefined && POLICY.has(f.condemnedBy));
  return false;
}

/** Whether the budget step acts on this fate (what max_bytes or keep_free takes in place). */
export function budgetTakes(f: Fate | undefined): f is Taking {
  return (f?.fate === 'held' || f?.fate === 'removed') && !policyTakes(f);
}

export async function removeStep(ctx: SweepContext): Promise<StepTally> {
  const tally = { items: 0, bytes: 0 };
  const fates = ctx.fates;
  if (!fates) return tally;
  let total = 0;
  for (const f of fates.items.values()) if (policyTakes(f)) total++;
  let done = 0;
  const tick = () => progress(ctx, ++done, total, tally.bytes);
  for (const s of fates.stops) reportStop(ctx, s);
  for (const p of ctx.sessionPlans) {
    await completeHeldBeside(ctx, p, tally);
    reportSessionsKept(ctx, p, false);
    const list = takings(
      ctx,
      p.key,
      p.views.map((v) => v.scan.name),
      policyTakes,
    );
    await removeSessions(ctx, p, list, tally, tick);
  }
  const home = ctx.homeDir;
  if (!home) return tally;
  for (const r of ctx.recordPlans) {
    reportRecordsKept(ctx, r, false);
    for (const { name, fate } of takings(
      ctx,
      r.key,
      r.contexts.map((c) => c.context),
      policyTakes,
    )) {
      ctx.signal?.throwIfAborted();
      const c = contextNamed(r.contexts, name);
      if (!c) continue;
      const bytes = await removeRecord(ctx, home, c, r, fate);
      if (bytes !== undefined) {
        tally.items++;
        tally.bytes += bytes;
      }
      tick();
    }
  }
  return tally;
}

/** The items of one store whose fate `which` selects, in the store's order. */
/** A store's contexts by name, made on the first lookup and kept while the list lives. */
const contextsByName = new WeakMap<readonly ContextScan[], Map<string, ContextScan>>();
export function contextNamed(contexts: readonly ContextScan[], name: string): ContextScan | undefined {
  let m = contextsByName.get(contexts);
  if (!m) {
    m = new Map();
    for (const c of contexts) if (!m.has(c.context)) m.set(c.context, c);
    contextsByName.set(contexts, m);
  }
  return m.get(name);
}

export function takings(
  ctx: SweepContext,
  key: string,
  names: string[],
  which: (f: Fate | undefined) => f is Taking,
): { name: string; fate: Taking }[] {
  const out: { name: string; fate: Taking }[] = [];
  for (const name of names) {
    const f = ctx.fates?.items.get(itemKey(key, name));
    if (which(f)) out.push({ name, fate: f });
  }
  return out;
}

/** The words of a taking fate's reason: the rule that takes it. */
export function reasonOf(f: Taking): SessionRemovalReason {
  return f.rule;
}

/** One `blast_radius` error for a store the guard stopped, naming what every rule together would take. */
export function reportStop(ctx: SweepContext, s: Stop): void {
  const store = s.store.slice(s.store.indexOf(':') + 1);
  const target = s.kind === 'sessions' ? store : `${ctx.home}/${CONVERSATIONS_DIR}/${store}`;
  const shown = s.going.slice(0, 10).join(', ') + (s.going.length > 10 ? `, … (${s.going.length - 10} more)` : '');
  const hint = proceedHint(ctx);
  fail(ctx, {
    target,
    code: Codes.blastRadius,
    detail: `this sweep would remove or hold ${s.going.length} of ${s.present} ${s.kind} in ${target} (every rule together: ${shown}); ${s.limit}, so nothing was removed or held there. To proceed: ${hint}`,
  });
}

/** Why a kept item a rule condemns stays, said once (live, protected, another user's, not writable). */
export function reportSessionsKept(ctx: SweepContext, p: SessionsRootPlan, budgets: boolean): void {
  let unwritable = 0;
  for (const v of p.views) {
    const f = ctx.fates?.items.get(itemKey(p.key, v.scan.name));
    if (f?.fate !== 'kept' || f.condemnedBy === undefined || POLICY_RULES.has(f.condemnedBy) === budgets) continue;
    const target = `${p.input.root}/${v.scan.name}`;
    const by = budgets ? 'the disk budget would remove it' : `${f.condemnedBy} condemns it`;
    if (f.why === 'protected')
      skip(ctx, {
        target,
        code: Codes.protected,
        detail: `${target} is protected (murmur-gc protection ls; murmur-gc release lets the policy act on it); kept although ${by}`,
      });
    else if (f.why === 'live')
      skip(ctx, { target, code: Codes.liveSession, detail: `${v.scan.name} is live (${v.why}); kept although ${by}` });
    else if (f.why === 'foreign_owner')
      skip(ctx, { target, code: Codes.foreignOwner, detail: `${target} belongs to uid ${v.scan.uid}; not removed` });
    else if (f.why === 'not_writable') unwritable++;
  }
  if (unwritable > 0)
    notWritable(ctx, p.input.root, unwritable === 1 ? 'session to remove' : 'sessions to remove', unwritable);
}

export function reportRecordsKept(ctx: SweepContext, r: RecordStorePlan, budgets: boolean): void {
  for (const c of r.contexts) {
    const f = ctx.fates?.items.get(itemKey(r.key, c.context));
    if (f?.fate !== 'kept' || f.condemnedBy === undefined || POLICY_RULES.has(f.condemnedBy) === budgets) continue;
    const target = `${r.store}/${c.context}`;
    const by = budgets ? 'the disk budget would remove it' : `${f.condemnedBy} condemns it`;
    if (f.why === 'protected')
      skip(ctx, {
        target,
        code: Codes.protected,
        detail: `context ${c.context} is protected (murmur-gc protection ls; murmur-gc release lets the policy act on it); kept although ${by}`,
      });
    else if (f.why === 'live')
      skip(ctx, {
        target,
        code: Codes.liveContext,
        detail: `context ${c.context} is named by a live session; kept although ${by}`,
      });
    else if (f.why === 'foreign_owner')
      skip(ctx, {
        target,
        code: Codes.foreignOwner,
        detail: `${c.path} belongs to another user; not ${f.condemnedBy === 'max_messages' ? 'truncated' : 'removed'}`,
      });
  }
}

/** Holds or removes, as each fate says, the sessions `list` names in one root (the remove and budget steps). */
export async function removeSessions(
  ctx: SweepContext,
  p: SessionsRootPlan,
  list: { name: string; fate: Taking }[],
  tally: { items: number; bytes: number },
  tick: () => void,
): Promise<void> {
  const { input, scan, views, beside } = p;
  if (list.length === 0) return;
  // What goes with them from beside the root (docs/design.md §9a), chosen from the traces the
  // scan read before anything is removed.
  const besidePlan = input.isAuditRoot
    ? undefined
    : besidePlanFor(
        ctx,
        beside,
        views,
        list.map((r) => r.name),
      );
  let rootDir: Dir;
  try {
    rootDir = await Dir.open(input.root);
    if (!scan.identity || !sameIdentity(rootDir.identity, scan.identity)) {
      await rootDir.close();
      throw new GcError(Codes.changedSinceScan, `${input.root} was replaced since it was scanned`);
    }
  } catch (err) {
    fail(ctx, { target: input.root, code: codeOf(err), detail: `${input.root}: ${describeError(err)}` });
    for (const r of list) ctx.failed.add(itemKey(p.key, r.name));
    return;
  }
  const dirs = besidePlan?.remove.length && beside ? await openBesideDirs(ctx, rootDir, beside) : undefined;
  const viewOf = new Map(views.map((v) => [v.scan.name, v]));
  const gone = new Set<string>();
  try {
    if (!input.isAuditRoot) {
      // The names these acts give entries in a capsule's directory, recorded before any is made
      // (src/gchome/registry.ts): only what the registry names is ever taken for murmur-gc's.
      try {
        await ctx.fx.place(await placings(ctx, viewOf, rootDir, list, besidePlan, dirs));
      } catch (err) {
        if (isAbort(err)) throw err;
        fail(ctx, {
          target: input.root,
          code: codeOf(err),
          detail: `${input.root}: ${describeError(err)}; nothing there is removed or held this sweep`,
        });
        for (const r of list) ctx.failed.add(itemKey(p.key, r.name));
        return;
      }
    }
    for (const r of list) {
      ctx.signal?.throwIfAborted();
      const view = viewOf.get(r.name);
      if (!view) continue;
      const key = itemKey(p.key, r.name);
      ctx.acts.set(key, r.fate);
      const target = `${input.root}/${r.name}`;
      const reason = reasonOf(r.fate);
      const hold = r.fate.fate === 'held' ? r.fate.untilMs : undefined;
      try {
        const verify = sessionUnchanged(view, target);
        const signal = ctx.signal;
        const retention = { store: 'sessions', reason, target: r.name, parent: input.root } as const;
        const mine = besidePlan?.remove.filter((i) => i.session === r.name) ?? [];
        let besideBytes = 0;
        if (hold === undefined && mine.length && dirs && beside) {
          // Removed at once, what goes with a session goes before it, while its trace (the
          // evidence) is still there: killed in between, the next sweep finds the session still
          // due and finishes (docs/design.md §9a).
          await checkSession(rootDir, r.name, view, verify);
          besideBytes = await removeBeside(ctx, rootDir, beside, dirs, mine, reason, undefined);
          tally.bytes += besideBytes;
          failpoint('beside:session_boundary');
        }
        const { bytes, held } = await ctx.fx.audited(
          { kind: 'remove_session', ...retention },
          async (): Promise<{ bytes: number; held?: HeldAt }> => {
            if (hold === undefined)
              return {
                bytes: await ctx.fx.remove(rootDir, r.name, view.scan.identity, {
                  verify,
                  ...(signal ? { signal } : {}),
                }),
              };
            const h = await ctx.fx.holdSession(rootDir, r.name, view.scan.identity, hold, verify);
            return { bytes: h.bytes, held: { until_ms: hold, path: `${input.root}/${h.entry}` } };
          },
          () => ({ retention: { ...retention, ...(hold !== undefined ? { heldUntilMs: hold } : {}) } }),
        );
        ctx.removedSessions.add(target);
        gone.add(r.name);
        if (held && mine.length && dirs && beside) {
          // Held, they go into the session's hold, which exists only now; killed in between, the
          // next sweep finishes from the held session's trace (completeHeldBeside).
          failpoint('beside:session_boundary');
          besideBytes = await removeBeside(ctx, rootDir, beside, dirs, mine, reason, {
            entry: held.path.slice(input.root.length + 1),
            identity: view.scan.identity,
          });
          tally.bytes += besideBytes;
        }
        if (held) {
          const entry = held.path.slice(input.root.length + 1);
          ctx.heldNow.push({
            kind: 'session',
            target: r.name,
            origin: input.root,
            untilMs: held.until_ms,
            removedMs: ctx.nowMs,
            bytes: bytes + besideBytes,
            parent: input.root,
            entry,
          });
        }
        const condemned =
          r.fate.fate === 'removed' && r.fate.condemnedBy !== undefined ? { condemned_by: r.fate.condemnedBy } : {};
        acted(
          ctx,
          {
            kind: 'remove_session',
            root: input.root,
            target: r.name,
            reason,
            bytes,
            ...condemned,
            ...(held ? { held } : {}),
          },
          'debug',
          { root: input.root, target: r.name, reason, bytes },
        );
        tally.items++;
        tally.bytes += bytes;
      } catch (err) {
        if (isAbort(err)) throw err;
        ctx.failed.add(key);
        const code = codeOf(err);
        (code === Codes.changedSinceScan ? skip : fail)(ctx, {
          target,
          code,
          detail: `${target}: ${describeError(err)}`,
        });
      }
      tick();
    }
    reportBesideSkips(ctx, besidePlan, gone);
  } finally {
    await dirs?.close();
    await rootDir.close();
  }
}

/**
 * The registry records of what removing (or holding) `list` in this root names: a hold, or the
 * trash and kept-aside names of a removal at once, per session (as it is now, when it is still the
 * one scanned); and for each child that goes at once, its trash and kept-aside names in
 * `children/`. A child that goes into its session's hold makes no name of its own.
 */
async function placings(
  ctx: SweepContext,
  viewOf: ReadonlyMap<string, SessionView>,
  rootDir: Dir,
  list: { name: string; fate: Taking }[],
  besidePlan: ReturnType<typeof besidePlanFor>,
  dirs: BesideDirs | undefined,
): Promise<Placed[]> {
  const run = ctx.auditId;
  const out: Placed[] = [];
  const atOnce = new Set<string>();
  for (const r of list) {
    const view = viewOf.get(r.name);
    const st = view ? await rootDir.lstat(r.name) : undefined;
    if (!view || !st?.isDirectory() || !sameIdentity(identityOf(st), view.scan.identity)) continue;
    const fp = fingerprintOf(st);
    if (r.fate.fate === 'held') {
      out.push(
        placing(rootDir.path, sessionQuarantineName(r.fate.untilMs, r.name), 'hold', fp, run, {
          session: r.name,
          untilMs: r.fate.untilMs,
          reason: r.fate.rule,
        }),
      );
    } else {
      atOnce.add(r.name);
      out.push(
        placing(rootDir.path, trashName(run, r.name), 'trash', fp, run),
        placing(rootDir.path, keptName(run, r.name), 'kept', fp, run),
      );
    }
  }
  const children = dirs?.children;
  for (const it of besidePlan?.remove ?? []) {
    if (it.kind !== 'child_workdir' || !atOnce.has(it.session) || !children) continue;
    const st = await children.lstat(it.name);
    if (!st?.isDirectory()) continue;
    const fp = fingerprintOf(st);
    out.push(
      placing(children.path, trashName(run, it.name), 'trash', fp, run),
      placing(children.path, keptName(run, it.name), 'kept', fp, run),
    );
  }
  return out;
}

/** `verify` run on the session `root/name` in place (before what goes with it is removed). */
async function checkSession(
  root: Dir,
  name: string,
  view: SessionView,
  verify: (sdir: Dir) => Promise<void>,
): Promise<void> {
  await using d = await root.openDir(name, view.scan.identity);
  await verify(d);
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

/** Holds or removes one record's context directory as its fate says; the bytes, or undefined when nothing happened. */
export async function removeRecord(
  ctx: SweepContext,
  home: Dir,
  c: ContextScan,
  r: RecordStorePlan,
  fate: Taking,
): Promise<number | undefined> {
  const store = r.store;
  const target = `${store}/${c.context}`;
  const key = itemKey(r.key, c.context);
  ctx.acts.set(key, fate);
  const reason = reasonOf(fate);
  let lock: HeldLock | undefined;
  let storeDir: Dir | undefined;
  try {
    const locked = await holdRecord(ctx, home, store, c);
    if (locked === 'busy') {
      ctx.failed.add(key);
      return undefined;
    }
    lock = locked;
    storeDir = await openChain(home, [CONVERSATIONS_DIR, store]);
    const verify = async (dir: Dir) => {
      const st = await dir.lstat(RECORD_FILE);
      if (
        !st ||
        !sameIdentity(identityOf(st), c.file.identity) ||
        Number(st.size) !== c.file.size ||
        Number(st.mtimeMs) !== c.file.mtimeMs
      ) {
        throw new GcError(Codes.concurrentAppend, `${c.path} was written since it was scanned; kept`);
      }
    };
    const hold = fate.fate === 'held' ? fate.untilMs : undefined;
    const sdir = storeDir;
    const retention = { store: 'records', reason, target: c.context, parent: sdir.path } as const;
    const { bytes, held } = await ctx.fx.audited(
      { kind: 'remove_record', ...retention },
      async (): Promise<{ bytes: number; held?: HeldAt }> => {
        if (hold !== undefined) {
          const meta: ItemMeta = {
            kind: 'context',
            store,
            context: c.context,
            removed_ms: ctx.nowMs,
            until_ms: hold,
            reason,
            run: ctx.auditId,
          };
          try {
            const h = await ctx.fx.holdContext(home, sdir, c.context, c.dirIdentity, meta, verify);
            ctx.heldNow.push({
              kind: 'context',
              target: c.context,
              origin: store,
              untilMs: hold,
              removedMs: ctx.nowMs,
              bytes: h.bytes,
              parent: h.parent,
              entry: h.entry,
              reason,
            });
            return { bytes: h.bytes, held: { until_ms: hold, path: h.path } };
          } catch (err) {
            // Only a move the kernel refuses across filesystems falls back to removal at once.
            if (!(err instanceof GcError && err.code === Codes.crossDevice)) throw err;
            skip(ctx, { target, code: Codes.crossDevice, detail: `${describeError(err)}; removed at once` });
          }
        }
        const lockSignal = lock?.signal;
        return {
          bytes: await ctx.fx.remove(sdir, c.context, c.dirIdentity, {
            verify,
            ...(lockSignal ? { signal: lockSignal } : {}),
          }),
        };
      },
      (o) => ({ retention: { ...retention, ...(o.held ? { heldUntilMs: o.held.until_ms } : {}) } }),
    );
    const condemned =
      fate.fate === 'removed' && fate.condemnedBy !== undefined ? { condemned_by: fate.condemnedBy } : {};
    acted(
      ctx,
      {
        kind: 'remove_record',
        record: store,
        target: c.context,
        reason: reason as 'max_age' | BudgetReason,
        path: c.path,
        bytes,
        ...condemned,
        ...(held ? { held } : {}),
      },
      'debug',
      { record: store, target: c.context, reason, bytes },
    );
    return bytes;
  } catch (err) {
    ctx.failed.add(key);
    recordFailure(ctx, err, target, lock);
    return undefined;
  } finally {
    await storeDir?.close();
    await lock?.release();
  }
}
