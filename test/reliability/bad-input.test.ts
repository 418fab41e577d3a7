// Property (bad input corpus, built at test time): every malformed record, trace, session name,
// running record and configuration gets a report with a stable code, the rest of the run
// continues (a valid record beside it is still truncated, an old session still removed), nothing
// valid is lost, no run hangs (each case under a timeout) and no stack trace reaches the user.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Codes } from '../../src/errors.js';
import * as f from '../helpers/fixtures.js';
import { figures } from './soak.js';

const CODES = new Set<string>(Object.values(Codes));
const TIMEOUT_MS = 120_000;
const STACK = /\n\s+at .+:\d+:\d+\)?/;

let T: string;
beforeAll(() => {
  T = f.tempDir('rel-bad');
});
afterAll(() => {
  if (T) f.rmrf(T);
});

const msg = (i: number) => f.messageLine(f.idAt('msg_', Date.now() - 10 * f.DAY + i * 1000), 'user', `m${i}`);
const header = JSON.stringify({ type: 'murmur.record', capsule: 'shey', created_ms: 1756400000000 });
const msgs = (n: number) => Array.from({ length: n }, (_, i) => msg(i)).join('\n') + '\n';

const RECORDS: Record<string, () => Buffer | string> = {
  torn_last_line: () => header + '\n' + msgs(8) + '{"role":"user","content":[{"type":"te',
  garbage: () => header + '\n' + msgs(4) + 'not json at all\n}{][\n' + msgs(4),
  nul_bytes: () => header + '\n' + msgs(4) + '\0\0\0\0\n' + msgs(4),
  invalid_utf8: () =>
    Buffer.concat([
      Buffer.from(header + '\n' + msgs(4)),
      Buffer.from([0x7b, 0x22, 0x78, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d, 0x0a]),
      Buffer.from(msgs(4)),
    ]),
  crlf: () => (header + '\n' + msgs(8)).replaceAll('\n', '\r\n'),
  single_64mb_line: () =>
    header + '\n' + msgs(4) + '{"role":"user","content":"' + 'x'.repeat(64 << 20) + '"}\n' + msgs(4),
  empty: () => '',
  header_not_first: () => msgs(2) + header + '\n' + msgs(6),
  two_headers: () => header + '\n' + header + '\n' + msgs(8),
  header_wrong_types: () =>
    JSON.stringify({ type: 'murmur.record', capsule: 7, created_ms: 'yesterday', truncated: { dropped: -1 } }) +
    '\n' +
    msgs(8),
  non_v7_ids: () =>
    header +
    '\n' +
    Array.from({ length: 8 }, (_, i) => JSON.stringify({ role: 'user', content: 'x', id: `msg_${i}` })).join('\n') +
    '\n',
  deep_json: () => header + '\n' + msgs(4) + '['.repeat(200) + ']'.repeat(200) + '\n' + msgs(4),
};

function noStack(r: { stdout: string; stderr: string }): void {
  expect(STACK.test(r.stderr), r.stderr.slice(0, 600)).toBe(false);
  expect(STACK.test(r.stdout)).toBe(false);
}

type Rep = {
  actions: { kind: string; target?: string }[];
  skipped: { code: string; target: string }[];
  errors: { code: string; target: string }[];
};

function sweep(
  W: string,
  cfg: string,
): { status: number | null; rep: Rep; stdout: string; stderr: string; ms: number } {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [f.BIN, '--json', '--config', cfg], {
    env: f.cliEnv(W),
    encoding: 'utf8',
    timeout: TIMEOUT_MS,
    maxBuffer: 64 << 20,
  });
  expect(r.signal, `timed out or killed: ${r.stderr.slice(0, 400)}`).toBeNull();
  return {
    status: r.status,
    rep: f.json<Rep>({ status: r.status, stdout: r.stdout, stderr: r.stderr }),
    stdout: r.stdout,
    stderr: r.stderr,
    ms: performance.now() - t0,
  };
}

describe('bad records beside a valid one', () => {
  it(`every malformed record (${Object.keys(RECORDS).length} kinds) is read as the runtime reads it or reported with a stable code; the valid record is still truncated; no valid tail line lost`, () => {
    const W = path.join(T, 'records');
    const home = path.join(W, '.murmur');
    const ok = f.writeRecord(home, 'shey', 'ctx_ok', { capsule: 'shey', messages: 10 });
    const before = new Map<string, Buffer>();
    for (const [name, make] of Object.entries(RECORDS)) {
      const bad = f.writeRecord(home, 'shey', `ctx_${name}`, { capsule: 'shey', messages: 0 });
      fs.writeFileSync(bad.file, make());
      before.set(name, fs.readFileSync(bad.file));
    }
    const cfg = f.writeConfig(W, `records:\n  - capsule: shey\n    retain: { max_messages: 5 }\n`);
    const r = sweep(W, cfg);
    noStack(r);
    expect([0, 1]).toContain(r.status);
    for (const p of [...r.rep.errors, ...r.rep.skipped]) expect(CODES.has(p.code), p.code).toBe(true);
    // The rest of the run continued: the valid record was truncated to its newest 5.
    expect(f.readLines(ok.file).length).toBe(6);
    const rewritten: string[] = [];
    for (const [name, was] of before) {
      // Nothing valid lost: each bad record is untouched, or still ends with the same bytes.
      const after = fs.readFileSync(path.join(home, 'conversations', 'shey', `ctx_${name}`, 'conversation.jsonl'));
      const tail = was.subarray(Math.max(0, was.length - 200));
      // (a torn last line of an idle record is terminated with '\n', as the runtime's reader expects)
      const endsWith = (b: Buffer, t: Buffer) => b.length >= t.length && b.subarray(b.length - t.length).equals(t);
      expect(
        after.equals(was) || endsWith(after, tail) || endsWith(after, Buffer.concat([tail, Buffer.from('\n')])),
        name,
      ).toBe(true);
      if (!after.equals(was)) rewritten.push(name);
    }
    const codes = [...new Set([...r.rep.errors, ...r.rep.skipped].map((e) => `${e.code}`))];
    figures('bad-records', {
      kinds: before.size,
      exit: r.status ?? -1,
      ms: Math.round(r.ms),
      codes: codes.join(',') || 'none',
      truncated_as_runtime_reads_them: rewritten.length,
    });
  });
});

describe('bad sessions, traces and running records beside a valid old session', () => {
  it('each is reported or ignored; the old session is still removed; nothing hangs', () => {
    const W = path.join(T, 'sessions');
    const home = path.join(W, '.murmur');
    const root = path.join(W, 'app', '.murmur');
    const now = Date.now();
    const old = f.writeSession(root, { sessionId: f.idAt('ses_', now - 60 * f.DAY), end: true });
    // bad ses_ names
    for (const n of ['ses_', 'ses_zz', 'ses_0190a1b2c3d4e5f6', 'ses_../x', 'ses_' + 'f'.repeat(32)]) {
      if (n.includes('/')) continue;
      fs.mkdirSync(path.join(root, n), { recursive: true });
    }
    // duplicate and missing event ids
    const dupId = f.idAt('ses_', now - 50 * f.DAY);
    const t = f.traceText({ sessionId: dupId, end: true }).text.split('\n');
    const first = JSON.parse(t[0]!) as Record<string, unknown>;
    const second = { ...first, event_type: 'task_start', parent_id: first['event_id'] };
    fs.mkdirSync(path.join(root, dupId), { recursive: true });
    fs.writeFileSync(
      path.join(root, dupId, 'trace.jsonl'),
      [t[0], JSON.stringify(second), JSON.stringify({ ...first, event_id: undefined }), ''].join('\n'),
    );
    // a trace that is a directory
    const dirTrace = f.idAt('ses_', now - 45 * f.DAY);
    fs.mkdirSync(path.join(root, dirTrace, 'trace.jsonl'), { recursive: true });
    // running records: garbage, huge (sparse), a FIFO
    const running = path.join(home, 'running');
    fs.mkdirSync(running, { recursive: true });
    fs.writeFileSync(path.join(running, `${f.idAt('ses_', now)}.json`), 'garbage{');
    const huge = path.join(running, `${f.idAt('ses_', now)}.json`);
    fs.writeFileSync(huge, '');
    fs.truncateSync(huge, 100 << 20);
    execFileSync('mkfifo', [path.join(running, `${f.idAt('ses_', now)}.json`)]);
    const cfg = f.writeConfig(W, `sessions:\n  - root: ${root}\n    retain: { max_age: 30d }\n`);
    const r = sweep(W, cfg);
    noStack(r);
    expect([0, 1]).toContain(r.status);
    for (const p of [...r.rep.errors, ...r.rep.skipped]) expect(CODES.has(p.code), p.code).toBe(true);
    expect(fs.existsSync(old)).toBe(false);
    figures('bad-sessions', {
      exit: r.status ?? -1,
      ms: Math.round(r.ms),
      codes: [...new Set([...r.rep.errors, ...r.rep.skipped].map((e) => e.code))].join(',') || 'none',
    });
  });
});

describe('bad configurations', () => {
  const CONFIGS: Record<string, string> = {
    bad_yaml: 'records: [\n  - capsule: shey\n',
    wrong_types: 'records:\n  - capsule: 7\n    retain: { max_messages: "many" }\n',
    huge_numbers: 'records:\n  - capsule: shey\n    retain: { max_messages: 1e400 }\n',
    unknown_keys: 'records:\n  - capsule: shey\n    retain: { max_messages: 5, keep_forever: true }\n',
    negative: 'records:\n  - capsule: shey\n    retain: { max_messages: -3 }\n',
    tab_indent: 'records:\n\t- capsule: shey\n',
  };
  it.each(Object.keys(CONFIGS))(
    '%s: exit 2, config_invalid naming the file, nothing touched, no stack trace',
    (name) => {
      const W = path.join(T, `cfg-${name}`);
      const home = path.join(W, '.murmur');
      const rec = f.writeRecord(home, 'shey', 'ctx_1', { capsule: 'shey', messages: 10 });
      const before = fs.readFileSync(rec.file);
      const cfg = f.writeConfig(W, CONFIGS[name]!);
      const r = spawnSync(process.execPath, [f.BIN, '--json', '--config', cfg], {
        env: f.cliEnv(W),
        encoding: 'utf8',
        timeout: TIMEOUT_MS,
      });
      noStack(r);
      expect(r.status).toBe(2);
      expect(r.stderr).toContain('config_invalid');
      expect(r.stderr).toContain(cfg);
      expect(fs.readFileSync(rec.file).equals(before)).toBe(true);
      expect(fs.existsSync(path.join(home, 'gc'))).toBe(false);
      f.rmrf(W);
    },
  );
});
