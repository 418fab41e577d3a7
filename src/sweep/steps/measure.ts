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
// - When keep_free finds the filesystem short, the live sessions of every configured root on the
//   home's filesystem are measured too (whether or not their root takes part), and the largest
//   are named in the report: what is filling the disk is most likely still running.
// - The filesystem under the home is measured once (statfs) when the home exists: keep_free and
//   the reserve judge by it, plus what this sweep frees by the sizes above. Where the filesystem
//   has a fixed number of inodes, keep_free asks the same share of them (src/config/size.ts), and
//   every item and hold is also counted in inodes (its files and directories).
import { keepFreeBytes, keepFreeInodes } from '../../config/size.js';
import { Codes, GcError, codeOf, describeError, isAbort } from '../../errors.js';
import { CONVERSATIONS_DIR, RECORD_FILE, type ContextScan } from '../../runtime/inventory.js';
import { measureDir, allocatedBytes, type RemovalStats } from '../../fsx/remove.js';
import { Dir, sameIdentity } from '../../fsx/safe-fs.js';
import { countsInodes, statFs } from '../../fsx/statfs.js';
import { openChain } from '../../fsx/dirs.js';
import { measureTruncation } from '../../runtime/record-truncate.js';
import { recordStoreBudgets, sessionsRootBudget } from '../../plan/budget.js';
import { itemKey } from '../../plan/fates.js';
import { CHILDREN_DIR } from '../../runtime/workdir-scan.js';
import { listQuarantineDir, openQuarantineDir, type QueueItem } from '../../gchome/quarantine-store.js';
import { RESERVE_BYTES, RESERVE_INODES, reserveBytes, reserveInodes } from '../../gchome/reserve.js';
import { GC_DIR } from '../../gchome/audit.js';
import { besideClaims, besideEntries, besidePlanFor } from './beside.js';
import { fail, skip, type MeasuredSizes, type SessionsRootPlan, type StepTally, type SweepContext } from './context.js';
import type { GcConfig } from '../../config/types.js';

export function anyBudget(config: GcConfig): boolean {
  return (
    config.keepFree !== undefined ||
    config.sessions.some((s) => s.maxBytes !== undefined) ||
    config.records.some((r) => r.maxBytes !== undefined)
  );
}

export async function measureStep(ctx: SweepContext): Promise<StepTally> {
  const tally = { items: 0, bytes: 0 };
  const home = ctx.homeDir;
  if (!home) return tally;
  await measureSpace(ctx, home);
  ctx.reserveMissing = await reserveMissing(ctx, home);
  const keepFree = ctx.config.keepFree !== undefined;
  const budgets = anyBudget(ctx.config);
  const sizes: MeasuredSizes = {
    items: new Map(),
    afterTruncation: new Map(),
    fixed: new Map(),
    holds: new Map(),
    inodes: new Map(),
    unmeasured: new Set(),
  };
  if (budgets) ctx.sizes = sizes;
  await listQuarantine(ctx, home, keepFree ? sizes : undefined);
  if (!budgets) return tally;
  if (keepFreeShort(ctx)) ctx.liveLargest = await largestLive(ctx, home);
  for (const p of ctx.sessionPlans) {
    if (p.input.isAuditRoot || !p.scan.identity) continue;
    if (!sessionsRootBudget(p.input, keepFree, p.scan.identity.dev === home.identity.dev)) continue;
    await measureRoot(ctx, p, sizes, keepFree);
  }
  for (const r of recordStoreBudgets(ctx.config.records, keepFree))
    await measureStore(ctx, home, r.name, r.capsules, sizes);
  for (const n of [...sizes.items.values(), ...sizes.holds.values()]) {
    tally.items++;
    tally.bytes += n;
  }
  return tally;
}

/** Which parts of the reserve are not in place (a dry run: or a real run would have released); inodes only where the filesystem counts them. */
async function reserveMissing(ctx: SweepContext, home: Dir): Promise<{ bytes: boolean; inodes: boolean }> {
  const counted = ctx.space?.freeInodes !== undefined;
  let gc: Dir | undefined;
  try {
    if (!(await home.lstat(GC_DIR))?.isDirectory()) return { bytes: true, inodes: counted };
    gc = await home.openDir(GC_DIR);
    return {
      bytes: ctx.reserveReleased > 0 || (await reserveBytes(gc)) < RESERVE_BYTES,
      inodes: counted && (ctx.reserveInodesReleased > 0 || (await reserveInodes(gc)) <= RESERVE_INODES),
    };
  } catch (err) {
    if (isAbort(err)) throw err;
    return { bytes: true, inodes: counted };
  } finally {
    await gc?.close();
  }
}

/** Free space of the home's filesystem (what a dry run's reserve release would add counted in). Never throws. */
async function measureSpace(ctx: SweepContext, home: Dir): Promise<void> {
  try {
    const space = await (ctx.opts.statfs ?? statFs)(`/proc/self/fd/${home.fd}`);
    const free = space.freeBytes + ctx.fx.unappliedFreed();
    const kf = ctx.config.keepFree;
    ctx.space = {
      totalBytes: space.totalBytes,
      freeBytes: free,
      keepFreeBytes: kf ? keepFreeBytes(kf, space.totalBytes) : undefined,
    };
    if (countsInodes(space)) {
      ctx.space.totalInodes = space.totalInodes;
      ctx.space.freeInodes = space.freeInodes + ctx.fx.unappliedFreedInodes();
      if (kf) ctx.space.keepFreeInodes = keepFreeInodes(kf, space.totalBytes, space.totalInodes);
    }
  } catch (err) {
    if (isAbort(err)) throw err;
    if (ctx.config.keepFree)
      fail(ctx, {
        target: ctx.home,
        code: Codes.ioError,
        detail: `free space of the filesystem under ${ctx.home} could not be read: ${describeError(err)}`,
      });
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

/** Whether keep_free finds the filesystem short (of bytes, or of inodes where they are counted). */
function keepFreeShort(ctx: SweepContext): boolean {
  const s = ctx.space;
  if (!s || s.keepFreeBytes === undefined) return false;
  return (
    s.freeBytes < s.keepFreeBytes ||
    (s.keepFreeInodes !== undefined && s.freeInodes !== undefined && s.freeInodes < s.keepFreeInodes)
  );
}

/** How many live sessions a short keep_free names. */
const LIVE_NAMED = 3;

/** The largest live sessions of the configured roots on the home's filesystem (what cannot be measured is left out). */
async function largestLive(ctx: SweepContext, home: Dir): Promise<{ path: string; bytes: number }[]> {
  const out: { path: string; bytes: number }[] = [];
  for (const p of ctx.sessionPlans) {
    if (p.input.isAuditRoot || p.scan.identity?.dev !== home.identity.dev) continue;
    const live = p.views.filter((v) => v.liveness === 'live');
    if (live.length === 0) continue;
    let root: Dir | undefined;
    try {
      root = await openRoot(p);
      for (const v of live) {
        ctx.signal?.throwIfAborted();
        const m = await measureDir(root, v.scan.name, v.scan.identity).catch((err: unknown) => {
          if (isAbort(err)) throw err;
          return undefined;
        });
        if (m) out.push({ path: `${p.input.root}/${v.scan.name}`, bytes: m.bytes });
      }
    } catch (err) {
      if (isAbort(err)) throw err;
    } finally {
      await root?.close();
    }
  }
  return out.sort((a, b) => b.bytes - a.bytes || (a.path < b.path ? -1 : 1)).slice(0, LIVE_NAMED);
}

/** Inodes a measured tree holds: its files, its subdirectories and itself. */
export function inodesOf(m: RemovalStats): number {
  return m.files + m.dirs + 1;
}

/** Bytes and inodes of one entry, or undefined (reported) when it cannot be measured: it is then left out of the budgets. */
async function measured(
  ctx: SweepContext,
  target: string,
  measure: () => Promise<RemovalStats>,
): Promise<{ bytes: number; inodes: number } | undefined> {
  try {
    const m = await measure();
    return { bytes: m.bytes, inodes: inodesOf(m) };
  } catch (err) {
    if (isAbort(err)) throw err;
    const code = codeOf(err);
    (code === Codes.changedSinceScan ? skip : fail)(ctx, {
      target,
      code,
      detail: `${target}: not measured for its disk budget: ${describeError(err)}`,
    });
    return undefined;
  }
}

/** A sessions root's sessions (with what goes beside them), the child workdirs that stay, its holds. */
async function measureRoot(
  ctx: SweepContext,
  p: SessionsRootPlan,
  sizes: MeasuredSizes,
  keepFree: boolean,
): Promise<void> {
  const key = `sessions:${p.input.root}`;
  let root: Dir | undefined;
  try {
    root = await openRoot(p);
    const beside = await besideBytes(ctx, root, p);
    for (const v of p.views) {
      ctx.signal?.throwIfAborted();
      const own = await measured(ctx, `${p.input.root}/${v.scan.name}`, () =>
        measureDir(root!, v.scan.name, v.scan.identity),
      );
      if (own === undefined) continue;
      const k = itemKey(key, v.scan.name);
      const with_ = beside.withSession.get(v.scan.name);
      sizes.items.set(k, own.bytes + (with_?.bytes ?? 0));
      sizes.inodes.set(k, own.inodes + (with_?.inodes ?? 0));
    }
    sizes.fixed.set(
      key,
      beside.staying.map((c) => ({ target: `children/${c.name}`, code: Codes.childKept, bytes: c.bytes })),
    );
    if (keepFree) {
      for (const h of p.scan.held) {
        const m = await measured(ctx, `${p.input.root}/${h.entry}`, () => measureDir(root!, h.entry, h.identity));
        if (m === undefined) continue;
        sizes.holds.set(`${p.input.root}/${h.entry}`, m.bytes);
        sizes.inodes.set(`${p.input.root}/${h.entry}`, m.inodes);
      }
    }
  } catch (err) {
    if (isAbort(err)) throw err;
    fail(ctx, {
      target: p.input.root,
      code: codeOf(err),
      detail: `${p.input.root}: not measured for its disk budget: ${describeError(err)}`,
    });
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
async function besideBytes(
  ctx: SweepContext,
  root: Dir,
  p: SessionsRootPlan,
): Promise<{
  withSession: Map<string, { bytes: number; inodes: number }>;
  staying: { name: string; bytes: number }[];
}> {
  const withSession = new Map<string, { bytes: number; inodes: number }>();
  const staying: { name: string; bytes: number }[] = [];
  const b = p.beside;
  if (!b?.children && !b?.logs) return { withSession, staying };
  await using children = b.children
    ? await root.openDir(CHILDREN_DIR, b.children.identity).catch(() => undefined)
    : undefined;
  const size = new Map<string, RemovalStats>();
  for (const c of b.children?.entries ?? []) {
    if (c.kind !== 'dir' || !children) continue;
    const m = await measureDir(children, c.name, c.identity).catch(() => undefined);
    if (m !== undefined) size.set(c.name, m);
  }
  const chosen = new Set<string>();
  const claims = besideClaims(b, p.views);
  const wrk = besideEntries(b).wrk;
  for (const v of p.views) {
    const n = { bytes: 0, inodes: 0 };
    for (const i of besidePlanFor(ctx, b, p.views, [v.scan.name], [], claims)?.remove ?? []) {
      if (i.kind === 'child_workdir') {
        const m = size.get(i.name);
        if (m) {
          n.bytes += m.bytes;
          n.inodes += inodesOf(m);
        }
        chosen.add(i.name);
      } else {
        n.bytes += wrk.get(i.name)?.bytes ?? 0;
        n.inodes++;
      }
    }
    if (n.bytes > 0 || n.inodes > 0) withSession.set(v.scan.name, n);
  }
  for (const c of b.children?.entries ?? []) {
    const m = size.get(c.name);
    if (m !== undefined && !chosen.has(c.name)) staying.push({ name: c.name, bytes: m.bytes });
  }
  return { withSession, staying };
}

/** A record store's contexts, and what each max_messages truncation would leave. */
async function measureStore(
  ctx: SweepContext,
  home: Dir,
  store: string,
  capsules: ReadonlySet<string>,
  sizes: MeasuredSizes,
): Promise<void> {
  const contexts = (ctx.records?.contexts ?? []).filter((c) => c.store === store);
  if (contexts.length === 0) return; // an empty (or not yet created) store holds nothing
  const key = `records:${store}`;
  let storeDir: Dir | undefined;
  try {
    storeDir = await openChain(home, [CONVERSATIONS_DIR, store]);
    for (const c of contexts) {
      ctx.signal?.throwIfAborted();
      const m = await measured(ctx, `${store}/${c.context}`, () => measureDir(storeDir!, c.context, c.dirIdentity));
      if (m === undefined) continue;
      const bytes = m.bytes;
      sizes.items.set(itemKey(key, c.context), bytes);
      sizes.inodes.set(itemKey(key, c.context), m.inodes);
      const keep = truncationKeep(ctx, c, capsules);
      if (keep === undefined) continue;
      const after = await truncatedBytes(ctx, storeDir, c, keep, bytes);
      if (after !== undefined) sizes.afterTruncation.set(itemKey(key, c.context), after);
    }
  } catch (err) {
    if (isAbort(err)) throw err;
    fail(ctx, {
      target: store,
      code: codeOf(err),
      detail: `record store ${store}: not measured for its disk budget: ${describeError(err)}`,
    });
    sizes.unmeasured.add(key);
  } finally {
    await storeDir?.close();
  }
}

/** The `max_messages` a policy of its store would truncate this context to, or undefined. */
function truncationKeep(ctx: SweepContext, c: ContextScan, capsules: ReadonlySet<string>): number | undefined {
  if (
    c.header === undefined ||
    !capsules.has(c.header.capsule) ||
    c.messages === undefined ||
    ctx.world.liveContexts.has(c.context)
  )
    return undefined;
  const policy = ctx.config.records.find((r) => r.store === c.store && r.capsule === c.header?.capsule);
  const keep = policy?.retain?.maxMessages;
  return keep !== undefined && c.messages > keep ? keep : undefined;
}

/** What the context directory holds once its record is truncated to `keep` messages: measured as it is, the file at its new length. */
async function truncatedBytes(
  ctx: SweepContext,
  storeDir: Dir,
  c: ContextScan,
  keep: number,
  bytes: number,
): Promise<number | undefined> {
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
      ...(c.messages !== undefined
        ? { known: { messages: c.messages, size: c.file.size, mtimeMs: c.file.mtimeMs, identity: c.file.identity } }
        : {}),
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
    if (!sizes) return;
    for (const i of ctx.quarantineListing.items) {
      if (!isHeld(i)) continue;
      sizes.holds.set(`${q.path}/${i.entry}`, i.bytes);
      if (i.inodes !== undefined) sizes.inodes.set(`${q.path}/${i.entry}`, i.inodes);
    }
  } catch (err) {
    if (isAbort(err)) throw err;
    fail(ctx, { target: `${ctx.home}/gc/quarantine`, code: codeOf(err), detail: describeError(err) });
  }
}

/** A quarantine item that is a hold in its own right: readable, complete, its truncation committed. */
export function isHeld(i: QueueItem): boolean {
  return i.unreadable === undefined && !i.incomplete && i.meta !== undefined && i.meta.state !== 'staged';
}
