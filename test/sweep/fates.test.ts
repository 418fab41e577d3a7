// The safety nets together (docs/fates.md): the undo window, the disk budgets, the blast-radius
// guard and the report's counts, through the real sweep, in process (free space injected).
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runSweep } from '../../src/sweep/pipeline.js';
import { renderHuman, type SweepReport } from '../../src/sweep/report.js';
import { summarizeReport, summaryText } from '../../src/sweep/summary.js';
import { loadConfig } from '../../src/config/load.js';
import type { FsSpace } from '../../src/fsx/statfs.js';
import { createLogger } from '../../src/log.js';
import { restoreTarget } from '../../src/commands/quarantine.js';
import { RefusalError } from '../../src/errors.js';
import * as f from '../helpers/fixtures.js';

let tmp: string;
let home: string;
let root: string;
const log = createLogger({ level: 'silent' });
const NOW = Date.now();

beforeEach(() => {
  tmp = fs.realpathSync(f.tempDir('mgc-fates'));
  home = path.join(tmp, 'home');
  root = path.join(tmp, 'app', '.murmur');
  fs.mkdirSync(home, { mode: 0o700 });
  fs.mkdirSync(root, { recursive: true });
});
afterEach(() => f.rmrf(tmp));

interface Opts {
  dryRun?: boolean;
  space?: FsSpace | (() => FsSpace);
  unattended?: boolean;
  now?: number;
}

async function sweep(yaml: string, o: Opts = {}): Promise<SweepReport> {
  const configPath = f.writeConfig(tmp, `home: ${home}\n${yaml}`);
  const config = await loadConfig({ configPath, env: { HOME: tmp }, cwd: tmp });
  const space = o.space;
  return runSweep({
    config,
    dryRun: o.dryRun ?? false,
    log,
    unattended: o.unattended === true,
    now: () => o.now ?? NOW,
    ...(space ? { statfs: () => Promise.resolve(typeof space === 'function' ? space() : space) } : {}),
  });
}

/** A finished session minted `daysAgo` days ago, holding `blob` bytes besides its trace. */
function session(daysAgo: number, blob = 10_000, dir = root): string {
  const startMs = NOW - daysAgo * f.DAY;
  const id = f.idAt('ses_', startMs);
  f.writeSession(dir, { sessionId: id, startMs, end: true, files: { blob: 'x'.repeat(blob) } });
  return id;
}

const du = (p: string) => Number(execFileSync('du', ['-s', '-B1', p], { encoding: 'utf8' }).split('\t')[0]);
const kinds = (r: SweepReport) =>
  r.actions.map((a) => `${a.kind}${'held' in a && a.held ? ':held' : ''}:${'reason' in a ? a.reason : ''}`);
const count = (r: SweepReport) => {
  const out: Record<string, number> = {};
  for (const k of kinds(r)) out[k] = (out[k] ?? 0) + 1;
  return out;
};
const heldInRoot = () => fs.readdirSync(root).filter((n) => n.startsWith('.murmur-gc-quarantine.'));

describe('the undo window holds what every rule takes', () => {
  it('a budget does not empty the window the same sweep filled: 20 taken by max_age stay held, none purged', async () => {
    for (let i = 0; i < 20; i++) session(40 + i);
    for (let i = 0; i < 10; i++) session(1 + i * 0.1);
    const young = du(path.join(root)) / 3; // the 10 young sessions, roughly: well under the budget below
    const yaml = `quarantine: 7d\nsessions:\n  - root: ${root}\n    retain: { max_age: 30d }\n    max_bytes: ${Math.round(young * 1.5)}\n`;
    const dry = await sweep(yaml, { dryRun: true });
    const r = await sweep(yaml);
    for (const x of [dry, r]) {
      expect(count(x)).toEqual({ 'remove_session:held:max_age': 20 });
      expect(x.quarantine).toMatchObject({ held: 20, purged: 0 });
    }
    expect(heldInRoot()).toHaveLength(20);
    // the budget counts what is in place: the 10 young fit, nothing more is taken next sweep
    const again = await sweep(yaml);
    expect(again.actions).toEqual([]);
    expect(heldInRoot()).toHaveLength(20);
  });

  it('what max_bytes takes is held too, and goes for good only when its window passes', async () => {
    const ids = Array.from({ length: 10 }, (_, i) => session(10 - i, 40_000));
    const each = du(path.join(root, ids[0]!));
    const yaml = `quarantine: 7d\nsessions:\n  - root: ${root}\n    max_bytes: ${each * 5}\n`;
    const r = await sweep(yaml);
    expect(r.errors).toEqual([]);
    expect(count(r)).toEqual({ 'remove_session:held:max_bytes': 5 });
    expect(r.actions.map((a) => a.kind === 'remove_session' && a.target)).toEqual(ids.slice(0, 5));
    expect(r.budget?.stores[0]).toMatchObject({ held: 5, removed: 0, bytes_freed: 0 });
    expect(heldInRoot()).toHaveLength(5);
    // a week later: the window passed, they go for good; the budget is met without touching more
    const later = await sweep(yaml, { now: NOW + 7 * f.DAY + 1 });
    expect(count(later)).toEqual({ 'purge_quarantine:expired': 5 });
    expect(heldInRoot()).toEqual([]);
  });

  it('keep_free alone removes for good: holds first (the oldest window first), then what this sweep would hold, then in place', async () => {
    const old = [session(60), session(59)];
    const first = await sweep(`quarantine: 7d\nsessions:\n  - root: ${root}\n    retain: { max_age: 30d }\n`, {
      now: NOW - 2 * f.DAY,
    });
    expect(count(first)).toEqual({ 'remove_session:held:max_age': 2 });
    const more = [session(45), session(44)];
    const keep = [session(2), session(1)];
    const each = du(path.join(root, keep[0]!));
    // short by a little less than three sessions: the two holds, then one of this sweep's
    const space = { totalBytes: 1e12, freeBytes: 1e9 - 3 * each + 1 };
    const yaml = `quarantine: 7d\nkeep_free: 1000000000\nsessions:\n  - root: ${root}\n    retain: { max_age: 30d }\n`;
    const dry = await sweep(yaml, { dryRun: true, space });
    const r = await sweep(yaml, { space });
    for (const x of [dry, r]) {
      expect(x.errors).toEqual([]);
      const purged = x.actions.filter((a) => a.kind === 'purge_quarantine');
      expect(purged.map((a) => a.kind === 'purge_quarantine' && [a.target, a.reason])).toEqual([
        [old[0], 'keep_free'],
        [old[1], 'keep_free'],
      ]);
      const taken = x.actions.filter((a) => a.kind === 'remove_session');
      // the older of this sweep's two is taken for good (keep_free), the other held (max_age)
      expect(
        taken.map((a) => a.kind === 'remove_session' && [a.target, a.reason, a.held ? 'held' : a.condemned_by]),
      ).toEqual([
        [more[0], 'keep_free', 'max_age'],
        [more[1], 'max_age', 'held'],
      ]);
    }
    expect(fs.existsSync(path.join(root, keep[0]!))).toBe(true);
    // restore and history say what became of a hold keep_free purged: never "its window passed"
    const configPath = f.writeConfig(tmp, `home: ${home}\n${yaml}`);
    const config = await loadConfig({ configPath, env: { HOME: tmp }, cwd: tmp });
    const refused = await restoreTarget(config, log, { target: old[0]!, dryRun: false }).then(
      () => 'restored',
      (err: unknown) => (err instanceof RefusalError ? `${err.code}: ${err.hint ?? ''}` : String(err)),
    );
    expect(refused).toMatch(
      new RegExp(
        `^restore_not_held: it was deleted for good by sweep ${r.audit}: purged for space \\(keep_free\\) before its window passed`,
      ),
    );
    const hist = f.runCli(['history', '--config', configPath, '--target', old[0]!], tmp);
    expect(hist.stdout).toContain(`deleted for good from the quarantine by sweep ${r.audit}`);
    expect(hist.stdout).toContain('sessions/keep_free: purged for space before its window passed');
    expect(hist.stdout).not.toContain('its undo window passed');
  });
});

describe('the guard covers every rule', () => {
  it('a store it stops loses nothing to age, count or a budget, and it counts sessions only', async () => {
    // a workdir root: sessions with child workdirs and wrk_ logs beside them
    const w = path.join(tmp, 'w');
    const wroot = path.join(w, '.murmur');
    fs.mkdirSync(path.join(w, 'logs'), { recursive: true });
    for (let i = 0; i < 60; i++) {
      const old = i < 50;
      const id = session(old ? 40 + i : 1 + i * 0.01, 1000, wroot);
      const wrk = f.idAt('wrk_', NOW - 50 * f.DAY);
      fs.writeFileSync(path.join(w, 'logs', `${wrk}.log`), 'out\n');
      const t = f.traceText({
        sessionId: id,
        startMs: NOW - (old ? 40 + i : 1) * f.DAY,
        end: true,
        detached: [{ workId: wrk }],
        accounted: [{ workId: wrk, type: 'shell_completed' }],
      }).text;
      fs.writeFileSync(path.join(wroot, id, 'trace.jsonl'), t);
      const m = (NOW - (old ? 40 + i : 1) * f.DAY) / 1000;
      fs.utimesSync(path.join(wroot, id, 'trace.jsonl'), m, m);
    }
    const yaml = `sessions:\n  - workdir: ${w}\n    retain: { max_age: 30d }\n    max_bytes: 1\n`;
    for (const dryRun of [true, false]) {
      const r = await sweep(yaml, { dryRun, unattended: true });
      expect(
        r.actions.filter((a) => a.kind !== 'chmod'),
        `dryRun=${dryRun}`,
      ).toEqual([]);
      expect(r.errors.map((e) => e.code)).toEqual(['blast_radius']);
      expect(r.errors[0]!.detail).toMatch(/would remove or hold 60 of 60 sessions in /);
      // no max_delete: a sweep by hand has no limit, so that is a way on
      expect(r.errors[0]!.detail).toContain('run it once by hand');
    }
    expect(fs.readdirSync(wroot).filter((n) => n.startsWith('ses_'))).toHaveLength(60);
    expect(fs.readdirSync(path.join(w, 'logs'))).toHaveLength(60);
  });

  it('with max_delete set, the way on is --confirm-large or a larger max_delete, never "by hand"', async () => {
    for (let i = 0; i < 30; i++) session(40 + i);
    const r = await sweep(`max_delete: { count: 10 }\nsessions:\n  - root: ${root}\n    retain: { max_age: 30d }\n`);
    expect(r.errors.map((e) => e.code)).toEqual(['blast_radius']);
    expect(r.errors[0]!.detail).toMatch(/would remove or hold 30 of 30 sessions/);
    expect(r.errors[0]!.detail).not.toContain('by hand');
    expect(r.errors[0]!.detail).toContain('--confirm-large');
  });
});

describe('every count names one fate per item', () => {
  it('a sweep that held 5 and removed 15 says so in the summary line, the report and the fates', async () => {
    for (let i = 0; i < 20; i++) session(40 + i, 5000);
    const keepFreeBytes = 1e9;
    const each = du(path.join(root, fs.readdirSync(root)[0]!));
    // keep_free takes 15 of the 20 this sweep would hold
    const space = { totalBytes: 1e12, freeBytes: keepFreeBytes - 15 * each + 1 };
    const r = await sweep(
      `quarantine: 7d\nkeep_free: ${keepFreeBytes}\nsessions:\n  - root: ${root}\n    retain: { max_age: 30d }\n`,
      { space },
    );
    expect(r.errors).toEqual([]);
    const s = summarizeReport(r, 'manual', NOW, NOW + 1);
    expect(s.counts).toMatchObject({ remove_session: 15, hold_session: 5 });
    expect(summaryText(s)).toMatch(/^sweep ok: 15 sessions removed, 5 sessions held;/);
    expect(renderHuman(r)).toContain('Done: 15 sessions removed, 5 sessions held,');
    const fates = r.fates?.find((x) => x.kind === 'sessions' && x.place === root);
    expect(fates).toEqual({
      kind: 'sessions',
      place: root,
      items: 20,
      counts: { 'removed:keep_free': 15, 'held:max_age': 5 },
    });
  });

  it("every store's fates add up to what it holds, held items included", async () => {
    for (let i = 0; i < 6; i++) session(40 + i);
    session(1);
    f.writeRecord(home, 'shey', 'ctx_old', { capsule: 'shey', messages: 3, mtimeMs: NOW - 100 * f.DAY });
    f.writeRecord(home, 'shey', 'ctx_long', { capsule: 'shey', messages: 40 });
    f.writeRecord(home, 'shey', 'ctx_other', { capsule: 'other', messages: 40, mtimeMs: NOW - 100 * f.DAY });
    const yaml = `quarantine: 7d\nsessions:\n  - root: ${root}\n    retain: { max_age: 30d }\nrecords:\n  - capsule: shey\n    retain: { max_age: 90d, max_messages: 4 }\n`;
    const r = await sweep(yaml);
    expect(r.fates).toEqual([
      { kind: 'sessions', place: root, items: 7, counts: { 'held:max_age': 6, 'kept:policy': 1 } },
      {
        kind: 'records',
        place: 'shey',
        items: 3,
        counts: { 'held:max_age': 1, 'truncated:max_messages': 1, 'kept:not_owned': 1 },
      },
    ]);
    const later = await sweep(yaml, { now: NOW + 8 * f.DAY });
    const held = later.fates?.filter((x) => x.kind === 'held') ?? [];
    expect(held.map((h) => [h.items, h.counts])).toEqual([
      [6, { 'purged:expired': 6 }],
      [2, { 'purged:expired': 2 }],
    ]);
  });
});
