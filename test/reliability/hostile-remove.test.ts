// Property (hostile trees): a condemned session is removed whatever a capsule wrote into it — a
// directory 10 000 levels deep, subdirectories its owner cannot read — and what truly cannot go
// (another user's directory) fails one sweep, then stays visible (status, each sweep's summary)
// without failing later sweeps, until a later sweep can remove it.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as f from '../helpers/fixtures.js';
import { count, figures } from './soak.js';

const DEPTH = count(2_000, 10_000);
import { requirement } from '../helpers/requirements.js';
import { stageCli, type StagedCli } from '../helpers/stage.js';
import { asUser, chownR, createUser, type TestUser } from './user.js';

let T: string;
let user: TestUser;
let stage: StagedCli | undefined;
const needs = requirement('hostile removals (unprivileged user)', [
  'root',
  'cmd:useradd',
  'cmd:userdel',
  'cmd:setpriv',
  'cmd:chown',
]);
beforeAll(() => {
  if (!needs.run) return;
  needs.check();
  T = f.tempDir('rel-hostile');
  fs.chmodSync(T, 0o755);
  user = createUser();
  // The user runs a staged copy of the build (and of node): the checkout may sit under a 0700 dir.
  stage = stageCli();
});
afterAll(() => {
  if (T) {
    spawnSync('chmod', ['-R', 'u+rwx', T]);
    f.rmrf(T);
  }
  if (stage) f.rmrf(stage.dir);
  user?.remove();
});

/** mkdir `depth` nested dirs named `d` under `dir` (relative steps: paths would exceed PATH_MAX). */
function deepTree(dir: string, depth: number): void {
  execFileSync(process.execPath, [
    '-e',
    `process.chdir(process.argv[1]); const fs = require('node:fs'); for (let i = 0; i < Number(process.argv[2]); i++) { fs.mkdirSync('d'); process.chdir('d'); } fs.writeFileSync('leaf', 'x');`,
    dir,
    String(depth),
  ]);
}

type Rep = { actions: { kind: string; target?: string }[]; errors: { code: string; target: string; detail: string }[] };

function runAs(u: TestUser | undefined, cfg: string, H: string): { status: number | null; rep: Rep; stderr: string } {
  const argv = u
    ? [...asUser(u), stage!.node, stage!.bin, '--json', '--config', cfg]
    : [process.execPath, f.BIN, '--json', '--config', cfg];
  const r = spawnSync(argv[0]!, argv.slice(1), { env: f.cliEnv(H), encoding: 'utf8', timeout: 300_000 });
  return {
    status: r.status,
    rep: f.json<Rep>({ status: r.status, stdout: r.stdout, stderr: r.stderr }),
    stderr: r.stderr,
  };
}

describe.runIf(needs.run)('condemned sessions a capsule made hard to remove', () => {
  it(`removes a session holding a ${DEPTH}-deep directory (10 000 in the soak run)`, () => {
    const H = path.join(T, 'deep');
    const root = path.join(H, 'app', '.murmur');
    const id = f.idAt('ses_', Date.now() - 50 * f.DAY);
    const s = f.writeSession(root, { sessionId: id, end: true });
    deepTree(s, DEPTH);
    const cfg = f.writeConfig(H, `sessions:\n  - root: ${root}\n    retain: { max_age: 30d }\n`);
    const t0 = performance.now();
    const r = runAs(undefined, cfg, H);
    figures('deep-session', { depth: DEPTH, ms: Math.round(performance.now() - t0), exit: r.status ?? -1 });
    expect(r.rep.errors).toEqual([]);
    expect(r.status).toBe(0);
    expect(fs.readdirSync(root)).toEqual([]);
    expect(r.rep.actions).toContainEqual(expect.objectContaining({ kind: 'remove_session', target: id }));
  });

  it('gives owner bits back to unreadable subdirectories of its own condemned session (unprivileged)', () => {
    const H = path.join(T, 'locked');
    const root = path.join(H, 'app', '.murmur');
    const id = f.idAt('ses_', Date.now() - 50 * f.DAY);
    const s = f.writeSession(root, { sessionId: id, end: true, files: { 'a/b/c.txt': 'c', 'x/y.txt': 'y' } });
    const cfg = f.writeConfig(H, `sessions:\n  - root: ${root}\n    retain: { max_age: 30d }\n`);
    chownR(H, user);
    fs.chmodSync(path.join(s, 'a', 'b'), 0o000);
    fs.chmodSync(path.join(s, 'a'), 0o100); // search only: not listable
    fs.chmodSync(path.join(s, 'x'), 0o500); // not writable: its file cannot be unlinked
    const r = runAs(user, cfg, H);
    expect(r.rep.errors).toEqual([]);
    expect(r.status).toBe(0);
    expect(fs.readdirSync(root)).toEqual([]);
  });

  it("reports what cannot go (another user's directory) once; the next sweep does not fail for it", () => {
    const H = path.join(T, 'foreign');
    const root = path.join(H, 'app', '.murmur');
    const id = f.idAt('ses_', Date.now() - 50 * f.DAY);
    const s = f.writeSession(root, { sessionId: id, end: true, files: { 'mine.txt': 'm' } });
    const cfg = f.writeConfig(H, `sessions:\n  - root: ${root}\n    retain: { max_age: 30d }\n`);
    chownR(H, user);
    fs.mkdirSync(path.join(s, 'rootowned'));
    fs.writeFileSync(path.join(s, 'rootowned', 'f'), 'root');
    fs.chmodSync(path.join(s, 'rootowned'), 0o755);
    const first = runAs(user, cfg, H);
    expect(first.status).toBe(1);
    expect(first.rep.errors).toHaveLength(1);
    expect(first.rep.errors[0]!.detail).toMatch(
      /could not be removed whole .*moved to .*\.murmur-gc-kept\..*each later sweep tries it again/,
    );
    const kept = fs.readdirSync(root);
    expect(kept).toHaveLength(1);
    expect(kept[0]).toMatch(/^\.murmur-gc-kept\./);
    expect(fs.readFileSync(path.join(root, kept[0]!, 'rootowned', 'f'), 'utf8')).toBe('root');
    expect(fs.existsSync(path.join(root, kept[0]!, 'mine.txt'))).toBe(false);
    const second = runAs(user, cfg, H);
    expect(second.rep.errors).toEqual([]);
    expect(second.status).toBe(0);
  });

  it("what is kept aside stays visible until it is gone (status, each sweep's summary, --json), and a later sweep removes it once it can", () => {
    const H = path.join(T, 'kept');
    const root = path.join(H, 'app', '.murmur');
    const id = f.idAt('ses_', Date.now() - 50 * f.DAY);
    const s = f.writeSession(root, { sessionId: id, end: true, files: { 'mine.txt': 'm' } });
    const cfg = f.writeConfig(H, `sessions:\n  - root: ${root}\n    retain: { max_age: 30d }\n`);
    chownR(H, user);
    fs.mkdirSync(path.join(s, 'rootowned'));
    fs.writeFileSync(path.join(s, 'rootowned', 'f'), 'root');
    fs.chmodSync(path.join(s, 'rootowned'), 0o755);
    expect(runAs(user, cfg, H).status).toBe(1); // the removal that sets it aside fails once
    const kept = path.join(root, fs.readdirSync(root)[0]!);
    expect(path.basename(kept)).toMatch(/^\.murmur-gc-kept\./);

    // every later sweep says so, without failing: --json, the human report, the summary line
    const second = runAs(user, cfg, H);
    expect(second.status).toBe(0);
    expect(second.rep.errors).toEqual([]);
    // sizes are what the disk holds, as `du` counts them (docs/budgets.md)
    const du = Number(execFileSync('du', ['-s', '-B1', kept], { encoding: 'utf8' }).split('\t')[0]);
    expect((second.rep as Rep & { kept?: unknown }).kept).toEqual({
      items: 1,
      bytes: du,
      oldest_ms: expect.any(Number),
      paths: [kept],
    });
    // stderr is the journal (as under the timer's unit): an ok one-shot sweep logs its summary there
    const errFile = path.join(T, 'kept-stderr.log');
    const errFd = fs.openSync(errFile, 'w');
    const errSt = fs.fstatSync(errFd, { bigint: true });
    const human = spawnSync(asUser(user)[0]!, [...asUser(user).slice(1), stage!.node, stage!.bin, '--config', cfg], {
      env: f.cliEnv(H, { JOURNAL_STREAM: `${errSt.dev}:${errSt.ino}` }),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', errFd],
    });
    fs.closeSync(errFd);
    const humanErr = fs.readFileSync(errFile, 'utf8');
    expect(human.status).toBe(0);
    expect(human.stdout.replace(/\n\s+/g, ' ')).toMatch(
      /Kept aside: 1 directory murmur-gc could not remove whole \(\d+(\.\d)? (B|KiB), the oldest since .*\): .*\.murmur-gc-kept\./,
    );
    expect(humanErr).toMatch(/kept_aside/);
    expect(humanErr).toMatch(/1 kept aside \(\d+(\.\d)? (B|KiB)/);

    // status lists it
    const st = spawnSync(
      asUser(user)[0]!,
      [...asUser(user).slice(1), stage!.node, stage!.bin, 'status', '--json', '--config', cfg],
      { env: f.cliEnv(H), encoding: 'utf8' },
    );
    expect(st.status, st.stderr).toBe(0);
    const doc = JSON.parse(st.stdout) as { stores: { kept?: unknown } };
    expect(doc.stores.kept).toEqual({ items: 1, bytes: du, oldest_ms: expect.any(Number), paths: [kept] });
    const stText = spawnSync(
      asUser(user)[0]!,
      [...asUser(user).slice(1), stage!.node, stage!.bin, 'status', '--config', cfg],
      { env: f.cliEnv(H), encoding: 'utf8' },
    );
    expect(stText.stdout).toContain('kept aside');
    // (shown from ~: the user's home is H)
    expect(stText.stdout).toContain(`~${kept.slice(H.length)}`);

    // the other user's files are gone: the next sweep removes what was kept aside
    fs.rmSync(path.join(kept, 'rootowned'), { recursive: true });
    const third = runAs(user, cfg, H);
    expect(third.status).toBe(0);
    expect(third.rep.errors).toEqual([]);
    expect(fs.readdirSync(root)).toEqual([]);
    expect(third.rep.actions).toContainEqual(
      expect.objectContaining({ kind: 'remove_debris', path: kept, code: 'io_error' }),
    );
    expect((third.rep as Rep & { kept?: unknown }).kept).toBeUndefined();
  });
});
