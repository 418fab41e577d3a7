// Step "measure": what the disk holds for every item a disk budget counts, before anything is
// done, so that the fate planner (src/plan/fates.ts) decides every budget from these numbers in a
// dry run and a real run alike (docs/fates.md, "What a budget counts").
// Guarantees:
// - Measures nothing unless a budget (`max_bytes`, `keep_free`) is configured; then only the
//   sessions roots and record stores a budget reaches (src/plan/budget.ts decides which) and, for
//   keep_free, what the undo window holds.
// - Sizes are allocated bytes (as `du`), measured descriptor-relatively (fsx/remove.ts measureDir),
//   never following a link or crossing a mount. A session counts with what would go beside it
//   (its finished child workdirs and wrk_ logs, docs/design.md §9a); a child workdir no session
//   would take counts as staying. A record its max_messages truncates is counted at the size the
//   truncation leaves: its new length (runtime/record-truncate.ts measureTruncation, which writes
//   nothing) rounded up to the file's block size.
// - An item that cannot be measured is left out of every budget (reported); a store that cannot
//   be opened takes no part in the budgets this sweep (reported).
// - The filesystem under the home is measured once (statfs) when the home exists: keep_free and
//   the reserve judge by it, plus what this sweep frees by the sizes above.
import { keepFreeBytes } from '../../config/size.js';
import { Codes, GcError, codeOf, describeError, isAbort } from '../../errors.js';
import { CONVERSATIONS_DIR, RECORD_FILE, type ContextScan } from '../../runtime/inventory.js';
import { measureDir, allocatedBytes } from '../../fsx/remove.js';
import { Dir, sameIdentity } from '../../fsx/safe-fs.js';
import { statFs } from '../../fsx/statfs.js';
import { openChain } from '../../fsx/dirs.js';
import { measureTruncation } from '../../runtime/record-truncate.js';
import { recordStoreBudgets, sessionsRootBudget } from '../../plan/budget.js';
import { itemKey } from '../../plan/fates.js';
import { CHILDREN_DIR } from '../../runtime/workdir-scan.js';
import { listQuarantineDir, openQuarantineDir, type QueueItem } from '../../gchome/quarantine-store.js';
import { RESERVE_BYTES, reserveBytes } from '../../gchome/reserve.js';
import { GC_DIR } from '../../gchome/audit.js';
import { besidePlanFor } from './beside.js';
import { fail, skip, type MeasuredSizes, type SessionsRootPlan, type StepTally, type SweepContext } from './context.js';
import type { GcConfig } from '../../config/types.js';

export function anyBudget(config: GcConfig): boolean {
  return config.keepFree !== undefined || config.sessions.some((s) => s.maxBytes !== undefined) || config.records.some((r) => r.maxBytes !== undefined);
}

export async function measureStep(ctx: SweepContext): Promise<StepTally> {
  const tally = { items: 0, bytes: 0 };
  const home = ctx.homeDir;
  if (!home) return tally;
  await measureSpace(ctx, home);
  ctx.reserveMissing = !(await reservePresent(ctx, home));
  const keepFree = ctx.config.keepFree !== undefined;
  const budgets = anyBudget(ctx.config);
  const sizes: MeasuredSizes = { items: new Map(), afterTruncation: new Map(), fixed: new Map(), holds: new Map(), unmeasured: new Set() };
  if (budgets) ctx.sizes = sizes;
  await listQuarantine(ctx, home, keepFree ? sizes : undefined);
  if (!budgets) return tally;
  for (const p of ctx.sessionPlans) {
    if (p.input.isAuditRoot || !p.scan.identity) continue;
    if (!sessionsRootBudget(p.input, keepFree, p.scan.identity.dev === home.identity.dev)) continue;
    await measureRoot(ctx, p, sizes, keepFree);
  }
  for (const r of recordStoreBudgets(ctx.config.records, keepFree)) await measureStore(ctx, home, r.name, r.capsules, sizes);
  for (const n of [...sizes.items.values(), ...sizes.holds.values()]) {
    tally.items++;
    tally.bytes += n;
  }
  return tally;
}

/** Whether the reserve is in place (a dry run: and a real run would not have released it). */
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

/** Free space of the home's filesystem (what a dry run's reserve release would add counted in). Never throws. */
async function measureSpace(ctx: SweepContext, home: Dir): Promise<void> {
  try {
    const space = await (ctx.opts.statfs ?? statFs)(`/proc/self/fd/${home.fd}`);
    const free = space.freeBytes + ctx.fx.unappliedFreed();
    ctx.space = { totalBytes: space.totalBytes, freeBytes: free, keepFreeBytes: ctx.config.keepFree ? keepFreeBytes(ctx.config.keepFree, space.totalBytes) : undefined };
  } catch (err) {
    if (isAbort(err)) throw err;
    if (ctx.config.keepFree) fail(ctx, { target: ctx.home, code: Codes.ioError, detail: `free space of the filesystem under ${ctx.home} could not be read: ${describeError(err)}` });
  }
}

async function openRoot(p: SessionsRootPlan): Promise<Dir> {
  const d = await Dir.open(p.input.root);
  if (!p.scan.identity || !sameIdentity(d.identity, p.scan.identity)) {
    await d.close();
    throw new GcError(Codes.changedSinceScan, `${p.input.root} was replaced since it was scanned`);
  }
  return d;
}

/** Bytes of one entry, or undefined (reported) when it cannot be measured: it is then left out of the budgets. */
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

/** A sessions root's sessions (with what goes beside them), the child workdirs that stay, its holds. */
async function measureRoot(ctx: SweepContext, p: SessionsRootPlan, sizes: MeasuredSizes, keepFree: boolean): Promise<void> {
  const key = `sessions:${p.input.root}`;
  let root: Dir | undefined;
  try {
    root = await openRoot(p);
    const beside = await besideBytes(ctx, root, p);
    for (const v of p.views) {
      ctx.signal?.throwIfAborted();
      const own = await measured(ctx, `${p.input.root}/${v.scan.name}`, () => measureDir(root!, v.scan.name, v.scan.identity));
      if (own !== undefined) sizes.items.set(itemKey(key, v.scan.name), own + (beside.withSession.get(v.scan.name) ?? 0));
    }
    sizes.fixed.set(key, beside.staying.map((c) => ({ target: `children/${c.name}`, code: Codes.childKept, bytes: c.bytes })));
    if (keepFree) {
      for (const h of p.scan.held) {
        const bytes = await measured(ctx, `${p.input.root}/${h.entry}`, () => measureDir(root!, h.entry, h.identity));
        if (bytes !== undefined) sizes.holds.set(`${p.input.root}/${h.entry}`, bytes);
      }
    }
  } catch (err) {
    if (isAbort(err)) throw err;
    fail(ctx, { target: p.input.root, code: codeOf(err), detail: `${p.input.root}: not measured for its disk budget: ${describeError(err)}` });
    sizes.unmeasured.add(key);
  } finally {
    await root?.close();
  }
}

/**
 * Allocated bytes beside a `W/.murmur` root: per session, what would go with it (its finished
 * children and wrk_ logs, as the remove step would choose them); and every child workdir that
 * would not.
 */
async function besideBytes(ctx: SweepContext, root: Dir, p: SessionsRootPlan): Promise<{ withSession: Map<string, number>; staying: { name: string; bytes: number }[] }> {
  const withSession = new Map<string, number>();
  const staying: { name: string; bytes: number }[] = [];
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
      let n = 0;
      for (const i of besidePlanFor(ctx, b, p.views, [v.scan.name])?.remove ?? []) {
        if (i.kind === 'child_workdir') {
          n += size.get(i.name) ?? 0;
          chosen.add(i.name);
        } else n += b.logs?.wrk.find((l) => l.name === i.name)?.bytes ?? 0;
      }
      if (n > 0) withSession.set(v.scan.name, n);
    }
    for (const c of b.children?.entries ?? []) {
      const n = size.get(c.name);
      if (n !== undefined && !chosen.has(c.name)) staying.push({ name: c.name, bytes: n });
    }
  } finally {
    await children?.close();
  }
  return { withSession, staying };
}

/** A record store's contexts, and what each max_messages truncation would leave. */
async function measureStore(ctx: SweepContext, home: Dir, store: string, capsules: ReadonlySet<string>, sizes: MeasuredSizes): Promise<void> {
  const contexts = (ctx.records?.contexts ?? []).filter((c) => c.store === store);
  if (contexts.length === 0) return; // an empty (or not yet created) store holds nothing
  const key = `records:${store}`;
  let storeDir: Dir | undefined;
  try {
    storeDir = await openChain(home, [CONVERSATIONS_DIR, store]);
    for (const c of contexts) {
      ctx.signal?.throwIfAborted();
      const bytes = await measured(ctx, `${store}/${c.context}`, () => measureDir(storeDir!, c.context, c.dirIdentity));
      if (bytes === undefined) continue;
      sizes.items.set(itemKey(key, c.context), bytes);
      const keep = truncationKeep(ctx, c, capsules);
      if (keep === undefined) continue;
      const after = await truncatedBytes(ctx, storeDir, c, keep, bytes);
      if (after !== undefined) sizes.afterTruncation.set(itemKey(key, c.context), after);
    }
  } catch (err) {
    if (isAbort(err)) throw err;
    fail(ctx, { target: store, code: codeOf(err), detail: `record store ${store}: not measured for its disk budget: ${describeError(err)}` });
    sizes.unmeasured.add(key);
  } finally {
    await storeDir?.close();
  }
}

/** The `max_messages` a policy of its store would truncate this context to, or undefined. */
function truncationKeep(ctx: SweepContext, c: ContextScan, capsules: ReadonlySet<string>): number | undefined {
  if (c.header === undefined || !capsules.has(c.header.capsule) || c.messages === undefined || ctx.world.liveContexts.has(c.context)) return undefined;
  const policy = ctx.config.records.find((r) => r.store === c.store && r.capsule === c.header?.capsule);
  const keep = policy?.retain?.maxMessages;
  return keep !== undefined && c.messages > keep ? keep : undefined;
}

/** What the context directory holds once its record is truncated to `keep` messages: measured as it is, the file at its new length. */
async function truncatedBytes(ctx: SweepContext, storeDir: Dir, c: ContextScan, keep: number, bytes: number): Promise<number | undefined> {
  let dir: Dir | undefined;
  try {
    dir = await storeDir.openDir(c.context, c.dirIdentity);
    const st = await dir.lstat(RECORD_FILE);
    if (!st?.isFile()) return undefined;
    const m = await measureTruncation(dir, RECORD_FILE, {
      keep,
      fallbackCapsule: c.header?.capsule ?? c.store,
      nowMs: ctx.nowMs,
      expect: c.file.identity,
      ...(c.messages !== undefined ? { known: { messages: c.messages, size: c.file.size, mtimeMs: c.file.mtimeMs, identity: c.file.identity } } : {}),
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    if (m.dropped === 0) return undefined;
    const block = Math.max(512, Number(st.blksize) || 4096);
    return Math.max(0, bytes - allocatedBytes(st) + Math.ceil(m.bytesAfter / block) * block);
  } catch (err) {
    if (isAbort(err)) throw err;
    return undefined;
  } finally {
    await dir?.close();
  }
}

/**
 * Held contexts and dropped lines (<home>/gc/quarantine): listed once for the sweep (the plan and
 * the quarantine step read this listing), measured when keep_free may purge them.
 */
async function listQuarantine(ctx: SweepContext, home: Dir, sizes: MeasuredSizes | undefined): Promise<void> {
  try {
    const q = ctx.quarantineDir ?? (await openQuarantineDir(home, false));
    if (!q) return;
    ctx.quarantineDir = q;
    ctx.quarantineListing = await listQuarantineDir(q, sizes !== undefined);
    if (sizes) for (const i of ctx.quarantineListing.items) if (isHeld(i)) sizes.holds.set(`${q.path}/${i.entry}`, i.bytes);
  } catch (err) {
    if (isAbort(err)) throw err;
    fail(ctx, { target: `${ctx.home}/gc/quarantine`, code: codeOf(err), detail: describeError(err) });
  }
}

/** A quarantine item that is a hold in its own right: readable, complete, its truncation committed. */
export function isHeld(i: QueueItem): boolean {
  return i.unreadable === undefined && !i.incomplete && i.meta !== undefined && i.meta.state !== 'staged';
}
