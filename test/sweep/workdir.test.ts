// What a `mur run --workdir W` session leaves beside its sessions root goes with it
// (docs/design.md §9a): through the real sweep and restore, in process.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { restoreTarget } from '../../src/commands/quarantine.js';
import { readAuditHistory } from '../../src/commands/audit-read.js';
import { buildHistory, renderHistory } from '../../src/commands/history.js';
import { runSweep } from '../../src/sweep/pipeline.js';
import { surveyStores } from '../../src/sweep/stores.js';
import { renderHuman, type SweepReport } from '../../src/sweep/report.js';
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
  tmp = fs.realpathSync(f.tempDir('mgc-workdir'));
  home = path.join(tmp, 'home');
  W = path.join(tmp, 'app');
  root = path.join(W, '.murmur');
  fs.mkdirSync(home, { mode: 0o700 });
  fs.mkdirSync(root, { recursive: true });
});
afterEach(() => f.rmrf(tmp));

const config = (yaml: string): Promise<GcConfig> => loadTestConfig(tmp, home, yaml);

async function sweep(yaml: string, dryRun = false): Promise<SweepReport> {
  return runSweep({ config: await config(yaml), dryRun, log });
}

const wrk = () => f.idAt('wrk_', now - 5 * f.DAY).replace(/[^0-9a-z_]/g, '');

interface Del {
  child: string;
  ended?: boolean;
}

/** A finished parent session of W whose trace launched `dels` and demoted `works`. */
function parent(daysAgo: number, dels: Del[], works: string[] = [], o: { live?: boolean } = {}): string {
  const startMs = now - daysAgo * f.DAY;
  const id = f.idAt('ses_', startMs);
  const dir = f.writeSession(root, {
    sessionId: id,
    startMs,
    end: !o.live,
    detached: works.map((w) => ({ workId: w })),
    accounted: works.map((w) => ({ workId: w, type: 'shell_completed' as const })),
    extra: f.delegationLines(id, startMs, dels),
    ...(o.live ? { mtimeMs: now } : {}),
  });
  if (o.live) fs.utimesSync(path.join(dir, 'trace.jsonl'), new Date(), new Date());
  return id;
}

/** A child workdir under W/.murmur/children with one finished (or live) session of its own. */
function child(
  o: { completion?: string; live?: boolean; grandchildLive?: boolean; dead?: boolean; dirAgeMs?: number } = {},
): { name: string; rel: string; dir: string } {
  const name = `worker-${f.hex(16)}`;
  const dir = path.join(root, 'children', name);
  fs.mkdirSync(path.join(dir, 'logs'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'task.md'), 'do it');
  fs.writeFileSync(path.join(dir, 'logs', 'bootstrap.log'), 'x'.repeat(5000));
  if (o.completion)
    fs.writeFileSync(
      path.join(dir, 'completion.json'),
      JSON.stringify({
        delegation_id: 'd',
        session_id: 's',
        workdir: dir,
        status: o.completion,
        result_path: 'out/r.md',
      }),
    );
  const sid = f.idAt('ses_', now - 4 * f.DAY);
  const sd = f.writeSession(path.join(dir, '.murmur'), {
    sessionId: sid,
    startMs: now - 4 * f.DAY,
    end: !o.live && !o.dead,
  });
  if (o.live) fs.utimesSync(path.join(sd, 'trace.jsonl'), new Date(), new Date());
  if (o.grandchildLive) {
    const g = path.join(dir, '.murmur', 'children', `sub-${f.hex(16)}`, '.murmur');
    const gs = f.writeSession(g, { sessionId: f.idAt('ses_', now - 4 * f.DAY), startMs: now - 4 * f.DAY, end: false });
    fs.utimesSync(path.join(gs, 'trace.jsonl'), new Date(), new Date());
  }
  if (o.dirAgeMs !== undefined) fs.utimesSync(dir, (now - o.dirAgeMs) / 1000, (now - o.dirAgeMs) / 1000);
  return { name, rel: `.murmur/children/${name}`, dir };
}

function workLog(id: string, bytes = 3000): string {
  fs.mkdirSync(path.join(W, 'logs'), { recursive: true });
  const p = path.join(W, 'logs', `${id}.log`);
  fs.writeFileSync(p, 'y'.repeat(bytes));
  return p;
}

/** The capsule's own files in W, which nothing may touch. */
function capsuleFiles(): void {
  fs.mkdirSync(path.join(W, 'checkpoints'), { recursive: true });
  fs.writeFileSync(path.join(W, 'checkpoints', 'c1.json'), '{}');
  fs.writeFileSync(path.join(W, 'task.md'), 'task');
  fs.writeFileSync(path.join(W, 'murmur.yaml'), 'name: demo\n');
  fs.mkdirSync(path.join(W, 'out'));
  fs.writeFileSync(path.join(W, 'out', 'result.md'), 'r');
  fs.writeFileSync(path.join(W, '.capsule-home'), '');
  fs.mkdirSync(path.join(W, 'logs'), { recursive: true });
  fs.writeFileSync(path.join(W, 'logs', 'shell-1700000000000.log'), 'z'.repeat(20000));
  fs.mkdirSync(path.join(W, 'peer-in'));
  fs.writeFileSync(path.join(W, 'peer-in', '0123456789abcdef-notes.txt'), 'n');
}

const capsuleSnap = () => {
  const s = f.snapshotTree(W);
  return Object.fromEntries(
    Object.entries(s).filter(([k]) =>
      /^(checkpoints|task\.md|murmur\.yaml|out|\.capsule-home|peer-in|logs\/shell-)/.test(k),
    ),
  );
};

const YAML = (extra = '') => `${extra}sessions:\n  - root: ${root}\n    retain: { max_sessions: 1 }\n`;
const exists = (p: string) => fs.existsSync(p);

describe('a session removed by max_sessions takes what its trace proves is its own', () => {
  it('its finished children and its wrk_ logs go; a live or unfinished child and the capsule files stay', async () => {
    capsuleFiles();
    const ended = child();
    const completed = child({ completion: 'crashed' });
    const unfinished = child();
    const liveInside = child({ live: true });
    const liveGrandchild = child({ grandchildLive: true });
    const mineLog = wrk();
    const otherLog = wrk();
    const logA = workLog(mineLog);
    const logB = workLog(otherLog);
    const a = parent(
      9,
      [
        { child: ended.rel, ended: true },
        { child: completed.rel },
        { child: unfinished.rel },
        { child: liveInside.rel, ended: true },
        { child: liveGrandchild.rel, ended: true },
      ],
      [mineLog],
    );
    // the newest session stays (max_sessions: 1) with the child it names
    const keptChild = child();
    const b = parent(1, [{ child: keptChild.rel, ended: true }], [otherLog]);
    const before = capsuleSnap();

    const dry = await sweep(YAML(), true);
    expect(dry.errors).toEqual([]);
    const listed = dry.actions.filter((x) => x.kind === 'remove_child_workdir' || x.kind === 'remove_work_log');
    expect(listed.map((x) => ('path' in x ? x.path : '')).sort()).toEqual([ended.dir, completed.dir, logA].sort());
    for (const x of listed) {
      expect(x).toMatchObject({ parent_session: a, reason: 'max_sessions' });
      expect('bytes' in x && x.bytes).toBeGreaterThan(0);
    }
    expect(renderHuman(dry, 'verbose', { width: 10_000 })).toContain(`child workdir ${ended.dir}  (with session ${a}`);
    expect(exists(ended.dir) && exists(logA)).toBe(true);

    const r = await sweep(YAML());
    expect(r.errors).toEqual([]);
    expect(exists(path.join(root, a))).toBe(false);
    expect(exists(path.join(root, b))).toBe(true);
    expect(exists(ended.dir)).toBe(false);
    expect(exists(completed.dir)).toBe(false);
    expect(exists(logA)).toBe(false);
    for (const kept of [unfinished, liveInside, liveGrandchild, keptChild]) expect(exists(kept.dir)).toBe(true);
    expect(exists(logB)).toBe(true);
    expect(capsuleSnap()).toEqual(before);
    const why = r.skipped
      .filter((s) => s.code === 'child_kept')
      .map((s) => s.target)
      .sort();
    expect(why).toEqual([unfinished.dir, liveInside.dir, liveGrandchild.dir].sort());
    // the audit: the parent's retention line names them (relative to W), where.json says where W is
    const lines = f
      .readLines(path.join(home, 'gc', r.audit ?? 'none', 'trace.jsonl'))
      .map((l) => JSON.parse(l) as { event_type: string; targets?: string[] });
    const ret = lines.find((l) => l.event_type === 'retention');
    expect(ret?.targets?.sort()).toEqual([a, ended.rel, completed.rel, `logs/${mineLog}.log`].sort());
    const where = JSON.parse(fs.readFileSync(path.join(home, 'gc', r.audit ?? 'none', 'where.json'), 'utf8')) as Record<
      string,
      string
    >;
    expect(where[ended.rel]).toBe(W);
    const h = await readAuditHistory(home, { target: ended.rel });
    const doc = buildHistory(
      { home, auditRoot: h.auditRoot, exists: h.exists, problems: h.problems, where: h.where },
      h.sweeps,
      { target: ended.rel },
    );
    expect(doc.matches?.map((m) => [m.action, m.reason, m.where])).toEqual([['removed', 'max_sessions', W]]);
  });

  it('served from the cache, a trace still names its wrk_ logs: its own go with it, a kept session keeps its own', async () => {
    const mineLog = wrk();
    const otherLog = wrk();
    const logA = workLog(mineLog);
    const logB = workLog(otherLog);
    const a = parent(9, [], [mineLog]);
    const b = parent(1, [], [otherLog]);
    // a first sweep keeps both and caches both traces; the second judges them from the cache
    expect((await sweep(`sessions:\n  - root: ${root}\n    retain: { max_sessions: 2 }\n`)).inventory).toMatchObject({
      traces_read: 2,
    });
    const r = await sweep(YAML());
    expect(r.inventory).toMatchObject({ traces_read: 0, traces_cached: 2 });
    expect(r.errors).toEqual([]);
    expect(
      r.actions
        .filter((x) => x.kind === 'remove_work_log')
        .map((x) => ['path' in x ? x.path : '', 'parent_session' in x ? x.parent_session : '']),
    ).toEqual([[logA, a]]);
    expect(exists(path.join(root, a)) || exists(logA)).toBe(false);
    expect(exists(path.join(root, b)) && exists(logB)).toBe(true);
  });

  it('a live parent keeps its children, even the finished ones', async () => {
    const c = child();
    const live = parent(9, [{ child: c.rel, ended: true }], [], { live: true });
    parent(1, []);
    const r = await sweep(YAML());
    expect(exists(path.join(root, live))).toBe(true);
    expect(exists(c.dir)).toBe(true);
    expect(r.actions.filter((x) => x.kind === 'remove_child_workdir')).toEqual([]);
  });

  it('never follows a child_workdir outside W/.murmur/children, nor a symlinked child', async () => {
    const outside = path.join(tmp, 'x');
    fs.mkdirSync(outside);
    fs.writeFileSync(path.join(outside, 'precious'), 'p');
    fs.writeFileSync(path.join(outside, 'completion.json'), JSON.stringify({ status: 'ok' }));
    fs.mkdirSync(path.join(root, 'children'), { recursive: true });
    fs.symlinkSync(outside, path.join(root, 'children', 'worker-aaaaaaaaaaaaaaaa'));
    const a = parent(9, [
      { child: '../../x', ended: true },
      { child: '.murmur/children/../../../x', ended: true },
      { child: outside, ended: true },
      { child: '.murmur/children/worker-aaaaaaaaaaaaaaaa', ended: true },
    ]);
    parent(1, []);
    const r = await sweep(YAML());
    expect(exists(path.join(root, a))).toBe(false);
    expect(fs.readFileSync(path.join(outside, 'precious'), 'utf8')).toBe('p');
    expect(fs.lstatSync(path.join(root, 'children', 'worker-aaaaaaaaaaaaaaaa')).isSymbolicLink()).toBe(true);
    expect(r.skipped.filter((s) => s.code === 'child_workdir_outside')).toHaveLength(3);
    expect(r.skipped.filter((s) => s.code === 'symlink').map((s) => s.target)).toContain(
      path.join(root, 'children', 'worker-aaaaaaaaaaaaaaaa'),
    );
  });

  it('a symlinked children/ directory is reported and never entered', async () => {
    const elsewhere = path.join(tmp, 'elsewhere');
    fs.mkdirSync(path.join(elsewhere, 'worker-bbbbbbbbbbbbbbbb'), { recursive: true });
    fs.writeFileSync(
      path.join(elsewhere, 'worker-bbbbbbbbbbbbbbbb', 'completion.json'),
      JSON.stringify({ status: 'ok' }),
    );
    fs.symlinkSync(elsewhere, path.join(root, 'children'));
    parent(9, [{ child: '.murmur/children/worker-bbbbbbbbbbbbbbbb', ended: true }]);
    parent(1, []);
    const r = await sweep(YAML());
    expect(exists(path.join(elsewhere, 'worker-bbbbbbbbbbbbbbbb', 'completion.json'))).toBe(true);
    expect(r.skipped.some((s) => s.code === 'symlink' && s.target === path.join(root, 'children'))).toBe(true);
  });
});

describe('a session that stays but whose trace cannot be read', () => {
  /** The newest session (which stays under max_sessions: 1) has a trace nothing can read. */
  function unreadableStayer(): string {
    const id = f.idAt('ses_', now - f.DAY);
    fs.mkdirSync(path.join(root, id, 'trace.jsonl'), { recursive: true }); // a directory: never read as a trace
    return id;
  }

  for (const quarantine of ['', 'quarantine: 24h\n']) {
    it(`keeps every child and work log the removed session names: the unreadable one may name them too${quarantine ? ' (held)' : ''}`, async () => {
      const c = child();
      const id = wrk();
      const logPath = workLog(id);
      const a = parent(9, [{ child: c.rel, ended: true }], [id]);
      const b = unreadableStayer();
      const dry = await sweep(YAML(quarantine), true);
      const r = await sweep(YAML(quarantine));
      expect(r.actions.map((x) => x.kind)).toEqual(dry.actions.map((x) => x.kind));
      expect(r.actions.filter((x) => x.kind === 'remove_session').map((x) => x.target)).toEqual([a]);
      expect(exists(path.join(root, b))).toBe(true);
      expect(r.actions.filter((x) => x.kind === 'remove_child_workdir' || x.kind === 'remove_work_log')).toEqual([]);
      expect(fs.readFileSync(path.join(c.dir, 'task.md'), 'utf8')).toBe('do it');
      expect(fs.readFileSync(logPath, 'utf8')).toBe('y'.repeat(3000));
      for (const target of [c.dir, logPath]) {
        const s = r.skipped.find((x) => x.target === target);
        expect(s, target).toMatchObject({ code: 'child_kept' });
        expect(s?.detail).toContain(`session ${b}, which stays, has no readable trace`);
      }
    });
  }
});

describe('quarantine and restore', () => {
  it('hold a child and its log with the parent session, and restore brings them back with it', async () => {
    const c = child();
    const id = wrk();
    const logPath = workLog(id);
    const a = parent(9, [{ child: c.rel, ended: true }], [id]);
    parent(1, []);
    const r = await sweep(YAML('quarantine: 24h\n'));
    expect(r.errors).toEqual([]);
    expect(exists(c.dir) || exists(logPath) || exists(path.join(root, a))).toBe(false);
    const heldEntry = fs.readdirSync(root).find((n) => n.startsWith('.murmur-gc-quarantine.'));
    expect(heldEntry).toBeDefined();
    expect(exists(path.join(root, heldEntry!, '.murmur-gc-beside', 'children', c.name, 'task.md'))).toBe(true);
    expect(r.actions.find((x) => x.kind === 'remove_child_workdir')).toMatchObject({
      held: { path: path.join(root, heldEntry!) },
    });
    // what the sweep says it holds is the session and what went with it, as each was measured
    // when it moved (du of the hold counts the directories the hold adds on top)
    const went = r.actions.reduce(
      (n, x) =>
        n +
        (x.kind === 'remove_session' || x.kind === 'remove_child_workdir' || x.kind === 'remove_work_log'
          ? x.bytes
          : 0),
      0,
    );
    expect(r.quarantine).toMatchObject({ held: 1, held_bytes: went });
    const du = Number(
      execFileSync('du', ['-s', '-B1', path.join(root, heldEntry!)], { encoding: 'utf8' }).split('\t')[0],
    );
    expect(du).toBeGreaterThanOrEqual(went);

    const back = await restoreTarget(await config('quarantine: 24h\n' + YAML()), log, { target: a, dryRun: false });
    expect(back.restored.map((x) => x.held_kind)).toEqual(['child_workdir', 'work_log', 'session']);
    // what came back is protected as the session of its sessions root, not as anything beside it
    expect(back.protection?.item).toMatchObject({ kind: 'session', target: a, where: root });
    expect(fs.readFileSync(path.join(c.dir, 'task.md'), 'utf8')).toBe('do it');
    expect(fs.readFileSync(logPath, 'utf8')).toBe('y'.repeat(3000));
    expect(exists(path.join(root, a, 'trace.jsonl'))).toBe(true);
    expect(exists(path.join(root, a, '.murmur-gc-beside'))).toBe(false);
  });
});

describe('a held session takes its child once the child has finished', () => {
  it('kept while running when its parent was held, it joins the hold on a later sweep; never an orphan meanwhile', async () => {
    const c = child();
    const a = parent(9, [{ child: c.rel }]);
    parent(1, []);
    const first = await sweep(YAML('quarantine: 24h\n'));
    expect(first.errors).toEqual([]);
    expect(first.skipped.find((s) => s.target === c.dir)).toMatchObject({ code: 'child_kept' });
    expect(exists(c.dir)).toBe(true);
    expect(first.orphans ?? []).toEqual([]);
    // status says the same: tied to its (held) parent, not orphaned
    const sizes = (await surveyStores(await config('quarantine: 24h\n' + YAML()), Date.now())).sizes;
    expect(sizes.sessions.roots[0]?.beside).toMatchObject({ tied: { count: 1 }, orphaned: { count: 0 } });
    fs.writeFileSync(path.join(c.dir, 'completion.json'), JSON.stringify({ status: 'ok' }));
    const second = await sweep(YAML('quarantine: 24h\n'));
    expect(second.errors).toEqual([]);
    expect(second.orphans ?? []).toEqual([]);
    const heldEntry = fs.readdirSync(root).find((n) => n.startsWith('.murmur-gc-quarantine.') && n.endsWith(a))!;
    expect(exists(c.dir)).toBe(false);
    expect(
      fs.readFileSync(path.join(root, heldEntry, '.murmur-gc-beside', 'children', c.name, 'task.md'), 'utf8'),
    ).toBe('do it');
    expect(second.actions.find((x) => x.kind === 'remove_child_workdir')).toMatchObject({
      parent_session: a,
      reason: 'max_sessions',
      held: { path: path.join(root, heldEntry) },
    });
  });
});

describe('orphaned child workdirs (no trace of the root names them)', () => {
  it('are reported (count, size, oldest) and removed only under children.max_age, only when finished', async () => {
    const tied = child({ dirAgeMs: 10 * f.DAY });
    parent(1, [{ child: tied.rel, ended: true }]);
    const old = child({ dirAgeMs: 10 * f.DAY });
    const young = child();
    const dead = child({ dead: true, dirAgeMs: 10 * f.DAY });
    const noPolicy = await sweep(YAML());
    expect(noPolicy.errors).toEqual([]);
    expect(noPolicy.orphans).toEqual([
      { root, count: 3, bytes: expect.any(Number), oldest_ms: expect.any(Number), removed: 0, policy_secs: null },
    ]);
    expect(noPolicy.orphans?.[0]?.bytes).toBeGreaterThan(0);
    expect(noPolicy.orphans?.[0]?.oldest_ms).toBeLessThan(now - 3 * f.DAY);
    for (const c of [tied, old, young, dead]) expect(exists(c.dir)).toBe(true);
    expect(renderHuman(noPolicy, 'normal', { width: 10_000 })).toContain(
      `Orphaned child workdirs in ${root}/children: 3`,
    );

    const policy = `sessions:\n  - root: ${root}\n    retain: { max_sessions: 1 }\n    children: { max_age: 2d }\n`;
    const dry = await sweep(policy, true);
    expect(
      dry.actions.filter((a) => a.kind === 'remove_orphan_workdir').map((a) => ('path' in a ? a.path : '')),
    ).toEqual([old.dir]);
    expect(exists(old.dir)).toBe(true);
    const r = await sweep(policy);
    expect(r.errors).toEqual([]);
    expect(exists(old.dir)).toBe(false);
    for (const c of [tied, young, dead]) expect(exists(c.dir)).toBe(true);
    expect(r.orphans?.[0]).toMatchObject({ count: 3, removed: 1, policy_secs: 2 * 86400 });
    const ret = f
      .readLines(path.join(home, 'gc', r.audit ?? 'none', 'trace.jsonl'))
      .map((l) => JSON.parse(l) as { event_type: string; reason?: string; targets?: string[] })
      .find((l) => l.event_type === 'retention');
    expect(ret).toMatchObject({ reason: 'children_max_age', targets: [old.rel] });
  });
});

describe('disk budgets', () => {
  it('max_bytes counts child workdirs as part of their sessions root, and removes a session with its children to meet it', async () => {
    const c = child();
    fs.writeFileSync(path.join(c.dir, 'out.bin'), 'o'.repeat(400_000));
    const a = parent(9, [{ child: c.rel, ended: true }]);
    const b = parent(1, []);
    const du = (p: string) => Number(execFileSync('du', ['-s', '-B1', p], { encoding: 'utf8' }).split('\t')[0]);
    const budget = du(path.join(root, a)) + du(path.join(root, b)) + 100_000;
    const r = await sweep(`sessions:\n  - root: ${root}\n    max_bytes: ${budget}\n`);
    expect(r.errors).toEqual([]);
    expect(r.actions.filter((x) => x.kind === 'remove_session').map((x) => [x.target, x.reason])).toEqual([
      [a, 'max_bytes'],
    ]);
    expect(exists(c.dir)).toBe(false);
    expect(exists(path.join(root, b))).toBe(true);
  });
});

describe('liveness is judged again at the moment of removal', () => {
  /** Between the plan and the removal, the child's session starts running again (a live running record). */
  async function sweepReviving(yaml: string, dir: string): Promise<SweepReport> {
    const sid = fs.readdirSync(path.join(dir, '.murmur')).find((n) => n.startsWith('ses_'))!;
    let done = false;
    return runSweep({
      config: await config(yaml),
      dryRun: false,
      log,
      progress: (p) => {
        if (done || p.step !== 'remove') return;
        done = true;
        fs.mkdirSync(path.join(home, 'running'), { recursive: true });
        fs.writeFileSync(
          path.join(home, 'running', `${sid}.json`),
          f.runningRecordJson({
            sessionId: sid,
            pid: process.pid,
            processStart: f.processStartOf(process.pid),
            workdir: dir,
          }),
        );
      },
    });
  }

  it('a child whose session comes alive after the plan is kept (child_kept), its parent still goes', async () => {
    const c = child();
    const a = parent(9, [{ child: c.rel, ended: true }]);
    parent(1, []);
    const r = await sweepReviving(YAML(), c.dir);
    expect(exists(path.join(root, a))).toBe(false);
    expect(fs.readFileSync(path.join(c.dir, 'task.md'), 'utf8')).toBe('do it');
    expect(r.actions.filter((x) => x.kind === 'remove_child_workdir')).toEqual([]);
    const kept = r.skipped.find((s) => s.target === c.dir);
    expect(kept).toMatchObject({ code: 'child_kept' });
    expect(kept?.detail).toContain('running record names a live process');
    expect(r.errors).toEqual([]);
    // the audit names the parent alone
    const ret = f
      .readLines(path.join(home, 'gc', r.audit ?? 'none', 'trace.jsonl'))
      .map((l) => JSON.parse(l) as { event_type: string; targets?: string[] })
      .filter((l) => l.event_type === 'retention');
    expect(ret.flatMap((l) => l.targets)).toEqual([a]);
    expect(exists(path.join(home, 'gc', r.audit ?? 'none', 'intent.jsonl'))).toBe(false);
  });

  it('held too: the child stays in place, not in the hold', async () => {
    const c = child();
    parent(9, [{ child: c.rel, ended: true }]);
    parent(1, []);
    const r = await sweepReviving(YAML('quarantine: 24h\n'), c.dir);
    expect(exists(path.join(c.dir, 'task.md'))).toBe(true);
    expect(r.skipped.find((s) => s.target === c.dir)).toMatchObject({ code: 'child_kept' });
    expect(r.errors).toEqual([]);
  });

  it('an orphan whose session comes alive after the plan is kept', async () => {
    const o = child({ dirAgeMs: 10 * f.DAY });
    parent(1, []);
    const r = await sweepReviving(
      `sessions:\n  - root: ${root}\n    retain: { max_sessions: 1 }\n    children: { max_age: 2d }\n`,
      o.dir,
    );
    expect(exists(path.join(o.dir, 'task.md'))).toBe(true);
    expect(r.actions.filter((x) => x.kind === 'remove_orphan_workdir')).toEqual([]);
    expect(r.skipped.find((s) => s.target === o.dir)).toMatchObject({ code: 'child_kept' });
    expect(r.errors).toEqual([]);
  });
});

describe('history --target finds a child workdir or a work log by what an operator types', () => {
  it('its directory name, the work id, the log file name, an absolute path, a unique prefix; shown with its parent session', async () => {
    const c1 = child();
    const c2 = child();
    const id = wrk();
    const logPath = workLog(id);
    const a = parent(
      9,
      [
        { child: c1.rel, ended: true },
        { child: c2.rel, ended: true },
      ],
      [id],
    );
    parent(1, []);
    const r = await sweep(YAML());
    expect(r.errors).toEqual([]);
    expect(exists(c1.dir) || exists(c2.dir) || exists(logPath)).toBe(false);
    const ask = async (target: string) => {
      const h = await readAuditHistory(home, { target });
      return buildHistory(
        { home, auditRoot: h.auditRoot, exists: h.exists, problems: h.problems, where: h.where },
        h.sweeps,
        { target },
      );
    };
    const forms: [string, string][] = [
      [c1.name, c1.rel],
      [c1.name.slice(0, -4), c1.rel],
      [c1.dir, c1.rel],
      [`${c1.dir}/`, c1.rel],
      [id, `logs/${id}.log`],
      [`${id}.log`, `logs/${id}.log`],
      [logPath, `logs/${id}.log`],
      [c2.rel, c2.rel],
    ];
    for (const [given, target] of forms) {
      const doc = await ask(given);
      expect(doc.target, given).toBe(target);
      expect(
        doc.matches?.map((m) => [m.action, m.parent_session, m.where]),
        given,
      ).toEqual([['removed', a, W]]);
    }
    expect(renderHistory(await ask(c1.name))).toContain(`removed with session ${a} by sweep ${r.audit}`);
    // ambiguous: both children start with "worker-"
    await expect(ask('worker-')).rejects.toMatchObject({ code: 'target_ambiguous' });
  });
});
