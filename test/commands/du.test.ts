// `murmur-gc du`: the sizes are du's (checked against the real `du -s -B1`), each byte in one
// kind, what the sweep's planner frees now / within 7 / within 30 days, and it writes nothing.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { diskUsage } from '../../src/commands/du.js';
import { renderDu } from '../../src/cli/du.js';
import { formatBytes } from '../../src/sweep/report.js';
import { restoreTarget } from '../../src/commands/quarantine.js';
import { runSweep } from '../../src/sweep/pipeline.js';
import { loadConfig } from '../../src/config/load.js';
import type { GcConfig } from '../../src/config/types.js';
import { createLogger } from '../../src/log.js';
import * as f from '../helpers/fixtures.js';

let tmp: string;
let home: string;
let root: string;
let c: GcConfig;
const log = createLogger({ level: 'silent' });

function du(p: string): number {
  const r = spawnSync('du', ['-s', '-B1', '-x', p], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return Number(r.stdout.split('\t')[0]);
}

/** Every entry under `dir` with its size and mtime: what "writes nothing" compares. */
function snapshot(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const n of fs.readdirSync(d).sort()) {
      const p = path.join(d, n);
      const st = fs.lstatSync(p);
      out.push(`${p} ${st.size} ${st.mtimeMs} ${st.ino}`);
      if (st.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return out;
}

beforeEach(async () => {
  tmp = fs.realpathSync(f.tempDir('mgc-du'));
  home = path.join(tmp, 'home');
  root = path.join(tmp, 'w', '.murmur');
  fs.mkdirSync(home, { mode: 0o700 });
  fs.mkdirSync(root, { recursive: true });
  const yaml = `home: ${home}\nquarantine: 24h\nsessions:\n  - root: ${root}\n    retain: { max_age: 45d }\nrecords:\n  - capsule: shey\n    retain: { max_age: 90d }\n  - capsule: keep\n`;
  c = await loadConfig({ configPath: f.writeConfig(tmp, yaml), env: { HOME: tmp }, cwd: tmp });
});
afterEach(() => f.rmrf(tmp));

function session(daysAgo: number, files: Record<string, string> = {}): string {
  const startMs = Date.now() - daysAgo * f.DAY;
  const id = f.idAt('ses_', startMs);
  f.writeSession(root, { sessionId: id, startMs, end: true, files });
  return id;
}

describe('murmur-gc du', () => {
  it("sizes equal du -s -B1, kinds add up, the planner's horizons, and it writes nothing", async () => {
    const a1 = session(50, { 'blobs/b1': 'x'.repeat(9000) });
    session(51); // held by the first sweep
    const b = session(40, { 'blobs/b2': 'y'.repeat(20000), 'run.log': 'z'.repeat(5000) });
    // deeper than two levels: this session is read by the descriptor walk
    const mid = session(20, { 'work/deep/x': 'w'.repeat(6000) });
    const young = session(2);
    // a hard link between two sessions counts once; a symlink to elsewhere is not followed
    fs.linkSync(path.join(root, b, 'blobs', 'b2'), path.join(root, young, 'same-blob'));
    fs.writeFileSync(path.join(tmp, 'outside'), 'o'.repeat(100_000));
    fs.symlinkSync(path.join(tmp, 'outside'), path.join(root, young, 'link'));
    fs.mkdirSync(path.join(root, 'children', 'demo-0123456789abcdef'), { recursive: true });
    fs.writeFileSync(path.join(root, 'children', 'demo-0123456789abcdef', 'f'), 'c'.repeat(7000));
    fs.mkdirSync(path.join(tmp, 'w', 'out'));
    fs.writeFileSync(path.join(tmp, 'w', 'out', 'o'), 'o'.repeat(5000));
    f.writeRecord(home, 'shey', 'ctx_old', { capsule: 'shey', messages: 3, mtimeMs: Date.now() - 100 * f.DAY });
    f.writeRecord(home, 'shey', 'ctx_mid', { capsule: 'shey', messages: 3, mtimeMs: Date.now() - 70 * f.DAY });
    f.writeRecord(home, 'keep', 'ctx_kept', { capsule: 'keep', messages: 40 });
    const first = await runSweep({ config: c, dryRun: false, log });
    expect(first.quarantine).toMatchObject({ held: 3 });
    await restoreTarget(c, log, { target: a1, dryRun: false }); // put back, and protected
    // a sweep that changes nothing leaves the trace cache warm
    expect((await runSweep({ config: c, dryRun: false, log })).actions).toEqual([]);
    const gcBefore = snapshot(path.join(home, 'gc'));
    const rootBefore = snapshot(root);

    const r = await diskUsage(c, log);
    expect(snapshot(path.join(home, 'gc'))).toEqual(gcBefore);
    expect(snapshot(root)).toEqual(rootBefore);
    expect(r.inventory.traces_read).toBe(0);
    expect(r.problems).toEqual([]);

    expect(r.roots).toHaveLength(1);
    const x = r.roots[0]!;
    expect(x.bytes).toBe(du(root));
    expect(r.home_bytes).toBe(du(home));
    expect(r.gc.bytes).toBe(du(path.join(home, 'gc')));
    expect(r.gc.held).toBe(du(path.join(home, 'gc', 'quarantine')));
    expect(r.stores.find((s) => s.store === 'shey')!.bytes).toBe(du(path.join(home, 'conversations', 'shey')));
    expect(Object.values(x.by_kind).reduce((n, v) => n + v, 0)).toBe(x.bytes);
    expect(x.by_kind.protected).toBe(du(path.join(root, a1)));
    expect(x.by_kind.child_workdirs).toBe(du(path.join(root, 'children')));
    const heldEntry = fs.readdirSync(root).find((n) => n.startsWith('.murmur-gc-quarantine.'))!;
    expect(x.by_kind.held).toBe(du(path.join(root, heldEntry)));
    expect(x.by_kind.traces).toBe([b, mid, young].reduce((n, s) => n + du(path.join(root, s, 'trace.jsonl')), 0));
    expect(x.by_kind.logs).toBe(du(path.join(root, b, 'run.log')));
    expect(x.beside).toEqual({ wrk_logs: 0, out: du(path.join(tmp, 'w', 'out')) });
    expect(r.stores.find((s) => s.store === 'shey')!.by_capsule).toEqual({
      shey: du(path.join(home, 'conversations', 'shey', 'ctx_mid')),
    });

    // now: nothing is freed (the holds' window has not passed); within 7 days the held session
    // and context are purged and b (40 days old) is held; within 30 days mid and ctx_mid too
    const held = du(path.join(root, heldEntry));
    expect(x.reclaimable.now).toEqual({ bytes: 0, held_bytes: 0, truncations_unmeasured: 0 });
    expect(x.reclaimable.within_7d).toEqual({
      bytes: held,
      held_bytes: du(path.join(root, b)),
      truncations_unmeasured: 0,
    });
    expect(x.reclaimable.within_30d).toEqual({
      bytes: held,
      held_bytes: du(path.join(root, b)) + du(path.join(root, mid)),
      truncations_unmeasured: 0,
    });
    const shey = r.stores.find((s) => s.store === 'shey')!;
    expect(shey.reclaimable.within_30d.held_bytes).toBe(du(path.join(home, 'conversations', 'shey', 'ctx_mid')));
    // (the held context is the one entry of <home>/gc/quarantine)
    const q = path.join(home, 'gc', 'quarantine');
    expect(fs.readdirSync(q)).toHaveLength(1);
    expect(shey.reclaimable.within_7d).toEqual({
      bytes: du(q) - fs.statSync(q).blocks * 512,
      held_bytes: 0,
      truncations_unmeasured: 0,
    });
    // never: the protected session, and a store no rule reaches
    expect(x.never).toBe(du(path.join(root, a1)));
    expect(r.stores.find((s) => s.store === 'keep')!.never).toBe(
      du(path.join(home, 'conversations', 'keep', 'ctx_kept')),
    );
    // each session by its age; the hard-linked blob counts in the first session walked (b)
    expect(x.by_age).toEqual({
      lt_1d: 0,
      lt_7d: du(path.join(root, young)) - du(path.join(root, b, 'blobs', 'b2')),
      lt_30d: du(path.join(root, mid)),
      lt_90d: du(path.join(root, b)) + du(path.join(root, a1)),
      older: 0,
    });

    const text = renderDu(r, { width: 80 });
    for (const line of text.trimEnd().split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
    expect(text).toContain('\n  now 0 B\n');
    expect(text).toContain(`\n  within 7 days ${formatBytes(held + du(q) - fs.statSync(q).blocks * 512)} (and `);
  });

  it('no home: says so and counts the roots', async () => {
    fs.rmSync(home, { recursive: true });
    session(3);
    const r = await diskUsage(c, log);
    expect(r.home_exists).toBe(false);
    expect(r.roots.map((x) => x.bytes)).toEqual([du(root)]);
    expect(fs.existsSync(home)).toBe(false);
    expect(renderDu(r, { width: 80 })).toMatch(/^No murmur home at /);
  });
});
