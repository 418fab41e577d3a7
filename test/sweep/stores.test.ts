// `status` store sizes are allocated bytes (what du counts), as the disk budgets count them.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { surveyStores } from '../../src/sweep/stores.js';
import { renderStatus, type StatusDoc } from '../../src/commands/status.js';
import * as f from '../helpers/fixtures.js';

let tmp: string;
beforeEach(() => {
  tmp = fs.realpathSync(f.tempDir('mgc-stores'));
});
afterEach(() => f.rmrf(tmp));

function duBytes(...paths: string[]): number {
  return paths.reduce(
    (n, p) => n + Number(execFileSync('du', ['-s', '-B1', p], { encoding: 'utf8' }).split('\t')[0]),
    0,
  );
}

describe('surveyStores: sizes', () => {
  it("a sparse 1 TiB file in a session and in a context counts the blocks it holds: the sizes are du's", async () => {
    const home = path.join(tmp, 'home');
    const root = path.join(tmp, 'app', '.murmur');
    const now = Date.now();
    const ses = [1, 2].map((d) =>
      f.writeSession(root, {
        sessionId: f.idAt('ses_', now - d * f.DAY),
        startMs: now - d * f.DAY,
        end: true,
        files: { blob: 'x'.repeat(10_000) },
      }),
    );
    fs.writeFileSync(path.join(ses[0]!, 'huge.bin'), 'x');
    fs.truncateSync(path.join(ses[0]!, 'huge.bin'), 2 ** 40);
    f.writeRecord(home, 'shey', 'ctx-a', { capsule: 'shey', messages: 30 });
    f.writeRecord(home, 'shey', 'ctx-b', { capsule: 'shey', messages: 5 });
    fs.writeFileSync(path.join(home, 'conversations', 'shey', 'ctx-b', 'attachment'), 'x');
    fs.truncateSync(path.join(home, 'conversations', 'shey', 'ctx-b', 'attachment'), 2 ** 40);
    const configPath = f.writeConfig(tmp, `home: ${home}\nsessions:\n  - root: ${root}\n`);
    const config = await loadConfig({ configPath, env: { HOME: tmp }, cwd: tmp });
    const sizes = (await surveyStores(config, Date.now())).sizes;
    expect(sizes.sessions.bytes).toBe(duBytes(...ses));
    expect(sizes.sessions.bytes).toBeLessThan(1 << 20);
    expect(sizes.records.bytes).toBe(
      duBytes(path.join(home, 'conversations', 'shey', 'ctx-a'), path.join(home, 'conversations', 'shey', 'ctx-b')),
    );
    expect(sizes.records.bytes).toBeLessThan(1 << 20);
  });
});

describe('status: what lives beside the sessions of a workdir root', () => {
  it('sizes tied and orphaned child workdirs, wrk_ logs, other logs and the capsule files, per root', async () => {
    const now = Date.now();
    const W = path.join(tmp, 'app');
    const root = path.join(W, '.murmur');
    const mk = (name: string) => {
      const d = path.join(root, 'children', name);
      f.writeSession(path.join(d, '.murmur'), {
        sessionId: f.idAt('ses_', now - 5 * f.DAY),
        startMs: now - 5 * f.DAY,
        end: true,
        files: { blob: 'x'.repeat(8000) },
      });
      return d;
    };
    const tied = mk('worker-aaaaaaaaaaaaaaaa');
    const orphan = mk('worker-bbbbbbbbbbbbbbbb');
    const sid = f.idAt('ses_', now - f.DAY);
    const start = JSON.stringify({
      event_type: 'delegation_start',
      event_id: f.idAt('evt_', now),
      parent_id: null,
      session_id: sid,
      timestamp: now,
      delegation_id: 'd1',
      capsule: 'worker',
      version: '1',
      child_session_id: f.idAt('ses_', now),
      child_workdir: '.murmur/children/worker-aaaaaaaaaaaaaaaa',
    });
    f.writeSession(root, { sessionId: sid, startMs: now - f.DAY, end: true, extra: start + '\n' });
    fs.mkdirSync(path.join(W, 'logs'));
    fs.writeFileSync(path.join(W, 'logs', `${f.idAt('wrk_', now)}.log`), 'w'.repeat(5000));
    fs.writeFileSync(path.join(W, 'logs', 'shell-1700000000000.log'), 's'.repeat(20000));
    fs.writeFileSync(path.join(W, 'task.md'), 't');
    fs.mkdirSync(path.join(W, 'checkpoints'));
    const configPath = f.writeConfig(tmp, `home: ${path.join(tmp, 'home')}\nsessions:\n  - root: ${root}\n`);
    const sizes = (await surveyStores(await loadConfig({ configPath, env: { HOME: tmp }, cwd: tmp }), Date.now()))
      .sizes;
    const b = sizes.sessions.roots[0]?.beside;
    expect(b).toMatchObject({
      workdir: W,
      tied: { count: 1, bytes: duBytes(tied) },
      orphaned: { count: 1, bytes: duBytes(orphan) },
      work_logs: { count: 1 },
      other_logs: { count: 1 },
      unreadable: 0,
    });
    expect(b?.capsule.map((c) => c.name).sort()).toEqual(['checkpoints', 'task.md']);
    const doc = {
      home: tmp,
      home_exists: true,
      state_file: '',
      state: 'missing',
      daemon: {
        running: false,
        why: 'x',
        pid: null,
        start_time: null,
        started_ms: null,
        stopped_ms: null,
        config: null,
        schedule: null,
      },
      current_sweep: null,
      last_sweep: null,
      next_run_ms: null,
      timer: null,
      stores: sizes,
      next_expiries: { purge: null, max_age: null },
      metrics: {} as StatusDoc['metrics'],
      protection: { file: '', items: 0, unreadable: null },
    } as StatusDoc;
    const text = renderStatus(doc);
    expect(text).toMatch(/children +tied +1 child workdir/);
    expect(text).toMatch(/children +orphaned +1 child workdir/);
    expect(text).toMatch(/capsule +task\.md checkpoints|capsule +checkpoints task\.md/);
  });
});
