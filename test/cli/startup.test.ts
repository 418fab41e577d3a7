// Start-up cost: one-shot commands do not load what only the daemon needs. `cron`
// (and luxon under it) is imported by the daemon, and by the configuration loader only when a
// configuration sets `schedule:`; a lone `--version` is answered before the CLI is loaded, with
// the very text commander prints for it. Asserted on what a process loaded, never on time.
import { spawnSync } from 'node:child_process';
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
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: T, cwd: dir });
  const line = r.stderr.split('\n').find((l) => l.startsWith('PACKAGES '));
  if (line === undefined) throw new Error(`child failed: ${r.stderr}`);
  return { status: r.status, packages: JSON.parse(line.slice('PACKAGES '.length)) as string[] };
}

describe('start-up loads only what the command needs', () => {
  it('the default schedule is one cron accepts (so not checking it at load is safe)', () => {
    expect(validateCronExpression(DEFAULT_SCHEDULE).valid).toBe(true);
  });

  it('a dry run on an empty home does not load cron', () => {
    const r = loaded(['--home', path.join(dir, 'home'), '--dry-run', '--quiet']);
    expect(r.status).toBe(0);
    expect(r.packages).toContain('pino'); // the probe sees CommonJS packages at all
    expect(r.packages).not.toContain('cron');
    expect(r.packages).not.toContain('luxon');
  }, T);

  it('a configuration with a schedule loads cron to check it, and refuses a bad one', () => {
    fs.writeFileSync(path.join(dir, 'good.yaml'), "schedule: '*/5 * * * *'\n");
    const good = loaded(['--config', path.join(dir, 'good.yaml'), '--home', path.join(dir, 'home'), '--dry-run', '--quiet']);
    expect(good.status).toBe(0);
    expect(good.packages).toContain('cron');
    fs.writeFileSync(path.join(dir, 'bad.yaml'), "schedule: '*/5 * *'\n");
    const bad = loaded(['--config', path.join(dir, 'bad.yaml'), '--home', path.join(dir, 'home'), '--dry-run', '--quiet']);
    expect(bad.status).toBe(2);
  }, T);

  it('a lone --version prints exactly what commander prints', () => {
    const fast = spawnSync(process.execPath, [BIN, '--version'], { encoding: 'utf8', timeout: T });
    const short = spawnSync(process.execPath, [BIN, '-V'], { encoding: 'utf8', timeout: T });
    const viaCommander = spawnSync(process.execPath, [BIN, '--quiet', '--version'], { encoding: 'utf8', timeout: T });
    expect(viaCommander.status).toBe(0);
    expect(viaCommander.stdout).toMatch(/^murmur-gc \S+\nnode v/);
    expect(fast.status).toBe(0);
    expect(fast.stdout).toBe(viaCommander.stdout);
    expect(short.stdout).toBe(viaCommander.stdout);
  }, T);
});
