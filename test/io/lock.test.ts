// murmur-gc's locks: exclusivity, probes that create nothing, dead holders, and a compromised
// lock that aborts its holder instead of crashing the process (proper-lockfile's default throws).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acquireLock, breakDeadLock, probeLock } from '../../src/io/lock.js';
import { REPO, rmrf, tempDir } from '../helpers/fixtures.js';

let T: string;
beforeEach(() => {
  T = tempDir('lock');
});
afterEach(() => rmrf(T));

describe('locks', () => {
  it('is exclusive; a probe sees it and creates nothing', async () => {
    const p = path.join(T, 'sweep.lock');
    expect(await probeLock(p)).toBe(false);
    expect(fs.existsSync(p)).toBe(false);
    const a = await acquireLock(p, { waitMs: 0 });
    expect(a).toBeDefined();
    expect(await acquireLock(p, { waitMs: 0 })).toBeUndefined();
    expect(await probeLock(p)).toBe(true);
    await a!.release();
    expect(await probeLock(p)).toBe(false);
    const b = await acquireLock(p, { waitMs: 0 });
    expect(b?.brokeDeadHolder).toBe(false);
    await b!.release();
  });

  it('breaks the lock of a holder that died, and says so', async () => {
    const p = path.join(T, 'sweep.lock');
    // A child takes the lock and is killed before it can release it.
    const script = `
      const { acquireLock } = await import(${JSON.stringify(path.join(REPO, 'dist', 'io', 'lock.js'))});
      await acquireLock(${JSON.stringify(p)}, { waitMs: 0 });
      process.kill(process.pid, 'SIGKILL');
    `;
    spawnSync(process.execPath, ['--input-type=module', '-e', script]);
    expect(fs.existsSync(p)).toBe(true);
    expect(await probeLock(p)).toBe(false); // a dead holder does not make a dry run report busy
    const l = await acquireLock(p, { waitMs: 0 });
    expect(l?.brokeDeadHolder).toBe(true);
    await l!.release();
    expect(await breakDeadLock(p)).toBe(false);
  });

  it('a compromised lock aborts its holder\'s signal and does not crash the process', async () => {
    const p = path.join(T, 'sweep.lock');
    const l = await acquireLock(p, { waitMs: 0, staleMs: 2000 });
    expect(l).toBeDefined();
    // Someone removes the lock directory under the holder (as a stale takeover would).
    fs.rmdirSync(p);
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('not aborted within 5 s')), 5000);
      l!.signal.addEventListener('abort', () => {
        clearTimeout(t);
        resolve();
      });
    });
    expect(l!.signal.aborted).toBe(true);
    expect((l!.signal.reason as { code?: string }).code).toBe('lock_compromised');
    await l!.release(); // releasing a compromised lock is quiet
  });
});
