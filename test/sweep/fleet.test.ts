import { describe, expect, it } from 'vitest';
import { METRICS_TOP, OTHER_LABEL, fleetView, renderMetrics, topParts } from '../../src/sweep/fleet.js';
import type { SweepSummary } from '../../src/gchome/state.js';
import type { StoreSizes } from '../../src/sweep/stores.js';
import { parseProm, promValue } from '../helpers/prom.js';

const stores: StoreSizes = {
  sessions: { roots: [], sessions: 7, bytes: 7000 },
  records: {
    stores: 2,
    records: 3,
    bytes: 300,
    unreadable: 0,
    by_store: [
      { record: 'shey', records: 2, bytes: 200 },
      { record: 'ops', records: 1, bytes: 100 },
    ],
  },
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
    expect(
      promValue(m, 'murmur_gc_last_sweep_actions', { kind: 'remove_session', store: '/home/u/src/app/.murmur' }),
    ).toBe(2);
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
    expect([...m.keys()].sort()).toEqual([
      'murmur_gc_info',
      'murmur_gc_record_store_bytes',
      'murmur_gc_record_store_items',
      'murmur_gc_store_bytes',
      'murmur_gc_store_items',
    ]);
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

  it('per root and per record store: the largest by bytes each get a series, the rest one ".other" series, so the sums still hold', () => {
    const roots = Array.from({ length: METRICS_TOP + 5 }, (_, i) => ({
      root: `/home/u/p${String(i).padStart(2, '0')}/.murmur`,
      exists: true,
      sessions: i + 1,
      bytes: 1000 * (i + 1),
      unreadable: 0,
    }));
    const many: StoreSizes = {
      ...stores,
      sessions: {
        roots,
        sessions: roots.reduce((n, r) => n + r.sessions, 0),
        bytes: roots.reduce((n, r) => n + r.bytes, 0),
      },
    };
    const m = parseProm(renderMetrics(fleetView('1.2.3', summary, null, many)));
    const bytes = m.get('murmur_gc_root_bytes')!.samples;
    expect(bytes).toHaveLength(METRICS_TOP + 1);
    // the five smallest roots (p00…p04) are summed in the other series
    expect(promValue(m, 'murmur_gc_root_bytes', { root: '/home/u/p24/.murmur' })).toBe(25_000);
    expect(promValue(m, 'murmur_gc_root_bytes', { root: '/home/u/p04/.murmur' })).toBeUndefined();
    expect(promValue(m, 'murmur_gc_root_bytes', { root: OTHER_LABEL })).toBe(1000 + 2000 + 3000 + 4000 + 5000);
    expect(promValue(m, 'murmur_gc_root_items', { root: OTHER_LABEL })).toBe(1 + 2 + 3 + 4 + 5);
    expect(bytes.reduce((n, x) => n + x.value, 0)).toBe(promValue(m, 'murmur_gc_store_bytes', { store: 'sessions' }));
    expect(m.get('murmur_gc_root_items')!.samples.reduce((n, x) => n + x.value, 0)).toBe(
      promValue(m, 'murmur_gc_store_items', { store: 'sessions' }),
    );
    // record stores: every store while there are few, no other series
    expect(promValue(m, 'murmur_gc_record_store_bytes', { record_store: 'shey' })).toBe(200);
    expect(promValue(m, 'murmur_gc_record_store_items', { record_store: 'ops' })).toBe(1);
    expect(m.get('murmur_gc_record_store_bytes')!.samples.map((x) => x.labels['record_store'])).toEqual([
      'shey',
      'ops',
    ]);
  });

  it('topParts ranks by bytes, ties by name, and folds only past the bound', () => {
    const p = (name: string, bytes: number) => ({ name, items: 1, bytes });
    expect(topParts([p('b', 5), p('a', 5), p('c', 9)], 3)).toEqual([p('c', 9), p('a', 5), p('b', 5)]);
    expect(topParts([p('b', 5), p('a', 5), p('c', 9)], 1)).toEqual([
      p('c', 9),
      { name: OTHER_LABEL, items: 2, bytes: 10 },
    ]);
  });

  it('the next purge and the next max_age instant, in Unix seconds; left out when there is none', () => {
    const expiries = {
      purge: { at_ms: 1_796_500_000_500, items: 3, bytes: 724 << 20 },
      max_age: { at_ms: 1_796_600_000_000, store: 'records' as const, origin: 'shey', target: 'ctx' },
    };
    const m = parseProm(renderMetrics(fleetView('1.2.3', summary, null, stores, { expiries })));
    expect(promValue(m, 'murmur_gc_next_purge_timestamp_seconds')).toBe(1_796_500_000.5);
    expect(promValue(m, 'murmur_gc_next_purge_bytes')).toBe(724 << 20);
    expect(promValue(m, 'murmur_gc_next_purge_items')).toBe(3);
    expect(promValue(m, 'murmur_gc_next_max_age_timestamp_seconds')).toBe(1_796_600_000);
    // no label names the item: one series each, whatever comes next
    expect(m.get('murmur_gc_next_max_age_timestamp_seconds')!.samples[0]!.labels).toEqual({});
    const none = parseProm(
      renderMetrics(fleetView('1.2.3', summary, null, stores, { expiries: { purge: null, max_age: null } })),
    );
    expect([...none.keys()].filter((k) => k.startsWith('murmur_gc_next_'))).toEqual([]);
  });

  it('the checks catch a duplicated series (which the parser alone would silently collapse)', () => {
    expect(() => parseProm('# HELP a x\n# TYPE a gauge\na 1\na 2\n')).toThrow(/its own series/);
  });
});
