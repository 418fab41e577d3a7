// Memory is bounded whatever a capsule writes: sparse files of several GiB (`truncate -s`, which
// costs the capsule no disk) as traces, a conversation record and a running record, and dense
// lines over the line cap, cost a sweep and `conversation ls` under 300 MB peak RSS; each file
// too hostile to judge is reported with its code (`sparse_file`, `line_too_long`) and the run
// completes (exit 0). A watchdog kills a child whose RSS passes the ceiling, so a regression
// fails fast instead of exhausting the machine. What a sweep reads is bounded by what the disk
// holds, not by the files' sizes: 400 traces of 64 MiB − 4 KiB with nothing allocated, a 2 GiB
// trace 5 % allocated and a 64 MiB − 4 KiB record cost it a few MiB of reading (the bytes the
// process read, counted by the kernel), while a trace just written (whose blocks a filesystem may
// not have counted yet) is still read. (docs/limits.md)
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as f from '../helpers/fixtures.js';
import { runMeasured, PEAK_RSS_KB_JS } from '../helpers/measured.js';

const CEILING_KB = 300 * 1024;
const GiB = 1024 ** 3;
const now = Date.now();

let T: string;
let home: string;
let root: string;
let cfg: string;
const ses = {
  paddedSparse: f.idAt('ses_', now - 9 * f.DAY),
  sparse: f.idAt('ses_', now - 8 * f.DAY),
  denseNul: f.idAt('ses_', now - 7 * f.DAY),
  denseObject: f.idAt('ses_', now - 6 * f.DAY),
  plain: f.idAt('ses_', now - 5 * f.DAY),
};
let recordFile: string;

/** A dense line of `n` bytes: NULs (never JSON), or an object's start (may be JSON). */
function appendDense(file: string, n: number, first: string): void {
  const fd = fs.openSync(file, 'a');
  fs.writeSync(fd, first);
  const chunk = Buffer.alloc(1 << 20, first === '{' ? 0x20 : 0);
  for (let left = n; left > 0; left -= chunk.length) fs.writeSync(fd, chunk, 0, Math.min(chunk.length, left));
  fs.writeSync(fd, '\n');
  fs.closeSync(fd);
}

beforeAll(() => {
  T = f.tempDir('hostile-sizes');
  home = path.join(T, '.murmur');
  root = path.join(T, 'app', '.murmur');
  for (const id of Object.values(ses))
    f.writeSession(root, {
      sessionId: id,
      end: true,
      startMs: now - 10 * f.DAY,
      tasks: [{ taskId: f.idAt('tsk_', now), contextId: f.idAt('ctx_', now) }],
    });
  // a real trace padded by a hole, and a trace that is nothing but one
  fs.truncateSync(path.join(root, ses.paddedSparse, 'trace.jsonl'), 5 * GiB);
  fs.writeFileSync(path.join(root, ses.sparse, 'trace.jsonl'), '');
  fs.truncateSync(path.join(root, ses.sparse, 'trace.jsonl'), 3 * GiB);
  // dense lines over the 32 MiB line cap: NULs are read past; an object's start is not judged
  appendDense(path.join(root, ses.denseNul, 'trace.jsonl'), 40 << 20, '\0');
  appendDense(path.join(root, ses.denseObject, 'trace.jsonl'), 40 << 20, '{');
  for (const id of Object.values(ses)) {
    const m = (now - 10 * f.DAY) / 1000;
    fs.utimesSync(path.join(root, id, 'trace.jsonl'), m, m);
  }
  // an owned record with a max_messages policy, grown by a 4 GiB hole
  recordFile = f.writeRecord(home, 'notes', f.idAt('ctx_', now - 3 * f.DAY), { capsule: 'notes', messages: 20 }).file;
  fs.truncateSync(recordFile, 4 * GiB);
  f.writeRecord(home, 'notes', f.idAt('ctx_', now - 2 * f.DAY), { capsule: 'notes', messages: 20 });
  // a running record that is a 2 GiB hole
  fs.mkdirSync(path.join(home, 'running'), { recursive: true, mode: 0o700 });
  const running = path.join(home, 'running', `${ses.plain}.json`);
  fs.writeFileSync(
    running,
    f.runningRecordJson({ sessionId: ses.plain, pid: 1, processStart: 'x', workdir: path.join(root, ses.plain) }),
  );
  fs.truncateSync(running, 2 * GiB);
  cfg = f.writeConfig(
    T,
    [
      `home: ${home}`,
      'sessions:',
      `  - root: ${root}`,
      '    retain: { max_sessions: 100 }',
      'records:',
      '  - capsule: notes',
      '    retain: { max_messages: 5 }',
      '',
    ].join('\n'),
  );
}, 120_000);

afterAll(() => f.rmrf(T));

interface Measured {
  status: number | null;
  stdout: string;
  stderr: string;
  maxRssKb: number;
  killed: boolean;
}

/** Runs the CLI's main() in a child, killed as soon as its RSS passes the ceiling. */
function runWatched(args: string[]): Promise<Measured> {
  const wrapper = `
    const { main } = await import(${JSON.stringify(path.join(f.REPO, 'dist', 'cli', 'main.js'))});
    const code = await main(${JSON.stringify(args)});
    process.stderr.write('\\nMAXRSS_KB ' + ${PEAK_RSS_KB_JS} + '\\n');
    process.exitCode = code;
  `;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', wrapper], { env: f.cliEnv(T) });
    let stdout = '';
    let stderr = '';
    let killed = false;
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const watch = setInterval(() => {
      try {
        const rss = Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'latin1'))?.[1] ?? 0);
        if (rss > CEILING_KB) {
          killed = true;
          child.kill('SIGKILL');
        }
      } catch {
        // gone
      }
    }, 20);
    child.on('close', (status) => {
      clearInterval(watch);
      resolve({ status, stdout, stderr, killed, maxRssKb: Number(/MAXRSS_KB (\d+)/.exec(stderr)?.[1] ?? Infinity) });
    });
  });
}

interface Report {
  actions: { kind: string; target?: string }[];
  skipped: { target: string; code: string; detail: string }[];
  errors: { target: string; code: string }[];
}

describe('hostile file sizes', () => {
  it('a sweep over sparse traces, a sparse record and running record, and overlong lines stays under 300 MB and completes', async () => {
    const r = await runWatched(['--json', '--config', cfg]);
    expect(r.killed, `RSS passed ${CEILING_KB} KB`).toBe(false);
    expect(r.status, r.stderr.slice(-2000)).toBe(0);
    expect(r.maxRssKb).toBeLessThan(CEILING_KB);
    const rep = JSON.parse(r.stdout) as Report;
    expect(rep.errors).toEqual([]);
    const codes = (code: string) =>
      rep.skipped
        .filter((s) => s.code === code)
        .map((s) => s.target)
        .sort();
    const trace = (id: string) => path.join(root, id, 'trace.jsonl');
    expect(codes('sparse_file')).toEqual([trace(ses.paddedSparse), trace(ses.sparse), recordFile].sort());
    expect(codes('line_too_long')).toEqual([trace(ses.denseObject)]);
    expect(codes('running_record_invalid')).toEqual([path.join(home, 'running', `${ses.plain}.json`)]);
    for (const s of rep.skipped.filter((x) => x.code === 'sparse_file' || x.code === 'line_too_long'))
      expect(s.detail).toMatch(/\(\d+ ms spent\)$/);
    // the sparse record is listed, not counted, so never truncated; the other one is
    expect(rep.actions.filter((a) => a.kind === 'truncate_record')).toHaveLength(1);
    expect(fs.statSync(recordFile).size).toBe(4 * GiB);
  }, 300_000);

  it('conversation ls over a 4 GiB sparse record stays under 300 MB and names it', async () => {
    const r = await runWatched(['conversation', 'ls', '--json']);
    expect(r.killed, `RSS passed ${CEILING_KB} KB`).toBe(false);
    expect(r.maxRssKb).toBeLessThan(CEILING_KB);
    expect(r.stderr).toContain('sparse_file');
    expect(r.stderr).toContain(recordFile);
    const located = await runWatched(['conversation', 'ls', '--message', 'msg_none']);
    expect(located.killed, `RSS passed ${CEILING_KB} KB`).toBe(false);
    expect(located.stderr).toContain('sparse_file');
  }, 300_000);

  it("a session whose sparse trace was just written is live (judged by the trace's mtime, not its directory's)", async () => {
    const W = f.tempDir('hostile-live');
    try {
      const r = path.join(W, 'app', '.murmur');
      const id = f.idAt('ses_', now - 20 * f.DAY);
      const dir = f.writeSession(r, { sessionId: id, startMs: now - 20 * f.DAY });
      fs.truncateSync(path.join(dir, 'trace.jsonl'), 2 * GiB);
      const old = (now - 20 * f.DAY) / 1000;
      fs.utimesSync(dir, old, old);
      const c = f.writeConfig(W, `sessions:\n  - root: ${r}\n    retain: { max_age: 1d }\n`);
      const res = f.runCli(['--json', '--config', c], W);
      expect(res.status, res.stderr.slice(-2000)).toBe(0);
      const rep = JSON.parse(res.stdout) as Report;
      expect(rep.skipped.map((s) => s.code).sort()).toEqual(['live_session', 'sparse_file']);
      expect(fs.existsSync(dir)).toBe(true);
    } finally {
      f.rmrf(W);
    }
  }, 300_000);

  it('a record whose tail is a dense line over the cap is left as it is, reported line_too_long, and the run exits 0', async () => {
    const W = f.tempDir('hostile-tail');
    try {
      const h = path.join(W, '.murmur');
      const rec = f.writeRecord(h, 'notes', f.idAt('ctx_', now - 3 * f.DAY), { capsule: 'notes', messages: 20 }).file;
      appendDense(rec, 40 << 20, '\0');
      const size = fs.statSync(rec).size;
      const c = f.writeConfig(W, `home: ${h}\nrecords:\n  - capsule: notes\n    retain: { max_messages: 5 }\n`);
      const res = f.runCli(['--json', '--config', c], W);
      expect(res.status, res.stderr.slice(-2000)).toBe(0);
      const rep = JSON.parse(res.stdout) as Report;
      expect(rep.errors).toEqual([]);
      expect(rep.skipped.filter((s) => s.code === 'line_too_long').map((s) => s.target)).toHaveLength(1);
      expect(fs.statSync(rec).size).toBe(size);
    } finally {
      f.rmrf(W);
    }
  }, 300_000);

  it('conversation rm removes a 4 GiB sparse record (it is not counted, and goes all the same)', async () => {
    const ctx = path.basename(path.dirname(recordFile));
    const r = await runWatched(['conversation', 'rm', ctx, '--json']);
    expect(r.killed, `RSS passed ${CEILING_KB} KB`).toBe(false);
    expect(r.status, r.stderr.slice(-2000)).toBe(0);
    expect(fs.existsSync(path.dirname(recordFile))).toBe(false);
  }, 300_000);
});

describe('what a sweep reads is bounded by what the disk holds', () => {
  const MiB = 1024 * 1024;
  /** Far below what the files' sizes would cost (each case's are GiB): only what the process must read. */
  const READ_CAP = 64 * MiB;
  let W: string;
  let wHome: string;
  let wRoot: string;
  const old = (now - 10 * f.DAY) / 1000;
  const setup = (label: string, yaml = '') => {
    W = f.tempDir(label);
    wHome = path.join(W, '.murmur');
    wRoot = path.join(W, 'app', '.murmur');
    fs.mkdirSync(wHome, { mode: 0o700 });
    fs.mkdirSync(wRoot, { recursive: true });
    return f.writeConfig(W, `home: ${wHome}\nsessions:\n  - root: ${wRoot}\n${yaml}`);
  };
  const sparseSkips = (r: { stdout: string }) =>
    (JSON.parse(r.stdout) as Report).skipped.filter((x) => x.code === 'sparse_file').map((x) => x.target);

  it('400 traces of 64 MiB − 4 KiB with nothing allocated: not read, each reported sparse_file', async () => {
    const c = setup('hostile-400');
    try {
      const traces: string[] = [];
      for (let i = 0; i < 400; i++) {
        const dir = path.join(wRoot, f.idAt('ses_', now - 9 * f.DAY + i));
        fs.mkdirSync(dir);
        const t = path.join(dir, 'trace.jsonl');
        fs.writeFileSync(t, '');
        fs.truncateSync(t, 64 * MiB - 4096);
        fs.utimesSync(t, old, old);
        traces.push(t);
      }
      const r = await runMeasured(['--json', '--dry-run', '--config', c], W, CEILING_KB);
      expect(r.status, r.stderr.slice(-2000)).toBe(0);
      expect(sparseSkips(r).sort()).toEqual(traces.sort());
      expect(r.readBytes).toBeLessThan(READ_CAP);
    } finally {
      f.rmrf(W);
    }
  }, 300_000);

  it('a 2 GiB trace with 5 % of it allocated: not read (under 1 in 16), reported sparse_file', async () => {
    const c = setup('hostile-ratio');
    try {
      const id = f.idAt('ses_', now - 9 * f.DAY);
      const t = f.writeSession(wRoot, { sessionId: id, startMs: now - 10 * f.DAY, end: true });
      const trace = path.join(t, 'trace.jsonl');
      // 1 MiB of real lines every 20 MiB
      const line =
        JSON.stringify({
          event_type: 'inference',
          event_id: f.idAt('evt_', now),
          session_id: id,
          timestamp: now,
          text: 'y'.repeat(200),
        }) + '\n';
      const chunk = Buffer.from(line.repeat(Math.floor(MiB / line.length)));
      const fd = fs.openSync(trace, 'r+');
      for (let at = 20 * MiB; at < 2048 * MiB; at += 20 * MiB) fs.writeSync(fd, chunk, 0, chunk.length, at);
      fs.ftruncateSync(fd, 2048 * MiB);
      fs.closeSync(fd);
      fs.utimesSync(trace, old, old);
      const r = await runMeasured(['--json', '--dry-run', '--config', c], W, CEILING_KB);
      expect(r.status, r.stderr.slice(-2000)).toBe(0);
      expect(sparseSkips(r)).toEqual([trace]);
      expect(r.readBytes).toBeLessThan(READ_CAP);
    } finally {
      f.rmrf(W);
    }
  }, 300_000);

  it('a record of 64 MiB − 4 KiB that is a hole: neither counted nor truncated, by the sweep and conversation ls alike', async () => {
    const c = setup('hostile-record', 'records:\n  - capsule: notes\n    retain: { max_messages: 5 }\n');
    try {
      const rec = f.writeRecord(wHome, 'notes', f.idAt('ctx_', now - 3 * f.DAY), {
        capsule: 'notes',
        messages: 20,
      }).file;
      fs.truncateSync(rec, 64 * MiB - 4096);
      fs.utimesSync(rec, old, old);
      const r = await runMeasured(['--json', '--config', c], W, CEILING_KB);
      expect(r.status, r.stderr.slice(-2000)).toBe(0);
      expect(sparseSkips(r)).toEqual([rec]);
      expect((JSON.parse(r.stdout) as Report).actions.filter((a) => a.kind === 'truncate_record')).toEqual([]);
      expect(fs.statSync(rec).size).toBe(64 * MiB - 4096);
      expect(r.readBytes).toBeLessThan(READ_CAP);
      const ls = await runMeasured(['conversation', 'ls', '--json'], W, CEILING_KB);
      expect(ls.stderr).toContain('sparse_file');
      expect(ls.readBytes).toBeLessThan(READ_CAP);
    } finally {
      f.rmrf(W);
    }
  }, 300_000);

  it('a trace just written that looks sparse is read (its blocks may not be counted yet): its live session keeps its context', async () => {
    const c = setup('hostile-fresh', 'records:\n  - capsule: notes\n    retain: { max_messages: 1 }\n');
    try {
      const ctx = f.idAt('ctx_', now - 3 * f.DAY);
      f.writeRecord(wHome, 'notes', ctx, { capsule: 'notes', messages: 20 });
      const id = f.idAt('ses_', now - 5 * 60_000);
      const dir = f.writeSession(wRoot, { sessionId: id, startMs: now - 5 * 60_000, contextId: ctx, mtimeMs: now });
      fs.truncateSync(path.join(dir, 'trace.jsonl'), 8 * MiB); // grown by a hole: 8 MiB, one block on disk
      const r = await runMeasured(['--json', '--config', c], W, CEILING_KB);
      expect(r.status, r.stderr.slice(-2000)).toBe(0);
      const rep = JSON.parse(r.stdout) as Report;
      expect(sparseSkips(r)).toEqual([]);
      expect(rep.skipped.filter((x) => x.code === 'live_context').map((x) => x.target)).toEqual([`notes/${ctx}`]);
      expect(rep.actions.filter((a) => a.kind === 'truncate_record')).toEqual([]);
    } finally {
      f.rmrf(W);
    }
  }, 300_000);
});
