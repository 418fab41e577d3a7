// The blast-radius guard of what is taken outside the fate planner (src/plan/fates.ts guards the
// sessions and records): orphaned child workdirs, and what held sessions name beside their root.
// One place at a time, reported as `blast_radius` with nothing taken there (docs/config.md,
// max_delete), counting only the items of the kind it names.
// Guarantees: a dry run reports exactly what a real run would refuse.
import { Codes } from '../../errors.js';
import { blastRadius } from '../../plan/guards.js';
import { fail, type SweepContext } from './context.js';

/**
 * The blast-radius guard for one store: true (reported as `blast_radius`, nothing removed there)
 * when this sweep would remove more than the limit allows. A dry run reports the same.
 */
export function tooLarge(
  ctx: SweepContext,
  store: string,
  what: 'child workdirs' | 'child workdirs and work logs',
  present: number,
  names: string[],
): boolean {
  const limit = blastRadius({
    present,
    remove: names.length,
    configured: ctx.config.maxDelete,
    unattended: ctx.opts.unattended === true,
    confirmLarge: ctx.opts.confirmLarge === true,
  });
  if (!limit) return false;
  const shown = names.slice(0, 10).join(', ') + (names.length > 10 ? `, … (${names.length - 10} more)` : '');
  fail(ctx, {
    target: store,
    code: Codes.blastRadius,
    detail: `this sweep would remove ${names.length} of ${present} ${what} in ${store} (${shown}); ${limit}, so nothing was removed there. To proceed: ${proceedHint(ctx)}`,
  });
  return true;
}

/** How to proceed past the guard: by hand only helps while no max_delete is configured. */
export function proceedHint(ctx: SweepContext): string {
  return ctx.config.maxDelete
    ? 'check it with --dry-run, then add --confirm-large, or raise max_delete'
    : 'check it with --dry-run, then run it once by hand (murmur-gc sweep: without max_delete it has no limit), or add --confirm-large, or set max_delete';
}
