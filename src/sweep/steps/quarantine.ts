// Step "quarantine": the undo window's housekeeping (layout: src/gchome/quarantine-layout.ts).
// Guarantees:
// - Runs whether or not `quarantine:` is configured now: what an earlier configuration held
//   still goes when its window passes.
// - A held item whose window has passed (`until_ms <= now`, the sweep's one clock; the plan's
//   fate for it, src/plan/fates.ts) is deleted for good through fsx/remove.ts (rename to trash, re-verify, descriptor-relative delete, never a
//   link followed or a mount crossed); another user's entry is skipped (`foreign_owner`). Each is
//   one `purge_quarantine` action, intended in the intent log first, and one target of a
//   `quarantine_purge` line of the audit trace.
// - A truncation item left `staged` (its rewrite was interrupted) is promoted to `held` when the
//   record carries the marker it names, and discarded otherwise; an item without its payload (an
//   interrupted hold) is discarded. Both only once older than an hour, so a `conversation
//   truncate` running beside the sweep is never undercut. A trash entry left in the quarantine
//   directory by a killed purge is finished.
// - An item whose item.json cannot be read (missing, empty, garbage, a FIFO, huge: never opened
//   unless regular, never read past 64 KiB) goes by the window in its name: kept and reported as
//   `quarantine_item_unreadable` (a skip) until then, purged and audited (kind `unreadable`) after;
//   it never fails a sweep. Its payload is never discarded before that window. An item whose
//   payload is not what its readable item.json names (a symbolic link, a file for the context
//   directory) is kept and reported as `quarantine_item_invalid` until its window passes, then
//   purged like any other (a link is removed as a link, never followed).
// - Acts through ctx.fx: a dry run measures and reports, and changes nothing.
// - A held session is purged only when murmur-gc's registry vouches for its hold (the scan holds
//   no other: steps/trust.ts), and the purge's own names are in the registry before it starts.
// - A symlink in place of `<home>/gc/quarantine` is reported (`symlink`) and never followed.
import { Codes, codeOf, describeError, isAbort } from '../../errors.js';
import { CONVERSATIONS_DIR, RECORD_FILE, readHeader } from '../../runtime/inventory.js';
import { humanTime } from '../../runtime/conversation-format.js';
import {
  dropEmptyItem,
  listQuarantineDir,
  openQuarantineDir,
  writeMeta,
  type QueueItem,
} from '../../gchome/quarantine-store.js';
import { Dir, identityOf, sameIdentity, type Identity } from '../../fsx/safe-fs.js';
import { fingerprintOf, placing } from '../../gchome/registry.js';
import { keptName, trashName } from '../../fsx/remove.js';
import { isExpired, oldestFirst } from '../../gchome/quarantine-layout.js';
import { retryKeptEntry } from './debris.js';
import { acted, fail, notWritable, progress, skip, warnItem, type StepTally, type SweepContext } from './context.js';
import { openChain } from '../../fsx/dirs.js';

/** A staged or payload-less item younger than this may belong to a hold still in progress. */
const SETTLE_AFTER_MS = 60 * 60 * 1000;

export interface PurgeTarget {
  store: 'sessions' | 'records';
  origin: string;
  target: string;
  held: 'session' | 'context' | 'truncation' | 'unreadable';
  entry: string;
  identity: Identity;
}

/** Delete one held item for good (through ctx.fx: a dry run measures it); the bytes, or undefined on failure. */
export async function purgeHeld(
  ctx: SweepContext,
  parent: Dir,
  t: PurgeTarget,
  reason: 'expired' | 'keep_free',
): Promise<number | undefined> {
  const path = parent.display(t.entry);
  try {
    // A held session is in a capsule's directory: its purge's names are recorded first.
    if (t.store === 'sessions') await placePurge(ctx, parent, t);
    const purged = { store: t.store, reason, target: t.target, held: t.held };
    ctx.acts.set(`${parent.path}/${t.entry}`, { fate: 'purged', rule: reason });
    const bytes = await ctx.fx.audited(
      { kind: 'purge_quarantine', parent: parent.path, target: t.entry, purge: purged },
      () => ctx.fx.purge(parent, t.entry, t.identity),
      () => ({ purged }),
    );
    ctx.purgedNow.add(`${parent.path}/${t.entry}`);
    acted(
      ctx,
      {
        kind: 'purge_quarantine',
        store: t.store,
        origin: t.origin,
        target: t.target,
        held_kind: t.held,
        reason,
        path,
        bytes,
      },
      'debug',
      { path, target: t.target, reason, bytes },
    );
    return bytes;
  } catch (err) {
    if (isAbort(err)) throw err;
    ctx.failed.add(`${parent.path}/${t.entry}`);
    const code = codeOf(err);
    (code === Codes.changedSinceScan ? skip : fail)(ctx, {
      target: path,
      code,
      detail: `${path}: ${describeError(err)}`,
    });
    return undefined;
  }
}

/** The trash and kept-aside names purging `parent/t.entry` makes, in the registry (when they are not yet). */
async function placePurge(ctx: SweepContext, parent: Dir, t: PurgeTarget): Promise<void> {
  const run = ctx.auditId;
  const st = await parent.lstat(t.entry);
  if (!st?.isDirectory() || !sameIdentity(identityOf(st), t.identity)) return; // the purge reports it
  const fp = fingerprintOf(st);
  await ctx.fx.place([
    placing(parent.path, trashName(run, t.entry), 'trash', fp, run),
    placing(parent.path, keptName(run, t.entry), 'kept', fp, run),
  ]);
}

export async function quarantineStep(ctx: SweepContext): Promise<StepTally> {
  const tally = { items: 0, bytes: 0 };
  const count = (b: number | undefined) => {
    if (b === undefined) return;
    tally.items++;
    tally.bytes += b;
  };

  // ── sessions held in their own roots ─────────────────────────────────────────────────────
  // Which go is the plan's (src/plan/fates.ts): the held items whose window has passed.
  const expired = (key: string) => {
    const f = ctx.fates?.holds.get(key);
    return f === undefined
      ? undefined
      : (f.fate === 'purged' && f.rule === 'expired') || (f.fate === 'kept' && f.why === 'foreign_owner');
  };
  for (const { input, scan } of ctx.world.rootScans) {
    const due = oldestFirst(
      scan.held
        .filter((h) => expired(`${input.root}/${h.entry}`) ?? isExpired(h.untilMs, ctx.nowMs))
        .map((h) => ({ ...h, target: h.session })),
    );
    if (due.length === 0 || !scan.identity) continue;
    if (notWritable(ctx, input.root, 'held sessions to purge', due.length)) continue;
    let root: Dir;
    try {
      root = await Dir.open(input.root);
      if (!sameIdentity(root.identity, scan.identity)) {
        await root.close();
        skip(ctx, {
          target: input.root,
          code: Codes.changedSinceScan,
          detail: `${input.root} was replaced since it was scanned; its held sessions are left for the next sweep`,
        });
        continue;
      }
    } catch (err) {
      fail(ctx, { target: input.root, code: codeOf(err), detail: `${input.root}: ${describeError(err)}` });
      continue;
    }
    await using _ = root;
    // the purges' trash and kept-aside names, recorded before any is made (src/gchome/registry.ts)
    const run = ctx.auditId;
    const mine = due.filter((h) => h.uid === ctx.uid);
    await ctx.fx
      .place(
        mine.flatMap((h) => [
          placing(root.path, trashName(run, h.entry), 'trash', h, run),
          placing(root.path, keptName(run, h.entry), 'kept', h, run),
        ]),
      )
      .catch((err: unknown) => {
        if (isAbort(err)) throw err;
        fail(ctx, {
          target: input.root,
          code: codeOf(err),
          detail: `${input.root}: ${describeError(err)}; its held sessions are left for the next sweep`,
        });
        due.length = 0;
      });
    for (const h of due) {
      ctx.signal?.throwIfAborted();
      if (h.uid !== ctx.uid) {
        skip(ctx, {
          target: root.display(h.entry),
          code: Codes.foreignOwner,
          detail: `${root.display(h.entry)} belongs to uid ${h.uid}; not removed`,
        });
        continue;
      }
      count(
        await purgeHeld(
          ctx,
          root,
          {
            store: 'sessions',
            origin: input.root,
            target: h.session,
            held: 'session',
            entry: h.entry,
            identity: h.identity,
          },
          'expired',
        ),
      );
    }
  }

  // ── contexts and dropped lines under <home>/gc/quarantine ────────────────────────────────
  const home = ctx.homeDir;
  if (!home) return tally;
  let q: Dir | undefined;
  try {
    q = ctx.quarantineDir ?? (await openQuarantineDir(home, false));
  } catch (err) {
    fail(ctx, { target: `${ctx.home}/gc/quarantine`, code: codeOf(err), detail: describeError(err) });
    return tally;
  }
  if (!q) return tally;
  ctx.quarantineDir = q;
  const listed = ctx.quarantineListing ?? (await listQuarantineDir(q, false));
  for (const p of listed.problems) fail(ctx, p);
  for (const t of listed.trash) {
    try {
      const bytes = await ctx.fx.finishTrash(q, t.entry, t.identity);
      acted(
        ctx,
        {
          kind: 'remove_debris',
          path: q.display(t.entry),
          code: Codes.processInterrupted,
          detail: 'a held item an interrupted murmur-gc run had started to delete',
          bytes,
        },
        'debug',
        {},
        null,
      );
    } catch (err) {
      fail(ctx, {
        target: q.display(t.entry),
        code: codeOf(err),
        detail: `${q.display(t.entry)}: ${describeError(err)}`,
      });
    }
  }
  for (const k of listed.kept) {
    count(
      await retryKeptEntry(ctx, q, k.entry, k.identity).catch((err: unknown) => {
        if (isAbort(err)) throw err;
        ctx.kept.push({ path: q.display(k.entry), bytes: 0, sinceMs: ctx.nowMs });
        return undefined;
      }),
    );
  }
  let done = 0;
  for (const item of oldestFirst(listed.items)) {
    progress(ctx, done++, listed.items.length, tally.bytes);
    ctx.signal?.throwIfAborted();
    if (item.unreadable !== undefined) {
      count(await unreadableItem(ctx, q, item));
      continue;
    }
    if (item.payloadMismatch !== undefined) {
      count(await invalidItem(ctx, q, item, item.payloadMismatch));
      continue;
    }
    const settled = ctx.nowMs - (item.meta?.removed_ms ?? 0) > SETTLE_AFTER_MS;
    const meta = item.meta;
    if (meta?.kind === 'truncation' && meta.state === 'staged' && !item.incomplete) {
      if (!settled) continue;
      // Upkeep: a dry run neither settles a staged item nor counts it.
      const promoted = await ctx.fx.upkeep(async () => {
        if (!(await truncationLanded(home, item))) {
          await discard(ctx, q, item, 'its truncation never committed');
          return false;
        }
        await writeMeta(q, item.entry, { ...meta, state: 'held' }).catch((err: unknown) =>
          fail(ctx, { target: q.display(item.entry), code: codeOf(err), detail: describeError(err) }),
        );
        item.meta = { ...meta, state: 'held' };
        return true;
      });
      if (promoted !== true) continue;
    }
    if (item.incomplete) {
      if (settled) await ctx.fx.upkeep(() => discard(ctx, q, item, 'an interrupted hold left it without its payload'));
      continue;
    }
    if (!(expired(`${q.path}/${item.entry}`) ?? isExpired(item.untilMs, ctx.nowMs))) continue;
    count(
      await purgeHeld(
        ctx,
        q,
        {
          store: 'records',
          origin: item.origin,
          target: item.target,
          held: item.kind === 'truncation' ? 'truncation' : 'context',
          entry: item.entry,
          identity: item.identity,
        },
        'expired',
      ),
    );
  }
  return tally;
}

/**
 * An item whose item.json cannot be read: its window is the one its name carries. Holding only
 * sidecar temps (or nothing) it is the recover step's (src/gchome/leftovers.ts). One changed within
 * the last hour may be a hold still writing its sidecar: left alone. Otherwise it is kept, and
 * reported once per sweep (`quarantine_item_unreadable`, a skip: never an error), until its window
 * passes; then it is purged like any held item, audited with kind `unreadable` and its entry name
 * as the target. It can never be restored (nothing says where it came from).
 */
async function unreadableItem(ctx: SweepContext, q: Dir, item: QueueItem): Promise<number | undefined> {
  if (item.sidecarTempsOnly || ctx.nowMs - item.changedMs <= SETTLE_AFTER_MS) return undefined;
  const path = q.display(item.entry);
  const why = item.unreadable ?? 'its item.json cannot be read';
  if (!isExpired(item.untilMs, ctx.nowMs)) {
    skip(ctx, {
      target: path,
      code: Codes.quarantineItemUnreadable,
      detail: `${path}: ${why}; it cannot be restored, and is kept until ${humanTime(item.untilMs)} (the window in its name)`,
    });
    return undefined;
  }
  warnItem(ctx, Codes.quarantineItemUnreadable, path, `${path}: ${why}; the window in its name has passed`, { path });
  return purgeHeld(
    ctx,
    q,
    {
      store: 'records',
      origin: '?',
      target: item.entry,
      held: 'unreadable',
      entry: item.entry,
      identity: item.identity,
    },
    'expired',
  );
}

/**
 * An item whose sidecar is readable but whose payload is not what it names (a symbolic link, a
 * file for the context directory): it cannot be restored. Kept and reported once per sweep
 * (`quarantine_item_invalid`, a skip) until its window passes; then purged like any held item (a
 * link is removed as a link, never followed), audited with its own kind and target.
 */
async function invalidItem(ctx: SweepContext, q: Dir, item: QueueItem, why: string): Promise<number | undefined> {
  const path = q.display(item.entry);
  if (!isExpired(item.untilMs, ctx.nowMs)) {
    skip(ctx, {
      target: path,
      code: Codes.quarantineItemInvalid,
      detail: `${path}: ${why}; it cannot be restored, and is kept until ${humanTime(item.untilMs)} (its window)`,
    });
    return undefined;
  }
  warnItem(ctx, Codes.quarantineItemInvalid, path, `${path}: ${why}; its window has passed`, { path });
  return purgeHeld(
    ctx,
    q,
    {
      store: 'records',
      origin: item.origin,
      target: item.target,
      held: item.kind === 'truncation' ? 'truncation' : 'context',
      entry: item.entry,
      identity: item.identity,
    },
    'expired',
  );
}

/** Did the truncation a staged item was kept for commit? (the record carries its marker) */
async function truncationLanded(home: Dir, item: QueueItem): Promise<boolean> {
  const m = item.meta;
  if (!m?.at_ms) return false;
  let dir: Dir | undefined;
  try {
    dir = await openChain(home, [CONVERSATIONS_DIR, m.store, m.context]);
    const h = await readHeader(dir, RECORD_FILE);
    return h?.truncated !== undefined && h.truncated.at_ms === BigInt(m.at_ms);
  } catch {
    return false;
  } finally {
    await dir?.close();
  }
}

async function discard(ctx: SweepContext, q: Dir, item: QueueItem, why: string): Promise<void> {
  try {
    const d = await q.openDir(item.entry, item.identity);
    const hasCtx = (await d.lstat('ctx')) !== undefined;
    await d.close();
    // A payload directory without a readable sidecar is never thrown away: it is reported.
    if (hasCtx) {
      skip(ctx, {
        target: q.display(item.entry),
        code: Codes.ioError,
        detail: `${q.display(item.entry)} holds a context without a readable item.json; left for you to inspect`,
      });
      return;
    }
    await dropEmptyItem(q, item.entry);
    ctx.log.info({ code: Codes.processInterrupted, path: q.display(item.entry) }, `quarantine item discarded: ${why}`);
  } catch (err) {
    fail(ctx, {
      target: q.display(item.entry),
      code: codeOf(err),
      detail: `${q.display(item.entry)}: ${describeError(err)}`,
    });
  }
}
