#!/usr/bin/env node
// Builds the executable that ships: src/cli/bin.ts and everything it imports (our modules and the
// production dependencies) bundled by rolldown into dist/cli/bin.js plus one chunk per lazily
// loaded part under dist/cli/chunks/, so a command compiles a few files instead of ~300 modules
// (docs/benchmarks.md, "Start-up"). Run by `npm run build`, `prepare` and `pretest`, after tsc
// (tsc's dist/ tree stays for the tests that import single modules; its dist/cli/bin.js is
// replaced here).
// - Every dynamic import() in src/ stays a separate chunk: `--help` loads no configuration loader,
//   logger or record scanner, and a sweep loads the daemon's code only when it is the daemon.
// - src/version.ts stays external (the tsc-built dist/version.js), because it reads
//   ../package.json relative to its own file.
// - pino-pretty is never bundled: src/log.ts requires it at run time, on a terminal only.
// - Not minified (function names and code stay readable in a stack trace); each chunk has a source
//   map with the sources embedded (`NODE_OPTIONS=--enable-source-maps murmur-gc …` maps a trace to
//   src/*.ts; without that flag Node never reads them).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(repo, 'dist', 'cli');
const versionSrc = path.join(repo, 'src', 'version.ts');
const versionDist = path.join(repo, 'dist', 'version.js');
const shebang = fs.readFileSync(path.join(repo, 'src', 'cli', 'bin.ts'), 'utf8').split('\n')[0];
if (!shebang.startsWith('#!')) throw new Error('src/cli/bin.ts must start with its shebang');
if (!fs.existsSync(versionDist)) throw new Error('dist/version.js is missing: run tsc -p tsconfig.build.json first');

fs.rmSync(path.join(out, 'chunks'), { recursive: true, force: true });

await build({
  input: path.join(repo, 'src', 'cli', 'bin.ts'),
  platform: 'node',
  tsconfig: path.join(repo, 'tsconfig.build.json'),
  // Node 20 and 22 do not parse `await using`: lowered here, as tsc lowers it for dist/.
  transform: { target: 'es2023' },
  logLevel: 'warn',
  external: ['pino-pretty'],
  plugins: [
    {
      name: 'murmur-gc-version-external',
      resolveId(source, importer) {
        if (importer === undefined || !source.startsWith('.')) return null;
        const target = path.resolve(path.dirname(importer), source.replace(/\.js$/, '.ts'));
        return target === versionSrc ? { id: versionDist, external: 'relative' } : null;
      },
    },
  ],
  output: {
    dir: out,
    format: 'esm',
    entryFileNames: 'bin.js',
    chunkFileNames: 'chunks/[name]-[hash].js',
    sourcemap: true,
    minify: false,
  },
});

// rolldown keeps the entry's shebang as the first line; the bin must be executable (npm sets the mode on
// install, a clone's dist/cli/bin.js is run directly)
const bin = path.join(out, 'bin.js');
const text = fs.readFileSync(bin, 'utf8');
if (!text.startsWith(shebang + '\n')) throw new Error('dist/cli/bin.js does not start with the shebang');
fs.chmodSync(bin, 0o755);
