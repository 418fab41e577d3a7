// The package as a user gets it: `npm pack` of this checkout, installed with
// `npm install -g --prefix <tmp> ./murmur-gc-*.tgz` (the README's unattended route), runs on its
// own — no link back into the clone, its dependencies installed beside it — and carries what it
// needs: docs, the man page (linked by npm), LICENSE, the systemd units, the Prometheus alert
// rules and the Grafana dashboard (contrib/), the bundled bin with every chunk it imports (and not tsc's module tree), and
// source maps that carry their sources (never pointing at an unshipped src/). Packs the dist/
// that `npm test` just built (scripts are not run,
// so nothing rewrites dist/ under the other tests). Installing needs the npm registry, or an npm
// cache that already holds the dependencies (--prefer-offline).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { isBuiltin } from 'node:module';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as f from '../helpers/fixtures.js';

const NPM_TIMEOUT_MS = 300_000;
const pkg = JSON.parse(fs.readFileSync(path.join(f.REPO, 'package.json'), 'utf8')) as { name: string; version: string };

let T: string;
let prefix: string;
let tarball: string;
let files: string[] = [];

/**
 * The environment minus what `npm test` exported about this checkout (npm_package_*, the prefixes).
 * The rest of npm's configuration stays: cache, registry, CA file, and the global npmrc, which
 * `--prefix` would otherwise move to <prefix>/etc/npmrc.
 */
function npmEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^npm_(package|lifecycle)_/.test(k)) continue;
    if (/^npm_config_(prefix|global_prefix|local_prefix|global)$/.test(k)) continue;
    env[k] = v;
  }
  if (env['npm_config_globalconfig'] === undefined) env['npm_config_globalconfig'] = globalConfig();
  delete env['NODE_OPTIONS'];
  delete env['VITEST'];
  // The node that runs the tests also runs npm and the installed CLI (#!/usr/bin/env node).
  env['PATH'] = `${path.dirname(process.execPath)}${path.delimiter}${env['PATH'] ?? ''}`;
  return { ...env, ...extra };
}

let globalConfigFile: string | undefined;

/** The global npmrc npm reads without --prefix (e.g. the one that names the machine's CA file). */
function globalConfig(): string {
  if (globalConfigFile === undefined) {
    const r = spawnSync('npm', ['config', 'get', 'globalconfig'], { cwd: f.REPO, encoding: 'utf8', timeout: 60_000 });
    if (r.status !== 0) throw new Error(`npm config get globalconfig exited ${r.status}: ${r.stderr}`);
    globalConfigFile = r.stdout.trim();
  }
  return globalConfigFile;
}

function npm(args: string[], cwd: string): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync('npm', args, { cwd, env: npmEnv(), encoding: 'utf8', timeout: NPM_TIMEOUT_MS });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function installed(args: string[], home: string): f.CliResult {
  const r = spawnSync(path.join(prefix, 'bin', 'murmur-gc'), args, {
    cwd: T,
    env: npmEnv({ HOME: home, XDG_CONFIG_HOME: path.join(home, '.config') }),
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(() => {
  T = f.tempDir('pack');
  prefix = path.join(T, 'prefix');
  const pack = npm(['pack', '--ignore-scripts', '--json', '--pack-destination', T], f.REPO);
  expect(pack.status, pack.stderr).toBe(0);
  const out = JSON.parse(pack.stdout) as { filename: string; files: { path: string }[] }[];
  tarball = path.join(T, out[0]!.filename);
  files = out[0]!.files.map((x) => x.path);
  const install = npm(['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', tarball], T);
  expect(install.status, install.stderr).toBe(0);
}, NPM_TIMEOUT_MS * 2);

afterAll(() => {
  if (T) f.rmrf(T);
});

describe('npm pack + npm install -g --prefix', () => {
  it('the tarball holds the CLI, docs, man page, LICENSE, units and example config, and no sources', () => {
    expect(path.basename(tarball)).toBe(`${pkg.name}-${pkg.version}.tgz`);
    for (const needed of [
      'package.json',
      'README.md',
      'LICENSE',
      'dist/cli/bin.js',
      'docs/daemon.md',
      'man/murmur-gc.1',
      'systemd/murmur-gc.service',
      'systemd/murmur-gc-sweep.service',
      'systemd/murmur-gc.timer',
      'config.example.yaml',
      'contrib/prometheus/murmur-gc.rules.yml',
      'contrib/grafana/murmur-gc.json',
      'docs/metrics.md',
    ]) {
      expect(files).toContain(needed);
    }
    expect(files.filter((p) => /^(src|test|bench|scripts|\.ci)\//.test(p))).toEqual([]);
  });

  it('the bin is the bundle: it and its chunks import only shipped files, Node built-ins and pino-pretty', () => {
    const pkgDir = path.join(prefix, 'lib', 'node_modules', pkg.name);
    const js = files.filter((x) => x.endsWith('.js'));
    // the bundle, its chunks and the version reader; none of tsc's one-file-per-module tree
    expect(js.filter((p) => !/^dist\/cli\/(bin\.js|chunks\/[^/]+\.js)$/.test(p))).toEqual(['dist/version.js']);
    expect(js.some((p) => p.startsWith('dist/cli/chunks/'))).toBe(true);
    for (const p of js) {
      const text = fs.readFileSync(path.join(pkgDir, p), 'utf8');
      // static imports head the file; dynamic ones are `await import("…")` (a JSDoc `import("…")` type is neither)
      for (const m of text.matchAll(
        /^(?:import|export)\b[^;]*?\bfrom\s*"([^"]+)"|^import\s*"([^"]+)"|\bawait import\("([^"]+)"\)/gm,
      )) {
        const spec = m[1] ?? m[2] ?? m[3] ?? '';
        if (spec.startsWith('.'))
          expect(files, `${p} imports ${spec}`).toContain(
            path.posix.normalize(path.posix.join(path.posix.dirname(p), spec)),
          );
        else expect(spec, `${p} imports ${spec}`).toMatch(/^node:/);
      }
      // a bundled CommonJS dependency's require(): Node built-ins only (pino-pretty is required by
      // src/log.ts through its own createRequire, on a terminal only)
      for (const m of text.matchAll(/__require\("([^"]+)"\)/g))
        expect(isBuiltin(m[1]!), `${p} requires ${m[1]}`).toBe(true);
    }
  });

  it('every shipped source map is shipped beside its file and carries its sources (no unshipped src/ needed)', () => {
    const pkgDir = path.join(prefix, 'lib', 'node_modules', pkg.name);
    const maps = files.filter((p) => p.endsWith('.map'));
    expect(maps).toContain('dist/cli/bin.js.map');
    for (const p of files.filter((x) => x.endsWith('.js'))) {
      const url = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(fs.readFileSync(path.join(pkgDir, p), 'utf8'))?.[1];
      if (url !== undefined) expect(files, p).toContain(path.posix.join(path.posix.dirname(p), url));
    }
    for (const p of maps) {
      const map = JSON.parse(fs.readFileSync(path.join(pkgDir, p), 'utf8')) as {
        sources: string[];
        sourcesContent?: (string | null)[];
      };
      expect(map.sourcesContent?.length, p).toBe(map.sources.length);
      expect(
        map.sourcesContent!.every((c) => typeof c === 'string'),
        p,
      ).toBe(true);
    }
  });

  it('installs a copy, not a link into the clone, with its dependencies beside it and the man page linked', () => {
    const bin = path.join(prefix, 'bin', 'murmur-gc');
    const real = fs.realpathSync(bin);
    expect(real.startsWith(fs.realpathSync(prefix) + path.sep)).toBe(true);
    expect(real.startsWith(f.REPO + path.sep)).toBe(false);
    expect(
      fs.existsSync(path.join(prefix, 'lib', 'node_modules', pkg.name, 'node_modules', 'commander', 'package.json')),
    ).toBe(true);
    // dev-only packages stay out
    expect(fs.existsSync(path.join(prefix, 'lib', 'node_modules', pkg.name, 'node_modules', 'vitest'))).toBe(false);
    const man = path.join(prefix, 'share', 'man', 'man1', 'murmur-gc.1');
    expect(fs.readFileSync(man, 'utf8')).toBe(fs.readFileSync(path.join(f.REPO, 'man', 'murmur-gc.1'), 'utf8'));
  });

  it('`murmur-gc --version` prints the package version', () => {
    const r = installed(['--version'], T);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe(`murmur-gc ${pkg.version}`);
  });

  it('a dry run plans the removal of an expired session and changes nothing', () => {
    const H = path.join(T, 'home');
    const root = path.join(H, 'app', '.murmur');
    const ses = f.writeSession(root, { sessionId: f.idAt('ses_', Date.now() - 40 * f.DAY), end: true });
    fs.mkdirSync(path.join(H, '.murmur'), { recursive: true });
    const cfg = f.writeConfig(H, `sessions:\n  - root: ${root}\n    retain: { max_age: 7d }\n`);
    const before = f.snapshotTree(H);
    const r = installed(['--dry-run', '--json', '--config', cfg], H);
    expect(r.status, r.stderr).toBe(0);
    const rep = f.json<{ dry_run: boolean; actions: { kind: string; target: string }[] }>(r);
    expect(rep.dry_run).toBe(true);
    expect(rep.actions).toContainEqual(
      expect.objectContaining({ kind: 'remove_session', root, target: path.basename(ses), reason: 'max_age' }),
    );
    expect(f.snapshotTree(H)).toEqual(before);
  });

  it("the README's crontab line works verbatim under cron's environment, and a clean sweep there prints nothing", () => {
    const readme = fs.readFileSync(path.join(f.REPO, 'README.md'), 'utf8');
    const field = '[0-9*/,-]+';
    const lines = readme.split('\n').filter((l) => new RegExp(`^(${field} ){5}.*murmur-gc `).test(l));
    expect(lines, 'the README shows one crontab line').toHaveLength(1);
    const command = lines[0]!.split(' ').slice(5).join(' ');
    // the user's home, with the package installed as the README installs it (~/.local)
    const H = path.join(T, 'cron-home');
    fs.mkdirSync(H, { recursive: true });
    fs.symlinkSync(prefix, path.join(H, '.local'));
    const root = path.join(H, 'app', '.murmur');
    // max_sessions 1 keeps the newest; of the two it condemns the finished one goes and the live one stays
    f.writeSession(root, { sessionId: f.idAt('ses_', Date.now() - 40 * f.DAY), end: true });
    f.writeSession(root, { sessionId: f.idAt('ses_', Date.now() - 39 * f.DAY), end: false, mtimeMs: Date.now() });
    f.writeSession(root, { sessionId: f.idAt('ses_', Date.now() - f.DAY), end: true });
    fs.mkdirSync(path.join(H, '.murmur'), { recursive: true, mode: 0o700 });
    fs.mkdirSync(path.join(H, '.config', 'murmur-gc'), { recursive: true });
    f.writeConfig(
      path.join(H, '.config', 'murmur-gc'),
      `sessions:\n  - root: ${root}\n    retain: { max_sessions: 1 }\n`,
    );
    // what cron gives a job: /bin/sh, HOME, LOGNAME, SHELL and PATH=/usr/bin:/bin, nothing else
    const cronEnv = { HOME: H, LOGNAME: 'root', SHELL: '/bin/sh', PATH: '/usr/bin:/bin' };
    const r = spawnSync('/bin/sh', ['-c', command], { cwd: H, env: cronEnv, encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    // the old session went; the live one stays (the normal state: nothing to mail)
    expect(fs.readdirSync(root).filter((n) => n.startsWith('ses_'))).toHaveLength(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('');
  });

  it('`murmur-gc completion bash` prints a completion script', () => {
    const r = installed(['completion', 'bash'], T);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^complete -F _murmur_gc murmur-gc$/m);
  });
});
