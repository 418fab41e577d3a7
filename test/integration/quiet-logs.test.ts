// What a sweep says on stderr when it has hundreds of skips or errors, through the built CLI:
// one line per (code, sessions root or record store) with the count and the first targets, the
// per-item lines only at debug; the report (stdout, --json) keeps every item.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as f from '../helpers/fixtures.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Rec = Record<string, any>;

let T: string;
let home: string;
let rootA: string;
let rootB: string;
const now = Date.now();

beforeEach(() => {
  T = f.tempDir('quiet-logs');
  home = path.join(T, '.murmur');
  rootA = path.join(T, 'a', '.murmur');
  rootB = path.join(T, 'b', '.murmur');
  fs.mkdirSync(home, { recursive: true, mode: 0o700 });
});
afterEach(() => f.rmrf(T));

/** n live sessions (no session_end, trace written now), minted over the last n seconds. */
function liveSessions(root: string, n: number): string[] {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const startMs = now - (i + 1) * 1000;
    const id = f.idAt('ses_', startMs);
    f.writeSession(root, { sessionId: id, startMs, end: false, mtimeMs: now });
    ids.push(id);
  }
  return ids;
}

/** n finished sessions, 60 days old, owned by another uid (`foreign_owner` when a rule condemns them). */
function foreignSessions(root: string, n: number): string[] {
  const ids = oldSessions(root, n);
  for (const id of ids) {
    fs.chownSync(path.join(root, id), 65534, 65534);
    fs.chownSync(path.join(root, id, 'trace.jsonl'), 65534, 65534);
  }
  return ids;
}

/** n finished sessions, 60 days old. */
function oldSessions(root: string, n: number): string[] {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const startMs = now - 60 * f.DAY + i * 1000;
    const id = f.idAt('ses_', startMs);
    f.writeSession(root, { sessionId: id, startMs, end: true });
    ids.push(id);
  }
  return ids;
}

function lines(stderr: string): Rec[] {
  return stderr
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Rec);
}

describe('hundreds of skips or errors are one log line per cause', () => {
  it('300 and 200 sessions of another user in two roots (498 condemned): two warn lines with the counts, on a dry run and a real one', () => {
    foreignSessions(rootA, 300);
    foreignSessions(rootB, 200);
    const cfg = f.writeConfig(
      T,
      `home: ${home}\nsessions:\n  - root: ${rootA}\n    retain: { max_sessions: 1 }\n  - root: ${rootB}\n    retain: { max_sessions: 1 }\n`,
    );
    for (const args of [
      ['--dry-run', '--json'],
      ['sweep', '--json'],
    ]) {
      const r = f.runCli([...args, '--config', cfg], T);
      expect(r.status, r.stderr).toBe(0);
      const report = f.json<Rec>(r);
      const skipped = report['skipped'] as { target: string; code: string }[];
      expect(skipped.filter((s) => s.code === 'foreign_owner')).toHaveLength(498);
      const ls = lines(r.stderr);
      expect(ls, r.stderr).toHaveLength(2);
      for (const [root, n] of [
        [rootA, 299],
        [rootB, 199],
      ] as const) {
        const l = ls.find((x) => x['root'] === root)!;
        expect(l, r.stderr).toMatchObject({ level: 40, code: 'foreign_owner', count: n });
        expect(l['targets']).toHaveLength(3);
        expect(l['msg']).toContain(`${n} items in ${root} [foreign_owner]: `);
        expect(l['msg']).toContain(` and ${n - 3} more; the first: `);
      }
    }
  });

  it('300 live sessions a rule condemns are the normal state: the report counts them, nothing is logged', () => {
    liveSessions(rootA, 300);
    const cfg = f.writeConfig(T, `home: ${home}\nsessions:\n  - root: ${rootA}\n    retain: { max_sessions: 1 }\n`);
    for (const args of [
      ['--dry-run', '--json'],
      ['sweep', '--json'],
      ['sweep', '--unattended', '-q'],
    ]) {
      const r = f.runCli([...args, '--config', cfg], T);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr, args.join(' ')).toBe('');
      if (args.includes('--json'))
        expect((f.json<Rec>(r)['skipped'] as { code: string }[]).filter((s) => s.code === 'live_session')).toHaveLength(
          299,
        );
      else expect(r.stdout).toBe('');
    }
  });

  it('200 failed removals in one root: one error line and the summary, exit 1; every item stays in the report', () => {
    oldSessions(rootA, 201);
    const cfg = f.writeConfig(T, `home: ${home}\nsessions:\n  - root: ${rootA}\n    retain: { max_sessions: 1 }\n`);
    const r = f.runCli(['sweep', '--json', '--config', cfg], T, {
      MURMUR_GC_FAILPOINT: 'remove:after_trash_rename:error',
    });
    expect(r.status, r.stderr).toBe(1);
    const report = f.json<Rec>(r);
    expect((report['errors'] as unknown[]).length).toBe(200);
    const ls = lines(r.stderr);
    expect(
      ls.map((l) => [l['level'], l['code'], l['event'] ?? null]),
      r.stderr,
    ).toEqual([
      [50, 'io_error', null],
      [40, 'io_error', 'sweep_summary'],
    ]);
    expect(ls[0]).toMatchObject({ root: rootA, count: 200 });
    expect(ls[0]!['msg']).toMatch(/^200 items in .* \[io_error\]: ses_\w+, ses_\w+, ses_\w+ and 197 more; the first: /);
  });

  it('at log.level debug every item has its own line as well (the normal state only that)', () => {
    liveSessions(rootA, 150);
    foreignSessions(rootB, 50);
    const cfg = f.writeConfig(
      T,
      `home: ${home}\nlog: { level: debug }\nsessions:\n  - root: ${rootA}\n    retain: { max_sessions: 1 }\n  - root: ${rootB}\n    retain: { max_sessions: 1 }\n`,
    );
    const r = f.runCli(['--dry-run', '--config', cfg], T);
    expect(r.status, r.stderr).toBe(0);
    const ls = lines(r.stderr);
    expect(ls.filter((l) => l['level'] === 20 && l['code'] === 'live_session')).toHaveLength(149);
    expect(ls.filter((l) => l['level'] === 40 && l['code'] === 'live_session')).toHaveLength(0);
    expect(ls.filter((l) => l['level'] === 20 && l['code'] === 'foreign_owner')).toHaveLength(49);
    expect(ls.filter((l) => l['level'] === 40 && l['code'] === 'foreign_owner')).toHaveLength(1);
  });

  it('on a terminal the grouped line starts on a line of its own: the progress line is erased first', () => {
    foreignSessions(rootA, 150);
    const cfg = f.writeConfig(T, `home: ${home}\nsessions:\n  - root: ${rootA}\n    retain: { max_sessions: 1 }\n`);
    // the progress line is drawn at once (MURMUR_GC_PROGRESS_AFTER_MS=0); stdout goes to a file, the pty shows stderr
    const out = path.join(T, 'report.txt');
    // Logs are pretty on a terminal, but not under CI=… (which .ci/run sets): the run is an operator's.
    const env = f.cliEnv(T, { MURMUR_GC_PROGRESS_AFTER_MS: '0', NO_COLOR: '1', COLUMNS: '200' });
    delete env['CI'];
    const r = spawnSync(
      'script',
      ['-qefc', `${process.execPath} ${f.BIN} --dry-run --config ${cfg} > ${out}`, '/dev/null'],
      {
        env,
        encoding: 'utf8',
        timeout: 120_000,
      },
    );
    expect(r.status, r.stdout).toBe(0);
    const warn = r.stdout.split('\n').filter((l) => l.includes('WARN'));
    expect(warn, r.stdout).toHaveLength(1);
    const shown = warn[0]!.split('\x1b[2K').pop()!.replace(/^\r/, '');
    expect(shown, JSON.stringify(warn[0])).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] WARN: 149 items in /);
  });
});
