// Step "scan records": the conversation records under <home>/conversations (header; message
// count and UTF-8 check of every record a policy may act on — the runtime cannot read one that
// is not UTF-8, so it is never owned), leftovers of interrupted runs, and the modes of the home's
// private entries.
// Every record store the configuration names becomes one store of the sweep's fates
// (ctx.recordPlans, in configuration order, with the policies naming it).
// Guarantees: read-only apart from the count cache's in-memory state; problems reported per item.
import { scanHomeModes, scanRecords, type Debris } from '../../runtime/inventory.js';
import { planMode } from '../../plan/modes.js';
import { problem, type SweepContext, type StepTally } from './context.js';
import { definedOnly } from '../../defined.js';

const DEBRIS_AGE_MS = 60 * 60 * 1000;

/**
 * `<home>/running` leftovers of killed runtimes: a staging file older than an hour (its pid is
 * probed by the debris step), a record whose process is gone (probed again there).
 */
function runningDebris(ctx: SweepContext): Debris[] {
  if (!ctx.homeDir) return [];
  const out: Debris[] = [];
  for (const d of ctx.world.runningDebris) {
    if (d.kind === 'running_temp' && ctx.nowMs - d.mtimeMs < DEBRIS_AGE_MS) continue;
    out.push({
      kind: d.kind,
      ref: { anchor: ctx.home, chain: ['running', d.name] },
      path: `${ctx.home}/running/${d.name}`,
      identity: d.identity,
      pid: d.pid,
      ...definedOnly({ startTime: d.startTime }),
      detail:
        d.kind === 'running_temp'
          ? `a running record a killed runtime was writing (pid ${d.pid})`
          : `a running record whose process (pid ${d.pid}) is gone`,
    });
  }
  return out;
}

export async function scanRecordsStep(ctx: SweepContext): Promise<StepTally> {
  const { homeDir, config, report } = ctx;
  const countOwned = new Set<string>();
  for (const p of config.records)
    if (p.retain?.maxMessages !== undefined || p.retain?.maxAgeSecs !== undefined)
      countOwned.add(`${p.store}\0${p.capsule}`);
  ctx.records = homeDir
    ? await scanRecords(homeDir, ctx.home, {
        countOwned,
        collectModes: true,
        // the plan step acts on (or reports) only these; the rest are already right
        keepMode: (e) => planMode(e, ctx.uid) !== undefined,
        nowMs: ctx.nowMs,
        debrisAgeMs: DEBRIS_AGE_MS,
        isPidAlive: () => false, // decided by the debris step with a real probe (async)
        ...(ctx.cache ? { countCache: ctx.cache } : {}),
        ...(ctx.signal ? { signal: ctx.signal } : {}),
      })
    : undefined;
  // Every lookup of what the cache file held is done: it is closed (what is kept stays in memory).
  ctx.cache?.close();
  ctx.records?.problems.forEach((p) => problem(ctx, p));
  report.inventory.records = ctx.records?.contexts.length ?? 0;
  // One store of the sweep's fates per record store the configuration names, in its order.
  for (const p of config.records) {
    const s = ctx.recordPlans.find((x) => x.store === p.store);
    if (s) s.policies.push(p);
    else
      ctx.recordPlans.push({
        store: p.store,
        key: `records:${p.store}`,
        policies: [p],
        contexts: (ctx.records?.contexts ?? []).filter((c) => c.store === p.store),
      });
  }
  report.inventory.records_counted = ctx.records?.counted ?? 0;
  report.inventory.records_count_cached = ctx.records?.countsCached ?? 0;
  ctx.debris = [
    ...ctx.world.rootScans.flatMap((r) => [...r.scan.debris, ...(r.beside?.debris ?? [])]),
    ...(ctx.records?.debris ?? []),
    ...runningDebris(ctx),
  ];

  if (homeDir) {
    const hm = await scanHomeModes(homeDir, ctx.home);
    hm.problems.forEach((p) => problem(ctx, p));
    ctx.modes = [...hm.modes, ...(ctx.records?.modes ?? [])];
  }
  const bytes = (ctx.records?.contexts ?? []).reduce((n, c) => n + c.file.size, 0);
  return { items: report.inventory.records, bytes };
}
