// `config check --plan`: what the configured values would remove or hold now, per entry, from the
// dry run's own planning (runSweep with dryRun: the measure-only effects, src/sweep/effects.ts),
// where the blast-radius guard would stop an entry — in a sweep by hand, and in an unattended one
// (the daemon, the timer) — and a warning for a `max_bytes` below what the data its budget may not
// remove holds now.
// Guarantees: writes nothing and takes no lock (the dry run only probes it: a sweep at work makes
// the plan "not planned", never a wait); per entry exactly the items `murmur-gc --dry-run` would
// list for it (sessions by root, records by store: any reason, budgets included; removed and held
// apart); the guard's stops from the same planner (src/plan/fates.ts); counts, sizes, paths and
// store names only — never conversation content.
import { Codes, describeError } from '../errors.js';
import type { GcConfig } from '../config/types.js';
import type { ConfigWarning } from '../config/load.js';
import { createLogger } from '../log.js';
import { lstatPath } from '../fsx/safe-fs.js';
import { runSweep } from '../sweep/pipeline.js';
import { formatBytes } from '../sweep/report.js';
import type { StopInfo, SweepReport } from '../sweep/report.js';
import type { ConfigPlan, EntryStop, RecordsEntryPlan, SessionsEntryPlan } from '../schema/json-schemas.js';

/** The plan and its entries: `config check`'s schema's (src/schema/json-schemas.ts). */
export type { ConfigPlan, EntryStop, RecordsEntryPlan, SessionsEntryPlan };

/** Where a key of the configuration file is, for a warning (undefined: not known). */
export type KeyLocator = (file: string | undefined, keyPath: string) => { line: number; column: number } | undefined;

export async function planConfig(
  config: GcConfig,
  file: string | undefined,
  locate: KeyLocator,
): Promise<{ plan: ConfigPlan; warnings: ConfigWarning[] }> {
  const homeExists = (await lstatPath(config.home))?.isDirectory() === true;
  let report: SweepReport | undefined;
  let notPlanned: string | null = null;
  try {
    report = await runSweep({ config, dryRun: true, log: createLogger({ level: 'silent' }), alsoUnattended: true });
  } catch (err) {
    notPlanned = describeError(err);
  }
  const actions = report?.actions ?? [];
  const entries: ConfigPlan['entries'] = [];
  const stopOf = (list: StopInfo[] | undefined, kind: StopInfo['kind'], store: string): EntryStop | null => {
    const st = list?.find((x) => x.kind === kind && x.store === store);
    return st ? { limit: st.limit, would_take: st.would_take, present: st.present } : null;
  };
  for (const s of config.sessions) {
    const mine = actions.filter((a) => a.kind === 'remove_session' && a.root === s.root);
    entries.push({
      kind: 'sessions',
      origin: s.origin,
      root: s.root,
      root_exists: (await lstatPath(s.root)) !== undefined,
      sessions: mine.filter((a) => a.kind === 'remove_session' && a.held === undefined).length,
      held: mine.filter((a) => a.kind === 'remove_session' && a.held !== undefined).length,
      bytes: mine.reduce((n, a) => n + ('bytes' in a ? a.bytes : 0), 0),
      stopped: stopOf(report?.stopped, 'sessions', s.root),
      stopped_unattended: stopOf(report?.stopped_unattended, 'sessions', s.root),
    });
  }
  for (const r of config.records) {
    let records = 0;
    let held = 0;
    let truncated = 0;
    let dropped = 0;
    let bytes = 0;
    for (const a of actions) {
      if (a.kind === 'remove_record' && a.record === r.store) {
        if (a.held) held++;
        else records++;
        bytes += a.bytes;
      } else if (a.kind === 'truncate_record' && a.record === r.store) {
        truncated++;
        dropped += a.messages_dropped;
        bytes += a.bytes;
      }
    }
    entries.push({
      kind: 'records',
      origin: r.origin,
      store: r.store,
      records,
      held,
      truncated,
      messages_dropped: dropped,
      bytes,
      stopped: stopOf(report?.stopped, 'records', r.store),
      stopped_unattended: stopOf(report?.stopped_unattended, 'records', r.store),
    });
  }
  return {
    plan: { home: config.home, home_exists: homeExists, not_planned: notPlanned, entries },
    warnings: report ? budgetWarnings(config, report, file, locate) : [],
  };
}

/**
 * A `max_bytes` below what the items its budget may not remove (live sessions, contexts in use,
 * protected or foreign items…) hold now can never be met: every sweep reports `budget_unmet`.
 */
function budgetWarnings(
  config: GcConfig,
  report: SweepReport,
  file: string | undefined,
  locate: KeyLocator,
): ConfigWarning[] {
  const out: ConfigWarning[] = [];
  for (const u of report.budget?.unmet ?? []) {
    if (u.reason !== 'max_bytes' || u.store === undefined) continue;
    const entry = u.store.startsWith('sessions:')
      ? config.sessions.find((s) => `sessions:${s.root}` === u.store)
      : config.records.find((r) => `records:${r.store}` === u.store);
    if (entry?.maxBytes === undefined) continue;
    const heldBytes = Object.values(u.held).reduce((n, h) => n + h.bytes, 0);
    if (heldBytes <= entry.maxBytes) continue;
    const what = 'root' in entry ? `sessions root ${entry.root}` : `record store ${entry.store}`;
    const held = Object.entries(u.held)
      .map(([code, h]) => `${code} ${h.items} (${formatBytes(h.bytes)})`)
      .join(', ');
    const keyPath = `${entry.origin}.max_bytes`;
    const at = locate(file, keyPath);
    out.push({
      code: Codes.configDestructive,
      file,
      keyPath,
      message: `${formatBytes(entry.maxBytes)} is below what ${what} holds now in items its budget may not remove (${formatBytes(heldBytes)}: ${held}): it cannot be met while they stay (every sweep reports budget_unmet)`,
      ...(at ? { line: at.line, column: at.column } : {}),
    });
  }
  return out;
}
