// Property (hostile tree): `du` counts what a root holds, never what a link in it points to. As
// an unprivileged user, `du` walks run against a racer that swaps a session directory with a
// symlink (renameat2 RENAME_EXCHANGE) to a decoy outside the root holding the same names
// (trace.jsonl, blobs/<file>, a log) as large files: no walk counts a byte of the decoy, whether
// the swap lands between the listing of a directory and the lstat of its entries or anywhere
// else (src/commands/du.ts: every directory is read from inside itself, entered and checked).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as f from '../helpers/fixtures.js';
import { raceEnv, runDriverAsUser } from './racer.js';
import { count, figures } from './soak.js';
import { requirement } from '../helpers/requirements.js';
import { chownR } from './user.js';

const needs = requirement('du race (unprivileged user)', [
  'root',
  'cmd:useradd',
  'cmd:userdel',
  'cmd:setpriv',
  'cmd:chown',
]);
const race = raceEnv('du-race', needs);

/** What each of the decoy's files holds (allocated: written, not sparse). */
const DECOY_FILE = 4 << 20;

describe.runIf(needs.run)('du against a symlink-swapping racer (unprivileged)', () => {
  it('never counts the bytes of what a swapped-in symlink points to', () => {
    const env = race();
    const iters = count(60, 400);
    const H = path.join(env.dir, 'h');
    const home = path.join(H, '.murmur');
    const root = path.join(H, 'w', '.murmur');
    fs.mkdirSync(path.join(home, 'conversations'), { recursive: true });
    const at = Date.now() - 3 * 86_400_000;
    const a = f.writeSession(root, {
      sessionId: f.idAt('ses_', at),
      end: true,
      files: { 'blobs/b1': 'x', 'run.log': 'x' },
    });
    f.writeSession(root, { sessionId: f.idAt('ses_', at + 1000), end: true });
    const decoy = path.join(H, 'decoy');
    fs.mkdirSync(path.join(decoy, 'blobs'), { recursive: true });
    const big = Buffer.alloc(DECOY_FILE, 0x61);
    for (const p of ['trace.jsonl', 'run.log', 'blobs/b1']) fs.writeFileSync(path.join(decoy, p), big);
    const swap = path.join(root, '.swap');
    fs.symlinkSync(decoy, swap);
    const config = path.join(H, 'config.yaml');
    fs.writeFileSync(config, `home: ${home}\nsessions:\n  - root: ${root}\n    retain: { max_age: 3650d }\n`);
    chownR(H, env.user);
    fs.chmodSync(config, 0o644);
    const out = runDriverAsUser<{ iters: number; hits: number; measured: number; max: number }>(
      env,
      'du-race-driver.mjs',
      [config, JSON.stringify(env.racer.argv0), JSON.stringify([[a, swap]]), String(DECOY_FILE), String(iters)],
    );
    figures('du-race', { racer: env.racer.kind, walks: out.iters, decoy_counted: out.hits, measured: out.measured });
    expect(out.hits, `largest root total ${out.max}`).toBe(0);
    // the race was really run: some walks measured the session itself while the racer swapped it
    expect(out.measured).toBeGreaterThan(0);
  }, 900_000);
});
