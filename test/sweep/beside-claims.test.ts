// besidePlanFor from a root's claims gathered once (besideClaims) chooses exactly what the
// per-call rule chooses: a child or `wrk_` log of a leaving session goes only when no session
// that stays names it and every staying session's trace was read, items in the planner's order
// of the leaving sessions, held parents first. Checked against that rule written out here over
// seeded roots (shared and unshared children and logs, unreadable traces, names not in the root,
// held parents), for many sets of leaving sessions answered from one set of claims, as the
// measure step asks per session.
import { describe, expect, it } from 'vitest';
import { besideClaims, besidePlanFor } from '../../src/sweep/steps/beside.js';
import { childEntryName, planBeside, type BesideParent } from '../../src/plan/workdir.js';
import type { BesideScan, ChildEntry, LogEntry } from '../../src/runtime/workdir-scan.js';
import type { SessionView } from '../../src/sweep/world.js';
import type { SweepContext } from '../../src/sweep/steps/context.js';
import { prng } from '../helpers/fixtures.js';

const W = '/w';
const identity = { dev: 1n, ino: 1n };

function world(seed: number) {
  const r = prng(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;
  const childNames = Array.from({ length: 12 }, (_, i) => `c${i}`);
  const workIds = Array.from({ length: 12 }, (_, i) => `wrk_${i.toString(16).padStart(32, '0')}`);
  const children: ChildEntry[] = childNames
    .filter(() => r() < 0.8)
    .map((name) => ({
      name,
      kind: r() < 0.9 ? 'dir' : 'symlink',
      identity,
      uid: r() < 0.95 ? 0 : 1000,
      mtimeMs: 0,
      ...(r() < 0.7 ? { completion: 'succeeded' } : {}),
      sessions: [],
    }));
  const logs: LogEntry[] = workIds
    .filter(() => r() < 0.8)
    .map((workId) => ({ name: `${workId}.log`, workId, kind: 'file', identity, uid: 0, bytes: 10 }));
  const views: SessionView[] = Array.from({ length: 2 + Math.floor(r() * 10) }, (_, i) => {
    const name = `ses_${i}`;
    const readable = r() < 0.85;
    const delegations = Array.from({ length: Math.floor(r() * 3) }, (_, k) => ({
      delegationId: `d${i}_${k}`,
      childWorkdir: r() < 0.9 ? `.murmur/children/${pick(childNames)}` : '../elsewhere',
      ended: r() < 0.8,
    }));
    const ids = Array.from({ length: Math.floor(r() * 3) }, () => pick(workIds));
    return {
      root: `${W}/.murmur`,
      scan: {
        name,
        trace: readable ? { ok: true, summary: { delegations, workIds: ids } } : { ok: false },
      },
      liveness: 'dead',
    } as unknown as SessionView;
  });
  const beside = {
    workdir: W,
    children: { identity, entries: children },
    logs: { identity, wrk: logs, other: { count: 0, bytes: 0 } },
    problems: [],
    debris: [],
  } as BesideScan;
  return { r, views, beside };
}

/** The choice as the rule states it, from the views for each call. */
function byTheRule(ctx: SweepContext, beside: BesideScan, views: SessionView[], names: string[], held: BesideParent[]) {
  const going = new Set(names);
  const claimedChildren = new Set<string>();
  const claimedWorkIds = new Set<string>();
  const parents: BesideParent[] = [...held];
  let uncertain: string | undefined;
  for (const v of views) {
    const t = v.scan.trace?.ok ? v.scan.trace.summary : undefined;
    if (!t) {
      if (!going.has(v.scan.name)) uncertain ??= `session ${v.scan.name}`;
      continue;
    }
    if (going.has(v.scan.name)) {
      parents.push({ session: v.scan.name, delegations: t.delegations ?? [], workIds: t.workIds ?? [] });
      continue;
    }
    for (const d of t.delegations ?? []) {
      const n = childEntryName(d.childWorkdir, beside.workdir);
      if (n !== undefined) claimedChildren.add(n);
    }
    for (const w of t.workIds ?? []) claimedWorkIds.add(w);
  }
  parents.sort((a, b) => names.indexOf(a.session) - names.indexOf(b.session));
  return planBeside(
    parents,
    {
      workdir: beside.workdir,
      children: beside.children?.entries ?? [],
      logs: beside.logs?.wrk ?? [],
      claimedChildren,
      claimedWorkIds,
      ...(uncertain !== undefined ? { uncertain } : {}),
    },
    { uid: ctx.uid, nowMs: ctx.nowMs, liveGraceMs: ctx.config.liveGraceSecs * 1000, running: () => 'none' },
  );
}

describe('besidePlanFor from claims gathered once', () => {
  const ctx = {
    uid: 0,
    nowMs: 1_800_000_000_000,
    config: { liveGraceSecs: 600 },
    world: { running: new Map() },
  } as unknown as SweepContext;

  it('chooses what the rule chooses, over 400 seeded roots and many leaving sets each', () => {
    let removals = 0;
    for (let seed = 1; seed <= 400; seed++) {
      const { r, views, beside } = world(seed);
      const claims = besideClaims(beside, views);
      const all = views.map((v) => v.scan.name);
      for (let q = 0; q < 8; q++) {
        const names = all.filter(() => r() < 0.4);
        if (r() < 0.2) names.push('ses_not_in_root');
        if (r() < 0.3) names.reverse();
        const held: BesideParent[] =
          r() < 0.2 ? [{ session: 'ses_held', delegations: [], workIds: [beside.logs!.wrk[0]?.workId ?? 'x'] }] : [];
        const want = byTheRule(ctx, beside, views, names, held);
        expect(besidePlanFor(ctx, beside, views, names, held, claims)).toEqual(want);
        expect(besidePlanFor(ctx, beside, views, names, held)).toEqual(want);
        removals += want.remove.length;
      }
      for (const name of all)
        expect(besidePlanFor(ctx, beside, views, [name], [], claims)).toEqual(
          byTheRule(ctx, beside, views, [name], []),
        );
    }
    expect(removals).toBeGreaterThan(100);
  });
});
