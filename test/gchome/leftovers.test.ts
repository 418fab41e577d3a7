// What a killed murmur-gc leaves under <home>/gc that nobody else would ever remove — a record or
// trace lock directory of a dead holder, a held item that never got its sidecar — is removed by
// the next sweep's recover step, and only when its maker is provably dead. In process.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runSweep } from '../../src/sweep/pipeline.js';
import type { SweepReport } from '../../src/sweep/report.js';
import { loadConfig } from '../../src/config/load.js';
import { recordLockPath, traceLockPath } from '../../src/gchome/lock.js';
import { startTimeOf } from '../../src/runtime/running.js';
import { createLogger } from '../../src/log.js';
import * as f from '../helpers/fixtures.js';

let tmp: string;
let home: string;
const log = createLogger({ level: 'silent' });
const HOUR = 3_600_000;

beforeEach(() => {
  tmp = fs.realpathSync(f.tempDir('mgc-leftovers'));
  home = path.join(tmp, 'home');
  fs.mkdirSync(home, { mode: 0o700 });
});
afterEach(() => f.rmrf(tmp));

async function sweep(nowMs = Date.now()): Promise<SweepReport> {
  const configPath = f.writeConfig(tmp, `home: ${home}\nquarantine: 24h\n`);
  const config = await loadConfig({ configPath, env: { HOME: tmp }, cwd: tmp });
  return runSweep({ config, dryRun: false, log, now: () => nowMs });
}

const deadPid = (): number =>
  Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout);

/** A lock directory with an owner file naming it, as a holder leaves it when killed. */
function lockHeldBy(lockPath: string, pid: number, startTime: string | null): void {
  fs.mkdirSync(path.dirname(lockPath), { recursive: true, mode: 0o700 });
  fs.mkdirSync(lockPath);
  const ino = String(fs.statSync(lockPath).ino);
  fs.writeFileSync(`${lockPath}.owner.json`, JSON.stringify({ pid, start_time: startTime, lock_ino: ino }));
}

const debrisPaths = (r: SweepReport) => r.actions.flatMap((a) => (a.kind === 'remove_debris' ? [a.path] : [])).sort();

describe('stale lock directories', () => {
  it("a record or trace lock left by a killed holder is removed by the next sweep; a live holder's and one of unknown holder stay", async () => {
    const dead = deadPid();
    const deadRecord = recordLockPath(home, 'shey', 'ctx_dead');
    const deadTrace = traceLockPath(home, '/x/.murmur', 'ses_1');
    lockHeldBy(deadRecord, dead, null);
    // a pid now reused by another process: the start time tells it is not the holder
    lockHeldBy(deadTrace, process.ppid, '1');
    const live = recordLockPath(home, 'shey', 'ctx_live');
    lockHeldBy(live, process.ppid, (await startTimeOf(process.ppid)) ?? null);
    const unknown = recordLockPath(home, 'shey', 'ctx_unknown');
    fs.mkdirSync(unknown);
    const r = await sweep();
    expect(r.errors).toEqual([]);
    expect(fs.existsSync(deadRecord)).toBe(false);
    expect(fs.existsSync(`${deadRecord}.owner.json`)).toBe(false);
    expect(fs.existsSync(deadTrace)).toBe(false);
    expect(fs.existsSync(live)).toBe(true);
    expect(fs.existsSync(`${live}.owner.json`)).toBe(true);
    expect(fs.existsSync(unknown)).toBe(true);
    expect(debrisPaths(r)).toEqual([deadRecord, deadTrace].sort());
    expect(fs.readdirSync(path.dirname(deadRecord)).sort()).toEqual([
      'ctx_live.lock',
      'ctx_live.lock.owner.json',
      'ctx_unknown.lock',
    ]);
  });
});

describe('a held item that never became a hold', () => {
  const qdir = () => path.join(home, 'gc', 'quarantine');
  function itemDir(untilMs: number, files: string[], ageMs: number): string {
    const entry = `${untilMs}.${Math.random().toString(16).slice(2, 10).padEnd(8, '0')}`;
    const dir = path.join(qdir(), entry);
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    for (const n of files) fs.writeFileSync(path.join(dir, n), '{"kind":"con');
    const t = (Date.now() - ageMs) / 1000;
    fs.utimesSync(dir, t, t);
    return dir;
  }

  it("holding only the sidecar temp of a dead process (killed writing item.json), it is removed; a live writer's stays", async () => {
    const dead = deadPid();
    const killed = itemDir(Date.now() + 24 * HOUR, [`.item.json.${dead}.18c0ffee.tmp`], 0);
    const writing = itemDir(Date.now() + 24 * HOUR, [`.item.json.${process.ppid}.18c0ffee.tmp`], 0);
    const r = await sweep();
    expect(r.errors).toEqual([]);
    expect(r.skipped).toEqual([]);
    expect(fs.existsSync(killed)).toBe(false);
    expect(fs.readdirSync(writing)).toEqual([`.item.json.${process.ppid}.18c0ffee.tmp`]);
    expect(debrisPaths(r)).toEqual([path.join(killed, `.item.json.${dead}.18c0ffee.tmp`), killed].sort());
  });

  it('a dead sidecar temp beside a held item goes, the item stays; an item directory empty for over an hour goes, a fresh one stays', async () => {
    const dead = deadPid();
    const until = Date.now() + 24 * HOUR;
    const heldItem = itemDir(until, [`.item.json.${dead}.18c0ffee.tmp`, 'dropped.jsonl'], 2 * HOUR);
    fs.writeFileSync(
      path.join(heldItem, 'item.json'),
      JSON.stringify({
        kind: 'truncation',
        store: 'shey',
        context: 'ctx_a',
        removed_ms: Date.now() - 2 * HOUR,
        until_ms: until,
        reason: 'max_messages',
        run: 'ses_x',
        messages: 1,
        at_ms: '1',
        state: 'held',
      }) + '\n',
    );
    const t = (Date.now() - 2 * HOUR) / 1000;
    fs.utimesSync(heldItem, t, t);
    const emptyOld = itemDir(until, [], 2 * HOUR);
    const emptyNew = itemDir(until, [], 0);
    const r = await sweep();
    expect(r.errors).toEqual([]);
    expect(fs.readdirSync(heldItem).sort()).toEqual(['dropped.jsonl', 'item.json']);
    expect(fs.existsSync(emptyOld)).toBe(false);
    expect(fs.existsSync(emptyNew)).toBe(true);
    expect(debrisPaths(r)).toEqual([path.join(heldItem, `.item.json.${dead}.18c0ffee.tmp`), emptyOld].sort());
  });
});
