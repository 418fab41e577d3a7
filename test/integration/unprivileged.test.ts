// Permission behaviour that root cannot observe: the CLI runs as an unprivileged user this test
// creates (and removes). Covers EACCES on unreadable entries, foreign-owned entries, and that
// murmur-gc's own files stay private whatever the caller's umask. The user runs a staged copy of
// the built CLI (test/helpers/stage.ts), so the checkout may sit anywhere (under /root, under a
// 0700 mktemp dir). Needs root, useradd/userdel and setpriv; skipped with a printed reason without.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as f from '../helpers/fixtures.js';
import { requirement } from '../helpers/requirements.js';
import { createUser, type TestUser } from '../reliability/user.js';
import { copyApp, stageCli, type StagedCli } from '../helpers/stage.js';

const needs = requirement('unprivileged-user tests', [
  'root',
  'cmd:useradd',
  'cmd:userdel',
  'cmd:setpriv',
  'cmd:chown',
]);
let testUser: TestUser | undefined;
let uid = -1;
let gid = -1;
let T: string;
let stage: StagedCli | undefined;

function chownR(p: string): void {
  execFileSync('chown', ['-R', `${uid}:${gid}`, p]);
}

function runAsUserWith(
  node: string,
  bin: string,
  args: string[],
  home: string,
  umask = '022',
): { status: number | null; stdout: string; stderr: string } {
  const env = f.cliEnv(home);
  const r = spawnSync(
    'setpriv',
    [
      '--reuid',
      String(uid),
      '--regid',
      String(gid),
      '--clear-groups',
      'sh',
      '-c',
      `umask ${umask}; exec "$@"`,
      'sh',
      node,
      bin,
      ...args,
    ],
    {
      env,
      encoding: 'utf8',
      timeout: 60_000,
    },
  );
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function runAsUser(
  args: string[],
  home: string,
  umask = '022',
): { status: number | null; stdout: string; stderr: string } {
  if (!stage) throw new Error('no staged CLI');
  return runAsUserWith(stage.node, stage.bin, args, home, umask);
}

describe.runIf(needs.run)('as an unprivileged user', () => {
  beforeAll(() => {
    needs.check();
    testUser = createUser();
    ({ uid, gid } = testUser);
    T = f.tempDir('unpriv');
    fs.chmodSync(T, 0o755);
    stage = stageCli();
  });

  afterAll(() => {
    if (T) f.rmrf(T);
    if (stage) f.rmrf(stage.dir);
    testUser?.remove();
  });

  it('runs from a staged copy when the checkout is out of its reach (a clone under a 0700 directory)', () => {
    // A checkout's built CLI under a private (0700) directory, as in a clone under /root.
    const hidden = f.tempDir('unpriv-hidden');
    try {
      expect(fs.statSync(hidden).mode & 0o777).toBe(0o700);
      const repo = path.join(hidden, 'clone');
      copyApp(f.REPO, repo);
      const direct = runAsUserWith(stage!.node, path.join(repo, 'dist', 'cli', 'bin.js'), ['--version'], T);
      expect(direct.status, 'the user must not reach a checkout under a 0700 directory').not.toBe(0);
      const staged = stageCli(repo);
      try {
        const r = runAsUserWith(staged.node, staged.bin, ['--version'], T);
        expect(r.status, r.stderr).toBe(0);
        const { version } = JSON.parse(fs.readFileSync(path.join(f.REPO, 'package.json'), 'utf8')) as {
          version: string;
        };
        expect(r.stdout.split('\n')[0]).toBe(`murmur-gc ${version}`);
      } finally {
        f.rmrf(staged.dir);
      }
    } finally {
      f.rmrf(hidden);
    }
  });

  it('fixes modes an owner cannot read through, skips foreign-owned entries, and keeps going', () => {
    const H = path.join(T, 'u1');
    const home = path.join(H, '.murmur');
    const a = f.writeRecord(home, 'shey', 'ctx_a', { capsule: 'shey', messages: 3 });
    const b = f.writeRecord(home, 'shey', 'ctx_b', { capsule: 'shey', messages: 3 });
    const c = f.writeRecord(home, 'shey', 'ctx_c', { capsule: 'shey', messages: 3 });
    chownR(H);
    fs.chmodSync(a.file, 0o000); // unreadable to its owner: no descriptor can be had
    fs.chmodSync(path.dirname(b.file), 0o000); // unlistable context directory
    fs.chownSync(c.file, 0, 0); // another user's file inside the home
    fs.chmodSync(c.file, 0o644);
    const r = runAsUser(['--json'], H);
    const rep = f.json<{
      actions: Record<string, unknown>[];
      skipped: { target: string; code: string }[];
      errors: { target: string; code: string }[];
    }>(r);
    expect(fs.statSync(a.file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(b.file)).mode & 0o777).toBe(0o700);
    expect(fs.statSync(c.file).mode & 0o777).toBe(0o644);
    expect(rep.skipped).toContainEqual(expect.objectContaining({ target: c.file, code: 'foreign_owner' }));
    expect(rep.errors.some((e) => e.target.endsWith('ctx_b') && e.code === 'io_error')).toBe(true);
    expect(r.status).toBe(1);
    // The next sweep reads what the first one repaired and finishes clean.
    const again = runAsUser(['--json'], H);
    expect(again.status, again.stderr).toBe(0);
  });

  it("keeps its own files private (0700/0600) under a permissive umask, and cannot be made to act on another user's root", () => {
    const H = path.join(T, 'u2');
    const home = path.join(H, '.murmur');
    const root = path.join(H, 'app', '.murmur');
    const now = Date.now();
    f.writeSession(root, { sessionId: f.idAt('ses_', now - 50 * f.DAY), end: true });
    const foreignRoot = path.join(T, 'rootowned', '.murmur');
    const kept = f.writeSession(foreignRoot, { sessionId: f.idAt('ses_', now - 50 * f.DAY), end: true });
    fs.chmodSync(path.join(T, 'rootowned'), 0o755);
    fs.chmodSync(foreignRoot, 0o777); // even writable by everyone, it is not ours
    fs.mkdirSync(home, { recursive: true });
    chownR(H);
    const cfg = f.writeConfig(
      H,
      `sessions:\n  - root: ${root}\n    retain: { max_age: 1d }\n  - root: ${foreignRoot}\n    retain: { max_age: 1d }\n`,
    );
    fs.chownSync(cfg, uid, gid);
    const r = runAsUser(['--json', '--config', cfg], H, '000');
    const rep = f.json<{ audit: string | null; skipped: { target: string; code: string }[] }>(r);
    expect(rep.audit).toMatch(/^ses_/);
    expect(fs.existsSync(kept)).toBe(true);
    expect(rep.skipped).toContainEqual(expect.objectContaining({ target: foreignRoot, code: 'foreign_owner' }));
    const gc = path.join(home, 'gc');
    expect(fs.statSync(gc).mode & 0o777).toBe(0o700);
    expect(fs.statSync(path.join(gc, rep.audit!)).mode & 0o777).toBe(0o700);
    expect(fs.statSync(path.join(gc, rep.audit!, 'trace.jsonl')).mode & 0o777).toBe(0o600);
    for (const n of fs.readdirSync(gc)) {
      const st = fs.lstatSync(path.join(gc, n));
      expect(st.mode & 0o077, n).toBe(0);
    }
  });
  it('a directory of its own that is not a murmur home, or its $HOME, is refused and left as it is; a fresh one is made private', () => {
    const H = path.join(T, 'u3');
    const proj = path.join(H, 'proj');
    fs.mkdirSync(path.join(proj, 'src'), { recursive: true });
    fs.writeFileSync(path.join(proj, 'README'), 'mine');
    const fresh = path.join(H, 'fresh');
    fs.mkdirSync(fresh);
    chownR(H);
    for (const d of [H, proj, fresh]) fs.chmodSync(d, 0o755);
    for (const home of [proj, H]) {
      const r = runAsUser(['--json', '--home', home], H);
      expect(r.status, r.stderr).toBe(2);
      expect(r.stdout + r.stderr).toContain('config_invalid');
      expect(fs.statSync(home).mode & 0o777).toBe(0o755);
      expect(fs.existsSync(path.join(home, 'gc'))).toBe(false);
    }
    const ok = runAsUser(['--json', '--home', fresh], H);
    expect(ok.status, ok.stderr).toBe(0);
    expect(fs.statSync(fresh).mode & 0o777).toBe(0o700);
    expect(fs.statSync(path.join(fresh, 'gc')).uid).toBe(uid);
  });
});
