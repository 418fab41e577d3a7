// A sessions root the process may not write (a read-only bind mount, as a systemd sandbox without
// it in ReadWritePaths= makes it), through the built CLI: found once per sweep, said in exactly
// one line with the drop-in that fixes it, nothing attempted there (no per-item io_error), the
// other roots swept normally; exit 1 (finished with errors), the dry run saying the same.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import * as f from '../helpers/fixtures.js';
import { requirement } from '../helpers/requirements.js';
import { asUser, chownR, createUser, type TestUser } from '../reliability/user.js';
import { stageCli, type StagedCli } from '../helpers/stage.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Rec = Record<string, any>;

const req = requirement('a read-only bind mount', ['root', 'tmpfs']);
const reqUser = requirement('a second user', ['root', 'cmd:useradd', 'cmd:setpriv']);
const now = Date.now();

function oldSessions(root: string, n: number, lost = 0): string[] {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const startMs = now - 60 * f.DAY + i * 1000;
    const id = f.idAt('ses_', startMs);
    const detached = i >= n - lost ? [{ workId: `wrk_${i}`, atMs: startMs + 1 }] : [];
    f.writeSession(root, { sessionId: id, startMs, end: true, detached });
    ids.push(id);
  }
  return ids;
}

const lines = (stderr: string): Rec[] =>
  stderr
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Rec);

describe.runIf(req.run)('a sessions root murmur-gc may not write', () => {
  let T = '';
  let home = '';
  let ro = '';
  let rw = '';
  let cfg = '';
  let mounted = false;

  const bind = (ro: string) => {
    execFileSync('mount', ['--bind', ro, ro]);
    mounted = true;
    execFileSync('mount', ['-o', 'remount,ro,bind', ro]);
  };

  beforeAll(() => {
    req.check();
    T = fs.realpathSync(f.tempDir('ro-root'));
    home = path.join(T, '.murmur');
    ro = path.join(T, 'ro', '.murmur');
    rw = path.join(T, 'rw', '.murmur');
    fs.mkdirSync(home, { mode: 0o700 });
    // 300 sessions, 296 over max_sessions: 4, and the 3 newest with background work never accounted for
    oldSessions(ro, 300, 3);
    oldSessions(rw, 10);
    bind(ro);
    cfg = f.writeConfig(
      T,
      `home: ${home}\nsessions:\n  - root: ${ro}\n    retain: { max_sessions: 4 }\n  - root: ${rw}\n    retain: { max_sessions: 1 }\n`,
    );
  });

  afterAll(() => {
    if (mounted) spawnSync('umount', [ro]);
    if (T) f.rmrf(T);
  });

  beforeEach(() => {
    expect(fs.readdirSync(ro).filter((n) => n.startsWith('ses_'))).toHaveLength(300);
  });

  it('the dry run says it once, with the fix, and exits 1; the other root would be swept', () => {
    const r = f.runCli(['--dry-run', '--json', '--config', cfg], T);
    expect(r.status, r.stderr).toBe(1);
    const rep = f.json<Rec>(r);
    expect(rep['errors']).toEqual([
      { target: ro, code: 'root_not_writable', detail: expect.stringContaining(`ReadWritePaths=${ro}`) },
    ]);
    expect(rep['errors'][0]['detail']).toContain('296 sessions to remove, 3 background commands to mark lost');
    expect(rep['actions'].filter((a: Rec) => a['kind'] === 'remove_session').map((a: Rec) => a['root'])).toEqual(
      Array(9).fill(rw),
    );
    const ls = lines(r.stderr);
    expect(ls, r.stderr).toHaveLength(1);
    expect(ls[0]).toMatchObject({ level: 50, code: 'root_not_writable', target: ro });
    expect(ls[0]!['msg']).toMatch(/EROFS.*systemctl --user edit murmur-gc\.service/);
  });

  it('the real sweep: exactly one line for that root (and the summary), nothing attempted there, the other root swept', () => {
    const r = f.runCli(['sweep', '--config', cfg], T);
    expect(r.status, r.stderr).toBe(1);
    const ls = lines(r.stderr);
    expect(
      ls.map((l) => [l['level'], l['code'], l['event'] ?? null]),
      r.stderr,
    ).toEqual([
      [50, 'root_not_writable', null],
      [40, 'root_not_writable', 'sweep_summary'],
    ]);
    expect(ls.filter((l) => JSON.stringify(l).includes(ro))).toHaveLength(1);
    expect(ls[1]).toMatchObject({
      outcome: 'errors',
      errors: 1,
      errors_by_code: { root_not_writable: 1 },
      counts: { remove_session: 9 },
    });
    expect(r.stdout).toContain('root_not_writable');
    expect(fs.readdirSync(rw).filter((n) => n.startsWith('ses_'))).toHaveLength(1);
    // and the next sweep says the same, once
    const again = f.runCli(['sweep', '--config', cfg], T);
    expect(again.status).toBe(1);
    expect(lines(again.stderr).map((l) => l['code'])).toEqual(['root_not_writable', 'root_not_writable']);
  });
});

describe.runIf(reqUser.run)('a sessions root whose mode keeps its own user out (EACCES)', () => {
  let T = '';
  let user: TestUser | undefined;
  let stage: StagedCli | undefined;

  beforeAll(() => {
    reqUser.check();
    user = createUser();
    stage = stageCli();
  });
  afterAll(() => {
    user?.remove();
    if (stage) f.rmrf(stage.dir);
    if (T) f.rmrf(T);
  });

  it("is found once, said once with the owner/mode fix, exit 1; the user's own root is swept", () => {
    T = fs.realpathSync(f.tempDir('eacces-root'));
    fs.chmodSync(T, 0o755);
    const home = path.join(T, '.murmur');
    const shared = path.join(T, 'shared', '.murmur'); // the user's, but mode 0555: the user may not write it
    const mine = path.join(T, 'mine', '.murmur');
    fs.mkdirSync(home, { mode: 0o700 });
    oldSessions(shared, 150);
    oldSessions(mine, 5);
    chownR(home, user!);
    chownR(path.join(T, 'mine'), user!);
    chownR(path.join(T, 'shared'), user!);
    fs.chmodSync(shared, 0o555);
    const cfg = f.writeConfig(
      T,
      `home: ${home}\nsessions:\n  - root: ${shared}\n    retain: { max_sessions: 1 }\n  - root: ${mine}\n    retain: { max_sessions: 1 }\n`,
    );
    const r = spawnSync(
      asUser(user!)[0]!,
      [...asUser(user!).slice(1), stage!.node, stage!.bin, 'sweep', '--json', '--config', cfg],
      { env: f.cliEnv(T), encoding: 'utf8' },
    );
    expect(r.status, r.stderr).toBe(1);
    const rep = JSON.parse(r.stdout) as Rec;
    expect(rep['errors']).toEqual([
      {
        target: shared,
        code: 'root_not_writable',
        detail: expect.stringContaining(`EACCES: its owner, mode or ACL does not let uid ${user!.uid} write it`),
      },
    ]);
    expect(rep['errors'][0]['detail']).toContain('149 sessions to remove');
    const ls = lines(r.stderr);
    expect(
      ls.map((l) => [l['level'], l['code']]),
      r.stderr,
    ).toEqual([
      [50, 'root_not_writable'],
      [40, 'root_not_writable'],
    ]);
    expect(fs.readdirSync(shared).filter((n) => n.startsWith('ses_'))).toHaveLength(150);
    expect(fs.readdirSync(mine).filter((n) => n.startsWith('ses_'))).toHaveLength(1);
  });
});
