// The blast-radius guard of the removing steps (remove, beside, orphans, budget): one store at a
// time, reported as `blast_radius` with nothing removed there (docs/config.md, max_delete).
// Guarantees: a dry run reports exactly what a real run would refuse.
import { Codes } from '../../errors.js';
import { blastRadius } from '../../plan/guards.js';
import { fail, type SweepContext } from './context.js';

/**
 * The blast-radius guard for one store: true (reported as `blast_radius`, nothing removed there)
 * when this sweep would remove more than the limit allows. A dry run reports the same.
 */
export function tooLarge(ctx: SweepContext, store: string, what: 'sessions' | 'records' | 'child workdirs', present: number, names: string[]): boolean {
  const limit = blastRadius({ present, remove: names.length, configured: ctx.config.maxDelete, unattended: ctx.opts.unattended === true, confirmLarge: ctx.opts.confirmLarge === true });
  if (!limit) return false;
  const shown = names.slice(0, 10).join(', ') + (names.length > 10 ? `, … (${names.length - 10} more)` : '');
  fail(ctx, {
    target: store,
    code: Codes.blastRadius,
    detail: `this sweep would remove ${names.length} of ${present} ${what} in ${store} (${shown}); ${limit}, so nothing was removed there. To proceed: check it with --dry-run, then run it once by hand (murmur-gc sweep), or add --confirm-large, or raise max_delete`,
  });
  return true;
}
