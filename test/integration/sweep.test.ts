// The sweep, end to end through the built CLI, against fixture homes in temp dirs.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as f from '../helpers/fixtures.js';

interface Report {
  dry_run: boolean;
  actions: Record<string, unknown>[];
  skipped: { target: string; code: string; detail: string }[];
  errors: { target: string; code: string; detail: string }[];
  audit: string | null;
  bytes_freed: number;
}

let T: string;
let home: string;
let root: string;
const now = Date.now();

beforeEach(() => {
  T = f.tempDir('sweep');
  home = path.join(T, '.murmur');
  root = path.join(T, 'app', '.murmur');
});
afterEach(() => f.rmrf(T));

function config(yaml: string): string {
  return f.writeConfig(T, yaml);
}

function sessionNames(): string[] {
  return fs.existsSync(root)
    ? fs
        .readdirSync(root)
        .filter((n) => n.startsWith('ses_'))
        .sort()
    : [];
}

describe('sessions retention', () => {
  it('max_sessions leaves exactly the newest N, counting every session present', () => {
    const ids = [1, 2, 3, 4, 5, 6].map((d) => f.idAt('ses_', now - (10 - d) * f.DAY));
    for (const id of ids) f.writeSession(root, { sessionId: id, end: true, startMs: now - 20 * f.DAY });
    const cfg = config(`sessions:\n  - root: ${root}\n    retain: { max_sessions: 3 }\n`);
    const r = f.runCli(['--json', '--config', cfg], T);
    expect(r.status, r.stderr).toBe(0);
    const rep = f.json<Report>(r);
    expect(sessionNames()).toEqual(ids.slice(3).sort());
    const removed = rep.actions.filter((a) => a['kind'] === 'remove_session');
    expect(removed.map((a) => a['target']).sort()).toEqual(ids.slice(0, 3).sort());
    expect(removed.every((a) => a['reason'] === 'max_sessions' && a['root'] === root)).toBe(true);
  });

  it('max_age reads the id, never the mtime; both keys AND, age wins the reason', () => {
    const old = [f.idAt('ses_', now - 40 * f.DAY), f.idAt('ses_', now - 30 * f.DAY)];
    const young = [1, 2, 3].map((d) => f.idAt('ses_', now - d * f.DAY));
    // fresh mtimes on old ids: still removed by age
    for (const id of old)
      f.writeSession(root, { sessionId: id, end: true, startMs: now - 40 * f.DAY, mtimeMs: now - 2 * 3600_000 });
    for (const id of young) f.writeSession(root, { sessionId: id, end: true, startMs: now - 5 * f.DAY });
    const cfg = config(`sessions:\n  - root: ${root}\n    retain: { max_sessions: 2, max_age: 15d }\n`);
    const rep = f.json<Report>(f.runCli(['--json', '--config', cfg], T));
    const reasons = Object.fromEntries(
      rep.actions.filter((a) => a['kind'] === 'remove_session').map((a) => [a['target'], a['reason']]),
    );
    expect(reasons[old[0]!]).toBe('max_age');
    expect(reasons[old[1]!]).toBe('max_age');
    expect(reasons[young[2]!]).toBe('max_sessions'); // oldest young one: rank 2
    expect(sessionNames()).toEqual(young.slice(0, 2).sort());
  });

  it('no policy deletes nothing and writes no audit', () => {
    for (let i = 0; i < 4; i++) f.writeSession(root, { sessionId: f.idAt('ses_', now - (100 + i) * f.DAY), end: true });
    const cfg = config(`sessions:\n  - root: ${root}\n`);
    const rep = f.json<Report>(f.runCli(['--json', '--config', cfg], T));
    expect(sessionNames()).toHaveLength(4);
    expect(rep.actions.filter((a) => a['kind'] === 'remove_session')).toEqual([]);
    expect(rep.audit).toBeNull();
  });

  it('a session protected by a live running record survives a policy that would delete it', () => {
    const id = f.idAt('ses_', now - 50 * f.DAY);
    const sdir = f.writeSession(root, { sessionId: id, end: false, startMs: now - 50 * f.DAY });
    const stat = fs.readFileSync(`/proc/${process.pid}/stat`, 'latin1');
    const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    fs.mkdirSync(path.join(home, 'running'), { recursive: true, mode: 0o700 });
    const rec = (token: string | undefined) =>
      JSON.stringify({
        session_id: id,
        url: '127.0.0.1:4100',
        pid: process.pid,
        process_start: token,
        capsule_name: 'demo',
        capsule_version: '1.0.0',
        workdir: sdir,
        outlives_launcher: false,
        started_at: '2026-01-01T00:00:00Z',
      });
    fs.writeFileSync(path.join(home, 'running', `${id}.json`), rec(start), { mode: 0o600 });
    const cfg = config(`sessions:\n  - root: ${root}\n    retain: { max_sessions: 1, max_age: 1s }\n`);
    const rep = f.json<Report>(f.runCli(['--json', '--config', cfg], T));
    expect(fs.existsSync(sdir)).toBe(true);
    expect(rep.skipped.some((s) => s.code === 'live_session' && s.target.endsWith(id))).toBe(true);
    // A record naming a reused pid (wrong start time) does not protect it.
    fs.writeFileSync(path.join(home, 'running', `${id}.json`), rec('1'), { mode: 0o600 });
    f.runCli(['--json', '--config', cfg], T);
    expect(fs.existsSync(sdir)).toBe(false);
  });

  it('a recently written trace without session_end is live within live_grace', () => {
    const id = f.idAt('ses_', now - 50 * f.DAY);
    const sdir = f.writeSession(root, { sessionId: id, end: false, mtimeMs: now - 10 * 60_000 });
    const done = f.writeSession(root, {
      sessionId: f.idAt('ses_', now - 49 * f.DAY),
      end: true,
      mtimeMs: now - 10 * 60_000,
    });
    const cfg = config(`live_grace: 1h\nsessions:\n  - root: ${root}\n    retain: { max_age: 1d }\n`);
    const rep = f.json<Report>(f.runCli(['--json', '--config', cfg], T));
    expect(fs.existsSync(sdir)).toBe(true);
    expect(fs.existsSync(done)).toBe(false);
    expect(rep.skipped.map((s) => s.code)).toContain('live_session');
  });
});

describe('records retention', () => {
  it('max_age removes owned stale contexts only; headerless and foreign records are never touched', () => {
    const own = f.writeRecord(home, 'shey', 'ctx_own', { capsule: 'shey', messages: 2, mtimeMs: now - 100 * f.DAY });
    const fresh = f.writeRecord(home, 'shey', 'ctx_fresh', { capsule: 'shey', messages: 2 });
    const foreign = f.writeRecord(home, 'shey', 'ctx_foreign', {
      capsule: 'other',
      messages: 2,
      mtimeMs: now - 100 * f.DAY,
    });
    const unowned = f.writeRecord(home, 'shey', 'ctx_unowned', { messages: 2, mtimeMs: now - 100 * f.DAY });
    const cfg = config(`records:\n  - capsule: shey\n    retain: { max_age: 90d }\n`);
    const rep = f.json<Report>(f.runCli(['--json', '--config', cfg], T));
    expect(fs.existsSync(path.dirname(own.file))).toBe(false);
    for (const r of [fresh, foreign, unowned]) expect(fs.existsSync(r.file)).toBe(true);
    expect(rep.actions.filter((a) => a['kind'] === 'remove_record')).toEqual([
      expect.objectContaining({ record: 'shey', target: 'ctx_own', reason: 'max_age' }),
    ]);
  });

  it('max_messages keeps the newest N byte for byte and writes the exact header', () => {
    const extra = ['', '{"torn":', 'garbage'];
    const r = f.writeRecord(home, 'shey', 'ctx_1', {
      capsule: 'shey',
      createdMs: 1756400000000,
      messages: 10,
      mode: 0o644,
    });
    fs.appendFileSync(r.file, extra.slice(0, 1).join('\n'));
    const before = fs.readFileSync(r.file, 'utf8').split('\n');
    const cfg = config(`records:\n  - capsule: shey\n    retain: { max_messages: 3 }\n`);
    const rep = f.json<Report>(f.runCli(['--json', '--config', cfg], T));
    const after = fs.readFileSync(r.file, 'utf8');
    const lines = after.split('\n');
    const header = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(Object.keys(header)).toEqual(['type', 'capsule', 'created_ms', 'truncated']);
    expect(header).toEqual({
      type: 'murmur.record',
      capsule: 'shey',
      created_ms: 1756400000000,
      truncated: {
        dropped: 7,
        oldest_surviving_id: r.ids[7],
        last_dropped_id: r.ids[6],
        at_ms: expect.any(Number) as number,
      },
    });
    expect(Object.keys(header['truncated'] as object)).toEqual([
      'dropped',
      'oldest_surviving_id',
      'last_dropped_id',
      'at_ms',
    ]);
    expect(lines.slice(1).join('\n')).toBe(before.slice(8).join('\n'));
    expect(fs.statSync(r.file).mode & 0o777).toBe(0o600);
    expect(rep.actions).toContainEqual(
      expect.objectContaining({
        kind: 'truncate_record',
        record: 'shey',
        target: 'ctx_1',
        reason: 'max_messages',
        messages_dropped: 7,
        kept: 3,
      }),
    );
    // A second truncation accumulates `dropped` and keeps capsule/created_ms.
    const cfg2 = config(`records:\n  - capsule: shey\n    retain: { max_messages: 1 }\n`);
    f.runCli(['--json', '--config', cfg2], T);
    const h2 = JSON.parse(fs.readFileSync(r.file, 'utf8').split('\n')[0]!) as {
      truncated: { dropped: number; oldest_surviving_id: string };
      created_ms: number;
    };
    expect(h2.truncated.dropped).toBe(9);
    expect(h2.truncated.oldest_surviving_id).toBe(r.ids[9]);
    expect(h2.created_ms).toBe(1756400000000);
  });

  it('message counts of unchanged records are not re-read on the next sweep', () => {
    f.writeRecord(home, 'shey', 'ctx_1', { capsule: 'shey', messages: 3 });
    f.writeRecord(home, 'shey', 'ctx_2', { capsule: 'shey', messages: 3 });
    f.writeRecord(home, 'shey', 'ctx_3', { capsule: 'other', messages: 3 });
    const cfg = config(`records:\n  - capsule: shey\n    retain: { max_messages: 10 }\n`);
    type Inv = { inventory: { records: number; records_counted: number; records_count_cached: number } };
    expect(f.json<Inv>(f.runCli(['--json', '--config', cfg], T)).inventory).toMatchObject({
      records: 3,
      records_counted: 2,
      records_count_cached: 0,
    });
    expect(f.json<Inv>(f.runCli(['--json', '--config', cfg], T)).inventory).toMatchObject({
      records_counted: 0,
      records_count_cached: 2,
    });
    fs.appendFileSync(
      path.join(home, 'conversations', 'shey', 'ctx_2', 'conversation.jsonl'),
      f.messageLine(f.idAt('msg_', now)) + '\n',
    );
    expect(f.json<Inv>(f.runCli(['--json', '--config', cfg], T)).inventory).toMatchObject({
      records_counted: 1,
      records_count_cached: 1,
    });
  });

  it('a record inside the limit is left byte-identical', () => {
    const r = f.writeRecord(home, 'shey', 'ctx_1', { capsule: 'shey', messages: 3 });
    const before = fs.readFileSync(r.file);
    const st = fs.statSync(r.file);
    const cfg = config(`records:\n  - capsule: shey\n    retain: { max_messages: 3 }\n`);
    const rep = f.json<Report>(f.runCli(['--json', '--config', cfg], T));
    expect(fs.readFileSync(r.file).equals(before)).toBe(true);
    expect(fs.statSync(r.file).ino).toBe(st.ino);
    expect(rep.actions.filter((a) => a['kind'] === 'truncate_record')).toEqual([]);
  });

  it('contexts named by a live session are neither removed nor truncated', () => {
    const id = f.idAt('ses_', now - 1 * f.DAY);
    f.writeSession(root, {
      sessionId: id,
      end: false,
      contextId: 'ctx_live',
      tasks: [{ taskId: 'tsk_1', contextId: 'ctx_task' }],
      mtimeMs: now - 5_000,
    });
    const a = f.writeRecord(home, 'shey', 'ctx_live', { capsule: 'shey', messages: 20, mtimeMs: now - 100 * f.DAY });
    const b = f.writeRecord(home, 'shey', 'ctx_task', { capsule: 'shey', messages: 20 });
    const cfg = config(
      `sessions:\n  - root: ${root}\nrecords:\n  - capsule: shey\n    retain: { max_messages: 5, max_age: 30d }\n`,
    );
    const rep = f.json<Report>(f.runCli(['--json', '--config', cfg], T));
    expect(fs.existsSync(a.file)).toBe(true);
    expect(f.readLines(b.file)).toHaveLength(21);
    expect(
      rep.skipped
        .filter((s) => s.code === 'live_context')
        .map((s) => s.target)
        .sort(),
    ).toEqual(['shey/ctx_live', 'shey/ctx_task']);
  });
});

describe('audit trace', () => {
  it('writes session_start, retention lines in runtime order, session_end — and nothing when nothing changed', () => {
    for (let i = 0; i < 4; i++) f.writeSession(root, { sessionId: f.idAt('ses_', now - (40 - i) * f.DAY), end: true });
    f.writeSession(root, { sessionId: f.idAt('ses_', now - 1 * f.DAY), end: true });
    f.writeSession(root, { sessionId: f.idAt('ses_', now - 2 * f.DAY), end: true });
    f.writeRecord(home, 'shey', 'ctx_old', { capsule: 'shey', messages: 2, mtimeMs: now - 100 * f.DAY });
    f.writeRecord(home, 'shey', 'ctx_big', { capsule: 'shey', messages: 12 });
    const cfg = config(
      `sessions:\n  - root: ${root}\n    retain: { max_sessions: 5, max_age: 30d }\nrecords:\n  - capsule: shey\n    retain: { max_messages: 10, max_age: 90d }\n`,
    );
    const rep = f.json<Report>(f.runCli(['--json', '--config', cfg], T));
    expect(rep.audit).toMatch(/^ses_[0-9a-f]{32}$/);
    const trace = f
      .readLines(path.join(home, 'gc', rep.audit!, 'trace.jsonl'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(trace.map((e) => [e['event_type'], e['store'], e['reason']])).toEqual([
      ['session_start', undefined, undefined],
      ['retention', 'sessions', 'max_age'],
      ['retention', 'records', 'max_age'],
      ['retention', 'records', 'max_messages'],
      ['session_end', undefined, undefined],
    ]);
    const start = trace[0]!;
    expect(Object.keys(start).slice(0, 5)).toEqual(['event_type', 'event_id', 'parent_id', 'session_id', 'timestamp']);
    expect(start['capsule_name']).toBe('murmur-gc');
    for (const e of trace.slice(1)) {
      expect(Object.keys(e).slice(0, 5)).toEqual(['event_type', 'event_id', 'parent_id', 'session_id', 'timestamp']);
      expect(e['parent_id']).toBe(start['event_id']);
      expect(e['session_id']).toBe(rep.audit);
      expect(String(e['event_id'])).toMatch(/^evt_[0-9a-f]{32}$/);
    }
    const ret = trace.filter((e) => e['event_type'] === 'retention');
    expect(Object.keys(ret[0]!)).toEqual([
      'event_type',
      'event_id',
      'parent_id',
      'session_id',
      'timestamp',
      'store',
      'reason',
      'removed',
      'targets',
    ]);
    expect(ret[0]!['removed']).toBe(4);
    expect(ret[2]).toMatchObject({ removed: 1, targets: ['ctx_big'], messages_dropped: 2 });
    expect(Object.keys(ret[2]!).at(-1)).toBe('messages_dropped');
    expect(fs.existsSync(path.join(home, 'gc', rep.audit!, 'intent.jsonl'))).toBe(false);
    // A second sweep changes nothing and writes no audit.
    const again = f.json<Report>(f.runCli(['--json', '--config', cfg], T));
    expect(again.actions).toEqual([]);
    expect(again.audit).toBeNull();
    expect(fs.readdirSync(path.join(home, 'gc')).filter((n) => n.startsWith('ses_'))).toHaveLength(1);
  });
});

describe('audit retention', () => {
  it("prunes murmur-gc's own old audit sessions by audit.retain and records it", () => {
    const old = f.idAt('ses_', now - 100 * f.DAY);
    fs.mkdirSync(path.join(home, 'gc', old), { recursive: true, mode: 0o700 });
    fs.writeFileSync(
      path.join(home, 'gc', old, 'trace.jsonl'),
      '{"event_type":"session_start"}\n{"event_type":"session_end"}\n',
    );
    fs.utimesSync(path.join(home, 'gc', old, 'trace.jsonl'), (now - 100 * f.DAY) / 1000, (now - 100 * f.DAY) / 1000);
    const recent = f.idAt('ses_', now - 10 * f.DAY);
    fs.mkdirSync(path.join(home, 'gc', recent), { recursive: true, mode: 0o700 });
    const rep = f.json<Report>(f.runCli(['--json'], T));
    expect(fs.existsSync(path.join(home, 'gc', old))).toBe(false);
    expect(fs.existsSync(path.join(home, 'gc', recent))).toBe(true);
    expect(rep.actions).toContainEqual(
      expect.objectContaining({ kind: 'remove_session', root: path.join(home, 'gc'), target: old, reason: 'max_age' }),
    );
    const trace = f
      .readLines(path.join(home, 'gc', rep.audit!, 'trace.jsonl'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(trace[1]).toMatchObject({ event_type: 'retention', store: 'sessions', reason: 'max_age', targets: [old] });
  });
});

describe('interrupted runs', () => {
  it('completes the audit trace of a run killed mid-sweep from what actually happened', () => {
    const dead = f.idAt('ses_', now - f.DAY);
    const gcSes = path.join(home, 'gc', dead);
    fs.mkdirSync(gcSes, { recursive: true, mode: 0o700 });
    const startId = f.idAt('evt_', now - f.DAY);
    fs.writeFileSync(
      path.join(gcSes, 'trace.jsonl'),
      JSON.stringify({
        event_type: 'session_start',
        event_id: startId,
        parent_id: null,
        session_id: dead,
        timestamp: now - f.DAY,
        capsule_name: 'murmur-gc',
        capsule_version: '0.1.0',
      }) + '\n',
    );
    const gone = f.idAt('ses_', now - 50 * f.DAY); // removed before the kill, never marked done
    const kept = f.writeSession(root, { sessionId: f.idAt('ses_', now - 49 * f.DAY), end: true }); // intended, never removed
    const intents = [
      {
        op: 'intent',
        seq: 1,
        kind: 'remove_session',
        store: 'sessions',
        reason: 'max_age',
        parent: root,
        target: gone,
      },
      {
        op: 'intent',
        seq: 2,
        kind: 'remove_record',
        store: 'records',
        reason: 'max_age',
        parent: path.join(home, 'conversations', 'shey'),
        target: 'ctx_done',
      },
      { op: 'done', seq: 2 },
      {
        op: 'intent',
        seq: 3,
        kind: 'remove_session',
        store: 'sessions',
        reason: 'max_age',
        parent: root,
        target: path.basename(kept),
      },
    ];
    fs.writeFileSync(path.join(gcSes, 'intent.jsonl'), intents.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const rep = f.json<Report>(f.runCli(['--json'], T));
    expect(rep.skipped).toContainEqual(expect.objectContaining({ target: gcSes, code: 'process_interrupted' }));
    expect(fs.existsSync(path.join(gcSes, 'intent.jsonl'))).toBe(false);
    const lines = f.readLines(path.join(gcSes, 'trace.jsonl')).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => [l['event_type'], l['store'], l['reason'], l['targets']])).toEqual([
      ['session_start', undefined, undefined, undefined],
      ['retention', 'sessions', 'max_age', [gone]],
      ['retention', 'records', 'max_age', ['ctx_done']],
      ['session_end', undefined, undefined, undefined],
    ]);
    expect(lines.at(-1)).toMatchObject({ exit_status: 'canceled', parent_id: startId, session_id: dead });
    expect(fs.existsSync(kept)).toBe(true);
    // Completed once: the next sweep has nothing to recover.
    const again = f.json<Report>(f.runCli(['--json'], T));
    expect(again.skipped.filter((s) => s.code === 'process_interrupted')).toEqual([]);
  });
});

describe('dry run', () => {
  it('leaves the tree byte-identical and reports exactly what the real run then does', () => {
    for (let i = 0; i < 5; i++)
      f.writeSession(root, {
        sessionId: f.idAt('ses_', now - (40 - i) * f.DAY),
        end: true,
        files: { 'blobs/abc': 'x'.repeat(100) },
      });
    f.writeSession(root, {
      sessionId: f.idAt('ses_', now - 60 * f.DAY),
      end: false,
      detached: [{ workId: f.idAt('wrk_', now - 60 * f.DAY) }],
      tasks: [{ taskId: 'tsk_a', contextId: 'ctx_z' }],
    });
    f.writeRecord(home, 'shey', 'ctx_old', { capsule: 'shey', messages: 2, mtimeMs: now - 100 * f.DAY });
    f.writeRecord(home, 'shey', 'ctx_big', { capsule: 'shey', messages: 12, mode: 0o644 });
    fs.chmodSync(home, 0o755);
    const cfg = config(
      `sessions:\n  - root: ${root}\n    retain: { max_sessions: 3, max_age: 45d }\nrecords:\n  - capsule: shey\n    retain: { max_messages: 10, max_age: 90d }\n`,
    );
    const before = { ...f.snapshotTree(home), ...f.snapshotTree(root) };
    const dry = f.runCli(['--dry-run', '--json', '--config', cfg], T);
    expect(dry.status, dry.stderr).toBe(0);
    expect({ ...f.snapshotTree(home), ...f.snapshotTree(root) }).toEqual(before);
    const real = f.runCli(['--json', '--config', cfg], T);
    expect(real.status, real.stderr).toBe(0);
    const strip = (r: Report) =>
      r.actions.map((a) => {
        const { task_id: _t, ...rest } = a as Record<string, unknown> & { task_id?: unknown };
        return rest;
      });
    expect(strip(f.json<Report>(real))).toEqual(strip(f.json<Report>(dry)));
    expect(f.json<Report>(dry).actions.map((a) => a['kind'])).toEqual(
      expect.arrayContaining(['chmod', 'remove_session', 'remove_record', 'truncate_record']),
    );
  });

  it('with the undo window, a budget, torn tails and leftovers: no byte, mode or entry changes, and the real run does what it said', () => {
    // A home and two roots where every step has something to do.
    for (let i = 0; i < 3; i++)
      f.writeSession(root, {
        sessionId: f.idAt('ses_', now - (40 - i) * f.DAY),
        end: true,
        files: { 'blobs/abc': 'x'.repeat(100) },
      });
    const expired = f.idAt('ses_', now - 50 * f.DAY);
    f.writeSession(root, { sessionId: expired, end: true });
    fs.renameSync(path.join(root, expired), path.join(root, `.murmur-gc-quarantine.${now - f.DAY}.${expired}`));
    const trash = path.join(root, `.murmur-gc-trash.ses_0123456789abcdef.${f.idAt('ses_', now - 60 * f.DAY)}`);
    fs.mkdirSync(trash, { recursive: true });
    fs.writeFileSync(path.join(trash, 'left'), 'y'.repeat(300));
    // murmur-gc's own (its registry names them), as an earlier sweep left them
    f.vouch(home, root, `.murmur-gc-quarantine.${now - f.DAY}.${expired}`, { session: expired, untilMs: now - f.DAY });
    f.vouch(home, root, path.basename(trash));
    const root2 = path.join(T, 'big', '.murmur');
    for (let i = 0; i < 4; i++)
      f.writeSession(root2, {
        sessionId: f.idAt('ses_', now - (9 - i) * f.DAY),
        end: true,
        files: { blob: 'z'.repeat(20_000) },
      });
    f.writeRecord(home, 'shey', 'ctx_old', { capsule: 'shey', messages: 2, mtimeMs: now - 100 * f.DAY });
    f.writeRecord(home, 'shey', 'ctx_big', { capsule: 'shey', messages: 12, mode: 0o644 });
    const torn = f.writeRecord(home, 'shey', 'ctx_torn', { capsule: 'shey', messages: 2 });
    fs.appendFileSync(torn.file, '{"role":"user","content":"half');
    fs.utimesSync(torn.file, (now - 10 * f.DAY) / 1000, (now - 10 * f.DAY) / 1000);
    fs.writeFileSync(
      path.join(home, 'conversations', 'shey', 'ctx_torn', '.conversation.jsonl.4000001.ab12.tmp'),
      'partial',
    );
    fs.chmodSync(home, 0o755);
    const cfg = config(
      `quarantine: 24h\nsessions:\n  - root: ${root}\n    retain: { max_age: 30d }\n  - root: ${root2}\n    max_bytes: 50000\nrecords:\n  - capsule: shey\n    retain: { max_messages: 10, max_age: 90d }\n`,
    );
    const before = f.snapshotTree(T);
    const dry = f.runCli(['--dry-run', '--json', '--config', cfg], T);
    expect(dry.status, dry.stderr).toBe(0);
    expect(f.snapshotTree(T)).toEqual(before);
    const real = f.runCli(['--json', '--config', cfg], T);
    expect(real.status, real.stderr).toBe(0);
    // What differs by nature: the task a real run mints, and the clock in a hold's deadline and
    // where in <home>/gc/quarantine a held context or dropped lines land.
    const same = (r: Report) =>
      r.actions.map((a) => {
        const { task_id: _t, ...rest } = a as Record<string, unknown> & { task_id?: unknown };
        return rest['held'] ? { ...rest, held: true } : rest;
      });
    const d = f.json<Report>(dry);
    const r = f.json<Report>(real);
    expect(same(r)).toEqual(same(d));
    expect(r.bytes_freed).toBe(d.bytes_freed);
    expect(d.actions.map((a) => a['kind'])).toEqual(
      expect.arrayContaining([
        'chmod',
        'remove_session',
        'remove_record',
        'truncate_record',
        'repair_torn_tail',
        'purge_quarantine',
        'remove_debris',
      ]),
    );
    expect(
      d.actions.filter((a) => a['kind'] === 'remove_session' && a['reason'] === 'max_bytes').length,
    ).toBeGreaterThan(0);
    expect(d.actions.filter((a) => a['kind'] === 'remove_debris').length).toBe(2);
  });

  it('on a machine with no murmur home exits 0 with a clear message and creates nothing', () => {
    const r = f.runCli(['--dry-run'], T);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/No murmur home at .*\.murmur/);
    expect(fs.existsSync(home)).toBe(false);
    const real = f.runCli([], T);
    expect(real.status).toBe(0);
    expect(fs.existsSync(home)).toBe(false);
  });
});

describe('modes', () => {
  it('reasserts 0700/0600 on the home tree, never through a symlink, and reports each change', () => {
    const rec = f.writeRecord(home, 'shey', 'ctx_1', { messages: 1, mode: 0o644 });
    fs.chmodSync(path.join(home, 'conversations', 'shey'), 0o755);
    fs.chmodSync(home, 0o755);
    fs.mkdirSync(path.join(home, 'state', 'store1'), { recursive: true, mode: 0o755 });
    fs.chmodSync(path.join(home, 'state', 'store1'), 0o755);
    const canary = path.join(T, 'canary');
    fs.writeFileSync(canary, 'canary');
    fs.chmodSync(canary, 0o644);
    fs.symlinkSync(canary, path.join(home, 'conversations', 'shey', 'ctx_link'));
    const rep = f.json<Report>(f.runCli(['--json'], T));
    expect(fs.statSync(home).mode & 0o777).toBe(0o700);
    expect(fs.statSync(path.join(home, 'conversations', 'shey')).mode & 0o777).toBe(0o700);
    expect(fs.statSync(path.join(home, 'state', 'store1')).mode & 0o777).toBe(0o700);
    expect(fs.statSync(rec.file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(canary).mode & 0o777).toBe(0o644);
    expect(rep.actions).toContainEqual({ kind: 'chmod', path: home, from: '0755', to: '0700' });
    expect(rep.actions).toContainEqual({ kind: 'chmod', path: rec.file, from: '0644', to: '0600' });
  });
});
