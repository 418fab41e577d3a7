// Property: `keep_free` acts on a full filesystem — the very case it exists for. With the
// filesystem at 0 B free, one sweep releases murmur-gc's reserve (`<home>/gc/.reserve`) to write
// its audit first, then removes the fewest oldest items that bring free space to keep_free, each
// audited; the dry run reports the same plan and releases nothing; the reserve comes back once
// there is room for it beyond keep_free.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as f from '../helpers/fixtures.js';
import { requirement } from '../helpers/requirements.js';
import { readAudits } from './audit-check.js';

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
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', H]);
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
  type Rep = { errors: { code: string; detail: string }[]; actions: { kind: string; target: string; reason: string }[]; audit: string | null };
  const removedBy = (r: Rep) => r.actions.filter((a) => a.kind === 'remove_session').map((a) => [a.target, a.reason]);

  it('at 0 B free one sweep brings it to keep_free, audited; the dry run says the same and releases nothing', () => {
    const home = path.join(H, '.murmur');
    const root = path.join(H, 'app', '.murmur');
    const reserve = path.join(home, 'gc', '.reserve');
    const now = Date.now();
    // twelve finished sessions of ~300 KiB, oldest first
    const ids = Array.from({ length: 12 }, (_, i) => {
      const startMs = now - (12 - i) * f.DAY;
      const id = f.idAt('ses_', startMs);
      f.writeSession(root, { sessionId: id, startMs, end: true, files: { blob: 'x'.repeat(300 << 10) } });
      return id;
    });
    fs.mkdirSync(home, { mode: 0o700 });
    const cfg = f.writeConfig(T, `home: ${home}\nkeep_free: 2M\nsessions:\n  - root: ${root}\n    retain: { max_sessions: 50 }\n`);

    // With room to spare: nothing to remove; the reserve is put in place, real blocks.
    const first = f.runCli(['--json', '--config', cfg], H);
    expect(first.status, first.stderr).toBe(0);
    expect(removedBy(f.json<Rep>(first))).toEqual([]);
    expect(allocated(reserve)).toBe(MiB);

    // Fill the filesystem to its last byte.
    try {
      fs.writeFileSync(path.join(H, 'filler'), Buffer.alloc(8 * MiB, 1));
    } catch {
      // ENOSPC: full
    }
    expect(free()).toBe(0);

    const dry = f.runCli(['--json', '--dry-run', '--config', cfg], H);
    expect(dry.status, dry.stderr).toBe(0);
    expect(allocated(reserve)).toBe(MiB);
    expect(free()).toBe(0);

    const real = f.runCli(['--json', '--config', cfg], H);
    expect(real.status, real.stdout + real.stderr).toBe(0);
    const rep = f.json<Rep>(real);
    expect(rep.errors).toEqual([]);
    // 2 MiB wanted, 1 MiB of it from the reserve: the four oldest (~1.2 MiB) are the fewest that do it
    expect(removedBy(rep)).toEqual(ids.slice(0, 4).map((id) => [id, 'keep_free']));
    expect(removedBy(f.json<Rep>(dry))).toEqual(removedBy(rep));
    expect(free()).toBeGreaterThanOrEqual(2 * MiB);
    for (const id of ids.slice(4)) expect(fs.existsSync(path.join(root, id))).toBe(true);
    const audits = readAudits(home);
    expect(audits.problems).toEqual([]);
    for (const id of ids.slice(0, 4)) expect(audits.sessions.get(id)).toBe(1);
    // no room for the reserve beyond keep_free yet: it is not taken back
    expect(fs.existsSync(reserve)).toBe(false);

    // Space is back: the next sweep puts the reserve back, removing nothing.
    fs.rmSync(path.join(H, 'filler'));
    const later = f.runCli(['--json', '--config', cfg], H);
    expect(later.status, later.stderr).toBe(0);
    expect(removedBy(f.json<Rep>(later))).toEqual([]);
    expect(allocated(reserve)).toBe(MiB);
  });
});
