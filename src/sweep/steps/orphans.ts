// Step "orphans": child workdirs beside a `W/.murmur` root that no session's trace there names
// (their parent is gone: the runtime's own prune, an older murmur-gc, by hand) — reported per root
// (count, allocated bytes, oldest), and removed only under that root's `children: { max_age }`
// (the choice is src/plan/workdir.ts planOrphans; docs/design.md §9a).
// Guarantees:
// - Without a policy nothing is removed; with one, only a real directory of ours older than the
//   policy by its most recent visible write, with every session inside finished and nothing live,
//   and only while every session of the root has a readable trace, and every held one too
//   (including entries named like holds that murmur-gc does not vouch for: they only ever keep).
// - Each removal is intended in the audit log first (`parent` = W, `target` =
//   `.murmur/children/<name>`), goes through fsx/remove.ts (identity re-checked, descriptor-
//   relative, links never followed, mounts never crossed) after its liveness is judged again
//   through the open `children/` descriptor (steps/beside.ts recheckChild) and it is looked at
//   again once in trash (childStillDue: a session started or written since puts it back), and is a target of a `retention` line
//   with reason `children_max_age`. The blast-radius guard applies per root. Orphans are removed
//   at once: the undo window holds sessions, and an orphan has none.
// - A dry run measures and lists; nothing changes. The disk-changing call is the one in `act`.
import { Codes, codeOf, describeError, isAbort } from '../../errors.js';
import { keptName, measureDir, trashName } from '../../fsx/remove.js';
import { Dir, identityOf, sameIdentity, type Identity } from '../../fsx/safe-fs.js';
import { fingerprintOf, placing, type Placed } from '../../gchome/registry.js';
import { childEntryName, planOrphans, type OrphanVerdict } from '../../plan/workdir.js';
import { CHILDREN_DIR, WORKDIR_ROOT_NAME, type BesideScan } from '../../runtime/workdir-scan.js';
import type { SessionView } from '../world.js';
import { acted, fail, skip, type SessionsRootPlan, type StepTally, type SweepContext } from './context.js';
import { tooLarge } from './guard.js';
import { childStillDue, recheckChild } from './beside.js';

/** The orphans of one root, judged (pure inputs gathered from the scan). */
export function orphansOf(
  ctx: SweepContext,
  beside: BesideScan,
  views: readonly SessionView[],
  maxAgeSecs: number | undefined,
  heldTied: ReadonlySet<string> = new Set(),
  heldUncertain?: string,
): OrphanVerdict[] {
  const tied = new Set<string>(heldTied);
  // a held session whose trace could not be read may name any child
  let uncertain = heldUncertain !== undefined;
  for (const v of views) {
    const t = v.scan.trace?.ok ? v.scan.trace.summary : undefined;
    if (!t) {
      uncertain = true;
      continue;
    }
    for (const d of t.delegations ?? []) {
      const n = childEntryName(d.childWorkdir, beside.workdir);
      if (n !== undefined) tied.add(n);
    }
  }
  return planOrphans(
    beside.children?.entries ?? [],
    tied,
    maxAgeSecs === undefined ? undefined : maxAgeSecs * 1000,
    uncertain,
    {
      uid: ctx.uid,
      nowMs: ctx.nowMs,
      liveGraceMs: ctx.config.liveGraceSecs * 1000,
      running: (s) => ctx.world.running.get(s) ?? 'none',
    },
  );
}

export async function orphansStep(ctx: SweepContext): Promise<StepTally> {
  const tally = { items: 0, bytes: 0 };
  for (const p of ctx.sessionPlans) {
    if (p.input.isAuditRoot || !p.beside?.children || !p.scan.identity) continue;
    const verdicts = orphansOf(ctx, p.beside, p.views, p.input.childrenMaxAgeSecs, p.heldTied, p.heldUncertain);
    if (verdicts.length === 0) continue;
    await rootOrphans(ctx, p, p.beside, verdicts, tally);
  }
  return tally;
}

async function rootOrphans(
  ctx: SweepContext,
  p: SessionsRootPlan,
  beside: BesideScan,
  verdicts: OrphanVerdict[],
  tally: { items: number; bytes: number },
): Promise<void> {
  const entries = new Map((beside.children?.entries ?? []).map((c) => [c.name, c]));
  let root: Dir | undefined;
  let children: Dir | undefined;
  try {
    root = await Dir.open(p.input.root);
    if (!p.scan.identity || !sameIdentity(root.identity, p.scan.identity)) {
      skip(ctx, {
        target: p.input.root,
        code: Codes.changedSinceScan,
        detail: `${p.input.root} was replaced since it was scanned; its orphaned child workdirs are left for the next sweep`,
      });
      return;
    }
    children = await root.openDir(CHILDREN_DIR, beside.children?.identity);
    let bytes = 0;
    const sizes = new Map<string, number>();
    for (const v of verdicts) {
      const e = entries.get(v.name);
      const b =
        e?.kind === 'dir'
          ? await measureDir(children, v.name, e.identity).then(
              (m) => m.bytes,
              () => 0,
            )
          : 0;
      sizes.set(v.name, b);
      bytes += b;
    }
    const going = verdicts.filter((v) => v.remove);
    const blocked =
      going.length > 0 &&
      tooLarge(
        ctx,
        children.path,
        'child workdirs',
        entries.size,
        going.map((v) => v.name),
      );
    let removed = 0;
    if (!blocked && going.length > 0) {
      // their trash and kept-aside names in children/, recorded before any is made (src/gchome/registry.ts)
      const items: Placed[] = [];
      for (const v of going) {
        const e = entries.get(v.name);
        const st = e ? await children.lstat(v.name) : undefined;
        if (!e || !st?.isDirectory() || !sameIdentity(identityOf(st), e.identity)) continue;
        const fp = fingerprintOf(st);
        items.push(
          placing(children.path, trashName(ctx.auditId, v.name), 'trash', fp, ctx.auditId),
          placing(children.path, keptName(ctx.auditId, v.name), 'kept', fp, ctx.auditId),
        );
      }
      await ctx.fx.place(items);
    }
    if (!blocked) {
      for (const v of going) {
        ctx.signal?.throwIfAborted();
        const e = entries.get(v.name);
        if (!e) continue;
        const rel = `${WORKDIR_ROOT_NAME}/${CHILDREN_DIR}/${v.name}`;
        const path = children.display(v.name);
        try {
          const b = await act(ctx, children, v.name, e.identity, beside.workdir, rel);
          acted(
            ctx,
            {
              kind: 'remove_orphan_workdir',
              root: p.input.root,
              target: v.name,
              path,
              reason: 'children_max_age',
              bytes: b,
              age_ms: Math.max(0, ctx.nowMs - v.lastWriteMs),
            },
            'debug',
            {},
            null,
          );
          removed++;
          tally.items++;
          tally.bytes += b;
        } catch (err) {
          if (isAbort(err)) throw err;
          const code = codeOf(err);
          (code === Codes.changedSinceScan || code === Codes.childKept ? skip : fail)(ctx, {
            target: path,
            code,
            detail: `${path}: ${describeError(err)}`,
          });
        }
      }
    }
    (ctx.report.orphans ??= []).push({
      root: p.input.root,
      count: verdicts.length,
      bytes,
      oldest_ms: Math.min(...verdicts.map((v) => v.lastWriteMs)),
      removed,
      policy_secs: p.input.childrenMaxAgeSecs ?? null,
    });
  } catch (err) {
    if (isAbort(err)) throw err;
    fail(ctx, {
      target: `${p.input.root}/${CHILDREN_DIR}`,
      code: codeOf(err),
      detail: `${p.input.root}/${CHILDREN_DIR}: ${describeError(err)}`,
    });
  } finally {
    await children?.close();
    await root?.close();
  }
}

/** The only disk-changing call of this step (through the run's effects: a dry run measures). */
async function act(
  ctx: SweepContext,
  children: Dir,
  name: string,
  identity: Identity,
  workdir: string,
  rel: string,
): Promise<number> {
  const retention = { store: 'sessions', reason: 'children_max_age', target: rel, parent: workdir } as const;
  return ctx.fx.audited(
    { kind: 'remove_orphan_workdir', ...retention },
    async () => {
      // judged again now, and looked at again once in trash (a session may start in between)
      const verify = childStillDue(
        ctx,
        await recheckChild(ctx, children, name, identity, true),
        children.display(name),
      );
      return ctx.fx.remove(children, name, identity, { verify, ...(ctx.signal ? { signal: ctx.signal } : {}) });
    },
    () => ({ retention }),
  );
}
