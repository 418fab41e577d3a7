// Property: `keep_free` acts on a full filesystem — the very case it exists for. With the
// filesystem at 0 B free, one sweep releases murmur-gc's reserve (`<home>/gc/.reserve`) to write
// its audit first, then removes the fewest oldest items that bring free space to keep_free with
// room to put the reserve back, each audited, and puts it back — so the next full disk is met the
// same way; the dry run reports the same plan and releases nothing.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as f from '../helpers/fixtures.js';
import { requirement } from '../helpers/requirements.js';
import { readAudits } from './audit-check.js';
import { count, figures } from './soak.js';

const MiB = 1 << 20;
const req = requirement('keep_free on a full filesystem (tmpfs)', ['root', 'tmpfs', 'cmd:mount', 'cmd:umount']);

describe.runIf(req.run)('keep_free on a full filesystem', () => {
  let T: string;
  let H: string;
  let mounted = false;
  beforeEach(() => {
    req.check();
    T = f.tempDir('rel-full-disk');
    H = path.join(T, 'fs');
    fs.mkdirSync(H);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=20m', 'tmpfs', H]);
    mounted = true;
  });
  afterEach(() => {
    if (mounted) execFileSync('umount', ['-l', H]);
    mounted = false;
    f.rmrf(T);
  });

  const free = () => {
    const s = fs.statfsSync(H);
    return s.bavail * s.bsize;
  };
  const allocated = (p: string) => Number(fs.statSync(p, { bigint: true }).blocks) * 512;
  type Rep = {
    errors: { code: string; detail: string }[];
    actions: { kind: string; target: string; reason: string }[];
    audit: string | null;
    budget: {
      keep_free: { short_bytes: number; reserve: { released_bytes: number; room_bytes: number; put_back: boolean } };
    };
  };
  const removedBy = (r: Rep) => r.actions.filter((a) => a.kind === 'remove_session').map((a) => [a.target, a.reason]);

  it('at 0 B free one sweep brings it to keep_free, audited, every time the disk fills again; the dry run says the same and releases nothing', () => {
    const home = path.join(H, '.murmur');
    const root = path.join(H, 'app', '.murmur');
    const reserve = path.join(home, 'gc', '.reserve');
    const now = Date.now();
    // 48 finished sessions of ~300 KiB, oldest first
    const ids = Array.from({ length: 48 }, (_, i) => {
      const startMs = now - (48 - i) * f.DAY;
      const id = f.idAt('ses_', startMs);
      f.writeSession(root, { sessionId: id, startMs, end: true, files: { blob: 'x'.repeat(300 << 10) } });
      return id;
    });
    const size = new Map(
      ids.map((id) => [
        id,
        allocated(path.join(root, id)) +
          allocated(path.join(root, id, 'trace.jsonl')) +
          allocated(path.join(root, id, 'blob')),
      ]),
    );
    fs.mkdirSync(home, { mode: 0o700 });
    const cfg = f.writeConfig(
      T,
      `home: ${home}\nkeep_free: 2M\nsessions:\n  - root: ${root}\n    retain: { max_sessions: 50 }\n`,
    );

    // With room to spare: nothing to remove; the reserve is put in place, real blocks.
    const first = f.runCli(['--json', '--config', cfg], H);
    expect(first.status, first.stderr).toBe(0);
    expect(removedBy(f.json<Rep>(first))).toEqual([]);
    expect(allocated(reserve)).toBe(MiB);

    let gone = 0;
    const rounds = count(3, 6);
    const perRound: number[] = [];
    let minFree = Infinity;
    for (let round = 0; round < rounds; round++) {
      // Fill the filesystem to its last byte.
      try {
        fs.writeFileSync(path.join(H, `filler-${round}`), Buffer.alloc(20 * MiB, 1));
      } catch {
        // ENOSPC: full
      }
      expect(free()).toBe(0);

      const dry = round === 0 ? f.runCli(['--json', '--dry-run', '--config', cfg], H) : undefined;
      if (dry) {
        expect(dry.status, dry.stderr).toBe(0);
        expect(allocated(reserve)).toBe(MiB);
        expect(free()).toBe(0);
      }

      const real = f.runCli(['--json', '--config', cfg], H);
      expect(real.status, real.stdout + real.stderr).toBe(0);
      const rep = f.json<Rep>(real);
      expect(rep.errors).toEqual([]);
      // the fewest oldest that free keep_free and room for the reserve (which the sweep released)
      const removed = removedBy(rep);
      expect(removed.length).toBeGreaterThan(0);
      expect(removed).toEqual(ids.slice(gone, gone + removed.length).map((id) => [id, 'keep_free']));
      const freed = removed.map(([id]) => size.get(id!)!);
      const short = rep.budget.keep_free.short_bytes;
      expect(rep.budget.keep_free.reserve).toMatchObject({ released_bytes: MiB, room_bytes: MiB, put_back: true });
      expect(freed.slice(0, -1).reduce((n, b) => n + b, 0)).toBeLessThan(short);
      expect(freed.reduce((n, b) => n + b, 0)).toBeGreaterThanOrEqual(short);
      if (dry) expect(removedBy(f.json<Rep>(dry))).toEqual(removed);
      gone += removed.length;
      perRound.push(removed.length);
      minFree = Math.min(minFree, free());
      expect(free()).toBeGreaterThanOrEqual(2 * MiB);
      expect(allocated(reserve)).toBe(MiB);
      for (const id of ids.slice(gone)) expect(fs.existsSync(path.join(root, id))).toBe(true);
      const audits = readAudits(home);
      expect(audits.problems).toEqual([]);
      for (const id of ids.slice(0, gone)) expect(audits.sessions.get(id)).toBe(1);
    }
    figures('full-disk keep_free', {
      sweeps_at_0B: rounds,
      removed_per_sweep: perRound.join('/'),
      min_free_after_bytes: minFree,
    });
  }, 120_000);

  it('keep_free configured only once the disk is full still acts: the reserve is there whenever the home is', () => {
    const home = path.join(H, '.murmur');
    const root = path.join(H, 'app', '.murmur');
    const now = Date.now();
    const ids = Array.from({ length: 20 }, (_, i) => {
      const startMs = now - (20 - i) * f.DAY;
      const id = f.idAt('ses_', startMs);
      f.writeSession(root, { sessionId: id, startMs, end: true, files: { blob: 'x'.repeat(300 << 10) } });
      return id;
    });
    fs.mkdirSync(home, { mode: 0o700 });
    const policy = `home: ${home}\nsessions:\n  - root: ${root}\n    retain: { max_sessions: 50 }\n`;
    // sweeps without keep_free (nothing to do) leave the reserve in place
    const before = f.runCli(['--config', f.writeConfig(T, policy)], H);
    expect(before.status, before.stderr).toBe(0);
    expect(allocated(path.join(home, 'gc', '.reserve'))).toBe(MiB);
    try {
      fs.writeFileSync(path.join(H, 'filler'), Buffer.alloc(20 * MiB, 1));
    } catch {
      // ENOSPC: full
    }
    expect(free()).toBe(0);
    // the operator adds keep_free now: the sweep releases the reserve, writes its audit, frees the space
    const r = f.runCli(['--json', '--config', f.writeConfig(T, `keep_free: 2M\n${policy}`)], H);
    expect(r.status, r.stdout + r.stderr).toBe(0);
    const rep = f.json<Rep>(r);
    expect(rep.errors).toEqual([]);
    expect(rep.audit).not.toBeNull();
    expect(removedBy(rep).length).toBeGreaterThan(0);
    expect(removedBy(rep)).toEqual(ids.slice(0, removedBy(rep).length).map((id) => [id, 'keep_free']));
    expect(free()).toBeGreaterThanOrEqual(2 * MiB);
    expect(readAudits(home).problems).toEqual([]);
  }, 60_000);
});
