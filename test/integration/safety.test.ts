// Safety properties of the sweep (docs/design.md §4, §5), through the built CLI.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import * as f from '../helpers/fixtures.js';
import { requirement } from '../helpers/requirements.js';

interface Report {
  actions: Record<string, unknown>[];
  skipped: { target: string; code: string; detail: string }[];
  errors: { target: string; code: string; detail: string }[];
  audit: string | null;
}

let T: string;
let home: string;
let root: string;
const now = Date.now();

beforeEach(() => {
  T = f.tempDir('safety');
  home = path.join(T, '.murmur');
  root = path.join(T, 'app', '.murmur');
});
afterEach(() => f.rmrf(T));

/** A canary tree outside the home and the roots; every test asserts it is untouched. */
function makeCanary(): { dir: string; file: string; snapshot: () => Record<string, string> } {
  const dir = path.join(T, 'canary');
  fs.mkdirSync(path.join(dir, 'ses_' + '0'.repeat(12)), { recursive: true });
  fs.writeFileSync(path.join(dir, 'precious.txt'), 'do not touch');
  fs.chmodSync(path.join(dir, 'precious.txt'), 0o644);
  fs.writeFileSync(path.join(dir, 'conversation.jsonl'), f.recordText({ capsule: 'shey', messages: 50 }).text);
  fs.chmodSync(path.join(dir, 'conversation.jsonl'), 0o644);
  fs.writeFileSync(
    path.join(dir, 'trace.jsonl'),
    f.traceText({ sessionId: 'ses_canary', detached: [{ workId: 'wrk_canary' }] }).text,
  );
  fs.chmodSync(dir, 0o755);
  return { dir, file: path.join(dir, 'precious.txt'), snapshot: () => f.snapshotTree(dir) };
}

describe('planted symlinks', () => {
  it('a symlink to a canary outside the home survives every policy, and nothing is done through it', () => {
    const canary = makeCanary();
    const before = canary.snapshot();
    // sessions root: a ses_ link, a link inside a condemned session, a session whose trace is a link
    fs.mkdirSync(root, { recursive: true });
    fs.symlinkSync(canary.dir, path.join(root, f.idAt('ses_', now - 90 * f.DAY)));
    const doomed = f.writeSession(root, { sessionId: f.idAt('ses_', now - 80 * f.DAY), end: true });
    fs.symlinkSync(canary.dir, path.join(doomed, 'blobs-link'));
    fs.symlinkSync(canary.file, path.join(doomed, 'file-link'));
    const linkedTrace = path.join(root, f.idAt('ses_', now - 70 * f.DAY));
    fs.mkdirSync(linkedTrace);
    fs.symlinkSync(path.join(canary.dir, 'trace.jsonl'), path.join(linkedTrace, 'trace.jsonl'));
    // records: a store link, a context link, a record-file link
    fs.mkdirSync(path.join(home, 'conversations', 'shey'), { recursive: true });
    fs.symlinkSync(canary.dir, path.join(home, 'conversations', 'linked-store'));
    fs.symlinkSync(canary.dir, path.join(home, 'conversations', 'shey', 'ctx_link'));
    fs.mkdirSync(path.join(home, 'conversations', 'shey', 'ctx_file'));
    fs.symlinkSync(
      path.join(canary.dir, 'conversation.jsonl'),
      path.join(home, 'conversations', 'shey', 'ctx_file', 'conversation.jsonl'),
    );
    // running/: a link named like a record; state/: a link to the canary dir
    fs.mkdirSync(path.join(home, 'running'), { recursive: true });
    fs.symlinkSync(canary.file, path.join(home, 'running', 'ses_x.json'));
    fs.mkdirSync(path.join(home, 'state'));
    fs.symlinkSync(canary.dir, path.join(home, 'state', 'store'));
    const cfg = f.writeConfig(
      T,
      `sessions:\n  - root: ${root}\n    retain: { max_sessions: 1, max_age: 1s }\nrecords:\n  - capsule: shey\n    retain: { max_messages: 1, max_age: 1s }\n  - capsule: shey\n    store: linked-store\n    retain: { max_messages: 1, max_age: 1s }\n`,
    );
    for (const args of [['--dry-run', '--json'], ['--json'], ['--json']]) {
      const r = f.runCli([...args, '--config', cfg], T);
      expect([0, 1]).toContain(r.status);
      f.json<Report>(r);
      expect(canary.snapshot()).toEqual(before);
    }
    expect(fs.existsSync(doomed)).toBe(false); // the session holding links was removed (links as links)
    expect(fs.lstatSync(path.join(home, 'conversations', 'shey', 'ctx_link')).isSymbolicLink()).toBe(true);
  });

  it('a sessions root that is itself a symlink is not swept', () => {
    const canary = makeCanary();
    const before = canary.snapshot();
    fs.mkdirSync(path.dirname(root), { recursive: true });
    fs.symlinkSync(canary.dir, root);
    const cfg = f.writeConfig(T, `sessions:\n  - root: ${root}\n    retain: { max_sessions: 1, max_age: 1s }\n`);
    fs.mkdirSync(home);
    const rep = f.json<Report>(f.runCli(['--json', '--config', cfg], T));
    expect(rep.skipped).toContainEqual(expect.objectContaining({ target: root, code: 'symlink' }));
    expect(canary.snapshot()).toEqual(before);
  });
});

describe('special files', () => {
  it('a FIFO named trace.jsonl or conversation.jsonl does not hang the sweep', async () => {
    const ses = f.idAt('ses_', now - 90 * f.DAY);
    fs.mkdirSync(path.join(root, ses), { recursive: true });
    execFileSync('mkfifo', [path.join(root, ses, 'trace.jsonl')]);
    const ctx = path.join(home, 'conversations', 'shey', 'ctx_fifo');
    fs.mkdirSync(ctx, { recursive: true });
    execFileSync('mkfifo', [path.join(ctx, 'conversation.jsonl')]);
    const cfg = f.writeConfig(
      T,
      `sessions:\n  - root: ${root}\nrecords:\n  - capsule: shey\n    retain: { max_messages: 1, max_age: 1s }\n`,
    );
    const t0 = Date.now();
    const r = await f.runCliAsync(['--json', '--config', cfg], T);
    expect(Date.now() - t0).toBeLessThan(20_000);
    expect([0, 1]).toContain(r.status);
    const rep = f.json<Report>(r);
    expect(rep.skipped).toContainEqual(expect.objectContaining({ code: 'not_regular' }));
    expect(fs.lstatSync(path.join(ctx, 'conversation.jsonl')).isFIFO()).toBe(true);
  });
});

const tmpfs = requirement('tmpfs boundary tests', ['root', 'tmpfs', 'cmd:mount', 'cmd:umount']);
describe.runIf(tmpfs.run)('filesystem boundaries and failures (tmpfs)', () => {
  beforeAll(() => tmpfs.check());
  afterEach(() => {
    // Unmount whatever is still mounted under this test's dir (a mount may have moved with a rename).
    const mine = fs
      .readFileSync('/proc/self/mounts', 'utf8')
      .split('\n')
      .map((l) => l.split(' ')[1] ?? '')
      .filter((m) => m.startsWith(T + '/'))
      .sort()
      .reverse();
    for (const m of mine) spawnSync('umount', ['-l', m]);
  });
  function mountTmpfs(at: string, size: string): void {
    fs.mkdirSync(at, { recursive: true });
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', at]);
  }

  it('never crosses a mount inside a condemned session; the mounted files survive', () => {
    const ses = f.idAt('ses_', now - 90 * f.DAY);
    const sdir = f.writeSession(root, { sessionId: ses, end: true });
    const mnt = path.join(sdir, 'zz-mnt');
    mountTmpfs(mnt, '1m');
    fs.writeFileSync(path.join(mnt, 'other-fs.txt'), 'on another filesystem');
    const cfg = f.writeConfig(T, `sessions:\n  - root: ${root}\n    retain: { max_age: 1d }\n`);
    const r = f.runCli(['--json', '--config', cfg], T);
    const rep = f.json<Report>(r);
    expect(r.status).toBe(1);
    expect(rep.errors).toContainEqual(expect.objectContaining({ code: 'cross_device' }));
    // What is left is moved aside and reported once: later sweeps do not fail for it.
    const kept = fs.readdirSync(root).find((n) => n.startsWith('.murmur-gc-kept.'));
    expect(kept).toBeDefined();
    expect(fs.readFileSync(path.join(root, kept!, 'zz-mnt', 'other-fs.txt'), 'utf8')).toBe('on another filesystem');
    const again = f.runCli(['--json', '--config', cfg], T);
    expect(f.json<Report>(again).errors).toEqual([]);
    expect(again.status).toBe(0);
    expect(fs.readFileSync(path.join(root, kept!, 'zz-mnt', 'other-fs.txt'), 'utf8')).toBe('on another filesystem');
  });

  it('a shell_lost line that cannot be written is not reported, and a later sweep reports it', () => {
    const small = path.join(T, 'small');
    mountTmpfs(small, '64k');
    const sroot = path.join(small, '.murmur');
    const ses = f.idAt('ses_', now - 2 * f.DAY);
    const w = f.idAt('wrk_', now - 2 * f.DAY);
    // Pad the trace to exactly one page, so any append needs a page the full filesystem lacks.
    const base = f.traceText({ sessionId: ses, end: true, detached: [{ workId: w }] }).text;
    const pad = '{"event_type":"padding","x":"' + 'p'.repeat(4096 - base.length - 32) + '"}\n';
    const sdir = f.writeSession(sroot, { sessionId: ses, end: true, detached: [{ workId: w }], extra: pad });
    expect(fs.statSync(path.join(sdir, 'trace.jsonl')).size).toBe(4096);
    const filler = path.join(small, 'filler');
    const fd = fs.openSync(filler, 'w');
    try {
      for (;;) fs.writeSync(fd, Buffer.alloc(4096, 1));
    } catch {
      // ENOSPC: the filesystem is full
    }
    fs.closeSync(fd);
    const cfg = f.writeConfig(T, `sessions:\n  - root: ${sroot}\n`);
    fs.mkdirSync(home, { recursive: true });
    const first = f.json<Report>(f.runCli(['--json', '--config', cfg], T));
    expect(first.actions.filter((a) => a['kind'] === 'shell_lost')).toEqual([]);
    expect(first.errors.some((e) => e.code === 'io_error' && e.detail.includes(w))).toBe(true);
    fs.rmSync(filler);
    // The failed write still bumped the trace's mtime (the kernel updates it before allocating),
    // which makes the session look live for a minute; age it as the next scheduled sweep would see it.
    const old = (now - 2 * f.DAY) / 1000;
    fs.utimesSync(path.join(sdir, 'trace.jsonl'), old, old);
    const second = f.json<Report>(f.runCli(['--json', '--config', cfg], T));
    expect(second.actions.filter((a) => a['kind'] === 'shell_lost').map((a) => a['work_id'])).toEqual([w]);
    const lines = f.readLines(path.join(sdir, 'trace.jsonl'));
    const lost = lines.filter((l) => l.includes('"shell_lost"'));
    expect(lost).toHaveLength(1);
    expect((JSON.parse(lost[0]!) as { work_id: string }).work_id).toBe(w);
  });
});

describe('concurrent writers', () => {
  // The writer behaves like the runtime: open(O_APPEND), one write per line, close. It pauses
  // `pauseUs` between lines (0 = as fast as it can: far beyond any runtime).
  const writerScript = `
    const fs = require('node:fs');
    const [file, ms, pauseUs] = [process.argv[1], Number(process.argv[2]), Number(process.argv[3])];
    const sab = new Int32Array(new SharedArrayBuffer(4));
    let i = 0;
    const end = Date.now() + ms;
    while (Date.now() < end) {
      const id = 'msg_' + (Date.now()).toString(16).padStart(12, '0') + 'f' + String(i).padStart(19, '0');
      const fd = fs.openSync(file, 'a');
      fs.writeSync(fd, JSON.stringify({ role: 'user', content: 'w' + i, id }) + '\\n');
      fs.closeSync(fd);
      i++;
      if (pauseUs > 0) Atomics.wait(sab, 0, 0, pauseUs / 1000);
    }
    process.stdout.write(String(i));
  `;

  async function truncateWhileWriting(
    pauseUs: number,
  ): Promise<{ total: number; truncations: number; lines: string[]; announcedReorder: boolean }> {
    const r = f.writeRecord(home, 'shey', 'ctx_busy', { capsule: 'shey', messages: 2000 });
    const cfg = f.writeConfig(T, `records:\n  - capsule: shey\n    retain: { max_messages: 500 }\n`);
    const writer = spawn(process.execPath, ['-e', writerScript, r.file, '6000', String(pauseUs)]);
    let written = '';
    writer.stdout.on('data', (d: Buffer) => (written += d.toString()));
    const writerDone = new Promise<void>((resolve) => writer.on('close', () => resolve()));
    let truncations = 0;
    let announcedReorder = false;
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline) {
      const res = await f.runCliAsync(['--json', '--config', cfg], T);
      const rep = f.json<Report>(res);
      truncations += rep.actions.filter((a) => a['kind'] === 'truncate_record').length;
      if (res.stderr.includes('concurrent_append') && res.stderr.includes('appended after newer ones'))
        announcedReorder = true;
    }
    await writerDone;
    return { total: Number(written), truncations, lines: f.readLines(r.file), announcedReorder };
  }

  function check(lines: string[], total: number): number[] {
    const header = JSON.parse(lines[0]!) as { truncated: { dropped: number } };
    const msgs = lines.slice(1).map((l) => JSON.parse(l) as { content: string; id: string }); // throws on a torn/merged line
    const ids = msgs.map((m) => m.id);
    expect(new Set(ids).size, 'no line is duplicated').toBe(ids.length);
    // Every line ever written is either still in the record or was dropped by a truncation.
    expect(header.truncated.dropped + msgs.length, 'no line is lost').toBe(2000 + total);
    return msgs.filter((m) => m.content.startsWith('w')).map((m) => Number(m.content.slice(1)));
  }

  it('a writer appending to a record during repeated truncations loses no line and keeps its order', async () => {
    // ~5 000 lines a second: orders of magnitude above what a runtime writes.
    const { total, truncations, lines, announcedReorder } = await truncateWhileWriting(100);
    expect(total).toBeGreaterThan(1000);
    expect(truncations).toBeGreaterThan(1);
    const ws = check(lines, total);
    expect(ws.at(-1)).toBe(total - 1);
    // Order is kept; only a writer that races every corrective rename (possible on a saturated
    // machine) can push a line after newer ones, and the sweep must then say so.
    const firstBreak = ws.findIndex((w, i) => i > 0 && w !== ws[i - 1]! + 1);
    if (firstBreak >= 0)
      expect(announcedReorder, `line order broken at ${firstBreak} without a concurrent_append warning`).toBe(true);
  }, 60_000);

  it('a writer racing every rename at full speed still loses, duplicates and tears nothing; any reordering is announced', async () => {
    const { total, truncations, lines, announcedReorder } = await truncateWhileWriting(0);
    expect(total).toBeGreaterThan(10_000);
    expect(truncations).toBeGreaterThan(0);
    const ws = check(lines, total);
    const inOrder = ws.every((w, i) => i === 0 || w === ws[i - 1]! + 1);
    if (!inOrder) expect(announcedReorder, 'a reordering must be reported with concurrent_append').toBe(true);
  }, 60_000);
});

describe('locking and configuration', () => {
  it('a second sweep while one holds the lock exits 75 with storage_busy', async () => {
    fs.mkdirSync(path.join(home, 'gc'), { recursive: true, mode: 0o700 });
    const lockMod = (await import(
      path.join(f.REPO, 'dist', 'gchome', 'lock.js')
    )) as typeof import('../../src/gchome/lock.js');
    const held = await lockMod.acquireLock(path.join(home, 'gc', 'sweep.lock'), { waitMs: 0 });
    expect(held).toBeDefined();
    try {
      const r = f.runCli(['--json'], T);
      expect(r.status).toBe(75);
      expect(f.json<{ error: { code: string } }>(r).error.code).toBe('storage_busy');
      const dry = f.runCli(['--dry-run'], T);
      expect(dry.status).toBe(75);
      expect(dry.stderr).toContain('storage_busy');
    } finally {
      await held!.release();
    }
    expect(f.runCli(['--json'], T).status).toBe(0);
  });

  it('an invalid configuration exits 2, names the key and touches nothing', () => {
    f.writeSession(root, { sessionId: f.idAt('ses_', now - 90 * f.DAY), end: true });
    fs.mkdirSync(home, { mode: 0o755 });
    fs.chmodSync(home, 0o755);
    const before = f.snapshotTree(T);
    for (const [yaml, needle] of [
      [
        `sessions:\n  - root: ${root}\n    retain: { max_sessions: 0 }\n`,
        'sessions[0].retain.max_sessions: must be at least 1',
      ],
      [`sessions:\n  - root: ${root}\n    retain: { max_age: 30S }\n`, "'30S' must be a duration"],
      [`sessions:\n  - root: ${root}\n    retain: {}\n`, 'must declare at least one key'],
      [`records:\n  - capsule: shey\n    retain: { max_mesages: 3 }\n`, "unknown key 'max_mesages'"],
      [`bogus: 1\n`, 'bogus'],
    ] as const) {
      const cfg = f.writeConfig(path.join(T, 'app'), yaml);
      const before2 = f.snapshotTree(T);
      const r = f.runCli(['--config', cfg], T);
      expect(r.status, yaml).toBe(2);
      expect(r.stderr).toContain('config_invalid');
      expect(r.stderr).toContain(needle);
      expect(f.snapshotTree(T)).toEqual(before2);
    }
    void before;
  });
});

describe('capsule-writable manifests', () => {
  it('a broken <workdir>/murmur.yaml makes its entry inert and is reported; the other entries are still swept', () => {
    const wd = path.join(T, 'runs', 'bot');
    f.writeSession(path.join(wd, '.murmur'), { sessionId: f.idAt('ses_', now - 90 * f.DAY), end: true });
    fs.writeFileSync(path.join(wd, 'murmur.yaml'), 'name: bot\ntrace:\n  retain: { max_age: forever }\n');
    const doomed = f.writeSession(root, { sessionId: f.idAt('ses_', now - 90 * f.DAY), end: true });
    const cfg = f.writeConfig(T, `sessions:\n  - workdir: ${wd}\n  - root: ${root}\n    retain: { max_age: 1d }\n`);
    const r = f.runCli(['--json', '--config', cfg], T);
    expect(r.status).toBe(1);
    const rep = f.json<Report>(r);
    expect(rep.errors).toContainEqual(
      expect.objectContaining({ target: path.join(wd, '.murmur'), code: 'config_invalid' }),
    );
    expect(fs.readdirSync(path.join(wd, '.murmur'))).toHaveLength(1);
    expect(fs.existsSync(doomed)).toBe(false);
  });
});

describe('crash debris', () => {
  it('temp files and trash directories of an interrupted run are removed and reported as process_interrupted', () => {
    const rec = f.writeRecord(home, 'shey', 'ctx_1', { capsule: 'shey', messages: 3 });
    const deadPid = 2 ** 22 + 4242;
    const tmp = path.join(path.dirname(rec.file), `.conversation.jsonl.${deadPid}.0190a1b2c3d4e5f6.tmp`);
    fs.writeFileSync(tmp, 'partial');
    const liveTmp = path.join(path.dirname(rec.file), `.conversation.jsonl.${process.pid}.0190a1b2c3d4e5f7.tmp`);
    fs.writeFileSync(liveTmp, 'in use by a live process');
    fs.mkdirSync(path.join(root, '.murmur-gc-trash.ses_x.ses_0190'), { recursive: true });
    fs.writeFileSync(path.join(root, '.murmur-gc-trash.ses_x.ses_0190', 'trace.jsonl'), 'x');
    f.vouch(home, root, '.murmur-gc-trash.ses_x.ses_0190'); // what the interrupted run had recorded
    const cfg = f.writeConfig(T, `sessions:\n  - root: ${root}\n`);
    const recordBefore = fs.readFileSync(rec.file, 'utf8');
    const rep = f.json<Report>(f.runCli(['--json', '--config', cfg], T));
    expect(fs.existsSync(tmp)).toBe(false);
    expect(fs.existsSync(liveTmp)).toBe(true);
    expect(fs.existsSync(path.join(root, '.murmur-gc-trash.ses_x.ses_0190'))).toBe(false);
    const debris = rep.actions.filter((a) => a['kind'] === 'remove_debris');
    expect(debris).toHaveLength(2);
    expect(debris.every((d) => d['code'] === 'process_interrupted')).toBe(true);
    expect(fs.readFileSync(rec.file, 'utf8')).toBe(recordBefore);
  });
});
