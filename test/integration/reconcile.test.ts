// Reconciliation of orphaned `shell_detached` lines into `shell_lost`, through the built CLI.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as f from '../helpers/fixtures.js';

interface Report {
  actions: Record<string, unknown>[];
  skipped: { target: string; code: string }[];
  errors: { target: string; code: string }[];
  audit: string | null;
}

let T: string;
let home: string;
let root: string;
let cfg: string;
const now = Date.now();

beforeEach(() => {
  T = f.tempDir('reconcile');
  home = path.join(T, '.murmur');
  root = path.join(T, 'app', '.murmur');
  fs.mkdirSync(home, { mode: 0o700 });
  cfg = f.writeConfig(T, `sessions:\n  - root: ${root}\n`);
});
afterEach(() => f.rmrf(T));

function lines(file: string): Record<string, unknown>[] {
  return f.readLines(file).map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('shell_lost reconciliation', () => {
  it('appends one shell_lost per unaccounted work id, fields in the runtime order, joined to a detached_lost task', () => {
    const ses = f.idAt('ses_', now - 2 * f.DAY);
    const w1 = f.idAt('wrk_', now - 2 * f.DAY + 1000);
    const w2 = f.idAt('wrk_', now - 2 * f.DAY + 2000);
    const wDone = f.idAt('wrk_', now - 2 * f.DAY + 3000);
    const wAband = f.idAt('wrk_', now - 2 * f.DAY + 4000);
    const wLost = f.idAt('wrk_', now - 2 * f.DAY + 5000);
    const dir = f.writeSession(root, {
      sessionId: ses,
      end: false,
      tasks: [{ taskId: 'tsk_a', contextId: 'ctx_a', trust: 'trusted' }],
      detached: [
        { workId: w1, binary: '/usr/bin/sleep', command: '600', atMs: now - 2 * f.DAY + 1000 },
        { workId: w2, binary: '/usr/bin/make', command: 'build', atMs: now - 2 * f.DAY + 2000 },
        { workId: wDone },
        { workId: wAband },
        { workId: wLost },
      ],
      accounted: [
        { workId: wDone, type: 'shell_completed' },
        { workId: wAband, type: 'shell_abandoned' },
        { workId: wLost, type: 'shell_lost' },
      ],
    });
    const trace = path.join(dir, 'trace.jsonl');
    const startId = lines(trace)[0]!['event_id'];
    const before = fs.readFileSync(trace, 'utf8');
    const r = f.runCli(['--json', '--config', cfg], T);
    expect(r.status, r.stderr).toBe(0);
    const rep = f.json<Report>(r);
    const after = fs.readFileSync(trace, 'utf8');
    expect(after.startsWith(before)).toBe(true); // append only
    const added = after
      .slice(before.length)
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(added).toHaveLength(2);
    for (const l of added) {
      expect(Object.keys(l)).toEqual([
        'event_type',
        'event_id',
        'parent_id',
        'session_id',
        'timestamp',
        'work_id',
        'binary',
        'command',
        'detached_at_ms',
        'reconciled_by_session',
        'reconciled_task_id',
      ]);
      expect(l['event_type']).toBe('shell_lost');
      expect(l['parent_id']).toBe(startId);
      expect(l['session_id']).toBe(ses);
      expect(l['reconciled_by_session']).toBe(rep.audit);
      expect(String(l['event_id'])).toMatch(/^evt_[0-9a-f]{32}$/);
    }
    expect(added.map((l) => [l['work_id'], l['binary'], l['command'], l['detached_at_ms']])).toEqual([
      [w1, '/usr/bin/sleep', '600', now - 2 * f.DAY + 1000],
      [w2, '/usr/bin/make', 'build', now - 2 * f.DAY + 2000],
    ]);
    const taskId = added[0]!['reconciled_task_id'];
    expect(String(taskId)).toMatch(/^tsk_[0-9a-f]{32}$/);
    expect(added[1]!['reconciled_task_id']).toBe(taskId);
    // The audit trace carries the detached_lost task that joins them.
    const audit = lines(path.join(home, 'gc', rep.audit!, 'trace.jsonl'));
    const ts = audit.find((e) => e['event_type'] === 'task_start')!;
    expect(ts).toMatchObject({
      task_id: taskId,
      source: 'detached_lost',
      origin: 'completion',
      lane: 'bg',
      trust: 'trusted',
    });
    const te = audit.find((e) => e['event_type'] === 'task_end')!;
    expect(te['parent_id']).toBe(ts['event_id']);
    expect(te['task_id']).toBe(taskId);
    expect(audit.at(-1)!['event_type']).toBe('session_end');
    // Reported as actions, accounted commands are not.
    const lost = rep.actions.filter((a) => a['kind'] === 'shell_lost');
    expect(lost.map((a) => a['work_id'])).toEqual([w1, w2]);
    expect(lost[0]).toMatchObject({ target: ses, binary: '/usr/bin/sleep', command: '600' });
    // Idempotent: a second sweep reports nothing new and writes nothing.
    const again = f.json<Report>(f.runCli(['--json', '--config', cfg], T));
    expect(again.actions.filter((a) => a['kind'] === 'shell_lost')).toEqual([]);
    expect(again.audit).toBeNull();
    expect(fs.readFileSync(trace, 'utf8')).toBe(after);
  });

  it('prefixes a newline when the trace ends mid-line, and lines above a torn tail still count', () => {
    const ses = f.idAt('ses_', now - 2 * f.DAY);
    const w = f.idAt('wrk_', now - 2 * f.DAY);
    const dir = f.writeSession(root, {
      sessionId: ses,
      end: false,
      detached: [{ workId: w }],
      extra: 'garbage line\n{"event_type":"shell_completed","work_id":"',
    });
    const trace = path.join(dir, 'trace.jsonl');
    fs.utimesSync(trace, (now - 2 * f.DAY) / 1000, (now - 2 * f.DAY) / 1000);
    const rep = f.json<Report>(f.runCli(['--json', '--config', cfg], T));
    expect(rep.actions.filter((a) => a['kind'] === 'shell_lost').map((a) => a['work_id'])).toEqual([w]);
    const text = fs.readFileSync(trace, 'utf8');
    expect(text).toMatch(/"work_id":"\n\{"event_type":"shell_lost"/);
    expect(text.endsWith('\n')).toBe(true);
  });

  it('an untrusted or unjoinable task makes the report untrusted', () => {
    const s1 = f.idAt('ses_', now - 3 * f.DAY);
    f.writeSession(root, {
      sessionId: s1,
      end: true,
      tasks: [
        { taskId: 'tsk_t', contextId: 'ctx_1', trust: 'trusted' },
        { taskId: 'tsk_u', contextId: 'ctx_2', trust: 'untrusted' },
      ],
      detached: [
        { workId: f.idAt('wrk_', now - 3 * f.DAY), taskId: 'tsk_t' },
        { workId: f.idAt('wrk_', now - 3 * f.DAY + 1), taskId: 'tsk_u' },
      ],
    });
    const s2 = f.idAt('ses_', now - 2 * f.DAY);
    f.writeSession(root, {
      sessionId: s2,
      end: true,
      tasks: [],
      detached: [{ workId: f.idAt('wrk_', now - 2 * f.DAY), taskId: 'tsk_missing' }],
    });
    const s3 = f.idAt('ses_', now - 1 * f.DAY);
    f.writeSession(root, {
      sessionId: s3,
      end: true,
      tasks: [{ taskId: 'tsk_ok', contextId: 'c' }],
      detached: [{ workId: f.idAt('wrk_', now - 1 * f.DAY), taskId: 'tsk_ok' }],
    });
    const rep = f.json<Report>(f.runCli(['--json', '--config', cfg], T));
    const audit = lines(path.join(home, 'gc', rep.audit!, 'trace.jsonl'));
    const tasks = audit.filter((e) => e['event_type'] === 'task_start');
    expect(tasks).toHaveLength(3);
    const bySession = new Map<string, string>();
    for (const a of rep.actions)
      if (a['kind'] === 'shell_lost') bySession.set(String(a['task_id']), String(a['target']));
    const trust = Object.fromEntries(tasks.map((t) => [bySession.get(String(t['task_id'])), t['trust']]));
    expect(trust).toEqual({ [s1]: 'untrusted', [s2]: 'untrusted', [s3]: 'trusted' });
  });

  it('a live session is never reconciled', () => {
    const ses = f.idAt('ses_', now - 2 * f.DAY);
    const dir = f.writeSession(root, {
      sessionId: ses,
      end: false,
      detached: [{ workId: f.idAt('wrk_', now) }],
      mtimeMs: now - 5 * 60_000,
    });
    const before = fs.readFileSync(path.join(dir, 'trace.jsonl'));
    const rep = f.json<Report>(f.runCli(['--json', '--config', cfg], T));
    expect(rep.actions.filter((a) => a['kind'] === 'shell_lost')).toEqual([]);
    expect(fs.readFileSync(path.join(dir, 'trace.jsonl')).equals(before)).toBe(true);
  });

  it('omits parent_id when the session_start cannot be read back', () => {
    const ses = f.idAt('ses_', now - 2 * f.DAY);
    const w = f.idAt('wrk_', now - 2 * f.DAY);
    const dir = path.join(root, ses);
    fs.mkdirSync(dir, { recursive: true });
    const trace = path.join(dir, 'trace.jsonl');
    fs.writeFileSync(
      trace,
      '{"event_type":"session_st\n' +
        JSON.stringify({
          event_type: 'shell_detached',
          event_id: f.idAt('evt_', now),
          parent_id: null,
          session_id: ses,
          timestamp: 5,
          work_id: w,
          binary: 'b',
          command: 'c',
        }) +
        '\n',
    );
    fs.utimesSync(trace, (now - 2 * f.DAY) / 1000, (now - 2 * f.DAY) / 1000);
    f.runCli(['--json', '--config', cfg], T);
    const last = JSON.parse(f.readLines(trace).at(-1)!) as Record<string, unknown>;
    expect(last['event_type']).toBe('shell_lost');
    expect('parent_id' in last).toBe(false);
    expect(Object.keys(last).slice(0, 4)).toEqual(['event_type', 'event_id', 'session_id', 'timestamp']);
    expect(last['detached_at_ms']).toBe(5);
  });

  it('--dry-run lists lost work and writes nothing; sessions found through running records are reconciled too', () => {
    const other = path.join(T, 'elsewhere', '.murmur');
    const ses = f.idAt('ses_', now - 2 * f.DAY);
    const dir = f.writeSession(other, {
      sessionId: ses,
      end: false,
      detached: [{ workId: f.idAt('wrk_', now - 2 * f.DAY) }],
    });
    fs.mkdirSync(path.join(home, 'running'), { mode: 0o700 });
    // A runtime killed outright leaves its running record behind; its pid is long gone.
    fs.writeFileSync(
      path.join(home, 'running', `${ses}.json`),
      f.runningRecordJson({ sessionId: ses, pid: 2 ** 22 + 12345, processStart: '1', workdir: dir }),
      { mode: 0o600 },
    );
    const before = f.snapshotTree(T);
    const dry = f.json<Report>(f.runCli(['--dry-run', '--json'], T));
    expect(dry.actions.filter((a) => a['kind'] === 'shell_lost')).toHaveLength(1);
    expect(f.snapshotTree(T)).toEqual(before);
    const real = f.json<Report>(f.runCli(['--json'], T));
    expect(real.actions.filter((a) => a['kind'] === 'shell_lost')).toHaveLength(1);
    expect(lines(path.join(dir, 'trace.jsonl')).at(-1)!['event_type']).toBe('shell_lost');
    // and the discovered root is never pruned (no policy names it)
    expect(fs.existsSync(dir)).toBe(true);
  });

  it('a trace fully accounted for and unchanged is not re-read on the next sweep', () => {
    for (let i = 0; i < 5; i++) f.writeSession(root, { sessionId: f.idAt('ses_', now - (i + 2) * f.DAY), end: true });
    const first = f.json<{ inventory: { traces_read: number; traces_cached: number } }>(
      f.runCli(['--json', '--config', cfg], T),
    );
    expect(first.inventory.traces_read).toBe(5);
    const second = f.json<{ inventory: { traces_read: number; traces_cached: number } }>(
      f.runCli(['--json', '--config', cfg], T),
    );
    expect(second.inventory).toMatchObject({ traces_read: 0, traces_cached: 5 });
    // A changed trace is read again.
    const changed = fs.readdirSync(root).sort()[0]!;
    fs.appendFileSync(path.join(root, changed, 'trace.jsonl'), '\n');
    const third = f.json<{ inventory: { traces_read: number; traces_cached: number } }>(
      f.runCli(['--json', '--config', cfg], T),
    );
    expect(third.inventory).toMatchObject({ traces_read: 1, traces_cached: 4 });
  });
});

describe('history --target for a reconciled session', () => {
  it('finds the sweep that reconciled it (exit 0), by its id or a unique prefix; a prefix of two names is exit 2 naming both', () => {
    const a = f.idAt('ses_', now - 2 * f.DAY);
    const b = a.slice(0, 20) + 'f'.repeat(a.length - 20);
    const w = f.idAt('wrk_', now - 2 * f.DAY + 1000);
    for (const s of [a, b])
      f.writeSession(root, {
        sessionId: s,
        end: false,
        tasks: [{ taskId: 'tsk_a', contextId: 'ctx_a' }],
        detached: [{ workId: w }],
      });
    expect(f.runCli(['--config', cfg], T).status).toBe(0);

    const h = f.runCli(['history', '--config', cfg, '--target', a], T);
    expect(h.status, h.stdout + h.stderr).toBe(0);
    expect(h.stdout).toMatch(
      new RegExp(
        `^  reconciled by sweep ses_\\w+ at .* in sessions root ${root.replace(/[.]/g, '\\.')}: 1 background command marked lost \\(shell_lost\\); that sweep: ok\\n    ${w}$`,
        'm',
      ),
    );
    const j = f.json<{ target: string; matches: { action: string; work_ids: string[] }[] }>(
      f.runCli(['history', '--json', '--config', cfg, '--target', a.slice(0, 30)], T),
    );
    expect(j.target).toBe(a);
    expect(j.matches.map((m) => [m.action, m.work_ids])).toEqual([['reconciled', [w]]]);

    const amb = f.runCli(['history', '--config', cfg, '--target', a.slice(0, 20)], T);
    expect(amb.status).toBe(2);
    expect(amb.stderr).toContain('[target_ambiguous]');
    expect(amb.stderr).toContain(a);
    expect(amb.stderr).toContain(b);
    expect(f.runCli(['history', '--config', cfg, '--target', 'ses_nope'], T).status).toBe(1);
  });
});
