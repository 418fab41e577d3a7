// What goes with a removed (or held) session from beside its sessions root `W/.murmur/`: the child
// workdirs and `wrk_` logs its own trace proves are its and finished (docs/design.md §9a; the
// choice is src/plan/workdir.ts). Used by the remove and budget steps through removeSessions.
// The blast-radius guard counts these items apart from the sessions (src/plan/fates.ts counts
// sessions only): completing the holds of a root is guarded over its child workdirs and work logs.
// Guarantees:
// - The evidence is the trace summary the scan read before anything was removed. Nothing goes
//   while a session of the root that stays has no readable trace (it may name anything there).
// - Each item is intended in the audit log before it changes (`parent` = W, `target` = its path
//   relative to W: `.murmur/children/<name>`, `logs/wrk_<id>.log`) and becomes a target of the
//   parent's `retention` line (same store and reason).
// - A child's liveness is judged again at the moment of action (recheckChild: read afresh through
//   the open `children/` descriptor, running records read now); live → kept, `child_kept`. And
//   once it is moved (into trash, or into the hold), before anything in it goes, it is listed
//   again (childStillDue): a session that started or was written inside it since, or a live
//   running record for a session there, puts it back and keeps it (`child_kept`).
// - A removal re-checks the entry's identity at the moment of action (a child goes through
//   fsx/remove.ts: rename to trash, descriptor-relative delete, never a link followed or a mount
//   crossed; a log is unlinked only while lstat still sees the file scanned). A hold moves the
//   entry into the held session (src/gchome/quarantine-beside.ts) with the same deadline.
// - Exactly-once under a kill: removed at once, a session's items go before it (its trace checked
//   unchanged first); held, after it, into its hold — and each sweep first holds into every open
//   hold of the root that the registry vouches for what its trace names and is still beside it
//   (completeHeldBeside), so a kill between the two is finished; nothing is ever held into an entry
//   the registry does not vouch for (docs/design.md §4a). A child a held session names is never an
//   orphan.
// - A dry run measures and lists each item with its parent session and size; nothing changes.
// - The disk-changing calls are the three in `act` below.
import { Codes, GcError, codeOf, describeError, isAbort } from '../../errors.js';
import { measureDir } from '../../fsx/remove.js';
import { Dir, sameIdentity, type Identity } from '../../fsx/safe-fs.js';
import {
  besideIndex,
  childEntryName,
  childLiveWhy,
  planBeside,
  type BesideItem,
  type BesideParent,
  type BesidePlan,
} from '../../plan/workdir.js';
import { isExpired } from '../../gchome/quarantine-layout.js';
import { listRootHeld } from '../../gchome/quarantine-store.js';
import { idTimestampMs } from '../../runtime/ids.js';
import { readTraceSummary } from '../../runtime/trace-scan.js';
import {
  CHILDREN_DIR,
  LOGS_DIR,
  WORKDIR_ROOT_NAME,
  lookInsideChild,
  rescanChild,
  type BesideScan,
  type ChildEntry,
  type LogEntry,
} from '../../runtime/workdir-scan.js';
import { probeProcess, readRunningRecords } from '../../runtime/running.js';
import { judgeLiveness, type RunningProbe } from '../../plan/liveness.js';
import type { SessionView } from '../world.js';
import { acted, fail, skip, type SessionsRootPlan, type SweepContext } from './context.js';
import { tooLarge } from './guard.js';
import type { SessionRemovalReason } from '../../plan/budget.js';

/**
 * What the sessions of one root claim beside it, gathered once from the traces the scan read: how
 * many sessions name each child and each work id, what each session names itself, and the
 * sessions whose trace cannot be read (in the views' order). besidePlanFor answers any set of
 * leaving sessions from it in time linear in what they name, not in the root's size.
 */
export interface BesideClaims {
  children: Map<string, number>;
  workIds: Map<string, number>;
  own: Map<string, { parent: BesideParent; children: ReadonlySet<string>; workIds: ReadonlySet<string> }>;
  unreadable: string[];
}

export function besideClaims(beside: BesideScan, views: readonly SessionView[]): BesideClaims {
  const out: BesideClaims = {
    children: new Map(),
    workIds: new Map(),
    own: new Map(),
    unreadable: [],
  };
  const count = (m: Map<string, number>, names: ReadonlySet<string>) => {
    for (const n of names) m.set(n, (m.get(n) ?? 0) + 1);
  };
  for (const v of views) {
    const t = v.scan.trace?.ok ? v.scan.trace.summary : undefined;
    if (!t) {
      out.unreadable.push(v.scan.name);
      continue;
    }
    const children = new Set<string>();
    for (const d of t.delegations ?? []) {
      const n = childEntryName(d.childWorkdir, beside.workdir);
      if (n !== undefined) children.add(n);
    }
    const workIds = new Set(t.workIds ?? []);
    count(out.children, children);
    count(out.workIds, workIds);
    out.own.set(v.scan.name, {
      parent: { session: v.scan.name, delegations: t.delegations ?? [], workIds: t.workIds ?? [] },
      children,
      workIds,
    });
  }
  return out;
}

/**
 * The choice for the sessions `names` about to be removed from one root (undefined: nothing beside
 * it). `claims`: the root's, when the caller asks for many sets of names (besideClaims).
 */
export function besidePlanFor(
  ctx: SweepContext,
  beside: BesideScan | undefined,
  views: readonly SessionView[],
  names: readonly string[],
  held: readonly BesideParent[] = [],
  claims?: BesideClaims,
): BesidePlan | undefined {
  if (!beside || (!beside.children && !beside.logs)) return undefined;
  const c = claims ?? besideClaims(beside, views);
  const going = new Set(names);
  // what the leaving sessions name: a name is claimed by one that stays when more name it
  const goingChildren = new Map<string, number>();
  const goingWorkIds = new Map<string, number>();
  const parents: BesideParent[] = [...held];
  for (const name of going) {
    const own = c.own.get(name);
    if (!own) continue;
    parents.push(own.parent);
    for (const n of own.children) goingChildren.set(n, (goingChildren.get(n) ?? 0) + 1);
    for (const w of own.workIds) goingWorkIds.set(w, (goingWorkIds.get(w) ?? 0) + 1);
  }
  const claimedChildren = { has: (n: string) => (c.children.get(n) ?? 0) > (goingChildren.get(n) ?? 0) };
  const claimedWorkIds = { has: (w: string) => (c.workIds.get(w) ?? 0) > (goingWorkIds.get(w) ?? 0) };
  // a session that stays and whose trace cannot be read may name any child or log
  const unknown = c.unreadable.find((n) => !going.has(n));
  const uncertain = unknown === undefined ? undefined : `session ${unknown}`;
  // removal order: the planner's (names), so each session's items follow it
  const position = new Map<string, number>();
  names.forEach((n, i) => {
    if (!position.has(n)) position.set(n, i);
  });
  parents.sort((a, b) => (position.get(a.session) ?? -1) - (position.get(b.session) ?? -1));
  return planBeside(
    parents,
    {
      workdir: beside.workdir,
      children: beside.children?.entries ?? [],
      logs: beside.logs?.wrk ?? [],
      claimedChildren,
      claimedWorkIds,
      ...(uncertain !== undefined ? { uncertain } : {}),
      index: besideEntries(beside).index,
    },
    {
      uid: ctx.uid,
      nowMs: ctx.nowMs,
      liveGraceMs: ctx.config.liveGraceSecs * 1000,
      running: (s) => ctx.world.running.get(s) ?? 'none',
    },
  );
}

/**
 * The child `from/name` judged again at the moment of action, through the open `children/`
 * descriptor: read afresh (its sessions, grandchildren's too) with the running records as they are
 * now. Throws `child_kept` (saying why) when anything inside is live or cannot be judged — or, for
 * an orphan, when a session inside has no `session_end` — and `changed_since_scan` when the entry
 * is no longer the one scanned. Returns what it read: the look after the move is compared with it
 * (childStillDue).
 */
export async function recheckChild(
  ctx: SweepContext,
  from: Dir,
  name: string,
  identity: Identity,
  orphan: boolean,
): Promise<ChildEntry> {
  const fresh = await rescanChild(from, name, identity, ctx.signal);
  const { probes: running, liveUnder } = await runningNow(
    ctx,
    new Set(fresh.sessions.map((s) => s.name)),
    from.display(name),
  );
  const live =
    childLiveWhy(fresh, {
      uid: ctx.uid,
      nowMs: ctx.nowMs,
      liveGraceMs: ctx.config.liveGraceSecs * 1000,
      running: (s) => running.get(s) ?? 'none',
    }) ?? liveUnder;
  const unfinished = orphan ? fresh.sessions.find((s) => s.hasSessionEnd !== true) : undefined;
  const why = live ?? (unfinished ? `its session ${unfinished.name} has not finished (no session_end)` : undefined);
  if (why !== undefined) throw new GcError(Codes.childKept, `${why} (judged again at the moment of removal); kept`);
  return fresh;
}

/**
 * The look at a child right after it was moved out of `children/` (renamed into trash, or into
 * its session's hold), run on the moved directory before anything in it is deleted: a session
 * that started inside it since `before` was read (a name `before` does not have), or one written
 * since (another last write), or anything that cannot be judged now, or a running record of a
 * live process for a session there, throws `child_kept` — and the caller puts the child back. A
 * measure-only run looks at the child in place. (What a process already working inside the child
 * creates after this look is not seen: docs/limits.md.)
 */
export function childStillDue(ctx: SweepContext, before: ChildEntry, childPath: string): (moved: Dir) => Promise<void> {
  return async (moved: Dir) => {
    const now = await lookInsideChild(moved, ctx.signal);
    const kept = (why: string) =>
      new GcError(Codes.childKept, `${why} (seen right after it was moved to be removed); put back and kept`);
    if (now.unjudged !== undefined) throw kept(`nothing inside can be judged now (${now.unjudged})`);
    const seen = new Map<string, number>();
    for (const s of before.sessions)
      seen.set(`${s.name}\0${s.lastWriteMs}`, (seen.get(`${s.name}\0${s.lastWriteMs}`) ?? 0) + 1);
    for (const s of now.sessions) {
      const k = `${s.name}\0${s.lastWriteMs}`;
      const n = seen.get(k) ?? 0;
      if (n === 0)
        throw kept(
          before.sessions.some((b) => b.name === s.name)
            ? `its session ${s.name} was written since it was judged`
            : `a session ${s.name} started inside it since it was judged`,
        );
      seen.set(k, n - 1);
    }
    const { probes, liveUnder } = await runningNow(ctx, new Set(now.sessions.map((s) => s.name)), childPath);
    const alive = now.sessions.find((s) => probes.get(s.name) === 'alive');
    if (alive) throw kept(`a running record names a live process for its session ${alive.name}`);
    if (liveUnder !== undefined) throw kept(liveUnder);
  };
}

/**
 * Running-record probes, read now, for the sessions `ids` (the scan's when there is no home); and,
 * when `under` is given, why a live process's record names a session directory below that path
 * (a session that started there, whatever the child's listing showed).
 */
async function runningNow(
  ctx: SweepContext,
  ids: ReadonlySet<string>,
  under?: string,
): Promise<{ probes: Map<string, RunningProbe>; liveUnder?: string }> {
  const out = new Map<string, RunningProbe>();
  if (!ctx.homeDir) {
    for (const id of ids) out.set(id, ctx.world.running.get(id) ?? 'none');
    return { probes: out };
  }
  const rs = await readRunningRecords(ctx.homeDir);
  let liveUnder: string | undefined;
  const prefix = under === undefined ? undefined : `${under.replace(/\/+$/, '')}/`;
  for (const r of rs.records) {
    const inside = prefix !== undefined && r.workdir !== undefined && r.workdir.startsWith(prefix);
    if (!inside && (!ids.has(r.sessionId) || out.get(r.sessionId) === 'alive')) continue;
    const probe: RunningProbe = r.pid === undefined ? 'dead' : await probeProcess(r.pid, r.startTime);
    if (ids.has(r.sessionId) && out.get(r.sessionId) !== 'alive') out.set(r.sessionId, probe);
    if (inside && probe === 'alive') liveUnder ??= `a running record names a live process for ${r.sessionId} inside it`;
  }
  return liveUnder !== undefined ? { probes: out, liveUnder } : { probes: out };
}

/**
 * Why the trash `children/trash` of a child whose removal a killed sweep had started (its
 * original path `childPath`) must not be finished now, or undefined: something inside it is live
 * — a session written within the live grace (its end unknown: traces are not read; one without a
 * trace by its id's instant), a running record of a live process for a session there — or cannot
 * be judged. The debris step leaves such a trash for a later sweep (`child_kept`).
 */
export async function trashedChildLiveWhy(
  ctx: SweepContext,
  children: Dir,
  trash: string,
  identity: Identity,
  childPath: string,
): Promise<string | undefined> {
  await using d = await children.openDir(trash, identity);
  const now = await lookInsideChild(d, ctx.signal);
  if (now.unjudged !== undefined) return `nothing inside can be judged (${now.unjudged})`;
  const { probes, liveUnder } = await runningNow(ctx, new Set(now.sessions.map((s) => s.name)), childPath);
  for (const s of now.sessions) {
    // A session directory without its trace here is one the killed removal was emptying: the
    // runtime creates the trace with the directory, and the directory's mtime is what that
    // removal's own unlinks last did. Its id's instant (uuid v7, minted when it started) is its
    // last write: a session a process started here since is fresh, one being removed is not.
    const lastWriteMs = s.noTrace ? (idTimestampMs(s.name, 'ses_') ?? s.lastWriteMs) : s.lastWriteMs;
    const v = judgeLiveness(
      { running: probes.get(s.name) ?? 'none', lastWriteMs, hasSessionEnd: undefined },
      ctx.nowMs,
      ctx.config.liveGraceSecs * 1000,
    );
    if (v.state === 'live') return `its session ${s.name} is live (${v.why})`;
  }
  return liveUnder;
}

/** Reports what the choice keeps, once per sweep and session. */
export function reportBesideSkips(
  ctx: SweepContext,
  plan: BesidePlan | undefined,
  sessions: ReadonlySet<string>,
): void {
  for (const s of plan?.skip ?? [])
    if (sessions.has(s.session)) skip(ctx, { target: s.target, code: s.code, detail: s.detail });
}

/** Where the removed session's items are; opened once per root. */
export interface BesideDirs {
  children: Dir | undefined;
  logs: Dir | undefined;
  close(): Promise<void>;
}

/** Open `W/.murmur/children` and `W/logs` as scanned (identities checked); `root` is the open sessions root. */
export async function openBesideDirs(ctx: SweepContext, root: Dir, beside: BesideScan): Promise<BesideDirs> {
  let children: Dir | undefined;
  let logs: Dir | undefined;
  let w: Dir | undefined;
  try {
    if (beside.children) children = await root.openDir(CHILDREN_DIR, beside.children.identity);
    if (beside.logs) {
      w = await Dir.open(beside.workdir, { followFinal: true });
      const r = await w.lstat(WORKDIR_ROOT_NAME);
      if (!r || !sameIdentity({ dev: r.dev, ino: r.ino }, root.identity))
        throw new GcError(Codes.changedSinceScan, `${root.path} is no longer ${beside.workdir}/${WORKDIR_ROOT_NAME}`);
      logs = await w.openDir(LOGS_DIR, beside.logs.identity);
    }
  } catch (err) {
    fail(ctx, {
      target: beside.workdir,
      code: codeOf(err),
      detail: `${beside.workdir}: ${describeError(err)}; nothing beside its sessions is removed this sweep`,
    });
    await children?.close();
    children = undefined;
  } finally {
    await w?.close();
  }
  return {
    children,
    logs,
    async close() {
      await children?.close();
      await logs?.close();
    },
  };
}

/**
 * The entries a root's beside scan found, indexed once per scan: children by name and logs by
 * work id (planBeside's index), and `wrk_` logs by file name (what a removal item names).
 */
interface BesideEntries {
  index: ReturnType<typeof besideIndex>;
  wrk: ReadonlyMap<string, LogEntry>;
}
const entriesOf = new WeakMap<BesideScan, BesideEntries>();
export function besideEntries(beside: BesideScan): BesideEntries {
  let e = entriesOf.get(beside);
  if (!e) {
    const logs = beside.logs?.wrk ?? [];
    e = { index: besideIndex(beside.children?.entries ?? [], logs), wrk: new Map(logs.map((l) => [l.name, l])) };
    entriesOf.set(beside, e);
  }
  return e;
}

/**
 * Remove (or hold in `held`, the session's hold) what `items` name for one removed session.
 * Returns the bytes removed (or held).
 */
export async function removeBeside(
  ctx: SweepContext,
  root: Dir,
  beside: BesideScan,
  dirs: BesideDirs,
  items: readonly BesideItem[],
  reason: SessionRemovalReason,
  held: { entry: string; identity: Identity } | undefined,
): Promise<number> {
  let total = 0;
  for (const it of items) {
    ctx.signal?.throwIfAborted();
    const child = it.kind === 'child_workdir';
    const from = child ? dirs.children : dirs.logs;
    const rel = child ? `${WORKDIR_ROOT_NAME}/${CHILDREN_DIR}/${it.name}` : `${LOGS_DIR}/${it.name}`;
    const path = `${beside.workdir}/${rel}`;
    const identity = child
      ? besideEntries(beside).index.children.get(it.name)?.identity
      : besideEntries(beside).wrk.get(it.name)?.identity;
    if (!from || !identity) continue;
    try {
      const bytes = await act(ctx, root, from, it, identity, held);
      total += bytes;
      acted(
        ctx,
        {
          kind: child ? 'remove_child_workdir' : 'remove_work_log',
          root: root.path,
          target: it.name,
          parent_session: it.session,
          path,
          reason,
          bytes,
          ...(held ? { held: { until_ms: heldUntil(held.entry), path: `${root.path}/${held.entry}` } } : {}),
        },
        'debug',
        { path, parent_session: it.session, reason, bytes },
        held
          ? ['would hold beside its session', 'held beside its session']
          : ['would remove beside its session', 'removed beside its session'],
      );
    } catch (err) {
      if (isAbort(err)) throw err;
      const code = codeOf(err);
      (code === Codes.changedSinceScan || code === Codes.childKept ? skip : fail)(ctx, {
        target: path,
        code,
        detail: `${path} (child of ${it.session}): ${describeError(err)}`,
      });
    }
  }
  return total;

  /** The only calls here that change the disk (through the run's effects: a dry run measures). */
  async function act(
    c: SweepContext,
    r: Dir,
    from: Dir,
    it: BesideItem,
    identity: Identity,
    h: typeof held,
  ): Promise<number> {
    const child = it.kind === 'child_workdir';
    const rel = child ? `${WORKDIR_ROOT_NAME}/${CHILDREN_DIR}/${it.name}` : `${LOGS_DIR}/${it.name}`;
    const logBytes = besideEntries(beside).wrk.get(it.name)?.bytes ?? 0;
    const retention = {
      store: 'sessions',
      reason,
      target: rel,
      parent: beside.workdir,
      session: it.session,
      ...(h ? { heldUntilMs: heldUntil(h.entry) } : {}),
    } as const;
    return c.fx.audited(
      { kind: child ? 'remove_child_workdir' : 'remove_work_log', ...retention },
      async (): Promise<number> => {
        // judged again now, and looked at again once moved (a session may start in between)
        const verify = child
          ? childStillDue(c, await recheckChild(c, from, it.name, identity, false), from.display(it.name))
          : undefined;
        if (h)
          return c.fx.holdBeside(
            r,
            h.entry,
            h.identity,
            from,
            child ? CHILDREN_DIR : LOGS_DIR,
            it.name,
            identity,
            async () => (child ? (await measureDir(from, it.name, identity)).bytes : logBytes),
            verify,
          );
        if (child)
          return c.fx.remove(from, it.name, identity, {
            ...(verify ? { verify } : {}),
            ...(c.signal ? { signal: c.signal } : {}),
          });
        const st = await from.lstat(it.name);
        if (!st?.isFile() || !sameIdentity({ dev: st.dev, ino: st.ino }, identity))
          throw new GcError(
            Codes.changedSinceScan,
            `${from.display(it.name)} changed since it was scanned; left alone`,
          );
        await c.fx.unlink(from, it.name);
        return logBytes;
      },
      () => ({ retention }),
    );
  }
}

/**
 * Finish what a killed sweep left between a session's hold and what goes with it: for each held
 * session of this root that murmur-gc's registry vouches for (its window still open), what its
 * trace — read inside the hold — proves is its and finished, and is still beside the root, is held
 * into it now, audited with the reason its hold was made for (the registry's record). Every child
 * any entry named like a hold names counts as tied (never an orphan): the names are added to
 * `p.heldTied`; one whose trace cannot be read sets `p.heldUncertain` (no orphan goes). A dry run
 * measures and lists.
 */
export async function completeHeldBeside(
  ctx: SweepContext,
  p: SessionsRootPlan,
  tally: { items: number; bytes: number },
): Promise<void> {
  const beside = p.beside;
  if (p.input.isAuditRoot || !beside || !p.scan.identity) return;
  // nothing beside the root that a hold could still take: no held trace is read
  if ((beside.children?.entries.length ?? 0) + (beside.logs?.wrk.length ?? 0) === 0) return;
  let root: Dir | undefined;
  let dirs: BesideDirs | undefined;
  try {
    root = await Dir.open(p.input.root);
    if (!sameIdentity(root.identity, p.scan.identity)) return;
    const parents: (BesideParent & { entry: string; identity: Identity; reason: SessionRemovalReason })[] = [];
    for (const h of await listRootHeld(root, false)) {
      if (h.uid !== ctx.uid || ctx.purgedNow.has(`${root.path}/${h.entry}`)) continue;
      // Only a hold murmur-gc's registry vouches for takes anything (docs/design.md §4a); any
      // other entry of that name — a hold of an older murmur-gc, or a capsule's — only keeps: the
      // children its trace names are never orphans.
      const record = ctx.registry.vouch(h.entry, h);
      const ours = record?.kind === 'hold' && !isExpired(h.untilMs, ctx.nowMs);
      let d: Dir | undefined;
      try {
        d = await root.openDir(h.entry, h.identity);
        const st = await d.lstat('trace.jsonl');
        if (!st?.isFile()) {
          p.heldUncertain ??= root.display(h.entry);
          continue;
        }
        const t = (await readTraceSummary(d, { dir: root.path, name: h.entry }, undefined, ctx.signal, st)).summary;
        for (const del of t.delegations ?? []) {
          const n = childEntryName(del.childWorkdir, beside.workdir);
          if (n !== undefined) (p.heldTied ??= new Set()).add(n);
        }
        if (!ours) continue;
        const reason =
          record.reason === 'max_age' || record.reason === 'max_sessions' || record.reason === 'max_bytes'
            ? record.reason
            : reasonNow(p, h.target, ctx.nowMs);
        parents.push({
          session: h.target,
          delegations: t.delegations ?? [],
          workIds: t.workIds ?? [],
          entry: h.entry,
          identity: h.identity,
          reason,
        });
      } catch (err) {
        if (isAbort(err)) throw err;
        // what it names is unknown: no orphan goes while it cannot be read
        p.heldUncertain ??= root.display(h.entry);
        if (ours)
          skip(ctx, {
            target: root.display(h.entry),
            code: codeOf(err),
            detail: `${root.display(h.entry)}: ${describeError(err)}; what it names beside its root is left for the next sweep`,
          });
      } finally {
        await d?.close();
      }
    }
    const plan = besidePlanFor(ctx, beside, p.views, [], parents);
    if (!plan || plan.remove.length === 0) return;
    const present = (beside.children?.entries.length ?? 0) + (beside.logs?.wrk.length ?? 0);
    const names = plan.remove.map((i) => (i.kind === 'child_workdir' ? `children/${i.name}` : `logs/${i.name}`));
    if (tooLarge(ctx, beside.workdir, 'child workdirs and work logs', present, names)) return;
    dirs = await openBesideDirs(ctx, root, beside);
    for (const h of parents) {
      const mine = plan.remove.filter((i) => i.session === h.session);
      if (mine.length === 0) continue;
      const bytes = await removeBeside(ctx, root, beside, dirs, mine, h.reason, {
        entry: h.entry,
        identity: h.identity,
      });
      tally.items += mine.length;
      tally.bytes += bytes;
    }
  } catch (err) {
    if (isAbort(err)) throw err;
    fail(ctx, {
      target: p.input.root,
      code: codeOf(err),
      detail: `${p.input.root}: ${describeError(err)}; what its held sessions name beside it is left for the next sweep`,
    });
  } finally {
    await dirs?.close();
    await root?.close();
  }
}

/** The reason the root's policy condemns `session` for now (a hold whose record names no reason). */
function reasonNow(p: SessionsRootPlan, session: string, nowMs: number): 'max_age' | 'max_sessions' {
  const maxAge = p.input.retain?.maxAgeSecs;
  const minted = idTimestampMs(session, 'ses_');
  return maxAge !== undefined && minted !== undefined && minted < nowMs - maxAge * 1000 ? 'max_age' : 'max_sessions';
}

function heldUntil(entry: string): number {
  const m = /^\.murmur-gc-quarantine\.([0-9]+)\./.exec(entry);
  return m ? Number(m[1]) : 0;
}
