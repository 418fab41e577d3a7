// Step "budget": what the disk budgets take (`max_bytes` per sessions root / record store,
// `keep_free` for the filesystem under the home), as the fate planner decided before anything
// was done (src/plan/fates.ts has the order and the rules), and the keep_free reserve.
// Guarantees:
// - Acts on what the plan says, in its order: holds keep_free purges (the window that ends first
//   first), then what max_bytes holds or removes and what keep_free removes, store by store. What
//   keep_free takes for good of what the policies condemned was already removed by the remove step.
// - When an earlier act of this sweep did not happen (a session written since the scan, a busy
//   record, an io error), the budgets are planned again by the same planner with those items
//   counted as staying, and what the new plan adds is done; again after each act of its own that
//   did not happen. A dry run meets the same acts the same way, so it plans what the real run does.
// - Never removes a live session, a context a live session names, a protected item, another
//   user's entry, or a record whose header names no capsule of the store's policies; removals go
//   through the remove step's own code (rename to trash, re-verify, then delete; intent audited
//   first); what max_bytes takes is held while `quarantine` is set, what keep_free takes never is.
// - What could not be freed is reported: one skip per unmet budget, code `budget_unmet`, naming
//   the bytes still missing, what held them and the largest items it may not touch; the numbers
//   are in `report.budget`. A protected item a budget would have taken is named once (`protected`).
// - The reserve (src/gchome/reserve.ts): whenever the home exists, a missing part of it (bytes,
//   inodes) is put back once the sweep has acted, when free space (with keep_free: as the sweep
//   measured it plus what it freed; without: as statfs finds it now) keeps another part's worth
//   free with it in place — even when that leaves
//   keep_free short of the part's size (what keep_free then misses is reported).
import { Codes, codeOf, describeError, isAbort } from '../../errors.js';
import { Dir } from '../../fsx/safe-fs.js';
import { countsInodes, statFs } from '../../fsx/statfs.js';
import { RESERVE_BYTES, RESERVE_INODES_ROOM, RESERVE_NAME, fitsInodes, fitsReserve } from '../../gchome/reserve.js';
import { GC_DIR } from '../../gchome/audit.js';
import { planFates, type BudgetUnmet, type FatePlan } from '../../plan/fates.js';
import { formatBytes, plural } from '../report.js';
import { fail, skip, type StepTally, type SweepContext } from './context.js';
import {
  contextNamed,
  budgetTakes,
  removeRecord,
  removeSessions,
  reportRecordsKept,
  reportSessionsKept,
  reportStop,
  takings,
} from './remove.js';
import { purgeHeld } from './quarantine.js';
import { anyBudget } from './measure.js';
import { fateInput } from './plan.js';

export async function budgetStep(ctx: SweepContext): Promise<StepTally> {
  const tally = { items: 0, bytes: 0 };
  const home = ctx.homeDir;
  if (!home) return tally;
  if (ctx.fates && anyBudget(ctx.config)) {
    const stopped = new Set(ctx.fates.stops.map((s) => s.store));
    // Acts of this sweep that did not happen: the budgets are planned again without them.
    let failedBefore = -1;
    while (ctx.failed.size !== failedBefore) {
      failedBefore = ctx.failed.size;
      if (failedBefore > 0) {
        ctx.fates = planFates({ ...fateInput(ctx), failed: ctx.failed, stopped });
        for (const s of ctx.fates.stops) {
          if (stopped.has(s.store)) continue;
          stopped.add(s.store);
          reportStop(ctx, s);
        }
      }
      await actOnPlan(ctx, home, ctx.fates, tally);
    }
    for (const p of ctx.sessionPlans) reportSessionsKept(ctx, p, true);
    for (const r of ctx.recordPlans) reportRecordsKept(ctx, r, true);
  }
  const putBack = await keepReserve(ctx, home);
  reportBudgets(ctx, home, putBack);
  return tally;
}

/** Does what the plan's budgets take that this sweep has not acted on yet. */
async function actOnPlan(ctx: SweepContext, home: Dir, plan: FatePlan, tally: StepTally): Promise<void> {
  // holds keep_free purges, the window that ends first first
  const purges = [...plan.holds]
    .filter(([k, f]) => f.fate === 'purged' && f.rule === 'keep_free' && !ctx.acts.has(k))
    .map(([k]) => k);
  const held = heldEntries(ctx);
  purges.sort((a, b) => (held.get(a)?.untilMs ?? 0) - (held.get(b)?.untilMs ?? 0) || (a < b ? -1 : a > b ? 1 : 0));
  for (const k of purges) {
    ctx.signal?.throwIfAborted();
    const h = held.get(k);
    if (!h) continue;
    const bytes = await purgeAt(ctx, h.parent, h.t);
    if (bytes !== undefined) {
      tally.items++;
      tally.bytes += bytes;
    }
  }
  const notYet = (f: Parameters<typeof budgetTakes>[0]) => budgetTakes(f);
  for (const p of ctx.sessionPlans) {
    const list = takings(
      ctx,
      p.key,
      p.views.map((v) => v.scan.name),
      notYet,
    ).filter((x) => !ctx.acts.has(`${p.key}\0${x.name}`));
    await removeSessions(ctx, p, list, tally, () => undefined);
  }
  for (const r of ctx.recordPlans) {
    for (const { name, fate } of takings(
      ctx,
      r.key,
      r.contexts.map((c) => c.context),
      notYet,
    )) {
      if (ctx.acts.has(`${r.key}\0${name}`)) continue;
      ctx.signal?.throwIfAborted();
      const c = contextNamed(r.contexts, name);
      if (!c) continue;
      const bytes = await removeRecord(ctx, home, c, r, fate);
      if (bytes !== undefined) {
        tally.items++;
        tally.bytes += bytes;
      }
    }
  }
}

/** Every held item the plan may purge, by its key (`<parent>/<entry>`), with how to purge it. */
function heldEntries(
  ctx: SweepContext,
): Map<string, { parent: string; untilMs: number; t: Parameters<typeof purgeHeld>[2] }> {
  const out = new Map<string, { parent: string; untilMs: number; t: Parameters<typeof purgeHeld>[2] }>();
  for (const p of ctx.sessionPlans) {
    for (const h of p.scan.held) {
      out.set(`${p.input.root}/${h.entry}`, {
        parent: p.input.root,
        untilMs: h.untilMs,
        t: {
          store: 'sessions',
          origin: p.input.root,
          target: h.session,
          held: 'session',
          entry: h.entry,
          identity: h.identity,
        },
      });
    }
  }
  const q = ctx.quarantineDir;
  for (const i of q ? (ctx.quarantineListing?.items ?? []) : []) {
    out.set(`${q!.path}/${i.entry}`, {
      parent: q!.path,
      untilMs: i.untilMs,
      t: {
        store: 'records',
        origin: i.origin,
        target: i.target,
        held: i.kind === 'truncation' ? 'truncation' : 'context',
        entry: i.entry,
        identity: i.identity,
      },
    });
  }
  return out;
}

/** Purge one held item found under `parentPath` (a sessions root or the quarantine directory) for keep_free. */
async function purgeAt(
  ctx: SweepContext,
  parentPath: string,
  t: Parameters<typeof purgeHeld>[2],
): Promise<number | undefined> {
  if (ctx.quarantineDir && parentPath === ctx.quarantineDir.path)
    return purgeHeld(ctx, ctx.quarantineDir, t, 'keep_free');
  let d: Dir | undefined;
  try {
    d = await Dir.open(parentPath);
    return await purgeHeld(ctx, d, t, 'keep_free');
  } catch (err) {
    if (isAbort(err)) throw err;
    ctx.failed.add(`${parentPath}/${t.entry}`);
    fail(ctx, { target: parentPath, code: codeOf(err), detail: `${parentPath}: ${describeError(err)}` });
    return undefined;
  } finally {
    await d?.close();
  }
}

/** One `budget_unmet` skip per budget left unmet, and the report's `budget` section (when a budget is configured). */
function reportBudgets(ctx: SweepContext, home: Dir, putBack: PutBack): void {
  const b = ctx.fates?.budget;
  if (!b || !anyBudget(ctx.config)) return;
  const kfBytes = ctx.space?.keepFreeBytes;
  for (const u of b.unmet)
    skip(ctx, {
      target: u.store === undefined ? ctx.home : u.label.replace(/^(sessions root|record store) /, ''),
      code: Codes.budgetUnmet,
      detail: unmetText(u, ctx, kfBytes, b.keepFree?.room ?? 0),
    });
  const kf = b.keepFree;
  ctx.report.budget = {
    stores: b.stores,
    keep_free:
      kf && kfBytes !== undefined && ctx.space
        ? {
            required_bytes: kfBytes,
            free_bytes: ctx.space.freeBytes,
            short_bytes: kf.short,
            // a reserve put back without the room for it takes that much from keep_free
            short_bytes_after:
              putBack.bytes && kf.room === 0
                ? Math.max(kf.short_after, kfBytes - (ctx.space.freeBytes + kf.freed - RESERVE_BYTES))
                : kf.short_after,
            inodes:
              ctx.space.keepFreeInodes !== undefined && ctx.space.freeInodes !== undefined
                ? {
                    required: ctx.space.keepFreeInodes,
                    free: ctx.space.freeInodes,
                    short: kf.inodes_short,
                    short_after:
                      putBack.inodes && kf.inodes_room === 0
                        ? Math.max(
                            kf.inodes_short_after,
                            ctx.space.keepFreeInodes - (ctx.space.freeInodes + kf.freed_inodes - RESERVE_INODES_ROOM),
                          )
                        : kf.inodes_short_after,
                  }
                : null,
            per_sweep_percent: ctx.config.keepFree?.perSweepPercent ?? 100,
            largest_live: ctx.liveLargest,
            purged: kf.purged,
            removed: kf.removed,
            reserve: {
              path: `${home.path}/${GC_DIR}/${RESERVE_NAME}`,
              released_bytes: ctx.reserveReleased,
              released_inodes: ctx.reserveInodesReleased,
              room_bytes: kf.room,
              room_inodes: kf.inodes_room,
              put_back: putBack.bytes,
              put_back_inodes: putBack.inodes,
            },
          }
        : null,
    unmet: b.unmet,
  };
}

/**
 * Put the missing parts of the reserve back (or, in a dry run, say whether a real run would) when
 * another part's worth stays free with them in place (src/gchome/reserve.ts fitsReserve,
 * fitsInodes) — judged from what the sweep measured and freed, in a dry run and a real run alike.
 * Never throws.
 */
async function keepReserve(ctx: SweepContext, home: Dir): Promise<PutBack> {
  const none = { bytes: false, inodes: false };
  try {
    const space = ctx.config.keepFree ? ctx.space : await spaceNow(ctx, home);
    if (!space) return none;
    const kf = ctx.fates?.budget.keepFree;
    const parts = {
      bytes: ctx.reserveMissing.bytes && fitsReserve(space.freeBytes + (kf?.freed ?? 0)),
      inodes:
        ctx.reserveMissing.inodes &&
        space.freeInodes !== undefined &&
        fitsInodes(space.freeInodes + (kf?.freed_inodes ?? 0)),
    };
    if (!parts.bytes && !parts.inodes) return none;
    return (await ctx.fx.createReserve(home, parts)) ? parts : none;
  } catch (err) {
    if (isAbort(err)) throw err;
    ctx.log.warn(
      { path: `${home.path}/${GC_DIR}/${RESERVE_NAME}` },
      `the reserve was not put back: ${describeError(err)}`,
    );
    return none;
  }
}

/**
 * Without keep_free nothing measured what the sweep freed: the filesystem as it is now (a dry run
 * changed nothing, and reports no budget then). Undefined when it cannot be read.
 */
async function spaceNow(ctx: SweepContext, home: Dir): Promise<{ freeBytes: number; freeInodes?: number } | undefined> {
  const s = await (ctx.opts.statfs ?? statFs)(`/proc/self/fd/${home.fd}`).catch(() => undefined);
  if (!s) return undefined;
  return countsInodes(s)
    ? { freeBytes: s.freeBytes + ctx.fx.unappliedFreed(), freeInodes: s.freeInodes + ctx.fx.unappliedFreedInodes() }
    : { freeBytes: s.freeBytes + ctx.fx.unappliedFreed() };
}

/** Which parts of the reserve this sweep put back (a dry run: would). */
interface PutBack {
  bytes: boolean;
  inodes: boolean;
}

function unmetText(u: BudgetUnmet, ctx: SweepContext, required: number | undefined, room: number): string {
  const held = Object.entries(u.held).map(([code, h]) => `${code} ${h.items} (${formatBytes(h.bytes)})`);
  const heldText = held.length > 0 ? `held by ${held.join(', ')}` : 'nothing else taking part could be removed';
  const largest = u.largest.map((l) => `${l.target} (${l.code}, ${formatBytes(l.bytes)})`);
  const what =
    u.reason === 'keep_free'
      ? `the filesystem under ${ctx.home} is ${formatBytes(u.bytes_short)} short of keep_free (${formatBytes(required ?? 0)} free wanted${room > 0 ? `, plus ${formatBytes(room)} of room for the reserve` : ''})`
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
  const inodes = u.inodes_short !== undefined ? ` and ${u.inodes_short} inodes short` : '';
  const bound = u.beyond_per_sweep
    ? ` (${plural(u.beyond_per_sweep.items, 'more item')} (${formatBytes(u.beyond_per_sweep.bytes)}) beyond per_sweep, ${ctx.config.keepFree?.perSweepPercent ?? 100}% of each store a sweep)`
    : '';
  const live =
    u.reason === 'keep_free' && ctx.liveLargest.length > 0
      ? `; largest live sessions: ${ctx.liveLargest.map((l) => `${l.path} (${formatBytes(l.bytes)})`).join(', ')}`
      : '';
  return `${what}${inodes}: ${done}${bound}; ${heldText}${largest.length > 0 ? `; largest it may not touch: ${largest.join(', ')}` : ''}${live}`;
}
