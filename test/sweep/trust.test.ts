// Only what murmur-gc's registry names is murmur-gc's (docs/design.md §4a): a capsule can create
// `.murmur-gc-quarantine.*`, `.murmur-gc-trash.*` and `.murmur-gc-kept.*` in its own sessions root
// and children/, and none of those is ever held into, purged, restored or removed — each is
// reported once per directory and sweep (`unverified_gc_entry`). Holds murmur-gc made are purged,
// restored and held into as before; one replaced by a look-alike is not. In process, the clock
// injected.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { restoreTarget } from '../../src/commands/quarantine.js';
import { listHeld } from '../../src/gchome/held-listing.js';
import { runSweep } from '../../src/sweep/pipeline.js';
import type { SweepReport } from '../../src/sweep/report.js';
import type { GcConfig } from '../../src/config/types.js';
import { createLogger } from '../../src/log.js';
import * as f from '../helpers/fixtures.js';
import { loadTestConfig } from '../helpers/config.js';

let tmp: string;
let home: string;
let W: string;
let root: string;
const log = createLogger({ level: 'silent' });
const now = Date.now();

beforeEach(() => {
  tmp = fs.realpathSync(f.tempDir('mgc-trust'));
  home = path.join(tmp, 'home');
  W = path.join(tmp, 'app');
  root = path.join(W, '.murmur');
  fs.mkdirSync(home, { mode: 0o700 });
  fs.mkdirSync(root, { recursive: true });
});
afterEach(() => f.rmrf(tmp));

const config = (yaml: string): Promise<GcConfig> => loadTestConfig(tmp, home, yaml);

async function sweep(yaml: string, o: { dryRun?: boolean; nowMs?: number } = {}): Promise<SweepReport> {
  return runSweep({ config: await config(yaml), dryRun: o.dryRun ?? false, log, now: () => o.nowMs ?? Date.now() });
}

/** A finished child workdir no session of the root names (an orphan). */
function child(): { name: string; dir: string } {
  const name = `worker-${f.hex(16)}`;
  const dir = path.join(root, 'children', name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'task.md'), 'do it');
  fs.writeFileSync(path.join(dir, 'completion.json'), JSON.stringify({ status: 'ok' }));
  f.writeSession(path.join(dir, '.murmur'), {
    sessionId: f.idAt('ses_', now - 4 * f.DAY),
    startMs: now - 4 * f.DAY,
    end: true,
  });
  return { name, dir };
}

function workLog(): { id: string; file: string } {
  const id = f.idAt('wrk_', now - 5 * f.DAY).replace(/[^0-9a-z_]/g, '');
  fs.mkdirSync(path.join(W, 'logs'), { recursive: true });
  const file = path.join(W, 'logs', `${id}.log`);
  fs.writeFileSync(file, 'y'.repeat(3000));
  return { id, file };
}

/** A directory named like a hold, made by the capsule: its trace names `c` (finished) and the log `w`. */
function plantedHold(untilMs: number, c: { name: string }, w: { id: string }): { entry: string; session: string } {
  const session = f.idAt('ses_', now - 20 * f.DAY);
  const entry = `.murmur-gc-quarantine.${untilMs}.${session}`;
  const t = now - 20 * f.DAY;
  const del = 'del_0_aaaaaaaa';
  const extra =
    JSON.stringify({
      event_type: 'delegation_start',
      event_id: f.idAt('evt_', t + 1),
      parent_id: null,
      session_id: session,
      timestamp: t + 1,
      delegation_id: del,
      capsule: 'worker',
      version: '1.0.0',
      child_session_id: f.idAt('ses_', t + 1),
      child_workdir: `.murmur/children/${c.name}`,
    }) +
    '\n' +
    JSON.stringify({
      event_type: 'delegation',
      event_id: f.idAt('evt_', t + 2),
      parent_id: null,
      session_id: session,
      timestamp: t + 2,
      delegation_id: del,
      child_session_id: f.idAt('ses_', t + 2),
      outcome: 'ok',
    }) +
    '\n';
  const dir = f.writeSession(root, {
    sessionId: session,
    startMs: t,
    end: true,
    detached: [{ workId: w.id }],
    accounted: [{ workId: w.id, type: 'shell_completed' as const }],
    extra,
  });
  fs.renameSync(dir, path.join(root, entry));
  return { entry, session };
}

const unverified = (r: SweepReport) => r.skipped.filter((s) => s.code === 'unverified_gc_entry');

describe('an entry named like a hold that murmur-gc never made', () => {
  it('is never held into, never purged (its window passes), never restored; reported once per sweep; dry run = real run', async () => {
    const c = child();
    const w = workLog();
    const until = now + 2 * f.DAY;
    const planted = plantedHold(until, c, w);
    f.writeSession(root, { sessionId: f.idAt('ses_', now - f.DAY), startMs: now - f.DAY, end: true });
    // quarantine on, and no retain block for this root: nothing here may be removed or held
    const yaml = `quarantine: 24h\nsessions:\n  - root: ${root}\n`;
    for (const nowMs of [now, until + f.DAY]) {
      const dry = await sweep(yaml, { dryRun: true, nowMs });
      const r = await sweep(yaml, { nowMs });
      expect(r.errors).toEqual([]);
      expect(r.actions).toEqual([]);
      expect(dry.actions).toEqual([]);
      expect(unverified(r)).toEqual([expect.objectContaining({ target: root })]);
      expect(unverified(dry)).toEqual(unverified(r));
      expect(unverified(r)[0]?.detail).toContain(planted.entry);
      expect(unverified(r)[0]?.detail).toContain("not murmur-gc's, so never held into, purged, restored or removed");
      expect(fs.existsSync(path.join(root, planted.entry, 'trace.jsonl'))).toBe(true);
      expect(fs.readFileSync(path.join(c.dir, 'task.md'), 'utf8')).toBe('do it');
      expect(fs.readFileSync(w.file, 'utf8')).toBe('y'.repeat(3000));
      expect(fs.existsSync(path.join(root, planted.entry, '.murmur-gc-beside'))).toBe(false);
      expect(r.audit).toBeNull();
    }
    await expect(
      restoreTarget(await config(yaml), log, { target: planted.session, dryRun: false }),
    ).rejects.toMatchObject({ code: 'restore_not_held' });
    expect(fs.existsSync(path.join(root, planted.session))).toBe(false);
    const l = await listHeld(await config(yaml));
    expect(l.items).toEqual([]);
    expect(l.problems).toEqual([
      expect.objectContaining({ code: 'unverified_gc_entry', target: path.join(root, planted.entry) }),
    ]);
  });

  it('under a policy too: the orphan it names stays tied (never an orphan), and nothing is held into it', async () => {
    const c = child();
    fs.utimesSync(c.dir, (now - 10 * f.DAY) / 1000, (now - 10 * f.DAY) / 1000); // old enough for children.max_age
    const w = workLog();
    const planted = plantedHold(now + f.DAY, c, w);
    f.writeSession(root, { sessionId: f.idAt('ses_', now - f.DAY), startMs: now - f.DAY, end: true });
    const r = await sweep(
      `quarantine: 24h\nsessions:\n  - root: ${root}\n    retain: { max_sessions: 5 }\n    children: { max_age: 1d }\n`,
    );
    expect(r.errors).toEqual([]);
    expect(r.actions).toEqual([]);
    expect(fs.existsSync(c.dir) && fs.existsSync(w.file)).toBe(true);
    expect(fs.existsSync(path.join(root, planted.entry, '.murmur-gc-beside'))).toBe(false);
  });

  it("a hold murmur-gc made and a capsule replaced with a look-alike of the same name is not murmur-gc's any more", async () => {
    const old = f.idAt('ses_', now - 40 * f.DAY);
    f.writeSession(root, { sessionId: old, startMs: now - 40 * f.DAY, end: true });
    f.writeSession(root, { sessionId: f.idAt('ses_', now - f.DAY), startMs: now - f.DAY, end: true });
    const yaml = `quarantine: 24h\nsessions:\n  - root: ${root}\n    retain: { max_age: 30d }\n`;
    const held = await sweep(yaml);
    expect(held.actions.filter((a) => a.kind === 'remove_session')).toEqual([
      expect.objectContaining({ target: old, held: expect.anything() as unknown }),
    ]);
    const entry = fs.readdirSync(root).find((n) => n.startsWith('.murmur-gc-quarantine.'))!;
    expect((await listHeld(await config(yaml))).items.map((i) => i.entry)).toEqual([entry]);
    // the capsule moves the hold away and puts its own directory under that name
    fs.renameSync(path.join(root, entry), path.join(root, 'moved-away'));
    fs.mkdirSync(path.join(root, entry));
    fs.writeFileSync(path.join(root, entry, 'precious'), 'p');
    const later = await sweep(yaml, { nowMs: now + 2 * f.DAY });
    expect(later.errors).toEqual([]);
    expect(later.actions.filter((a) => a.kind === 'purge_quarantine')).toEqual([]);
    expect(fs.readFileSync(path.join(root, entry, 'precious'), 'utf8')).toBe('p');
    expect(unverified(later)).toEqual([expect.objectContaining({ target: root })]);
    await expect(restoreTarget(await config(yaml), log, { target: old, dryRun: false })).rejects.toMatchObject({
      code: 'restore_not_held',
    });
  });

  it('a hold made by an older murmur-gc (no record of it) is reported with how to release it by hand, and left alone', async () => {
    const old = f.idAt('ses_', now - 40 * f.DAY);
    const dir = f.writeSession(root, { sessionId: old, startMs: now - 40 * f.DAY, end: true });
    const entry = `.murmur-gc-quarantine.${now - f.DAY}.${old}`;
    fs.renameSync(dir, path.join(root, entry));
    const r = await sweep(`quarantine: 24h\nsessions:\n  - root: ${root}\n    retain: { max_age: 30d }\n`);
    expect(r.errors).toEqual([]);
    expect(r.actions).toEqual([]);
    expect(fs.existsSync(path.join(root, entry, 'trace.jsonl'))).toBe(true);
    expect(unverified(r)[0]?.detail).toMatch(
      /older murmur-gc.*mv <root>\/\.murmur-gc-quarantine\.<until>\.<ses> <root>\/<ses>.*delete it by hand/,
    );
  });
});

describe("murmur-gc's own holds", () => {
  it('are recorded before they are made, purged once their window passes, and the registry keeps only what is there', async () => {
    const old = f.idAt('ses_', now - 40 * f.DAY);
    f.writeSession(root, { sessionId: old, startMs: now - 40 * f.DAY, end: true });
    f.writeSession(root, { sessionId: f.idAt('ses_', now - f.DAY), startMs: now - f.DAY, end: true });
    const yaml = `quarantine: 24h\nsessions:\n  - root: ${root}\n    retain: { max_age: 30d }\n`;
    const r = await sweep(yaml);
    expect(r.errors).toEqual([]);
    const entry = fs.readdirSync(root).find((n) => n.startsWith('.murmur-gc-quarantine.'))!;
    const registry = () =>
      fs
        .readFileSync(path.join(home, 'gc', 'registry.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(registry()).toEqual([
      expect.objectContaining({ op: 'add', dir: root, name: entry, kind: 'hold', session: old, reason: 'max_age' }),
      { op: 'settled' },
    ]);
    const purge = await sweep(yaml, { nowMs: now + 2 * f.DAY });
    expect(purge.errors).toEqual([]);
    expect(purge.skipped.filter((s) => s.code === 'unverified_gc_entry')).toEqual([]);
    expect(purge.actions.filter((a) => a.kind === 'purge_quarantine')).toEqual([
      expect.objectContaining({ target: old, held_kind: 'session' }),
    ]);
    expect(fs.existsSync(path.join(root, entry))).toBe(false);
    expect(registry()).toEqual([{ op: 'settled' }]);
  });
});

describe('trash and kept-aside names murmur-gc never made', () => {
  it('in a sessions root and in children/: never removed, never retried, reported once per directory; a dry run says the same', async () => {
    const planted = [
      path.join(root, `.murmur-gc-trash.${f.idAt('ses_', now - f.DAY)}.ses_x`),
      path.join(root, `.murmur-gc-kept.${f.idAt('ses_', now - f.DAY)}.ses_y`),
      path.join(root, 'children', `.murmur-gc-trash.${f.idAt('ses_', now - f.DAY)}.worker-0123456789abcdef`),
    ];
    for (const p of planted) {
      fs.mkdirSync(p, { recursive: true });
      fs.writeFileSync(path.join(p, 'precious'), 'p');
    }
    f.writeSession(root, { sessionId: f.idAt('ses_', now - f.DAY), startMs: now - f.DAY, end: true });
    const yaml = `sessions:\n  - root: ${root}\n    retain: { max_sessions: 5 }\n`;
    const dry = await sweep(yaml, { dryRun: true });
    const r = await sweep(yaml);
    expect(r.errors).toEqual([]);
    expect(r.actions).toEqual([]);
    expect(dry.actions).toEqual([]);
    for (const p of planted) expect(fs.readFileSync(path.join(p, 'precious'), 'utf8')).toBe('p');
    expect(
      unverified(r)
        .map((s) => s.target)
        .sort(),
    ).toEqual([root, path.join(root, 'children')].sort());
    expect(unverified(dry)).toEqual(unverified(r));
    expect(r.kept).toBeUndefined();
  });

  it('a trash directory murmur-gc recorded (a removal killed after its rename) is finished', async () => {
    const t = path.join(root, `.murmur-gc-trash.${f.idAt('ses_', now - f.DAY)}.ses_x`);
    fs.mkdirSync(t, { recursive: true });
    f.vouch(home, root, path.basename(t));
    const r = await sweep(`sessions:\n  - root: ${root}\n`);
    expect(r.errors).toEqual([]);
    expect(r.actions).toEqual([
      expect.objectContaining({ kind: 'remove_debris', path: t, code: 'process_interrupted' }),
    ]);
    expect(fs.existsSync(t)).toBe(false);
    expect(unverified(r)).toEqual([]);
  });
});

describe('held sessions and killed removals beside a root', () => {
  /** A finished session of the root whose trace launched `c` (finished when `ended`). */
  function parentOf(daysAgo: number, c: { name: string }, ended: boolean): string {
    const t = now - daysAgo * f.DAY;
    const id = f.idAt('ses_', t);
    const del = `del_0_${f.hex(8)}`;
    const lines = [
      JSON.stringify({
        event_type: 'delegation_start',
        event_id: f.idAt('evt_', t + 1),
        parent_id: null,
        session_id: id,
        timestamp: t + 1,
        delegation_id: del,
        capsule: 'worker',
        version: '1.0.0',
        child_session_id: f.idAt('ses_', t + 1),
        child_workdir: `.murmur/children/${c.name}`,
      }),
    ];
    if (ended)
      lines.push(
        JSON.stringify({
          event_type: 'delegation',
          event_id: f.idAt('evt_', t + 2),
          parent_id: null,
          session_id: id,
          timestamp: t + 2,
          delegation_id: del,
          child_session_id: f.idAt('ses_', t + 2),
          outcome: 'ok',
        }),
      );
    f.writeSession(root, { sessionId: id, startMs: t, end: true, extra: lines.map((l) => l + '\n').join('') });
    return id;
  }

  it('a held session whose trace cannot be read keeps every orphan of its root (it may name any)', async () => {
    const c = child();
    fs.rmSync(path.join(c.dir, 'completion.json'));
    const old = f.idAt('ses_', now - 40 * f.DAY);
    f.writeSession(root, { sessionId: old, startMs: now - 40 * f.DAY, end: true });
    f.writeSession(root, { sessionId: f.idAt('ses_', now - f.DAY), startMs: now - f.DAY, end: true });
    const yaml = `quarantine: 24h\nsessions:\n  - root: ${root}\n    retain: { max_age: 30d }\n    children: { max_age: 2d }\n`;
    expect((await sweep(yaml)).errors).toEqual([]);
    const entry = fs.readdirSync(root).find((n) => n.startsWith('.murmur-gc-quarantine.'))!;
    // the held trace becomes unreadable (a directory in its place); the orphan is old enough
    fs.rmSync(path.join(root, entry, 'trace.jsonl'));
    fs.mkdirSync(path.join(root, entry, 'trace.jsonl'));
    fs.utimesSync(c.dir, (now - 10 * f.DAY) / 1000, (now - 10 * f.DAY) / 1000);
    const r = await sweep(yaml);
    expect(r.actions.filter((a) => a.kind === 'remove_orphan_workdir')).toEqual([]);
    expect(fs.existsSync(path.join(c.dir, 'task.md'))).toBe(true);
  });

  it('a child that joins its held session later is audited with the rule the hold was made for (max_bytes)', async () => {
    const c = child();
    fs.rmSync(path.join(c.dir, 'completion.json'));
    const a = parentOf(9, c, false);
    fs.writeFileSync(path.join(root, a, 'big'), 'b'.repeat(400_000));
    f.writeSession(root, { sessionId: f.idAt('ses_', now - f.DAY), startMs: now - f.DAY, end: true });
    const du = (p: string) => Number(execFileSync('du', ['-s', '-B1', p], { encoding: 'utf8' }).split('\t')[0]);
    const yaml = `quarantine: 24h\nsessions:\n  - root: ${root}\n    max_bytes: ${du(root) - 300_000}\n`;
    const first = await sweep(yaml);
    expect(first.actions.filter((x) => x.kind === 'remove_session').map((x) => [x.target, x.reason])).toEqual([
      [a, 'max_bytes'],
    ]);
    expect(fs.existsSync(c.dir)).toBe(true); // not finished yet: kept
    fs.writeFileSync(path.join(c.dir, 'completion.json'), JSON.stringify({ status: 'ok' }));
    const second = await sweep(yaml);
    expect(second.errors).toEqual([]);
    expect(second.actions.filter((x) => x.kind === 'remove_child_workdir')).toEqual([
      expect.objectContaining({ parent_session: a, reason: 'max_bytes' }),
    ]);
  });

  /** A finished child moved into a trash entry the registry vouches for, as a killed removal leaves it. */
  function trashedChild(): string {
    const c = child();
    const trashName = `.murmur-gc-trash.${f.idAt('ses_', now - f.DAY)}.${c.name}`;
    fs.renameSync(c.dir, path.join(root, 'children', trashName));
    f.vouch(home, path.join(root, 'children'), trashName);
    return path.join(root, 'children', trashName);
  }

  it("a child's trash a killed removal left is finished only while nothing inside it lives", async () => {
    const trash = trashedChild();
    // a session started in it since (a process that was working inside the child)
    const started = f.idAt('ses_', now);
    fs.mkdirSync(path.join(trash, '.murmur', started));
    const yaml = `sessions:\n  - root: ${root}\n`;
    const r = await sweep(yaml);
    expect(r.errors).toEqual([]);
    expect(r.actions).toEqual([]);
    expect(r.skipped).toEqual([expect.objectContaining({ code: 'child_kept', target: trash })]);
    expect(fs.existsSync(path.join(trash, '.murmur', started))).toBe(true);
    // once that session has been quiet for longer than the live grace, the trash is finished
    const later = await sweep(yaml, { nowMs: now + 2 * 3_600_000 });
    expect(later.actions).toEqual([expect.objectContaining({ kind: 'remove_debris', path: trash })]);
    expect(fs.existsSync(trash)).toBe(false);
  });

  it("a child's trash whose session a killed removal was emptying is finished at once, not judged by its own unlinks", async () => {
    const trash = trashedChild();
    // the removal had unlinked the session's trace (and so just changed its directory's mtime)
    const [session] = fs.readdirSync(path.join(trash, '.murmur')).filter((n) => n.startsWith('ses_'));
    fs.rmSync(path.join(trash, '.murmur', session!, 'trace.jsonl'));
    expect(fs.statSync(path.join(trash, '.murmur', session!)).mtimeMs).toBeGreaterThan(now - 60_000);
    const r = await sweep(`sessions:\n  - root: ${root}\n`);
    expect(r.errors).toEqual([]);
    expect(r.skipped).toEqual([]);
    expect(r.actions).toEqual([expect.objectContaining({ kind: 'remove_debris', path: trash })]);
    expect(fs.existsSync(trash)).toBe(false);
  });
});
