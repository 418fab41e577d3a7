// Property (hostile tree): mode repair never resolves a name at the moment of the chmod. As an
// unprivileged user, real sweeps run against a racer that swaps 0000 context directories and
// record files (no descriptor can be read through them) with symlinks to a directory and a file
// outside the home (renameat2 RENAME_EXCHANGE): the outside entries' modes never change.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as f from '../helpers/fixtures.js';
import { raceEnv, runDriverAsUser } from './racer.js';
import { count, figures } from './soak.js';
import { requirement } from '../helpers/requirements.js';
import { chownR } from './user.js';

const needs = requirement('mode repair race (unprivileged user)', [
  'root',
  'cmd:useradd',
  'cmd:userdel',
  'cmd:setpriv',
  'cmd:chown',
]);
const race = raceEnv('rel-race', needs);

describe.runIf(needs.run)('mode repair against a symlink-swapping racer (unprivileged)', () => {
  it('never chmods the directory or file a swapped-in symlink points to', () => {
    const env = race();
    const iters = count(150, 1_000);
    const H = path.join(env.dir, 'h');
    const home = path.join(H, '.murmur');
    const store = path.join(home, 'conversations', 'shey');
    f.writeRecord(home, 'shey', 'ctx_a', { capsule: 'shey', messages: 2 });
    const b = f.writeRecord(home, 'shey', 'ctx_b', { capsule: 'shey', messages: 2 });
    const outDir = path.join(H, 'outside', 'dir');
    const outFile = path.join(H, 'outside', 'file');
    fs.mkdirSync(outDir, { recursive: true });
    fs.writeFileSync(outFile, 'canary\n');
    fs.symlinkSync(outDir, path.join(store, '.swap_a'));
    fs.symlinkSync(outFile, path.join(path.dirname(b.file), '.swap_f'));
    chownR(H, env.user);
    fs.chmodSync(outDir, 0o755);
    fs.chmodSync(outFile, 0o644);
    const pairs = [
      [path.join(store, 'ctx_a'), path.join(store, '.swap_a')],
      [b.file, path.join(path.dirname(b.file), '.swap_f')],
    ];
    const out = runDriverAsUser<{
      iters: number;
      hits: number;
      repaired: number;
      refused: number;
      codes: Record<string, number>;
    }>(env, 'mode-race-driver.mjs', [
      home,
      JSON.stringify(env.racer.argv0),
      JSON.stringify(pairs),
      JSON.stringify([
        [outDir, 0o755],
        [outFile, 0o644],
      ]),
      String(iters),
      String(Math.ceil(iters / 5)),
    ]);
    figures('mode-race', {
      racer: env.racer.kind,
      sweeps: out.iters,
      canary_changed: out.hits,
      repaired: out.repaired,
      refused_changed: out.refused,
    });
    expect(out.hits).toBe(0);
    // The race was really run: entries were repaired while the racer ran (a fifth of the sweeps'
    // worth at least; the driver sweeps on, up to 4×, while fewer were: on a loaded machine the
    // racer wins more often, which only means fewer repairs, never a wrong one).
    expect(out.repaired).toBeGreaterThanOrEqual(Math.ceil(iters / 5));
    expect(fs.statSync(outDir).mode & 0o7777).toBe(0o755);
    expect(fs.statSync(outFile).mode & 0o7777).toBe(0o644);
  }, 900_000);
});
