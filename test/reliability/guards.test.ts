// Property (blast radius): an unattended sweep that would remove more than half of a store and
// more than 20 entries removes nothing there, reports blast_radius with what it would remove,
// exits 1 and says how to proceed; a dry run shows the same; --confirm-large, a run by hand or a
// raised max_delete proceed. A clock jumped far forward (every entry looks old) is stopped by it.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runSweep } from '../../src/sweep/pipeline.js';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/log.js';
import * as f from '../helpers/fixtures.js';

let T: string;
let root: string;
let cfg: string;
beforeEach(() => {
  T = f.tempDir('rel-guards');
  root = path.join(T, 'app', '.murmur');
  const now = Date.now();
  for (let i = 0; i < 30; i++) f.writeSession(root, { sessionId: f.idAt('ses_', now - (40 + i) * f.DAY), end: true });
  for (let i = 0; i < 5; i++) f.writeSession(root, { sessionId: f.idAt('ses_', now - (1 + i) * f.DAY), end: true });
  cfg = f.writeConfig(T, `sessions:\n  - root: ${root}\n    retain: { max_age: 30d }\n`);
});
afterEach(() => f.rmrf(T));

type Rep = { actions: { kind: string }[]; errors: { code: string; target: string; detail: string }[] };
const sessions = () => fs.readdirSync(root).filter((n) => n.startsWith('ses_')).length;

describe('blast radius', () => {
  it('unattended: a store that would lose 30 of 35 sessions loses none; blast_radius, exit 1, how to proceed; the dry run says the same', () => {
    for (const args of [['--unattended'], ['--unattended', '--dry-run']]) {
      const r = f.runCli(['--json', '--config', cfg, ...args], T);
      const rep = f.json<Rep>(r);
      expect(r.status).toBe(1);
      expect(rep.errors).toHaveLength(1);
      expect(rep.errors[0]).toMatchObject({ code: 'blast_radius', target: root });
      expect(rep.errors[0]!.detail).toMatch(
        /would remove or hold 30 of 35 sessions .*nothing was removed or held there.*--confirm-large.*max_delete/,
      );
      expect(rep.actions.filter((a) => a.kind === 'remove_session')).toEqual([]);
      expect(sessions()).toBe(35);
    }
    const ok = f.runCli(['--json', '--config', cfg, '--unattended', '--confirm-large'], T);
    expect(ok.status).toBe(0);
    expect(sessions()).toBe(5);
  });

  it('by hand there is no limit unless max_delete says so', () => {
    fs.mkdirSync(path.join(T, 'limited'));
    const limited = f.writeConfig(
      path.join(T, 'limited'),
      `max_delete: { count: 10 }\nsessions:\n  - root: ${root}\n    retain: { max_age: 30d }\n`,
    );
    const r = f.runCli(['--json', '--config', limited], T);
    expect(r.status).toBe(1);
    expect(f.json<Rep>(r).errors[0]).toMatchObject({ code: 'blast_radius' });
    expect(sessions()).toBe(35);
    const byHand = f.runCli(['--json', '--config', cfg], T);
    expect(byHand.status).toBe(0);
    expect(sessions()).toBe(5);
  });

  it('a clock jumped ten years forward makes every session and record look old: the unattended guard stops it; back on the right clock, age deletion stays off (clock_skew)', async () => {
    const home = path.join(T, '.murmur');
    for (let i = 0; i < 25; i++)
      f.writeRecord(home, 'shey', `ctx_${i}`, { capsule: 'shey', messages: 2, mtimeMs: Date.now() - (1 + i) * f.DAY });
    const records = () => fs.readdirSync(path.join(home, 'conversations', 'shey')).length;
    fs.mkdirSync(path.join(T, 'rec'));
    const withRecords = f.writeConfig(
      path.join(T, 'rec'),
      `sessions:\n  - root: ${root}\n    retain: { max_age: 30d }\nrecords:\n  - capsule: shey\n    retain: { max_age: 30d }\n`,
    );
    const config = await loadConfig({ configPath: withRecords, env: { HOME: T }, cwd: T });
    const log = createLogger({ level: 'silent' });
    const future = Date.now() + 3650 * f.DAY;
    const rep = await runSweep({ config, dryRun: false, log, now: () => future, unattended: true });
    expect(rep.errors.map((e) => `${e.code} ${e.target}`).sort()).toEqual([
      `blast_radius ${path.join(home, 'conversations', 'shey')}`,
      `blast_radius ${root}`,
    ]);
    expect(rep.actions.filter((a) => a.kind === 'remove_session' || a.kind === 'remove_record')).toEqual([]);
    expect(sessions()).toBe(35);
    expect(records()).toBe(25);
    // That sweep recorded its (future) start: on the corrected clock, age deletion is held off
    // (clock_skew) rather than trusting either clock; docs/config.md says how to reset it.
    const back = await runSweep({ config, dryRun: false, log, unattended: true });
    expect(back.skipped).toContainEqual(expect.objectContaining({ code: 'clock_skew' }));
    expect(back.errors).toEqual([]);
    expect(sessions()).toBe(35);
  });

  it.each([
    ['count: 0', /max_delete.count: must be at least 1/],
    ['fraction: 2', /max_delete.fraction: must be at most 1/],
    ['count: 1.5', /max_delete.count: must be a whole number/],
    ['limit: 3', /max_delete/],
    ['{}', /max_delete/],
  ])('max_delete: { %s } is refused with config_invalid', async (body, msg) => {
    fs.mkdirSync(path.join(T, 'bad'));
    const bad = f.writeConfig(path.join(T, 'bad'), `max_delete: ${body.startsWith('{') ? body : `{ ${body} }`}\n`);
    await expect(loadConfig({ configPath: bad, env: { HOME: T }, cwd: T })).rejects.toMatchObject({
      code: 'config_invalid',
      message: expect.stringMatching(msg) as unknown,
    });
  });
});
