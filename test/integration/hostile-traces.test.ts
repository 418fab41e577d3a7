// What a sweep keeps of a trace is bounded whatever the trace holds (docs/limits.md): a capsule
// writes its `shell_detached` lines, `command` strings of 20 MiB and tens of thousands of work
// ids included. Through the built CLI: a live session's 25 × 20 MiB commands cost a sweep and
// `status` under 300 MB peak RSS and leave `<home>/gc` under 64 MiB; reconciling 20 MiB commands
// writes them back byte for byte while `--json` shows them bounded; a trace of 50 000
// unaccounted work ids (and a sweep of 20 480) is reconciled a capped batch per sweep, the rest
// said to wait (`lost_work_deferred`) and taken by the next sweep.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as f from '../helpers/fixtures.js';
import { duBytes, runMeasured } from '../helpers/measured.js';

const CEILING_KB = 300 * 1024;
const GC_CAP = 64 * 1024 * 1024;
const MiB = 1024 * 1024;
/** docs/limits.md: unaccounted work reconciled per trace and per sweep */
const PER_TRACE = 4096;
const PER_SWEEP = 16_384;
const now = Date.now();

let T: string;
let home: string;
let root: string;
let cfg: string;
beforeEach(() => {
  T = f.tempDir('hostile-traces');
  home = path.join(T, '.murmur');
  root = path.join(T, 'app', '.murmur');
  fs.mkdirSync(home, { mode: 0o700 });
  fs.mkdirSync(root, { recursive: true });
  cfg = f.writeConfig(T, `home: ${home}\nsessions:\n  - root: ${root}\n`);
});
afterEach(() => f.rmrf(T));

interface Report {
  actions: Record<string, unknown>[];
  skipped: { target: string; code: string; detail: string }[];
  errors: { target: string; code: string }[];
}

/** A session whose trace is a session_start and these detached lines, written through one descriptor. */
function session(
  id: string,
  startMs: number,
  detached: { workId: string; binary: string; command: string; atMs: number }[],
  mtimeMs: number,
): { trace: string; startId: string } {
  const dir = path.join(root, id);
  fs.mkdirSync(dir);
  const trace = path.join(dir, 'trace.jsonl');
  const startId = f.idAt('evt_', startMs);
  const fd = fs.openSync(trace, 'w');
  fs.writeSync(
    fd,
    JSON.stringify({
      event_type: 'session_start',
      event_id: startId,
      parent_id: null,
      session_id: id,
      timestamp: startMs,
      capsule_name: 'demo',
      capsule_version: '1',
      context_id: null,
    }) + '\n',
  );
  let batch: string[] = [];
  for (const d of detached) {
    batch.push(
      JSON.stringify({
        event_type: 'shell_detached',
        event_id: f.idAt('evt_', d.atMs),
        parent_id: startId,
        session_id: id,
        timestamp: d.atMs,
        turn: 0,
        task_id: null,
        work_id: d.workId,
        binary: d.binary,
        command: d.command,
        grace_ms: 10000,
      }) + '\n',
    );
    if (batch.length >= 1000 || d.command.length > MiB) {
      fs.writeSync(fd, batch.join(''));
      batch = [];
    }
  }
  fs.writeSync(fd, batch.join(''));
  fs.closeSync(fd);
  fs.utimesSync(trace, mtimeMs / 1000, mtimeMs / 1000);
  return { trace, startId };
}

function measuredOk(r: { killed: boolean; status: number | null; stderr: string; maxRssKb: number }): void {
  expect(r.killed, `RSS passed ${CEILING_KB} KB`).toBe(false);
  expect(r.status, r.stderr.slice(-2000)).toBe(0);
  expect(r.maxRssKb).toBeLessThan(CEILING_KB);
}

const lostOf = (rep: Report) => rep.actions.filter((a) => a['kind'] === 'shell_lost');

describe('a trace holding 20 MiB commands', () => {
  it('a live session with 25 of them: two sweeps and status stay under 300 MB, <home>/gc under 64 MiB', async () => {
    const t0 = now - 3_600_000;
    const id = f.idAt('ses_', t0);
    const command = 'x'.repeat(20 * MiB);
    session(
      id,
      t0,
      Array.from({ length: 25 }, (_, i) => ({
        workId: f.idAt('wrk_', t0 + i),
        binary: '/bin/sh',
        command,
        atMs: t0 + i,
      })),
      now,
    );
    for (let sweep = 1; sweep <= 2; sweep++) {
      const r = await runMeasured(['--json', '--config', cfg], T, CEILING_KB);
      measuredOk(r);
      const rep = JSON.parse(r.stdout) as Report;
      expect(rep.errors).toEqual([]);
      expect(lostOf(rep)).toEqual([]);
      expect(duBytes(path.join(home, 'gc'))).toBeLessThan(GC_CAP);
    }
    // the cache holds ids and offsets, not the commands
    expect(fs.statSync(path.join(home, 'gc', 'trace-cache.json')).size).toBeLessThan(64 * 1024);
    const st = await runMeasured(['status', '--json', '--config', cfg], T, CEILING_KB);
    measuredOk(st);
  }, 240_000);

  it('a dead session: shell_lost repeats each command byte for byte; --json and the dry run show them bounded', async () => {
    const t0 = now - 2 * f.DAY;
    const id = f.idAt('ses_', t0);
    const works = ['a', 'b', 'c'].map((c, i) => ({
      workId: f.idAt('wrk_', t0 + i),
      binary: i === 2 ? `/opt/${'é'.repeat(MiB)}/sh` : '/bin/sh',
      command: `${c}${i}-head ${c.repeat(20 * MiB)} tail-${c}${i}`,
      atMs: t0 + i,
    }));
    const { trace, startId } = session(id, t0, works, t0);
    const before = fs.statSync(trace).size;
    const dry = await runMeasured(['--json', '--dry-run', '--config', cfg], T, CEILING_KB);
    measuredOk(dry);
    expect(fs.statSync(trace).size).toBe(before);
    const real = await runMeasured(['--json', '--config', cfg], T, CEILING_KB);
    measuredOk(real);
    for (const r of [dry, real]) {
      expect(r.stdout.length).toBeLessThan(64 * 1024);
      const lost = lostOf(JSON.parse(r.stdout) as Report);
      expect(lost.map((a) => a['work_id'])).toEqual(works.map((w) => w.workId));
      lost.forEach((a, i) => {
        const w = works[i]!;
        const command = a['command'] as string;
        expect(a['command_bytes']).toBe(Buffer.byteLength(w.command));
        expect(a['binary_bytes']).toBe(Buffer.byteLength(w.binary));
        expect(command.length).toBeLessThan(130);
        expect(command.startsWith(w.command.slice(0, 60))).toBe(true);
        expect(command.endsWith(w.command.slice(-30))).toBe(true);
        expect(command).toContain(`…[${Buffer.byteLength(w.command)} bytes]…`);
        expect(a['binary']).toBe(
          i === 2 ? `/opt/${'é'.repeat(55)}…[${Buffer.byteLength(w.binary)} bytes]…${'é'.repeat(27)}/sh` : '/bin/sh',
        );
      });
    }
    // what reached the trace: one shell_lost per work, in the runtime's field order, the commands whole
    const text = fs.readFileSync(trace);
    const added = text
      .subarray(before)
      .toString('utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(added.map((l) => Object.keys(l))).toEqual(
      works.map(() => [
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
      ]),
    );
    expect(
      added.map((l) => [
        l['event_type'],
        l['parent_id'],
        l['session_id'],
        l['work_id'],
        l['binary'],
        l['command'],
        l['detached_at_ms'],
      ]),
    ).toEqual(works.map((w) => ['shell_lost', startId, id, w.workId, w.binary, w.command, w.atMs]));
  }, 240_000);
});

describe('a trace holding tens of thousands of unaccounted work ids', () => {
  it('50 000: each sweep marks the next 4 096 in byte order and says the rest wait; memory and <home>/gc stay small', async () => {
    const t0 = now - 2 * f.DAY;
    const id = f.idAt('ses_', t0);
    const works = Array.from({ length: 50_000 }, (_, i) => ({
      workId: f.idAt('wrk_', t0 + i),
      binary: '/usr/bin/sleep',
      command: `sleep ${600 + i}`,
      atMs: t0 + i,
    }));
    const { trace } = session(id, t0, works, t0);
    const ids = works.map((w) => w.workId).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    const seen: string[] = [];
    for (let sweep = 1; sweep <= 2; sweep++) {
      const r = await runMeasured(['--json', '--config', cfg], T, CEILING_KB);
      measuredOk(r);
      const rep = JSON.parse(r.stdout) as Report;
      expect(rep.errors).toEqual([]);
      const marked = lostOf(rep).map((a) => a['work_id'] as string);
      expect(marked).toEqual(ids.slice((sweep - 1) * PER_TRACE, sweep * PER_TRACE));
      seen.push(...marked);
      expect(rep.skipped.filter((s) => s.code === 'lost_work_deferred').map((s) => s.target)).toEqual([
        `${root}/${id}`,
      ]);
      expect(duBytes(path.join(home, 'gc'))).toBeLessThan(GC_CAP);
      // (its entry, 50 000 work ids for the logs beside it, is over the entry cap: not cached, read again)
      const cache = path.join(home, 'gc', 'trace-cache.json');
      expect(fs.existsSync(cache) ? fs.statSync(cache).size : 0).toBeLessThan(MiB);
    }
    const lostLines = fs
      .readFileSync(trace, 'utf8')
      .split('\n')
      .filter((l) => l.includes('"shell_lost"'));
    expect(lostLines.map((l) => (JSON.parse(l) as { work_id: string }).work_id)).toEqual(seen);
    expect(new Set(seen).size).toBe(2 * PER_TRACE);
  }, 240_000);

  it('20 480 over five traces: one sweep marks 16 384, the next the rest', async () => {
    const t0 = now - 2 * f.DAY;
    const all: string[] = [];
    for (let s = 0; s < 5; s++) {
      const at = t0 + s * 100_000;
      const works = Array.from({ length: PER_TRACE }, (_, i) => ({
        workId: f.idAt('wrk_', at + i),
        binary: '/bin/true',
        command: 'true',
        atMs: at + i,
      }));
      all.push(...works.map((w) => w.workId));
      session(f.idAt('ses_', at), at, works, t0);
    }
    const first = await runMeasured(['--json', '--config', cfg], T, CEILING_KB);
    measuredOk(first);
    const rep1 = JSON.parse(first.stdout) as Report;
    expect(lostOf(rep1)).toHaveLength(PER_SWEEP);
    expect(rep1.skipped.filter((s) => s.code === 'lost_work_deferred')).toHaveLength(1);
    const second = await runMeasured(['--json', '--config', cfg], T, CEILING_KB);
    measuredOk(second);
    const rep2 = JSON.parse(second.stdout) as Report;
    expect(rep2.skipped.filter((s) => s.code === 'lost_work_deferred')).toEqual([]);
    expect([...lostOf(rep1), ...lostOf(rep2)].map((a) => a['work_id']).sort()).toEqual([...all].sort());
  }, 240_000);

  it('a trace naming 200 000 context ids and 200 000 work ids is not judged (too_many_ids): read only up to the cap, under 300 MB', async () => {
    const t0 = now - 2 * f.DAY;
    const id = f.idAt('ses_', t0);
    const dir = path.join(root, id);
    fs.mkdirSync(dir);
    const trace = path.join(dir, 'trace.jsonl');
    const fd = fs.openSync(trace, 'w');
    for (let b = 0; b < 20; b++) {
      const lines: string[] = [];
      for (let i = 0; i < 10_000; i++) {
        const k = b * 10_000 + i;
        lines.push(
          JSON.stringify({
            event_type: 'task_start',
            task_id: f.idAt('tsk_', t0 + k),
            context_id: f.idAt('ctx_', t0 + k),
            trust: 'trusted',
          }),
        );
        lines.push(JSON.stringify({ event_type: 'shell_completed', work_id: f.idAt('wrk_', t0 + k) }));
      }
      fs.writeSync(fd, lines.join('\n') + '\n');
    }
    fs.closeSync(fd);
    fs.utimesSync(trace, t0 / 1000, t0 / 1000);
    const r = await runMeasured(['--json', '--config', cfg], T, CEILING_KB);
    measuredOk(r);
    const rep = JSON.parse(r.stdout) as Report;
    expect(rep.skipped.filter((s) => s.code === 'too_many_ids').map((s) => s.target)).toEqual([trace]);
    // it stopped at the cap: about the first 100 000 context ids' lines, of 200 000
    expect(r.readBytes).toBeLessThan(fs.statSync(trace).size * 0.75);
    expect(duBytes(path.join(home, 'gc'))).toBeLessThan(GC_CAP);
  }, 240_000);
});
