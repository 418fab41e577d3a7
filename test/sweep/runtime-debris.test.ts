// What killed runtimes leave under ~/.murmur and nothing of the runtime removes: the debris step
// removes it once the process is gone (docs/design.md §5).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runSweep } from '../../src/sweep/pipeline.js';
import type { SweepReport } from '../../src/sweep/report.js';
import { loadConfig } from '../../src/config/load.js';
import { startTimeOf } from '../../src/runtime/running.js';
import { createLogger } from '../../src/log.js';
import * as f from '../helpers/fixtures.js';

let tmp: string;
let home: string;
let root: string;
const log = createLogger({ level: 'silent' });
const now = Date.now();
const HOUR = 3_600_000;

beforeEach(() => {
  tmp = fs.realpathSync(f.tempDir('mgc-rdebris'));
  home = path.join(tmp, 'home');
  root = path.join(tmp, 'app', '.murmur');
  fs.mkdirSync(path.join(home, 'running'), { recursive: true, mode: 0o700 });
  fs.mkdirSync(root, { recursive: true });
});
afterEach(() => f.rmrf(tmp));

async function sweep(dryRun = false): Promise<SweepReport> {
  const configPath = f.writeConfig(tmp, `home: ${home}\nsessions:\n  - root: ${root}\n`);
  return runSweep({ config: await loadConfig({ configPath, env: { HOME: tmp }, cwd: tmp }), dryRun, log });
}

/** A pid that existed and is gone. */
function deadPid(): number {
  const r = spawnSync('true');
  return r.pid ?? 999_999;
}

function record(session: string, pid: number, start: string): string {
  const p = path.join(home, 'running', `${session}.json`);
  const o = {
    session_id: session,
    url: '127.0.0.1:1',
    pid,
    process_start: start,
    capsule_name: 'demo',
    capsule_version: '1.0.0',
    workdir: path.join(root, session),
    outlives_launcher: false,
    started_at: '2026-01-01T00:00:00Z',
  };
  fs.writeFileSync(p, JSON.stringify(o, null, 2), { mode: 0o600 });
  return p;
}

function staging(session: string, pid: number, ageMs: number): string {
  const p = path.join(home, 'running', `${session}.json.writing-${pid}`);
  fs.writeFileSync(p, '{"session_id":', { mode: 0o600 });
  const t = (now - ageMs) / 1000;
  fs.utimesSync(p, t, t);
  return p;
}

describe('runtime crash debris', () => {
  it('dead pids: staging files and running records go; live ones (and young staging files) stay', async () => {
    const dead = deadPid();
    const live = process.ppid;
    const liveStart = (await startTimeOf(live)) ?? 'x';
    const ses = () => f.idAt('ses_', now - f.DAY);
    const goneStaging = staging(ses(), dead, 2 * HOUR);
    const youngStaging = staging(ses(), dead, 60_000);
    const liveStaging = staging(ses(), live, 2 * HOUR);
    const goneRecord = record(ses(), dead, '123');
    const reusedPid = record(ses(), live, 'not-its-start-token');
    const liveRecord = record(ses(), live, liveStart);
    const ctxDir = path.join(home, 'conversations', 'demo', 'ctx_1');
    fs.mkdirSync(ctxDir, { recursive: true });
    fs.writeFileSync(path.join(ctxDir, 'conversation.jsonl'), f.messageLine(f.idAt('msg_', now)) + '\n');
    const tmpFile = path.join(ctxDir, `.conversation.jsonl.${dead}.${f.hex(32)}.tmp`);
    fs.writeFileSync(tmpFile, 'partial');

    const dry = await sweep(true);
    const listed = dry.actions.filter((a) => a.kind === 'remove_debris').map((a) => ('path' in a ? a.path : ''));
    expect(listed.sort()).toEqual([goneStaging, goneRecord, reusedPid, tmpFile].sort());
    expect(fs.existsSync(goneStaging) && fs.existsSync(goneRecord)).toBe(true);

    const r = await sweep();
    expect(r.errors).toEqual([]);
    for (const p of [goneStaging, goneRecord, reusedPid, tmpFile]) expect(fs.existsSync(p), p).toBe(false);
    for (const p of [youngStaging, liveStaging, liveRecord]) expect(fs.existsSync(p), p).toBe(true);
    const codes = r.actions
      .filter((a) => a.kind === 'remove_debris' && a.path.includes('/running/'))
      .map((a) => ('code' in a ? a.code : ''));
    expect(codes).toEqual(['runtime_debris', 'runtime_debris', 'runtime_debris']);
  });

  it('a stale record whose session still has unreconciled work stays until that work is reconciled', async () => {
    const id = f.idAt('ses_', now - f.DAY);
    f.writeSession(root, {
      sessionId: id,
      startMs: now - f.DAY,
      end: false,
      detached: [{ workId: f.idAt('wrk_', now - f.DAY) }],
    });
    const rec = record(id, deadPid(), '1');
    const first = await sweep();
    expect(first.actions.some((a) => a.kind === 'shell_lost')).toBe(true);
    expect(fs.existsSync(rec)).toBe(true);
    await sweep();
    expect(fs.existsSync(rec)).toBe(false);
  });
});
