// `metrics.textfile`: after every sweep (daemon or one-shot; not a dry run), the host's fleet view
// (src/sweep/fleet.ts) is written as Prometheus text to the configured file, atomically
// (src/fsx/textfile.ts). Store sizes are measured by the same code `status` uses; the counters are
// the state file's `totals` as they stand once the sweep is recorded there (callers record first).
// Guarantees: the file always describes one complete sweep; a failed write leaves the previous
// file in place and is reported to the caller (the sweep itself is not undone).
import type { GcConfig } from '../config/types.js';
import { writeTextfile } from '../fsx/textfile.js';
import { VERSION } from '../version.js';
import { fleetView, renderMetrics, type FleetView } from './fleet.js';
import { sweepIntervalSecs } from './interval.js';
import { readStateFile, type SweepSummary } from '../gchome/state.js';
import { surveyStores } from './stores.js';

/** Writes the metrics file of `config` (which must have one); returns the view written. */
export async function writeMetrics(
  config: GcConfig,
  summary: SweepSummary,
  lastSuccessMs: number | null,
): Promise<FleetView> {
  const textfile = config.metrics?.textfile;
  if (textfile === undefined) throw new Error('writeMetrics: no metrics.textfile configured');
  const read = await readStateFile(config.home);
  const totals = read.status === 'ok' ? read.state.totals : undefined;
  const intervalSecs = await sweepIntervalSecs(config, summary.ended_ms);
  const survey = await surveyStores(config, summary.ended_ms);
  const view = fleetView(VERSION, summary, lastSuccessMs, survey.sizes, {
    totals,
    intervalSecs,
    expiries: survey.expiries,
  });
  await writeTextfile(textfile, renderMetrics(view));
  return view;
}

/** The last success after `summary`: its own end when it succeeded, else what the state file says. */
export async function lastSuccessAfter(home: string, summary: SweepSummary): Promise<number | null> {
  if (summary.outcome === 'ok') return summary.ended_ms;
  const read = await readStateFile(home);
  return read.status === 'ok' ? (read.state.last_success_ms ?? null) : null;
}
