// metrics.textfile: written after every real sweep (one-shot through the built CLI, and the
// daemon in process), atomically, valid Prometheus text; `status --json` carries the same numbers.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SweepReport } from '../../src/sweep/report.js';
import { loadConfig } from '../../src/config/load.js';
import { Daemon } from '../../src/daemon/daemon.js';
import type { FleetView } from '../../src/sweep/fleet.js';
import { gatherStatus } from '../../src/commands/status.js';
import { lastSuccessAfter } from '../../src/sweep/metrics.js';
import { recordOneShotSweep, type SweepSummary } from '../../src/gchome/state.js';
import type { TimerInfo } from '../../src/commands/timer.js';
import * as f from '../helpers/fixtures.js';
import { parseProm, promValue } from '../helpers/prom.js';

let tmp: string;
let home: string;
let root: string;
let promDir: string;
let prom: string;

beforeEach(() => {
  tmp = fs.realpathSync(f.tempDir('mgc-metrics'));
  home = path.join(tmp, 'home');
  root = path.join(tmp, 'app', '.murmur');
  promDir = path.join(tmp, 'textfile');
  prom = path.join(promDir, 'murmur-gc.prom');
  fs.mkdirSync(home, { mode: 0o700 });
  fs.mkdirSync(root, { recursive: true });
  fs.mkdirSync(promDir);
  for (const d of [5, 4, 3]) {
    const startMs = Date.now() - d * f.DAY;
    f.writeSession(root, { sessionId: f.idAt('ses_', startMs), startMs, end: true, files: { blob: 'x'.repeat(1000) } });
  }
  f.writeRecord(home, 'shey', 'ctx-a', { capsule: 'shey', messages: 30 });
});
afterEach(() => f.rmrf(tmp));

const yaml = () => `home: ${home}
sessions:
  - root: ${root}
    retain: { max_sessions: 1 }
records:
  - capsule: shey
    retain: { max_messages: 10 }
metrics:
  textfile: ${prom}
`;

/** The numbers of a metrics file, shaped like status --json's `metrics` (minus the trigger). */
function viewOf(
  text: string,
): Omit<FleetView, 'last_sweep'> & { last_sweep: Omit<NonNullable<FleetView['last_sweep']>, 'trigger'> } {
  const m = parseProm(text);
  const byLabel = (name: string, label: string) =>
    Object.fromEntries((m.get(name)?.samples ?? []).map((s) => [s.labels[label], s.value]));
  const actions: Record<string, Record<string, number>> = {};
  for (const s of m.get('murmur_gc_last_sweep_actions')?.samples ?? [])
    (actions[s.labels['kind']!] ??= {})[s.labels['store']!] = s.value;
  const ms = (name: string) => Math.round(promValue(m, name)! * 1000);
  const store = (k: string) => ({
    items: promValue(m, 'murmur_gc_store_items', { store: k })!,
    bytes: promValue(m, 'murmur_gc_store_bytes', { store: k })!,
  });
  const last = promValue(m, 'murmur_gc_last_success_timestamp_seconds');
  const parts = (family: string, label: string) =>
    (m.get(`${family}_bytes`)?.samples ?? []).map((s) => ({
      name: s.labels[label]!,
      items: promValue(m, `${family}_items`, { [label]: s.labels[label]! })!,
      bytes: s.value,
    }));
  const stamp = (name: string) => (m.has(name) ? ms(name) : null);
  return {
    version: m.get('murmur_gc_info')?.samples[0]?.labels['version'] ?? '',
    last_sweep: {
      outcome: Object.entries(byLabel('murmur_gc_last_sweep_outcome', 'outcome')).find(
        ([, v]) => v === 1,
      )![0] as NonNullable<FleetView['last_sweep']>['outcome'],
      started_ms: ms('murmur_gc_last_sweep_start_timestamp_seconds'),
      ended_ms: ms('murmur_gc_last_sweep_end_timestamp_seconds'),
      duration_ms: ms('murmur_gc_last_sweep_duration_seconds'),
      bytes_freed: promValue(m, 'murmur_gc_last_sweep_bytes_freed')!,
      messages_dropped: promValue(m, 'murmur_gc_last_sweep_messages_dropped')!,
      actions,
      skipped_by_code: byLabel('murmur_gc_last_sweep_skipped', 'code'),
      errors_by_code: byLabel('murmur_gc_last_sweep_errors', 'code'),
    },
    last_success_ms: last === undefined ? null : Math.round(last * 1000),
    stores: { sessions: store('sessions'), records: store('records'), audit: store('audit') },
    roots: parts('murmur_gc_root', 'root'),
    record_stores: parts('murmur_gc_record_store', 'record_store'),
    quarantine: m.has('murmur_gc_quarantine_bytes')
      ? { items: promValue(m, 'murmur_gc_quarantine_items')!, bytes: promValue(m, 'murmur_gc_quarantine_bytes')! }
      : null,
    next_purge: m.has('murmur_gc_next_purge_timestamp_seconds')
      ? {
          at_ms: stamp('murmur_gc_next_purge_timestamp_seconds')!,
          items: promValue(m, 'murmur_gc_next_purge_items')!,
          bytes: promValue(m, 'murmur_gc_next_purge_bytes')!,
        }
      : null,
    next_max_age_ms: stamp('murmur_gc_next_max_age_timestamp_seconds'),
    totals: m.has('murmur_gc_sweeps_total')
      ? {
          sweeps: byLabel('murmur_gc_sweeps_total', 'outcome') as NonNullable<FleetView['totals']>['sweeps'],
          bytes_freed: promValue(m, 'murmur_gc_freed_bytes_total')!,
        }
      : null,
    interval_secs: promValue(m, 'murmur_gc_schedule_interval_seconds') ?? null,
  };
}

describe('one-shot sweep', () => {
  it('writes the textfile after a real sweep: the report numbers, atomically, 0644, no temp left', () => {
    const cfg = f.writeConfig(tmp, yaml());
    const dry = f.runCli(['--config', cfg, '--dry-run', '--json'], tmp);
    expect(dry.status).toBe(0);
    expect(fs.existsSync(prom), 'a dry run writes no metrics').toBe(false);

    const r = f.runCli(['--config', cfg, '--json'], tmp);
    expect(r.status, r.stderr).toBe(0);
    const report = f.json<SweepReport>(r);
    expect(fs.readdirSync(promDir)).toEqual(['murmur-gc.prom']);
    expect(fs.statSync(prom).mode & 0o777).toBe(0o644);
    const v = viewOf(fs.readFileSync(prom, 'utf8'));
    expect(v.last_sweep.outcome).toBe('ok');
    // the command's own clock brackets the sweep's
    expect(v.last_sweep.started_ms).toBeLessThanOrEqual(report.started_ms);
    expect(v.last_sweep.ended_ms).toBeGreaterThanOrEqual(report.started_ms + report.duration_ms);
    expect(v.last_sweep.duration_ms).toBe(v.last_sweep.ended_ms - v.last_sweep.started_ms);
    expect(v.last_success_ms).toBe(v.last_sweep.ended_ms);
    expect(v.last_sweep.actions).toEqual({ remove_session: { [root]: 2 }, truncate_record: { shey: 1 } });
    expect(v.last_sweep.bytes_freed).toBe(report.bytes_freed);
    expect(v.last_sweep.messages_dropped).toBe(20);
    expect(v.stores.sessions).toEqual({ items: 1, bytes: expect.any(Number) as number });
    expect(v.stores.records.items).toBe(1);
    expect(v.stores.audit.items).toBe(1);
  });

  it('a metrics file that cannot be written is an error of the run (exit 1), and the sweep still happened', () => {
    const cfg = f.writeConfig(tmp, yaml().replace(prom, path.join(tmp, 'no-such-dir', 'm.prom')));
    const r = f.runCli(['--config', cfg, '--json'], tmp);
    expect(r.status).toBe(1);
    const report = f.json<SweepReport>(r);
    expect(report.errors.map((e) => e.code)).toEqual(['io_error']);
    expect(report.actions.some((a) => a.kind === 'remove_session')).toBe(true);
  });

  it('status --json carries the numbers of the file a one-shot sweep wrote', async () => {
    const cfg = f.writeConfig(tmp, yaml());
    expect(f.runCli(['--config', cfg], tmp).status).toBe(0);
    const fromFile = viewOf(fs.readFileSync(prom, 'utf8'));
    expect(fromFile.last_success_ms).toBe(fromFile.last_sweep.ended_ms);
    const config = await loadConfig({ configPath: cfg, env: { HOME: tmp }, cwd: tmp });
    const status = await gatherStatus(config, () => Promise.resolve({ state: 'not_installed' } as TimerInfo));
    const { trigger, ...sweep } = status.metrics.last_sweep!;
    expect(trigger).toBe('manual');
    expect(fromFile).toEqual({ ...status.metrics, last_sweep: sweep });
  });

  it('the timer\'s route, sweep --unattended, is recorded as trigger "unattended" (status, its metrics, the summary log line)', async () => {
    const cfg = f.writeConfig(tmp, yaml());
    // Under the timer stderr is the journal (JOURNAL_STREAM names it), where the summary line goes.
    const errFile = path.join(tmp, 'journal.log');
    const fd = fs.openSync(errFile, 'w');
    let r: ReturnType<typeof spawnSync>;
    try {
      const st = fs.fstatSync(fd, { bigint: true });
      r = spawnSync(process.execPath, [f.BIN, 'sweep', '--unattended', '--config', cfg], {
        env: f.cliEnv(tmp, { JOURNAL_STREAM: `${st.dev}:${st.ino}` }),
        stdio: ['ignore', 'pipe', fd],
        encoding: 'utf8',
      });
    } finally {
      fs.closeSync(fd);
    }
    const journal = fs.readFileSync(errFile, 'utf8');
    expect(r.status, journal).toBe(0);
    expect(journal).toContain('"trigger":"unattended"');
    const config = await loadConfig({ configPath: cfg, env: { HOME: tmp }, cwd: tmp });
    const status = await gatherStatus(config, () => Promise.resolve({ state: 'not_installed' } as TimerInfo));
    expect(status.last_sweep?.trigger).toBe('unattended');
    expect(status.metrics.last_sweep?.trigger).toBe('unattended');
    expect(f.runCli(['status', '--config', cfg], tmp).stdout).toMatch(/^last sweep: .*, ok \(unattended\)/m);
  });

  it('the quarantine gauge: what the undo window holds after a sweep, the same in status --json', async () => {
    const cfg = f.writeConfig(tmp, yaml() + 'quarantine: 24h\n');
    expect(f.runCli(['--config', cfg], tmp).status).toBe(0);
    const fromFile = viewOf(fs.readFileSync(prom, 'utf8'));
    // two sessions and one truncation's dropped lines are held
    expect(fromFile.quarantine).toEqual({ items: 3, bytes: expect.any(Number) as number });
    expect(fromFile.quarantine!.bytes).toBeGreaterThan(2000);
    const config = await loadConfig({ configPath: cfg, env: { HOME: tmp }, cwd: tmp });
    const status = await gatherStatus(config, () => Promise.resolve({ state: 'not_installed' } as TimerInfo));
    expect(status.metrics.quarantine).toEqual(fromFile.quarantine);
    expect(status.stores.quarantine).toMatchObject({ items: 3, bytes: fromFile.quarantine!.bytes });
    // the next purge: the three holds' windows end together, 24 h after the sweep
    expect(fromFile.next_purge).toEqual({
      at_ms: expect.any(Number) as number,
      items: 3,
      bytes: fromFile.quarantine!.bytes,
    });
    expect(fromFile.next_purge!.at_ms - fromFile.last_sweep.started_ms).toBeGreaterThanOrEqual(86_400_000);
    expect(fromFile.next_purge!.at_ms - fromFile.last_sweep.ended_ms).toBeLessThanOrEqual(86_400_000);
    expect(status.metrics.next_purge).toEqual(fromFile.next_purge);
    expect(status.next_expiries.purge).toEqual(fromFile.next_purge);
    // per root and per record store, as status measures them
    expect(fromFile.roots).toEqual([{ name: root, items: 1, bytes: status.stores.sessions.roots[0]!.bytes }]);
    expect(fromFile.record_stores).toEqual([{ name: 'shey', items: 1, bytes: status.stores.records.bytes }]);
  });

  it('counters add up over sweeps (kept in the state file) and the interval follows schedule, or metrics.interval', () => {
    const cfg = f.writeConfig(tmp, yaml());
    expect(f.runCli(['--config', cfg], tmp).status).toBe(0);
    const first = viewOf(fs.readFileSync(prom, 'utf8'));
    expect(first.totals).toEqual({
      sweeps: { ok: 1, errors: 0, busy: 0, failed: 0, aborted: 0 },
      bytes_freed: first.last_sweep.bytes_freed,
    });
    expect(first.totals!.bytes_freed).toBeGreaterThan(2000);
    expect(first.interval_secs, 'the default schedule: every 30 minutes').toBe(1800);
    expect(
      f.runCli(['--config', f.writeConfig(tmp, yaml().replace('metrics:', "schedule: '0 3 * * *'\nmetrics:"))], tmp)
        .status,
    ).toBe(0);
    const second = viewOf(fs.readFileSync(prom, 'utf8'));
    expect(second.interval_secs, "'0 3 * * *': daily").toBe(86_400);
    expect(second.totals!.sweeps).toEqual({ ok: 2, errors: 0, busy: 0, failed: 0, aborted: 0 });
    expect(second.totals!.bytes_freed).toBe(first.totals!.bytes_freed + second.last_sweep.bytes_freed);
    expect(f.runCli(['--config', f.writeConfig(tmp, yaml() + '  interval: 2h\n')], tmp).status).toBe(0);
    const third = viewOf(fs.readFileSync(prom, 'utf8'));
    expect(third.interval_secs).toBe(7200);
    expect(third.totals!.sweeps.ok).toBe(3);
  });

  it('a sweep that is not ok keeps the previous success time, read from the state file', async () => {
    const ok: SweepSummary = {
      trigger: 'manual',
      started_ms: 1000,
      ended_ms: 2000,
      duration_ms: 1000,
      outcome: 'ok',
      counts: {},
      bytes_freed: 0,
      skipped: 0,
      skipped_by_code: {},
      errors: 0,
      errors_by_code: {},
      audit: null,
    };
    expect(await lastSuccessAfter(home, { ...ok, outcome: 'errors' }), 'no state yet').toBeNull();
    await recordOneShotSweep(home, ok, 2000);
    expect(await lastSuccessAfter(home, { ...ok, outcome: 'errors', ended_ms: 9000 })).toBe(2000);
    await recordOneShotSweep(home, { ...ok, outcome: 'busy', ended_ms: 5000 }, 5000);
    expect(
      await lastSuccessAfter(home, { ...ok, outcome: 'failed', ended_ms: 9000 }),
      'a busy sweep is no success',
    ).toBe(2000);
    expect(await lastSuccessAfter(home, { ...ok, ended_ms: 9000 })).toBe(9000);
  });
});

describe('daemon', () => {
  it('writes the textfile after its sweep; status --json carries the same numbers', async () => {
    const config = await loadConfig({ configPath: f.writeConfig(tmp, yaml()), env: { HOME: tmp }, cwd: tmp });
    const run = { ...config, schedule: '0 0 1 1 *', runOnStart: true };
    const d = new Daemon(run, { log: pino({ level: 'silent' }), load: () => Promise.resolve(run) });
    const done = d.run();
    try {
      const t0 = Date.now();
      while (!fs.existsSync(prom) && Date.now() - t0 < 20_000) await new Promise((r) => setTimeout(r, 20));
    } finally {
      await d.shutdown('SIGTERM');
      await done;
    }
    const fromFile = viewOf(fs.readFileSync(prom, 'utf8'));
    const status = await gatherStatus(run, () => Promise.resolve({ state: 'not_installed' } as TimerInfo));
    const { trigger, ...sweep } = status.metrics.last_sweep!;
    expect(trigger).toBe('start');
    expect(fromFile).toEqual({ ...status.metrics, last_sweep: sweep });
    // the daemon's sweep is counted once, though the daemon wrote its state several times since
    expect(fromFile.totals).toEqual({
      sweeps: { ok: 1, errors: 0, busy: 0, failed: 0, aborted: 0 },
      bytes_freed: fromFile.last_sweep.bytes_freed,
    });
    expect(status.metrics.totals).toEqual(fromFile.totals);
    expect(fromFile.last_sweep.actions).toEqual({ remove_session: { [root]: 2 }, truncate_record: { shey: 1 } });
    expect(status.metrics.last_success_ms).toBe(status.last_sweep?.ended_ms);
  });
});
