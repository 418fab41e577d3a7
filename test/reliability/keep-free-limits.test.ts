// Property: keep_free's limits hold on a real filesystem a capsule fills. A capsule's live session
// filling the disk costs another project at most keep_free's per-sweep share of its sessions a
// sweep, and nothing at all from an entry that says `keep_free: false`; the report names the live
// session that fills it. A capsule exhausting the filesystem's inodes (bytes still free) does not
// stop the sweep: the reserve's inode part is released so the lock and the audit can be written,
// what is due is removed, keep_free frees inodes, and the reserve is put back.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as f from '../helpers/fixtures.js';
import { requirement } from '../helpers/requirements.js';
import { readAudits } from './audit-check.js';
import { figures } from './soak.js';

const MiB = 1 << 20;
const req = requirement('keep_free limits on a filling filesystem (tmpfs)', [
  'root',
  'tmpfs',
  'cmd:mount',
  'cmd:umount',
]);

type Rep = {
  errors: { code: string; detail: string }[];
  skipped: { code: string; detail: string }[];
  actions: { kind: string; target: string; reason: string }[];
  audit: string | null;
  budget: {
    keep_free: {
      short_bytes: number;
      short_bytes_after: number;
      inodes: { required: number; free: number; short: number; short_after: number } | null;
      largest_live: { path: string; bytes: number }[];
      reserve: { released_bytes: number; released_inodes: number; put_back: boolean };
    };
  };
};
const removedBy = (r: Rep) => r.actions.filter((a) => a.kind === 'remove_session').map((a) => [a.target, a.reason]);

describe.runIf(req.run)('keep_free limits on a filling filesystem', () => {
  let T: string;
  let H: string;
  let mounted = false;
  const mount = (opts: string) => {
    execFileSync('mount', ['-t', 'tmpfs', '-o', opts, 'tmpfs', H]);
    mounted = true;
  };
  beforeEach(() => {
    req.check();
    T = f.tempDir('rel-kf-limits');
    H = path.join(T, 'fs');
    fs.mkdirSync(H);
  });
  afterEach(() => {
    if (mounted) execFileSync('umount', ['-l', H]);
    mounted = false;
    f.rmrf(T);
  });

  /** `n` finished sessions of ~300 KiB in `root`, oldest first. */
  const finished = (root: string, n: number, firstDaysAgo: number): string[] =>
    Array.from({ length: n }, (_, i) => {
      const startMs = Date.now() - (firstDaysAgo - i) * f.DAY;
      const id = f.idAt('ses_', startMs);
      f.writeSession(root, { sessionId: id, startMs, end: true, files: { blob: 'x'.repeat(300 << 10) } });
      return id;
    });
  /** The capsule writes into its live session until the filesystem has `leave` bytes free (0: full). */
  const fill = (dir: string, n: number, leave = 0) => {
    const s = fs.statfsSync(H);
    try {
      fs.writeFileSync(path.join(dir, `out-${n}.bin`), Buffer.alloc(Math.max(0, s.bavail * s.bsize - leave), 1));
    } catch {
      // ENOSPC: full
    }
  };
  const emptyOut = (dir: string) => {
    for (const n of fs.readdirSync(dir)) if (n.startsWith('out-')) fs.rmSync(path.join(dir, n));
  };

  it('a capsule filling the disk costs another project at most per_sweep of its sessions a sweep, none with keep_free: false; its live session is named', () => {
    mount('size=64m');
    const home = path.join(H, '.murmur');
    const other = path.join(H, 'other', '.murmur');
    const capsule = path.join(H, 'capsule', '.murmur');
    fs.mkdirSync(home, { mode: 0o700 });
    const ids = finished(other, 40, 60);
    const liveId = f.idAt('ses_', Date.now() - 60_000);
    const liveDir = f.writeSession(capsule, {
      sessionId: liveId,
      startMs: Date.now() - 60_000,
      end: false,
      mtimeMs: Date.now(),
    });
    const policy = (optOut: boolean) =>
      `home: ${home}\nkeep_free: 8M\nsessions:\n  - root: ${other}\n    retain: { max_sessions: 100 }\n${optOut ? '    keep_free: false\n' : ''}  - root: ${capsule}\n    retain: { max_sessions: 100 }\n`;
    const cfg = f.writeConfig(T, policy(false));
    // a first sweep with room puts the reserve in place
    expect(f.runCli(['--config', cfg], H).status).toBe(0);
    const lost: number[] = [];
    for (let sweep = 0; sweep < 5; sweep++) {
      // full (8 MiB short and the reserve's room: more than half of the project's 12 MiB), then
      // 3 MiB short four times
      emptyOut(liveDir);
      fill(liveDir, sweep, sweep === 0 ? 0 : 5 * MiB);
      const present = ids.filter((id) => fs.existsSync(path.join(other, id))).length;
      const dry = f.runCli(['--unattended', '--dry-run', '--config', cfg], H);
      expect(dry.stdout.replace(/\s+/g, ' ')).toMatch(
        new RegExp(`largest live sessions: \\S*/capsule/\\.murmur/${liveId} \\(`),
      );
      // the reserve's bytes are not said to come back while there is no room for them
      if (sweep === 0)
        expect(dry.stdout.replace(/\s+/g, ' ')).not.toMatch(/the reserve (\(bytes and inodes\) )?would be put back/);
      const r = f.runCli(['--json', '--unattended', '--config', cfg], H);
      expect(r.status, r.stdout + r.stderr).toBe(0);
      const rep = f.json<Rep>(r);
      expect(rep.errors).toEqual([]);
      const gone = removedBy(rep).filter(([id]) => ids.includes(id!));
      // at most half (per_sweep's default) of what the project had when the sweep began
      expect(gone.length).toBeLessThanOrEqual(Math.floor(present / 2));
      expect(gone.every(([, why]) => why === 'keep_free')).toBe(true);
      lost.push(gone.length);
      if (sweep === 0) expect(gone).toEqual([]); // all or nothing: what per_sweep allows would not do
      // the live session filling the disk is named, never taken
      expect(rep.budget.keep_free.largest_live[0]?.path).toBe(path.join(capsule, liveId));
      expect(rep.budget.keep_free.largest_live[0]!.bytes).toBeGreaterThan(40 * MiB);
      expect(fs.existsSync(liveDir)).toBe(true);
    }
    const kept = ids.filter((id) => fs.existsSync(path.join(other, id))).length;
    expect(lost.slice(1, 3).every((n) => n > 0)).toBe(true);
    expect(kept).toBeGreaterThanOrEqual(15);

    // the same with the project's entry saying keep_free: false: it loses nothing at all
    const before = ids.filter((id) => fs.existsSync(path.join(other, id)));
    const optOut = f.writeConfig(T, policy(true));
    for (let sweep = 5; sweep < 7; sweep++) {
      emptyOut(liveDir);
      fill(liveDir, sweep, sweep === 5 ? 0 : 5 * MiB);
      const r = f.runCli(['--json', '--unattended', '--config', optOut], H);
      expect(r.status, r.stdout + r.stderr).toBe(0);
      const rep = f.json<Rep>(r);
      expect(removedBy(rep)).toEqual([]);
      const unmet = rep.skipped.find((s) => s.code === 'budget_unmet');
      expect(unmet?.detail).toContain(`largest live sessions: ${path.join(capsule, liveId)} (`);
    }
    expect(ids.filter((id) => fs.existsSync(path.join(other, id)))).toEqual(before);
    figures('keep_free per_sweep', {
      sessions: 40,
      lost_per_sweep: lost.join('/'),
      kept,
      kept_with_opt_out: before.length,
    });
  }, 120_000);

  it('inodes exhausted with bytes free: the sweep still takes its lock, removes what is due, keep_free frees inodes, the reserve comes back', () => {
    mount('size=64m,nr_inodes=600');
    const home = path.join(H, '.murmur');
    const root = path.join(H, 'app', '.murmur');
    fs.mkdirSync(home, { mode: 0o700 });
    // sessions of 9 inodes each: 20 due (40+ days), 20 young
    const session = (daysAgo: number) => {
      const startMs = Date.now() - daysAgo * f.DAY;
      const id = f.idAt('ses_', startMs);
      f.writeSession(root, {
        sessionId: id,
        startMs,
        end: true,
        files: Object.fromEntries(Array.from({ length: 7 }, (_, i) => [`f${i}`, 'x'])),
      });
      return id;
    };
    const due = Array.from({ length: 20 }, (_, i) => session(60 - i));
    const young = Array.from({ length: 20 }, (_, i) => session(20 - i * 0.5));
    const reserveDir = path.join(home, 'gc', '.reserve-inodes');
    const policy = `home: ${home}\nsessions:\n  - root: ${root}\n    retain: { max_age: 30d }\n`;
    // a first sweep with room puts the whole reserve in place (its inode part too)
    const dueLater = f.writeConfig(T, policy.replace('30d', '90d'));
    expect(f.runCli(['--config', dueLater], H).status).toBe(0);
    expect(fs.readdirSync(reserveDir)).toHaveLength(64);
    const freeInodes = () => fs.statfsSync(H).ffree;
    const exhaust = (n: number) => {
      const dir = path.join(H, `filler-${n}`);
      fs.mkdirSync(dir);
      for (let i = 0; ; i++) {
        try {
          fs.writeFileSync(path.join(dir, String(i)), '');
        } catch {
          break; // ENOSPC: no inode left
        }
      }
    };
    exhaust(0);
    expect(freeInodes()).toBe(0);
    expect(fs.statfsSync(H).bavail * fs.statfsSync(H).bsize).toBeGreaterThan(30 * MiB); // bytes are free

    const r = f.runCli(['--json', '--config', f.writeConfig(T, policy)], H);
    expect(r.status, r.stdout + r.stderr).toBe(0);
    const rep = f.json<Rep>(r);
    expect(rep.errors).toEqual([]);
    expect(rep.audit).not.toBeNull();
    expect(removedBy(rep)).toEqual(due.map((id) => [id, 'max_age']));
    expect(readAudits(home).problems).toEqual([]);
    // 20 × 9 inodes freed: enough to put the inode part back with as many to spare
    expect(fs.readdirSync(reserveDir)).toHaveLength(64);

    // keep_free asks its share of the inodes too: 10% of 600
    exhaust(1);
    const kf = f.writeConfig(T, `keep_free: 10%\n${policy}`);
    const dry = f.runCli(['--json', '--dry-run', '--config', kf], H);
    expect(dry.status, dry.stderr).toBe(0);
    const real = f.runCli(['--json', '--config', kf], H);
    expect(real.status, real.stdout + real.stderr).toBe(0);
    const k = f.json<Rep>(real);
    expect(k.errors).toEqual([]);
    expect(k.budget.keep_free.inodes).toMatchObject({ required: 60, short_after: 0 });
    expect(k.budget.keep_free.reserve).toMatchObject({ released_inodes: 65 });
    const taken = removedBy(k);
    expect(taken.length).toBeGreaterThan(0);
    expect(taken.length).toBeLessThanOrEqual(10); // per_sweep: half of the 20
    expect(taken).toEqual(young.slice(0, taken.length).map((id) => [id, 'keep_free']));
    expect(removedBy(f.json<Rep>(dry))).toEqual(taken);
    expect(freeInodes()).toBeGreaterThanOrEqual(60);
    expect(readAudits(home).problems).toEqual([]);
    figures('keep_free inodes', {
      inodes: 600,
      due_removed_at_0_free: due.length,
      keep_free_removed: taken.length,
      free_inodes_after: freeInodes(),
    });
  }, 120_000);
});
