// Properties (resource faults and concurrency): disk full during a rewrite and a record lock held
// by another process leave the original whole, carry a stable code, and the sweep goes on; two
// sweeps started together never work at the same time (the loser exits 75); `conversation
// truncate` during a sweep leaves one coherent record.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acquireLock, ensureLockDir, recordLockPath } from '../../src/gchome/lock.js';
import { Dir } from '../../src/fsx/safe-fs.js';
import * as f from '../helpers/fixtures.js';
import { requirement } from '../helpers/requirements.js';
import { readAudits } from './audit-check.js';
import { figures } from './soak.js';

let T: string;
const mounts: string[] = [];
beforeAll(() => {
  T = f.tempDir('rel-faults');
});
afterAll(() => {
  for (const m of mounts) spawnSync('umount', ['-l', m]);
  if (T) f.rmrf(T);
});

type Rep = {
  actions: { kind: string; target?: string }[];
  skipped: { code: string; target: string; detail: string }[];
  errors: { code: string; target: string; detail: string }[];
};

const tmpfs = requirement('disk-full faults (tmpfs)', ['root', 'tmpfs', 'cmd:mount', 'cmd:umount']);

describe('resource faults', () => {
  it.runIf(tmpfs.run)(
    'disk full during a rewrite: the original stays whole, the error carries its code, no temp is left, the sweep goes on',
    () => {
      tmpfs.check();
      const W = path.join(T, 'full');
      fs.mkdirSync(W);
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', W]);
      mounts.push(W);
      const home = path.join(W, '.murmur');
      const big = f.writeRecord(home, 'shey', 'ctx_big', { capsule: 'shey', messages: 6000 });
      const before = fs.readFileSync(big.file);
      fs.mkdirSync(path.join(home, 'gc'), { mode: 0o700 });
      // Elsewhere (another filesystem): an old session the same sweep must still remove.
      const root = path.join(T, 'fullroot', '.murmur');
      const old = f.writeSession(root, { sessionId: f.idAt('ses_', Date.now() - 60 * f.DAY), end: true });
      const cfg = f.writeConfig(
        T,
        `sessions:\n  - root: ${root}\n    retain: { max_age: 30d }\nrecords:\n  - capsule: shey\n    retain: { max_messages: 5000 }\n`,
      );
      // Leave ~40 KiB: the audit fits, the rewritten record (hundreds of KiB) does not.
      const filler = path.join(W, 'filler');
      const free = () => Number(execFileSync('df', ['--output=avail', '-B1', W]).toString().split('\n')[1]);
      fs.writeFileSync(filler, Buffer.alloc(Math.max(0, free() - 40 * 1024)));
      const r = spawnSync(process.execPath, [f.BIN, '--json', '--config', cfg], {
        env: f.cliEnv(W),
        encoding: 'utf8',
        timeout: 120_000,
      });
      const rep = f.json<Rep>({ status: r.status, stdout: r.stdout, stderr: r.stderr });
      expect(r.status).toBe(1);
      expect(rep.errors).toContainEqual(expect.objectContaining({ code: 'io_error', target: 'shey/ctx_big' }));
      expect(rep.errors.find((e) => e.target === 'shey/ctx_big')?.detail).toMatch(/ENOSPC/);
      expect(fs.readFileSync(big.file).equals(before)).toBe(true);
      expect(fs.readdirSync(path.dirname(big.file)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
      expect(fs.existsSync(old)).toBe(false);
      const a = readAudits(home);
      expect(a.problems).toEqual([]);
      expect(a.dropped.has('ctx_big')).toBe(false);
    },
  );

  it('a record lock held by another process: that record is skipped (storage_busy), the others are done', async () => {
    const W = path.join(T, 'locked');
    const home = path.join(W, '.murmur');
    const a = f.writeRecord(home, 'shey', 'ctx_a', { capsule: 'shey', messages: 20 });
    const b = f.writeRecord(home, 'shey', 'ctx_b', { capsule: 'shey', messages: 20 });
    const before = fs.readFileSync(a.file);
    const hd = await Dir.open(home);
    await ensureLockDir(hd, ['shey']);
    await hd.close();
    const lock = await acquireLock(recordLockPath(home, 'shey', 'ctx_a'), { waitMs: 0 });
    expect(lock).toBeDefined();
    try {
      const cfg = f.writeConfig(W, `records:\n  - capsule: shey\n    retain: { max_messages: 5 }\n`);
      const r = await f.runCliAsync(['--json', '--config', cfg], W);
      const rep = f.json<Rep>(r);
      expect(rep.skipped).toContainEqual(expect.objectContaining({ code: 'storage_busy', target: 'shey/ctx_a' }));
      expect(fs.readFileSync(a.file).equals(before)).toBe(true);
      expect(f.readLines(b.file).length).toBe(6);
      expect(r.status).toBe(0);
    } finally {
      await lock?.release();
    }
  });
});

describe('concurrency', () => {
  it('two sweeps started together: never both at work; the one that loses the lock exits 75', async () => {
    const W = path.join(T, 'two');
    const root = path.join(W, 'app', '.murmur');
    const now = Date.now();
    for (let i = 0; i < 150; i++)
      f.writeSession(root, {
        sessionId: f.idAt('ses_', now - (40 + i) * f.DAY),
        end: true,
        files: { 'w/a': 'a', 'w/b': 'b' },
      });
    const cfg = f.writeConfig(W, `sessions:\n  - root: ${root}\n    retain: { max_age: 30d }\n`);
    const [x, y] = await Promise.all([
      f.runCliAsync(['--json', '--config', cfg], W),
      f.runCliAsync(['--json', '--config', cfg], W),
    ]);
    const statuses = [x.status, y.status].sort();
    expect([
      [0, 75],
      [0, 0],
    ]).toContainEqual(statuses);
    if (statuses[1] === 75) expect((x.status === 75 ? x : y).stderr).toContain('storage_busy');
    expect(fs.readdirSync(root).filter((n) => n.startsWith('ses_'))).toEqual([]);
    // Every session removed once, by one of them.
    const audit = readAudits(path.join(W, '.murmur'));
    expect(audit.problems).toEqual([]);
    expect(audit.sessions.size).toBe(150);
    expect([...audit.sessions.values()].every((n) => n === 1)).toBe(true);
    figures('two-sweeps', { statuses: statuses.join('/') });
  });

  it('conversation truncate during a sweep that truncates the same record: one coherent record, nothing lost beyond what was dropped', async () => {
    const W = path.join(T, 'cnv');
    const home = path.join(W, '.murmur');
    const rec = f.writeRecord(home, 'shey', 'ctx_1', { capsule: 'shey', messages: 30_000 });
    const all = f.readLines(rec.file).slice(1);
    const cfg = f.writeConfig(W, `records:\n  - capsule: shey\n    retain: { max_messages: 500 }\n`);
    const [sw, tr] = await Promise.all([
      f.runCliAsync(['--json', '--config', cfg], W),
      f.runCliAsync(['conversation', 'truncate', 'ctx_1', '--keep', '300', '--config', cfg], W),
    ]);
    expect([0, 75]).toContain(tr.status);
    expect([0, 75]).toContain(sw.status);
    const lines = f.readLines(rec.file);
    const head = JSON.parse(lines[0]!) as { truncated: { dropped: number } };
    const kept = lines.slice(1);
    expect(kept.length === 300 || kept.length === 500).toBe(true);
    expect(kept).toEqual(all.slice(all.length - kept.length));
    expect(head.truncated.dropped).toBe(all.length - kept.length);
    figures('truncate-during-sweep', { sweep: sw.status ?? -1, truncate: tr.status ?? -1, kept: kept.length });
  });
});
