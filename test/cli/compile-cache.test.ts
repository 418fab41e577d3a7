// The compile cache of the shipped bin (src/cli/compile-cache.ts): per user under the temp dir,
// used only when that directory is this user's own (0700, not a link), never a reason for a run
// to fail, and on a Node without the API (20) nothing is created at all.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as nodeModule from 'node:module';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileCacheDir, safeCacheDir } from '../../src/cli/compile-cache.js';
import * as f from '../helpers/fixtures.js';

const T = 60_000;
const uid = process.getuid!();
/** Node >= 22.1 has module.enableCompileCache; Node 20 does not. */
const hasApi = typeof (nodeModule as { enableCompileCache?: unknown }).enableCompileCache === 'function';
let dir: string;
beforeAll(() => {
  dir = f.tempDir('compile-cache');
  fs.mkdirSync(path.join(dir, 'home'), { mode: 0o700 });
});
afterAll(() => f.rmrf(dir));

function runWithTmp(tmp: string, extra: Record<string, string> = {}): f.CliResult {
  const r = spawnSync(process.execPath, [f.BIN, '--dry-run'], {
    env: f.cliEnv(path.join(dir, 'home'), { TMPDIR: tmp, ...extra }),
    encoding: 'utf8',
    timeout: T,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('safeCacheDir', () => {
  it('creates the directory 0700 and accepts it, and accepts it again', () => {
    const d = path.join(dir, 'fresh');
    expect(safeCacheDir(d, uid)).toBe(true);
    expect(fs.lstatSync(d).mode & 0o777).toBe(0o700);
    expect(safeCacheDir(d, uid)).toBe(true);
  });

  it('refuses a link, a directory others may read or write, one owned by another user, and a path it cannot create', () => {
    const target = path.join(dir, 'target');
    fs.mkdirSync(target, { mode: 0o700 });
    fs.symlinkSync(target, path.join(dir, 'link'));
    expect(safeCacheDir(path.join(dir, 'link'), uid)).toBe(false);
    const open = path.join(dir, 'open');
    fs.mkdirSync(open, { mode: 0o700 });
    fs.chmodSync(open, 0o755);
    expect(safeCacheDir(open, uid)).toBe(false);
    expect(safeCacheDir(target, uid + 1)).toBe(false);
    fs.writeFileSync(path.join(dir, 'file'), '');
    expect(safeCacheDir(path.join(dir, 'file', 'sub'), uid)).toBe(false);
  });
});

describe('the bin and the compile cache', () => {
  it(
    `keeps the compiled chunks in <tmpdir>/murmur-gc-compile-cache-<uid> (0700) where Node has the cache (${hasApi ? 'this Node has it' : 'this Node has not: nothing is created'})`,
    () => {
      const tmp = fs.mkdtempSync(path.join(dir, 'tmp-'));
      const r = runWithTmp(tmp);
      expect(r.status, r.stderr).toBe(0);
      const cache = compileCacheDir(uid, tmp);
      if (!hasApi) {
        expect(fs.readdirSync(tmp)).toEqual([]);
        return;
      }
      expect(fs.lstatSync(cache).mode & 0o777).toBe(0o700);
      const files = fs.readdirSync(cache, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
      expect(files.length).toBeGreaterThan(0);
      // the second run reads it and still answers the same
      const again = runWithTmp(tmp);
      expect(again.status, again.stderr).toBe(0);
      expect(again.stdout).toBe(r.stdout);
    },
    T,
  );

  it(
    'a planted directory open to others is not used, and the run still succeeds',
    () => {
      const tmp = fs.mkdtempSync(path.join(dir, 'tmp-'));
      const planted = compileCacheDir(uid, tmp);
      fs.mkdirSync(planted, { mode: 0o700 });
      fs.chmodSync(planted, 0o777);
      const r = runWithTmp(tmp);
      expect(r.status, r.stderr).toBe(0);
      expect(fs.readdirSync(planted)).toEqual([]);
    },
    T,
  );

  it(
    'a temp dir that cannot hold it, or NODE_DISABLE_COMPILE_CACHE=1, leaves it off without failing the run',
    () => {
      fs.writeFileSync(path.join(dir, 'not-a-dir'), '');
      const r = runWithTmp(path.join(dir, 'not-a-dir'));
      expect(r.status, r.stderr).toBe(0);
      const tmp = fs.mkdtempSync(path.join(dir, 'tmp-'));
      const off = runWithTmp(tmp, { NODE_DISABLE_COMPILE_CACHE: '1' });
      expect(off.status, off.stderr).toBe(0);
      expect(fs.readdirSync(tmp)).toEqual([]);
    },
    T,
  );
});
