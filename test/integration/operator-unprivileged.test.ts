// Errors that say what to do next, as an unprivileged user (root ignores permissions): an
// io_error names the real path (never /proc/self/fd/…) and the .murmur-gc-trash.* directory a
// session was left in; the next sweep does not call that leftover process_interrupted; a home of
// another user is refused with a hint. The user is created here and removed afterwards; it runs a
// staged copy of the built CLI (test/helpers/stage.ts), so the checkout may sit anywhere. Needs
// root, useradd/userdel and setpriv; skipped with a printed reason without.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as f from '../helpers/fixtures.js';
import { requirement } from '../helpers/requirements.js';
import { createUser, type TestUser } from '../reliability/user.js';
import { stageCli, type StagedCli } from '../helpers/stage.js';

const needs = requirement('unprivileged-user error tests', [
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
const now = Date.now();

function runAsUser(args: string[], home: string): { status: number | null; stdout: string; stderr: string } {
  if (!stage) throw new Error('no staged CLI');
  const r = spawnSync(
    'setpriv',
    ['--reuid', String(uid), '--regid', String(gid), '--clear-groups', stage.node, stage.bin, ...args],
    {
      env: f.cliEnv(home),
      encoding: 'utf8',
      timeout: 60_000,
    },
  );
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe.runIf(needs.run)('errors say what to do next', () => {
  beforeAll(() => {
    needs.check();
    testUser = createUser();
    ({ uid, gid } = testUser);
    T = f.tempDir('opunpriv');
    fs.chmodSync(T, 0o755);
    stage = stageCli();
  });

  afterAll(() => {
    if (T) f.rmrf(T);
    if (stage) f.rmrf(stage.dir);
    testUser?.remove();
  });

  it('a removal that fails names real paths (never /proc/self/fd) and where what is left now is; the next sweep does not call it process_interrupted', () => {
    const H = path.join(T, 'u1');
    const root = path.join(H, 'app', '.murmur');
    const old = f.writeSession(root, {
      sessionId: f.idAt('ses_', now - 9 * f.DAY),
      end: true,
      startMs: now - 9 * f.DAY,
    });
    f.writeSession(root, { sessionId: f.idAt('ses_', now - 1 * f.DAY), end: true, startMs: now - f.DAY });
    fs.mkdirSync(path.join(H, '.murmur'), { recursive: true });
    execFileSync('chown', ['-R', `${uid}:${gid}`, H]);
    // something of root's inside the user's session: the user cannot delete it
    fs.mkdirSync(path.join(old, 'out'));
    fs.writeFileSync(path.join(old, 'out', 'f.txt'), 'x');
    fs.chmodSync(path.join(old, 'out'), 0o755);
    const cfg = path.join(H, 'config.yaml');
    fs.writeFileSync(cfg, `sessions:\n  - root: ${root}\n    retain: { max_sessions: 1 }\n`);
    fs.chmodSync(cfg, 0o644);

    const r = runAsUser(['--json', '--config', cfg], H);
    expect(r.status, r.stderr).toBe(1);
    const rep = JSON.parse(r.stdout) as { errors: { target: string; code: string; detail: string }[] };
    const e = rep.errors.find((x) => x.target === old)!;
    expect(e, JSON.stringify(rep.errors)).toBeDefined();
    expect(e.code).toBe('io_error');
    expect(e.detail).not.toContain('/proc/self/fd');
    const left = fs.readdirSync(root).find((n) => n.startsWith('.murmur-gc-'))!;
    expect(left).toBeDefined();
    expect(e.detail).toMatch(
      new RegExp(`'${root.replace(/[.]/g, '\\.')}/\\.murmur-gc-trash\\.ses_\\w+\\.ses_\\w+/out/f\\.txt'`),
    ); // the real path at the time
    expect(e.detail).toContain(`${root}/${left}`);
    expect(r.stderr).not.toContain('/proc/self/fd');

    const again = runAsUser(['--json', '--config', cfg], H);
    expect(again.stderr).not.toContain('process_interrupted');
  });

  it("another user's home is refused with a hint", () => {
    const H = path.join(T, 'u2');
    fs.mkdirSync(path.join(H, '.murmur'), { recursive: true, mode: 0o755 });
    fs.chmodSync(H, 0o755);
    fs.chmodSync(path.join(H, '.murmur'), 0o755);
    const r = runAsUser(['--home', path.join(H, '.murmur')], H);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('[foreign_owner]');
    expect(r.stderr).toMatch(/hint: run murmur-gc as the user who owns it/);
  });
});
