// `murmur-gc explain TARGET` on real homes, in process (clock and free space injected): every
// fate it names is the dry run's own, with the rule, the facts that bear on it and the instant it
// changes, to the millisecond; it resolves targets as the other commands do and writes nothing.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { explainTarget, type ExplainDoc, type ExplainOptions } from '../../src/commands/explain.js';
import { renderExplain } from '../../src/cli/explain-render.js';
import { protectTarget } from '../../src/commands/protect.js';
import type { GcConfig } from '../../src/config/types.js';
import type { FsSpace } from '../../src/fsx/statfs.js';
import { GcError } from '../../src/errors.js';
import { createLogger } from '../../src/log.js';
import { runSweep } from '../../src/sweep/pipeline.js';
import * as f from '../helpers/fixtures.js';
import { loadTestConfig } from '../helpers/config.js';

let tmp: string;
let home: string;
let root: string;
const log = createLogger({ level: 'silent' });
// a known instant, with milliseconds, that the whole home is built around
const NOW = Date.UTC(2026, 11, 2, 7, 53, 12, 345);
const H = 3_600_000;

beforeEach(() => {
  tmp = fs.realpathSync(f.tempDir('mgc-explain'));
  home = path.join(tmp, 'home');
  root = path.join(tmp, 'app', '.murmur');
  fs.mkdirSync(home, { mode: 0o700 });
  fs.mkdirSync(root, { recursive: true });
});
afterEach(() => f.rmrf(tmp));

const config = (yaml: string): Promise<GcConfig> => loadTestConfig(tmp, home, yaml);

const statfs = (space: FsSpace) => () => Promise.resolve(space);

async function explain(
  yaml: string,
  target: string,
  o: Partial<ExplainOptions> & { at?: number; space?: FsSpace } = {},
): Promise<ExplainDoc> {
  const { at, space, ...rest } = o;
  return explainTarget(await config(yaml), log, {
    target,
    now: () => at ?? NOW,
    cwd: tmp,
    ...(space ? { statfs: statfs(space) } : {}),
    ...rest,
  });
}

/** A session minted at `mintMs` exactly, finished, its trace last written `writtenMs` (default its mint). */
function session(mintMs: number, o: { end?: boolean; writtenMs?: number; blob?: number; dir?: string } = {}): string {
  const id = f.idAt('ses_', mintMs);
  f.writeSession(o.dir ?? root, {
    sessionId: id,
    startMs: mintMs,
    end: o.end ?? true,
    mtimeMs: o.writtenMs ?? mintMs,
    files: { blob: 'x'.repeat(o.blob ?? 1000) },
  });
  return id;
}

const failure = async (p: Promise<unknown>): Promise<{ code: string; exit: number; message: string }> => {
  try {
    await p;
  } catch (err) {
    if (err instanceof GcError) return { code: err.code, exit: err.exitCode, message: err.message };
    throw err;
  }
  throw new Error('it did not fail');
};

/** The terminal output at 80 columns: every line of it fits. */
const text = (d: ExplainDoc): string => {
  const out = renderExplain(d, { width: 80, homeDir: tmp });
  for (const l of out.split('\n')) expect(l.length, l).toBeLessThanOrEqual(80);
  return out;
};

describe('kept by max_age, and the instant it is condemned', () => {
  it('59 days old under max_age 60d: kept now, condemned at mint + 60 d + 1 ms, the instant a sweep takes it', async () => {
    const mint = NOW - 59 * f.DAY - 4 * H;
    const id = session(mint);
    const yaml = `sessions:\n  - root: ${root}\n    retain: { max_age: 60d }\n`;
    const d = await explain(yaml, id);
    expect(d.item).toMatchObject({ kind: 'session', name: id, place: root, origin: 'sessions[0]', manifest: null });
    expect(d.fate).toMatchObject({ word: 'kept:policy', condemned_by: null });
    expect(d.policy?.age).toEqual({
      max_age_secs: 60 * 86_400,
      by: 'id',
      born_ms: mint,
      age_ms: NOW - mint,
      condemns_from_ms: mint + 60 * f.DAY + 1,
      over: false,
    });
    expect(d.due).toEqual({ at_ms: mint + 60 * f.DAY + 1, event: 'condemned', then: 'remove', rule: 'max_age' });
    // the sweep agrees, to the millisecond: kept one millisecond before, removed at it
    const before = await explain(yaml, id, { at: d.due.at_ms! - 1 });
    expect(before.fate.word).toBe('kept:policy');
    const at = await explain(yaml, id, { at: d.due.at_ms! });
    expect(at.fate.word).toBe('removed:max_age');
    expect(at.due).toEqual({ at_ms: d.due.at_ms, event: 'next_sweep', then: 'remove', rule: 'max_age' });
    const out = text(d);
    expect(out).toContain('kept: no rule takes it now');
    expect(out).toMatch(/max_age 60d: minted .*, 59 days 4 h old/);
  });

  it('with quarantine set the first sweep from then holds it; a record ages by its mtime, and a write moves it', async () => {
    const mtime = NOW - 29 * f.DAY;
    f.writeRecord(home, 'shey', 'ctx_aging', { capsule: 'shey', messages: 3, mtimeMs: mtime });
    const yaml = `quarantine: 7d\nrecords:\n  - capsule: shey\n    retain: { max_age: 30d }\n`;
    const d = await explain(yaml, 'ctx_aging');
    expect(d.item).toMatchObject({ kind: 'context', store: 'records', place: 'shey', origin: 'records[0]' });
    expect(d.policy?.age).toMatchObject({ by: 'mtime', born_ms: mtime, condemns_from_ms: mtime + 30 * f.DAY + 1 });
    expect(d.due).toEqual({ at_ms: mtime + 30 * f.DAY + 1, event: 'condemned', then: 'hold', rule: 'max_age' });
    expect(d.moves).toContainEqual({ cause: 'record_write', count: null });
    expect((await explain(yaml, 'ctx_aging', { at: d.due.at_ms! })).fate).toMatchObject({
      word: 'held:max_age',
      until_ms: d.due.at_ms! + 7 * f.DAY,
    });
  });

  it('past max_age now: condemned, the next sweep takes it', async () => {
    const id = session(NOW - 61 * f.DAY);
    const d = await explain(`sessions:\n  - root: ${root}\n    retain: { max_age: 60d }\n`, id);
    expect(d.fate.word).toBe('removed:max_age');
    expect(d.policy?.age?.over).toBe(true);
    expect(d.due).toEqual({ at_ms: NOW, event: 'next_sweep', then: 'remove', rule: 'max_age' });
    expect(text(d)).toContain('now: the next sweep removes it for good');
  });
});

describe('max_sessions: the rank, and how many newer sessions condemn it', () => {
  it('7th newest of 12 under max_sessions 10: kept, 4 more sessions condemn it; the 11th is taken now', async () => {
    const ids = Array.from({ length: 12 }, (_, k) => session(NOW - (k + 1) * H));
    const yaml = `sessions:\n  - root: ${root}\n    retain: { max_sessions: 10 }\n`;
    const d = await explain(yaml, ids[6]!);
    expect(d.fate.word).toBe('kept:policy');
    expect(d.policy?.rank).toEqual({ max_sessions: 10, rank: 7, of: 12, over: false, newer_to_condemn: 4 });
    expect(d.due).toMatchObject({ at_ms: null, event: 'never' });
    expect(d.moves).toContainEqual({ cause: 'new_sessions', count: 4 });
    const out = text(d);
    expect(out).toContain('max_sessions 10: 7th newest of 12');
    expect(out).toContain('4 more sessions in this root condemn it (max_sessions 10)');
    const eleventh = await explain(yaml, ids[10]!);
    expect(eleventh.fate.word).toBe('removed:max_sessions');
    expect(eleventh.policy?.rank).toMatchObject({ rank: 11, over: true, newer_to_condemn: 0 });
    // 4 newer sessions do condemn the 7th
    for (let k = 0; k < 4; k++) session(NOW - 10 * 60_000 + k);
    expect((await explain(yaml, ids[6]!)).fate.word).toBe('removed:max_sessions');
  });
});

describe('live: which test made it live, and when that ends', () => {
  const yaml = () => `live_grace: 2h\nsessions:\n  - root: ${root}\n    retain: { max_age: 1d }\n`;

  it('a running record of a live process: kept although max_age condemns it, until the process ends', async () => {
    const id = session(NOW - 3 * f.DAY, { end: false });
    fs.mkdirSync(path.join(home, 'running'), { recursive: true, mode: 0o700 });
    fs.writeFileSync(
      path.join(home, 'running', `${id}.json`),
      f.runningRecordJson({
        sessionId: id,
        pid: process.pid,
        processStart: f.processStartOf(process.pid),
        workdir: path.dirname(root),
      }),
      { mode: 0o600 },
    );
    const d = await explain(yaml(), id);
    expect(d.fate).toMatchObject({ word: 'kept:live', condemned_by: 'max_age' });
    expect(d.liveness).toMatchObject({ state: 'live', test: 'running_record', pid: process.pid, live_until_ms: null });
    expect(d.due).toMatchObject({ at_ms: null, event: 'unknown', rule: 'max_age' });
    expect(d.moves).toContainEqual({ cause: 'process_end', count: process.pid });
    expect(text(d)).toContain(`when its process (pid ${process.pid}) ends`);
  });

  it('a trace written in the last 60 s: live until 60 s after that write, then max_age takes it', async () => {
    const written = NOW - 20_000.5;
    const id = session(NOW - 3 * f.DAY, { writtenMs: written });
    const d = await explain(yaml(), id);
    expect(d.fate).toMatchObject({ word: 'kept:live', condemned_by: 'max_age' });
    expect(d.liveness).toMatchObject({ test: 'recent_write' });
    const until = d.liveness!.live_until_ms!;
    expect(d.due).toEqual({ at_ms: until, event: 'live_ends', then: 'remove', rule: 'max_age' });
    expect((await explain(yaml(), id, { at: until - 1 })).fate.word).toBe('kept:live');
    expect((await explain(yaml(), id, { at: until })).fate.word).toBe('removed:max_age');
    expect(d.moves).toContainEqual({ cause: 'trace_write', count: null });
  });

  it('no session_end and written within live_grace: live until live_grace after the write', async () => {
    const written = NOW - H;
    const id = session(NOW - 3 * f.DAY, { end: false, writtenMs: written });
    const d = await explain(yaml(), id);
    expect(d.liveness).toMatchObject({ state: 'live', test: 'live_grace' });
    const until = d.liveness!.live_until_ms!;
    expect(until).toBeGreaterThanOrEqual(written + 2 * H);
    expect(until).toBeLessThanOrEqual(written + 2 * H + 1);
    expect(d.due).toEqual({ at_ms: until, event: 'live_ends', then: 'remove', rule: 'max_age' });
    expect((await explain(yaml(), id, { at: until - 1 })).fate.word).toBe('kept:live');
    expect((await explain(yaml(), id, { at: until })).fate.word).toBe('removed:max_age');
    expect(text(d)).toContain('live: its trace has no session_end and was written within live_grace');
  });
});

describe('contexts: a live session naming it, max_messages', () => {
  it('a context a live session names is kept live until that session stops counting as live', async () => {
    const written = NOW - 10_000;
    const id = f.idAt('ses_', NOW - 3 * f.DAY);
    f.writeSession(root, {
      sessionId: id,
      startMs: NOW - 3 * f.DAY,
      contextId: 'ctx_live',
      end: true,
      mtimeMs: written,
    });
    f.writeRecord(home, 'shey', 'ctx_live', { capsule: 'shey', messages: 3, mtimeMs: NOW - 40 * f.DAY });
    const yaml = `sessions:\n  - root: ${root}\nrecords:\n  - capsule: shey\n    retain: { max_age: 30d }\n`;
    const d = await explain(yaml, 'ctx_live');
    expect(d.fate).toMatchObject({ word: 'kept:live', condemned_by: 'max_age' });
    expect(d.liveness).toMatchObject({
      state: 'live',
      sessions: [{ session: id, test: 'recent_write', live_until_ms: d.liveness!.sessions[0]!.live_until_ms }],
    });
    const until = d.liveness!.live_until_ms!;
    expect(d.due).toEqual({ at_ms: until, event: 'live_ends', then: 'remove', rule: 'max_age' });
    expect((await explain(yaml, 'ctx_live', { at: until - 1 })).fate.word).toBe('kept:live');
    expect((await explain(yaml, 'ctx_live', { at: until })).fate.word).toBe('removed:max_age');
    expect(text(d)).toContain(`live: named by live session ${id}`);
  });

  it('17 messages under max_messages 20: 4 more truncate it; 21 is truncated now', async () => {
    f.writeRecord(home, 'shey', 'ctx_short', { capsule: 'shey', messages: 17 });
    f.writeRecord(home, 'shey', 'ctx_long', { capsule: 'shey', messages: 21 });
    const yaml = `records:\n  - capsule: shey\n    retain: { max_messages: 20 }\n`;
    const d = await explain(yaml, 'ctx_short');
    expect(d.policy?.messages).toEqual({ max_messages: 20, messages: 17, over: false, more_to_condemn: 4 });
    expect(d.moves).toContainEqual({ cause: 'new_messages', count: 4 });
    expect(text(d)).toContain('4 more messages truncate it (max_messages 20)');
    const long = await explain(yaml, 'ctx_long');
    expect(long.fate.word).toBe('truncated:max_messages');
    expect(long.due).toEqual({ at_ms: NOW, event: 'next_sweep', then: 'truncate', rule: 'max_messages' });
  });
});

describe('protected, held, guarded', () => {
  it('protected: kept with its note, never due until released', async () => {
    const id = session(NOW - 90 * f.DAY);
    const yaml = `sessions:\n  - root: ${root}\n    retain: { max_age: 30d }\n`;
    await protectTarget(await config(yaml), log, { target: id, note: 'bug 7 repro' }, () => NOW - H);
    const d = await explain(yaml, id);
    expect(d.fate).toMatchObject({ word: 'kept:protected', condemned_by: 'max_age' });
    expect(d.protection).toEqual({ since_ms: NOW - H, by: 'protect', note: 'bug 7 repro', unreadable: false });
    expect(d.due).toMatchObject({ at_ms: null, event: 'never' });
    expect(d.moves).toEqual([{ cause: 'release', count: null }]);
    expect(text(d)).toContain('protected since');
    expect(text(d)).toContain('"bug 7 repro"');
    // protected before max_age condemns it: released, it would be condemned from its age's instant
    const young = session(NOW - 10 * f.DAY);
    await protectTarget(await config(yaml), log, { target: young }, () => NOW - H);
    const y = await explain(yaml, young);
    expect(y.policy?.age?.condemns_from_ms).toBe(NOW + 20 * f.DAY + 1);
    expect(text(y).replace(/\n +/g, ' ')).toContain(
      `release ${young}: sweeps act on it by the policy again (max_age condemns it from`,
    );
  });

  it('held: its window ends at the hold deadline to the millisecond, and the first sweep from then purges it', async () => {
    const id = session(NOW - 40 * f.DAY);
    const yaml = `quarantine: 7d\nsessions:\n  - root: ${root}\n    retain: { max_age: 30d }\n`;
    await runSweep({ config: await config(yaml), dryRun: false, log, now: () => NOW });
    const d = await explain(yaml, id, { at: NOW + H });
    expect(d.item.kind).toBe('held_session');
    expect(d.fate).toMatchObject({ word: 'held', until_ms: NOW + 7 * f.DAY });
    expect(d.hold).toMatchObject({ until_ms: NOW + 7 * f.DAY, rule: 'max_age' });
    expect(d.due).toEqual({ at_ms: NOW + 7 * f.DAY, event: 'window_ends', then: 'purge', rule: 'expired' });
    expect((await explain(yaml, id, { at: NOW + 7 * f.DAY - 1 })).fate.word).toBe('held');
    expect((await explain(yaml, id, { at: NOW + 7 * f.DAY })).fate.word).toBe('purged:expired');
    // a path to the hold names it too
    expect((await explain(yaml, d.item.path, { at: NOW + H })).item.kind).toBe('held_session');
  });

  it('the guard stops the root: kept:blast_radius, with what it would take', async () => {
    const ids = Array.from({ length: 6 }, (_, k) => session(NOW - (40 + k) * f.DAY));
    const d = await explain(
      `max_delete: { count: 3 }\nsessions:\n  - root: ${root}\n    retain: { max_age: 30d }\n`,
      ids[0]!,
    );
    expect(d.fate).toMatchObject({ word: 'kept:blast_radius', condemned_by: 'max_age' });
    expect(d.guard).toMatchObject({ would_take: 6, present: 6 });
    expect(d.due).toMatchObject({ at_ms: null, event: 'unknown' });
    expect(d.moves).toContainEqual({ cause: 'guard', count: null });
    expect(text(d)).toContain('guard: this sweep would take 6 of 6 here');
  });
});

describe('budgets', () => {
  it('max_bytes takes the oldest first: the oldest is taken, the next says how much growth takes it', async () => {
    const ids = Array.from({ length: 4 }, (_, k) => session(NOW - (4 - k) * f.DAY, { blob: 40_000 }));
    const probe = await explain(`sessions:\n  - root: ${root}\n    max_bytes: 1000000000\n`, ids[0]!);
    const inPlace = probe.budgets[0]!.rule === 'max_bytes' ? probe.budgets[0]!.in_place_bytes : 0;
    const each = probe.budgets[0]!.rule === 'max_bytes' ? probe.budgets[0]!.item_bytes! : 0;
    // a budget 100 bytes short of taking two: the oldest goes; 101 bytes more take the next
    const yaml = `sessions:\n  - root: ${root}\n    max_bytes: ${inPlace - each + 100}\n`;
    const oldest = await explain(yaml, ids[0]!);
    expect(oldest.fate.word).toBe('removed:max_bytes');
    const next = await explain(yaml, ids[1]!);
    expect(next.fate.word).toBe('kept:policy');
    expect(next.budgets[0]).toMatchObject({
      rule: 'max_bytes',
      in_place_bytes: inPlace,
      older_removable: { items: 1, bytes: each },
      grows_by: 101,
      unmet: false,
    });
    expect(next.moves).toContainEqual({ cause: 'growth', count: 101 });
    expect(text(next)).toContain('moved by: the root holding 101 B more in place');
    // 101 bytes more in place (in the newest session) and the sweep takes it
    fs.appendFileSync(path.join(root, ids[3]!, 'blob'), 'x'.repeat(4096));
    expect((await explain(yaml, ids[1]!)).fate.word).toBe('removed:max_bytes');
  });

  it('keep_free takes the oldest removable for good when the filesystem is short', async () => {
    const ids = Array.from({ length: 4 }, (_, k) => session(NOW - (4 - k) * f.DAY, { blob: 40_000 }));
    const yaml = `quarantine: 7d\nkeep_free: 1000000\nsessions:\n  - root: ${root}\n    retain: { max_sessions: 50 }\n`;
    // the reserve in place (src/gchome/reserve.ts): what keep_free takes is for keep_free alone
    fs.mkdirSync(path.join(home, 'gc'), { recursive: true });
    fs.writeFileSync(path.join(home, 'gc', '.reserve'), Buffer.alloc(1 << 20, 1));
    const space = { totalBytes: 1e12, freeBytes: 1_000_000 - 1000 };
    const d = await explain(yaml, ids[0]!, { space });
    expect(d.fate.word).toBe('removed:keep_free');
    expect(d.budgets).toContainEqual(
      expect.objectContaining({
        rule: 'keep_free',
        required_bytes: 1_000_000,
        short_bytes: 1000,
        short_bytes_after: 0,
        unmet: false,
      }),
    );
    expect(d.due).toEqual({ at_ms: NOW, event: 'next_sweep', then: 'remove', rule: 'keep_free' });
    expect(text(d)).toContain('keep_free 976.6 KiB:');
    const young = await explain(yaml, ids[3]!, { space });
    expect(young.fate.word).toBe('kept:policy');
    expect(young.moves).toContainEqual({ cause: 'keep_free', count: null });
  });
});

describe('no policy, targets, and agreement with the dry run', () => {
  it('a root with no policy: kept, never due', async () => {
    const id = session(NOW - 400 * f.DAY);
    const d = await explain(`sessions:\n  - root: ${root}\n`, id);
    expect(d.fate.word).toBe('kept:policy');
    expect(d.policy?.retain).toBeNull();
    expect(d.due).toEqual({ at_ms: null, event: 'never', then: null, rule: null });
    expect(d.moves).toEqual([]);
    const out = text(d);
    expect(out).toContain('kept: no policy covers it');
    expect(out).toContain('never, under this configuration and with nothing else changing');
  });

  it("every session's fate is the one the dry run lists for it; nothing is written, not even <home>/gc", async () => {
    const ids = [session(NOW - 50 * f.DAY), session(NOW - 20 * f.DAY), session(NOW - 2 * f.DAY), session(NOW - H)];
    const yaml = `quarantine: 7d\nsessions:\n  - root: ${root}\n    retain: { max_age: 30d, max_sessions: 2 }\n`;
    const c = await config(yaml);
    const tree = () => {
      const t = f.snapshotTree(tmp);
      delete t['config.yaml']; // rewritten (same text) by each explain below
      return t;
    };
    const before = tree();
    const dry = await runSweep({ config: c, dryRun: true, log, now: () => NOW });
    const listed = new Map(
      dry.actions
        .filter((a) => a.kind === 'remove_session')
        .map((a) => [a.target, `${'held' in a && a.held ? 'held' : 'removed'}:${'reason' in a ? a.reason : ''}`]),
    );
    for (const id of ids) expect((await explain(yaml, id)).fate.word, id).toBe(listed.get(id) ?? 'kept:policy');
    expect(listed.size).toBe(2);
    expect(tree()).toEqual(before);
    expect(fs.existsSync(path.join(home, 'gc'))).toBe(false);
  });

  it("a work log goes with the session whose trace names it: that session's instant", async () => {
    const w = path.join(tmp, 'w');
    const wroot = path.join(w, '.murmur');
    fs.mkdirSync(path.join(w, 'logs'), { recursive: true });
    const mint = NOW - 50 * f.DAY;
    const id = session(mint, { dir: wroot });
    const wrk = f.idAt('wrk_', mint + 1000);
    fs.writeFileSync(path.join(w, 'logs', `${wrk}.log`), 'out\n');
    const t = f.traceText({
      sessionId: id,
      startMs: mint,
      end: true,
      detached: [{ workId: wrk }],
      accounted: [{ workId: wrk, type: 'shell_completed' }],
    }).text;
    fs.writeFileSync(path.join(wroot, id, 'trace.jsonl'), t);
    fs.utimesSync(path.join(wroot, id, 'trace.jsonl'), mint / 1000, mint / 1000);
    const d = await explain(`sessions:\n  - workdir: ${w}\n    retain: { max_age: 60d }\n`, wrk);
    expect(d.item).toMatchObject({ kind: 'work_log', name: `${wrk}.log`, path: path.join(w, 'logs', `${wrk}.log`) });
    expect(d.beside?.named_by).toEqual([id]);
    expect(d.parents).toEqual([
      {
        session: id,
        fate: 'kept:policy',
        due: { at_ms: mint + 60 * f.DAY + 1, event: 'condemned', then: 'remove', rule: 'max_age' },
      },
    ]);
    expect(d.due).toEqual(d.parents[0]!.due);
    expect(d.moves).toEqual([{ cause: 'parent', count: null }]);
  });

  it('an orphan child workdir: children.max_age after its most recent write, to the millisecond', async () => {
    const written = NOW - f.DAY - 250;
    const dir = path.join(root, 'children', 'worker-orphan');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'task.md'), 'do it');
    session(written - f.DAY, { dir: path.join(dir, '.murmur'), writtenMs: written });
    // the child's own directory was last written an hour before its session's trace: the later write counts
    fs.utimesSync(dir, (written - H) / 1000, (written - H) / 1000);
    const yaml = `sessions:\n  - root: ${root}\n    retain: { max_sessions: 10 }\n    children: { max_age: 2d }\n`;
    const d = await explain(yaml, dir);
    expect(d.item).toMatchObject({ kind: 'child_workdir', path: dir });
    const due = written + 2 * f.DAY + 1;
    expect(d.due).toEqual({ at_ms: due, event: 'condemned', then: 'remove', rule: 'children_max_age' });
    expect(d.fate.word).toBe('kept:policy');
    // kept 1 ms before, taken at it
    expect((await explain(yaml, dir, { at: due - 1 })).fate.word).toBe('kept:policy');
    expect((await explain(yaml, dir, { at: due })).fate.word).toBe('removed:children_max_age');
  });

  it('a unique prefix, a path; an ambiguous prefix is exit 2 naming the candidates; none is explain_not_found', async () => {
    const a = session(NOW - 2 * f.DAY);
    const b = session(NOW - 2 * f.DAY + 1);
    const yaml = `sessions:\n  - root: ${root}\n    retain: { max_age: 30d }\n`;
    expect((await explain(yaml, a.slice(0, -4))).item.name).toBe(a);
    expect((await explain(yaml, path.relative(tmp, path.join(root, b)))).item.name).toBe(b);
    const amb = await failure(explain(yaml, 'ses_'));
    expect(amb).toMatchObject({ code: 'target_ambiguous', exit: 2 });
    expect(amb.message).toContain(a);
    expect(amb.message).toContain(b);
    expect(await failure(explain(yaml, 'ses_nothere'))).toMatchObject({ code: 'explain_not_found', exit: 1 });
    expect(await failure(explain(yaml, a, { record: 'shey' }))).toMatchObject({
      code: 'option_not_applicable',
      exit: 2,
    });
    // the same id in two roots: --root says which
    const other = path.join(tmp, 'other', '.murmur');
    fs.mkdirSync(other, { recursive: true });
    fs.cpSync(path.join(root, a), path.join(other, a), { recursive: true });
    const two = `sessions:\n  - root: ${root}\n  - root: ${other}\n`;
    const both = await failure(explain(two, a));
    expect(both).toMatchObject({ code: 'target_ambiguous', exit: 2 });
    expect(both.message).toContain(`session ${a} in ${other}`);
    expect((await explain(two, a, { root: other })).item.place).toBe(other);
  });
});
