// The fleet's view of one host: the numbers `murmur-gc status --json` shows under `metrics` and
// the Prometheus textfile carries — built by one function from one summary, so they cannot
// disagree. Pure: no fs, no clock.
//
// Metric names (all gauges; node_exporter textfile-collector conventions, seconds and bytes):
//   murmur_gc_info{version}                               1
//   murmur_gc_last_sweep_start_timestamp_seconds          when the last sweep started
//   murmur_gc_last_sweep_end_timestamp_seconds            when it ended
//   murmur_gc_last_sweep_duration_seconds
//   murmur_gc_last_sweep_outcome{outcome}                 1 for its outcome, 0 for the others
//   murmur_gc_last_success_timestamp_seconds              end of the last sweep with outcome ok
//   murmur_gc_last_sweep_actions{kind,store}              actions by kind and store
//   murmur_gc_last_sweep_bytes_freed
//   murmur_gc_last_sweep_messages_dropped
//   murmur_gc_last_sweep_skipped{code}                    skipped items by stable code
//   murmur_gc_last_sweep_errors{code}                     errors by stable code
//   murmur_gc_store_bytes{store}, murmur_gc_store_items{store}   sessions / records / audit
//   murmur_gc_root_bytes{root}, murmur_gc_root_items{root}       each sessions root
//   murmur_gc_record_store_bytes{record_store}, …_items{…}       each record store
//     (bounded: the METRICS_TOP largest by bytes, the rest summed in one series labelled
//     OTHER_LABEL, which no root path or record store name can be; docs/metrics.md)
//   murmur_gc_quarantine_bytes, murmur_gc_quarantine_items      what the undo window holds
//   murmur_gc_next_purge_timestamp_seconds, …_bytes, …_items    the undo window's next purge
//   murmur_gc_next_max_age_timestamp_seconds                    the next item max_age condemns
// For the alert rules (contrib/prometheus/murmur-gc.rules.yml):
//   murmur_gc_sweeps_total{outcome}                       counter: sweeps recorded, by outcome
//   murmur_gc_freed_bytes_total                           counter: bytes those sweeps freed
//   murmur_gc_schedule_interval_seconds                   gauge: the cadence sweeps should keep
// A series whose value is unknown (no sweep yet, no success yet) is left out, never written as 0.
import type { NextExpiries, StoreSizes } from './stores.js';
import type { SweepOutcome, SweepSummary, SweepTotals } from '../gchome/state.js';
import type { FleetView, PartSize } from '../schema/json-schemas.js';

/** The fleet view is `status --json`'s `metrics`; its type is that schema's (src/schema/json-schemas.ts). */
export type { FleetView, PartSize };

export const OUTCOMES: readonly SweepOutcome[] = ['ok', 'errors', 'busy', 'failed', 'aborted'];

/** How many sessions roots, and how many record stores, get a series of their own. */
export const METRICS_TOP = 20;
/** The label of the series summing the rest: roots are absolute paths, and a store name never starts with a dot. */
export const OTHER_LABEL = '.other';

/** The METRICS_TOP largest by bytes (ties by name), then one OTHER_LABEL entry summing the rest, if any. */
export function topParts(parts: readonly PartSize[], top = METRICS_TOP): PartSize[] {
  const ranked = [...parts].sort((a, b) => b.bytes - a.bytes || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  if (ranked.length <= top) return ranked;
  const rest = ranked.slice(top);
  return [
    ...ranked.slice(0, top),
    { name: OTHER_LABEL, items: rest.reduce((n, p) => n + p.items, 0), bytes: rest.reduce((n, p) => n + p.bytes, 0) },
  ];
}

export interface FleetHistory {
  totals?: SweepTotals | undefined;
  intervalSecs?: number | null;
  expiries?: NextExpiries | undefined;
}

export function fleetView(
  version: string,
  last: SweepSummary | null,
  lastSuccessMs: number | null,
  stores: StoreSizes,
  history: FleetHistory = {},
): FleetView {
  return {
    version,
    last_sweep: last
      ? {
          trigger: last.trigger,
          outcome: last.outcome,
          started_ms: last.started_ms,
          ended_ms: last.ended_ms,
          duration_ms: last.duration_ms,
          bytes_freed: last.bytes_freed,
          messages_dropped: last.messages_dropped ?? 0,
          actions: last.actions_by_store ?? {},
          skipped_by_code: last.skipped_by_code,
          errors_by_code: last.errors_by_code,
        }
      : null,
    last_success_ms: lastSuccessMs,
    stores: {
      sessions: { items: stores.sessions.sessions, bytes: stores.sessions.bytes },
      records: { items: stores.records.records, bytes: stores.records.bytes },
      audit: { items: stores.audit.sessions, bytes: stores.audit.bytes },
    },
    roots: topParts(stores.sessions.roots.map((r) => ({ name: r.root, items: r.sessions, bytes: r.bytes }))),
    record_stores: topParts(stores.records.by_store.map((r) => ({ name: r.record, items: r.records, bytes: r.bytes }))),
    quarantine: stores.quarantine ? { items: stores.quarantine.items, bytes: stores.quarantine.bytes } : null,
    next_purge: history.expiries?.purge ?? null,
    next_max_age_ms: history.expiries?.max_age?.at_ms ?? null,
    totals: history.totals ?? null,
    interval_secs: history.intervalSecs ?? null,
  };
}

/** A label value in the text format: backslash, double quote and newline escaped. */
export function labelValue(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

const secs = (ms: number): string => String(ms / 1000);

/** The Prometheus text exposition (format 0.0.4) of a fleet view. */
export function renderMetrics(v: FleetView): string {
  const out: string[] = [];
  const family = (
    name: string,
    help: string,
    samples: [Record<string, string>, string][],
    type: 'gauge' | 'counter' = 'gauge',
  ): void => {
    if (samples.length === 0) return;
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [labels, value] of samples) {
      const l = Object.entries(labels).map(([k, x]) => `${k}="${labelValue(x)}"`);
      out.push(`${name}${l.length ? `{${l.join(',')}}` : ''} ${value}`);
    }
  };
  const byCode = (m: Record<string, number>): [Record<string, string>, string][] =>
    Object.entries(m)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([code, n]) => [{ code }, String(n)]);

  family('murmur_gc_info', 'murmur-gc version (always 1).', [[{ version: v.version }, '1']]);
  const s = v.last_sweep;
  if (s) {
    family('murmur_gc_last_sweep_start_timestamp_seconds', 'When the last sweep started (Unix time).', [
      [{}, secs(s.started_ms)],
    ]);
    family('murmur_gc_last_sweep_end_timestamp_seconds', 'When the last sweep ended (Unix time).', [
      [{}, secs(s.ended_ms)],
    ]);
    family('murmur_gc_last_sweep_duration_seconds', 'How long the last sweep took.', [[{}, secs(s.duration_ms)]]);
    family(
      'murmur_gc_last_sweep_outcome',
      'Outcome of the last sweep: 1 for its outcome, 0 for the others.',
      OUTCOMES.map((o) => [{ outcome: o }, o === s.outcome ? '1' : '0']),
    );
  }
  if (v.last_success_ms !== null) {
    family('murmur_gc_last_success_timestamp_seconds', 'When the last sweep with outcome ok ended (Unix time).', [
      [{}, secs(v.last_success_ms)],
    ]);
  }
  if (s) {
    const actions: [Record<string, string>, string][] = [];
    for (const kind of Object.keys(s.actions).sort()) {
      const stores = s.actions[kind] ?? {};
      for (const store of Object.keys(stores).sort()) actions.push([{ kind, store }, String(stores[store])]);
    }
    family(
      'murmur_gc_last_sweep_actions',
      'Actions of the last sweep by kind and store (sessions root, record store, or home).',
      actions,
    );
    family('murmur_gc_last_sweep_bytes_freed', 'Bytes the last sweep freed.', [[{}, String(s.bytes_freed)]]);
    family('murmur_gc_last_sweep_messages_dropped', 'Messages the last sweep dropped by truncation.', [
      [{}, String(s.messages_dropped)],
    ]);
    family(
      'murmur_gc_last_sweep_skipped',
      'Items the last sweep left alone, by stable code.',
      byCode(s.skipped_by_code),
    );
    family('murmur_gc_last_sweep_errors', 'Errors of the last sweep, by stable code.', byCode(s.errors_by_code));
  }
  const stores = (['sessions', 'records', 'audit'] as const).map((k) => [k, v.stores[k]] as const);
  family(
    'murmur_gc_store_bytes',
    'Bytes held by each store (sessions in the configured roots, conversation records, audit traces).',
    stores.map(([k, x]) => [{ store: k }, String(x.bytes)]),
  );
  family(
    'murmur_gc_store_items',
    'Sessions, records or audit traces in each store.',
    stores.map(([k, x]) => [{ store: k }, String(x.items)]),
  );
  family(
    'murmur_gc_root_bytes',
    `Bytes of the sessions in each configured sessions root (the ${METRICS_TOP} largest; the rest summed as root="${OTHER_LABEL}").`,
    v.roots.map((r) => [{ root: r.name }, String(r.bytes)]),
  );
  family(
    'murmur_gc_root_items',
    `Sessions in each configured sessions root (the same roots as murmur_gc_root_bytes).`,
    v.roots.map((r) => [{ root: r.name }, String(r.items)]),
  );
  family(
    'murmur_gc_record_store_bytes',
    `Bytes of the conversation records of each record store (the ${METRICS_TOP} largest; the rest summed as record_store="${OTHER_LABEL}").`,
    v.record_stores.map((r) => [{ record_store: r.name }, String(r.bytes)]),
  );
  family(
    'murmur_gc_record_store_items',
    'Conversation records of each record store (the same stores as murmur_gc_record_store_bytes).',
    v.record_stores.map((r) => [{ record_store: r.name }, String(r.items)]),
  );
  if (v.quarantine) {
    family(
      'murmur_gc_quarantine_bytes',
      'Bytes the undo window (quarantine) holds: sessions, contexts and dropped lines not yet deleted for good.',
      [[{}, String(v.quarantine.bytes)]],
    );
    family('murmur_gc_quarantine_items', 'Items the undo window (quarantine) holds.', [
      [{}, String(v.quarantine.items)],
    ]);
  }
  const np = v.next_purge;
  if (np) {
    family(
      'murmur_gc_next_purge_timestamp_seconds',
      "When the undo window's next purge is due (Unix time): the first hold's window ends; in the past when it is overdue.",
      [[{}, secs(np.at_ms)]],
    );
    family(
      'murmur_gc_next_purge_bytes',
      'Bytes that purge deletes for good (every hold whose window has ended by then).',
      [[{}, String(np.bytes)]],
    );
    family('murmur_gc_next_purge_items', 'Held items that purge deletes for good.', [[{}, String(np.items)]]);
  }
  if (v.next_max_age_ms !== null) {
    family(
      'murmur_gc_next_max_age_timestamp_seconds',
      'When a max_age policy next condemns an item nothing condemns now (Unix time).',
      [[{}, secs(v.next_max_age_ms)]],
    );
  }
  // ---- for the alert rules: counters kept in the state file, and the cadence -------------------
  if (v.totals) {
    const t = v.totals;
    family(
      'murmur_gc_sweeps_total',
      'Sweeps recorded on this home, by outcome (kept in <home>/gc/state.json; a new state file starts again from 0).',
      OUTCOMES.map((o) => [{ outcome: o }, String(t.sweeps[o])]),
      'counter',
    );
    family(
      'murmur_gc_freed_bytes_total',
      'Bytes freed by the sweeps recorded on this home (kept in <home>/gc/state.json).',
      [[{}, String(t.bytes_freed)]],
      'counter',
    );
  }
  if (v.interval_secs !== null) {
    family(
      'murmur_gc_schedule_interval_seconds',
      'The cadence sweeps should keep: metrics.interval, else the gap between two runs of schedule.',
      [[{}, String(v.interval_secs)]],
    );
  }
  return out.join('\n') + '\n';
}
