// Step "protect": reads the protection list (`<home>/gc/protected.json`, docs/protect.md) for the
// planners and the budget step.
// Guarantees: read-only, a real run and a dry run alike; a list that cannot be read is reported
// once (`protected_unreadable`, an error: exit 1, naming the file) and then every item of the
// runtime's stores counts as protected for this sweep — a damaged list never lets a sweep delete
// what it named. murmur-gc's own audit sessions are never protected.
import { Codes } from '../../errors.js';
import { readProtection } from '../../gchome/protect-file.js';
import { ProtectionSet } from '../../gchome/protect-list.js';
import { fail, type StepTally, type SweepContext } from './context.js';

export async function protectStep(ctx: SweepContext): Promise<StepTally> {
  if (!ctx.homeDir) return { items: 0, bytes: 0 };
  const read = await readProtection(ctx.homeDir);
  if (read.status === 'unreadable') {
    fail(ctx, {
      target: `${ctx.home}/gc/protected.json`,
      code: Codes.protectedUnreadable,
      detail: `${read.detail}; until it is fixed every session and record counts as protected (nothing is removed or truncated for any policy). murmur-gc protection ls says what is wrong; move the file away once checked`,
    });
    ctx.protection = new ProtectionSet([], true);
    return { items: 0, bytes: 0 };
  }
  ctx.protection = new ProtectionSet(read.items);
  return { items: read.items.length, bytes: 0 };
}
