// Property (clock sanity): murmur-gc's own record of when its last sweep started
// (`clock_reference_ms` in <home>/gc/state.json) is the reference a capsule cannot forge. A wall
// clock stepped back behind it skips age-based deletion with one `clock_skew` warning while the
// count policies still apply (a dry run shows the same); the reference never moves back, and
// nothing a capsule writes (future-dated `ses_` names, future mtimes) moves it or switches age
// deletion off for anyone else. (A clock jumped forward: guards.test.ts, blast radius.)
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runSweep } from '../../src/sweep/pipeline.js';
import type { SweepReport } from '../../src/sweep/report.js';
import { loadConfig } from '../../src/config/load.js';
import { readStateFile } from '../../src/gchome/state.js';
import { createLogger } from '../../src/log.js';
import * as f from '../helpers/fixtures.js';

let T: string;
let home: string;
let root: string;
const N = Date.now();
const MIN = 60_000;

beforeEach(() => {
  T = f.tempDir('rel-clock');
  home = path.join(T, '.murmur');
  root = path.join(T, 'app', '.murmur');
  fs.mkdirSync(home, { recursive: true, mode: 0o700 });
  for (let i = 0; i < 6; i++) f.writeSession(root, { sessionId: f.idAt('ses_', N - (40 + i) * f.DAY), end: true });
  for (let i = 0; i < 3; i++) f.writeSession(root, { sessionId: f.idAt('ses_', N - (1 + i) * f.DAY), end: true });
  f.writeRecord(home, 'shey', 'ctx_old', { capsule: 'shey', messages: 3, mtimeMs: N - 60 * f.DAY });
  f.writeRecord(home, 'shey', 'ctx_long', { capsule: 'shey', messages: 12, mtimeMs: N - 2 * f.DAY });
});
afterEach(() => f.rmrf(T));

const POLICY = `sessions:\n  - root: ROOT\n    retain: { max_age: 30d, max_sessions: 8 }\nrecords:\n  - capsule: shey\n    retain: { max_age: 30d, max_messages: 10 }\n`;

async function sweep(nowMs: number, opts: { dryRun?: boolean; policy?: boolean } = {}): Promise<SweepReport> {
  fs.mkdirSync(path.join(T, 'cfg'), { recursive: true });
  const yaml = opts.policy === false ? `sessions:\n  - root: ${root}\n` : POLICY.replace('ROOT', root);
  const cfg = f.writeConfig(path.join(T, 'cfg'), yaml);
  const config = await loadConfig({ configPath: cfg, env: { HOME: T }, cwd: T });
  return runSweep({ config, dryRun: opts.dryRun === true, log: createLogger({ level: 'silent' }), now: () => nowMs });
}

const sessions = () =>
  fs
    .readdirSync(root)
    .filter((n) => n.startsWith('ses_'))
    .sort();
const records = () =>
  fs
    .readdirSync(path.join(home, 'conversations', 'shey'))
    .filter((n) => n.startsWith('ctx_'))
    .sort();
const reference = async () => {
  const r = await readStateFile(home);
  return r.status === 'ok' ? r.state.clock_reference_ms : undefined;
};
const kinds = (rep: SweepReport) => rep.actions.map((a) => `${a.kind}:${'reason' in a ? a.reason : ''}`).sort();

describe('clock sanity', () => {
  it('a clock stepped back behind the last sweep skips max_age (clock_skew), still applies max_sessions and max_messages; the dry run says the same', async () => {
    // The last sweep ran 20 days "later" than the clock now says (no policy: it removed nothing).
    const first = await sweep(N + 20 * f.DAY, { policy: false });
    expect(first.actions).toEqual([]);
    expect(await reference()).toBe(N + 20 * f.DAY);

    for (const dryRun of [true, false]) {
      const rep = await sweep(N, { dryRun });
      const skews = rep.skipped.filter((s) => s.code === 'clock_skew');
      expect(skews, `dryRun=${dryRun}`).toHaveLength(1);
      expect(skews[0]!.detail).toMatch(
        /clock is 20 days behind the last sweep .*max_age .* skipped .*max_sessions, max_messages.* still appl/,
      );
      expect(rep.errors).toEqual([]);
      // 9 sessions, max_sessions 8: the oldest goes on count; nothing on age; the long record is truncated.
      expect(kinds(rep)).toEqual(['remove_session:max_sessions', 'truncate_record:max_messages']);
    }
    expect(sessions()).toHaveLength(8);
    expect(records()).toEqual(['ctx_long', 'ctx_old']);
    // The stepped-back sweep did not lower the reference.
    expect(await reference()).toBe(N + 20 * f.DAY);

    // Once the clock is past the reference again, max_age applies.
    const later = await sweep(N + 20 * f.DAY + MIN);
    expect(later.skipped.filter((s) => s.code === 'clock_skew')).toEqual([]);
    expect(sessions()).toHaveLength(3);
    expect(records()).toEqual(['ctx_long']);
    expect(await reference()).toBe(N + 20 * f.DAY + MIN);
  });

  it('a clock within the 5-minute tolerance of the reference is not skewed', async () => {
    await sweep(N + 4 * MIN, { policy: false });
    const rep = await sweep(N);
    expect(rep.skipped.filter((s) => s.code === 'clock_skew')).toEqual([]);
    expect(sessions()).toHaveLength(3);
  });

  it('future-dated ses_ names planted in a root (and a future mtime) never disable age deletion: old sessions go, the planted ones stay, no clock_skew, the reference is our clock', async () => {
    await sweep(N - 60 * MIN, { policy: false }); // an earlier sweep, an hour ago
    const planted = [f.idAt('ses_', N + 3650 * f.DAY), f.idAt('ses_', N + 365 * f.DAY)];
    for (const id of planted)
      f.writeSession(root, { sessionId: id, end: true, startMs: N - 50 * f.DAY, mtimeMs: N + 3650 * f.DAY });
    fs.utimesSync(
      path.join(home, 'conversations', 'shey', 'ctx_long', 'conversation.jsonl'),
      (N + 3650 * f.DAY) / 1000,
      (N + 3650 * f.DAY) / 1000,
    );

    const rep = await sweep(N);
    expect(rep.skipped.filter((s) => s.code === 'clock_skew')).toEqual([]);
    expect(rep.errors).toEqual([]);
    const left = sessions();
    for (const id of planted) expect(left).toContain(id);
    // The six sessions over 30 days old went on age (none on count: 11 > 8 but the oldest are old anyway).
    expect(rep.actions.filter((a) => a.kind === 'remove_session' && a.reason === 'max_age')).toHaveLength(6);
    expect(left.filter((n) => !planted.includes(n))).toHaveLength(3);
    expect(records()).toEqual(['ctx_long']);
    expect(await reference()).toBe(N);

    // And the next sweep, a minute later, is not skewed by what it saw.
    const next = await sweep(N + MIN);
    expect(next.skipped.filter((s) => s.code === 'clock_skew')).toEqual([]);
  });
});
