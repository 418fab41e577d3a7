// Step "debris": leftovers of interrupted runs (trash directories, temp files — murmur-gc's and
// the runtime's `.conversation.jsonl.<pid>.<hex>.tmp`) are finished, what an earlier removal set
// aside (`.murmur-gc-kept.*`) is tried again, and what killed runtimes left in `<home>/running`
// goes (`runtime_debris`): a `<ses>.json.writing-<pid>` over an hour old whose pid is dead, a
// running record whose process is gone (kill(pid, 0) fails or its start token differs — the
// runtime's own prune test — probed again just before) once its session needs no reconciling.
// Guarantees: a child's trash in children/ is finished only while nothing inside it is live (a
// session written within the live grace, a live running record: `child_kept`, a later sweep);
// in a sessions root or a children/ directory (a capsule can write both) only trash and
// kept-aside directories murmur-gc's registry vouches for are here (steps/trust.ts: a capsule's
// look-alikes are reported, never removed); a temp file whose writing process is alive is left alone; each entry is acted on
// through its parent's descriptor and only if it is still the entry scanned (same dev/ino);
// a kept-aside directory that still cannot go is no error: it stays, and the sweep reports it
// (one aggregated line, `kept` in the report) until it is gone; through ctx.fx, so a dry run
// measures and removes nothing.
import { Codes, codeOf, describeError, isAbort } from '../../errors.js';
import type { Debris } from '../../runtime/inventory.js';
import { allocatedBytes } from '../../fsx/remove.js';
import { keptSinceMs } from '../../runtime/gc-entries.js';
import { probeProcess } from '../../runtime/running.js';
import { Dir, identityOf, readSmallFile, sameIdentity, type Identity } from '../../fsx/safe-fs.js';
import { GC_DIR, INTENT_FILE } from '../../gchome/audit.js';
import { acted, fail, notWritable, progress, skip, type SweepContext, type StepTally } from './context.js';
import { trashedChildLiveWhy } from './beside.js';
import { CHILDREN_DIR } from '../../runtime/workdir-scan.js';
import { openChain } from '../../fsx/dirs.js';

const tempPid = (path: string): number => Number(/\.(\d+)\.[0-9a-f]+\.tmp$/.exec(path)?.[1] ?? 0);

export async function debrisStep(ctx: SweepContext): Promise<StepTally> {
  // Temp files: decide pid liveness now (async probe) — a temp of a live process is in use.
  const liveTempPids = new Set<number>();
  for (const d of ctx.debris) {
    if (d.kind !== 'temp_file' && d.kind !== 'running_temp') continue;
    const pid = d.pid ?? tempPid(d.path);
    if (pid > 0 && pid !== process.pid && (await probeProcess(pid, undefined)) === 'alive') liveTempPids.add(pid);
  }
  const tally = { items: 0, bytes: 0 };
  let done = 0;
  for (const d of ctx.debris) {
    progress(ctx, done++, ctx.debris.length, tally.bytes);
    ctx.signal?.throwIfAborted();
    if (d.kind === 'temp_file' && liveTempPids.has(tempPid(d.path))) continue;
    const root = [...ctx.unwritable.keys()].find((r) => d.path.startsWith(`${r}/`));
    if (root !== undefined && d.kind !== 'kept_dir' && notWritable(ctx, root, 'leftovers to remove', 1)) continue;
    if (d.kind === 'running_temp' && liveTempPids.has(d.pid ?? 0)) continue;
    // a running record is removed only while its process is still gone (the runtime's own test)
    if (d.kind === 'running_record' && (await probeProcess(d.pid ?? 0, d.startTime)) === 'alive') continue;
    // an entry the registry vouched for (steps/trust.ts) is acted on: it keeps what is still there
    if (d.kind === 'kept_dir' || d.kind === 'trash_dir') ctx.registry.touched();
    if (d.kind === 'kept_dir') {
      const bytes = await withParent(d, (parent, name) => retryKeptEntry(ctx, parent, name, d.identity)).catch(
        (err: unknown) => {
          if (isAbort(err)) throw err;
          ctx.kept.push({ path: d.path, bytes: 0, sinceMs: ctx.nowMs });
          return undefined;
        },
      );
      if (bytes !== undefined) {
        tally.items++;
        tally.bytes += bytes;
      }
      continue;
    }
    // A child's trash (its removal was killed) goes only while nothing in it lives: a session a
    // process started in it meanwhile keeps it for a later sweep.
    if (d.kind === 'trash_dir' && d.ref.chain.length === 2 && d.ref.chain[0] === CHILDREN_DIR) {
      const original = d.ref.chain[1]!.replace(/^\.murmur-gc-trash\.ses_[0-9a-z]+\./, '');
      const why = await withParent(d, (parent, name) =>
        trashedChildLiveWhy(ctx, parent, name, d.identity, `${d.ref.anchor}/${CHILDREN_DIR}/${original}`),
      ).catch((err: unknown) => {
        if (isAbort(err)) throw err;
        return `it cannot be judged (${describeError(err)})`;
      });
      if (why !== undefined) {
        skip(ctx, { target: d.path, code: Codes.childKept, detail: `${d.path}: ${why}; left for a later sweep` });
        continue;
      }
    }
    try {
      const failedRun = d.kind === 'trash_dir' ? await finishedRunOf(ctx, d.path) : undefined;
      const bytes = await actOnDebris(ctx, d);
      const runtime = d.kind === 'running_temp' || d.kind === 'running_record';
      const code = failedRun ? Codes.ioError : runtime ? Codes.runtimeDebris : Codes.processInterrupted;
      const detail = failedRun
        ? `left by sweep ${failedRun}, whose removal of it failed (it was not interrupted)`
        : d.detail;
      const what = failedRun
        ? 'leftover of a failed removal'
        : runtime
          ? 'leftover of a killed runtime'
          : 'leftover of an interrupted run';
      acted(
        ctx,
        { kind: 'remove_debris', path: d.path, code, detail, bytes },
        runtime ? 'info' : 'warn',
        { code, path: d.path, bytes },
        [`would remove a ${what}`, `${what} removed`],
      );
      tally.items++;
      tally.bytes += bytes;
    } catch (err) {
      fail(ctx, { target: d.path, code: codeOf(err), detail: `${d.path}: ${describeError(err)}` });
    }
  }
  return tally;
}

/**
 * A trash directory is named `.murmur-gc-trash.<run>.<name>`. When that run's audit trace ended
 * normally (exit_status ok or failed, not canceled), the run was not interrupted: its removal
 * failed, and the leftover is not reported as process_interrupted. Returns that run's id then.
 */
async function finishedRunOf(ctx: SweepContext, trashPath: string): Promise<string | undefined> {
  const run = /\.murmur-gc-trash\.(ses_[0-9a-f]+)\./.exec(trashPath)?.[1];
  if (!run || !ctx.homeDir) return undefined;
  let gc: Dir | undefined;
  let sdir: Dir | undefined;
  try {
    gc = await ctx.homeDir.openDir(GC_DIR);
    sdir = await gc.openDir(run);
    if (await sdir.lstat(INTENT_FILE)) return undefined; // still to be recovered: interrupted
    const text = (await readSmallFile(sdir, 'trace.jsonl', 1 << 20)).toString('utf8');
    const end = text.split('\n').find((l) => l.includes('"event_type":"session_end"'));
    const status = end ? /"exit_status":"([a-z_]+)"/.exec(end)?.[1] : undefined;
    return status === 'ok' || status === 'failed' ? run : undefined;
  } catch {
    return undefined;
  } finally {
    await sdir?.close();
    await gc?.close();
  }
}

/** Run `fn` on the scanned entry's parent directory, opened descriptor-relatively from its anchor. */
async function withParent<T>(d: Debris, fn: (parent: Dir, name: string) => Promise<T>): Promise<T | undefined> {
  await using anchor = await Dir.open(d.ref.anchor, { followFinal: true });
  const parentChain = d.ref.chain.slice(0, -1);
  const name = d.ref.chain[d.ref.chain.length - 1];
  if (name === undefined) return undefined;
  const parent = parentChain.length === 0 ? anchor : await openChain(anchor, parentChain);
  try {
    return await fn(parent, name);
  } finally {
    if (parent !== anchor) await parent.close();
  }
}

async function actOnDebris(ctx: SweepContext, d: Debris): Promise<number> {
  const bytes = await withParent(d, async (parent, name) => {
    if (d.kind === 'trash_dir') return ctx.fx.finishTrash(parent, name, d.identity);
    const st = await parent.lstat(name);
    if (!st || !st.isFile() || !sameIdentity(identityOf(st), d.identity)) return 0;
    await ctx.fx.unlink(parent, name);
    return allocatedBytes(st);
  });
  return bytes ?? 0;
}

/**
 * Try again to remove `parent/name`, set aside by an earlier removal that could not remove it
 * whole (src/fsx/remove.ts retryKept). Gone: a `remove_debris` action (code io_error: a removal
 * that failed earlier), its bytes returned. Still there (or a dry run): added to `ctx.kept`, no
 * error, undefined returned.
 */
export async function retryKeptEntry(
  ctx: SweepContext,
  parent: Dir,
  name: string,
  identity: Identity,
): Promise<number | undefined> {
  const path = parent.display(name);
  const st = await parent.lstat(name);
  if (!st?.isDirectory() || !sameIdentity(identityOf(st), identity)) return undefined;
  const sinceMs = keptSinceMs(name, st);
  const r = await ctx.fx.retryKept(parent, name, identity);
  if (!r.removed) {
    ctx.kept.push({ path, bytes: r.bytes, sinceMs });
    if (r.why) ctx.log.debug({ path, bytes: r.bytes }, `still kept aside: ${r.why}`);
    return undefined;
  }
  const bytes = r.stats.bytes;
  const removedNow = 'a directory kept aside by an earlier sweep is removed now';
  acted(
    ctx,
    {
      kind: 'remove_debris',
      path,
      code: Codes.ioError,
      detail: 'set aside by an earlier sweep that could not remove it whole; removed now',
      bytes,
    },
    'info',
    { code: Codes.ioError, path, bytes },
    [removedNow, removedNow],
  );
  return bytes;
}
