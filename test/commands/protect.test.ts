// The protection list through the real sweep, restore, protect and release, in process (the clock
// and free space are injected): a restored or protected item is not acted on again, for any
// reason, until it is released; the list is seen, audited, and fails closed when damaged.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listProtection, protectTarget, releaseTarget, renderProtectOutcome } from '../../src/commands/protect.js';
import { restoreTarget } from '../../src/commands/quarantine.js';
import { renderHuman, type SweepReport } from '../../src/sweep/report.js';
import { runSweep } from '../../src/sweep/pipeline.js';
import type { GcConfig } from '../../src/config/types.js';
import { readAuditHistory } from '../../src/commands/audit-read.js';
import { buildHistory, renderHistory } from '../../src/commands/history.js';
import { gatherStatus, renderStatus } from '../../src/commands/status.js';
import { BusyError, RefusalError } from '../../src/errors.js';
import { acquireLock, sweepLockPath } from '../../src/gchome/lock.js';
import type { FsSpace } from '../../src/fsx/statfs.js';
import { createLogger } from '../../src/log.js';
import * as f from '../helpers/fixtures.js';
import { loadTestConfig } from '../helpers/config.js';

let tmp: string;
let home: string;
let root: string;
const log = createLogger({ level: 'silent' });
const notInstalled = () => Promise.resolve({ state: 'not_installed' as const });

beforeEach(() => {
  tmp = fs.realpathSync(f.tempDir('mgc-protect'));
  home = path.join(tmp, 'home');
  root = path.join(tmp, 'app', '.murmur');
  fs.mkdirSync(home, { mode: 0o700 });
  fs.mkdirSync(root, { recursive: true });
});
afterEach(() => f.rmrf(tmp));

const config = (yaml: string): Promise<GcConfig> => loadTestConfig(tmp, home, yaml);

async function sweep(yaml: string, opts: { dryRun?: boolean; space?: FsSpace } = {}): Promise<SweepReport> {
  const c = await config(yaml);
  const space = opts.space;
  return runSweep({
    config: c,
    dryRun: opts.dryRun ?? false,
    log,
    ...(space ? { statfs: () => Promise.resolve(space) } : {}),
  });
}

function session(daysAgo: number, blob = 1000): string {
  const startMs = Date.now() - daysAgo * f.DAY;
  const id = f.idAt('ses_', startMs);
  f.writeSession(root, { sessionId: id, startMs, end: true, files: { blob: 'x'.repeat(blob) } });
  return id;
}

const refusal = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (err) {
    return err instanceof RefusalError ? err.code : `not a refusal: ${String(err)}`;
  }
  return 'no refusal';
};
const protectedSkips = (r: SweepReport) => r.skipped.filter((s) => s.code === 'protected').map((s) => s.target);
const ctxDir = (store: string, c: string) => path.join(home, 'conversations', store, c);

const AGE = () =>
  `quarantine: 24h\nsessions:\n  - root: ${root}\n    retain: { max_age: 30d }\nrecords:\n  - capsule: shey\n    retain: { max_age: 90d, max_messages: 4 }\n`;

describe('a restore is not undone by the next sweep', () => {
  it('a restored session stays in place through the next sweep (and its dry run), reported once as protected', async () => {
    const old = session(40);
    await sweep(AGE());
    expect(fs.existsSync(path.join(root, old))).toBe(false);
    const r = await restoreTarget(await config(AGE()), log, { target: old, dryRun: false });
    expect(r.protection).toMatchObject({
      added: true,
      item: { kind: 'session', target: old, where: root, by: 'restore' },
    });
    const dry = await sweep(AGE(), { dryRun: true });
    const next = await sweep(AGE());
    expect(fs.existsSync(path.join(root, old))).toBe(true);
    expect(next.actions.filter((a) => a.kind === 'remove_session')).toEqual([]);
    expect(protectedSkips(next)).toEqual([`${root}/${old}`]);
    expect(protectedSkips(dry)).toEqual(protectedSkips(next));
    expect(renderHuman(next, 'normal', { width: 10_000 })).toContain('protected 1');
    expect(renderHuman(next, 'verbose', { width: 10_000 })).toContain(`${root}/${old}`);
  });

  it('restored dropped lines are not truncated again, and a restored context is not removed again', async () => {
    const { file } = f.writeRecord(home, 'shey', 'ctx_long', { capsule: 'shey', messages: 10 });
    f.writeRecord(home, 'shey', 'ctx_old', { capsule: 'shey', messages: 2, mtimeMs: Date.now() - 100 * f.DAY });
    await sweep(AGE());
    expect(f.readLines(file)).toHaveLength(5);
    const c = await config(AGE());
    await restoreTarget(c, log, { target: 'ctx_long', dryRun: false });
    await restoreTarget(c, log, { target: 'ctx_old', dryRun: false });
    const restored = fs.readFileSync(file, 'utf8');
    const next = await sweep(AGE());
    expect(fs.readFileSync(file, 'utf8')).toBe(restored);
    expect(fs.existsSync(ctxDir('shey', 'ctx_old'))).toBe(true);
    expect(next.actions.filter((a) => a.kind === 'truncate_record' || a.kind === 'remove_record')).toEqual([]);
    expect(protectedSkips(next).sort()).toEqual(['shey/ctx_long', 'shey/ctx_old']);
  });

  it('restore says plainly that the item is still condemned, and that the runtime prunes at its own launch', async () => {
    const old = session(40);
    const young = session(40);
    await sweep(AGE());
    const r = await restoreTarget(await config(AGE()), log, { target: old, dryRun: false });
    expect(r.protection?.judgement).toEqual({ condemned: 'max_age', policy: 'max_age 30d', unknown: null });
    expect(r.protection?.runtime).toContain("outside murmur-gc's reach");
    // a policy that no longer condemns it: said too
    const lenient = `quarantine: 24h\nsessions:\n  - root: ${root}\n    retain: { max_age: 90d }\n`;
    const r2 = await restoreTarget(await config(lenient), log, { target: young, dryRun: false });
    expect(r2.protection?.judgement).toEqual({ condemned: null, policy: 'max_age 90d', unknown: null });
    const cli = spawnSync(process.execPath, [f.BIN, 'protection', 'ls', '--config', path.join(tmp, 'config.yaml')], {
      encoding: 'utf8',
      env: f.cliEnv(tmp),
    });
    expect(cli.status).toBe(0);
    expect(cli.stdout).toContain(old);
    expect(cli.stdout).toContain(young);
  });
});

describe('protect and release', () => {
  it('protects ahead of time against every reason: max_age, max_sessions, max_messages, max_bytes, keep_free', async () => {
    const a = session(40, 5000); // max_age
    const ids = [session(5, 5000), session(4, 5000), session(3, 5000)];
    f.writeRecord(home, 'shey', 'ctx_aged', { capsule: 'shey', messages: 2, mtimeMs: Date.now() - 100 * f.DAY });
    f.writeRecord(home, 'shey', 'ctx_long', { capsule: 'shey', messages: 10 });
    f.writeRecord(home, 'shey', 'ctx_spare', { capsule: 'shey', messages: 2, mtimeMs: Date.now() - 10 * f.DAY });
    // no per-sweep bound: keep_free could take every item
    const yaml = `keep_free: { free: 1G, per_sweep: 100% }\nsessions:\n  - root: ${root}\n    retain: { max_age: 30d, max_sessions: 3 }\n    max_bytes: 6000\nrecords:\n  - capsule: shey\n    retain: { max_age: 90d, max_messages: 4 }\n`;
    const c = await config(yaml);
    for (const t of [a, ...ids]) await protectTarget(c, log, { target: t });
    for (const t of ['ctx_aged', 'ctx_long', 'ctx_spare']) await protectTarget(c, log, { target: t });
    // keep_free short by all but one byte of what every item holds (as `du` counts it): without
    // protection max_bytes would take the sessions and keep_free every record, and it could be met
    const du = (p: string) => Number(execFileSync('du', ['-s', '-B1', p], { encoding: 'utf8' }).split('\t')[0]);
    const all =
      [a, ...ids].reduce((n, t) => n + du(path.join(root, t)), 0) +
      ['ctx_aged', 'ctx_long', 'ctx_spare'].reduce((n, t) => n + du(ctxDir('shey', t)), 0);
    const space = { totalBytes: 1e12, freeBytes: 2 ** 30 - (all - 1) };
    const dry = await sweep(yaml, { dryRun: true, space });
    const r = await sweep(yaml, { space });
    expect(r.actions.filter((x) => ['remove_session', 'remove_record', 'truncate_record'].includes(x.kind))).toEqual(
      [],
    );
    for (const t of [a, ...ids]) expect(fs.existsSync(path.join(root, t))).toBe(true);
    for (const t of ['ctx_aged', 'ctx_long', 'ctx_spare']) expect(fs.existsSync(ctxDir('shey', t))).toBe(true);
    // each protected item that something would have acted on: one skip, whatever the reasons
    const skips = protectedSkips(r);
    expect(skips.sort()).toEqual(
      [a, ...ids]
        .map((t) => `${root}/${t}`)
        .concat(['shey/ctx_aged', 'shey/ctx_long', 'shey/ctx_spare'])
        .sort(),
    );
    expect(new Set(skips).size).toBe(skips.length);
    expect(protectedSkips(dry).sort()).toEqual(skips.sort());
    expect(r.budget?.unmet.map((u) => Object.keys(u.held))).toEqual([['protected'], ['protected']]);
    expect(r.errors).toEqual([]);
  });

  it('protecting a session keeps its max_sessions rank: no other session is removed in its place', async () => {
    const ids = [session(5), session(4), session(3), session(2), session(1)]; // oldest first
    const yaml = `sessions:\n  - root: ${root}\n    retain: { max_sessions: 3 }\n`;
    await protectTarget(await config(yaml), log, { target: ids[1]! });
    const r = await sweep(yaml);
    expect(r.actions.flatMap((x) => (x.kind === 'remove_session' ? [x.target] : []))).toEqual([ids[0]]);
    expect(protectedSkips(r)).toEqual([`${root}/${ids[1]}`]);
    for (const id of ids.slice(1)) expect(fs.existsSync(path.join(root, id))).toBe(true);
  });

  it('release lets the policy act again; both are audited and history --target shows them', async () => {
    const old = session(40);
    const yaml = `sessions:\n  - root: ${root}\n    retain: { max_age: 30d }\n`;
    const c = await config(yaml);
    const p = await protectTarget(c, log, { target: old, note: 'kept for the incident review' });
    expect(p).toMatchObject({ added: true, present: true, judgement: { condemned: 'max_age' } });
    expect((await protectTarget(c, log, { target: old })).added).toBe(false);
    expect((await listProtection(c)).items).toEqual([
      expect.objectContaining({
        kind: 'session',
        target: old,
        where: root,
        by: 'protect',
        note: 'kept for the incident review',
        present: true,
      }),
    ]);
    expect(renderStatus(await gatherStatus(c, notInstalled), Date.now(), { width: 10_000 })).toMatch(
      /protected\s+1 item/,
    );
    expect((await sweep(yaml)).actions).toEqual([]);
    const rel = await releaseTarget(c, log, { target: old });
    expect(rel.judgement.condemned).toBe('max_age');
    expect((await listProtection(c)).items).toEqual([]);
    const r = await sweep(yaml);
    expect(r.actions.map((x) => [x.kind, 'target' in x ? x.target : undefined])).toEqual([['remove_session', old]]);
    const read = await readAuditHistory(home, { target: old });
    const doc = buildHistory(
      { home, auditRoot: read.auditRoot, exists: read.exists, problems: read.problems, where: read.where },
      read.sweeps,
      { target: old },
    );
    expect(doc.matches?.map((m) => m.action)).toEqual(['protected', 'released', 'removed']);
    const text = renderHistory(doc);
    expect(text).toContain('protected by murmur-gc protect');
    expect(text).toContain('released by murmur-gc release');
  });

  it('refuses what it cannot name exactly, and protects ahead of time with --root/--record', async () => {
    const yaml = `sessions:\n  - root: ${root}\n    retain: { max_age: 30d }\nrecords:\n  - capsule: shey\n    retain: { max_age: 90d }\n`;
    const c = await config(yaml);
    expect(await refusal(protectTarget(c, log, { target: 'ses_01a00000000070008000000000000000' }))).toBe(
      'protect_not_found',
    );
    expect(await refusal(protectTarget(c, log, { target: 'ctx_none' }))).toBe('protect_not_found');
    expect(await refusal(releaseTarget(c, log, { target: 'ctx_none' }))).toBe('release_not_protected');
    f.writeRecord(home, 'shey', 'ctx_here', { capsule: 'shey', messages: 2 });
    expect(await refusal(protectTarget(c, log, { target: 'ctx_here', root }))).toBe('protect_not_found'); // --root is for sessions
    expect((await listProtection(c)).items).toEqual([]);
    const p = await protectTarget(c, log, { target: 'ctx_later', record: 'shey' });
    expect(p).toMatchObject({ added: true, present: false });
    f.writeRecord(home, 'shey', 'ctx_later', { capsule: 'shey', messages: 2, mtimeMs: Date.now() - 100 * f.DAY });
    const r = await sweep(yaml);
    expect(fs.existsSync(ctxDir('shey', 'ctx_later'))).toBe(true);
    expect(protectedSkips(r)).toEqual(['shey/ctx_later']);
  });

  it('takes a name that starts with ses_ but is no session id for a context id, and says so when nothing matches', async () => {
    const yaml = `sessions:\n  - root: ${root}\n    retain: { max_age: 30d }\nrecords:\n  - capsule: shey\n    retain: { max_age: 90d }\n`;
    const c = await config(yaml);
    const message = async (p: Promise<unknown>) => {
      try {
        await p;
      } catch (err) {
        return err instanceof RefusalError ? `${err.code}: ${err.message}` : `not a refusal: ${String(err)}`;
      }
      return 'no refusal';
    };
    const taken =
      "'ses_nonexistent' is not a session id (ses_ followed by at least 12 hex digits), so it is taken for a context id";
    expect(await message(protectTarget(c, log, { target: 'ses_nonexistent' }))).toBe(
      `protect_not_found: ${taken}, and no configured record store holds a context of that name`,
    );
    expect(await message(protectTarget(c, log, { target: 'ses_nonexistent', root }))).toBe(
      `protect_not_found: ${taken}; --root names a sessions root`,
    );
    expect(await message(releaseTarget(c, log, { target: 'ses_nonexistent', record: 'shey' }))).toBe(
      `release_not_protected: ${taken}, and no context of that name is protected in record store shey`,
    );
    expect(await message(releaseTarget(c, log, { target: 'ses_nonexistent' }))).toBe(
      'release_not_protected: ses_nonexistent is not protected',
    );
    // a session id and a context id keep their own words
    expect(await message(protectTarget(c, log, { target: 'ses_01a00000000070008000000000000000' }))).toBe(
      'protect_not_found: session ses_01a00000000070008000000000000000 is in no configured sessions root',
    );
    expect(await message(protectTarget(c, log, { target: 'ctx_none' }))).toBe(
      'protect_not_found: context ctx_none is in no configured record store',
    );
    expect(await message(protectTarget(c, log, { target: 'ctx_none', root }))).toBe(
      'protect_not_found: ctx_none is a context id (not ses_…); --root names a sessions root',
    );

    // A context of that name is one: protected in its record store, kept by the sweep, released.
    f.writeRecord(home, 'shey', 'ses_ctx', { capsule: 'shey', messages: 2, mtimeMs: Date.now() - 100 * f.DAY });
    const p = await protectTarget(c, log, { target: 'ses_ctx' });
    expect(p.item).toMatchObject({ kind: 'context', target: 'ses_ctx', where: 'shey' });
    expect(protectedSkips(await sweep(yaml))).toEqual(['shey/ses_ctx']);
    expect(fs.existsSync(ctxDir('shey', 'ses_ctx'))).toBe(true);
    expect((await releaseTarget(c, log, { target: 'ses_ctx' })).item).toMatchObject({ kind: 'context', where: 'shey' });
  });

  it('release finds an item by its name whatever kind the list gives it (a list written when ses_ names were all sessions)', async () => {
    const c = await config(`sessions:\n  - root: ${root}\n    retain: { max_age: 30d }\n`);
    fs.mkdirSync(path.join(home, 'gc'), { recursive: true, mode: 0o700 });
    fs.writeFileSync(
      path.join(home, 'gc', 'protected.json'),
      JSON.stringify({
        version: 1,
        items: [{ kind: 'session', target: 'ses_old', where: root, since_ms: Date.now(), by: 'protect' }],
      }),
    );
    const r = await releaseTarget(c, log, { target: 'ses_old' });
    expect(r.item).toMatchObject({ kind: 'session', target: 'ses_old', where: root });
    expect((await listProtection(c)).items).toEqual([]);
  });
});

describe('protect twice', () => {
  it('says since when, in the one human time format (UTC wall clock), and changes nothing', async () => {
    const c = await config(`records:\n  - capsule: shey\n    retain: { max_age: 90d }\n`);
    const since = Date.UTC(2026, 10, 30, 20, 16, 44, 789);
    expect(await protectTarget(c, log, { target: 'ctx_later', record: 'shey' }, () => since)).toMatchObject({
      added: true,
    });
    const again = await protectTarget(c, log, { target: 'ctx_later', record: 'shey' }, () => since + f.DAY);
    expect(again).toMatchObject({ added: false });
    expect(renderProtectOutcome(again)[0]).toBe(
      `context ctx_later was already protected (since 2026-11-30 20:16:44 UTC, by ${again.item.by}); nothing changed`,
    );
    expect((await listProtection(c)).items.map((i) => i.since_ms)).toEqual([since]);
  });
});

describe('protect and release wait for the sweep lock', () => {
  it('a sweep holding the lock makes protect exit busy (75), and the list is unchanged', async () => {
    const old = session(40);
    const c = await config(`sessions:\n  - root: ${root}\n    retain: { max_age: 30d }\n`);
    fs.mkdirSync(path.join(home, 'gc'), { mode: 0o700 });
    const lock = await acquireLock(sweepLockPath(home), { waitMs: 0 });
    try {
      const err = await protectTarget(c, log, { target: old }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(BusyError);
      expect((err as BusyError).exitCode).toBe(75);
    } finally {
      await lock?.release();
    }
    expect((await listProtection(c)).items).toEqual([]);
  });
});

describe('a damaged protection list fails closed', () => {
  it('restore still puts the item back, and says it is NOT protected (protected_unreadable)', async () => {
    const old = session(40);
    await sweep(AGE());
    fs.writeFileSync(path.join(home, 'gc', 'protected.json'), 'garbage');
    const r = await restoreTarget(await config(AGE()), log, { target: old, dryRun: false });
    expect(fs.existsSync(path.join(root, old))).toBe(true);
    expect(r.protection).toBeUndefined();
    expect(r.protection_error?.code).toBe('protected_unreadable');
    expect(fs.readFileSync(path.join(home, 'gc', 'protected.json'), 'utf8')).toBe('garbage');
    // and the next sweep keeps everything while the list is unreadable
    const next = await sweep(AGE());
    expect(fs.existsSync(path.join(root, old))).toBe(true);
    expect(next.errors.map((e) => e.code)).toEqual(['protected_unreadable']);
  });

  for (const [what, make] of [
    ['garbage', (p: string) => fs.writeFileSync(p, '{"version":1,"items":[')],
    ['empty', (p: string) => fs.writeFileSync(p, '')],
    ['huge', (p: string) => fs.writeFileSync(p, Buffer.alloc(5 << 20, 0x20))],
    ['a FIFO', (p: string) => spawnSync('mkfifo', [p])],
  ] as const) {
    it(`${what}: the sweep reports protected_unreadable, removes nothing, and protect refuses to overwrite it`, async () => {
      const old = session(40);
      f.writeRecord(home, 'shey', 'ctx_old', { capsule: 'shey', messages: 2, mtimeMs: Date.now() - 100 * f.DAY });
      const yaml = `sessions:\n  - root: ${root}\n    retain: { max_age: 30d }\nrecords:\n  - capsule: shey\n    retain: { max_age: 90d }\n`;
      fs.mkdirSync(path.join(home, 'gc'), { mode: 0o700 });
      const file = path.join(home, 'gc', 'protected.json');
      make(file);
      const before = fs.lstatSync(file);
      const r = await sweep(yaml);
      expect(r.errors.map((e) => [e.code, e.target])).toEqual([['protected_unreadable', file]]);
      expect(fs.existsSync(path.join(root, old))).toBe(true);
      expect(fs.existsSync(ctxDir('shey', 'ctx_old'))).toBe(true);
      const c = await config(yaml);
      expect((await listProtection(c)).unreadable).toContain(file);
      expect(await refusal(protectTarget(c, log, { target: old }))).toBe('protected_unreadable');
      expect(fs.lstatSync(file).ino).toBe(before.ino);
      expect(renderStatus(await gatherStatus(c, notInstalled), Date.now(), { width: 10_000 })).toContain(
        'every item counts as protected',
      );
    });
  }
});
