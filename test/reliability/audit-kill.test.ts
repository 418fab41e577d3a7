// Property (audit creation is atomic): a murmur-gc killed at any instant while it creates its
// audit session leaves either no `ses_` audit directory or one the next run can complete — never
// one without its intent log or its session_start (the crash test found both: "no trace.jsonl",
// "last line is session_start", left unfinished by recovery). A staging directory of a killed
// run is debris the next run removes; one holding anything else, or of a live process, is kept.
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recoverInterruptedAudits } from '../../src/gchome/audit-recovery.js';
import { removeDeadGcTemps } from '../../src/gchome/leftovers.js';
import { Dir } from '../../src/fsx/safe-fs.js';
import * as f from '../helpers/fixtures.js';
import { readAudits } from './audit-check.js';
import { count, figures } from './soak.js';

let T: string;
beforeAll(() => {
  T = f.tempDir('audit-kill');
});
afterAll(() => {
  if (T) f.rmrf(T);
});

/** A child creating audit sessions back to back (each abandoned, as a killed sweep leaves it). */
function killedCreator(home: string, afterMs: number): Promise<void> {
  const script = `
    const { AuditSession } = await import(${JSON.stringify(path.join(f.REPO, 'dist', 'gchome', 'audit.js'))});
    const { Dir } = await import(${JSON.stringify(path.join(f.REPO, 'dist', 'fsx', 'safe-fs.js'))});
    const { mintId } = await import(${JSON.stringify(path.join(f.REPO, 'dist', 'runtime', 'ids.js'))});
    const home = await Dir.open(${JSON.stringify(home)}, { followFinal: true });
    process.stdout.write('ready\\n');
    for (;;) {
      const a = await AuditSession.begin(home, mintId('ses_'), 'test', Date.now());
      await a.abandon();
    }
  `;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    child.stdout.once('data', () => setTimeout(() => child.kill('SIGKILL'), afterMs));
    child.on('exit', () => resolve());
  });
}

describe('a run killed while it creates its audit', () => {
  it('leaves only audits the next run completes, and staging debris it removes', async () => {
    const rounds = count(12, 100);
    let staged = 0;
    let audits = 0;
    for (let i = 0; i < rounds; i++) {
      const home = path.join(T, `h${i}`);
      fs.mkdirSync(path.join(home, 'gc'), { recursive: true, mode: 0o700 });
      await killedCreator(home, 20 + ((i * 37) % 180));
      staged += fs.readdirSync(path.join(home, 'gc')).filter((n) => n.startsWith('.ses_')).length;
      // Every `ses_` directory already carries what recovery needs.
      for (const n of fs.readdirSync(path.join(home, 'gc')).filter((x) => x.startsWith('ses_'))) {
        expect(fs.existsSync(path.join(home, 'gc', n, 'intent.jsonl')), n).toBe(true);
        const first = fs.readFileSync(path.join(home, 'gc', n, 'trace.jsonl'), 'utf8').split('\n')[0]!;
        expect(JSON.parse(first)).toMatchObject({ event_type: 'session_start', session_id: n });
      }
      // The next run: its debris clean-up and its recovery.
      await removeDeadGcTemps(home);
      const dir = await Dir.open(home, { followFinal: true });
      try {
        audits += (await recoverInterruptedAudits(dir, home, Date.now())).length;
      } finally {
        await dir.close();
      }
      expect(fs.readdirSync(path.join(home, 'gc')).filter((n) => n.startsWith('.'))).toEqual([]);
      expect(readAudits(home).problems).toEqual([]);
    }
    figures('audit kill', { rounds, audits_completed: audits, staging_dirs_left_by_kills: staged });
    expect(audits).toBeGreaterThan(0);
  }, 300_000);

  it('keeps a staging directory of a live process, or one holding anything but the audit files', async () => {
    const home = path.join(T, 'keep');
    const gc = path.join(home, 'gc');
    fs.mkdirSync(gc, { recursive: true });
    const dead = Number(
      spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout,
    );
    const mk = (name: string, files: string[]) => {
      fs.mkdirSync(path.join(gc, name));
      for (const x of files) fs.writeFileSync(path.join(gc, name, x), 'x');
    };
    mk(`.ses_01aa.${dead}.ab.tmp`, ['intent.jsonl', 'trace.jsonl']);
    mk(`.ses_01ab.${dead}.ab.tmp`, []);
    mk(`.ses_01ac.${process.ppid}.ab.tmp`, ['intent.jsonl']);
    mk(`.ses_01ad.${dead}.ab.tmp`, ['intent.jsonl', 'notes.txt']);
    const removed = await removeDeadGcTemps(home);
    expect(removed.map((r) => path.basename(r.path)).sort()).toEqual([
      `.ses_01aa.${dead}.ab.tmp`,
      `.ses_01ab.${dead}.ab.tmp`,
    ]);
    expect(fs.readdirSync(gc).sort()).toEqual([`.ses_01ac.${process.ppid}.ab.tmp`, `.ses_01ad.${dead}.ab.tmp`]);
  });
});
