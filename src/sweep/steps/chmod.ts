// Step "chmod": private directories back to 0700, private files to 0600 (docs/design.md §1, §4).
// Guarantees: each entry is changed through ctx.fx.chmod — a descriptor of the entry scanned
// (same dev/ino), or for an entry its owner cannot open (mode 0000) an O_PATH descriptor of the
// same non-link entry, never a name followed; a dry run changes nothing.
import { codeOf, describeError } from '../../errors.js';
import { formatMode } from '../../fsx/safe-fs.js';
import { acted, fail, type SweepContext, type StepTally } from './context.js';

export async function chmodStep(ctx: SweepContext): Promise<StepTally> {
  let items = 0;
  for (const { entry, action } of ctx.chmods) {
    try {
      await ctx.fx.chmod(entry, action.to);
      const [from, to] = [formatMode(action.from), formatMode(action.to)];
      acted(ctx, { kind: 'chmod', path: action.path, from, to }, 'debug', { path: action.path, from, to });
      items++;
    } catch (err) {
      fail(ctx, { target: action.path, code: codeOf(err), detail: `${action.path}: ${describeError(err)}` });
    }
  }
  return { items, bytes: 0 };
}
