// The real daemon process (`node dist/cli/bin.js daemon`) on a per-second schedule against temp
// homes: sweeps happen and are logged, never overlap, stop cleanly on SIGTERM mid-sweep, survive
// a broken config on SIGHUP, recover a SIGKILLed predecessor; `status` and `history` tell it.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as f from '../helpers/fixtures.js';

// Parsed JSON log lines and documents: any keeps the assertions readable.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Rec = Record<string, any>;

const EVERY_SECOND = '* * * * * *';

class DaemonProc {
  readonly child: ChildProcess;
  readonly lines: Rec[] = [];
  readonly nonJson: string[] = [];
  private buf = '';
  exitedAt: number | undefined;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(args: string[], homeEnv: string) {
    this.child = spawn(process.execPath, [f.BIN, 'daemon', ...args], {
      env: f.cliEnv(homeEnv),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout!.on('data', (d: Buffer) => this.nonJson.push(`stdout: ${d.toString()}`));
    this.child.stderr!.on('data', (d: Buffer) => {
      this.buf += d.toString();
      let nl: number;
      while ((nl = this.buf.indexOf('\n')) >= 0) {
        const line = this.buf.slice(0, nl);
        this.buf = this.buf.slice(nl + 1);
        try {
          this.lines.push(JSON.parse(line));
        } catch {
          this.nonJson.push(line);
        }
      }
    });
    this.exited = new Promise((resolve) => {
      this.child.on('exit', (code, signal) => {
        this.exitedAt = Date.now();
        resolve({ code, signal });
      });
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  summaries(): Rec[] {
    return this.lines.filter((l) => l['event'] === 'sweep_summary');
  }

  async waitFor(what: string, pred: (l: Rec) => boolean, timeoutMs = 20_000): Promise<Rec> {
    const t0 = Date.now();
    for (;;) {
      const hit = this.lines.find(pred);
      if (hit) return hit;
      if (!this.alive) throw new Error(`daemon exited while waiting for ${what}:\n${this.dump()}`);
      if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}:\n${this.dump()}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  async waitForSummaries(n: number, timeoutMs = 20_000): Promise<Rec[]> {
    await this.waitFor(`${n} sweep summaries`, () => this.summaries().length >= n, timeoutMs);
    return this.summaries();
  }

  dump(): string {
    return [...this.lines.slice(-30).map((l) => JSON.stringify(l)), ...this.nonJson.slice(-10)].join('\n');
  }
}

let T: string;
let home: string;
let root: string;
let procs: DaemonProc[] = [];
const now = Date.now();

beforeEach(() => {
  T = f.tempDir('daemon');
  home = path.join(T, '.murmur');
  root = path.join(T, 'app', '.murmur');
  fs.mkdirSync(home, { mode: 0o700 });
  procs = [];
});

afterEach(async () => {
  for (const p of procs) {
    if (p.alive) p.child.kill('SIGKILL');
    await p.exited;
  }
  f.rmrf(T);
});

function start(cfg: string): DaemonProc {
  const p = new DaemonProc(['--config', cfg], T);
  procs.push(p);
  return p;
}

/** `n` finished sessions, old enough for any policy, each with a few files. */
function manySessions(n: number, files = 2): string[] {
  const ids: string[] = [];
  fs.mkdirSync(root, { recursive: true });
  const t0 = now - 60 * f.DAY;
  for (let i = 0; i < n; i++) {
    const ms = t0 + i * 1000;
    const id = f.idAt('ses_', ms);
    const dir = path.join(root, id);
    fs.mkdirSync(path.join(dir, 'out'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'trace.jsonl'), f.traceText({ sessionId: id, startMs: ms, end: true }).text);
    for (let k = 1; k < files; k++) fs.writeFileSync(path.join(dir, 'out', `f${k}.txt`), 'x'.repeat(64));
    fs.utimesSync(path.join(dir, 'trace.jsonl'), ms / 1000, ms / 1000);
    ids.push(id);
  }
  return ids;
}

function sessionNames(): string[] {
  return fs.existsSync(root)
    ? fs
        .readdirSync(root)
        .filter((n) => n.startsWith('ses_'))
        .sort()
    : [];
}

function auditDirs(): string[] {
  const gc = path.join(home, 'gc');
  return fs.existsSync(gc)
    ? fs
        .readdirSync(gc)
        .filter((n) => n.startsWith('ses_'))
        .sort()
    : [];
}

function auditLines(id: string): Rec[] {
  return f.readLines(path.join(home, 'gc', id, 'trace.jsonl')).map((l) => JSON.parse(l));
}

/** Every session target named by any audit retention line. */
function auditedSessionTargets(): Set<string> {
  const out = new Set<string>();
  for (const id of auditDirs()) {
    for (const l of auditLines(id))
      if (l['event_type'] === 'retention' && l['store'] === 'sessions') for (const t of l['targets']) out.add(t);
  }
  return out;
}

/** Paths under `dir` whose name marks a temp file or a trash directory. */
function leftovers(dir: string): string[] {
  const out: string[] = [];
  const walk = (p: string) => {
    for (const e of fs.readdirSync(p, { withFileTypes: true })) {
      const full = path.join(p, e.name);
      if (e.name.endsWith('.tmp') || e.name.startsWith('.murmur-gc-trash.') || e.name === 'intent.jsonl')
        out.push(full);
      if (e.isDirectory() && !e.name.startsWith('.murmur-gc-trash.')) walk(full);
    }
  };
  if (fs.existsSync(dir)) walk(dir);
  return out;
}

function readState(): Rec {
  return JSON.parse(fs.readFileSync(path.join(home, 'gc', 'state.json'), 'utf8'));
}

function cli(args: string[]): f.CliResult {
  return f.runCli(args, T);
}

describe('murmur-gc daemon (real process, per-second schedule)', () => {
  it('sweeps at start and on schedule, logs one summary per sweep; status and history report it', async () => {
    // 4 finished sessions + 1 dead one (newest) with lost background work; keep 2.
    const finished = [20, 19, 18, 17].map((d) => f.idAt('ses_', now - d * f.DAY));
    for (const id of finished) f.writeSession(root, { sessionId: id, end: true, startMs: idMs(id) });
    const dead = f.idAt('ses_', now - 2 * f.DAY);
    const tsk = f.idAt('tsk_', now - 2 * f.DAY);
    f.writeSession(root, {
      sessionId: dead,
      startMs: now - 2 * f.DAY,
      tasks: [{ taskId: tsk, contextId: f.idAt('ctx_', now - 2 * f.DAY) }],
      detached: [{ workId: f.idAt('wrk_', now - 2 * f.DAY) }],
    });
    // records: one to truncate (10 messages, keep 3), one to remove by age
    const ctxBig = f.idAt('ctx_', now - 5 * f.DAY);
    const ctxOld = f.idAt('ctx_', now - 50 * f.DAY);
    f.writeRecord(home, 'shey', ctxBig, { capsule: 'shey', messages: 10 });
    f.writeRecord(home, 'shey', ctxOld, { capsule: 'shey', messages: 2, mtimeMs: now - 40 * f.DAY });
    // an older sweep's audit trace (10 days ago), with a torn last line: history --since 7d skips it
    const oldSweep = f.idAt('ses_', now - 10 * f.DAY);
    const oldTarget = f.idAt('ses_', now - 100 * f.DAY);
    writeAuditTrace(
      oldSweep,
      now - 10 * f.DAY,
      [{ store: 'sessions', reason: 'max_age', targets: [oldTarget] }],
      '{"event_type":"retention","event_id":"evt_',
    );

    const cfg = f.writeConfig(
      T,
      `schedule: "${EVERY_SECOND}"\nsessions:\n  - root: ${root}\n    retain: { max_sessions: 2 }\nrecords:\n  - capsule: shey\n    retain: { max_messages: 3, max_age: 30d }\n`,
    );
    const d = start(cfg);
    const [first] = await d.waitForSummaries(1);
    expect(first!['trigger']).toBe('start');
    expect(first!['outcome']).toBe('ok');
    expect(first!['level']).toBe(30);
    expect(first!['counts']).toMatchObject({ remove_session: 3, remove_record: 1, truncate_record: 1, shell_lost: 1 });
    expect(first!['bytes_freed']).toBeGreaterThan(0);
    expect(first!['errors']).toBe(0);
    expect(typeof first!['duration_ms']).toBe('number');
    const audit = first!['audit'] as string;
    expect(audit).toMatch(/^ses_[0-9a-f]{32}$/);
    expect(first!['msg']).toMatch(
      /^sweep ok: 3 sessions removed, 1 record removed, 1 record truncated, 1 lost command reconciled/,
    );
    const removed = finished.slice(0, 3);
    expect(sessionNames()).toEqual([finished[3]!, dead].sort());

    // the next sweeps come from the schedule, one summary each, nothing left to do
    const more = await d.waitForSummaries(3);
    expect(
      more.slice(1).every((s) => s['trigger'] === 'schedule' && s['outcome'] === 'ok' && s['audit'] === null),
    ).toBe(true);
    // no line carries record content
    expect(d.lines.some((l) => JSON.stringify(l).includes('message 1'))).toBe(false);

    // status while running: verified by pid + start time
    const st = f.json<Rec>(cli(['status', '--json', '--config', cfg]));
    expect(st['daemon']).toMatchObject({ running: true, pid: d.pid });
    expect(st['daemon']['start_time']).toMatch(/^\d+$/);
    expect(st['last_sweep']['outcome']).toBe('ok');
    expect(st['next_run_ms']).toBeGreaterThan(now);
    expect(st['stores']['sessions']).toMatchObject({ sessions: 2 });
    expect(st['stores']['sessions']['bytes']).toBeGreaterThan(0);
    expect(st['stores']['records']).toMatchObject({ stores: 1, records: 1 });
    expect(st['stores']['audit']['sessions']).toBe(2);
    const stText = cli(['status', '--config', cfg]);
    expect(stText.status).toBe(0);
    expect(stText.stdout).toContain(`daemon:     running, pid ${d.pid}`);
    expect(stText.stdout).toMatch(/next run: {3}\d{4}-/);
    expect(stText.stdout).toMatch(/^ {2}sessions +1 configured root +2 sessions +[\d.]+ (B|KiB|MiB)$/m);

    // history: both sweeps, per (store, reason), truncations with messages dropped, reconciled work
    const h = f.json<Rec>(cli(['history', '--json', '--config', cfg]));
    expect(h['sweeps'].map((s: Rec) => s['audit'])).toEqual([oldSweep, audit]);
    const mine = h['sweeps'][1];
    expect(mine['exit_status']).toBe('ok');
    expect(mine['retention']).toEqual([
      {
        store: 'sessions',
        reason: 'max_sessions',
        removed: 3,
        targets: [...removed].sort().reverse(),
        fate: { removed: 3, held: 0, purged: 0, restored: 0 },
      },
      {
        store: 'records',
        reason: 'max_age',
        removed: 1,
        targets: [ctxOld],
        fate: { removed: 1, held: 0, purged: 0, restored: 0 },
      },
      {
        store: 'records',
        reason: 'max_messages',
        removed: 1,
        targets: [ctxBig],
        messages_dropped: 7,
        messages_dropped_by_target: { [ctxBig]: 7 },
        fate: { removed: 1, held: 0, purged: 0, restored: 0 },
      },
    ]);
    expect(mine['reconciled']['tasks']).toBe(1);
    expect(h['sweeps'][0]['invalid_lines']).toBe(1); // the torn line, skipped
    expect(h['totals']).toMatchObject({
      sweeps: 2,
      sessions_removed: 4,
      records_removed: 1,
      records_truncated: 1,
      messages_dropped: 7,
      reconciled_tasks: 1,
    });
    const hText = cli(['history', '--config', cfg]).stdout;
    expect(hText).toContain('sessions/max_sessions: 3 sessions removed');
    expect(hText).toContain('records/max_messages: 1 record truncated, 7 messages dropped');
    expect(hText).toContain('reconciled lost background work: 1 session');

    const recent = f.json<Rec>(cli(['history', '--json', '--since', '7d', '--config', cfg]));
    expect(recent['sweeps'].map((s: Rec) => s['audit'])).toEqual([audit]);
    expect(cli(['history', '--since', '7x', '--config', cfg]).status).toBe(2);

    // --target: which sweep removed this, and why
    const t = f.json<Rec>(cli(['history', '--json', '--target', removed[0]!, '--config', cfg]));
    expect(t['matches']).toEqual([
      expect.objectContaining({
        audit: audit,
        store: 'sessions',
        reason: 'max_sessions',
        action: 'removed',
        exit_status: 'ok',
        line_removed: 3,
      }),
    ]);
    expect(t['sweeps'].map((s: Rec) => s['audit'])).toEqual([audit]);
    const tText = cli(['history', '--target', removed[0]!, '--config', cfg]).stdout;
    expect(tText).toContain(`removed by sweep ${audit}`);
    expect(tText).toContain('sessions/max_sessions');
    const tc = f.json<Rec>(cli(['history', '--json', '--target', ctxBig, '--config', cfg]));
    expect(tc['matches']).toEqual([
      expect.objectContaining({ audit: audit, action: 'truncated', reason: 'max_messages', line_messages_dropped: 7 }),
    ]);
    expect(f.json<Rec>(cli(['history', '--json', '--target', oldTarget, '--config', cfg]))['matches'][0]['audit']).toBe(
      oldSweep,
    );
    expect(cli(['history', '--target', 'ses_0000', '--config', cfg]).stdout).toContain('no sweep in the audit trail');

    // SIGTERM when idle: exit 0, state says stopped, status says not running
    d.child.kill('SIGTERM');
    expect((await d.exited).code).toBe(0);
    const st2 = f.json<Rec>(cli(['status', '--json', '--config', cfg]));
    expect(st2['daemon']['running']).toBe(false);
    expect(st2['next_run_ms']).toBeNull();
    expect(st2['last_sweep']['trigger']).toBe('schedule');
    expect(fs.statSync(path.join(home, 'gc', 'state.json')).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.join(home, 'gc')).mode & 0o777).toBe(0o700);
  });

  it('never overlaps sweeps under a slow sweep; a manual sweep meanwhile gets 75 (storage_busy)', async () => {
    const ids = manySessions(2500);
    const cfg = f.writeConfig(
      T,
      `schedule: "${EVERY_SECOND}"\nlog: { level: debug }\nmax_delete: { fraction: 1 }\nsessions:\n  - root: ${root}\n    retain: { max_sessions: 5 }\n`,
    );
    const d = start(cfg);
    await d.waitFor('removals under way', (l) => l['msg'] === 'session removed');
    const manual = await f.runCliAsync(['sweep', '--json', '--config', cfg], T);
    expect(manual.status, manual.stderr).toBe(75);
    expect(f.json<Rec>(manual)['error']['code']).toBe('storage_busy');

    const sums = await d.waitForSummaries(3, 40_000);
    const slow = sums[0]!;
    expect(slow['counts']['remove_session']).toBe(ids.length - 5);
    // the slow sweep spanned several schedule ticks, which were skipped, not run alongside
    expect(slow['duration_ms']).toBeGreaterThan(1200);
    expect(d.lines.some((l) => l['msg'] === 'sweep skipped: the previous sweep is still running')).toBe(true);
    const ordered = [...sums].sort((a, b) => a['started_ms'] - b['started_ms']);
    for (let i = 1; i < ordered.length; i++)
      expect(ordered[i]!['started_ms']).toBeGreaterThanOrEqual(ordered[i - 1]!['ended_ms']);
    // removal log lines of the slow sweep all fall inside it (no second sweep interleaved)
    const removals = d.lines.filter((l) => l['msg'] === 'session removed');
    expect(removals).toHaveLength(ids.length - 5);
    expect(removals.every((l) => l['time'] >= slow['started_ms'] && l['time'] <= slow['ended_ms'])).toBe(true);
    expect(auditDirs()).toHaveLength(1);
  });

  it('SIGTERM during a sweep of many items exits 0 within 10 s and leaves a consistent tree', async () => {
    const ids = manySessions(2000, 3);
    const cfg = f.writeConfig(
      T,
      `schedule: "${EVERY_SECOND}"\nlog: { level: debug }\nmax_delete: { fraction: 1 }\nsessions:\n  - root: ${root}\n    retain: { max_sessions: 1 }\n`,
    );
    const d = start(cfg);
    await d.waitFor('removals under way', (l) => l['msg'] === 'session removed');
    await d.waitFor('a few more removals', () => d.lines.filter((l) => l['msg'] === 'session removed').length >= 25);
    const sentAt = Date.now();
    d.child.kill('SIGTERM');
    const exit = await d.exited;
    const latency = d.exitedAt! - sentAt;
    console.log(`SIGTERM exit latency (mid-sweep): ${latency} ms`);
    expect(exit.code, d.dump()).toBe(0);
    expect(latency).toBeLessThan(10_000);

    // it stopped early: some sessions that the policy would remove are still there
    const left = sessionNames();
    expect(left.length).toBeGreaterThan(1);
    expect(left.length).toBeLessThan(ids.length);
    // every removed session is in an audit retention line; nothing half-done is left
    const audited = auditedSessionTargets();
    const gone = ids.filter((id) => !left.includes(id));
    expect(gone.length).toBeGreaterThan(0);
    for (const id of gone) expect(audited.has(id), `${id} removed but not audited`).toBe(true);
    for (const id of audited) expect(left.includes(id), `${id} audited but still present`).toBe(false);
    expect(leftovers(root)).toEqual([]);
    expect(leftovers(home)).toEqual([]);
    expect(fs.existsSync(path.join(home, 'gc', 'sweep.lock'))).toBe(false);
    // the sweep's audit trace is finished (failed: stopped early), the summary and state say aborted
    const [auditId] = auditDirs();
    const lines = auditLines(auditId!);
    expect(lines.at(-1)).toMatchObject({ event_type: 'session_end', exit_status: 'canceled' });
    const sum = d.summaries().at(-1)!;
    expect(sum).toMatchObject({ outcome: 'aborted', code: 'aborted', audit: auditId });
    expect(sum['counts']['remove_session']).toBe(gone.length);
    const state = readState();
    expect(state['last_sweep']).toMatchObject({ outcome: 'aborted', audit: auditId });
    expect(state['daemon']['stopped_ms']).toBeGreaterThan(0);
    expect(state['current_sweep']).toBeNull();
    expect(d.lines.at(-1)!['msg']).toBe('murmur-gc daemon stopped');
  });

  it('SIGHUP with a broken config keeps the old one; a valid one reschedules', async () => {
    // a corrupt state file is ignored and rewritten
    fs.mkdirSync(path.join(home, 'gc'), { mode: 0o700 });
    fs.writeFileSync(path.join(home, 'gc', 'state.json'), '{"version":1,"daemon":', { mode: 0o600 });
    const cfg = f.writeConfig(T, `schedule: "${EVERY_SECOND}"\n`);
    const d = start(cfg);
    await d.waitForSummaries(1);
    expect(d.lines.some((l) => l['code'] === 'invalid_line' && String(l['msg']).includes('state file'))).toBe(true);
    expect(readState()['daemon']['pid']).toBe(d.pid);
    // a second daemon for the same home refuses to start (75) and leaves the first one alone
    const second = await f.runCliAsync(['daemon', '--config', cfg], T);
    expect(second.status).toBe(75);
    expect(second.stderr).toContain(`another murmur-gc daemon (pid ${d.pid}) is running`);
    expect(readState()['daemon']['pid']).toBe(d.pid);

    fs.writeFileSync(cfg, `schedule: "not a cron"\nbogus_key: 1\n`);
    d.child.kill('SIGHUP');
    const bad = await d.waitFor('config_invalid', (l) => l['code'] === 'config_invalid');
    expect(bad['level']).toBe(50);
    expect(bad['msg']).toContain('previous configuration stays in force');
    // sweeps continue on the old per-second schedule
    const n = d.summaries().length;
    await d.waitForSummaries(n + 2, 10_000);
    expect(d.alive).toBe(true);

    // a valid config with another schedule is taken
    fs.writeFileSync(cfg, `schedule: "*/2 * * * * *"\nlog:\n  level: info\n`);
    d.child.kill('SIGHUP');
    const ok = await d.waitFor('reloaded', (l) => l['msg'] === 'configuration reloaded');
    expect(ok).toMatchObject({ schedule: '*/2 * * * * *', rescheduled: true });
    await d.waitFor('a sweep after the reload', (l) => l['event'] === 'sweep_summary' && l['time'] > ok['time']);
    expect(f.json<Rec>(cli(['status', '--json', '--config', cfg]))['daemon']).toMatchObject({
      running: true,
      schedule: '*/2 * * * * *',
    });
    d.child.kill('SIGTERM');
    expect((await d.exited).code).toBe(0);
  });

  it("a SIGKILLed daemon's debris is cleaned on the next start and reported as process_interrupted", async () => {
    const ids = manySessions(2000, 3);
    const ctx = f.idAt('ctx_', now - f.DAY);
    f.writeRecord(home, 'shey', ctx, { capsule: 'shey', messages: 3 });
    const cfg = f.writeConfig(
      T,
      `schedule: "${EVERY_SECOND}"\nlog: { level: debug }\nmax_delete: { fraction: 1 }\nsessions:\n  - root: ${root}\n    retain: { max_sessions: 1 }\n`,
    );
    const a = start(cfg);
    await a.waitFor('a few removals', () => a.lines.filter((l) => l['msg'] === 'session removed').length >= 25);
    a.child.kill('SIGKILL');
    await a.exited;
    // what the killed daemon left: its sweep lock, an unfinished audit with its intent log
    expect(fs.existsSync(path.join(home, 'gc', 'sweep.lock'))).toBe(true);
    const [killedAudit] = auditDirs();
    expect(fs.existsSync(path.join(home, 'gc', killedAudit!, 'intent.jsonl'))).toBe(true);
    // and, as if it had been mid-rewrite / mid-state-write, its temp files
    const recTemp = path.join(home, 'conversations', 'shey', ctx, `.conversation.jsonl.${a.pid}.1f2e3d4c.tmp`);
    fs.writeFileSync(recTemp, 'partial', { mode: 0o600 });
    const stateTemp = path.join(home, 'gc', `.state.json.${a.pid}.18c0ffee.tmp`);
    fs.writeFileSync(stateTemp, '{"ver', { mode: 0o600 });

    // the state file still names the killed pid: status must not believe it
    expect(readState()['daemon']).toMatchObject({ pid: a.pid, stopped_ms: null });
    const st = f.json<Rec>(cli(['status', '--json', '--config', cfg]));
    expect(st['daemon']).toMatchObject({ running: false, pid: a.pid });
    expect(st['daemon']['why']).toContain('killed');
    expect(st['current_sweep']).toBeNull();
    expect(cli(['status', '--config', cfg]).stdout).toContain('daemon:     not running');
    const h = f.json<Rec>(cli(['history', '--json', '--config', cfg]));
    expect(h['sweeps'][0]).toMatchObject({ audit: killedAudit, complete: false, intent_pending: true });

    const b = start(cfg);
    const [first] = await b.waitForSummaries(1, 30_000);
    expect(first!['trigger']).toBe('start');
    expect(first!['skipped_by_code']['process_interrupted']).toBeGreaterThanOrEqual(2); // dead holder's lock + the audit completed
    expect(first!['counts']['remove_debris']).toBeGreaterThanOrEqual(1); // the record temp file (and any trash dir)
    expect(b.lines.some((l) => l['code'] === 'process_interrupted' && l['path'] === stateTemp)).toBe(true);
    expect(b.lines.some((l) => l['code'] === 'process_interrupted' && l['path'] === recTemp)).toBe(true);
    expect(b.lines.some((l) => l['code'] === 'process_interrupted' && String(l['target']).endsWith('sweep.lock'))).toBe(
      true,
    );
    expect(fs.existsSync(recTemp)).toBe(false);
    expect(fs.existsSync(stateTemp)).toBe(false);

    // the killed sweep's audit was completed with what it had done; the new sweep finished the rest
    const killedLines = auditLines(killedAudit!);
    expect(killedLines.at(-1)).toMatchObject({ event_type: 'session_end', exit_status: 'canceled' });
    expect(killedLines.at(-1)!['duration_ms']).toBeGreaterThan(0); // it ran until it was killed, not 0 ms
    expect(sessionNames()).toEqual([ids.at(-1)!]);
    const audited = auditedSessionTargets();
    for (const id of ids.slice(0, -1)) expect(audited.has(id), `${id} removed but not audited`).toBe(true);
    expect(leftovers(root)).toEqual([]);

    b.child.kill('SIGTERM');
    expect((await b.exited).code).toBe(0);
    expect(leftovers(home)).toEqual([]); // (checked once b is gone: it writes its state every second)
    const hist = f.json<Rec>(cli(['history', '--json', '--config', cfg]));
    expect(hist['sweeps'].find((s: Rec) => s['audit'] === killedAudit)).toMatchObject({
      complete: true,
      exit_status: 'canceled',
      outcome: 'aborted',
      intent_pending: false,
    });
    expect(hist['totals']['sessions_removed']).toBe(ids.length - 1);
  });

  it('runs without a murmur home (nothing to sweep, nothing created); SIGTERM during a random delay exits at once', async () => {
    const absent = path.join(T, 'no-home-yet');
    const cfg = f.writeConfig(T, `home: ${absent}\nschedule: "${EVERY_SECOND}"\nrandom_delay: 1h\n`);
    const d = start(cfg);
    const [first] = await d.waitForSummaries(1);
    expect(first).toMatchObject({ trigger: 'start', outcome: 'ok', audit: null });
    expect(first!['message']).toContain('nothing to sweep');
    // the next scheduled sweep is now waiting out its random delay (up to 1 h)
    await new Promise((r) => setTimeout(r, 1500));
    expect(d.alive).toBe(true);
    const sentAt = Date.now();
    d.child.kill('SIGTERM');
    expect((await d.exited).code).toBe(0);
    expect(d.exitedAt! - sentAt).toBeLessThan(2000);
    expect(fs.existsSync(absent)).toBe(false);
  });

  it('status: a stale state file whose pid now belongs to another process says "not running"', () => {
    fs.mkdirSync(path.join(home, 'gc'), { mode: 0o700 });
    // pid = this test process (alive), but a start time it never had: a reused pid
    const state = {
      version: 1,
      updated_ms: now,
      daemon: {
        pid: process.pid,
        start_time: '1',
        started_ms: now - 1000,
        stopped_ms: null,
        config: null,
        schedule: '*/30 * * * *',
      },
      next_run_ms: now + 60_000,
      current_sweep: { started_ms: now - 500, trigger: 'schedule' },
      last_sweep: null,
    };
    fs.writeFileSync(path.join(home, 'gc', 'state.json'), JSON.stringify(state), { mode: 0o600 });
    const st = f.json<Rec>(cli(['status', '--json']));
    expect(st['daemon']).toMatchObject({ running: false, pid: process.pid });
    expect(st['next_run_ms']).toBeNull();
    expect(st['current_sweep']).toBeNull();
    // a home that does not exist: the daemon would still run; status says so plainly
    const r = cli(['status', '--home', path.join(T, 'nope')]);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('(does not exist)');
    const ready = spawnSync(process.execPath, [f.BIN, 'history', '--json', '--home', path.join(T, 'nope')], {
      env: f.cliEnv(T),
      encoding: 'utf8',
    });
    expect(JSON.parse(ready.stdout)).toMatchObject({ audit_root_exists: false, sweeps: [] });
  });
});

function idMs(id: string): number {
  return Number.parseInt(id.slice(4, 16), 16);
}

function writeAuditTrace(
  id: string,
  atMs: number,
  retention: { store: string; reason: string; targets: string[]; messages_dropped?: number }[],
  tail = '',
): void {
  const dir = path.join(home, 'gc', id);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const startId = f.idAt('evt_', atMs);
  const lines: Rec[] = [
    {
      event_type: 'session_start',
      event_id: startId,
      parent_id: null,
      session_id: id,
      timestamp: atMs,
      capsule_name: 'murmur-gc',
      capsule_version: '0.1.0',
      resumed_from: null,
      context_id: null,
    },
  ];
  for (const r of retention) {
    lines.push({
      event_type: 'retention',
      event_id: f.idAt('evt_', atMs + 1),
      parent_id: startId,
      session_id: id,
      timestamp: atMs + 1,
      store: r.store,
      reason: r.reason,
      removed: r.targets.length,
      targets: r.targets,
      ...(r.messages_dropped !== undefined ? { messages_dropped: r.messages_dropped } : {}),
    });
  }
  lines.push({
    event_type: 'session_end',
    event_id: f.idAt('evt_', atMs + 2),
    parent_id: startId,
    session_id: id,
    timestamp: atMs + 2,
    total_turns: 0,
    total_input_tokens: 0,
    total_output_tokens: 0,
    total_tool_calls: 0,
    total_shell_calls: 0,
    duration_ms: 2,
    exit_status: 'ok',
  });
  const file = path.join(dir, 'trace.jsonl');
  fs.writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n' + tail, { mode: 0o600 });
  fs.utimesSync(file, atMs / 1000, atMs / 1000);
  fs.utimesSync(dir, atMs / 1000, atMs / 1000);
}
