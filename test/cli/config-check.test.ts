// `murmur-gc config check` through the built CLI: every error at once (file:line:column, key path,
// stable code) with exit 2; warnings alone exit 0; --json carries the same with schema_version.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as f from '../helpers/fixtures.js';

let T: string;
beforeEach(() => {
  T = f.tempDir('cfgcheck');
  fs.mkdirSync(path.join(T, '.murmur'), { mode: 0o700 });
});
afterEach(() => f.rmrf(T));

describe('murmur-gc config check', () => {
  it('lists every error with file:line:column and key path, exits 2; the sweep refuses the same file', () => {
    const file = f.writeConfig(
      T,
      ['sessions:', '  - root: ./a', '    retain: { max_age: 0 }', '  - roots: ./b', 'live_grace: soon', ''].join('\n'),
    );
    const r = f.runCli(['config', 'check', '--config', file], T);
    expect(r.status).toBe(2);
    expect(r.stdout).toContain(
      `error[config_invalid] ${file}:4:5: sessions[1].roots: unknown key 'roots'; expected: root, workdir, project, retain, max_bytes, children, keep_free\n`,
    );
    expect(r.stdout).toContain(`error[config_invalid] ${file}:5:1: live_grace: `);
    expect(r.stdout).toContain(`error[config_invalid] ${file}:3:15: sessions[0].retain.max_age: `);
    expect(r.stdout).toContain(`warning[config_path_missing] ${file}:2:5: sessions[0].root: '${T}/a' does not exist`);
    expect(r.stdout).toMatch(/3 errors, 1 warning: the configuration is not valid/);
    expect(r.stdout).not.toContain('Effective policy');

    const j = f.runCli(['config', 'check', '--json', '--config', file], T);
    expect(j.status).toBe(2);
    const doc = f.json<{
      schema_version: number;
      ok: boolean;
      errors: { key: string; line: number; column: number; code: string; file: string }[];
      policy: unknown;
    }>(j);
    expect(doc.schema_version).toBe(2);
    expect(doc.ok).toBe(false);
    expect(doc.policy).toBeNull();
    // In line order, as a reader meets them.
    expect(doc.errors.map((e) => [e.key, e.line, e.column, e.code, e.file])).toEqual([
      ['sessions[0].retain.max_age', 3, 15, 'config_invalid', file],
      ['sessions[1].roots', 4, 5, 'config_invalid', file],
      ['live_grace', 5, 1, 'config_invalid', file],
    ]);
    const text = r.stdout.split('\n').filter((l) => l.startsWith('error['));
    expect(text.map((l) => l.split(': ')[0])).toEqual([
      `error[config_invalid] ${file}:3:15`,
      `error[config_invalid] ${file}:4:5`,
      `error[config_invalid] ${file}:5:1`,
    ]);

    // The sweep names the first by line and says how to see the rest.
    const sweep = f.runCli(['--dry-run', '--config', file], T);
    expect(sweep.status).toBe(2);
    expect(sweep.stderr).toContain('sessions[0].retain.max_age');
    expect(sweep.stderr).toContain('hint: 2 more errors: `murmur-gc config check` lists every one');
  });

  it('reports every bad key of one block: max_delete with a bad count and a bad fraction gives both', () => {
    const file = f.writeConfig(T, ['home: ./.murmur', 'max_delete: {count: 0, fraction: 1.5}', ''].join('\n'));
    const j = f.json<{ errors: { key: string; message: string; line: number }[] }>(
      f.runCli(['config', 'check', '--json', '--config', file], T),
    );
    expect(j.errors.map((e) => [e.key, e.message, e.line])).toEqual([
      ['max_delete.count', 'must be at least 1', 2],
      ['max_delete.fraction', 'must be at most 1', 2],
    ]);
  });

  it("a value where a string goes is a configuration error (exit 2), never a crash; max_delete's unknown key lists its keys", () => {
    const file = f.writeConfig(T, ['home: {length: {toString: x}}', 'max_delete: {counts: 1}', ''].join('\n'));
    const r = f.runCli(['config', 'check', '--config', file], T);
    expect(r.stderr).not.toContain('unexpected failure');
    expect(r.status).toBe(2);
    expect(r.stdout).toContain(
      `error[config_invalid] ${file}:2:14: max_delete.counts: unknown key 'counts'; expected: count, fraction\n`,
    );
    expect(r.stdout).toContain(`error[config_invalid] ${file}:1:1: home: must be a string\n`);
    expect(r.stdout).not.toContain('must not be empty');
    expect(r.stdout).toMatch(/2 errors, \d+ warnings?: the configuration is not valid/);

    const sweep = f.runCli(['--dry-run', '--config', file], T);
    expect(sweep.status).toBe(2);
    expect(sweep.stderr).not.toContain('unexpected failure');
    expect(sweep.stderr).toContain('home: must be a string');
  });

  it('a valid configuration prints the effective policy per sessions root and record store, and where it came from', () => {
    fs.mkdirSync(path.join(T, 'proj'));
    fs.writeFileSync(
      path.join(T, 'proj', 'murmur.yaml'),
      'name: bot\ntrace:\n  retain: { max_sessions: 7 }\ncontext:\n  retain: { max_messages: 100 }\n',
    );
    const file = f.writeConfig(
      T,
      [
        'home: ./.murmur',
        'sessions:',
        '  - project: ./proj',
        'records:',
        '  - manifest: ./proj/murmur.yaml',
        '    max_bytes: 1G',
        '',
      ].join('\n'),
    );
    const r = f.runCli(['config', 'check', '--config', file], T);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(
      new RegExp(`${T}/proj/workdir +sessions\\[0\\] +max_sessions 7 +- +manifest ${T}/proj/murmur.yaml\n`),
    );
    expect(r.stdout).toMatch(
      new RegExp(`bot +bot +records\\[0\\] +max_messages 100 +max_bytes 1\\.0 GiB +manifest ${T}/proj/murmur.yaml\n`),
    );
    expect(r.stdout).toMatch(/0 errors, 0 warnings: the configuration is valid\.\n$/);
  });

  it('refuses one sessions root under two entries (a glob and a workdir that meet, a symlink), naming both; the sweep refuses it too', () => {
    fs.mkdirSync(path.join(T, 'w', 'bot', '.murmur'), { recursive: true });
    fs.mkdirSync(path.join(T, 'w', 'app', '.murmur'), { recursive: true });
    fs.symlinkSync(path.join(T, 'w', 'app', '.murmur'), path.join(T, 'link'));
    const file = f.writeConfig(
      T,
      [
        'home: ./.murmur', // 1
        'sessions:', // 2
        '  - root: ./w/*/.murmur', // 3
        '    retain: { max_sessions: 50 }', // 4
        '  - workdir: ./w/bot', // 5
        '    retain: { max_age: 1d }', // 6
        '  - root: ./link', // 7
        '    retain: { max_sessions: 2 }', // 8
        '',
      ].join('\n'),
    );
    const j = f.runCli(['config', 'check', '--json', '--config', file], T);
    expect(j.status).toBe(2);
    const doc = f.json<{ errors: { key: string; line: number; message: string }[] }>(j);
    expect(doc.errors.map((e) => [e.key, e.line])).toEqual([
      ['sessions[1]', 5],
      ['sessions[2]', 7],
    ]);
    expect(doc.errors[0]?.message).toBe(
      `'${T}/w/bot/.murmur' is the same sessions root as sessions[0] (line 3): a root has one policy; keep one entry for it (narrow the glob, or merge the two)`,
    );
    expect(doc.errors[1]?.message).toContain(
      `'${T}/link' is the same sessions root as sessions[0] (line 3) ('${T}/w/app/.murmur')`,
    );
    const sweep = f.runCli(['--dry-run', '--config', file], T);
    expect(sweep.status).toBe(2);
    expect(sweep.stderr).toContain('sessions[1]: ');
    expect(sweep.stderr).toContain('is the same sessions root as sessions[0]');
    // The same root written twice, neither existing yet, is refused as well.
    const twice = f.writeConfig(
      T,
      [
        'home: ./.murmur',
        'sessions:',
        '  - root: ./later',
        '  - root: ./later/',
        '    retain: { max_sessions: 2 }',
        '',
      ].join('\n'),
    );
    const t = f.json<{ errors: { key: string; line: number }[] }>(
      f.runCli(['config', 'check', '--json', '--config', twice], T),
    );
    expect(t.errors.map((e) => [e.key, e.line])).toEqual([['sessions[1]', 4]]);
  });

  it('warns about values that delete nearly everything: keep_free of 90% or more, a max_age without a unit; exit 0, sweeps do not repeat it', () => {
    fs.mkdirSync(path.join(T, 'app'));
    const file = f.writeConfig(
      T,
      [
        'home: ./.murmur', // 1
        'keep_free: 95%', // 2
        'sessions:', // 3
        '  - root: ./app', // 4
        '    retain: { max_age: 30 }', // 5
        'records:', // 6
        '  - capsule: shey', // 7
        '    retain: { max_age: "7", max_messages: 10 }', // 8
        'audit:', // 9
        '  retain: { max_age: 30d }', // 10
        '',
      ].join('\n'),
    );
    const r = f.runCli(['config', 'check', '--config', file], T);
    expect(r.status, r.stderr).toBe(0);
    const warnings = r.stdout.split('\n').filter((l) => l.startsWith('warning['));
    expect(warnings).toEqual([
      `warning[config_destructive] ${file}:2:1: keep_free: 95% of the filesystem must stay free: every sweep removes the oldest removable items of every entry with a policy on it until it does — on a filesystem more than 5% full, nearly all of them`,
      `warning[config_destructive] ${file}:5:15: sessions[0].retain.max_age: 30 has no unit and is read as 30 seconds (the runtime's grammar); write 30s to mean seconds, or 30d for days`,
      `warning[config_destructive] ${file}:8:15: records[0].retain.max_age: 7 has no unit and is read as 7 seconds (the runtime's grammar); write 7s to mean seconds, or 7d for days`,
    ]);
    expect(r.stdout).toMatch(/0 errors, 3 warnings: the configuration is valid\.\n$/);
    const sweep = f.runCli(['--dry-run', '--config', file], T);
    expect(sweep.status, sweep.stderr).toBe(0);
    expect(sweep.stderr).not.toContain('config_destructive');
    // Written with units, or under 90%, nothing is warned about.
    const ok = f.writeConfig(
      T,
      ['home: ./.murmur', 'keep_free: 89%', 'sessions:', '  - root: ./app', '    retain: { max_age: 30s }', ''].join(
        '\n',
      ),
    );
    expect(f.runCli(['config', 'check', '--config', ok], T).stdout).toMatch(/0 errors, 0 warnings/);
  });

  it('a records entry with only max_bytes is described as deleting (the oldest go to fit), as the sweep then does', () => {
    const home = path.join(T, '.murmur');
    for (let i = 0; i < 3; i++)
      f.writeRecord(home, 'shey', `ctx_${i}`, {
        capsule: 'shey',
        messages: 40,
        mtimeMs: Date.now() - (10 - i) * f.DAY,
      });
    const file = f.writeConfig(
      T,
      ['home: ./.murmur', 'records:', '  - capsule: shey', '    max_bytes: 4K', ''].join('\n'),
    );
    const r = f.runCli(['config', 'check', '--config', file], T);
    expect(r.status, r.stderr).toBe(0);
    const row = r.stdout.split('\n').find((l) => l.includes('records[0]')) ?? '';
    expect(row).toContain('none (max_bytes removes the oldest to fit)');
    expect(row).not.toContain('nothing deleted');
    const dry = f.runCli(['--dry-run', '--config', file], T);
    expect(dry.status, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/record store shey\n +would remove records +max_bytes +3 /);
  });

  it('shows the metrics file and, when set, the interval the alert rules assume', () => {
    fs.mkdirSync(path.join(T, 'prom'));
    const file = f.writeConfig(
      T,
      ['home: ./.murmur', 'metrics:', '  textfile: ./prom/m.prom', '  interval: 2h', ''].join('\n'),
    );
    const r = f.runCli(['config', 'check', '--config', file], T);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain(`; metrics: ${T}/prom/m.prom (interval 2h)\n`);
    const j = f.json<{ policy: { metrics_textfile: string; metrics_interval_secs: number | null } }>(
      f.runCli(['config', 'check', '--json', '--config', file], T),
    );
    expect(j.policy).toMatchObject({ metrics_textfile: `${T}/prom/m.prom`, metrics_interval_secs: 7200 });
    const plain = f.writeConfig(T, ['home: ./.murmur', 'metrics:', '  textfile: ./prom/m.prom', ''].join('\n'));
    expect(f.runCli(['config', 'check', '--config', plain], T).stdout).toContain(`; metrics: ${T}/prom/m.prom\n`);
  });

  it('every sweep warns about a configured path that does not exist (a mistyped root sweeps nothing), but not about a missing home', () => {
    fs.mkdirSync(path.join(T, 'sessions'), { mode: 0o700 });
    const file = f.writeConfig(
      T,
      [
        'home: ./.murmur',
        'sessions:',
        '  - root: ./sessions',
        '    retain: { max_sessions: 5 }',
        '  - root: ./sesions',
        '    retain: { max_sessions: 5 }',
        '',
      ].join('\n'),
    );
    const sweep = f.runCli(['--dry-run', '--config', file], T);
    expect(sweep.status).toBe(0);
    expect(sweep.stderr).toContain('config_path_missing');
    expect(sweep.stderr).toContain(`${file}:5:5: sessions[1].root: '${T}/sesions' does not exist`);
    expect(sweep.stderr).not.toContain(`'${T}/sessions' does not exist`);
    const json = f.runCli(['--dry-run', '--json', '--config', file], T);
    expect(json.status).toBe(0);
    f.json(json); // stdout stays one report document; the warning goes to stderr
    expect(json.stderr).toContain('"code":"config_path_missing"');

    const homeOnly = f.writeConfig(T, ['home: ./nowhere/.murmur', ''].join('\n'));
    const fresh = f.runCli(['--dry-run', '--config', homeOnly], T);
    expect(fresh.status).toBe(0);
    expect(fresh.stderr).not.toContain('config_path_missing');
  });
});

describe('an invalid configuration does not blind the read-only views', () => {
  it('status, history and quarantine ls show what the home holds, say the configuration is invalid and how to see why, exit 2', () => {
    const app = path.join(T, 'app');
    for (let i = 0; i < 3; i++)
      f.writeSession(app, { sessionId: f.idAt('ses_', Date.now() - (10 - i) * f.DAY), end: true });
    const good = [
      'home: ./.murmur',
      'quarantine: 1d',
      'sessions:',
      '  - root: ./app',
      '    retain: { max_sessions: 1 }',
      '',
    ];
    const file = f.writeConfig(T, good.join('\n'));
    const sweep = f.runCli(['--config', file], T);
    expect(sweep.status, sweep.stderr).toBe(0);
    f.writeConfig(T, [...good.slice(0, -1), 'live_grace: soon', 'max_delete: { count: 0 }', ''].join('\n'));

    const st = f.runCli(['status', '--config', file], T);
    expect(st.status).toBe(2);
    expect(st.stdout).toContain('murmur-gc status — home ~/.murmur\n');
    expect(st.stderr).toContain(`murmur-gc: invalid configuration [config_invalid]: ${file}:6:1: live_grace: `);
    expect(st.stderr).toContain('(and 1 more)');
    expect(st.stderr).toContain('`murmur-gc config check --config FILE` lists every error');

    const h = f.runCli(['history', '--json', '--config', file], T);
    expect(h.status).toBe(2);
    const hd = f.json<{ sweeps: unknown[]; config_invalid: { file: string; errors: number; first: string } }>(h);
    expect(hd.sweeps).toHaveLength(1);
    expect(hd.config_invalid).toMatchObject({ file, errors: 2 });
    expect(hd.config_invalid.first).toContain('live_grace');
    expect(f.runCli(['history', '--config', file], T).stdout).toMatch(/sessions\/max_sessions: 2 sessions taken/);

    const q = f.runCli(['quarantine', 'ls', '--json', '--config', file], T);
    expect(q.status).toBe(2);
    const qd = f.json<{ items: { held_kind: string }[]; window_secs: number | null; config_invalid: unknown }>(q);
    expect(qd.items.map((i) => i.held_kind)).toEqual(['session', 'session']);
    expect(qd.window_secs).toBeNull();
    expect(qd.config_invalid).not.toBeNull();
    const qt = f.runCli(['quarantine', 'ls', '--config', file], T);
    expect(qt.status).toBe(2);
    expect(qt.stdout).toContain('the configuration is invalid: its window is unknown');

    // A file that is not even YAML: the default home is shown.
    fs.writeFileSync(file, 'sessions: [\n');
    const y = f.runCli(['status', '--json', '--config', file], T);
    expect(y.status).toBe(2);
    expect(f.json<{ home: string }>(y).home).toBe(path.join(T, '.murmur'));
  });

  describe('--plan: what the values would remove now', () => {
    const now = Date.now();
    /** finished sessions, oldest first; `live`: one more written just now, without session_end */
    function sessions(root: string, n: number, live = 0): string[] {
      const out: string[] = [];
      for (let i = 0; i < n; i++) {
        const ses = f.idAt('ses_', now - (n - i + 1) * f.DAY);
        f.writeSession(root, {
          sessionId: ses,
          end: true,
          mtimeMs: now - (n - i + 1) * f.DAY,
          files: { 'big.bin': 'x'.repeat(64 << 10) },
        });
        out.push(ses);
      }
      for (let i = 0; i < live; i++) {
        const ses = f.idAt('ses_', now - 60_000 + i);
        f.writeSession(root, { sessionId: ses, end: false, mtimeMs: now, files: { 'big.bin': 'x'.repeat(256 << 10) } });
      }
      return out;
    }

    it('per entry, as the dry run plans it; nothing on disk changes; without --plan nothing is planned', () => {
      const home = path.join(T, '.murmur');
      const root = path.join(T, 'a', '.murmur');
      sessions(root, 5);
      const rec = f.writeRecord(home, 'shey', 'ctx_1', {
        capsule: 'shey',
        messages: 10,
        startMs: now - 20 * f.DAY,
        mtimeMs: now - 20 * f.DAY,
      });
      f.writeRecord(home, 'shey', 'ctx_2', {
        capsule: 'shey',
        messages: 3,
        startMs: now - 2 * f.DAY,
        mtimeMs: now - 2 * f.DAY,
      });
      const file = f.writeConfig(
        T,
        [
          `home: ${home}`,
          'sessions:',
          `  - root: ${root}`,
          '    retain: { max_sessions: 2 }',
          'records:',
          '  - capsule: shey',
          '    retain: { max_messages: 4 }',
          '',
        ].join('\n'),
      );
      const before = f.snapshotTree(T);
      const r = f.runCli(['config', 'check', '--config', file, '--plan'], T);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toContain(
        "What these values would remove or hold now (the dry run's planning; murmur-gc --dry-run -v lists each item):\n",
      );
      expect(r.stdout).toMatch(
        new RegExp(`  sessions\\[0\\] ${root}: would remove 3 sessions now \\(\\d+(\\.\\d)? KiB\\)\\n`),
      );
      expect(r.stdout).toMatch(/ {2}records\[0\] shey: would drop 6 messages from 1 truncated record now \(\d/);
      expect(f.snapshotTree(T)).toEqual(before);
      // the same numbers as the dry run itself
      const dry = f.json<{ actions: { kind: string }[] }>(f.runCli(['--dry-run', '--json', '--config', file], T));
      expect(dry.actions.filter((a) => a.kind === 'remove_session')).toHaveLength(3);
      const j = f.json<{ plan: { entries: Record<string, unknown>[] } }>(
        f.runCli(['config', 'check', '--json', '--config', file, '--plan'], T),
      );
      expect(j.plan.entries).toEqual([
        {
          kind: 'sessions',
          origin: 'sessions[0]',
          root,
          root_exists: true,
          sessions: 3,
          held: 0,
          bytes: expect.any(Number) as number,
          stopped: null,
          stopped_unattended: null,
        },
        {
          kind: 'records',
          origin: 'records[0]',
          store: 'shey',
          records: 0,
          held: 0,
          truncated: 1,
          messages_dropped: 6,
          bytes: expect.any(Number) as number,
          stopped: null,
          stopped_unattended: null,
        },
      ]);
      expect(fs.readFileSync(rec.file, 'utf8').split('\n').filter(Boolean)).toHaveLength(11);
      // opt-in: the plain check plans nothing
      const plain = f.runCli(['config', 'check', '--config', file], T);
      expect(plain.stdout).not.toContain('would remove');
      expect(f.json<{ plan: unknown }>(f.runCli(['config', 'check', '--json', '--config', file], T)).plan).toBeNull();
    });

    it('a max_bytes below what the live data holds now is a config_destructive warning at its line; exit stays 0', () => {
      const root = path.join(T, 'a', '.murmur');
      sessions(root, 2, 2);
      const file = f.writeConfig(
        T,
        [`home: ${path.join(T, '.murmur')}`, 'sessions:', `  - root: ${root}`, '    max_bytes: 100K', ''].join('\n'),
      );
      const r = f.runCli(['config', 'check', '--config', file, '--plan'], T);
      expect(r.status, r.stderr).toBe(0);
      const w = r.stdout.split('\n').find((l) => l.startsWith('warning[config_destructive]'));
      expect(w).toMatch(
        new RegExp(
          `^warning\\[config_destructive\\] ${file}:4:5: sessions\\[0\\]\\.max_bytes: 100\\.0 KiB is below what sessions root ${root} holds now in items its budget may not remove \\(.+: live_session 2 \\(.+\\)\\): it cannot be met while they stay \\(every sweep reports budget_unmet\\)$`,
        ),
      );
      expect(r.stdout).toContain(`sessions[0] ${root}: would remove now: nothing`);
      expect(r.stdout).toMatch(/0 errors, 1 warning: the configuration is valid\./);
      const j = f.json<{ ok: boolean; warnings: { code: string; key: string; line: number }[] }>(
        f.runCli(['config', 'check', '--json', '--config', file, '--plan'], T),
      );
      expect(j.ok).toBe(true);
      expect(j.warnings.map((x) => [x.code, x.key, x.line])).toEqual([
        ['config_destructive', 'sessions[0].max_bytes', 4],
      ]);
      // a budget the removable sessions can meet is no warning, and the plan says what goes for it
      const ok = f.writeConfig(
        T,
        [`home: ${path.join(T, '.murmur')}`, 'sessions:', `  - root: ${root}`, '    max_bytes: 550K', ''].join('\n'),
      );
      const r2 = f.runCli(['config', 'check', '--config', ok, '--plan'], T);
      expect(r2.stdout).not.toContain('config_destructive');
      expect(r2.stdout).toMatch(/would remove [12] sessions? now \(/);
    });

    it('says where the blast-radius guard would stop an entry: unattended (the daemon, the timer), and by hand with max_delete', () => {
      const root = path.join(T, 'a', '.murmur');
      sessions(root, 30);
      const yaml = [
        `home: ${path.join(T, '.murmur')}`,
        'quarantine: 7d',
        'sessions:',
        `  - root: ${root}`,
        '    retain: { max_sessions: 5 }',
        '',
      ];
      const r = f.runCli(['config', 'check', '--config', f.writeConfig(T, yaml.join('\n')), '--plan'], T);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toContain(`  sessions[0] ${root}: would hold 25 sessions now (`);
      expect(r.stdout).toContain(
        '      unattended (the daemon, the timer), the blast-radius guard would stop it: 25 of 30 sessions by every rule together; an unattended sweep removes at most half of a store once it is more than 20 entries; nothing would be taken there\n',
      );
      const j = f.json<{ plan: { entries: Record<string, unknown>[] } }>(
        f.runCli(['config', 'check', '--json', '--config', f.writeConfig(T, yaml.join('\n')), '--plan'], T),
      );
      expect(j.plan.entries[0]).toMatchObject({
        held: 25,
        sessions: 0,
        stopped: null,
        stopped_unattended: { would_take: 25, present: 30 },
      });
      const limited = f.runCli(
        ['config', 'check', '--config', f.writeConfig(T, ['max_delete: { count: 10 }', ...yaml].join('\n')), '--plan'],
        T,
      );
      expect(limited.stdout).toContain(
        `  sessions[0] ${root}: would remove now: nothing (stopped by the blast-radius guard)\n      by hand the blast-radius guard would stop it: 25 of 30 sessions by every rule together; max_delete.count is 10; nothing would be taken there\n`,
      );
    });

    it('no home and no root: says so and still checks the file', () => {
      const file = f.writeConfig(
        T,
        [
          `home: ${path.join(T, 'nohome')}`,
          'sessions:',
          `  - root: ${path.join(T, 'none')}`,
          '    retain: { max_age: 7d }',
          '',
        ].join('\n'),
      );
      const r = f.runCli(['config', 'check', '--config', file, '--plan'], T);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toContain(`warning[config_path_missing] ${file}:3:5: sessions[0].root:`);
      expect(r.stdout).toContain(
        `  no murmur home at ${path.join(T, 'nohome')}: no record store or audit trail to plan\n`,
      );
      expect(r.stdout).toContain(
        `  sessions[0] ${path.join(T, 'none')}: would remove now: nothing (the root does not exist)\n`,
      );
      expect(fs.existsSync(path.join(T, 'nohome'))).toBe(false);
    });
  });
});

describe("config check shows a sessions entry's children policy", () => {
  it('in the retain column and in --json, with and without a retain block', () => {
    fs.mkdirSync(path.join(T, 'a', '.murmur'), { recursive: true });
    fs.mkdirSync(path.join(T, 'b', '.murmur'), { recursive: true });
    const file = f.writeConfig(
      T,
      [
        'home: ./.murmur',
        'sessions:',
        '  - root: ./a/.murmur',
        '    retain: { max_sessions: 5 }',
        '    children: { max_age: 30d }',
        '  - root: ./b/.murmur',
        '    children: { max_age: 12h }',
        '',
      ].join('\n'),
    );
    const r = f.runCli(['config', 'check', '--config', file], T);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`${T}/a/\\.murmur +sessions\\[0\\] +max_sessions 5; children max_age 30d +- `));
    expect(r.stdout).toMatch(
      new RegExp(`${T}/b/\\.murmur +sessions\\[1\\] +children max_age 12h \\(orphaned child workdirs only\\) +- `),
    );
    const j = f.json<{ policy: { sessions: { root: string; children: unknown }[] } }>(
      f.runCli(['config', 'check', '--json', '--config', file], T),
    );
    expect(j.policy.sessions.map((s) => s.children)).toEqual([
      { max_age_secs: 30 * 86400 },
      { max_age_secs: 12 * 3600 },
    ]);
  });
});
