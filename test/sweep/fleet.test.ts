import { describe, expect, it } from 'vitest';
import { fleetView, renderMetrics } from '../../src/sweep/fleet.js';
import type { SweepSummary } from '../../src/gchome/state.js';
import type { StoreSizes } from '../../src/sweep/stores.js';
import { parseProm, promValue } from '../helpers/prom.js';

const stores: StoreSizes = {
  sessions: { roots: [], sessions: 7, bytes: 7000 },
  records: { stores: 2, records: 3, bytes: 300, unreadable: 0, by_store: [{ record: 'shey', records: 2, bytes: 200 }, { record: 'ops', records: 1, bytes: 100 }] },
  audit: { sessions: 1, bytes: 10, unreadable: 0 },
};

const summary: SweepSummary = {
  trigger: 'schedule',
  started_ms: 1_796_000_000_000,
  ended_ms: 1_796_000_001_250,
  duration_ms: 1250,
  outcome: 'errors',
  counts: { remove_session: 2, truncate_record: 1 },
  bytes_freed: 4096,
  skipped: 2,
  skipped_by_code: { live_session: 2 },
  errors: 1,
  errors_by_code: { io_error: 1 },
  audit: 'ses_x',
  actions_by_store: { remove_session: { '/home/u/src/app/.murmur': 2 }, truncate_record: { 'we"ird\\store': 1 } },
  messages_dropped: 40,
};

describe('metrics text', () => {
  it('is valid Prometheus text format carrying every number of the view', () => {
    const m = parseProm(renderMetrics(fleetView('1.2.3', summary, 1_795_999_000_000, stores)));
    expect(promValue(m, 'murmur_gc_info', { version: '1.2.3' })).toBe(1);
    expect(promValue(m, 'murmur_gc_last_sweep_start_timestamp_seconds')).toBe(1_796_000_000);
    expect(promValue(m, 'murmur_gc_last_sweep_end_timestamp_seconds')).toBe(1_796_000_001.25);
    expect(promValue(m, 'murmur_gc_last_sweep_duration_seconds')).toBe(1.25);
    expect(m.get('murmur_gc_last_sweep_outcome')?.samples.map((s) => [s.labels['outcome'], s.value])).toEqual([
      ['ok', 0],
      ['errors', 1],
      ['busy', 0],
      ['failed', 0],
      ['aborted', 0],
    ]);
    expect(promValue(m, 'murmur_gc_last_success_timestamp_seconds')).toBe(1_795_999_000);
    expect(promValue(m, 'murmur_gc_last_sweep_actions', { kind: 'remove_session', store: '/home/u/src/app/.murmur' })).toBe(2);
    // label values are escaped and read back intact
    expect(promValue(m, 'murmur_gc_last_sweep_actions', { kind: 'truncate_record', store: 'we"ird\\store' })).toBe(1);
    expect(promValue(m, 'murmur_gc_last_sweep_bytes_freed')).toBe(4096);
    expect(promValue(m, 'murmur_gc_last_sweep_messages_dropped')).toBe(40);
    expect(promValue(m, 'murmur_gc_last_sweep_skipped', { code: 'live_session' })).toBe(2);
    expect(promValue(m, 'murmur_gc_last_sweep_errors', { code: 'io_error' })).toBe(1);
    expect(promValue(m, 'murmur_gc_store_bytes', { store: 'sessions' })).toBe(7000);
    expect(promValue(m, 'murmur_gc_store_items', { store: 'records' })).toBe(3);
    expect(promValue(m, 'murmur_gc_store_items', { store: 'audit' })).toBe(1);
    for (const f of m.values()) expect(f.type).toBe('GAUGE');
  });

  it('leaves out what is unknown instead of writing zeros: no sweep yet, no success yet', () => {
    const m = parseProm(renderMetrics(fleetView('1.2.3', null, null, stores)));
    expect([...m.keys()].sort()).toEqual(['murmur_gc_info', 'murmur_gc_store_bytes', 'murmur_gc_store_items']);
  });

  it('the counters are typed counter, named *_total, every outcome present; the interval is a gauge', () => {
    const totals = { sweeps: { ok: 40, errors: 2, busy: 1, failed: 3, aborted: 0 }, bytes_freed: 123_456 };
    const m = parseProm(renderMetrics(fleetView('1.2.3', summary, null, stores, { totals, intervalSecs: 1800 })));
    expect(m.get('murmur_gc_sweeps_total')?.type).toBe('COUNTER');
    expect(m.get('murmur_gc_sweeps_total')?.samples.map((s) => [s.labels['outcome'], s.value])).toEqual([
      ['ok', 40],
      ['errors', 2],
      ['busy', 1],
      ['failed', 3],
      ['aborted', 0],
    ]);
    expect(m.get('murmur_gc_freed_bytes_total')?.type).toBe('COUNTER');
    expect(promValue(m, 'murmur_gc_freed_bytes_total')).toBe(123_456);
    expect(m.get('murmur_gc_schedule_interval_seconds')?.type).toBe('GAUGE');
    expect(promValue(m, 'murmur_gc_schedule_interval_seconds')).toBe(1800);
    const counters = [...m.entries()].filter(([, f]) => f.type === 'COUNTER').map(([n]) => n);
    for (const n of counters) expect(n).toMatch(/_total$/);
  });

  it('the checks catch a duplicated series (which the parser alone would silently collapse)', () => {
    expect(() => parseProm('# HELP a x\n# TYPE a gauge\na 1\na 2\n')).toThrow(/its own series/);
  });
});
