// murmur-gc's locks: exclusivity, probes that create nothing, dead holders, and a compromised
// lock that aborts its holder instead of crashing the process (proper-lockfile's default throws).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acquireLock, breakDeadLock, probeLock } from '../../src/gchome/lock.js';
import { removeDeadGcTemps } from '../../src/gchome/leftovers.js';
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
      const { acquireLock } = await import(${JSON.stringify(path.join(REPO, 'dist', 'gchome', 'lock.js'))});
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

  it("a compromised lock aborts its holder's signal and does not crash the process", async () => {
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

  // A holder killed between creating the lock directory and writing its owner file (the crash
  // soak found it: the next run then saw a lock of unknown holder and skipped the record).
  describe('evidence of the holder at every instant', () => {
    const deadPid = (): number =>
      Number(
        spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout,
      );
    const candidate = (p: string, pid: number, body = '') =>
      fs.writeFileSync(path.join(path.dirname(p), `.${path.basename(p)}.owner.json.${pid}.18c0ffee.tmp`), body);
    const leftovers = (p: string) => fs.readdirSync(path.dirname(p)).filter((n) => n !== path.basename(p));

    it('a lock directory whose only evidence is a dead candidate is broken at once, and its temps go', async () => {
      const p = path.join(T, 'ctx_a.lock');
      fs.mkdirSync(p);
      candidate(p, deadPid()); // killed even before writing its content: the name is enough
      expect(await probeLock(p)).toBe(false);
      const l = await acquireLock(p, { waitMs: 0 });
      expect(l?.brokeDeadHolder).toBe(true);
      await l!.release();
      expect(fs.existsSync(p)).toBe(false);
      expect(leftovers(p)).toEqual([]);
    });

    it('a live candidate beside an ownerless lock keeps it (its creator may be between mkdir and owner file)', async () => {
      const p = path.join(T, 'ctx_b.lock');
      fs.mkdirSync(p);
      candidate(p, process.ppid);
      expect(await acquireLock(p, { waitMs: 0 })).toBeUndefined();
      expect(await breakDeadLock(p)).toBe(false);
      expect(fs.existsSync(p)).toBe(true);
    });

    it('a lock directory with no evidence at all is left to go stale', async () => {
      const p = path.join(T, 'ctx_c.lock');
      fs.mkdirSync(p);
      expect(await acquireLock(p, { waitMs: 0 })).toBeUndefined();
      expect(fs.existsSync(p)).toBe(true);
    });

    it('an owner file naming the lock decides alone: a dead owner is broken although another contender waits', async () => {
      const p = path.join(T, 'ctx_d.lock');
      fs.mkdirSync(p);
      const ino = String(fs.statSync(p).ino);
      fs.writeFileSync(`${p}.owner.json`, JSON.stringify({ pid: deadPid(), start_time: null, lock_ino: ino }));
      candidate(p, process.ppid); // a live contender waiting for the lock
      const l = await acquireLock(p, { waitMs: 0 });
      expect(l?.brokeDeadHolder).toBe(true);
      await l!.release();
      expect(leftovers(p)).toEqual([`.ctx_d.lock.owner.json.${process.ppid}.18c0ffee.tmp`]);
    });

    it('a contender killed between its candidate and its mkdir leaves nothing once the lock is next taken (the crash test saw the sweep lock keep it)', async () => {
      const p = path.join(T, 'ctx_f.lock');
      candidate(p, deadPid()); // no lock directory: it died before mkdir
      candidate(p, process.ppid); // a live contender, still waiting
      const l = await acquireLock(p, { waitMs: 0 });
      expect(l?.brokeDeadHolder).toBe(false);
      expect(leftovers(p).sort()).toEqual([
        `.ctx_f.lock.owner.json.${process.ppid}.18c0ffee.tmp`,
        'ctx_f.lock.owner.json',
      ]);
      await l!.release();
      expect(leftovers(p)).toEqual([`.ctx_f.lock.owner.json.${process.ppid}.18c0ffee.tmp`]);
    });

    it('a released lock leaves nothing beside it; a held one has an owner file naming its inode', async () => {
      const p = path.join(T, 'ctx_e.lock');
      const l = await acquireLock(p, { waitMs: 0 });
      expect(leftovers(p)).toEqual(['ctx_e.lock.owner.json']);
      const owner = JSON.parse(fs.readFileSync(`${p}.owner.json`, 'utf8')) as { pid: number; lock_ino: string };
      expect(owner.pid).toBe(process.pid);
      expect(owner.lock_ino).toBe(String(fs.statSync(p).ino));
      await l!.release();
      expect(fs.readdirSync(T)).toEqual([]);
    });

    it('every kill point of a contender leaves a lock the next acquirer can take at once', async () => {
      // The child stops itself (SIGKILL) right after each step of taking the lock.
      for (const at of ['candidate', 'mkdir', 'owner']) {
        const p = path.join(T, `kill-${at}`, 'x.lock');
        fs.mkdirSync(path.dirname(p));
        const script = `
          const lo = await import(${JSON.stringify(path.join(REPO, 'dist', 'gchome', 'lock-owner.js'))});
          const p = ${JSON.stringify(p)};
          const c = await lo.writeCandidate(p, { pid: process.pid, start_time: null });
          if (${JSON.stringify(at)} !== 'candidate') (await import('node:fs')).mkdirSync(p);
          if (${JSON.stringify(at)} === 'owner') await lo.promoteCandidate(p, c, { pid: process.pid, start_time: null, lock_ino: await lo.lockDirIno(p) });
          process.kill(process.pid, 'SIGKILL');
        `;
        spawnSync(process.execPath, ['--input-type=module', '-e', script]);
        const l = await acquireLock(p, { waitMs: 0 });
        expect(l, at).toBeDefined();
        expect(l!.brokeDeadHolder, at).toBe(at !== 'candidate');
        await l!.release();
        // (The candidate of a contender killed before mkdir is the sweep's debris: next test.)
        if (at !== 'candidate') expect(fs.readdirSync(path.dirname(p)), at).toEqual([]);
      }
    });

    it('the sweep removes dead lock temps under gc/locks, except the evidence of a lock a live process may hold', async () => {
      const store = path.join(T, 'gc', 'locks', 'shey');
      fs.mkdirSync(store, { recursive: true });
      const dead = deadPid();
      fs.writeFileSync(path.join(store, `.ctx_gone.lock.owner.json.${dead}.ab.tmp`), '');
      fs.mkdirSync(path.join(store, 'ctx_held.lock'));
      fs.writeFileSync(path.join(store, `.ctx_held.lock.owner.json.${dead}.ab.tmp`), '');
      fs.writeFileSync(path.join(store, `.ctx_held.lock.owner.json.${process.ppid}.ac.tmp`), ''); // its live creator's
      fs.writeFileSync(path.join(store, `.ctx_live.lock.owner.json.${process.ppid}.ab.tmp`), '');
      fs.writeFileSync(path.join(T, 'gc', 'locks', `.x%20y.lock.owner.json.${dead}.ab.tmp`), '');
      const removed = await removeDeadGcTemps(T);
      expect(removed.map((r) => path.basename(r.path)).sort()).toEqual([
        `.ctx_gone.lock.owner.json.${dead}.ab.tmp`,
        `.x%20y.lock.owner.json.${dead}.ab.tmp`,
      ]);
      expect(fs.readdirSync(store).sort()).toEqual(
        [
          `.ctx_held.lock.owner.json.${dead}.ab.tmp`,
          `.ctx_held.lock.owner.json.${process.ppid}.ac.tmp`,
          `.ctx_live.lock.owner.json.${process.ppid}.ab.tmp`,
          'ctx_held.lock',
        ].sort(),
      );
    });
  });
});
