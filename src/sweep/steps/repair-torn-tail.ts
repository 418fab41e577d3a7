// Step "repair_torn_tail": a record a policy covers whose last line is torn (a writer died
// mid-line) gets its `\n`, so the runtime's next append starts a line of its own instead of being
// glued to the torn bytes and lost to every reader (docs/design.md §4).
// Guarantees: the selection is src/plan/torn-tail.ts (idle for live_grace, not live, readable);
// under the record's lock, only the file scanned (same dev/ino), through the context directory's
// descriptor, and only when no process holds the file open for writing; the `\n` is added by the
// staged rewrite (runtime/record-truncate.ts `repairTornTail`), so a line appended meanwhile lands
// after it. Audited (intent before the rewrite); through ctx.fx, so a dry run reports and writes nothing.
// A record a process holds open for writing is skipped with `record_held_open` naming the pids
// (before any intent is logged); one a process was writing to at that instant, with
// `concurrent_append` naming it (its line may be mid-write).
import { dirname } from 'node:path';
import { Codes, GcError, HeldOpenError, pidList } from '../../errors.js';
import { CONVERSATIONS_DIR, RECORD_FILE, type ContextScan } from '../../runtime/inventory.js';
import { heldOpenBy } from '../../runtime/record-truncate.js';
import type { HeldLock } from '../../gchome/lock.js';
import { sameIdentity, type Dir } from '../../fsx/safe-fs.js';
import { planTornTails } from '../../plan/torn-tail.js';
import { acted, skip, type SweepContext, type StepTally } from './context.js';
import { openChain } from '../../fsx/dirs.js';
import { holdRecord, recordFailure } from './record-lock.js';
import { fateOf } from '../../plan/fates.js';
import { contextNamed } from './remove.js';

export async function repairTornTailStep(ctx: SweepContext): Promise<StepTally> {
  const tally = { items: 0, bytes: 0 };
  const home = ctx.homeDir;
  if (!home) return tally;
  const done = new Set<string>();
  for (const r of ctx.recordPlans) {
    const contexts = r.contexts;
    // what this sweep takes or truncates (its rewrite terminates the torn line) is not repaired
    const acted = new Set(
      contexts.filter((c) => fateOf(ctx.fates, r.key, c.context).fate !== 'kept').map((c) => c.context),
    );
    for (const policy of r.policies) {
      const targets = planTornTails(
        contexts.map((c) => ({
          context: c.context,
          header: c.header,
          mtimeMs: c.file.mtimeMs,
          terminated: c.terminated,
          unreadable: c.unreadable === true,
        })),
        policy.capsule,
        policy.retain,
        ctx.world.liveContexts,
        acted,
        ctx.nowMs,
        ctx.config.liveGraceSecs * 1000,
      );
      for (const name of targets) {
        ctx.signal?.throwIfAborted();
        const c = contextNamed(contexts, name);
        if (!c || done.has(c.path)) continue;
        done.add(c.path);
        if (await repairOne(ctx, home, c)) tally.items++;
      }
    }
  }
  return tally;
}

async function repairOne(ctx: SweepContext, home: Dir, c: ContextScan): Promise<boolean> {
  const target = `${c.store}/${c.context}`;
  if (c.file.uid !== ctx.uid) {
    skip(ctx, {
      target,
      code: Codes.foreignOwner,
      detail: `${c.path} belongs to another user; its torn last line is left as it is`,
    });
    return false;
  }
  let lock: HeldLock | undefined;
  let dir: Dir | undefined;
  try {
    const held = await holdRecord(ctx, home, c.store, c);
    if (held === 'busy') return false;
    lock = held;
    dir = await openChain(home, [CONVERSATIONS_DIR, c.store, c.context]);
    if (!sameIdentity(dir.identity, c.dirIdentity))
      throw new GcError(Codes.changedSinceScan, `${dir.path} was replaced since it was scanned`);
    const heldBy = await heldOpenBy(dir, RECORD_FILE, { expect: c.file.identity });
    if (heldBy.length > 0) {
      skip(ctx, {
        target,
        code: Codes.recordHeldOpen,
        detail: `${new HeldOpenError(c.path, heldBy).message}; its torn last line is left as it is`,
      });
      return false;
    }
    const cdir = dir;
    const out = await ctx.fx.audited({ kind: 'repair_torn_tail', parent: dirname(dir.path), target: c.context }, () =>
      ctx.fx.repairTornTail(cdir, RECORD_FILE, {
        expect: c.file.identity,
        ...(lock?.signal ? { signal: lock.signal } : {}),
      }),
    );
    if (!out.repaired) {
      if (out.why === 'held') {
        const who = out.pids && out.pids.length > 0 ? pidList(out.pids) : 'a process';
        skip(ctx, {
          target,
          code: Codes.concurrentAppend,
          detail: `${c.path} ends with a torn line but ${who} was writing to it (the line may be mid-write); left as it is`,
        });
      }
      return false;
    }
    acted(ctx, { kind: 'repair_torn_tail', record: c.store, target: c.context, path: c.path }, 'info', {
      record: c.store,
      target: c.context,
    });
    return true;
  } catch (err) {
    recordFailure(ctx, err, target, lock);
    return false;
  } finally {
    await dir?.close();
    await lock?.release();
  }
}
