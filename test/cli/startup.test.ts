// Start-up cost: one-shot commands do not load what only the daemon needs. `cron`
// (and luxon under it) is imported by the daemon, and by the configuration loader only when a
// configuration sets `schedule:`; a lone `--version` is answered before the CLI is loaded, with
// the very text commander prints for it; the installed bin (the bundle) runs the read-only
// commands and a dry run with nothing to sweep without the writers (the lock, the sweep
// pipeline) and without the logger; a configuration file is read with yaml and its shape checked
// by our own code, so no command loads zod. Asserted on what a process loaded, never on time.
import { spawnSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateCronExpression } from 'cron';
import { DEFAULT_SCHEDULE } from '../../src/config/load.js';
import { BIN, REPO, rmrf, tempDir } from '../helpers/fixtures.js';

const T = 60_000;
let dir: string;
beforeAll(() => {
  dir = tempDir('startup');
  fs.mkdirSync(path.join(dir, 'home'), { mode: 0o700 });
});
afterAll(() => rmrf(dir));

/**
 * Runs the bundled bin (as installed) with a module hook that records every file Node loads;
 * returns the exit status, stdout and the sources those files were built from (each chunk's
 * source map: `src/...` for ours, `node_modules/<package>` for a dependency).
 */
function bundleLoads(
  args: string[],
  env: NodeJS.ProcessEnv,
): { status: number | null; stdout: string; sources: Set<string>; builtins: Set<string> } {
  const hooks = path.join(dir, 'hooks.mjs');
  const register = path.join(dir, 'register.mjs');
  const log = path.join(dir, 'loaded.txt');
  fs.writeFileSync(
    hooks,
    "import { appendFileSync } from 'node:fs';\nexport async function load(url, context, next) {\n  appendFileSync(process.env.MGC_LOADED, url + '\\n');\n  return next(url, context);\n}\n",
  );
  fs.writeFileSync(
    register,
    `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
  );
  fs.rmSync(log, { force: true });
  const r = spawnSync(process.execPath, ['--import', register, BIN, ...args], {
    encoding: 'utf8',
    timeout: T,
    cwd: dir,
    env: { ...env, MGC_LOADED: log },
  });
  const sources = new Set<string>();
  const builtins = new Set<string>();
  for (const url of fs.readFileSync(log, 'utf8').split('\n')) {
    if (url.startsWith('node:')) builtins.add(url);
    if (!url.startsWith('file:')) continue;
    const file = fileURLToPath(url);
    if (!fs.existsSync(`${file}.map`)) continue; // the bin's entry and the re-export facades hold no code of their own
    const map = JSON.parse(fs.readFileSync(`${file}.map`, 'utf8')) as { sources: string[] };
    for (const s of map.sources) {
      const abs = path.resolve(path.dirname(file), s);
      const nm = abs.split('/node_modules/');
      sources.add(nm.length > 1 ? `node_modules/${nm[1]!.split('/')[0]!}` : path.relative(REPO, abs));
    }
  }
  return { status: r.status, stdout: r.stdout, sources, builtins };
}

/** Runs the CLI's main() in a child node; returns its stdout and the CJS packages it loaded. */
function loaded(args: string[]): { status: number | null; packages: string[] } {
  const main = path.join(REPO, 'dist', 'cli', 'main.js');
  const script = `
    import { createRequire } from 'node:module';
    const { main } = await import(${JSON.stringify(main)});
    const code = await main(${JSON.stringify(args)});
    const cache = Object.keys(createRequire(import.meta.url).cache);
    const pkgs = new Set(cache.filter((k) => k.includes('/node_modules/')).map((k) => k.split('/node_modules/').pop().split('/')[0]));
    process.stderr.write('\\nPACKAGES ' + JSON.stringify([...pkgs]) + '\\n');
    process.exitCode = code;
  `;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: T,
    cwd: dir,
  });
  const line = r.stderr.split('\n').find((l) => l.startsWith('PACKAGES '));
  if (line === undefined) throw new Error(`child failed: ${r.stderr}`);
  return { status: r.status, packages: JSON.parse(line.slice('PACKAGES '.length)) as string[] };
}

describe('start-up loads only what the command needs', () => {
  it('the default schedule is one cron accepts (so not checking it at load is safe)', () => {
    expect(validateCronExpression(DEFAULT_SCHEDULE).valid).toBe(true);
  });

  it(
    'a dry run on an empty home does not load cron',
    () => {
      const r = loaded(['--home', path.join(dir, 'home'), '--dry-run', '--quiet']);
      expect(r.status).toBe(0);
      expect(r.packages).toContain('pino'); // the probe sees CommonJS packages at all
      expect(r.packages).not.toContain('cron');
      expect(r.packages).not.toContain('luxon');
    },
    T,
  );

  it(
    'a configuration with a schedule loads cron to check it, and refuses a bad one',
    () => {
      fs.writeFileSync(path.join(dir, 'good.yaml'), "schedule: '*/5 * * * *'\n");
      const good = loaded([
        '--config',
        path.join(dir, 'good.yaml'),
        '--home',
        path.join(dir, 'home'),
        '--dry-run',
        '--quiet',
      ]);
      expect(good.status).toBe(0);
      expect(good.packages).toContain('cron');
      fs.writeFileSync(path.join(dir, 'bad.yaml'), "schedule: '*/5 * *'\n");
      const bad = loaded([
        '--config',
        path.join(dir, 'bad.yaml'),
        '--home',
        path.join(dir, 'home'),
        '--dry-run',
        '--quiet',
      ]);
      expect(bad.status).toBe(2);
    },
    T,
  );

  it(
    'a lone --version prints exactly what commander prints',
    () => {
      const fast = spawnSync(process.execPath, [BIN, '--version'], { encoding: 'utf8', timeout: T });
      const short = spawnSync(process.execPath, [BIN, '-V'], { encoding: 'utf8', timeout: T });
      const viaCommander = spawnSync(process.execPath, [BIN, '--quiet', '--version'], { encoding: 'utf8', timeout: T });
      expect(viaCommander.status).toBe(0);
      expect(viaCommander.stdout).toMatch(/^murmur-gc \S+\nnode v/);
      expect(fast.status).toBe(0);
      expect(fast.stdout).toBe(viaCommander.stdout);
      expect(short.stdout).toBe(viaCommander.stdout);
    },
    T,
  );
});

describe('the installed bin loads no writer and no logger for what only reads', () => {
  const WRITERS = [
    'src/gchome/lock.ts',
    'node_modules/proper-lockfile',
    'node_modules/graceful-fs',
    'src/sweep/pipeline.ts',
    'src/gchome/audit-recovery.ts',
    'src/commands/protect.ts',
  ];
  const empty = (): NodeJS.ProcessEnv => {
    const e = path.join(dir, 'empty-user');
    fs.mkdirSync(e, { recursive: true, mode: 0o700 });
    return { ...process.env, HOME: e, XDG_CONFIG_HOME: e };
  };

  it(
    'a dry run with no home and no sessions root says so without loading the sweep or pino',
    () => {
      const r = bundleLoads(['--dry-run'], empty());
      expect(r.status).toBe(0);
      expect(r.stdout.replace(/\n\s+/g, ' ')).toContain(
        'and no configured sessions root exists: nothing to sweep. (murmur-gc creates nothing until the runtime has written state.)',
      );
      expect(r.sources).toContain('src/cli/sweep.ts'); // the probe sees our modules at all
      for (const w of WRITERS) expect(r.sources).not.toContain(w);
      expect(r.sources).not.toContain('src/sweep/metrics.ts');
      expect(r.sources).not.toContain('node_modules/pino');
    },
    T,
  );

  it(
    'status loads neither the writers nor pino',
    () => {
      const r = bundleLoads(['status'], empty());
      expect(r.status).toBe(0);
      expect(r.sources).toContain('src/commands/status.ts');
      expect(r.sources).toContain('src/gchome/held-listing.ts');
      for (const w of WRITERS) expect(r.sources).not.toContain(w);
      expect(r.sources).not.toContain('node_modules/pino');
    },
    T,
  );

  it(
    'with no configuration file, status and a dry run load neither yaml nor zod',
    () => {
      for (const args of [['status'], ['--dry-run']]) {
        const r = bundleLoads(args, empty());
        expect(r.status).toBe(0);
        expect(r.sources).toContain('src/config/load.ts');
        expect(r.sources).not.toContain('src/config/parse.ts');
        expect(r.sources).not.toContain('node_modules/yaml');
        expect(r.sources).not.toContain('node_modules/zod');
      }
    },
    T,
  );

  it(
    'status imports no node:crypto (only writers name quarantine entries)',
    () => {
      const r = bundleLoads(['status'], empty());
      expect(r.status).toBe(0);
      expect(r.builtins).toContain('node:fs'); // the probe sees builtins at all
      expect(r.builtins).not.toContain('node:crypto');
    },
    T,
  );

  it(
    'a configuration file is read with yaml and checked without zod: status, config check, a dry run and a sweep',
    () => {
      const e = empty();
      const roots = ['a', 'b', 'c'].map((n) => path.join(dir, 'roots', n));
      for (const r of roots) fs.mkdirSync(r, { recursive: true, mode: 0o700 });
      const cfg = path.join(dir, 'sweep.yaml');
      fs.writeFileSync(
        cfg,
        [
          `home: ${JSON.stringify(path.join(dir, 'home'))}`,
          'log: { level: warn }',
          'sessions:',
          ...roots.map((r) => `  - root: ${JSON.stringify(r)}\n    retain: { max_age: 30d }`),
          '',
        ].join('\n'),
      );
      for (const args of [['status'], ['config', 'check'], ['--dry-run'], []]) {
        const r = bundleLoads([...args, '--config', cfg], e);
        expect(r.status, args.join(' ')).toBe(0);
        expect(r.sources).toContain('src/config/parse.ts');
        expect(r.sources).toContain('node_modules/yaml');
        expect(r.sources).not.toContain('node_modules/zod');
        // a dry run with roots to scan and a sweep go through the sweep, not the nothing-to-sweep answer
        if (args.length === 0 || args[0] === '--dry-run') expect(r.sources).toContain('src/sweep/pipeline.ts');
      }
    },
    T,
  );

  it(
    'history loads neither the writers nor pino',
    () => {
      const r = bundleLoads(['history'], empty());
      expect(r.status).toBe(0);
      expect(r.sources).toContain('src/commands/audit-read.ts');
      for (const w of WRITERS) expect(r.sources).not.toContain(w);
      expect(r.sources).not.toContain('node_modules/pino');
    },
    T,
  );
});
