// status's next expiries (docs/forecast.md "Next expiries") are what a sweep does at those
// instants: a dry run with its clock a ms before the next purge purges nothing and at it purges
// exactly the items and bytes status names; likewise the next item a max_age policy condemns. And
// working them out writes nothing.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { gatherStatus } from '../../src/commands/status.js';
import { runSweep } from '../../src/sweep/pipeline.js';
import { createLogger } from '../../src/log.js';
import * as f from '../helpers/fixtures.js';

const DAY = f.DAY;
const log = createLogger({ level: 'silent' });
let T: string;
beforeEach(() => (T = fs.realpathSync(f.tempDir('mgc-expiries'))));
afterEach(() => f.rmrf(T));

describe('status: next expiries', () => {
  it('name the instant and the size of what the next sweep after it takes', async () => {
    const now = Math.floor(Date.now() / 1000) * 1000;
    const home = path.join(T, 'home');
    const root = path.join(T, 'app', '.murmur');
    fs.mkdirSync(root, { recursive: true });
    const ses = (ageDays: number, blob: number) => {
      const id = f.idAt('ses_', now - ageDays * DAY);
      f.writeSession(root, {
        sessionId: id,
        startMs: now - ageDays * DAY,
        end: true,
        files: { blob: 'x'.repeat(blob) },
      });
      return id;
    };
    ses(40, 5000);
    ses(45, 9000);
    const young = ses(20, 100);
    ses(12, 100);
    f.writeRecord(home, 's0', 'ctx_old', { capsule: 'shey', messages: 3, mtimeMs: now - 20 * DAY });
    f.writeRecord(home, 's0', 'ctx_young', { capsule: 'shey', messages: 3, mtimeMs: now - 12 * DAY });
    f.writeRecord(home, 's0', 'ctx_foreign', { capsule: 'other', messages: 3, mtimeMs: now - 14 * DAY });
    const configPath = f.writeConfig(
      T,
      `home: ${home}\nquarantine: 7d\nsessions:\n  - root: ${root}\n    retain: { max_age: 30d }\nrecords:\n  - capsule: shey\n    store: s0\n    retain: { max_age: 15d }\n`,
    );
    const config = await loadConfig({ configPath, env: { HOME: T }, cwd: T });
    // a sweep two days ago held the two old sessions and the old context for 7 days
    const earlier = await runSweep({ config, dryRun: false, log, now: () => now - 2 * DAY });
    expect(earlier.actions.filter((a) => 'held' in a && a.held).length).toBe(3);

    const snapshot = () => [home, root].map((p) => f.snapshotTree(p));
    const before = snapshot();
    const s = await gatherStatus(config, () => Promise.resolve({ state: 'inactive' }), now);
    expect(snapshot(), 'status wrote nothing').toEqual(before);

    const purge = s.next_expiries.purge!;
    expect(purge.items).toBe(3);
    expect(purge.at_ms).toBeGreaterThan(now + 4 * DAY);
    expect(purge.at_ms).toBeLessThan(now + 6 * DAY);
    const purged = async (at: number) =>
      (await runSweep({ config, dryRun: true, log, now: () => at })).actions.filter(
        (a) => a.kind === 'purge_quarantine',
      );
    expect(await purged(purge.at_ms - 1)).toEqual([]);
    const at = await purged(purge.at_ms);
    expect(at.length).toBe(purge.items);
    expect(at.reduce((n, a) => n + a.bytes, 0)).toBe(purge.bytes);

    // ctx_young (12 of 15 days) goes before the 20-day session (of 30); ctx_foreign is no policy's
    expect(s.next_expiries.max_age).toEqual({
      at_ms: now - 12 * DAY + 15 * DAY + 1,
      store: 'records',
      origin: 's0',
      target: 'ctx_young',
    });
    const condemned = async (t: number) =>
      (await runSweep({ config, dryRun: true, log, now: () => t })).actions
        .filter((a) => (a.kind === 'remove_record' || a.kind === 'remove_session') && a.reason === 'max_age')
        .map((a) => ('target' in a ? a.target : ''));
    const due = s.next_expiries.max_age!.at_ms;
    expect(await condemned(due - 1)).toEqual([]);
    expect(await condemned(due)).toEqual(['ctx_young']);
    expect(await condemned(now - 20 * DAY + 30 * DAY + 1)).toContain(young);
  });

  it('are null when nothing is held and no policy has max_age', async () => {
    const home = path.join(T, 'home');
    const root = path.join(T, 'app', '.murmur');
    fs.mkdirSync(root, { recursive: true });
    f.writeSession(root, { sessionId: f.idAt('ses_', Date.now() - DAY), startMs: Date.now() - DAY, end: true });
    const configPath = f.writeConfig(
      T,
      `home: ${home}\nsessions:\n  - root: ${root}\n    retain: { max_sessions: 5 }\n`,
    );
    const config = await loadConfig({ configPath, env: { HOME: T }, cwd: T });
    const s = await gatherStatus(config, () => Promise.resolve({ state: 'inactive' }));
    expect(s.next_expiries).toEqual({ purge: null, max_age: null });
  });
});
