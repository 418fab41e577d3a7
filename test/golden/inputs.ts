// Fixed inputs for the golden files: sweep reports (real and dry run), a status document, the
// audit traces of a history. Every id, time and path is fixed, so a rendering is the same on
// every machine; the shapes are the ones the sweep, `status` and `history` produce.
import type { SweepReport } from '../../src/sweep/report.js';
import type { StatusDoc } from '../../src/commands/status.js';
import type { SweepSummary } from '../../src/gchome/state.js';

/** 2026-11-30 20:00:00 UTC: the "now" every golden rendering is made at. */
export const NOW = Date.UTC(2026, 10, 30, 20, 0, 0);
export const OPERATOR_HOME = '/home/op';
export const HOME = '/home/op/.murmur';
export const ROOT = '/home/op/.murmur/sessions';
export const FAR_ROOT = '/srv/agents/build-farm/workspaces/nightly-integration-suite/checkout/.murmur/sessions';

/** A uuid-v7-shaped id minted at `ms`, its random part made of `n`. */
export function fixedId(prefix: string, ms: number, n: number): string {
  return prefix + Math.floor(ms).toString(16).padStart(12, '0') + '7' + n.toString(16).padStart(19, 'a');
}

const MIN = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const ses = (n: number, ago = 40 * DAY) => fixedId('ses_', NOW - ago - n * MIN, n);

/** A real sweep: removals in two roots, held items, a truncation, a lost command, skips and errors. */
export function realReport(): SweepReport {
  const started = NOW - 2 * MIN;
  const held = { until_ms: started + 24 * HOUR, path: '' };
  return {
    dry_run: false,
    home: HOME,
    home_exists: true,
    started_ms: started,
    duration_ms: 5_012,
    actions: [
      { kind: 'remove_session', root: ROOT, target: ses(1), reason: 'max_age', bytes: 812_000 },
      { kind: 'remove_session', root: ROOT, target: ses(2), reason: 'max_age', bytes: 40_960 },
      {
        kind: 'remove_session',
        root: FAR_ROOT,
        target: ses(3, 3 * DAY),
        reason: 'max_sessions',
        bytes: 2_310_000,
        held: { ...held, path: `${FAR_ROOT}/.murmur-gc-held.${ses(3, 3 * DAY)}` },
      },
      {
        kind: 'remove_record',
        record: 'shey',
        target: 'ctx_support-billing-2026-q3',
        reason: 'max_age',
        path: `${HOME}/conversations/shey/ctx_support-billing-2026-q3/conversation.jsonl`,
        bytes: 120_400,
      },
      {
        kind: 'truncate_record',
        record: 'shey',
        target: 'ctx_triage',
        reason: 'max_messages',
        messages_dropped: 1_200,
        kept: 500,
        path: `${HOME}/conversations/shey/ctx_triage/conversation.jsonl`,
        bytes: 3_400_000,
        held: { ...held, path: `${HOME}/gc/quarantine/trunc.ctx_triage` },
      },
      {
        kind: 'truncate_record',
        record: 'shey',
        target: 'ctx_long',
        reason: 'max_messages',
        messages_dropped: 3,
        kept: 500,
        path: `${HOME}/conversations/shey/ctx_long/conversation.jsonl`,
        bytes: 900,
      },
      {
        kind: 'shell_lost',
        target: ses(9, 2 * DAY),
        root: FAR_ROOT,
        work_id: 'wrk_01',
        binary: '/usr/bin/make',
        binary_bytes: 13,
        command: 'make -j4 test',
        command_bytes: 13,
        detached_at_ms: NOW - 2 * DAY,
        task_id: fixedId('tsk_', NOW - 2 * MIN, 7),
      },
      {
        kind: 'shell_lost',
        target: ses(9, 2 * DAY),
        root: FAR_ROOT,
        work_id: 'wrk_02',
        binary: '/usr/bin/sleep',
        binary_bytes: 14,
        command: 'sleep 600',
        command_bytes: 9,
        detached_at_ms: NOW - 2 * DAY + 5000,
        task_id: fixedId('tsk_', NOW - 2 * MIN, 7),
      },
      {
        kind: 'purge_quarantine',
        store: 'sessions',
        origin: ROOT,
        target: ses(20, 60 * DAY),
        held_kind: 'session',
        reason: 'expired',
        path: `${ROOT}/.murmur-gc-held.x`,
        bytes: 64_000,
      },
      { kind: 'chmod', path: `${HOME}/conversations/shey/ctx_triage/conversation.jsonl`, from: '0644', to: '0600' },
      {
        kind: 'repair_torn_tail',
        record: 'shey',
        target: 'ctx_torn',
        path: `${HOME}/conversations/shey/ctx_torn/conversation.jsonl`,
      },
      {
        kind: 'remove_debris',
        path: `${HOME}/conversations/shey/.murmur-gc-tmp.ctx_triage`,
        code: 'process_interrupted',
        detail: 'a temporary file of a killed truncation',
        bytes: 4096,
      },
    ],
    skipped: [
      { target: `${ROOT}/${ses(30, 0)}`, code: 'session_live', detail: 'its trace was written in the last 60 s' },
      { target: `${FAR_ROOT}/${ses(31, 0)}`, code: 'session_live', detail: 'its process is running (pid 4242)' },
      { target: `${HOME}/conversations/shey/ctx_open`, code: 'record_open', detail: 'a running session holds it' },
    ],
    errors: [{ target: `${FAR_ROOT}/${ses(40)}`, code: 'io_error', detail: 'EACCES: permission denied, rmdir' }],
    audit: fixedId('ses_', NOW - 2 * MIN + 800, 99),
    bytes_freed: 812_000 + 40_960 + 2_310_000 + 120_400 + 3_400_000 + 900 + 64_000 + 4096,
    inventory: {
      sessions_roots: 2,
      sessions: 490,
      records: 50,
      traces_read: 490,
      traces_cached: 0,
      records_counted: 50,
      records_count_cached: 0,
    },
    config: '/home/op/.config/murmur-gc/config.yaml',
    steps: [
      { step: 'lock', items: 0, bytes: 0, ms: 2 },
      { step: 'scan_sessions', items: 490, bytes: 0, ms: 2_900 },
      { step: 'scan_records', items: 50, bytes: 0, ms: 200 },
      { step: 'remove', items: 4, bytes: 3_283_360, ms: 1_200 },
    ],
    budget: {
      stores: [
        {
          store: ROOT,
          label: `sessions root ${ROOT}`,
          bytes_before: 9_000_000_000,
          bytes_after: 6_000_000_000,
          max_bytes: 8_000_000_000,
          removed: 1,
          bytes_freed: 3_000_000_000,
          held: 0,
          held_purged: 0,
        },
      ],
      keep_free: null,
      unmet: [],
    },
    quarantine: { window_secs: 86_400, held: 2, held_bytes: 2_310_000 + 3_400_000, purged: 1, purged_bytes: 64_000 },
  };
}

/** The same plan as a dry run. */
export function dryReport(): SweepReport {
  const r = realReport();
  return { ...r, dry_run: true, audit: null, errors: [] };
}

/** A sweep with nothing to do. */
export function cleanReport(): SweepReport {
  return {
    dry_run: false,
    home: HOME,
    home_exists: true,
    started_ms: NOW - MIN,
    duration_ms: 412,
    actions: [],
    skipped: [],
    errors: [],
    audit: null,
    bytes_freed: 0,
    inventory: {
      sessions_roots: 1,
      sessions: 12,
      records: 3,
      traces_read: 0,
      traces_cached: 12,
      records_counted: 0,
      records_count_cached: 3,
    },
    config: null,
  };
}

export function lastSweep(): SweepSummary {
  return {
    trigger: 'manual',
    started_ms: NOW - 2 * MIN,
    ended_ms: NOW - 2 * MIN + 5_012,
    duration_ms: 5_012,
    outcome: 'errors',
    counts: { remove_session: 3, remove_record: 1, truncate_record: 2, shell_lost: 2 },
    bytes_freed: 6_752_356,
    skipped: 3,
    skipped_by_code: { session_live: 2, record_open: 1 },
    errors: 1,
    errors_by_code: { io_error: 1 },
    audit: fixedId('ses_', NOW - 2 * MIN + 800, 99),
    actions_by_store: { remove_session: { [ROOT]: 2, [FAR_ROOT]: 1 } },
    messages_dropped: 1_203,
  };
}

/** `status` of a home whose daemon is not running, swept by the timer. */
export function statusDoc(): StatusDoc {
  const last = lastSweep();
  return {
    home: HOME,
    home_exists: true,
    state_file: `${HOME}/gc/state.json`,
    state: 'ok',
    daemon: {
      running: false,
      why: 'no daemon has recorded itself in the state file',
      pid: null,
      start_time: null,
      started_ms: null,
      stopped_ms: null,
      config: null,
      schedule: null,
    },
    current_sweep: null,
    last_sweep: last,
    next_run_ms: null,
    timer: { state: 'active', next_run_ms: NOW + 28 * MIN },
    stores: {
      sessions: {
        roots: [
          { root: ROOT, exists: true, sessions: 389, bytes: 1_200_000_000, unreadable: 0 },
          { root: FAR_ROOT, exists: true, sessions: 101, bytes: 340_000_000, unreadable: 2 },
          { root: '/srv/agents/old/.murmur/sessions', exists: false, sessions: 0, bytes: 0, unreadable: 0 },
        ],
        sessions: 490,
        bytes: 1_540_000_000,
      },
      records: {
        stores: 2,
        records: 50,
        bytes: 88_000_000,
        unreadable: 0,
        by_store: [
          { record: 'shey', records: 42, bytes: 80_000_000 },
          { record: 'ops', records: 8, bytes: 8_000_000 },
        ],
      },
      audit: { sessions: 31, bytes: 250_000, unreadable: 0 },
      quarantine: { items: 2, bytes: 5_710_000, unreadable: 0 },
      kept: { items: 0, bytes: 0, oldest_ms: null, paths: [] },
    },
    next_expiries: {
      purge: { at_ms: NOW + 12 * HOUR, items: 1, bytes: 3_100_000 },
      // ses(7, 27 days ago) under max_age: 30d: due the first ms past its 30 days
      max_age: {
        at_ms: NOW - 27 * DAY - 7 * MIN + 30 * DAY + 1,
        store: 'sessions',
        origin: ROOT,
        target: ses(7, 27 * DAY),
      },
    },
    metrics: {
      version: '0.0.0-golden',
      last_sweep: null,
      last_success_ms: NOW - DAY,
      stores: {
        sessions: { items: 490, bytes: 1_540_000_000 },
        records: { items: 50, bytes: 88_000_000 },
        audit: { items: 31, bytes: 250_000 },
      },
      roots: [{ name: ROOT, items: 389, bytes: 1_180_000_000 }],
      record_stores: [
        { name: 'shey', items: 42, bytes: 80_000_000 },
        { name: 'ops', items: 8, bytes: 8_000_000 },
      ],
      quarantine: { items: 2, bytes: 5_710_000 },
      next_purge: { at_ms: NOW + 12 * HOUR, items: 1, bytes: 3_100_000 },
      next_max_age_ms: null,
      totals: null,
      interval_secs: 1800,
    },
    protection: { file: `${HOME}/gc/protected.json`, items: 1, unreadable: null },
    config: null,
  };
}
