// Only a murmur home is treated as one (src/config/home.ts, docs/config.md "The home"): a system
// path (/, /etc, $HOME itself…) or an existing directory that is not recognisably a murmur home is
// refused by every command that takes --home / home: (config_invalid, exit 2, naming the key and
// file), and a sweep never makes it private or creates gc/ in it — unless --force-home /
// force_home says so. A fresh (empty) home and no home at all keep working. Only `config check`
// ever runs against a system path here.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as f from '../helpers/fixtures.js';

let T: string;
beforeEach(() => {
  T = fs.realpathSync(f.tempDir('home-guard'));
});
afterEach(() => f.rmrf(T));

const mode = (p: string) => fs.statSync(p).mode & 0o777;

/** A directory that is not a murmur home: a project checkout, mode 0755. */
function project(): string {
  const p = path.join(T, 'proj');
  fs.mkdirSync(path.join(p, 'src'), { recursive: true });
  fs.writeFileSync(path.join(p, 'README'), 'mine');
  fs.chmodSync(p, 0o755);
  return p;
}

describe('a home that is not one', () => {
  it('is refused by config check: --home /, home: ~/../../etc, home: ~, a link to /etc — naming the key, file and line', () => {
    const byFlag = f.runCli(['config', 'check', '--home', '/'], T);
    expect(byFlag.status).toBe(2);
    expect(byFlag.stdout).toContain(
      "error[config_invalid] (command line): --home: '/' is the root directory: murmur-gc would make it private and create gc/ in it, so it is not used; point --home at the murmur home",
    );
    for (const [yaml, why] of [
      ['home: ~/../../etc\n', "'/etc' is a system directory"],
      ['home: "~"\n', `'${T}' is your home directory ($HOME) itself`],
    ] as const) {
      const cfg = f.writeConfig(T, `# a comment\n${yaml}`);
      const r = f.runCli(['config', 'check', '--config', cfg], T);
      expect(r.status, yaml).toBe(2);
      expect(r.stdout).toContain(`error[config_invalid] ${cfg}:2:1: home: ${why}`);
    }
    fs.symlinkSync('/etc', path.join(T, 'etc-link'));
    const link = f.runCli(['config', 'check', '--json', '--home', path.join(T, 'etc-link')], T);
    expect(link.status).toBe(2);
    const doc = JSON.parse(link.stdout) as { ok: boolean; errors: { code: string; key: string; message: string }[] };
    expect(doc.ok).toBe(false);
    expect(doc.errors).toEqual([
      expect.objectContaining({
        code: 'config_invalid',
        key: '--home',
        message: expect.stringContaining('resolves to /etc, which is a system directory'),
      }),
    ]);
  });

  it('is refused by every command that takes --home, and a sweep leaves its mode and contents alone (old: made 0700, gc/ created)', async () => {
    const p = project();
    const before = f.snapshotTree(p);
    const commands = [
      [],
      ['--dry-run'],
      ['sweep'],
      ['status'],
      ['history'],
      ['conversation', 'ls'],
      ['conversation', 'truncate', 'ctx_x', '--keep', '1'],
      ['quarantine', 'ls'],
      ['restore', 'ctx_x'],
      ['protect', 'ctx_x'],
      ['release', 'ctx_x'],
      ['protection', 'ls'],
      ['explain', 'ctx_x'],
      ['config', 'check'],
    ];
    const results = await Promise.all(commands.map((c) => f.runCliAsync([...c, '--home', p], T)));
    // The daemon too (killed after 15 s if it were to start instead).
    commands.push(['daemon']);
    results.push(f.runCli(['daemon', '--home', p], T, {}, 15_000));
    for (const [i, r] of results.entries()) {
      const out = r.stdout + r.stderr;
      expect(r.status, `${commands[i]!.join(' ')}: ${out}`).toBe(2);
      expect(out, commands[i]!.join(' ')).toContain('config_invalid');
      expect(out, commands[i]!.join(' ')).toContain(
        'is not a murmur home: it holds 2 entries and none of conversations/',
      );
    }
    expect(mode(p)).toBe(0o755);
    expect(f.snapshotTree(p)).toEqual(before);
    expect(fs.existsSync(path.join(p, 'gc'))).toBe(false);
  });

  it('--force-home (or force_home: true) uses it anyway, and config check says so', () => {
    const p = project();
    const check = f.runCli(['config', 'check', '--home', p, '--force-home'], T);
    expect(check.status).toBe(0);
    expect(check.stdout).toContain(`warning[config_destructive] (command line): --home: '${p}' is not a murmur home`);
    expect(check.stdout).toContain('it is used anyway (--force-home / force_home)');
    const r = f.runCli(['--json', '--home', p, '--force-home'], T);
    expect(r.status, r.stderr).toBe(0);
    expect(mode(p)).toBe(0o700);
    expect(fs.statSync(path.join(p, 'gc')).isDirectory()).toBe(true);
    // from now on it is recognisably one (gc/)
    expect(f.runCli(['config', 'check', '--home', p], T).status).toBe(0);
    const p2 = path.join(T, 'proj2');
    fs.mkdirSync(p2);
    fs.writeFileSync(path.join(p2, 'x'), '');
    const cfg = f.writeConfig(T, `home: ${p2}\nforce_home: true\n`);
    expect(f.runCli(['--json', '--config', cfg], T).status).toBe(0);
    expect(fs.existsSync(path.join(p2, 'gc'))).toBe(true);
  });
});

describe('homes that keep working', () => {
  it('no ~/.murmur: a dry run says so, creates nothing, exits 0', () => {
    const r = f.runCli(['--dry-run'], T);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('No murmur home at');
    expect(fs.existsSync(path.join(T, '.murmur'))).toBe(false);
  });

  it('an empty ~/.murmur (the one the service unit creates) and an empty --home: the sweep runs and makes gc/', () => {
    fs.mkdirSync(path.join(T, '.murmur'), { mode: 0o700 });
    const r = f.runCli(['--json'], T);
    expect(r.status, r.stderr).toBe(0);
    expect(fs.existsSync(path.join(T, '.murmur', 'gc'))).toBe(true);
    const fresh = path.join(T, 'fresh');
    fs.mkdirSync(fresh, { mode: 0o755 });
    fs.chmodSync(fresh, 0o755);
    const r2 = f.runCli(['--json', '--home', fresh], T);
    expect(r2.status, r2.stderr).toBe(0);
    expect(mode(fresh)).toBe(0o700);
  });
});
