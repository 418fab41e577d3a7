// The daemon's keep_free watch: statfs only, a sweep at once when free space falls below
// keep_free, once per crossing.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { runSweep } from '../../src/sweep/pipeline.js';
import type { SweepReport } from '../../src/sweep/report.js';
import type { GcConfig } from '../../src/config/types.js';
import { Daemon } from '../../src/daemon/daemon.js';
import { KeepFreeWatch } from '../../src/daemon/keep-free.js';
import * as f from '../helpers/fixtures.js';

let T: string;
let home: string;
let lines: Record<string, unknown>[];

beforeEach(() => {
  T = f.tempDir('kf');
  home = path.join(T, '.murmur');
  fs.mkdirSync(home, { mode: 0o700 });
  lines = [];
});
afterEach(() => f.rmrf(T));

const log = () =>
  pino({ level: 'debug' }, { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) });

function config(over: Partial<GcConfig> = {}): GcConfig {
  return {
    home,
    schedule: '0 0 1 1 *',
    runOnStart: false,
    randomDelaySecs: 0,
    liveGraceSecs: 3600,
    sessions: [],
    records: [],
    keepFree: { kind: 'bytes', bytes: 1000, perSweepPercent: 50 },
    audit: { retain: { maxAgeSecs: 90 * 86400 } },
    log: { level: 'info' },
    source: undefined,
    ...over,
  };
}

describe('KeepFreeWatch', () => {
  it('sweeps when free space is below keep_free, once per crossing, and re-arms when it recovers', async () => {
    let free = 5000;
    let statfsCalls = 0;
    let sweeps = 0;
    const w = new KeepFreeWatch({
      config: () => config(),
      log: log(),
      intervalMs: 60_000,
      statfs: (p) => {
        statfsCalls++;
        expect(p).toBe(home);
        return Promise.resolve({ totalBytes: 10_000, freeBytes: free });
      },
      trigger: () => {
        sweeps++;
        return Promise.resolve();
      },
    });
    await w.check();
    expect(sweeps).toBe(0);
    free = 999;
    await w.check();
    expect(sweeps).toBe(1);
    await w.check(); // still short: no sweep every minute
    await w.check();
    expect(sweeps).toBe(1);
    free = 1000; // back at keep_free: re-armed
    await w.check();
    free = 10;
    await w.check();
    expect(sweeps).toBe(2);
    expect(statfsCalls).toBe(6);
  });

  it('does nothing (not even statfs) while keep_free is not configured; a percentage is of the total', async () => {
    let statfsCalls = 0;
    let sweeps = 0;
    let cfg = config();
    delete cfg.keepFree;
    const w = new KeepFreeWatch({
      config: () => cfg,
      log: log(),
      intervalMs: 60_000,
      statfs: () => {
        statfsCalls++;
        return Promise.resolve({ totalBytes: 10_000, freeBytes: 999 });
      },
      trigger: () => {
        sweeps++;
        return Promise.resolve();
      },
    });
    await w.check();
    expect([statfsCalls, sweeps]).toEqual([0, 0]);
    cfg = config({ keepFree: { kind: 'percent', percent: 10, perSweepPercent: 50 } }); // 1000 of 10 000
    await w.check();
    expect([statfsCalls, sweeps]).toEqual([1, 1]);
  });

  it('sweeps when inodes run short though bytes are free (the same share of the inodes), and names which', async () => {
    let freeInodes = 500;
    let sweeps = 0;
    const w = new KeepFreeWatch({
      config: () => config({ keepFree: { kind: 'percent', percent: 10, perSweepPercent: 50 } }),
      log: log(),
      intervalMs: 60_000,
      statfs: () => Promise.resolve({ totalBytes: 10_000, freeBytes: 9_000, totalInodes: 4_000, freeInodes }),
      trigger: () => {
        sweeps++;
        return Promise.resolve();
      },
    });
    await w.check();
    expect(sweeps).toBe(0); // 500 of 4000 free: at least the 400 keep_free asks
    freeInodes = 399;
    await w.check();
    expect(sweeps).toBe(1);
    expect(lines.at(-1)).toMatchObject({
      free_inodes: 399,
      required_inodes: 400,
      msg: expect.stringMatching(/^free inodes under the home \(399\) are below keep_free's share of them \(400\)/),
    });
    await w.check();
    expect(sweeps).toBe(1);
    freeInodes = 400;
    await w.check();
    freeInodes = 0;
    await w.check();
    expect(sweeps).toBe(2);
  });
});

describe('Daemon keep_free', () => {
  it('starts a sweep early (trigger keep_free) when the check finds the home short', async () => {
    let free = 5000;
    const triggers: string[] = [];
    const sweep: typeof runSweep = (o) =>
      Promise.resolve({
        dry_run: false,
        home: o.config.home,
        home_exists: true,
        started_ms: Date.now(),
        duration_ms: 1,
        actions: [],
        skipped: [],
        errors: [],
        audit: null,
        bytes_freed: 0,
        inventory: {} as SweepReport['inventory'],
      });
    const d = new Daemon(config(), {
      log: log(),
      load: () => Promise.resolve(config()),
      sweep,
      keepFreeCheckMs: 10,
      statfs: () => Promise.resolve({ totalBytes: 10_000, freeBytes: free }),
    });
    const done = d.run();
    try {
      await new Promise((r) => setTimeout(r, 60));
      expect(lines.filter((l) => l['event'] === 'sweep_summary')).toHaveLength(0);
      free = 10;
      const t0 = Date.now();
      while (!lines.some((l) => l['event'] === 'sweep_summary') && Date.now() - t0 < 5000)
        await new Promise((r) => setTimeout(r, 5));
      for (const l of lines) if (l['event'] === 'sweep_summary') triggers.push(String(l['trigger']));
      expect(triggers).toEqual(['keep_free']);
      expect(lines.some((l) => typeof l['msg'] === 'string' && l['msg'].includes('below keep_free'))).toBe(true);
    } finally {
      await d.shutdown('SIGTERM');
      await done;
    }
  });
});
