// What an operator sees, through the built CLI: dry-run wording, the one-shot sweep
// recorded for `status` with the daemon's summary line, log levels and journald priorities, the
// README/docs journal recipes run on real output, the grouped report (-v, -q, --json extras)
// and the TTY progress line (under `script -qc`).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as f from '../helpers/fixtures.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Rec = Record<string, any>;

let T: string;
let home: string;
let root: string;
let root2: string;
const now = Date.now();

beforeEach(() => {
  T = f.tempDir('operator');
  home = path.join(T, '.murmur');
  root = path.join(T, 'app', '.murmur');
  root2 = path.join(T, 'other', '.murmur');
});
afterEach(() => f.rmrf(T));

/** n finished sessions, one second apart, 60 days old (ids and trace mtimes). */
function manySessions(dir: string, n: number, offsetMs = 0): string[] {
  const ids: string[] = [];
  fs.mkdirSync(dir, { recursive: true });
  const t0 = now - 60 * f.DAY + offsetMs;
  for (let i = 0; i < n; i++) {
    const ms = t0 + i * 1000;
    const id = f.idAt('ses_', ms);
    const sdir = path.join(dir, id);
    fs.mkdirSync(sdir, { recursive: true });
    fs.writeFileSync(path.join(sdir, 'trace.jsonl'), f.traceText({ sessionId: id, startMs: ms, end: true }).text);
    fs.utimesSync(path.join(sdir, 'trace.jsonl'), ms / 1000, ms / 1000);
    ids.push(id);
  }
  return ids;
}

function jsonLines(stderr: string): Rec[] {
  const out: Rec[] = [];
  for (const l of stderr.split('\n')) {
    try {
      out.push(JSON.parse(l) as Rec);
    } catch {
      // not a log line
    }
  }
  return out;
}

/** Run the CLI with stderr going to a file whose dev:ino is JOURNAL_STREAM, as systemd does. */
function runUnderJournal(
  args: string[],
  extraEnv: Record<string, string> = {},
): { status: number | null; stderr: string; stdout: string } {
  const errFile = path.join(T, `stderr-${Math.random().toString(16).slice(2)}.log`);
  const fd = fs.openSync(errFile, 'w');
  try {
    const st = fs.fstatSync(fd, { bigint: true });
    const r = spawnSync(process.execPath, [f.BIN, ...args], {
      env: f.cliEnv(T, { JOURNAL_STREAM: `${st.dev}:${st.ino}`, ...extraEnv }),
      stdio: ['ignore', 'pipe', fd],
      encoding: 'utf8',
    });
    return { status: r.status, stdout: r.stdout, stderr: fs.readFileSync(errFile, 'utf8') };
  } finally {
    fs.closeSync(fd);
  }
}

/** Run a shell command line under a pseudo-terminal (util-linux script). */
function underPty(cmd: string, extraEnv: Record<string, string> = {}): { status: number | null; out: string } {
  const r = spawnSync('script', ['-qefc', cmd, '/dev/null'], {
    env: f.cliEnv(T, { COLUMNS: '120', ...extraEnv }),
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { status: r.status, out: r.stdout };
}

describe('dry runs say only what would happen', () => {
  it('a dry run over leftovers says "would remove" and never "removed"; the real run says "removed"', () => {
    fs.mkdirSync(path.join(root, '.murmur-gc-trash.ses_x.ses_0190'), { recursive: true });
    fs.writeFileSync(path.join(root, '.murmur-gc-trash.ses_x.ses_0190', 'trace.jsonl'), 'x');
    f.vouch(home, root, '.murmur-gc-trash.ses_x.ses_0190'); // what the killed run had recorded
    manySessions(root, 3);
    const cfg = f.writeConfig(
      T,
      `log: { level: debug }\nsessions:\n  - root: ${root}\n    retain: { max_sessions: 1 }\n`,
    );
    const dry = f.runCli(['--dry-run', '--config', cfg], T);
    expect(dry.status, dry.stderr).toBe(0);
    const msgs = jsonLines(dry.stderr).map((l) => String(l['msg']));
    expect(msgs.filter((m) => /\bremoved\b/.test(m))).toEqual([]);
    expect(msgs).toContain('would remove a leftover of an interrupted run');
    expect(msgs).toContain('would remove session');
    expect(dry.stdout).toMatch(/would clean leftovers/);
    expect(dry.stdout).not.toMatch(/^\s*(removed|cleaned)/m);
    expect(fs.existsSync(path.join(root, '.murmur-gc-trash.ses_x.ses_0190'))).toBe(true);

    const real = f.runCli(['--config', cfg], T);
    expect(real.status, real.stderr).toBe(0);
    const realMsgs = jsonLines(real.stderr).map((l) => String(l['msg']));
    expect(realMsgs).toContain('leftover of an interrupted run removed');
    expect(realMsgs).toContain('session removed');
    expect(realMsgs.filter((m) => m.startsWith('would'))).toEqual([]);
  });
});

describe('the timer route is first-class', () => {
  it("a one-shot sweep is recorded for status and logs the daemon's sweep_summary line to the journal, even at log.level warn", () => {
    manySessions(root, 4);
    const cfg = f.writeConfig(
      T,
      `log: { level: warn }\nsessions:\n  - root: ${root}\n    retain: { max_sessions: 1 }\n`,
    );
    const r = runUnderJournal(['sweep', '--config', cfg]);
    expect(r.status, r.stderr).toBe(0);
    r.stderr = r.stderr.replace(/^<\d>/gm, '');
    const summaries = jsonLines(r.stderr).filter((l) => l['event'] === 'sweep_summary');
    expect(summaries).toHaveLength(1);
    expect(summaries[0]).toMatchObject({ level: 30, trigger: 'manual', outcome: 'ok', counts: { remove_session: 3 } });
    expect(summaries[0]!['msg']).toMatch(/^sweep ok: 3 sessions removed; /);
    // per-item lines are debug: not at warn
    expect(jsonLines(r.stderr).some((l) => l['msg'] === 'session removed')).toBe(false);

    const st = f.json<Rec>(f.runCli(['status', '--json', '--config', cfg], T));
    expect(st['last_sweep']).toMatchObject({ trigger: 'manual', outcome: 'ok', counts: { remove_session: 3 } });
    const text = f.runCli(['status', '--config', cfg], T).stdout;
    expect(text).not.toContain('none recorded');
    expect(text).toMatch(/last sweep: .*ok \(manual\)/);
  });

  it('a clean one-shot sweep writes nothing on stderr when it is a pipe (cron mails every line), whatever the mode', () => {
    manySessions(root, 4);
    const cfg = f.writeConfig(T, `sessions:\n  - root: ${root}\n    retain: { max_sessions: 1 }\n`);
    fs.mkdirSync(home, { recursive: true });
    for (const args of [['--dry-run'], ['--dry-run', '--json'], ['sweep'], ['sweep', '--json'], ['sweep']]) {
      const r = f.runCli([...args, '--config', cfg], T);
      expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      expect(r.stderr, args.join(' ')).toBe('');
      expect(r.stdout).not.toBe('');
    }
    // the sweeps were recorded all the same (the last one had nothing left to do)
    expect(f.json<Rec>(f.runCli(['status', '--json', '--config', cfg], T))['last_sweep']).toMatchObject({
      trigger: 'manual',
      outcome: 'ok',
    });
    expect(fs.readdirSync(root).filter((n) => n.startsWith('ses_'))).toHaveLength(1);
  });

  it('a dry run records nothing', () => {
    manySessions(root, 2);
    const cfg = f.writeConfig(T, `sessions:\n  - root: ${root}\n    retain: { max_sessions: 1 }\n`);
    fs.mkdirSync(home, { recursive: true });
    expect(f.runCli(['--dry-run', '--config', cfg], T).status).toBe(0);
    expect(f.json<Rec>(f.runCli(['status', '--json', '--config', cfg], T))['last_sweep']).toBeNull();
  });
});

describe('logs an operator can filter', () => {
  it("under the journal every line carries its syslog priority; the docs' jq recipes work on what journald keeps", () => {
    manySessions(root, 3);
    const cfg = f.writeConfig(
      T,
      `log: { level: info }\nsessions:\n  - root: ${root}\n    retain: { max_sessions: 1 }\n  - root: ${path.join(T, 'missing-root')}\n`,
    );
    fs.mkdirSync(path.join(root, '.murmur-gc-trash.ses_y.ses_0190'), { recursive: true });
    f.vouch(home, root, '.murmur-gc-trash.ses_y.ses_0190');
    const r = runUnderJournal(['--config', cfg]);
    expect(r.status, r.stderr).toBe(0);
    const lines = r.stderr.split('\n').filter((l) => l !== '');
    expect(lines.length).toBeGreaterThan(1);
    const want: Record<number, string> = { 20: '7', 30: '6', 40: '4', 50: '3' };
    for (const l of lines) {
      const m = /^<(\d)>(\{.*\})$/.exec(l);
      expect(m, l).not.toBeNull();
      expect(m![1]).toBe(want[(JSON.parse(m![2]!) as Rec)['level'] as number]);
    }
    // journald strips the prefix (SyslogLevelPrefix=yes): `-o cat` prints the JSON; `-p warning` keeps <0>..<4>
    const kept = lines.map((l) => l.replace(/^<\d>/, ''));
    const warningsOnly = lines.filter((l) => Number(l[1]) <= 4).map((l) => JSON.parse(l.slice(3)) as Rec);
    expect(warningsOnly.length).toBeGreaterThan(0);
    expect(warningsOnly.every((l) => (l['level'] as number) >= 40)).toBe(true);

    const doc = fs.readFileSync(path.join(f.REPO, 'docs', 'daemon.md'), 'utf8');
    const recipes = [...doc.matchAll(/jq -cR '([^']+)'/g)].map((m) => m[1]!);
    expect(recipes.length).toBeGreaterThanOrEqual(2);
    const input = kept.join('\n') + '\n';
    const jq = (filter: string) => {
      const out = spawnSync('jq', ['-cR', filter], { input, encoding: 'utf8' });
      expect(out.status, out.stderr).toBe(0);
      return out.stdout
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Rec);
    };
    const summaryRecipe = recipes.find((x) => x.includes('sweep_summary'))!;
    const sums = jq(summaryRecipe.replace(/\s+/g, ' '));
    expect(sums).toHaveLength(1);
    expect(sums[0]).toMatchObject({ outcome: 'ok', counts: { remove_session: 2, remove_debris: 1 } });
    const codeRecipe = recipes.find((x) => x.includes('select(.code)'))!;
    const coded = jq(codeRecipe);
    expect(coded.some((c) => c['code'] === 'process_interrupted')).toBe(true);
  });

  it('without a journal (a pipe) lines are plain JSON, and NO_COLOR leaves no escape codes on a terminal', () => {
    manySessions(root, 2);
    const cfg = f.writeConfig(T, `sessions:\n  - root: ${root}\n    retain: { max_sessions: 1 }\n`);
    const r = f.runCli(['--config', cfg], T, { JOURNAL_STREAM: '1:1' });
    for (const l of r.stderr.split('\n').filter((x) => x !== '')) expect(l.startsWith('{'), l).toBe(true);
    fs.mkdirSync(path.join(root, '.murmur-gc-trash.ses_z.ses_0190'), { recursive: true });
    f.vouch(home, root, '.murmur-gc-trash.ses_z.ses_0190');
    const pty = underPty(`${process.execPath} ${f.BIN} --dry-run --config ${cfg}`, { NO_COLOR: '1' });
    expect(pty.out).toContain('would remove a leftover');
    expect(pty.out).not.toMatch(/\x1b\[\d+m/);
  });
});

describe('a report readable at a glance', () => {
  it('groups actions per root and reason on one screen; -v lists every item; -q prints only errors; --json gains config, schema version and step timings', async () => {
    const a = manySessions(root, 300);
    const b = manySessions(root2, 120, 500);
    f.writeRecord(home, 'shey', 'ctx_old', { capsule: 'shey', messages: 3, mtimeMs: now - 40 * f.DAY });
    f.writeRecord(home, 'shey', 'ctx_long', { capsule: 'shey', messages: 30 });
    const cfg = f.writeConfig(
      T,
      `sessions:\n  - root: ${root}\n    retain: { max_sessions: 10 }\n  - root: ${root2}\n    retain: { max_age: 7d }\nrecords:\n  - store: shey\n    capsule: shey\n    retain: { max_age: 30d, max_messages: 10 }\n`,
    );
    const dry = f.runCli(['--dry-run', '--config', cfg], T);
    expect(dry.status, dry.stderr).toBe(0);
    const lines = dry.stdout.trimEnd().split('\n');
    expect(lines.length).toBeLessThanOrEqual(24);
    // one heading per sessions root or record store (the home shown as ~), its rows below it
    const under = (place: string, re: RegExp) => {
      const at = lines.indexOf(`  ${place}`);
      expect(at, place).toBeGreaterThan(0);
      const rows: string[] = [];
      for (const l of lines.slice(at + 1)) {
        if (!l.startsWith('    ')) break;
        rows.push(l);
      }
      return rows.find((l) => re.test(l));
    };
    expect(
      under('~/app/.murmur', new RegExp(`would remove sessions\\s+max_sessions\\s+${a.length - 10}\\b`)),
    ).toBeDefined();
    expect(under('~/other/.murmur', new RegExp(`would remove sessions\\s+max_age\\s+${b.length}\\b`))).toBeDefined();
    expect(under('record store shey', /would remove records\s+max_age\s+1\b/)).toBeDefined();
    expect(under('record store shey', /would truncate records\s+max_messages\s+1\b.*20 dropped/)).toBeDefined();
    // the columns line up: every row's reason starts where the header's does
    const header = lines.find((l) => /^\s+reason\s+items\s+size$/.test(l))!;
    const col = header.indexOf('reason');
    for (const l of lines.filter((x) => /^\s+would /.test(x)))
      expect(l.slice(col, col + 3)).toMatch(/^(max|0700|shell|proc)/);
    for (const l of lines) expect([...l].length).toBeLessThanOrEqual(80);

    const verbose = f.runCli(['--dry-run', '-v', '--config', cfg], T).stdout;
    expect(verbose.split('\n').filter((l) => l.startsWith('  would remove session ')).length).toBe(
      a.length - 10 + b.length,
    );

    const real = f.runCli(['-q', '--config', cfg], T);
    expect(real.status, real.stderr).toBe(0);
    expect(real.stdout).toBe('');

    manySessions(root, 12, 100_000);
    const j = f.json<Rec>(f.runCli(['--json', '--config', cfg], T));
    expect(j['schema_version']).toBe(2);
    expect(j['config']).toBe(cfg);
    const sweepMod = (await import(
      path.join(f.REPO, 'dist', 'sweep', 'pipeline.js')
    )) as typeof import('../../src/sweep/pipeline.js');
    const names = (j['steps'] as Rec[]).map((s) => s['step']);
    expect(names).toEqual(sweepMod.SWEEP_STEPS.map((s) => s.name));
    for (const n of [
      'lock',
      'recover',
      'scan_sessions',
      'scan_records',
      'plan',
      'debris',
      'chmod',
      'remove',
      'truncate',
      'reconcile',
      'audit',
    ])
      expect(names).toContain(n);
    const remove = (j['steps'] as Rec[]).find((s) => s['step'] === 'remove')!;
    expect(remove['items']).toBe(12);
    expect(typeof remove['ms']).toBe('number');
    expect(j['actions']).toHaveLength(12);
  });

  it('-q still prints errors', () => {
    const wd = path.join(T, 'runs', 'bot');
    f.writeSession(path.join(wd, '.murmur'), { sessionId: f.idAt('ses_', now - 90 * f.DAY), end: true });
    fs.writeFileSync(path.join(wd, 'murmur.yaml'), 'name: bot\ntrace:\n  retain: { max_age: forever }\n');
    manySessions(root, 3);
    const cfg = f.writeConfig(T, `sessions:\n  - workdir: ${wd}\n  - root: ${root}\n    retain: { max_sessions: 1 }\n`);
    const r = f.runCli(['-q', '--config', cfg], T);
    expect(r.status).toBe(1);
    const out = r.stdout.split('\n').filter((l) => l !== '');
    expect(out).toHaveLength(1);
    expect(out[0]).toMatch(/^ {2}error .*\/runs\/bot\/\.murmur {2}\[config_invalid\] /);
  });
});

describe('progress on long runs', () => {
  it('on a TTY a single status line updates in place; never under --json or when stderr is not a TTY', () => {
    manySessions(root, 1500);
    const cfg = f.writeConfig(T, `sessions:\n  - root: ${root}\n    retain: { max_sessions: 1 }\n`);
    // Drawn from the start (MURMUR_GC_PROGRESS_AFTER_MS=0): an idle machine finishes this in < 1 s.
    const tty = underPty(`${process.execPath} ${f.BIN} --dry-run --config ${cfg}`, {
      MURMUR_GC_PROGRESS_AFTER_MS: '0',
    });
    expect(tty.status).toBe(0);
    expect(tty.out).toMatch(
      /\r\x1b\[2Kmurmur-gc \(dry run\): [a-z ]+( · \d+\/\d+)?( · [\d.]+ [KMG]?i?B)? · [\d.]+ (ms|s)/,
    );
    // the line is erased before the report: the report's first line starts clean
    expect(tty.out).toMatch(/\r\x1b\[2Kmurmur-gc dry run \(nothing is changed\)/);
    const json = underPty(`${process.execPath} ${f.BIN} --dry-run --json --config ${cfg}`, {
      MURMUR_GC_PROGRESS_AFTER_MS: '0',
    });
    expect(json.out).not.toContain('\x1b[2K');
    const piped = f.runCli(['--dry-run', '--config', cfg], T, { MURMUR_GC_PROGRESS_AFTER_MS: '0' });
    expect(piped.stderr + piped.stdout).not.toContain('\r');
  });
});

describe('conversation ls shows progress on a terminal', () => {
  it('draws a status line while counting a large record (records, bytes, elapsed), erased before the table; never under --json or off a TTY', () => {
    // ~1.5 MiB: streamed (more than the 1 MiB read-whole size), so the line moves as it reads.
    f.writeRecord(home, 'shey', 'ctx_big', { capsule: 'shey', messages: 15_000 });
    const env = { MURMUR_GC_PROGRESS_AFTER_MS: '0' };
    const tty = underPty(`${process.execPath} ${f.BIN} conversation ls --home ${home}`, env);
    expect(tty.status).toBe(0);
    expect(tty.out).toMatch(/\r\x1b\[2Kmurmur-gc: counting messages · 1 record · [\d.]+ [KM]iB · [\d.]+ (ms|s)/);
    // erased, then the table starts on a clean line
    expect(tty.out).toMatch(/\r\x1b\[2K(\r\n)?RECORD/);
    expect(tty.out).toMatch(/ctx_big +15000/);
    const json = underPty(`${process.execPath} ${f.BIN} conversation ls --json --home ${home}`, env);
    expect(json.status).toBe(0);
    expect(json.out).not.toContain('\x1b[2K');
    const piped = f.runCli(['conversation', 'ls', '--home', home], T, env);
    expect(piped.status).toBe(0);
    expect(piped.stderr + piped.stdout).not.toContain('\r');
    // ls --message reads every record too: the same line, with records done/total
    const msg = underPty(`${process.execPath} ${f.BIN} conversation ls --message msg_nope --home ${home}`, env);
    expect(msg.out).toMatch(/\r\x1b\[2Kmurmur-gc: looking for the message · 1\/1 · [\d.]+ [KM]iB/);
  });
});

describe('status and history agree, and say when', () => {
  function fakeSystemctl(script: string): string {
    const bin = path.join(T, 'fakebin');
    fs.mkdirSync(bin, { recursive: true });
    fs.writeFileSync(path.join(bin, 'systemctl'), `#!/bin/sh\n${script}\n`, { mode: 0o755 });
    return `${bin}:${process.env['PATH'] ?? '/usr/bin:/bin'}`;
  }

  it("status shows murmur-gc.timer's next run when the daemon is not running, and 'unknown' when systemctl cannot say", () => {
    fs.mkdirSync(home, { recursive: true });
    const next = Math.floor((Date.now() + 12 * 60_000) / 1000);
    const active = fakeSystemctl(`printf 'LoadState=loaded\\nActiveState=active\\nNextElapseUSecRealtime=@${next}\\n'`);
    const st = f.runCli(['status'], T, { PATH: active });
    expect(st.status, st.stderr).toBe(0);
    const stamp = new Date(next * 1000).toISOString().slice(0, 19).replace('T', ' ');
    expect(st.stdout).toContain(`next run:   ${stamp} UTC (in 12 min) (murmur-gc.timer)`);
    expect(f.json<Rec>(f.runCli(['status', '--json'], T, { PATH: active }))['timer']).toEqual({
      state: 'active',
      next_run_ms: next * 1000,
    });
    const broken = fakeSystemctl('echo "Failed to connect to bus" >&2; exit 1');
    const noBus = f.runCli(['status'], T, { PATH: broken }).stdout;
    // (wrapped in 80 columns: the words are compared with the line breaks taken out)
    expect(noBus.replace(/\n {12}/g, ' ')).toContain(
      'next run:   unknown: the daemon is not running, and no systemd user manager answered about murmur-gc.timer',
    );
    expect(noBus).not.toContain('failed)');
    // without --config: says the built-in defaults are in use
    expect(noBus).toMatch(/^config: {5}built-in defaults \(no configuration file/m);
    const absent = fakeSystemctl(`printf 'LoadState=not-found\\nActiveState=inactive\\nNextElapseUSecRealtime=\\n'`);
    expect(f.runCli(['status'], T, { PATH: absent }).stdout.replace(/\n {12}/g, ' ')).toContain(
      'murmur-gc.timer is not installed',
    );
  });

  it('a SIGTERMed one-shot sweep is "stopped early" in status and in history, and history --target answers for what it removed; an unknown target exits 1', async () => {
    const ids = manySessions(root, 1500);
    const cfg = f.writeConfig(
      T,
      `log: { level: debug }\nsessions:\n  - root: ${root}\n    retain: { max_sessions: 1 }\n`,
    );
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, [f.BIN, 'sweep', '--config', cfg], {
      env: f.cliEnv(T),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    let removed = 0;
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      removed = (err.match(/"msg":"session removed"/g) ?? []).length;
      if (removed >= 20 && child.exitCode === null && !child.killed) child.kill('SIGTERM');
    });
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    expect(code).toBe(1);
    expect(removed).toBeLessThan(ids.length - 1);
    const st = f.runCli(['status', '--config', cfg], T, { PATH: '/nonexistent' });
    expect(st.stdout).toMatch(/last sweep: .*, stopped early \(manual\)/);
    const h = f.runCli(['history', '--config', cfg], T);
    expect(h.stdout).toMatch(/ses_\w+ {2}stopped early, \d/);
    const hj = f.json<Rec>(f.runCli(['history', '--json', '--config', cfg], T));
    expect(hj['sweeps'][0]).toMatchObject({ exit_status: 'canceled', outcome: 'aborted' });
    const gone = ids.find((id) => !fs.existsSync(path.join(root, id)))!;
    const t = f.runCli(['history', '--target', gone, '--config', cfg], T);
    expect(t.status).toBe(0);
    expect(t.stdout).toMatch(
      /removed by sweep ses_\w+ at .* UTC \(.*\) from sessions root \S+: sessions\/max_sessions .*that sweep: stopped early/,
    );
    expect(t.stdout).toContain(`from sessions root ${root}:`);
    expect(
      f.json<Rec>(f.runCli(['history', '--json', '--target', gone, '--config', cfg], T))['matches'][0],
    ).toMatchObject({ origin: root, store: 'sessions' });
    const unknown = f.runCli(['history', '--target', 'ses_nope', '--config', cfg], T);
    expect(unknown.status).toBe(1);
    expect(unknown.stdout).toContain('ses_nope: no sweep in the audit trail');
  });
});

describe('errors say what to do next', () => {
  it('storage_busy names the holder pid and how long it has held the lock, with a hint', async () => {
    fs.mkdirSync(path.join(home, 'gc'), { recursive: true, mode: 0o700 });
    const lockMod = (await import(
      path.join(f.REPO, 'dist', 'gchome', 'lock.js')
    )) as typeof import('../../src/gchome/lock.js');
    const held = await lockMod.acquireLock(path.join(home, 'gc', 'sweep.lock'), { waitMs: 0 });
    expect(held).toBeDefined();
    try {
      await new Promise((r) => setTimeout(r, 1200));
      for (const args of [[], ['--dry-run']]) {
        const r = f.runCli(args, T);
        expect(r.status).toBe(75);
        expect(r.stderr).toMatch(
          new RegExp(`\\[storage_busy\\]: murmur-gc pid ${process.pid}, holding it for \\d[\\d.]* (ms|s) holds `),
        );
        expect(r.stderr).toContain('hint: murmur-gc status shows whether the daemon is sweeping');
      }
    } finally {
      await held!.release();
    }
  });

  it('an unknown command says so and suggests the nearest one; an unknown option too', () => {
    const r = f.runCli(['stauts'], T);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("unknown command 'stauts'");
    expect(r.stderr).toContain('(Did you mean status?)');
    expect(r.stderr).not.toContain('too many arguments');
    const h = f.runCli(['histroy', '--json'], T);
    expect(h.status).toBe(2);
    expect(h.stderr).toContain('(Did you mean history?)');
  });
});

describe('help and version', () => {
  it("--help shows the default sweep's options, the exit codes and examples; --version names versions and formats", () => {
    const h = f.runCli(['--help'], T);
    expect(h.status).toBe(0);
    for (const flag of ['--dry-run', '--json', '--config <file>', '--home <dir>', '-v, --verbose', '-q, --quiet'])
      expect(h.stdout).toContain(`  ${flag}`);
    expect(h.stdout).toMatch(/Exit codes:\n {2}0 .*\n {2}1 .*\n {2}2 .*\n {2}75 /);
    expect(h.stdout).toContain('murmur-gc --dry-run ');
    expect(h.stdout).toContain('murmur-gc history --target ses_');
    const v = f.runCli(['--version'], T);
    expect(v.status).toBe(0);
    const pkg = JSON.parse(fs.readFileSync(path.join(f.REPO, 'package.json'), 'utf8')) as { version: string };
    expect(v.stdout).toContain(`murmur-gc ${pkg.version}\nnode ${process.version}\nruntime formats understood:`);
    expect(v.stdout).toContain('conversation.jsonl');
    expect(v.stdout).toContain('trace.jsonl');
  });
});

describe('leftovers say why they were there', () => {
  it('a trash directory of a sweep that finished (its removal failed) is cleaned as io_error, not process_interrupted', () => {
    manySessions(root, 2);
    const run = f.idAt('ses_', now - f.DAY);
    const gcDir = path.join(home, 'gc', run);
    fs.mkdirSync(gcDir, { recursive: true, mode: 0o700 });
    const start = {
      event_type: 'session_start',
      event_id: f.idAt('evt_', now - f.DAY),
      parent_id: null,
      session_id: run,
      timestamp: now - f.DAY,
      capsule_name: 'murmur-gc',
      capsule_version: '0.1.0',
    };
    const end = {
      event_type: 'session_end',
      event_id: f.idAt('evt_', now - f.DAY + 5),
      parent_id: start.event_id,
      session_id: run,
      timestamp: now - f.DAY + 5,
      total_turns: 0,
      total_input_tokens: 0,
      total_output_tokens: 0,
      total_tool_calls: 0,
      total_shell_calls: 0,
      duration_ms: 5,
      exit_status: 'failed',
    };
    fs.writeFileSync(path.join(gcDir, 'trace.jsonl'), JSON.stringify(start) + '\n' + JSON.stringify(end) + '\n', {
      mode: 0o600,
    });
    const failedTrash = path.join(root, `.murmur-gc-trash.${run}.ses_gone`);
    fs.mkdirSync(failedTrash);
    const killedTrash = path.join(root, `.murmur-gc-trash.${f.idAt('ses_', now - 2 * f.DAY)}.ses_other`);
    fs.mkdirSync(killedTrash);
    for (const t of [failedTrash, killedTrash]) f.vouch(home, root, path.basename(t));
    const cfg = f.writeConfig(T, `sessions:\n  - root: ${root}\n`);
    const rep = f.json<Rec>(f.runCli(['--json', '--config', cfg], T));
    const debris = (rep['actions'] as Rec[]).filter((a) => a['kind'] === 'remove_debris');
    expect(debris.find((d) => d['path'] === failedTrash)).toMatchObject({ code: 'io_error' });
    expect(debris.find((d) => d['path'] === failedTrash)!['detail']).toContain(
      `left by sweep ${run}, whose removal of it failed`,
    );
    expect(debris.find((d) => d['path'] === killedTrash)).toMatchObject({ code: 'process_interrupted' });
    expect(fs.existsSync(failedTrash)).toBe(false);
  });
});
