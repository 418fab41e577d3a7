// `murmur-gc conversation ls|rm|truncate` end to end through the built CLI, against
// fixture homes in temp dirs: every line of the issue, in text and --json.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acquireLock, recordLockPath } from '../../src/gchome/lock.js';
import * as f from '../helpers/fixtures.js';

let T: string;
let home: string;
const now = Date.now();
const TOUCHED = 1756400000000; // 2025-08-28 16:53:20 UTC

beforeEach(() => {
  T = f.tempDir('cnv');
  home = path.join(T, '.murmur');
});
afterEach(() => f.rmrf(T));

function cnv(...args: string[]): f.CliResult {
  return f.runCli(['conversation', ...args], T);
}

function ctxDir(store: string, ctx: string): string {
  return path.join(home, 'conversations', store, ctx);
}

function recFile(store: string, ctx: string): string {
  return path.join(ctxDir(store, ctx), 'conversation.jsonl');
}

function headerOf(file: string): Record<string, unknown> {
  return JSON.parse(fs.readFileSync(file, 'utf8').split('\n')[0]!) as Record<string, unknown>;
}

function refusalText(code: string, message: string, hint: string): string {
  return `error[${code}]: ${message}\n  hint: ${hint}\n`;
}

const NO_CONTEXT_HINT = '`murmur-gc conversation ls` lists every record and context on this host';

/** Log lines on stderr (pino JSON) carrying a stable code. */
function warnings(r: f.CliResult): { code: string; target: string; msg: string }[] {
  return r.stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { code: string; target: string; msg: string });
}

const HEAD =
  'RECORD                   CONTEXT                      MESSAGES       SIZE  LAST TOUCHED (UTC)   TRUNCATED';

describe('conversation ls', () => {
  it('one row per context: counts only message lines, size, last touched (UTC), truncated; JSON fields', () => {
    const one = f.writeRecord(home, 'shey', 'ctx_1', {
      capsule: 'shey',
      messages: 4,
      lines: ['', '{"torn":', 'garbage', '{"role":7}'],
      mtimeMs: TOUCHED,
    });
    const two = f.writeRecord(home, 'shey', 'ctx_2', { messages: 3, mtimeMs: TOUCHED });
    // A record of exactly 1280 bytes: 1.25 KiB, which the runtime prints as `1.2 KiB` (ties to even).
    const marker = {
      dropped: 7,
      oldest_surviving_id: f.idAt('msg_', now - 5000),
      last_dropped_id: f.idAt('msg_', now - 6000),
      at_ms: now - 1000,
    };
    const big = f.writeRecord(home, 'other', 'ctx_big', {
      capsule: 'shey',
      createdMs: 1700000000000,
      truncated: marker,
      mtimeMs: TOUCHED,
    });
    const head = fs.readFileSync(big.file, 'utf8');
    const stub = f.messageLine(marker.oldest_surviving_id, 'user', '');
    fs.writeFileSync(
      big.file,
      head + f.messageLine(marker.oldest_surviving_id, 'user', 'x'.repeat(1280 - head.length - stub.length - 1)) + '\n',
    );
    fs.utimesSync(big.file, TOUCHED / 1000, TOUCHED / 1000);
    expect(fs.statSync(big.file).size).toBe(1280);
    // Invisible: a context without conversation.jsonl, dot-prefixed stores and contexts.
    fs.mkdirSync(ctxDir('shey', 'ctx_empty'), { recursive: true });
    f.writeRecord(home, '.hidden', 'ctx_h', { messages: 1 });
    f.writeRecord(home, 'shey', '.ctx_dot', { messages: 1 });
    const s1 = fs.statSync(one.file).size;
    const s2 = fs.statSync(two.file).size;

    const r = cnv('ls');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe(
      [
        HEAD,
        'other                    ctx_big                             1    1.2 KiB  2025-08-28 16:53:20  7 dropped',
        `shey                     ctx_1                               4 ${`${s1} B`.padStart(10)}  2025-08-28 16:53:20  -`,
        `shey                     ctx_2                               3 ${`${s2} B`.padStart(10)}  2025-08-28 16:53:20  -`,
        '',
      ].join('\n'),
    );

    const j = cnv('ls', '--json');
    expect(j.status, j.stderr).toBe(0);
    expect(j.stdout.trimEnd()).not.toContain('\n');
    const rows = f.json<Record<string, unknown>[]>(j);
    for (const row of rows)
      expect(Object.keys(row)).toEqual([
        'record',
        'context_id',
        'path',
        'messages',
        'bytes',
        'last_touched_ms',
        'capsule',
        'truncated',
      ]);
    expect(rows).toEqual([
      {
        record: 'other',
        context_id: 'ctx_big',
        path: big.file,
        messages: 1,
        bytes: 1280,
        last_touched_ms: TOUCHED,
        capsule: 'shey',
        truncated: marker,
      },
      {
        record: 'shey',
        context_id: 'ctx_1',
        path: one.file,
        messages: 4,
        bytes: s1,
        last_touched_ms: TOUCHED,
        capsule: 'shey',
        truncated: null,
      },
      {
        record: 'shey',
        context_id: 'ctx_2',
        path: two.file,
        messages: 3,
        bytes: s2,
        last_touched_ms: TOUCHED,
        capsule: null,
        truncated: null,
      },
    ]);
    expect(Object.keys(rows[0]!['truncated'] as object)).toEqual([
      'dropped',
      'oldest_surviving_id',
      'last_dropped_id',
      'at_ms',
    ]);
  });

  it('--record filters by exact store; an unknown store is [] and the runtime sentence', () => {
    f.writeRecord(home, 'shey', 'ctx_1', { messages: 2 });
    f.writeRecord(home, 'other', 'ctx_2', { messages: 1 });
    const only = f.json<{ record: string }[]>(cnv('ls', '--record', 'other', '--json'));
    expect(only.map((x) => x.record)).toEqual(['other']);
    const none = cnv('ls', '--record', 'nothing-here', '--json');
    expect(none.status).toBe(0);
    expect(none.stdout).toBe('[]\n');
    const text = cnv('ls', '--record', 'nothing-here');
    expect(text.status).toBe(0);
    expect(text.stdout).toBe("No conversation records under record store 'nothing-here'.\n");
  });

  it('no home or no records: `No conversation records.` / [] and nothing is created', () => {
    const r = cnv('ls');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe('No conversation records.\n');
    expect(cnv('ls', '--json').stdout).toBe('[]\n');
    expect(fs.existsSync(home)).toBe(false);
    fs.mkdirSync(path.join(home, 'conversations', 'shey', 'ctx_nofile'), { recursive: true });
    expect(cnv('ls').stdout).toBe('No conversation records.\n');
    expect(fs.existsSync(path.join(home, 'gc'))).toBe(false);
  });

  it('--message after a real truncation: present (position of total), truncated, unknown — text and JSON, exit 0', () => {
    const start = now - 10 * f.DAY;
    const rec = f.writeRecord(home, 'shey', 'ctx_t', { capsule: 'shey', messages: 10, startMs: start });
    const ids = rec.ids;
    const tr = cnv('truncate', 'ctx_t', '--keep', '4');
    expect(tr.status, tr.stderr).toBe(0);
    expect(tr.stdout).toBe(`dropped 6 messages from ${rec.file} (4 kept; oldest surviving is ${ids[6]})\n`);

    const present = cnv('ls', '--message', ids[7]!);
    expect(present.status, present.stderr).toBe(0);
    expect(present.stdout).toBe(`present:   ${ids[7]} is message 2 of 4 in shey/ctx_t\n`);
    expect(f.json(cnv('ls', '--message', ids[7]!, '--json'))).toEqual({
      message_id: ids[7],
      status: 'found',
      locations: [{ record: 'shey', context_id: 'ctx_t', path: rec.file, status: 'present', position: 2, total: 4 }],
    });

    const dropped = cnv('ls', '--message', ids[2]!);
    expect(dropped.status, dropped.stderr).toBe(0);
    expect(dropped.stdout).toBe(
      `truncated: ${ids[2]} is not in shey/ctx_t; if it ever was, it is among the 6 messages dropped (by mint order: it is no newer than the last one dropped, ${ids[5]}; oldest surviving is ${ids[6]})\n`,
    );
    // the last dropped id itself is named by the header: a fact, in mur's words
    expect(cnv('ls', '--message', ids[5]!).stdout).toBe(
      `truncated: ${ids[5]} was dropped from shey/ctx_t (6 messages dropped; oldest surviving is ${ids[6]})\n`,
    );
    const dj = cnv('ls', '--message', ids[2]!, '--json');
    expect(dj.stdout).toBe(
      JSON.stringify({
        message_id: ids[2],
        status: 'found',
        locations: [
          {
            record: 'shey',
            context_id: 'ctx_t',
            path: rec.file,
            status: 'truncated',
            dropped: 6,
            oldest_surviving_id: ids[6],
          },
        ],
      }) + '\n',
    );

    // Minted after the last dropped message but in no record: unknown.
    const stranger = f.idAt('msg_', start + 5500);
    const unknown = cnv('ls', '--message', stranger);
    expect(unknown.status).toBe(0);
    expect(unknown.stdout).toBe(`unknown: ${stranger} is in no record on this host\n`);
    const uj = cnv('ls', '--message', stranger, '--json');
    expect(uj.status).toBe(0);
    expect(uj.stdout).toBe(`{"message_id":"${stranger}","status":"unknown","locations":[]}\n`);

    // --message short-circuits before --record; several records answer in list order.
    f.writeRecord(home, 'another', 'ctx_copy', { lines: [f.messageLine(ids[7]!)] });
    const both = cnv('ls', '--message', ids[7]!, '--record', 'nothing-here');
    expect(both.stdout).toBe(
      `present:   ${ids[7]} is message 1 of 1 in another/ctx_copy\npresent:   ${ids[7]} is message 2 of 4 in shey/ctx_t\n`,
    );
  });
});

describe('conversation rm', () => {
  it('removes the whole context directory and reports its path and message count (headerless too)', () => {
    const h = f.writeRecord(home, 'shey', 'ctx_h', { messages: 3, lines: ['{"torn":'] });
    fs.writeFileSync(path.join(ctxDir('shey', 'ctx_h'), 'notes.txt'), 'x');
    const keep = f.writeRecord(home, 'shey', 'ctx_keep', { capsule: 'shey', messages: 2 });
    const r = cnv('rm', 'ctx_h');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe(`removed ${ctxDir('shey', 'ctx_h')} (3 messages)\n`);
    expect(fs.existsSync(path.dirname(h.file))).toBe(false);
    expect(fs.readdirSync(path.join(home, 'conversations', 'shey'))).toEqual(['ctx_keep']);
    expect(fs.existsSync(keep.file)).toBe(true);

    const o = f.writeRecord(home, 'shey', 'ctx_owned', { capsule: 'shey', messages: 5 });
    const j = cnv('rm', 'ctx_owned', '--json');
    expect(j.status, j.stderr).toBe(0);
    expect(j.stdout).toBe(
      JSON.stringify({
        action: 'remove',
        record: 'shey',
        context_id: 'ctx_owned',
        path: ctxDir('shey', 'ctx_owned'),
        messages: 5,
        dry_run: false,
      }) + '\n',
    );
    expect(fs.existsSync(path.dirname(o.file))).toBe(false);
  });
});

describe('conversation truncate', () => {
  it('keeps the newest N byte for byte, writes the exact header, 0600, dropped is cumulative', () => {
    const r = f.writeRecord(home, 'shey', 'ctx_1', {
      capsule: 'shey',
      createdMs: 1756400000000,
      messages: 10,
      mode: 0o644,
      lines: ['', '{"torn":'],
    });
    const before = fs.readFileSync(r.file, 'utf8').split('\n');
    const j = cnv('truncate', 'ctx_1', '--keep', '3', '--json');
    expect(j.status, j.stderr).toBe(0);
    const out = f.json(j);
    expect(Object.keys(out)).toEqual([
      'action',
      'record',
      'context_id',
      'path',
      'dropped',
      'kept',
      'oldest_surviving_id',
      'last_dropped_id',
      'dry_run',
    ]);
    expect(out).toEqual({
      action: 'truncate',
      record: 'shey',
      context_id: 'ctx_1',
      path: r.file,
      dropped: 7,
      kept: 3,
      oldest_surviving_id: r.ids[7],
      last_dropped_id: r.ids[6],
      dry_run: false,
    });
    const lines = fs.readFileSync(r.file, 'utf8').split('\n');
    const header = headerOf(r.file);
    expect(Object.keys(header)).toEqual(['type', 'capsule', 'created_ms', 'truncated']);
    expect(Object.keys(header['truncated'] as object)).toEqual([
      'dropped',
      'oldest_surviving_id',
      'last_dropped_id',
      'at_ms',
    ]);
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
    expect(lines.slice(1).join('\n')).toBe(before.slice(8).join('\n'));
    expect(fs.statSync(r.file).mode & 0o777).toBe(0o600);

    const again = cnv('truncate', 'ctx_1', '--keep', '1');
    expect(again.status, again.stderr).toBe(0);
    expect(again.stdout).toBe(`dropped 2 messages from ${r.file} (1 kept; oldest surviving is ${r.ids[9]})\n`);
    const h2 = headerOf(r.file) as {
      created_ms: number;
      truncated: { dropped: number; oldest_surviving_id: string; last_dropped_id: string };
    };
    expect(h2.created_ms).toBe(1756400000000);
    expect(h2.truncated).toMatchObject({ dropped: 9, oldest_surviving_id: r.ids[9], last_dropped_id: r.ids[8] });
    expect(f.json<{ messages: number }[]>(cnv('ls', '--json'))[0]!.messages).toBe(1);
  });

  it('a headerless record gets a header whose capsule is the record store name', () => {
    const r = f.writeRecord(home, 'mystore', 'ctx_h', { messages: 5 });
    const t0 = Date.now();
    const res = cnv('truncate', 'ctx_h', '--keep', '2');
    expect(res.status, res.stderr).toBe(0);
    expect(res.stdout).toBe(`dropped 3 messages from ${r.file} (2 kept; oldest surviving is ${r.ids[3]})\n`);
    const h = headerOf(r.file) as {
      type: string;
      capsule: string;
      created_ms: number;
      truncated: { dropped: number; at_ms: number };
    };
    expect(h.type).toBe('murmur.record');
    expect(h.capsule).toBe('mystore');
    expect(h.created_ms).toBeGreaterThanOrEqual(t0);
    expect(h.created_ms).toBeLessThanOrEqual(Date.now());
    expect(h.truncated.dropped).toBe(3);
    expect(h.truncated.at_ms).toBe(h.created_ms);
    expect(f.readLines(r.file)).toHaveLength(3);
  });

  it('a record already at or under N is left byte-identical and says so', () => {
    const r = f.writeRecord(home, 'shey', 'ctx_u', { messages: 3, mode: 0o644, mtimeMs: TOUCHED });
    const bytes = fs.readFileSync(r.file);
    const st = fs.statSync(r.file);
    const t = cnv('truncate', 'ctx_u', '--keep', '3');
    expect(t.status, t.stderr).toBe(0);
    expect(t.stdout).toBe(`${r.file} already holds 3 messages; nothing dropped\n`);
    const j = cnv('truncate', 'ctx_u', '--keep', '50', '--json');
    expect(f.json(j)).toEqual({
      action: 'truncate',
      record: 'shey',
      context_id: 'ctx_u',
      path: r.file,
      dropped: 0,
      kept: 3,
      oldest_surviving_id: '',
      last_dropped_id: '',
      dry_run: false,
    });
    expect(fs.readFileSync(r.file).equals(bytes)).toBe(true);
    const after = fs.statSync(r.file);
    expect([after.ino, after.mtimeMs, after.mode]).toEqual([st.ino, st.mtimeMs, st.mode]);
    expect(fs.readdirSync(path.dirname(r.file))).toEqual(['conversation.jsonl']);
  });
});

describe('refusals', () => {
  it('E-CNV-001 without and with --record, home shown as the real path of <home>/conversations/', () => {
    f.writeRecord(home, 'shey', 'ctx_1', { messages: 1 });
    fs.symlinkSync(home, path.join(T, 'home-link'));
    const root = `${fs.realpathSync(home)}/conversations/`;
    const snap = f.snapshotTree(home);

    const a = cnv('rm', 'ctx_nope');
    expect(a.status).toBe(1);
    expect(a.stdout).toBe('');
    expect(a.stderr).toBe(
      refusalText('E-CNV-001', `no context 'ctx_nope' in any record under ${root}`, NO_CONTEXT_HINT),
    );

    const b = cnv('truncate', 'ctx_1', '--keep', '1', '--record', 'other');
    expect(b.status).toBe(1);
    expect(b.stderr).toBe(
      refusalText('E-CNV-001', `no context 'ctx_1' under record store 'other' in ${root}`, NO_CONTEXT_HINT),
    );

    const viaLink = f.runCli(['conversation', 'rm', 'ctx_nope', '--home', path.join(T, 'home-link')], T);
    expect(viaLink.status).toBe(1);
    expect(viaLink.stderr).toBe(
      refusalText('E-CNV-001', `no context 'ctx_nope' in any record under ${root}`, NO_CONTEXT_HINT),
    );

    const j = cnv('rm', 'ctx_nope', '--json');
    expect(j.status).toBe(1);
    expect(f.json(j)).toEqual({
      error: { code: 'E-CNV-001', message: `no context 'ctx_nope' in any record under ${root}`, hint: NO_CONTEXT_HINT },
    });
    expect(f.snapshotTree(home)).toEqual(snap);
  });

  it('E-CNV-001 when there is no home at all, creating nothing', () => {
    const r = cnv('rm', 'ctx_1');
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /^error\[E-CNV-001\]: no context 'ctx_1' in any record under .*\/\.murmur\/conversations\/\n {2}hint: /,
    );
    expect(fs.existsSync(home)).toBe(false);
  });

  it('E-CNV-002 names both stores; --record decides', () => {
    const a = f.writeRecord(home, 'store-a', 'ctx_1', { messages: 3 });
    const b = f.writeRecord(home, 'store-b', 'ctx_1', { messages: 3 });
    const snap = f.snapshotTree(home);
    const expected = refusalText(
      'E-CNV-002',
      "context 'ctx_1' is present under 2 record stores: store-a, store-b",
      'pass --record <NAME> to say which one, e.g. --record store-a',
    );
    for (const args of [
      ['rm', 'ctx_1'],
      ['truncate', 'ctx_1', '--keep', '1'],
      ['rm', 'ctx_1', '--dry-run', '--json'],
    ]) {
      const r = cnv(...args);
      expect(r.status).toBe(1);
      expect(r.stderr).toBe(expected);
    }
    expect(f.snapshotTree(home)).toEqual(snap);

    const t = cnv('truncate', 'ctx_1', '--keep', '1', '--record', 'store-a');
    expect(t.status, t.stderr).toBe(0);
    expect(f.readLines(a.file)).toHaveLength(2);
    expect(f.readLines(b.file)).toHaveLength(3);
    const r = cnv('rm', 'ctx_1', '--record', 'store-b');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe(`removed ${ctxDir('store-b', 'ctx_1')} (3 messages)\n`);
    expect(fs.existsSync(b.file)).toBe(false);
    expect(fs.existsSync(a.file)).toBe(true);
  });

  it('E-CNV-003 is checked first — even for a missing or ambiguous context, even before the config — exit 1; usage errors exit 2', () => {
    f.writeRecord(home, 'store-a', 'ctx_1', { messages: 3 });
    f.writeRecord(home, 'store-b', 'ctx_1', { messages: 3 });
    const snap = f.snapshotTree(home);
    const e3 = (ctx: string) =>
      refusalText(
        'E-CNV-003',
        '--keep must be at least 1',
        `truncating a record to nothing is \`murmur-gc conversation rm ${ctx}\``,
      );
    for (const [ctx, keep, ...rest] of [
      ['ctx_missing', '0'],
      ['ctx_1', '0'],
      ['ctx_missing', '0', '--config', path.join(T, 'no-such.yaml')],
    ] as string[][]) {
      const r = cnv('truncate', ctx!, '--keep', keep!, ...rest);
      expect(r.status).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(e3(ctx!));
    }
    expect(cnv('truncate', 'ctx_missing', '--keep=0', '--json').stdout).toContain('"code":"E-CNV-003"');
    // (the same missing config is a configuration error once --keep is usable)
    expect(cnv('truncate', 'ctx_missing', '--keep', '1', '--config', path.join(T, 'no-such.yaml')).status).toBe(2);
    for (const bad of [['--keep', 'abc'], ['--keep', '1.5'], ['--keep', '4294967296'], ['--keep', '-2'], []]) {
      const r = cnv('truncate', 'ctx_1', ...bad);
      expect(r.status, `${bad.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(/--keep/);
    }
    expect(cnv('rm').status).toBe(2);
    expect(f.snapshotTree(home)).toEqual(snap);
  });
});

describe('locks and live sessions', () => {
  it('a record locked by another murmur-gc waits briefly, then exits 75 with storage_busy', async () => {
    const r = f.writeRecord(home, 'shey', 'ctx_1', { messages: 4 });
    fs.mkdirSync(path.join(home, 'gc', 'locks', 'shey'), { recursive: true, mode: 0o700 });
    const lock = await acquireLock(recordLockPath(home, 'shey', 'ctx_1'), { waitMs: 0 });
    expect(lock).toBeDefined();
    try {
      const snap = f.snapshotTree(path.join(home, 'conversations'));
      const t0 = Date.now();
      const rm = await f.runCliAsync(['conversation', 'rm', 'ctx_1'], T);
      expect(rm.status, rm.stderr).toBe(75);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(2000);
      expect(rm.stderr).toContain('[storage_busy]');
      expect(rm.stderr).toContain(r.file);
      const rmJson = await f.runCliAsync(['conversation', 'rm', 'ctx_1', '--json'], T);
      expect(rmJson.status).toBe(75);
      expect((JSON.parse(rmJson.stdout) as { error: { code: string } }).error.code).toBe('storage_busy');
      const tr = await f.runCliAsync(['conversation', 'truncate', 'ctx_1', '--keep', '1'], T);
      expect(tr.status).toBe(75);
      expect(tr.stderr).toContain('[storage_busy]');
      // Dry runs only probe the lock, and a held one answers the same.
      const dry = await f.runCliAsync(['conversation', 'rm', 'ctx_1', '--dry-run'], T);
      expect(dry.status).toBe(75);
      const dryT = await f.runCliAsync(['conversation', 'truncate', 'ctx_1', '--keep', '1', '--dry-run'], T);
      expect(dryT.status).toBe(75);
      expect(dryT.stderr).toContain('[storage_busy]');
      expect(f.snapshotTree(path.join(home, 'conversations'))).toEqual(snap);
    } finally {
      await lock?.release();
    }
    const ok = cnv('rm', 'ctx_1');
    expect(ok.status, ok.stderr).toBe(0);
    expect(fs.existsSync(r.file)).toBe(false);
  });

  it('a context a live session uses is refused (live_context) unless --force', () => {
    const root = path.join(T, 'app', '.murmur');
    const sid = f.idAt('ses_', now - f.DAY);
    f.writeSession(root, {
      sessionId: sid,
      end: false,
      contextId: 'ctx_live',
      tasks: [{ taskId: 'tsk_1', contextId: 'ctx_task' }],
      mtimeMs: now - 5_000,
    });
    const live = f.writeRecord(home, 'shey', 'ctx_live', { messages: 5 });
    const task = f.writeRecord(home, 'shey', 'ctx_task', { messages: 5 });
    const idle = f.writeRecord(home, 'shey', 'ctx_idle', { messages: 5 });
    const cfg = f.writeConfig(T, `sessions:\n  - root: ${root}\n`);
    const snap = f.snapshotTree(home);

    const rm = cnv('rm', 'ctx_live', '--config', cfg);
    expect(rm.status).toBe(1);
    expect(rm.stderr).toMatch(
      new RegExp(
        `^error\\[live_context\\]: context 'ctx_live' is in use by live session ${sid} in ${root} \\(.+\\); not removed\\n {2}hint: .*--force`,
      ),
    );
    const tr = cnv('truncate', 'ctx_task', '--keep', '1', '--config', cfg, '--json');
    expect(tr.status).toBe(1);
    expect(f.json<{ error: { code: string } }>(tr).error.code).toBe('live_context');
    expect(tr.stderr).toContain("context 'ctx_task' is in use by live session");
    expect(cnv('rm', 'ctx_live', '--dry-run', '--config', cfg).status).toBe(1);
    expect(f.snapshotTree(home)).toEqual(snap);
    // A context no live session names is not affected.
    expect(cnv('truncate', 'ctx_idle', '--keep', '1', '--config', cfg).status).toBe(0);
    expect(f.readLines(idle.file)).toHaveLength(2);

    const forced = cnv('rm', 'ctx_live', '--config', cfg, '--force');
    expect(forced.status, forced.stderr).toBe(0);
    expect(forced.stdout).toBe(`removed ${path.dirname(live.file)} (5 messages)\n`);
    expect(warnings(forced).map((w) => w.code)).toContain('live_context');
    expect(fs.existsSync(live.file)).toBe(false);
    const forcedT = cnv('truncate', 'ctx_task', '--keep', '2', '--config', cfg, '--force');
    expect(forcedT.status, forcedT.stderr).toBe(0);
    expect(f.readLines(task.file)).toHaveLength(3);
  });

  it('sessions roots named by running records count too (no configuration needed)', () => {
    const root = path.join(T, 'elsewhere', '.murmur');
    const sid = f.idAt('ses_', now - 5 * f.DAY);
    // Old trace, no session_end: only the running record (this live process) makes it live.
    const sdir = f.writeSession(root, { sessionId: sid, end: false, contextId: 'ctx_run', startMs: now - 5 * f.DAY });
    const stat = fs.readFileSync(`/proc/${process.pid}/stat`, 'latin1');
    const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    fs.mkdirSync(path.join(home, 'running'), { recursive: true, mode: 0o700 });
    fs.writeFileSync(
      path.join(home, 'running', `${sid}.json`),
      f.runningRecordJson({ sessionId: sid, pid: process.pid, processStart: start, workdir: sdir }),
      { mode: 0o600 },
    );
    const rec = f.writeRecord(home, 'shey', 'ctx_run', { messages: 2 });
    const r = cnv('rm', 'ctx_run');
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`error[live_context]: context 'ctx_run' is in use by live session ${sid}`);
    expect(fs.existsSync(rec.file)).toBe(true);
    // Once the record names a dead process (wrong start time), the session is dead.
    fs.writeFileSync(
      path.join(home, 'running', `${sid}.json`),
      f.runningRecordJson({ sessionId: sid, pid: process.pid, processStart: '1', workdir: sdir }),
      { mode: 0o600 },
    );
    expect(cnv('rm', 'ctx_run').status).toBe(0);
    expect(fs.existsSync(rec.file)).toBe(false);
  });
});

describe('links and special files', () => {
  it('symlinked stores, contexts and record files are never followed, listed or acted on', () => {
    const outside = path.join(T, 'outside');
    const canaryStore = path.join(outside, 'store');
    fs.mkdirSync(path.join(canaryStore, 'ctx_c'), { recursive: true });
    const canaryIds = [f.idAt('msg_', now - 3000), f.idAt('msg_', now - 2000), f.idAt('msg_', now - 1000)];
    const canaryText = canaryIds.map((id) => f.messageLine(id)).join('\n') + '\n';
    fs.writeFileSync(path.join(canaryStore, 'ctx_c', 'conversation.jsonl'), canaryText);
    fs.mkdirSync(path.join(outside, 'ctxdir'));
    fs.writeFileSync(path.join(outside, 'ctxdir', 'conversation.jsonl'), canaryText);
    fs.writeFileSync(path.join(outside, 'file.jsonl'), canaryText);
    const real = f.writeRecord(home, 'shey', 'ctx_real', { messages: 2 });
    fs.symlinkSync(canaryStore, path.join(home, 'conversations', 'linked'));
    fs.symlinkSync(path.join(outside, 'ctxdir'), ctxDir('shey', 'ctx_link'));
    fs.mkdirSync(ctxDir('shey', 'ctx_file'));
    fs.symlinkSync(path.join(outside, 'file.jsonl'), recFile('shey', 'ctx_file'));
    const canary = f.snapshotTree(outside);

    const ls = cnv('ls', '--json');
    expect(ls.status, ls.stderr).toBe(0);
    expect(f.json<{ path: string }[]>(ls).map((x) => x.path)).toEqual([real.file]);
    expect(
      warnings(ls)
        .filter((w) => w.code === 'symlink')
        .map((w) => w.target)
        .sort(),
    ).toEqual(
      [path.join(home, 'conversations', 'linked'), ctxDir('shey', 'ctx_link'), recFile('shey', 'ctx_file')].sort(),
    );
    expect(cnv('ls').stdout).not.toMatch(/linked|ctx_link|ctx_file/);
    const where = cnv('ls', '--message', canaryIds[1]!);
    expect(where.stdout).toBe(`unknown: ${canaryIds[1]} is in no record on this host\n`);

    for (const args of [
      ['rm', 'ctx_link'],
      ['truncate', 'ctx_link', '--keep', '1'],
      ['rm', 'ctx_c', '--record', 'linked'],
      ['truncate', 'ctx_c', '--keep', '1'],
      ['rm', 'ctx_file'],
      ['truncate', 'ctx_file', '--keep', '1'],
    ]) {
      const r = cnv(...args);
      expect(r.status, args.join(' ')).toBe(1);
      expect(r.stderr).toContain('error[E-CNV-001]');
    }
    // The refusal explains itself: the symlink that hid the context is named.
    expect(warnings(cnv('rm', 'ctx_link')).map((w) => w.target)).toEqual([ctxDir('shey', 'ctx_link')]);

    expect(f.snapshotTree(outside)).toEqual(canary);
    for (const p of [
      path.join(home, 'conversations', 'linked'),
      ctxDir('shey', 'ctx_link'),
      recFile('shey', 'ctx_file'),
    ]) {
      expect(fs.lstatSync(p).isSymbolicLink()).toBe(true);
    }
  });

  it('a FIFO named conversation.jsonl never hangs ls and is never opened', () => {
    fs.mkdirSync(ctxDir('shey', 'ctx_fifo'), { recursive: true });
    execFileSync('mkfifo', [recFile('shey', 'ctx_fifo')]);
    const real = f.writeRecord(home, 'shey', 'ctx_real', { messages: 1 });
    const ls = f.runCli(['conversation', 'ls', '--json'], T, {}, 20_000);
    expect(ls.status, 'ls must finish (a null status means it was killed by the timeout)').toBe(0);
    expect(f.json<{ path: string }[]>(ls).map((x) => x.path)).toEqual([real.file]);
    expect(warnings(ls)).toContainEqual(
      expect.objectContaining({ code: 'not_regular', target: recFile('shey', 'ctx_fifo') }),
    );
    const text = f.runCli(['conversation', 'ls'], T, {}, 20_000);
    expect(text.status).toBe(0);
    expect(text.stdout).not.toContain('ctx_fifo');
    const where = f.runCli(['conversation', 'ls', '--message', 'msg_0000000000017000000000000000000'], T, {}, 20_000);
    expect(where.status).toBe(0);
    for (const args of [
      ['rm', 'ctx_fifo'],
      ['truncate', 'ctx_fifo', '--keep', '1'],
    ]) {
      const r = f.runCli(['conversation', ...args], T, {}, 20_000);
      expect(r.status).toBe(1);
      expect(r.stderr).toContain('error[E-CNV-001]');
    }
    expect(fs.lstatSync(recFile('shey', 'ctx_fifo')).isFIFO()).toBe(true);
  });
});

describe('dry run', () => {
  it('rm and truncate --dry-run leave the tree byte-identical and say what the real run then does', () => {
    const a = f.writeRecord(home, 'shey', 'ctx_a', { capsule: 'shey', messages: 4 });
    const b = f.writeRecord(home, 'shey', 'ctx_b', { messages: 9, mode: 0o644 });
    const snap = f.snapshotTree(home);

    const rm = cnv('rm', 'ctx_a', '--dry-run');
    expect(rm.status, rm.stderr).toBe(0);
    expect(rm.stdout).toBe(`would remove ${ctxDir('shey', 'ctx_a')} (4 messages)\n`);
    const rmj = f.json(cnv('rm', 'ctx_a', '--dry-run', '--json'));
    expect(rmj).toEqual({
      action: 'remove',
      record: 'shey',
      context_id: 'ctx_a',
      path: ctxDir('shey', 'ctx_a'),
      messages: 4,
      dry_run: true,
    });

    const tr = cnv('truncate', 'ctx_b', '--keep', '2', '--dry-run');
    expect(tr.status, tr.stderr).toBe(0);
    expect(tr.stdout).toBe(`would drop 7 messages from ${b.file} (2 kept; oldest surviving is ${b.ids[7]})\n`);
    const trj = f.json(cnv('truncate', 'ctx_b', '--keep', '2', '--dry-run', '--json'));
    expect(trj).toEqual({
      action: 'truncate',
      record: 'shey',
      context_id: 'ctx_b',
      path: b.file,
      dropped: 7,
      kept: 2,
      oldest_surviving_id: b.ids[7],
      last_dropped_id: b.ids[6],
      dry_run: true,
    });
    expect(cnv('truncate', 'ctx_b', '--keep', '20', '--dry-run').stdout).toBe(
      `${b.file} already holds 9 messages; nothing dropped\n`,
    );
    cnv('ls');
    cnv('ls', '--message', b.ids[0]!);

    expect(f.snapshotTree(home)).toEqual(snap);
    expect(fs.existsSync(path.join(home, 'gc'))).toBe(false);

    // The real runs report the same.
    expect(f.json(cnv('rm', 'ctx_a', '--json'))).toEqual({ ...rmj, dry_run: false });
    expect(f.json(cnv('truncate', 'ctx_b', '--keep', '2', '--json'))).toEqual({ ...trj, dry_run: false });
    expect(fs.existsSync(a.file)).toBe(false);
    expect(f.readLines(b.file)).toHaveLength(3);
  });
});

describe('manual actions are in the audit trail', () => {
  /** Every gc audit session: its trace lines (parsed) and whether an intent log is left. */
  function audits(): {
    id: string;
    lines: Record<string, unknown>[];
    intent: boolean;
    where: Record<string, string> | undefined;
  }[] {
    const gc = path.join(home, 'gc');
    if (!fs.existsSync(gc)) return [];
    return fs
      .readdirSync(gc)
      .filter((n) => n.startsWith('ses_'))
      .sort()
      .map((id) => ({
        id,
        lines: f.readLines(path.join(gc, id, 'trace.jsonl')).map((l) => JSON.parse(l) as Record<string, unknown>),
        intent: fs.existsSync(path.join(gc, id, 'intent.jsonl')),
        where: fs.existsSync(path.join(gc, id, 'where.json'))
          ? (JSON.parse(fs.readFileSync(path.join(gc, id, 'where.json'), 'utf8')) as Record<string, string>)
          : undefined,
      }));
  }

  it('rm and truncate each write an audit session whose retention line says manual_cli; history --target answers; dry runs and no-op truncations record nothing', () => {
    f.writeRecord(home, 'shey', 'ctx_gone', { capsule: 'shey', messages: 3 });
    f.writeRecord(home, 'shey', 'ctx_cut', { capsule: 'shey', messages: 10 });

    // dry runs and a truncation with nothing to drop: no audit
    expect(cnv('rm', 'ctx_gone', '--dry-run').status).toBe(0);
    expect(cnv('truncate', 'ctx_cut', '--keep', '4', '--dry-run').status).toBe(0);
    expect(cnv('truncate', 'ctx_cut', '--keep', '50').status).toBe(0);
    expect(audits()).toEqual([]);

    const rm = cnv('rm', 'ctx_gone');
    expect(rm.status, rm.stderr).toBe(0);
    const cut = cnv('truncate', 'ctx_cut', '--keep', '4');
    expect(cut.status, cut.stderr).toBe(0);

    const a = audits();
    expect(a).toHaveLength(2);
    const store = fs.realpathSync(path.join(home, 'conversations', 'shey'));
    for (const s of a) {
      expect(s.intent, 'the intent log is gone once the audit is finished').toBe(false);
      expect(s.lines.map((l) => l['event_type'])).toEqual(['session_start', 'retention', 'session_end']);
      expect(s.lines[0]).toMatchObject({ capsule_name: 'murmur-gc', session_id: s.id });
      expect(s.lines[2]).toMatchObject({ exit_status: 'ok' });
    }
    const [rmLine, cutLine] = [a[0]!.lines[1]!, a[1]!.lines[1]!];
    // the runtime's field order, then the one added field
    expect(Object.keys(rmLine)).toEqual([
      'event_type',
      'event_id',
      'parent_id',
      'session_id',
      'timestamp',
      'store',
      'reason',
      'removed',
      'targets',
      'trigger',
    ]);
    expect(rmLine).toMatchObject({
      store: 'records',
      reason: 'manual',
      removed: 1,
      targets: ['ctx_gone'],
      trigger: 'manual_cli',
    });
    expect(Object.keys(cutLine)).toEqual([
      'event_type',
      'event_id',
      'parent_id',
      'session_id',
      'timestamp',
      'store',
      'reason',
      'removed',
      'targets',
      'messages_dropped',
      'trigger',
    ]);
    expect(cutLine).toMatchObject({
      store: 'records',
      reason: 'max_messages',
      removed: 1,
      targets: ['ctx_cut'],
      messages_dropped: 6,
      trigger: 'manual_cli',
    });
    expect(a[0]!.where).toEqual({ ctx_gone: store });

    const h1 = f.runCli(['history', '--target', 'ctx_gone'], T);
    expect(h1.status, h1.stderr).toBe(0);
    expect(h1.stdout).toContain(`ctx_gone:\n  removed by hand (murmur-gc conversation rm; audit ${a[0]!.id}) at `);
    expect(h1.stdout).toContain(`from record store ${store}; ok`);
    const h2 = f.runCli(['history', '--target', 'ctx_cut', '--json'], T);
    expect(h2.status).toBe(0);
    expect(f.json<{ matches: unknown[] }>(h2).matches).toEqual([
      expect.objectContaining({
        audit: a[1]!.id,
        action: 'truncated',
        manual: true,
        reason: 'max_messages',
        origin: store,
      }),
    ]);
    const list = f.runCli(['history'], T);
    expect(list.stdout).toContain('by hand (conversation rm): 1 removed');
    expect(list.stdout).toContain('by hand (conversation truncate): 1 record truncated, 6 messages dropped');

    // a later sweep neither "recovers" nor changes them
    const sweep = f.runCli(['sweep'], T);
    expect(sweep.status, sweep.stderr).toBe(0);
    expect(sweep.stdout).not.toContain('process_interrupted');
    expect(audits().map((s) => s.lines.length)).toEqual([3, 3]);
  });
});
