// Step "recover": complete the audit of a sweep that was killed mid-way, and remove what a killed
// murmur-gc left under <home>/gc: small temp files (state, caches, lock-owner evidence, held
// items' sidecars), record/trace lock directories of dead holders, held items that never became
// holds (src/gchome/leftovers.ts); what an interrupted restore put back is protected, as the
// restore would have done (src/commands/protect.ts).
// Guarantees: real runs only (it writes: ctx.fx.recover, nothing in a measure-only run); each completed run is reported as a process_interrupted
// skip, each removed temp as a remove_debris action; a temp of a live process is never touched.
// The recovery itself is the one a restore runs too (src/sweep/effects.ts `recover`).
import { Codes, describeError } from '../../errors.js';
import { acted, skip, type SweepContext, type StepTally } from './context.js';

export async function recoverStep(ctx: SweepContext): Promise<StepTally> {
  const homeDir = ctx.homeDir;
  if (!homeDir) return { items: 0, bytes: 0 };
  // A restore completed here is protected before the protect step reads the list and the plan
  // could condemn it again (as the restore itself would have done): ctx.fx.recover does both.
  const { recovered, temps, tempsError } = await ctx.fx.recover(homeDir, ctx.nowMs);
  for (const r of recovered) skip(ctx, { target: r.target, code: Codes.processInterrupted, detail: r.detail });
  if (tempsError !== undefined)
    ctx.log.warn(
      { code: Codes.ioError },
      `could not look for leftovers in ${ctx.home}/gc: ${describeError(tempsError)}`,
    );
  let bytes = 0;
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
