// The daemon state file: lenient parsing (corrupt → ignored, wrong fields dropped), round trip.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  advanceClockReference,
  emptyState,
  parseState,
  readStateFile,
  recordOneShotSweep,
  stateText,
  writeStateFile,
  type DaemonState,
  type SweepSummary,
} from '../../src/gchome/state.js';
import { gcTempPid, removeDeadGcTemps } from '../../src/gchome/leftovers.js';
import * as f from '../helpers/fixtures.js';

const full: DaemonState = {
  version: 1,
  updated_ms: 1_700_000_000_000,
  daemon: {
    pid: 4242,
    start_time: '98765',
    started_ms: 1_699_999_000_000,
    stopped_ms: null,
    config: '/etc/x.yaml',
    schedule: '*/30 * * * *',
  },
  next_run_ms: 1_700_000_060_000,
  current_sweep: null,
  last_sweep: {
    trigger: 'schedule',
    started_ms: 1_699_999_990_000,
    ended_ms: 1_699_999_991_000,
    duration_ms: 1000,
    outcome: 'errors',
    counts: { remove_session: 3, chmod: 1 },
    bytes_freed: 12345,
    skipped: 2,
    skipped_by_code: { live_session: 2 },
    errors: 1,
    errors_by_code: { io_error: 1 },
    audit: 'ses_0190aaaaaaaa7aaaaaaaaaaaaaaaaaaa',
    message: 'x',
  },
};

describe('parseState', () => {
  it('round-trips what the daemon writes', () => {
    expect(parseState(stateText(full))).toEqual(full);
    expect(parseState(stateText(emptyState(5)))).toEqual(emptyState(5));
  });

  it('treats non-JSON, non-objects and other versions as corrupt', () => {
    for (const t of ['', '{', 'null', '[]', '"x"', '{"version":2}', '{"daemon":{}}', '{"version":1,"daemon":']) {
      expect(parseState(t), t).toBeUndefined();
    }
  });

  it('drops fields of the wrong shape instead of trusting them', () => {
    const s = parseState(
      JSON.stringify({
        version: 1,
        daemon: { pid: 'nope', started_ms: 1 },
        next_run_ms: 'soon',
        current_sweep: { trigger: 'start' },
        last_sweep: { started_ms: 1, ended_ms: 2, outcome: 'weird' },
      }),
    );
    expect(s).toEqual({
      version: 1,
      updated_ms: 0,
      daemon: null,
      next_run_ms: null,
      current_sweep: null,
      last_sweep: null,
    });
    const t = parseState(
      JSON.stringify({
        version: 1,
        daemon: { pid: 7, started_ms: 1, start_time: 5, stopped_ms: 'x' },
        last_sweep: { started_ms: 1, ended_ms: 4, outcome: 'busy', counts: { a: 1, b: -1, c: 'x' }, audit: 3 },
      }),
    );
    expect(t?.daemon).toEqual({
      pid: 7,
      start_time: null,
      started_ms: 1,
      stopped_ms: null,
      config: null,
      schedule: '',
    });
    expect(t?.last_sweep).toMatchObject({
      outcome: 'busy',
      duration_ms: 3,
      counts: { a: 1 },
      audit: null,
      trigger: 'schedule',
    });
  });
});

describe('state file on disk', () => {
  let T: string;
  beforeEach(() => {
    T = f.tempDir('state');
  });
  afterEach(() => f.rmrf(T));

  it('is not written (and no gc dir created) when the home does not exist', async () => {
    const home = path.join(T, '.murmur');
    expect(await writeStateFile(home, full)).toBe(false);
    expect(fs.existsSync(home)).toBe(false);
    expect(await readStateFile(home)).toEqual({ status: 'no_home' });
  });

  it('is written 0600 in a 0700 gc dir, atomically, and read back; a corrupt one reads as corrupt', async () => {
    const home = path.join(T, '.murmur');
    fs.mkdirSync(home, { mode: 0o700 });
    expect(await readStateFile(home)).toEqual({ status: 'missing' });
    expect(await writeStateFile(home, full)).toBe(true);
    expect(fs.statSync(path.join(home, 'gc')).mode & 0o777).toBe(0o700);
    expect(fs.statSync(path.join(home, 'gc', 'state.json')).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(path.join(home, 'gc'))).toEqual(['state.json']);
    // the first write of a sweep counts it (see the totals test below)
    expect(await readStateFile(home)).toEqual({
      status: 'ok',
      state: { ...full, totals: { sweeps: { ok: 0, errors: 1, busy: 0, failed: 0, aborted: 0 }, bytes_freed: 12345 } },
    });
    fs.writeFileSync(path.join(home, 'gc', 'state.json'), 'garbage');
    expect((await readStateFile(home)).status).toBe('corrupt');
    // a symlinked state file is never followed
    fs.rmSync(path.join(home, 'gc', 'state.json'));
    fs.writeFileSync(path.join(T, 'elsewhere.json'), stateText(full));
    fs.symlinkSync(path.join(T, 'elsewhere.json'), path.join(home, 'gc', 'state.json'));
    expect((await readStateFile(home)).status).toBe('corrupt');
  });

  it('the clock reference only moves forward: a write without it (the daemon) or with a lower one keeps the one on disk', async () => {
    const home = path.join(T, '.murmur');
    fs.mkdirSync(home, { mode: 0o700 });
    const ref = async () => {
      const r = await readStateFile(home);
      return r.status === 'ok' ? r.state.clock_reference_ms : 'unread';
    };
    expect(await advanceClockReference(home, 5_000)).toBe(true);
    expect(await ref()).toBe(5_000);
    await writeStateFile(home, full); // the daemon's own state: no reference
    expect(await ref()).toBe(5_000);
    expect(await readStateFile(home)).toMatchObject({ status: 'ok', state: { last_sweep: full.last_sweep } });
    await advanceClockReference(home, 4_000); // a clock stepped back
    expect(await ref()).toBe(5_000);
    await writeStateFile(home, { ...full, clock_reference_ms: 1 });
    expect(await ref()).toBe(5_000);
    await advanceClockReference(home, 9_000);
    expect(await ref()).toBe(9_000);
    expect(parseState(JSON.stringify({ version: 1, clock_reference_ms: 'later' }))?.clock_reference_ms).toBeUndefined();
  });
});

describe('totals (the textfile counters)', () => {
  let T: string;
  beforeEach(() => {
    T = f.tempDir('state-totals');
  });
  afterEach(() => f.rmrf(T));

  const sweep = (endedMs: number, outcome: SweepSummary['outcome'], bytes: number): SweepSummary => ({
    ...full.last_sweep!,
    trigger: 'manual',
    started_ms: endedMs - 100,
    ended_ms: endedMs,
    outcome,
    bytes_freed: bytes,
  });

  it('count each sweep once, in the write that first records it; the daemon rewriting its state adds nothing; never lowered', async () => {
    const home = path.join(T, '.murmur');
    fs.mkdirSync(home, { mode: 0o700 });
    const totals = async () => {
      const r = await readStateFile(home);
      return r.status === 'ok' ? r.state.totals : 'unread';
    };
    expect(await recordOneShotSweep(home, sweep(10_000, 'ok', 100), 10_000)).toBe(true);
    expect(await totals()).toEqual({ sweeps: { ok: 1, errors: 0, busy: 0, failed: 0, aborted: 0 }, bytes_freed: 100 });
    // the daemon's own writes (current sweep, next run, stop) carry the same last_sweep: not counted again
    const daemonView: DaemonState = { ...full, last_sweep: sweep(10_000, 'ok', 100) };
    for (let i = 0; i < 3; i++) await writeStateFile(home, { ...daemonView, updated_ms: 20_000 + i });
    expect(await totals()).toEqual({ sweeps: { ok: 1, errors: 0, busy: 0, failed: 0, aborted: 0 }, bytes_freed: 100 });
    // ... nor does a write whose memory holds no totals or lower ones lower the file's
    await writeStateFile(home, {
      ...daemonView,
      totals: { sweeps: { ok: 0, errors: 0, busy: 0, failed: 0, aborted: 0 }, bytes_freed: 0 },
    });
    expect(await totals()).toEqual({ sweeps: { ok: 1, errors: 0, busy: 0, failed: 0, aborted: 0 }, bytes_freed: 100 });
    // newer sweeps, each outcome on its own counter
    await recordOneShotSweep(home, sweep(30_000, 'failed', 0), 30_000);
    await writeStateFile(home, { ...daemonView, last_sweep: sweep(40_000, 'errors', 50) });
    await recordOneShotSweep(home, sweep(50_000, 'busy', 0), 50_000);
    expect(await totals()).toEqual({ sweeps: { ok: 1, errors: 1, busy: 1, failed: 1, aborted: 0 }, bytes_freed: 150 });
    // an older summary arriving late is not recorded (the newer one stays) and not counted
    await recordOneShotSweep(home, sweep(45_000, 'ok', 999), 60_000);
    expect(await totals()).toEqual({ sweeps: { ok: 1, errors: 1, busy: 1, failed: 1, aborted: 0 }, bytes_freed: 150 });
  });

  it('a state file lost or corrupt starts them again (a counter reset to Prometheus); bad fields read as 0', async () => {
    const home = path.join(T, '.murmur');
    fs.mkdirSync(home, { mode: 0o700 });
    await recordOneShotSweep(home, sweep(10_000, 'ok', 100), 10_000);
    await recordOneShotSweep(home, sweep(20_000, 'ok', 100), 20_000);
    fs.writeFileSync(path.join(home, 'gc', 'state.json'), 'garbage');
    await recordOneShotSweep(home, sweep(30_000, 'ok', 7), 30_000);
    const r = await readStateFile(home);
    expect(r.status === 'ok' && r.state.totals).toEqual({
      sweeps: { ok: 1, errors: 0, busy: 0, failed: 0, aborted: 0 },
      bytes_freed: 7,
    });
    expect(
      parseState(JSON.stringify({ version: 1, totals: { sweeps: { ok: -3, errors: 'x', weird: 9 }, bytes_freed: -1 } }))
        ?.totals,
    ).toEqual({
      sweeps: { ok: 0, errors: 0, busy: 0, failed: 0, aborted: 0 },
      bytes_freed: 0,
    });
  });
});

describe('gc temp files of a killed murmur-gc', () => {
  it('recognises only the atomic-write temp names', () => {
    expect(gcTempPid('.state.json.123.18c0ffee.tmp')).toBe(123);
    expect(gcTempPid('.trace-cache.json.9.ab.tmp')).toBe(9);
    expect(gcTempPid('.sweep.lock.owner.json.77.0a.tmp')).toBe(77);
    // the protection list's (protect, release, restore write it)
    expect(gcTempPid('.protected.json.8656.1a23485b8483a371f08.tmp')).toBe(8656);
    expect(gcTempPid('.trace-appends.json.5.0f.tmp')).toBe(5);
    for (const n of [
      'state.json',
      '.state.json.tmp',
      '.state.json.x.ab.tmp',
      '.other.123.ab.tmp',
      '.state.json.12.XY.tmp',
      'ses_1.123.ab.tmp',
    ]) {
      expect(gcTempPid(n), n).toBeUndefined();
    }
  });

  it('removes those of dead pids only', async () => {
    const T = f.tempDir('gctmp');
    try {
      const gc = path.join(T, 'gc');
      fs.mkdirSync(gc, { recursive: true });
      const dead = spawnDeadPid();
      fs.writeFileSync(path.join(gc, `.state.json.${dead}.abc.tmp`), 'x');
      fs.writeFileSync(path.join(gc, `.protected.json.${dead}.1a2b.tmp`), '{"version":1,"items":[]}');
      fs.writeFileSync(path.join(gc, `.protected.json.${process.ppid}.1a2b.tmp`), 'alive');
      fs.writeFileSync(path.join(gc, `.state.json.${process.pid}.abc.tmp`), 'mine');
      fs.writeFileSync(path.join(gc, `.trace-cache.json.${process.ppid}.abc.tmp`), 'alive');
      fs.writeFileSync(path.join(gc, 'state.json'), '{}');
      const removed = await removeDeadGcTemps(T);
      expect(removed.map((r) => r.pid)).toEqual([dead, dead]);
      expect(fs.readdirSync(gc).sort()).toEqual(
        [
          `.state.json.${process.pid}.abc.tmp`,
          `.trace-cache.json.${process.ppid}.abc.tmp`,
          `.protected.json.${process.ppid}.1a2b.tmp`,
          'state.json',
        ].sort(),
      );
    } finally {
      f.rmrf(T);
    }
  });
});

function spawnDeadPid(): number {
  const c = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(c.stdout);
}
