// murmur-gc's own `shell_lost` appends are no evidence of life (src/gchome/trace-appends.ts):
// a reconciled dead session is judged by the runtime's last write on the next sweeps, a write
// by the runtime after ours is life again, and a lost memory errs toward "live".
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runSweep } from '../../src/sweep/pipeline.js';
import type { SweepReport } from '../../src/sweep/report.js';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/log.js';
import * as f from '../helpers/fixtures.js';

let tmp: string;
let home: string;
let root: string;
let ses: string;
let trace: string;
const log = createLogger({ level: 'silent' });

beforeEach(() => {
  tmp = fs.realpathSync(f.tempDir('mgc-own-appends'));
  home = path.join(tmp, 'home');
  root = path.join(tmp, 'app', '.murmur');
  fs.mkdirSync(home, { mode: 0o700 });
  const t0 = Date.now() - 2 * f.DAY;
  ses = f.idAt('ses_', t0);
  // dead: no session_end, last written two days ago, one background command never accounted for
  trace = path.join(
    f.writeSession(root, {
      sessionId: ses,
      end: false,
      detached: [{ workId: f.idAt('wrk_', t0 + 1000) }],
      mtimeMs: t0 + 2000,
    }),
    'trace.jsonl',
  );
});
afterEach(() => f.rmrf(tmp));

/** One sweep; `policy`: a retain block that condemns the session (max_age 1h), `at`: the clock. */
async function sweep(
  o: { policy?: 'max_age' | 'max_sessions'; at?: number; dryRun?: boolean } = {},
): Promise<SweepReport> {
  const retain =
    o.policy === 'max_age'
      ? '    retain: { max_age: 1h }\n'
      : o.policy === 'max_sessions'
        ? '    retain: { max_sessions: 1 }\n'
        : '';
  const configPath = f.writeConfig(tmp, `home: ${home}\nsessions:\n  - root: ${root}\n${retain}`);
  const at = o.at;
  return runSweep({
    config: await loadConfig({ configPath, env: { HOME: tmp }, cwd: tmp }),
    dryRun: o.dryRun ?? false,
    log,
    ...(at !== undefined ? { now: () => at } : {}),
  });
}

const lost = (r: SweepReport) => r.actions.filter((a) => a.kind === 'shell_lost').length;
const removed = (r: SweepReport) =>
  r.actions.filter((a) => a.kind === 'remove_session').map((a) => ('target' in a ? a.target : ''));
const liveSkips = (r: SweepReport) => r.skipped.filter((s) => s.code === 'live_session');

describe("murmur-gc's own trace appends", () => {
  it('a reconciled session is not called live for our write: at once and after 61 s, a policy removes it', async () => {
    const first = await sweep();
    expect(first.errors).toEqual([]);
    expect(lost(first)).toBe(1);
    expect(fs.statSync(trace).mtimeMs).toBeGreaterThan(Date.now() - 60_000); // our write is the trace's mtime now

    // at once: not "written in the last 60 s"
    const dry = await sweep({ policy: 'max_age', dryRun: true });
    expect(liveSkips(dry)).toEqual([]);
    expect(removed(dry)).toEqual([ses]);
    // a sweep without a policy keeps the memory, and reconciles nothing twice
    const quiet = await sweep({ at: Date.now() + 30_000 });
    expect(lost(quiet)).toBe(0);
    expect(quiet.errors).toEqual([]);
    // after 61 s: not "written within live_grace" either; max_sessions condemns it too
    const dryCount = await sweep({ policy: 'max_sessions', dryRun: true, at: Date.now() + 61_000 });
    expect(liveSkips(dryCount)).toEqual([]);
    const real = await sweep({ policy: 'max_age', at: Date.now() + 61_000 });
    expect(liveSkips(real)).toEqual([]);
    expect(removed(real)).toEqual([ses]);
    expect(fs.existsSync(path.dirname(trace))).toBe(false);
  });

  it('the runtime writing after our append is life again', async () => {
    expect(lost(await sweep())).toBe(1);
    fs.appendFileSync(
      trace,
      JSON.stringify({
        event_type: 'task_start',
        event_id: f.idAt('evt_', Date.now()),
        parent_id: null,
        session_id: ses,
        timestamp: Date.now(),
      }) + '\n',
    );
    const r = await sweep({ policy: 'max_age', at: Date.now() + 61_000 });
    expect(removed(r)).toEqual([]);
    expect(liveSkips(r).map((s) => s.detail)).toEqual([expect.stringContaining('written within live_grace')]);
    expect(fs.existsSync(trace)).toBe(true);
  });

  it('a lost or corrupt memory errs toward live: nothing is removed because of it', async () => {
    expect(lost(await sweep())).toBe(1);
    const memory = path.join(home, 'gc', 'trace-appends.json');
    expect(fs.existsSync(memory)).toBe(true);
    fs.writeFileSync(memory, '{"version":1,"traces":[{"root":');
    const corrupt = await sweep({ policy: 'max_age', at: Date.now() + 61_000 });
    expect(removed(corrupt)).toEqual([]);
    expect(liveSkips(corrupt)).toHaveLength(1);
    fs.rmSync(memory);
    const gone = await sweep({ policy: 'max_age', at: Date.now() + 61_000 });
    expect(removed(gone)).toEqual([]);
    expect(liveSkips(gone)).toHaveLength(1);
    expect(fs.existsSync(trace)).toBe(true);
  });

  it('a dry run remembers nothing (it wrote nothing)', async () => {
    const dry = await sweep({ dryRun: true });
    expect(lost(dry)).toBe(1);
    expect(fs.existsSync(path.join(home, 'gc', 'trace-appends.json'))).toBe(false);
  });
});
