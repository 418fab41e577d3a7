// The Daemon class in-process with a fake sweep: the in-process guard, busy ticks, SIGHUP with an
// invalid config, and the stop deadline (a sweep that never reaches a safe point).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { runSweep } from '../../src/sweep/pipeline.js';
import type { SweepReport } from '../../src/sweep/report.js';
import type { GcConfig } from '../../src/config/types.js';
import { loadConfig } from '../../src/config/load.js';
import { Daemon } from '../../src/daemon/daemon.js';
import { recordOneShotSweep, type SweepSummary } from '../../src/gchome/state.js';
import { BusyError, ConfigError } from '../../src/errors.js';
import * as f from '../helpers/fixtures.js';

type Sweep = typeof runSweep;
type Opts = Parameters<Sweep>[0];

let T: string;
let home: string;
let lines: Record<string, unknown>[];
let daemons: Daemon[];

beforeEach(() => {
  T = f.tempDir('dmn');
  home = path.join(T, '.murmur');
  fs.mkdirSync(home, { mode: 0o700 });
  lines = [];
  daemons = [];
});

afterEach(async () => {
  for (const d of daemons) await d.shutdown('SIGTERM');
  f.rmrf(T);
});

function config(over: Partial<GcConfig> = {}): GcConfig {
  return {
    home,
    schedule: '0 0 1 1 *', // never during a test
    runOnStart: false,
    randomDelaySecs: 0,
    liveGraceSecs: 3600,
    sessions: [],
    records: [],
    audit: { retain: { maxAgeSecs: 90 * 86400 } },
    log: { level: 'info' },
    source: undefined,
    ...over,
  };
}

function logger() {
  return pino({ level: 'debug' }, { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) });
}

function report(opts: Opts): SweepReport {
  return {
    dry_run: false,
    home: opts.config.home,
    home_exists: true,
    started_ms: Date.now(),
    duration_ms: 1,
    actions: [],
    skipped: [],
    errors: opts.signal?.aborted ? [{ target: opts.config.home, code: 'aborted', detail: 'stopped' }] : [],
    audit: null,
    bytes_freed: 0,
    inventory: {} as SweepReport['inventory'],
  };
}

function make(
  sweep: Sweep,
  over: { cfg?: GcConfig; load?: () => Promise<GcConfig>; stopDeadlineMs?: number } = {},
): { d: Daemon; done: Promise<number> } {
  const cfg = over.cfg ?? config();
  const d = new Daemon(cfg, {
    log: logger(),
    load: over.load ?? (async () => cfg),
    sweep,
    ...(over.stopDeadlineMs !== undefined ? { stopDeadlineMs: over.stopDeadlineMs } : {}),
  });
  daemons.push(d);
  const done = d.run();
  return { d, done };
}

async function until(pred: () => boolean, ms = 5000): Promise<void> {
  const t0 = Date.now();
  while (!pred()) {
    if (Date.now() - t0 > ms) throw new Error(`timeout; log:\n${lines.map((l) => JSON.stringify(l)).join('\n')}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const summaries = () => lines.filter((l) => l['event'] === 'sweep_summary');

describe('Daemon (in-process, fake sweep)', () => {
  it('runs one sweep at a time: a tick during a sweep is skipped and logged', async () => {
    let calls = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { d } = make(async (o) => {
      calls++;
      expect(o.unattended, 'the daemon sweeps unattended (blast-radius default)').toBe(true);
      await gate;
      return report(o);
    });
    await until(() => lines.some((l) => l['msg'] === 'murmur-gc daemon started'));
    const first = d.tick('schedule');
    await until(() => calls === 1);
    await d.tick('schedule');
    await d.tick('start');
    expect(calls).toBe(1);
    expect(lines.filter((l) => l['msg'] === 'sweep skipped: the previous sweep is still running')).toHaveLength(2);
    release();
    await first;
    await d.tick('schedule');
    expect(calls).toBe(2);
    expect(summaries().map((s) => s['outcome'])).toEqual(['ok', 'ok']);
  });

  it('logs a busy tick with storage_busy and keeps going', async () => {
    const { d } = make(async () => {
      throw new BusyError('another murmur-gc sweep holds /x/gc/sweep.lock');
    });
    await until(() => lines.length > 0);
    await d.tick('schedule');
    const s = summaries()[0]!;
    expect(s).toMatchObject({ outcome: 'busy', code: 'storage_busy', level: 40 });
    const state = JSON.parse(fs.readFileSync(path.join(home, 'gc', 'state.json'), 'utf8'));
    expect(state.last_sweep.outcome).toBe('busy');
  });

  it('SIGHUP with an invalid config keeps the old config and schedule', async () => {
    let loads = 0;
    const { d } = make(async (o) => report(o), {
      load: async () => {
        loads++;
        throw new ConfigError('schedule', "'nope' is not a valid cron expression", '/c.yaml');
      },
    });
    await until(() => fs.existsSync(path.join(home, 'gc', 'state.json')));
    process.emit('SIGHUP', 'SIGHUP');
    await until(() => lines.some((l) => l['code'] === 'config_invalid'));
    expect(loads).toBe(1);
    const err = lines.find((l) => l['code'] === 'config_invalid')!;
    expect(err['level']).toBe(50);
    expect(String(err['msg'])).toContain("schedule: 'nope' is not a valid cron expression");
    const state = JSON.parse(fs.readFileSync(path.join(home, 'gc', 'state.json'), 'utf8'));
    expect(state.daemon.schedule).toBe('0 0 1 1 *');
    await d.tick('schedule'); // still sweeping on the old config
    expect(summaries()).toHaveLength(1);
  });

  it('warns at start and after each reload about a configured root that does not exist', async () => {
    const file = path.join(T, 'config.yaml');
    const write = (root: string) =>
      fs.writeFileSync(
        file,
        [
          `home: ${home}`,
          "schedule: '0 0 1 1 *'",
          'sessions:',
          `  - root: ${root}`,
          '    retain: { max_sessions: 3 }',
          '',
        ].join('\n'),
      );
    write(path.join(T, 'typo'));
    const load = () => loadConfig({ configPath: file, env: { HOME: T }, cwd: T });
    make(async (o) => report(o), { cfg: await load(), load });
    await until(() => lines.some((l) => l['msg'] === 'murmur-gc daemon started'));
    const missing = () => lines.filter((l) => l['code'] === 'config_path_missing');
    expect(missing()).toHaveLength(1);
    expect(missing()[0]!['level']).toBe(40);
    expect(String(missing()[0]!['msg'])).toContain(`${file}:4:5: sessions[0].root: '${T}/typo' does not exist`);
    fs.mkdirSync(path.join(T, 'real'), { mode: 0o700 });
    write(path.join(T, 'real'));
    process.emit('SIGHUP', 'SIGHUP');
    await until(() => lines.some((l) => l['msg'] === 'configuration reloaded'));
    expect(missing()).toHaveLength(1); // the fixed root is not warned about
    write(path.join(T, 'gone'));
    process.emit('SIGHUP', 'SIGHUP');
    await until(() => missing().length === 2);
    expect(String(missing()[1]!['msg'])).toContain(`'${T}/gone' does not exist`);
  });

  it('a stop aborts the sweep through its signal and waits for it', async () => {
    let seen: AbortSignal | undefined;
    const hupListeners = process.listenerCount('SIGHUP');
    const { d, done } = make(async (o) => {
      seen = o.signal;
      await new Promise<void>((r) => o.signal?.addEventListener('abort', () => setTimeout(r, 50)));
      return report(o);
    });
    await until(() => lines.length > 0);
    void d.tick('schedule');
    await until(() => seen !== undefined);
    await d.shutdown('SIGTERM');
    expect(await done).toBe(0);
    expect(seen!.aborted).toBe(true);
    expect(summaries()[0]).toMatchObject({ outcome: 'aborted', code: 'aborted' });
    const state = JSON.parse(fs.readFileSync(path.join(home, 'gc', 'state.json'), 'utf8'));
    expect(state.daemon.stopped_ms).toBeGreaterThan(0);
    expect(state.next_run_ms).toBeNull();
    expect(state.last_sweep.outcome).toBe('aborted');
    expect(process.listenerCount('SIGHUP')).toBe(hupListeners); // ours removed
  });

  it('a sweep that never reaches a safe point does not hold the stop past the deadline', async () => {
    const { d, done } = make(() => new Promise<SweepReport>(() => undefined), { stopDeadlineMs: 150 });
    await until(() => lines.length > 0);
    void d.tick('schedule');
    const t0 = Date.now();
    await d.shutdown('SIGTERM');
    expect(await done).toBe(0);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(lines.some((l) => l['code'] === 'aborted' && l['level'] === 50)).toBe(true);
    expect(lines.at(-1)!['msg']).toBe('murmur-gc daemon stopped');
  });

  it("a one-shot sweep's newer last_sweep survives the daemon's next state write (the daemon merges, not overwrites)", async () => {
    let calls = 0;
    const { d, done } = make(async (o) => {
      calls++;
      return report(o);
    });
    await until(() => fs.existsSync(path.join(home, 'gc', 'state.json')));
    await d.tick('start');
    expect(calls).toBe(1);
    const statePath = path.join(home, 'gc', 'state.json');
    const daemonSweep = JSON.parse(fs.readFileSync(statePath, 'utf8')).last_sweep as SweepSummary;
    // The timer's `murmur-gc sweep` ends later and records its summary while the daemon runs.
    const later = Date.now() + 1000;
    const oneShot: SweepSummary = {
      ...daemonSweep,
      trigger: 'manual',
      started_ms: later - 5,
      ended_ms: later,
      duration_ms: 5,
      outcome: 'errors',
      errors: 1,
      errors_by_code: { io_error: 1 },
    };
    expect(await recordOneShotSweep(home, oneShot, later)).toBe(true);
    // The daemon writes its state again (here: on stop) from its in-memory copy.
    await d.shutdown('SIGTERM');
    expect(await done).toBe(0);
    const state = JSON.parse(fs.readFileSync(statePath, 'utf8'));
    expect(state.daemon.stopped_ms).toBeGreaterThan(0);
    expect(state.last_sweep).toMatchObject({ trigger: 'manual', ended_ms: later, outcome: 'errors' });
    expect(state.last_success_ms, "the daemon's own ok sweep is still the last success").toBe(daemonSweep.ended_ms);

    // And the other way round: a one-shot that ended before the daemon's newer sweep does not win.
    const older: SweepSummary = { ...oneShot, started_ms: 1, ended_ms: 2 };
    expect(await recordOneShotSweep(home, older, Date.now())).toBe(true);
    expect(JSON.parse(fs.readFileSync(statePath, 'utf8')).last_sweep).toMatchObject({ ended_ms: later });
  });

  it('the random delay applies to scheduled sweeps and is cut short by a stop', async () => {
    let calls = 0;
    const { d, done } = make(
      async (o) => {
        calls++;
        return report(o);
      },
      { cfg: config({ randomDelaySecs: 3600 }) },
    );
    await until(() => lines.length > 0);
    await d.tick('start'); // no delay at start
    expect(calls).toBe(1);
    const pending = d.tick('schedule');
    await new Promise((r) => setTimeout(r, 30));
    const t0 = Date.now();
    await d.shutdown('SIGTERM');
    await pending;
    expect(await done).toBe(0);
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(calls).toBe(1);
  });

  it("collects a sweep's working set before it idles: nothing the sweep built is alive when its summary is logged", async () => {
    // Without the collection, a daemon idles holding its last sweep's heap, and the next sweep
    // builds its own beside it (peak RSS grew sweep by sweep at 100 000 sessions).
    let built: WeakRef<object> | undefined;
    const aliveAtSummary: boolean[] = [];
    const cfg = config();
    const log = pino(
      { level: 'info' },
      {
        write: (s: string) => {
          if (s.includes('"sweep_summary"')) aliveAtSummary.push(built?.deref() !== undefined);
        },
      },
    );
    const d = new Daemon(cfg, {
      log,
      load: async () => cfg,
      sweep: async (o) => {
        // (large enough that the daemon collects: COLLECT_ABOVE_HEAP_BYTES)
        const workingSet = { sessions: Array.from({ length: 1_000_000 }, (_, i) => ({ i, name: `ses_${i}` })) };
        built = new WeakRef(workingSet);
        // (a WeakRef keeps its target alive until the job that made it ends)
        await new Promise((r) => setImmediate(r));
        return { ...report(o), inventory: workingSet as unknown as SweepReport['inventory'] };
      },
    });
    daemons.push(d);
    void d.run();
    await d.tick('schedule');
    await d.tick('schedule');
    expect(aliveAtSummary).toEqual([false, false]);
  });
});
