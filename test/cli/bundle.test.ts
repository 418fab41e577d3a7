// Start-up of the shipped bin (dist/cli/bin.js, the bundle scripts/bundle.mjs builds): it loads
// only its own chunks, each command evaluates only the code it uses, and the WebAssembly module is
// compiled only when a line is counted or validated. Asserted on what a process loaded (a module
// resolve hook, the chunks' source maps, a count of WebAssembly.Module constructions), never on time.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as f from '../helpers/fixtures.js';

const T = 60_000;
let dir: string;
let preload: string;
beforeAll(() => {
  dir = f.tempDir('bundle');
  fs.mkdirSync(path.join(dir, 'home'), { mode: 0o700 });
  fs.writeFileSync(
    path.join(dir, 'hooks.mjs'),
    `import { appendFileSync } from 'node:fs';
export async function resolve(spec, ctx, next) {
  const r = await next(spec, ctx);
  if (process.env.MGC_LOADED) appendFileSync(process.env.MGC_LOADED, r.url + '\\n');
  return r;
}
`,
  );
  preload = path.join(dir, 'preload.mjs');
  fs.writeFileSync(
    preload,
    `import { register } from 'node:module';
register(${JSON.stringify(pathToFileURL(path.join(dir, 'hooks.mjs')).href)});
let n = 0;
const M = WebAssembly.Module;
WebAssembly.Module = new Proxy(M, { construct(t, a, nt) { n++; return Reflect.construct(t, a, nt); } });
process.on('exit', () => process.stderr.write('\\nWASM_MODULES ' + n + '\\n'));
`,
  );
});
afterAll(() => f.rmrf(dir));

interface Loaded {
  status: number | null;
  stdout: string;
  /** Repository-relative files whose code the run evaluated (a chunk stands for its map's sources). */
  sources: string[];
  /** Files loaded as modules, repository-relative. */
  files: string[];
  wasmModules: number;
}

/** Runs the bin as `murmur-gc ARGS` with HOME at `home`; what it loaded. */
function run(args: string[], home = path.join(dir, 'home')): Loaded {
  const list = path.join(dir, `loaded-${Math.random().toString(36).slice(2)}`);
  const r = spawnSync(process.execPath, ['--import', pathToFileURL(preload).href, f.BIN, ...args], {
    env: f.cliEnv(home, { MGC_LOADED: list }),
    encoding: 'utf8',
    timeout: T,
  });
  const wasm = /^WASM_MODULES (\d+)$/m.exec(r.stderr);
  if (wasm === null) throw new Error(`no WebAssembly count (exit ${r.status}): ${r.stderr}`);
  const urls = fs.existsSync(list)
    ? fs
        .readFileSync(list, 'utf8')
        .split('\n')
        .filter((u) => u.startsWith('file:'))
    : [];
  const files = [...new Set(urls.map((u) => path.relative(f.REPO, fileURLToPath(u))))].filter(
    (p) => !p.startsWith('..'),
  );
  const sources = new Set<string>();
  for (const file of files) {
    const map = path.join(f.REPO, file + '.map');
    if (!fs.existsSync(map)) {
      sources.add(file.replace(/^dist\/(.*)\.js$/, 'src/$1.ts'));
      continue;
    }
    const m = JSON.parse(fs.readFileSync(map, 'utf8')) as { sources: string[] };
    for (const s of m.sources)
      sources.add(path.relative(f.REPO, path.resolve(path.dirname(path.join(f.REPO, file)), s)));
  }
  return {
    status: r.status,
    stdout: r.stdout,
    sources: [...sources].sort(),
    files: files.sort(),
    wasmModules: Number(wasm[1]),
  };
}

const HEAVY = [
  /^node_modules\/(yaml|zod|pino|proper-lockfile|graceful-fs|cron|luxon)\//,
  /^src\/config\/load\.ts$/,
  /^src\/log\.ts$/,
  /^src\/json\/(scan|doc-wasm|string-wasm|wasm-asm)\.ts$/,
  /^src\/(sweep|commands|gchome)\/(?!(report|voice|actions)\.ts$)/,
  /^src\/runtime\/(inventory|jsonl|trace-scan|summary-cache|running|staged-rewrite|record-truncate|trace-append)\.ts$/,
  /^src\/daemon\//,
];

describe('the shipped bin is the bundle', () => {
  it(
    '--help loads only the bundle (its chunks and the version reader), nothing from node_modules or tsc’s module tree',
    () => {
      const r = run(['--help']);
      expect(r.status).toBe(0);
      expect(r.stdout).toMatch(/^Usage: murmur-gc/);
      expect(r.files.filter((p) => !/^dist\/cli\/(bin\.js|chunks\/[^/]+\.js)$/.test(p))).toEqual(['dist/version.js']);
    },
    T,
  );

  it(
    '--help evaluates commander and the command definitions only: no configuration loader, logger, scanner or sweep',
    () => {
      const r = run(['--help']);
      expect(r.sources).toContain('src/cli/main.ts');
      expect(r.sources.filter((s) => HEAVY.some((h) => h.test(s)))).toEqual([]);
      expect(r.wasmModules).toBe(0);
    },
    T,
  );

  it(
    'status and a dry run on a machine with no murmur home compile no WebAssembly and load neither the daemon nor cron',
    () => {
      for (const args of [['status'], ['--dry-run'], ['history']]) {
        const r = run(args);
        expect(r.status, args.join(' ')).toBe(0);
        expect(r.wasmModules, args.join(' ')).toBe(0);
        expect(
          r.sources.filter((s) => /^src\/daemon\/daemon\.ts$|^node_modules\/(cron|luxon)\//.test(s)),
          args.join(' '),
        ).toEqual([]);
      }
      expect(run(['status']).sources.filter((s) => /^src\/sweep\/pipeline\.ts$/.test(s))).toEqual([]);
    },
    T,
  );

  it(
    'a dry run that counts a record compiles the WebAssembly module, once, and counts right',
    () => {
      const home = f.tempDir('bundle-count');
      try {
        const mh = path.join(home, '.murmur');
        f.writeRecord(mh, 'shey', 'ctx_a', { capsule: 'shey', messages: 12 });
        const cfg = f.writeConfig(home, `home: ${mh}\nrecords:\n  - capsule: shey\n    retain: { max_messages: 5 }\n`);
        const r = run(['--dry-run', '--json', '--config', cfg], home);
        expect(r.status).toBe(0);
        expect(r.wasmModules).toBe(1);
        const rep = JSON.parse(r.stdout) as { actions: { kind: string; messages_dropped?: number }[] };
        expect(rep.actions).toEqual([expect.objectContaining({ messages_dropped: 7 })]);
      } finally {
        f.rmrf(home);
      }
    },
    T,
  );
});
