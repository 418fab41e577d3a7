// Step "truncate": records over their policy's max_messages keep only their newest messages, as
// their fates say (src/plan/fates.ts: the dropped lines are held by the undo window unless
// keep_free needs their space).
// Guarantees: under the record's lock, only the file scanned (same dev/ino), through the
// context directory's descriptor; the rewrite is staged and renamed over the record with lines a
// writer appended meanwhile carried over (runtime/record-truncate.ts); through ctx.fx, so a dry run
// counts and writes nothing. The intent is in the audit log before the rewrite starts. A
// truncation that does not happen counts as staying whole for a budget planned again (ctx.failed).
// A record some process holds open for writing is not truncated: it is skipped with
// `record_held_open` naming the pids, before any intent is logged or anything held, and the rest of
// the run goes on (the rewrite checks again up to its rename: docs/design.md §3). What a process
// that opened it during the rewrite may still write to the replaced file is an error
// (`record_held_open`); the warnings say only what was checked ("none lost" only when every
// replaced file was let go and carried whole).
import { dirname } from 'node:path';
import { Codes, GcError, HeldOpenError, pidList } from '../../errors.js';
import { CONVERSATIONS_DIR, RECORD_FILE, type ContextScan } from '../../runtime/inventory.js';
import { heldOpenBy } from '../../runtime/record-truncate.js';
import type { HeldLock } from '../../gchome/lock.js';
import { sameIdentity, type Dir } from '../../fsx/safe-fs.js';
import type { HeldAt } from '../report.js';
import type { DropKeeper } from '../effects.js';
import { acted, fail, progress, skip, warnItem, type SweepContext, type StepTally } from './context.js';
import { itemKey, type Fate } from '../../plan/fates.js';
import { openChain } from '../../fsx/dirs.js';
import { holdRecord, recordFailure } from './record-lock.js';

export async function truncateStep(ctx: SweepContext): Promise<StepTally> {
  const tally = { items: 0, bytes: 0 };
  const home = ctx.homeDir;
  if (!home) return tally;
  const work: { c: ContextScan; key: string; keep: number; holdUntil: number | undefined; fate: Fate }[] = [];
  for (const r of ctx.recordPlans) {
    for (const c of r.contexts) {
      const key = itemKey(r.key, c.context);
      const f = ctx.fates?.items.get(key);
      if (f?.fate === 'truncated') work.push({ c, key, keep: f.keep, holdUntil: f.heldUntilMs, fate: f });
    }
  }
  let done = 0;
  for (const w of work) {
    progress(ctx, done++, work.length, tally.bytes);
    ctx.signal?.throwIfAborted();
    ctx.acts.set(w.key, w.fate);
    const freed = await truncateOne(ctx, home, w.c, w.c.header?.capsule ?? w.c.store, w.keep, w.holdUntil);
    if (freed === undefined) ctx.failed.add(w.key);
    else {
      tally.items++;
      tally.bytes += freed;
    }
  }
  return tally;
}

/** Truncates one record; the bytes freed, or undefined when nothing was dropped. */
async function truncateOne(
  ctx: SweepContext,
  home: Dir,
  c: ContextScan,
  capsule: string,
  keep: number,
  hold: number | undefined,
): Promise<number | undefined> {
  const target = `${c.store}/${c.context}`;
  if (c.file.uid !== ctx.uid) {
    skip(ctx, { target, code: Codes.foreignOwner, detail: `${c.path} belongs to another user; not truncated` });
    return undefined;
  }
  let lock: HeldLock | undefined;
  let dir: Dir | undefined;
  try {
    const locked = await holdRecord(ctx, home, c.store, c);
    if (locked === 'busy') return undefined;
    lock = locked;
    dir = await openChain(home, [CONVERSATIONS_DIR, c.store, c.context]);
    if (!sameIdentity(dir.identity, c.dirIdentity))
      throw new GcError(Codes.changedSinceScan, `${dir.path} was replaced since it was scanned`);
    const heldBy = await heldOpenBy(dir, RECORD_FILE, { expect: c.file.identity });
    if (heldBy.length > 0) {
      skip(ctx, { target, code: Codes.recordHeldOpen, detail: new HeldOpenError(c.path, heldBy).message });
      return undefined;
    }
    // The intent names the marker the new header will carry, so recovery can tell from the
    // record itself whether the rename happened.
    const at = ctx.now();
    const lockSignal = lock?.signal;
    const cdir = dir;
    let keeper: DropKeeper | undefined;
    const out = await ctx.fx
      .audited(
        {
          kind: 'truncate_record',
          store: 'records',
          reason: 'max_messages',
          parent: dirname(dir.path),
          target: c.context,
          at_ms: String(at),
          dropped_before: String(c.header?.truncated?.dropped ?? 0n),
        },
        async () => {
          keeper =
            hold !== undefined
              ? await ctx.fx.dropKeeper(home, {
                  store: c.store,
                  context: c.context,
                  removed_ms: at,
                  until_ms: hold,
                  reason: 'max_messages',
                  run: ctx.auditId,
                  at_ms: String(at),
                })
              : undefined;
          return ctx.fx.truncate(cdir, RECORD_FILE, {
            ...(keeper ? { keepDropped: keeper.hook } : {}),
            keep,
            fallbackCapsule: capsule,
            nowMs: at,
            expect: c.file.identity,
            ...(c.messages !== undefined
              ? {
                  known: {
                    messages: c.messages,
                    size: c.file.size,
                    mtimeMs: c.file.mtimeMs,
                    identity: c.file.identity,
                  },
                }
              : {}),
            ...(lockSignal ? { signal: lockSignal } : {}),
          });
        },
        (o) => ({
          done: { messages_dropped: o.dropped },
          // (the undo window's deadline goes into the audit's details: history and restore --sweep read it)
          ...(o.dropped > 0
            ? {
                retention: {
                  store: 'records',
                  reason: 'max_messages',
                  target: c.context,
                  messagesDropped: o.dropped,
                  parent: dirname(cdir.path),
                  ...(hold !== undefined && keeper ? { heldUntilMs: hold } : {}),
                },
              }
            : {}),
        }),
      )
      .catch(async (err: unknown) => {
        // Held open by the time of the rename: nothing was renamed, so nothing is held either.
        if (err instanceof HeldOpenError) await keeper?.settle(false).catch(() => undefined);
        throw err;
      });
    const uncarried = (await keeper?.settle(out.dropped > 0, out.carriedTo)) ?? 0;
    if (out.dropped === 0) return undefined;
    const freed = Math.max(0, out.bytesBefore - out.bytesAfter);
    const held: HeldAt | undefined =
      hold === undefined
        ? undefined
        : {
            until_ms: hold,
            path:
              keeper?.entry !== undefined
                ? `${ctx.quarantineDir?.path ?? ''}/${keeper.entry}/${keeper.payload}`
                : `${home.path}/gc/quarantine`,
          };
    if (hold !== undefined) {
      const entry = keeper?.entry ?? `(${c.context})`;
      // what the window holds: the dropped lines (a dry run counts them alike)
      ctx.heldNow.push({
        kind: 'truncation',
        target: c.context,
        origin: c.store,
        untilMs: hold,
        removedMs: at,
        bytes: out.droppedBytes,
        parent: ctx.quarantineDir?.path ?? `${home.path}/gc/quarantine`,
        entry,
        reason: 'max_messages',
        messages: out.dropped,
      });
    }
    acted(
      ctx,
      {
        ...(held ? { held } : {}),
        kind: 'truncate_record',
        record: c.store,
        target: c.context,
        reason: 'max_messages',
        messages_dropped: out.dropped,
        kept: out.kept,
        path: c.path,
        bytes: freed,
        ...(out.outOfOrder ? { concurrent_append: { lines_out_of_order: out.outOfOrderLines ?? 0 } } : {}),
      },
      'debug',
      {
        record: c.store,
        target: c.context,
        messages_dropped: out.dropped,
        kept: out.kept,
        appended_during: out.appendedDuring,
      },
    );
    const stillHeld = out.heldBy ?? [];
    if (out.outOfOrder) {
      // "none lost" only when it was checked: every replaced file let go, and carried whole.
      const carried = stillHeld.length === 0 ? ' (every line written to the replaced file is in the record)' : '';
      warnItem(
        ctx,
        Codes.concurrentAppend,
        c.path,
        `a writer kept appending to the replaced file; ${out.outOfOrderLines ?? 0} of its lines were appended after newer ones${carried}`,
        { path: c.path, rounds: out.rounds, still_held: out.stillHeld, lines_out_of_order: out.outOfOrderLines ?? 0 },
      );
    } else if (out.reordered && stillHeld.length === 0) {
      ctx.log.info(
        { code: Codes.concurrentAppend, path: c.path },
        'writers appended during the rename; their lines were kept in order',
      );
    }
    if (stillHeld.length > 0) {
      const kept =
        uncarried > 0 && held
          ? `; ${uncarried} bytes it wrote there after the rewrite stopped waiting are only in the held old file (${held.path}), which its window deletes`
          : '';
      fail(ctx, {
        target,
        code: Codes.recordHeldOpen,
        detail: `${pidList(stillHeld)} opened ${c.path} while it was being truncated and still held the replaced file open for writing when the rewrite stopped waiting: lines written there from then on are not in the record${kept}`,
      });
    }
    return freed;
  } catch (err) {
    recordFailure(ctx, err, target, lock);
    return undefined;
  } finally {
    await dir?.close();
    await lock?.release();
  }
}
