// Which of the entries named like murmur-gc's own in a directory a capsule can write are
// murmur-gc's (the trust rule: docs/design.md §4a). A capsule can create `.murmur-gc-quarantine.*`,
// `.murmur-gc-trash.*` and `.murmur-gc-kept.*` in its own sessions root and in its children/; only
// those the registry (src/gchome/registry.ts) vouches for — by name, device, inode and birth time
// — are holds, trash or kept-aside directories of murmur-gc.
// Guarantees:
// - Run once per sweep, right after the scan and before anything is planned: every other entry of
//   that shape is taken out of the scan (never held into, purged, restored, finished or retried:
//   the planner and every step see only what is vouched for) and reported once per directory and
//   sweep, `unverified_gc_entry` (a skip: it is no failure of the sweep), naming how many and the
//   first few, and what to do about them by hand.
// - `<home>/gc` (the audit root) and everything under the home are murmur-gc's by where they are
//   (a capsule cannot write the home): never filtered.
// - A registry left unsettled by a killed run is settled first (a real run's upkeep), so a record
//   whose rename never happened vouches for nothing.
import { Codes, describeError } from '../../errors.js';
import { Registry, type Fingerprint } from '../../gchome/registry.js';
import { CHILDREN_DIR } from '../../runtime/workdir-scan.js';
import type { Debris } from '../../runtime/inventory.js';
import { skip, type SweepContext } from './context.js';

/** How many names of one directory a report shows. */
const SHOWN = 5;

/** Load the registry, settle it when a killed run left it so, and apply it to the scan. */
export async function applyTrust(ctx: SweepContext): Promise<void> {
  ctx.registry = await Registry.load(ctx.homeDir);
  const home = ctx.homeDir;
  if (home && ctx.registry.needsSettling) {
    await ctx.fx
      .upkeep(() => ctx.registry.settle(home))
      .catch((err: unknown) =>
        ctx.log.warn({ code: Codes.ioError }, `${ctx.home}/gc/registry.jsonl not settled: ${describeError(err)}`),
      );
  }
  if (ctx.registry.unreadable !== undefined)
    ctx.log.warn(
      { code: Codes.ioError },
      `${ctx.registry.unreadable}: no hold, trash or kept-aside directory in a sessions root is taken for murmur-gc's this sweep`,
    );
  for (const { input, scan, beside } of ctx.world.rootScans) {
    if (!scan.exists || input.isAuditRoot) continue;
    const notOurs = new Map<string, string[]>();
    const note = (dir: string, name: string) => {
      const names = notOurs.get(dir);
      if (names) names.push(name);
      else notOurs.set(dir, [name]);
    };
    scan.held = scan.held.filter((h) => {
      const ok = ctx.registry.vouch(h.entry, { identity: h.identity, birth: h.birth })?.kind === 'hold';
      if (!ok) note(input.root, h.entry);
      return ok;
    });
    scan.debris = scan.debris.filter((d) => vouched(ctx, d, input.root, note));
    if (beside) beside.debris = beside.debris.filter((d) => vouched(ctx, d, `${input.root}/${CHILDREN_DIR}`, note));
    for (const [dir, names] of notOurs) reportNotOurs(ctx, dir, names);
  }
}

function vouched(ctx: SweepContext, d: Debris, dir: string, note: (dir: string, name: string) => void): boolean {
  if (d.kind !== 'trash_dir' && d.kind !== 'kept_dir') return true;
  const name = d.ref.chain[d.ref.chain.length - 1] ?? '';
  const fp: Fingerprint = { identity: d.identity, birth: d.birth ?? 0n };
  const p = ctx.registry.vouch(name, fp);
  const ok = p !== undefined && p.kind === (d.kind === 'trash_dir' ? 'trash' : 'kept');
  if (!ok) note(dir, name);
  return ok;
}

/** One skip per directory and sweep for what is named like murmur-gc's and is not. */
export function reportNotOurs(ctx: SweepContext, dir: string, names: readonly string[]): void {
  const sorted = [...names].sort();
  const shown =
    sorted.slice(0, SHOWN).join(', ') + (sorted.length > SHOWN ? `, … (${sorted.length - SHOWN} more)` : '');
  skip(ctx, {
    target: dir,
    code: Codes.unverifiedGcEntry,
    detail: `${sorted.length === 1 ? '1 entry' : `${sorted.length} entries`} in ${dir} named like murmur-gc's own (${shown}) ${sorted.length === 1 ? 'is' : 'are'} not in its registry: not murmur-gc's, so never held into, purged, restored or removed. A hold made by an older murmur-gc is one of them: put it back by hand (mv <root>/.murmur-gc-quarantine.<until>.<ses> <root>/<ses>) for the policy to judge again, or delete it by hand (docs/design.md §4a)`,
  });
}
