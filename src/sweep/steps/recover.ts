// Step "recover": complete the audit of a sweep that was killed mid-way, and remove what a killed
// murmur-gc left under <home>/gc: small temp files (state, caches, lock-owner evidence, held
// items' sidecars), record/trace lock directories of dead holders, held items that never became
// holds (src/gchome/leftovers.ts); what an interrupted restore put back is protected, as the
// restore would have done (src/commands/protect.ts).
// Guarantees: real runs only (it writes: ctx.fx.upkeep); each completed run is reported as a process_interrupted
// skip, each removed temp as a remove_debris action; a temp of a live process is never touched.
import { Codes, describeError } from '../../errors.js';
import { removeDeadGcTemps } from '../../gchome/leftovers.js';
import { protectRecovered } from '../../gchome/protect-file.js';
import { recoverInterruptedAudits } from '../../gchome/audit-recovery.js';
import type { Dir } from '../../fsx/safe-fs.js';
import { acted, skip, type SweepContext, type StepTally } from './context.js';

export async function recoverStep(ctx: SweepContext): Promise<StepTally> {
  const homeDir = ctx.homeDir;
  if (!homeDir) return { items: 0, bytes: 0 };
  return (await ctx.fx.upkeep(() => recover(ctx, homeDir))) ?? { items: 0, bytes: 0 };
}

async function recover(ctx: SweepContext, homeDir: Dir): Promise<StepTally> {
  const recovered = await recoverInterruptedAudits(homeDir, ctx.home, ctx.now());
  for (const r of recovered) skip(ctx, { target: r.target, code: Codes.processInterrupted, detail: r.detail });
  // A restore completed here is protected before the protect step reads the list and the plan
  // could condemn it again (as the restore itself would have done).
  await protectRecovered(
    homeDir,
    ctx.log,
    recovered.flatMap((r) => r.restored),
    () => ctx.now(),
  );
  let bytes = 0;
  const temps = await removeDeadGcTemps(ctx.home, ctx.nowMs).catch((err: unknown) => {
    ctx.log.warn({ code: Codes.ioError }, `could not look for leftovers in ${ctx.home}/gc: ${describeError(err)}`);
    return [];
  });
  for (const t of temps) {
    const detail = t.detail ?? `temp file of a killed murmur-gc (pid ${t.pid ?? '?'})`;
    const removed = 'leftover temp file of a killed murmur-gc removed';
    acted(
      ctx,
      { kind: 'remove_debris', path: t.path, code: Codes.processInterrupted, detail, bytes: t.bytes },
      'warn',
      { code: Codes.processInterrupted, path: t.path, pid: t.pid, bytes: t.bytes },
      [removed, removed],
    );
    bytes += t.bytes;
  }
  return { items: recovered.length + temps.length, bytes };
}
