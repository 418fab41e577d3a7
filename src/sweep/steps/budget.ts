// Step "budget": disk budgets (`max_bytes` per sessions root / record store, `keep_free` for the
// filesystem under the home), after age and count have acted (src/plan/budget.ts has the order).
// Guarantees:
// - Does nothing (measures nothing) unless a budget is configured.
// - Takes part: a sessions root or record store whose entry has `max_bytes`, and — for keep_free —
//   every one with a policy (retain or max_bytes) on the home's filesystem. Discovered roots and
//   stores with no policy, and murmur-gc's own audit root, are never touched for a budget.
// - Sizes are measured now, descriptor-relatively (fsx/remove.ts measureDir), after the remove and
//   truncate steps; a dry run subtracts what those steps would have freed, so its plan is the one
//   a real run on the unchanged tree makes.
// - Never removes a live session, a context a live session names, another user's entry, or a
//   record whose header does not name the policy's capsule; removals go through the remove step's
//   own code (rename to trash, re-verify, then delete; intent audited first) with reason
//   `max_bytes` or `keep_free`; a removal that does not happen frees nothing and the next oldest
//   item is tried.
// - All or nothing (src/plan/budget.ts): a budget that removing every removable item could not
//   meet removes nothing; one that it could removes the fewest oldest items that meet it.
// - What could not be freed is reported: one skip per unmet budget, code `budget_unmet`, naming
//   the bytes still missing, what held them and the largest items it may not touch; the numbers
//   are in `report.budget`.
// - keep_free's reserve (src/gchome/reserve.ts): what the lock step released counts as free space (a
//   dry run adds what a real run would release, so both plan alike). While the reserve is missing,
//   keep_free also wants room for it (RESERVE_BYTES on top) whenever the removable items can
//   provide that, else keep_free alone; once the budgets have acted, a missing reserve is put
//   back when free space stays at or above keep_free with it in place.
// - The blast-radius guard (src/plan/guards.ts) holds for budget removals as for age and count:
//   before anything is removed for space, what the budgets would remove from each store (counted
//   together with what age and count already removed there this sweep) is checked against the
//   store's limit; a store over it loses nothing to the budgets (`blast_radius`, exit 1; its items
//   are held as `blast_radius` in the unmet report) and the other stores are planned without it.
// - An item on the protection list (src/gchome/protect-list.ts) is never removed for space: it is held
//   as `protected` (the unmet report counts it there), and one `protected` skip names it when a
//   budget would have taken it, unless a skip already named it this sweep.
import { resolve } from 'node:path';
import { keepFreeBytes } from '../../config/size.js';
import { Codes, GcError, codeOf, describeError, isAbort } from '../../errors.js';
import { CONVERSATIONS_DIR, type ContextScan } from '../../runtime/inventory.js';
import { measureDir } from '../../fsx/remove.js';
import { Dir, sameIdentity } from '../../fsx/safe-fs.js';
import { statFs } from '../../fsx/statfs.js';
import { RESERVE_BYTES, RESERVE_NAME, fitsReserve, reserveBytes } from '../../gchome/reserve.js';
import { GC_DIR } from '../../gchome/audit.js';
import { idTimestampMs } from '../../runtime/ids.js';
import {
  BudgetLedger,
  dropUnreachableRoom,
  planBudgets,
  recordStoreBudgets,
  sessionsRootBudget,
  withReserveRoom,
  type BudgetItem,
  type BudgetReason,
  type BudgetStore,
  type BudgetUnmet,
  type KeepFreeNeed,
  type RecordStoreBudget,
} from '../../plan/budget.js';
import type { GcConfig } from '../../config/types.js';
import { formatBytes } from '../report.js';
import { acted, fail, skip, type SessionsRootPlan, type StepTally, type SweepContext } from './context.js';
import { openChain } from '../../fsx/dirs.js';
import { removeRecord, removeSessions } from './remove.js';
import { tooLarge } from './guard.js';
import { besidePlanFor } from './beside.js';
import { CHILDREN_DIR } from '../../runtime/workdir-scan.js';
import { purgeHeld, type PurgeTarget } from './quarantine.js';
import { listQuarantineDir, listRootHeld, openQuarantineDir } from '../../gchome/quarantine-store.js';
import type { HeldItem } from '../../gchome/quarantine-layout.js';

interface SessionsStore {
  store: BudgetStore;
  plan: SessionsRootPlan;
}
interface RecordsStore extends RecordStoreBudget {
  /** its contexts still in place (what the remove step took this sweep is not) */
  contexts: ContextScan[];
}
/** The stores the budgets reach this sweep. */
interface TakingPart {
  keepFree: boolean;
  sessions: SessionsStore[];
  records: RecordsStore[];
}

/** How an item goes when the ledger chooses it. */
type Removal =
  | { kind: 'session'; s: SessionsStore }
  | { kind: 'record'; r: RecordsStore; c: ContextScan }
  /** held by the undo window, in a sessions root or the quarantine directory: purged */
  | { kind: 'held'; parent: string; t: PurgeTarget }
  /** a dry run: what this sweep would have held (nothing on disk to purge; reported only) */
  | { kind: 'would-be-held'; h: HeldItem };

/** Everything the budgets may count, and how each removable one goes. */
interface Candidates {
  items: BudgetItem[];
  removal: Map<BudgetItem, Removal>;
  /** held contexts and dropped lines of a record store that takes no part (keep_free only) */
  quarantineStore: BudgetStore;
}

export async function budgetStep(ctx: SweepContext): Promise<StepTally> {
  const tally = { items: 0, bytes: 0 };
  const home = ctx.homeDir;
  if (!anyBudget(ctx.config) || !home) return tally;
  const part = takingPart(ctx, home);
  if (part.sessions.length === 0 && part.records.length === 0 && !part.keepFree) return tally;
  const c = await gatherCandidates(ctx, home, part);
  let kf = await measureKeepFree(ctx, home);
  const stores = [...part.sessions.map((s) => s.store), ...part.records.map((r) => r.store), ...(c.items.some((i) => i.store === c.quarantineStore.key) ? [c.quarantineStore] : [])];
  kf = await holdWhatMayNotGo(ctx, home, part, stores, c, kf);
  const ledger = new BudgetLedger(stores, c.items, kf?.short ?? 0);
  await removeForSpace(ctx, home, ledger, c.removal, tally);
  const putBack = kf ? await keepReserve(ctx, home, kf) : false;
  reportBudgets(ctx, home, ledger, kf, putBack);
  return tally;
}

function anyBudget(config: GcConfig): boolean {
  return config.keepFree !== undefined || config.sessions.some((s) => s.maxBytes !== undefined) || config.records.some((r) => r.maxBytes !== undefined);
}

/** The sessions roots and record stores a budget reaches (src/plan/budget.ts decides which). */
function takingPart(ctx: SweepContext, home: Dir): TakingPart {
  const keepFree = ctx.config.keepFree !== undefined;
  const sessions: SessionsStore[] = [];
  for (const p of ctx.sessionPlans) {
    if (p.input.isAuditRoot || !p.scan.identity) continue;
    const store = sessionsRootBudget(p.input, keepFree, p.scan.identity.dev === home.identity.dev);
    if (store) sessions.push({ plan: p, store });
  }
  const removedRecords = new Set(ctx.report.actions.flatMap((a) => (a.kind === 'remove_record' ? [`${a.record}/${a.target}`] : [])));
  const records = recordStoreBudgets(ctx.config.records, keepFree).map((r) => ({
    ...r,
    contexts: (ctx.records?.contexts ?? []).filter((c) => c.store === r.name && !removedRecords.has(`${r.name}/${c.context}`)),
  }));
  return { keepFree, sessions, records };
}

/**
 * Measures every item of the stores taking part, in place and held by the undo window; a store
 * that cannot be measured is reported and takes no part (its budgets are dropped).
 */
async function gatherCandidates(ctx: SweepContext, home: Dir, part: TakingPart): Promise<Candidates> {
  const c: Candidates = { items: [], removal: new Map(), quarantineStore: { key: 'quarantine', label: 'quarantine', maxBytes: undefined, keepFree: part.keepFree } };
  const add = (item: BudgetItem, how?: Removal) => {
    c.items.push(item);
    if (how) c.removal.set(item, how);
  };
  for (const s of part.sessions) await measureSessionsRoot(ctx, s, add);
  for (const r of part.records) await measureRecordStore(ctx, home, r, add);
  await gatherQuarantine(ctx, home, part.records, c.quarantineStore, add);
  return c;
}

type AddItem = (item: BudgetItem, how?: Removal) => void;

/** A sessions root's sessions (with what goes beside them), the child workdirs that stay, and what its undo window holds. */
async function measureSessionsRoot(ctx: SweepContext, s: SessionsStore, add: AddItem): Promise<void> {
  const { input, views } = s.plan;
  let rootDir: Dir | undefined;
  try {
    rootDir = await openRoot(input.root, s.plan);
    // Child workdirs and wrk_ logs beside a `W/.murmur` root are part of it (docs/design.md §9a):
    // what would go with a session counts in its item; every other child stays and still counts.
    const beside = await besideBytes(ctx, rootDir, s.plan);
    for (const v of views) {
      ctx.signal?.throwIfAborted();
      if (ctx.removedSessions.has(`${input.root}/${v.scan.name}`)) continue;
      const own = await measured(ctx, `${input.root}/${v.scan.name}`, () => measureDir(rootDir!, v.scan.name, v.scan.identity));
      if (own === undefined) continue;
      const bytes = own + (beside.withSession.get(v.scan.name) ?? 0);
      const held = v.liveness === 'live' ? Codes.liveSession : v.scan.uid !== ctx.uid ? Codes.foreignOwner : undefined;
      add({ store: s.store.key, target: v.scan.name, ageMs: idTimestampMs(v.scan.name, 'ses_') ?? 0, bytes, held }, { kind: 'session', s });
    }
    for (const ch of beside.staying) add({ store: s.store.key, target: `children/${ch.name}`, ageMs: ch.ageMs, bytes: ch.bytes, held: Codes.childKept });
    // What the undo window holds in this root (and, in a dry run, what this sweep would hold).
    for (const h of await listRootHeld(rootDir, false)) {
      if (ctx.purgedNow.has(`${input.root}/${h.entry}`)) continue;
      const bytes = await measured(ctx, `${input.root}/${h.entry}`, () => measureDir(rootDir!, h.entry, h.identity));
      if (bytes === undefined) continue;
      add(
        { store: s.store.key, target: h.target, ageMs: h.untilMs, bytes, held: h.uid !== ctx.uid ? Codes.foreignOwner : undefined, quarantined: true },
        { kind: 'held', parent: input.root, t: { store: 'sessions', origin: input.root, target: h.target, held: 'session', entry: h.entry, identity: h.identity } },
      );
    }
    for (const h of ctx.fx.unapplied.held.filter((x) => x.kind === 'session' && x.origin === input.root)) {
      add({ store: s.store.key, target: h.target, ageMs: h.untilMs, bytes: h.bytes, held: undefined, quarantined: true }, { kind: 'would-be-held', h });
    }
  } catch (err) {
    if (isAbort(err)) throw err;
    fail(ctx, { target: input.root, code: codeOf(err), detail: `${input.root}: not measured for its disk budget: ${describeError(err)}` });
    s.store.maxBytes = undefined;
    s.store.keepFree = false;
  } finally {
    await rootDir?.close();
  }
}

/** A record store's contexts, each at the size it has after this sweep's truncations. */
async function measureRecordStore(ctx: SweepContext, home: Dir, r: RecordsStore, add: AddItem): Promise<void> {
  if (r.contexts.length === 0) return; // an empty (or not yet created) store holds nothing
  let storeDir: Dir | undefined;
  try {
    storeDir = await openChain(home, [CONVERSATIONS_DIR, r.name]);
    if (storeDir.identity.dev !== home.identity.dev) r.store.keepFree = false;
    for (const c of r.contexts) {
      ctx.signal?.throwIfAborted();
      const target = `${r.name}/${c.context}`;
      let bytes = await measured(ctx, target, () => measureDir(storeDir!, c.context, c.dirIdentity));
      if (bytes === undefined) continue;
      // A dry run did not rewrite the file: count it at the size the truncation leaves.
      bytes = Math.max(0, bytes - (ctx.fx.unapplied.truncated.get(target) ?? 0));
      const owned = c.header !== undefined && r.capsules.has(c.header.capsule);
      const held = ctx.world.liveContexts.has(c.context) ? Codes.liveContext : c.dirUid !== ctx.uid || c.file.uid !== ctx.uid ? Codes.foreignOwner : owned ? undefined : Codes.notOwned;
      add({ store: r.store.key, target: c.context, ageMs: c.file.mtimeMs, bytes, held }, { kind: 'record', r, c });
    }
  } catch (err) {
    if (isAbort(err)) throw err;
    fail(ctx, { target: r.name, code: codeOf(err), detail: `record store ${r.name}: not measured for its disk budget: ${describeError(err)}` });
    r.store.maxBytes = undefined;
    r.store.keepFree = false;
  } finally {
    await storeDir?.close();
  }
}

/**
 * Held contexts and dropped lines (<home>/gc/quarantine), and in a dry run those this sweep would
 * hold: charged to their record store when it takes part, else to the quarantine pseudo-store.
 */
async function gatherQuarantine(ctx: SweepContext, home: Dir, records: RecordsStore[], quarantineStore: BudgetStore, add: AddItem): Promise<void> {
  let q: Dir | undefined;
  try {
    q = ctx.quarantineDir ?? (await openQuarantineDir(home, false));
    if (q) ctx.quarantineDir = q;
  } catch (err) {
    fail(ctx, { target: `${ctx.home}/gc/quarantine`, code: codeOf(err), detail: `not measured for the disk budgets: ${describeError(err)}` });
  }
  const storeKey = (origin: string) => (records.some((r) => r.name === origin && (r.store.maxBytes !== undefined || r.store.keepFree)) ? `records:${origin}` : quarantineStore.key);
  if (q) {
    const listed = await listQuarantineDir(q, true);
    for (const i of listed.items) {
      if (i.incomplete || i.meta?.state === 'staged' || ctx.purgedNow.has(`${q.path}/${i.entry}`)) continue;
      add(
        { store: storeKey(i.origin), target: i.target, ageMs: i.untilMs, bytes: i.bytes, held: undefined, quarantined: true },
        { kind: 'held', parent: q.path, t: { store: 'records', origin: i.origin, target: i.target, held: i.kind === 'truncation' ? 'truncation' : 'context', entry: i.entry, identity: i.identity } },
      );
    }
  }
  for (const h of ctx.fx.unapplied.held.filter((x) => x.kind !== 'session')) {
    add({ store: storeKey(h.origin), target: h.target, ageMs: h.untilMs, bytes: h.bytes, held: undefined, quarantined: true }, { kind: 'would-be-held', h });
  }
}

/** What keep_free asks, or undefined when it is not configured or free space cannot be read (reported). */
async function measureKeepFree(ctx: SweepContext, home: Dir): Promise<KeepFreeNeed | undefined> {
  if (!ctx.config.keepFree) return undefined;
  try {
    const space = await (ctx.opts.statfs ?? statFs)(`/proc/self/fd/${home.fd}`);
    const required = keepFreeBytes(ctx.config.keepFree, space.totalBytes);
    // A dry run freed nothing: count what the real run would have freed by now (and the reserve it would have released).
    const free = space.freeBytes + ctx.fx.unapplied.freedOn(home.identity.dev, devOfRoots(ctx));
    return { required, free, short: Math.max(0, required - free), room: 0 };
  } catch (err) {
    fail(ctx, { target: ctx.home, code: Codes.ioError, detail: `free space of the filesystem under ${ctx.home} could not be read: ${describeError(err)}` });
    return undefined;
  }
}

/**
 * Holds what may not go for space — protected items, then every item of a store the blast-radius
 * guard trips — and settles keep_free's room for a missing reserve around the guard: wanted on top
 * of keep_free while the items can provide it, dropped when the guard puts it out of reach.
 */
async function holdWhatMayNotGo(ctx: SweepContext, home: Dir, part: TakingPart, stores: BudgetStore[], c: Candidates, kf: KeepFreeNeed | undefined): Promise<KeepFreeNeed | undefined> {
  holdProtected(ctx, stores, c.items, kf?.short ?? 0, (i) => {
    const how = c.removal.get(i);
    if (how?.kind === 'session') return ctx.protection.session(resolve(how.s.plan.input.root))(i.target) ? `${how.s.plan.input.root}/${i.target}` : undefined;
    return how?.kind === 'record' && ctx.protection.context(how.r.name)(i.target) ? `${how.r.name}/${i.target}` : undefined;
  });
  if (kf && !(await reservePresent(ctx, home))) kf = withReserveRoom(kf, stores, c.items, RESERVE_BYTES);
  // the blast radius (purging what the quarantine holds removes nothing in place: not counted)
  guardBudgets(ctx, home.path, part.sessions, part.records, stores, c.items, kf?.short ?? 0);
  return kf && dropUnreachableRoom(kf, stores, c.items);
}

/** Removes, oldest first, what the ledger chooses until every budget is met, settling what each removal really freed. */
async function removeForSpace(ctx: SweepContext, home: Dir, ledger: BudgetLedger, removal: Map<BudgetItem, Removal>, tally: StepTally): Promise<void> {
  for (let choice = ledger.next(); choice; choice = ledger.next()) {
    ctx.signal?.throwIfAborted();
    const how = removal.get(choice.item);
    ledger.settle(choice, how ? await removeOne(ctx, home, choice.item, choice.reason, how, tally) : undefined);
  }
}

/** Removes (or purges) one item for space; the bytes it freed, or undefined when it did not go. */
async function removeOne(ctx: SweepContext, home: Dir, item: BudgetItem, reason: BudgetReason, how: Removal, tally: StepTally): Promise<number | undefined> {
  let freed: number | undefined;
  switch (how.kind) {
    case 'held':
      freed = await purgeAt(ctx, how.parent, how.t, reason);
      break;
    case 'would-be-held': {
      // A dry run: this sweep would have held it, and would now purge it for the budget.
      const h = how.h;
      const path = `${h.kind === 'session' ? h.parent : `${ctx.home}/gc/quarantine`}/${h.entry}`;
      ctx.purgedNow.add(`${h.parent}/${h.entry}`);
      acted(ctx, { kind: 'purge_quarantine', store: h.kind === 'session' ? 'sessions' : 'records', origin: h.origin, target: h.target, held_kind: h.kind, reason, path, bytes: h.bytes }, 'debug', { path, target: h.target, reason, bytes: h.bytes });
      return h.bytes;
    }
    case 'session': {
      const before = { ...tally };
      await removeSessions(ctx, { ...how.s.plan, plan: { remove: [{ name: item.target, reason }], skip: [] } }, tally, () => undefined);
      return tally.items > before.items ? tally.bytes - before.bytes : undefined;
    }
    case 'record':
      freed = await removeRecord(ctx, home, how.c, how.r.name, reason);
      break;
  }
  if (freed !== undefined) {
    tally.items++;
    tally.bytes += freed;
  }
  return freed;
}

/** One `budget_unmet` skip per budget left unmet, and the report's `budget` section. */
function reportBudgets(ctx: SweepContext, home: Dir, ledger: BudgetLedger, kf: KeepFreeNeed | undefined, putBack: boolean): void {
  const unmet = ledger.unmet();
  for (const u of unmet) skip(ctx, { target: u.store === undefined ? ctx.home : u.label.replace(/^(sessions root|record store) /, ''), code: Codes.budgetUnmet, detail: unmetText(u, ctx, kf) });
  ctx.report.budget = {
    stores: ledger.outcomes(),
    keep_free: kf
      ? {
          required_bytes: kf.required,
          free_bytes: kf.free,
          short_bytes: kf.short,
          short_bytes_after: ledger.keepFreeShortBytes,
          reserve: { path: `${home.path}/${GC_DIR}/${RESERVE_NAME}`, released_bytes: ctx.reserveReleased, room_bytes: kf.room, put_back: putBack },
        }
      : null,
    unmet,
  };
}

/**
 * Plans the budgets as if every removal succeeds; a store whose total removals this sweep (age and
 * count, then these) exceed its blast radius is reported and its items are held, and the rest is
 * planned again without it (keep_free may then reach for other stores), until no store trips.
 */
function guardBudgets(ctx: SweepContext, homePath: string, sessionStores: SessionsStore[], recordStores: RecordsStore[], stores: BudgetStore[], items: BudgetItem[], keepFreeShort: number): void {
  const tripped = new Set<string>();
  for (;;) {
    const planned = new Map<string, string[]>();
    for (const c of planBudgets(stores, items, keepFreeShort).remove) {
      if (!c.item.quarantined) planned.set(c.item.store, [...(planned.get(c.item.store) ?? []), c.item.target]);
    }
    let again = false;
    for (const [key, names] of planned) {
      if (tripped.has(key)) continue;
      const s = sessionStores.find((x) => x.store.key === key);
      const r = recordStores.find((x) => x.store.key === key);
      const over = s
        ? tooLarge(ctx, s.plan.input.root, 'sessions', s.plan.views.length, [...removedEarlier(ctx, 'sessions', s.plan.input.root), ...names])
        : r
          ? tooLarge(ctx, `${homePath}/${CONVERSATIONS_DIR}/${r.name}`, 'records', (ctx.records?.contexts ?? []).filter((c) => c.store === r.name).length, [...removedEarlier(ctx, 'records', r.name), ...names])
          : false;
      if (!over) continue;
      tripped.add(key);
      for (const i of items) if (i.store === key && i.held === undefined) i.held = Codes.blastRadius;
      again = true;
    }
    if (!again) return;
  }
}

/**
 * Protected items in place are held as `protected`; each one the budgets would have taken (were
 * it not protected) is reported once as a `protected` skip. `target` names a protected item's
 * report target, undefined for one that is not protected.
 */
function holdProtected(ctx: SweepContext, stores: BudgetStore[], items: BudgetItem[], keepFreeShort: number, target: (i: BudgetItem) => string | undefined): void {
  const marked = new Map<BudgetItem, string>();
  for (const i of items) {
    const t = i.quarantined ? undefined : target(i);
    if (t !== undefined && i.held === undefined) marked.set(i, t);
  }
  if (marked.size === 0) return;
  const chosen = new Set(planBudgets(stores, items, keepFreeShort).remove.map((c) => c.item));
  for (const i of marked.keys()) i.held = Codes.protected;
  for (const [i, t] of marked) {
    if (!chosen.has(i) || ctx.report.skipped.some((s) => s.code === Codes.protected && s.target === t)) continue;
    skip(ctx, { target: t, code: Codes.protected, detail: `${t} is protected (murmur-gc protection ls; murmur-gc release lets the policy act on it); kept although the disk budget would remove it` });
  }
}

/** What the remove step took (or, in a dry run, would take) from one store this sweep. */
function removedEarlier(ctx: SweepContext, kind: 'sessions' | 'records', store: string): string[] {
  return ctx.report.actions.flatMap((a) =>
    kind === 'sessions' ? (a.kind === 'remove_session' && a.root === store ? [a.target] : []) : a.kind === 'remove_record' && a.record === store ? [a.target] : [],
  );
}

/** Purge one held item found under `parentPath` (a sessions root or the quarantine directory). */
async function purgeAt(ctx: SweepContext, parentPath: string, t: PurgeTarget, reason: 'max_bytes' | 'keep_free'): Promise<number | undefined> {
  if (ctx.quarantineDir && parentPath === ctx.quarantineDir.path) return purgeHeld(ctx, ctx.quarantineDir, t, reason);
  let d: Dir | undefined;
  try {
    d = await Dir.open(parentPath);
    return await purgeHeld(ctx, d, t, reason);
  } catch (err) {
    if (isAbort(err)) throw err;
    fail(ctx, { target: parentPath, code: codeOf(err), detail: `${parentPath}: ${describeError(err)}` });
    return undefined;
  } finally {
    await d?.close();
  }
}

async function openRoot(root: string, plan: SessionsRootPlan): Promise<Dir> {
  const d = await Dir.open(root);
  if (!plan.scan.identity || !sameIdentity(d.identity, plan.scan.identity)) {
    await d.close();
    throw new GcError(Codes.changedSinceScan, `${root} was replaced since it was scanned`);
  }
  return d;
}

/** Bytes of one entry, or undefined (reported) when it cannot be measured: it is then left alone. */
async function measured(ctx: SweepContext, target: string, measure: () => Promise<{ bytes: number }>): Promise<number | undefined> {
  try {
    return (await measure()).bytes;
  } catch (err) {
    if (isAbort(err)) throw err;
    const code = codeOf(err);
    (code === Codes.changedSinceScan ? skip : fail)(ctx, { target, code, detail: `${target}: not measured for its disk budget: ${describeError(err)}` });
    return undefined;
  }
}

/** Whether the keep_free reserve is in place (a dry run: and a real run would not release it). */
async function reservePresent(ctx: SweepContext, home: Dir): Promise<boolean> {
  if (ctx.reserveReleased > 0) return false;
  let gc: Dir | undefined;
  try {
    if (!(await home.lstat(GC_DIR))?.isDirectory()) return false;
    gc = await home.openDir(GC_DIR);
    return (await reserveBytes(gc)) >= RESERVE_BYTES;
  } catch (err) {
    if (isAbort(err)) throw err;
    return false;
  } finally {
    await gc?.close();
  }
}

/**
 * Put the keep_free reserve back (or, in a dry run, say whether a real run would) when it is
 * missing and free space stays at or above keep_free with it in place. Never throws.
 */
async function keepReserve(ctx: SweepContext, home: Dir, kf: { required: number }): Promise<boolean> {
  try {
    if (await reservePresent(ctx, home)) return false;
    const space = await (ctx.opts.statfs ?? statFs)(`/proc/self/fd/${home.fd}`);
    if (!fitsReserve(space.freeBytes + ctx.fx.unapplied.freedOn(home.identity.dev, devOfRoots(ctx)), kf.required)) return false;
    return await ctx.fx.createReserve(home);
  } catch (err) {
    if (isAbort(err)) throw err;
    ctx.log.warn({ path: `${home.path}/${GC_DIR}/${RESERVE_NAME}` }, `the keep_free reserve was not put back: ${describeError(err)}`);
    return false;
  }
}

/** The filesystem (dev) of each sessions root, for what a dry run counts as freed where. */
function devOfRoots(ctx: SweepContext): Map<string, bigint | number | undefined> {
  return new Map(ctx.sessionPlans.map((p) => [p.input.root, p.scan.identity?.dev]));
}

function unmetText(u: BudgetUnmet, ctx: SweepContext, kf: { required: number; room: number } | undefined): string {
  const held = Object.entries(u.held).map(([code, h]) => `${code} ${h.items} (${formatBytes(h.bytes)})`);
  const heldText = held.length > 0 ? `held by ${held.join(', ')}` : 'nothing else taking part could be removed';
  const largest = u.largest.map((l) => `${l.target} (${l.code}, ${formatBytes(l.bytes)})`);
  const what =
    u.reason === 'keep_free'
      ? `the filesystem under ${ctx.home} is ${formatBytes(u.bytes_short)} short of keep_free (${formatBytes(kf?.required ?? 0)} free wanted${kf && kf.room > 0 ? `, plus ${formatBytes(kf.room)} of room for the reserve` : ''})`
      : `${u.label} is ${formatBytes(u.bytes_short)} over max_bytes`;
  const reach = u.reason === 'keep_free' ? 'free enough' : 'bring it under';
  const n = u.removable.items;
  const items = `${n} removable item${n === 1 ? '' : 's'} (${formatBytes(u.removable.bytes)})`;
  const done =
    n > 0
      ? u.removed === 0
        ? `removing all ${items} would not ${reach}, so none was removed for it`
        : `after ${u.removed} removed for it, the ${items} left would not ${reach}, so they stay`
      : u.removed === 0
        ? 'nothing taking part may be removed'
        : `after removing every item it may (${u.removed})`;
  return `${what}: ${done}; ${heldText}${largest.length > 0 ? `; largest it may not touch: ${largest.join(', ')}` : ''}`;
}

/**
 * Allocated bytes beside a `W/.murmur` root: per session, what would go with it (its finished
 * children and wrk_ logs, as removeSessions would choose them now); and every child workdir that
 * would not (kept, orphaned, already gone with a session this sweep is not counted).
 */
async function besideBytes(ctx: SweepContext, root: Dir, p: SessionsRootPlan): Promise<{ withSession: Map<string, number>; staying: { name: string; bytes: number; ageMs: number }[] }> {
  const withSession = new Map<string, number>();
  const staying: { name: string; bytes: number; ageMs: number }[] = [];
  const b = p.beside;
  if (!b?.children && !b?.logs) return { withSession, staying };
  const children = b.children ? await root.openDir(CHILDREN_DIR, b.children.identity).catch(() => undefined) : undefined;
  try {
    const size = new Map<string, number>();
    for (const c of b.children?.entries ?? []) {
      if (c.kind !== 'dir' || !children) continue;
      const n = await measureDir(children, c.name, c.identity).then((m) => m.bytes, () => undefined);
      if (n !== undefined) size.set(c.name, n);
    }
    const chosen = new Set<string>();
    for (const v of p.views) {
      const plan = besidePlanFor(ctx, b, p.views, [v.scan.name]);
      if (ctx.removedSessions.has(`${p.input.root}/${v.scan.name}`)) {
        // gone with its session earlier in this sweep (or would be, in a dry run): not counted
        for (const i of plan?.remove ?? []) if (i.kind === 'child_workdir') chosen.add(i.name);
        continue;
      }
      let n = 0;
      for (const i of plan?.remove ?? []) {
        if (i.kind === 'child_workdir') {
          n += size.get(i.name) ?? 0;
          chosen.add(i.name);
        } else n += b.logs?.wrk.find((l) => l.name === i.name)?.bytes ?? 0;
      }
      if (n > 0) withSession.set(v.scan.name, n);
    }
    for (const c of b.children?.entries ?? []) {
      const n = size.get(c.name);
      if (n === undefined || chosen.has(c.name)) continue;
      staying.push({ name: c.name, bytes: n, ageMs: c.sessions.reduce((m, x) => Math.max(m, x.lastWriteMs), c.mtimeMs) });
    }
  } finally {
    await children?.close();
  }
  return { withSession, staying };
}
