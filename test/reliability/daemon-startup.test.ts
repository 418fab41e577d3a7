// Property: the daemon is not killed by a signal during its start-up. SIGHUP/SIGTERM that arrive
// while the configuration is still being loaded are handled (a reload, a clean stop, exit 0),
// never the default action (exit 129/143) — `systemctl reload` right after start is safe.
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as f from '../helpers/fixtures.js';
import { count, figures } from './soak.js';

let T: string;
beforeEach(() => {
  T = f.tempDir('rel-daemon');
});
afterEach(() => f.rmrf(T));

function caught(pid: number): bigint {
  try {
    const m = /SigCgt:\s*([0-9a-f]+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? BigInt(`0x${m[1]}`) : 0n;
  } catch {
    return 0n;
  }
}
const bit = (n: number) => 1n << BigInt(n - 1);

describe('signals during the daemon\'s start-up', () => {
  it.each(['SIGHUP', 'SIGTERM'] as const)('%s while the configuration is being loaded is handled, and the daemon stops with 0', (sig) => {
    const cfg = f.writeConfig(T, `home: ${path.join(T, '.murmur')}\n`);
    const script = `
      const [repo, cfg, sig] = process.argv.slice(1);
      const { runDaemonCommand } = await import(repo + '/dist/cli/daemon.js');
      const { loadConfig } = await import(repo + '/dist/config/load.js');
      const pause = (ms) => new Promise((r) => setTimeout(r, ms));
      const code = await runDaemonCommand({ config: cfg }, {
        load: async (fl) => {
          process.kill(process.pid, sig); // arrives mid-load
          await pause(100);
          const c = await loadConfig({ configPath: fl.config, env: process.env, cwd: process.cwd() });
          if (sig === 'SIGHUP') setTimeout(() => process.kill(process.pid, 'SIGTERM'), 1500);
          return c;
        },
      });
      process.stdout.write('exit ' + code + '\\n');
      process.exit(code);
    `;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script, f.REPO, cfg, sig], { env: f.cliEnv(T), encoding: 'utf8', timeout: 30_000 });
    expect(r.signal).toBeNull();
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('exit 0');
    if (sig === 'SIGHUP') expect(r.stderr).toContain('SIGHUP: reloading the configuration');
  });

  it('the real executable, signalled as soon as it catches SIGHUP/SIGTERM, reloads and stops with 0', async () => {
    const runs = count(3, 20);
    const cfg = f.writeConfig(T, `home: ${path.join(T, '.murmur')}\n`);
    const latencies: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      const child = spawn(process.execPath, [f.BIN, 'daemon', '--config', cfg], { env: f.cliEnv(T), stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
      while ((caught(child.pid!) & (bit(1) | bit(15))) !== (bit(1) | bit(15))) await new Promise((r) => setTimeout(r, 2));
      latencies.push(performance.now() - t0);
      // Configuration not read yet (or just): a reload, then a stop.
      child.kill('SIGHUP');
      await new Promise((r) => setTimeout(r, 50));
      child.kill('SIGTERM');
      const ex = await exited;
      expect(ex.signal, err).toBeNull();
      expect(ex.code, err).toBe(0);
    }
    figures('daemon-startup', { runs, handlers_after_ms_max: Math.round(Math.max(...latencies)), handlers_after_ms_min: Math.round(Math.min(...latencies)) });
  }, 900_000);
});
