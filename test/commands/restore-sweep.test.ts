// `restore --sweep AUDIT` (everything one sweep held, each as `restore TARGET` puts it back) and
// `quarantine ls`'s filters, through the real sweep, in process (the clock is injected).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { restoreTarget } from '../../src/commands/quarantine.js';
import { restoreSweep, sweepRestoreExit } from '../../src/commands/restore-sweep.js';
import { renderSweepRestore } from '../../src/cli/quarantine.js';
import { filterHeld, listHeld } from '../../src/gchome/held-listing.js';
import { runSweep } from '../../src/sweep/pipeline.js';
import type { SweepReport } from '../../src/sweep/report.js';
import { loadConfig } from '../../src/config/load.js';
import type { GcConfig } from '../../src/config/types.js';
import { RefusalError } from '../../src/errors.js';
import { createLogger } from '../../src/log.js';
import * as f from '../helpers/fixtures.js';

let tmp: string;
let home: string;
let root: string;
let c: GcConfig;
const log = createLogger({ level: 'silent' });
const HOUR = 3_600_000;
const YAML = (root: string) =>
  `quarantine: 24h\nsessions:\n  - root: ${root}\n    retain: { max_age: 30d }\nrecords:\n  - capsule: shey\n    retain: { max_age: 90d, max_messages: 20 }\n`;

beforeEach(async () => {
  tmp = fs.realpathSync(f.tempDir('mgc-restore-sweep'));
  home = path.join(tmp, 'home');
  root = path.join(tmp, 'app', '.murmur');
  fs.mkdirSync(home, { mode: 0o700 });
  fs.mkdirSync(root, { recursive: true });
  c = await loadConfig({
    configPath: f.writeConfig(tmp, `home: ${home}\n${YAML(root)}`),
    env: { HOME: tmp },
    cwd: tmp,
  });
});
afterEach(() => f.rmrf(tmp));

function session(daysAgo: number): string {
  const startMs = Date.now() - daysAgo * f.DAY;
  const id = f.idAt('ses_', startMs);
  f.writeSession(root, { sessionId: id, startMs, end: true, files: { blob: 'x'.repeat(3000) } });
  return id;
}

async function sweep(nowMs?: number): Promise<SweepReport> {
  const r = await runSweep({ config: c, dryRun: false, log, ...(nowMs !== undefined ? { now: () => nowMs } : {}) });
  expect(r.errors).toEqual([]);
  return r;
}

const recordFile = (ctx: string) => path.join(home, 'conversations', 'shey', ctx, 'conversation.jsonl');
const messages = (ctx: string) => f.readLines(recordFile(ctx)).filter((l) => l.includes('"role"')).length;

describe('restore --sweep AUDIT', () => {
  it('puts back the sessions, contexts and truncation one sweep held, and nothing another sweep held', async () => {
    const [a, b] = [session(40), session(41)];
    f.writeRecord(home, 'shey', 'ctx_old', { capsule: 'shey', messages: 3, mtimeMs: Date.now() - 100 * f.DAY });
    f.writeRecord(home, 'shey', 'ctx_long', { capsule: 'shey', messages: 30 });
    const first = await sweep(Date.now() - HOUR);
    expect(first.quarantine).toMatchObject({ held: 4 });
    // the second sweep holds others
    const [c1, c2] = [session(50), session(51)];
    f.writeRecord(home, 'shey', 'ctx_older', { capsule: 'shey', messages: 3, mtimeMs: Date.now() - 200 * f.DAY });
    const second = await sweep();
    expect(second.quarantine).toMatchObject({ held: 3 });

    const dry = await restoreSweep(c, log, { sweep: first.audit!, dryRun: true });
    expect(dry.restored.map((x) => x.target).sort()).toEqual([a, b, 'ctx_long', 'ctx_old'].sort());
    expect(fs.existsSync(path.join(root, a))).toBe(false);

    const r = await restoreSweep(c, log, { sweep: first.audit!, dryRun: false });
    expect(r).toMatchObject({ sweep: first.audit, held: 4, not_restored: [] });
    expect(sweepRestoreExit(r)).toBe(0);
    expect(r.restored.map((x) => [x.held_kind, x.target]).sort()).toEqual(
      [
        ['context', 'ctx_old'],
        ['session', a],
        ['session', b],
        ['truncation', 'ctx_long'],
      ].sort(),
    );
    expect(fs.existsSync(path.join(root, a, 'blob'))).toBe(true);
    expect(fs.existsSync(path.join(root, b, 'blob'))).toBe(true);
    expect(messages('ctx_old')).toBe(3);
    expect(messages('ctx_long')).toBe(30);
    // each as restore TARGET does it: audited and protected
    expect(r.restored.every((x) => x.audit !== null && x.protection?.added === true)).toBe(true);
    // the second sweep's holds are still held
    const left = await listHeld(c);
    expect(left.items.map((i) => i.target).sort()).toEqual([c1, c2, 'ctx_older'].sort());
    expect(left.items.every((i) => i.run === second.audit)).toBe(true);
    // a second restore of the same sweep: everything is back already, said once
    const again = await restoreSweep(c, log, { sweep: first.audit!, dryRun: false });
    expect(again.restored).toEqual([]);
    expect(again.not_restored).toEqual([
      expect.objectContaining({
        code: 'restored_already',
        items: expect.arrayContaining([expect.objectContaining({ target: a })]),
      }),
    ]);
    expect(again.not_restored[0]!.items).toHaveLength(4);
    expect(sweepRestoreExit(again)).toBe(1);
  });

  it('says each cause of what it cannot put back once: exists now, restored already, purged since', async () => {
    const [a, b, d] = [session(40), session(41), session(42)];
    const first = await sweep();
    expect(first.quarantine).toMatchObject({ held: 3 });
    await restoreTarget(c, log, { target: a, dryRun: false });
    fs.mkdirSync(path.join(root, b));
    const r = await restoreSweep(c, log, { sweep: first.audit!, dryRun: false });
    expect(r.restored.map((x) => x.target)).toEqual([d]);
    expect(r.not_restored.map((x) => [x.code, x.items.map((i) => i.target)]).sort()).toEqual([
      ['restore_exists', [b]],
      ['restored_already', [a]],
    ]);
    const text = renderSweepRestore(r).split('\n');
    expect(text.filter((l) => l.startsWith('not restored [restore_exists]'))).toEqual([
      expect.stringContaining('a session of that name exists now'),
    ]);
    expect(text.filter((l) => l.startsWith('not restored [restored_already]'))).toHaveLength(1);
    expect(text[0]).toBe(`restored 1 session of the 3 items sweep ${first.audit} held`);
    expect(sweepRestoreExit(r)).toBe(1);
  });

  it('what a later sweep purged once its window passed is one cause, however many items', async () => {
    const ids = [session(40), session(41), session(42)];
    const first = await sweep();
    const later = await sweep(Date.now() + 25 * HOUR);
    expect(later.quarantine?.purged).toBe(3);
    const r = await restoreSweep(c, log, { sweep: first.audit!, dryRun: true });
    expect(r.restored).toEqual([]);
    expect(r.not_restored).toEqual([
      {
        code: 'purged_expired',
        detail: 'purged since: their window passed',
        items: expect.arrayContaining(ids.map((t) => ({ target: t, held_kind: 'session', origin: root }))),
      },
    ]);
    expect(renderSweepRestore(r)).toContain(
      'not restored [purged_expired]: 3 items: purged since: their window passed',
    );
  });

  it('an audit id no sweep has, or a sweep that held nothing, is a refusal', async () => {
    await expect(restoreSweep(c, log, { sweep: f.idAt('ses_', Date.now()), dryRun: true })).rejects.toMatchObject({
      code: 'restore_sweep_unknown',
    });
    session(40);
    const c2 = await loadConfig({
      configPath: f.writeConfig(tmp, `home: ${home}\nsessions:\n  - root: ${root}\n    retain: { max_age: 30d }\n`),
      env: { HOME: tmp },
      cwd: tmp,
    });
    const r = await runSweep({ config: c2, dryRun: false, log });
    await expect(restoreSweep(c2, log, { sweep: r.audit!, dryRun: true })).rejects.toBeInstanceOf(RefusalError);
    await expect(restoreSweep(c2, log, { sweep: r.audit!, dryRun: true })).rejects.toMatchObject({
      code: 'restore_not_held',
    });
  });
});

describe('quarantine ls filters', () => {
  it('by root, record store, reason and window end, each and combined, with the totals of what matched', async () => {
    const s1 = session(40);
    f.writeRecord(home, 'shey', 'ctx_old', { capsule: 'shey', messages: 3, mtimeMs: Date.now() - 100 * f.DAY });
    await sweep(Date.now() - 10 * HOUR); // held until now + 14h
    const s2 = session(50);
    f.writeRecord(home, 'shey', 'ctx_long', { capsule: 'shey', messages: 30 });
    await sweep(); // held until now + 24h
    const all = await listHeld(c);
    expect(all.items).toHaveLength(4);
    const targets = (x: { items: { target: string }[] }) => x.items.map((i) => i.target).sort();
    expect(targets(filterHeld(all, { roots: [root] }))).toEqual([s1, s2].sort());
    expect(targets(filterHeld(all, { records: ['shey'] }))).toEqual(['ctx_long', 'ctx_old']);
    expect(targets(filterHeld(all, { reason: 'max_age' }))).toEqual([s1, s2, 'ctx_old'].sort());
    expect(targets(filterHeld(all, { reason: 'max_messages' }))).toEqual(['ctx_long']);
    const before = Date.now() + 20 * HOUR;
    expect(targets(filterHeld(all, { beforeMs: before }))).toEqual([s1, 'ctx_old'].sort());
    // combined: the places are either one, the rest narrows
    expect(targets(filterHeld(all, { roots: [root], records: ['shey'], beforeMs: before }))).toEqual(
      [s1, 'ctx_old'].sort(),
    );
    expect(targets(filterHeld(all, { records: ['shey'], reason: 'max_age', beforeMs: before }))).toEqual(['ctx_old']);
    const one = filterHeld(all, { roots: [root], reason: 'max_age', beforeMs: before });
    expect(one.totals).toEqual({ items: 1, bytes: all.items.find((i) => i.target === s1)!.bytes });
    expect(filterHeld(all, { roots: [path.join(tmp, 'elsewhere')] }).totals).toEqual({ items: 0, bytes: 0 });
  });
});

describe('quarantine ls filters on the command line', () => {
  it('says what matched of all held; a typo in --root or --record, a bad --reason or --before is a usage error', async () => {
    const s1 = session(40);
    f.writeRecord(home, 'shey', 'ctx_old', { capsule: 'shey', messages: 3, mtimeMs: Date.now() - 100 * f.DAY });
    await sweep();
    const cfg = path.join(tmp, 'config.yaml');
    const ls = (...args: string[]) => f.runCli(['quarantine', 'ls', '--config', cfg, ...args], tmp);
    const text = ls('--root', root, '--before', '+2d');
    expect(text.status, text.stderr).toBe(0);
    expect(text.stdout).toContain(s1);
    expect(text.stdout).not.toContain('ctx_old');
    expect(text.stdout.trimEnd().split('\n').at(-1)).toMatch(
      new RegExp(`^1 of 2 held match \\(root ${root}, window ending before .+\\), `),
    );
    // a past ISO date: what the window no longer holds (nothing here)
    expect(ls('--before', '2020-01-01').stdout).toMatch(
      /^Nothing held matches \(window ending before .+\); 2 held in all/,
    );
    for (const bad of [
      ['--root', path.join(tmp, 'typo')],
      ['--record', 'shy'],
      ['--reason', 'keep_free'],
      ['--before', '7d'],
      ['--before', '2026-02-30'],
    ]) {
      const r = ls(...bad);
      expect(r.status, bad.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
    }
    expect(ls('--before', '7d').stderr).toContain("a duration from now takes a '+': +7d");
  });
});
