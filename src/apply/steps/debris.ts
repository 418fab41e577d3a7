// Step "debris": leftovers of interrupted runs (trash directories, temp files) are finished.
// Guarantees: a temp file whose writing process is alive is left alone; each entry is acted on
// through its parent's descriptor and only if it is still the entry scanned (same dev/ino);
// a dry run measures and removes nothing.
import { Codes, codeOf, describeError } from '../../errors.js';
import type { Debris } from '../../io/inventory.js';
import { allocatedBytes, finishTrash, measureDir } from '../../io/remove.js';
import { probeProcess } from '../../io/running.js';
import { Dir, identityOf, readSmallFile, sameIdentity } from '../../io/safe-fs.js';
import { GC_DIR, INTENT_FILE } from '../audit.js';
import { fail, progress, type SweepContext, type StepTally } from './context.js';
import { openChain } from './dirs.js';

const tempPid = (path: string): number => Number(/\.(\d+)\.[0-9a-f]+\.tmp$/.exec(path)?.[1] ?? 0);

export async function debrisStep(ctx: SweepContext): Promise<StepTally> {
  // Temp files: decide pid liveness now (async probe) — a temp of a live process is in use.
  const liveTempPids = new Set<number>();
  for (const d of ctx.debris) {
    if (d.kind !== 'temp_file') continue;
    const pid = tempPid(d.path);
    if (pid > 0 && pid !== process.pid && (await probeProcess(pid, undefined)) === 'alive') liveTempPids.add(pid);
  }
  const tally = { items: 0, bytes: 0 };
  let done = 0;
  for (const d of ctx.debris) {
    progress(ctx, done++, ctx.debris.length, tally.bytes);
    ctx.signal?.throwIfAborted();
    if (d.kind === 'temp_file' && liveTempPids.has(tempPid(d.path))) continue;
    try {
      const failedRun = d.kind === 'trash_dir' ? await finishedRunOf(ctx, d.path) : undefined;
      const bytes = await actOnDebris(d, ctx.dryRun);
      const code = failedRun ? Codes.ioError : Codes.processInterrupted;
      const detail = failedRun ? `left by sweep ${failedRun}, whose removal of it failed (it was not interrupted)` : d.detail;
      ctx.report.actions.push({ kind: 'remove_debris', path: d.path, code, detail, bytes });
      ctx.report.bytes_freed += bytes;
      tally.items++;
      tally.bytes += bytes;
      const what = failedRun ? 'leftover of a failed removal' : 'leftover of an interrupted run';
      ctx.log.warn({ code, path: d.path, bytes }, ctx.dryRun ? `would remove a ${what}` : `${what} removed`);
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

async function actOnDebris(d: Debris, dryRun: boolean): Promise<number> {
  const anchor = await Dir.open(d.ref.anchor, { followFinal: true });
  try {
    const parentChain = d.ref.chain.slice(0, -1);
    const name = d.ref.chain[d.ref.chain.length - 1];
    if (name === undefined) return 0;
    const parent = parentChain.length === 0 ? anchor : await openChain(anchor, parentChain);
    try {
      if (d.kind === 'trash_dir') {
        if (dryRun) return (await measureDir(parent, name, d.identity)).bytes;
        return (await finishTrash(parent, name, d.identity)).bytes;
      }
      const st = await parent.lstat(name);
      if (!st || !st.isFile() || !sameIdentity(identityOf(st), d.identity)) return 0;
      if (!dryRun) await parent.unlink(name);
      return allocatedBytes(st);
    } finally {
      if (parent !== anchor) await parent.close();
    }
  } finally {
    await anchor.close();
  }
}
