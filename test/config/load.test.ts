import { execFileSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, GcError } from '../../src/errors.js';
import { CONTROL_RULE, SEGMENT_RULE, checkConfig, loadConfig } from '../../src/config/load.js';
import type { LoadConfigOptions } from '../../src/config/load.js';
import { ConfigFileError, expandGlob, readTextFileIfExists } from '../../src/config/files.js';

const FORM = 'must be a duration: an integer, optionally suffixed s/m/h/d';

let tmp: string;
let home: string;

beforeEach(async () => {
  tmp = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), 'murmur-gc-config-')));
  home = path.join(tmp, 'home');
  await fsp.mkdir(home);
});

afterEach(async () => {
  await fsp.rm(tmp, { recursive: true, force: true });
});

async function write(rel: string, content: string): Promise<string> {
  const p = path.join(tmp, rel);
  await fsp.mkdir(path.dirname(p), { recursive: true });
  await fsp.writeFile(p, content);
  return p;
}

/** Writes `content` as tmp/conf/config.yaml and loads it with HOME = tmp/home. */
async function load(content: string, extra: Partial<LoadConfigOptions> = {}) {
  const configPath = await write('conf/config.yaml', content);
  return loadConfig({ configPath, env: { HOME: home }, cwd: tmp, ...extra });
}

async function loadError(p: Promise<unknown>): Promise<ConfigError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('sources', () => {
  it('built-in defaults when there is no file: nothing is deleted', async () => {
    const cfg = await loadConfig({ env: { HOME: home }, cwd: tmp });
    expect(cfg).toEqual({
      home: path.join(home, '.murmur'),
      userHomes: [home],
      homeKey: 'home',
      schedule: '*/30 * * * *',
      runOnStart: true,
      randomDelaySecs: 0,
      liveGraceSecs: 3600,
      sessions: [],
      records: [],
      audit: { retain: { maxAgeSecs: 90 * 86_400 } },
      log: { level: 'info' },
      source: undefined,
    });
  });

  it('reads $XDG_CONFIG_HOME/murmur-gc/config.yaml', async () => {
    const file = await write('xdg/murmur-gc/config.yaml', 'live_grace: 2h\n');
    const cfg = await loadConfig({ env: { HOME: home, XDG_CONFIG_HOME: path.join(tmp, 'xdg') }, cwd: tmp });
    expect(cfg.source).toBe(file);
    expect(cfg.liveGraceSecs).toBe(7200);
  });

  it('falls back to $HOME/.config when XDG_CONFIG_HOME is unset, empty or relative', async () => {
    const file = await write('home/.config/murmur-gc/config.yaml', 'run_on_start: false\n');
    for (const xdg of [undefined, '', 'relative/xdg']) {
      const cfg = await loadConfig({ env: { HOME: home, XDG_CONFIG_HOME: xdg }, cwd: tmp });
      expect(cfg.source).toBe(file);
      expect(cfg.runOnStart).toBe(false);
    }
  });

  it('an empty file is the defaults', async () => {
    const cfg = await load('# nothing here\n');
    expect(cfg.source).toBe(path.join(tmp, 'conf/config.yaml'));
    expect(cfg.sessions).toEqual([]);
    expect(cfg.audit.retain).toEqual({ maxAgeSecs: 90 * 86_400 });
  });

  it('--config that does not exist is an error naming the file', async () => {
    const missing = path.join(tmp, 'nope.yaml');
    const err = await loadError(loadConfig({ configPath: missing, env: { HOME: home } }));
    expect(err.file).toBe(missing);
    expect(err.message).toBe(`${missing}: the configuration file does not exist`);
    expect(err.code).toBe('config_invalid');
    expect(err.exitCode).toBe(2);
  });

  it('--config is resolved against cwd', async () => {
    const file = await write('sub/c.yaml', 'schedule: "0 * * * *"\n');
    const cfg = await loadConfig({ configPath: 'sub/c.yaml', env: { HOME: home }, cwd: tmp });
    expect(cfg.source).toBe(file);
    expect(cfg.schedule).toBe('0 * * * *');
  });

  it('a config that is a directory or a FIFO is refused without blocking', async () => {
    await fsp.mkdir(path.join(tmp, 'dir.yaml'));
    const err = await loadError(loadConfig({ configPath: path.join(tmp, 'dir.yaml'), env: { HOME: home } }));
    expect(err.message).toContain('is not a regular file (a directory)');
    const fifo = path.join(tmp, 'fifo.yaml');
    execFileSync('mkfifo', [fifo]);
    const err2 = await loadError(loadConfig({ configPath: fifo, env: { HOME: home } }));
    expect(err2.file).toBe(fifo);
    expect(err2.message).toContain('is not a regular file (a FIFO)');
  });

  it('YAML syntax errors name the file, line and column', async () => {
    const err = await loadError(load('home: /x\nsessions:\n  - root: [unclosed\n'));
    expect(err.file).toBe(path.join(tmp, 'conf/config.yaml'));
    expect(err.message).toMatch(/^.*config\.yaml: invalid YAML at line \d+, column \d+: /);
    const dup = await loadError(load('live_grace: 1h\nlive_grace: 2h\n'));
    expect(dup.message).toContain('invalid YAML at line 2, column 1: Map keys must be unique');
  });

  it('a top level that is not a mapping is refused', async () => {
    const err = await loadError(load('- root: /x\n'));
    expect(err.message).toContain('must be a block of keys (home, force_home, schedule, run_on_start');
  });
});

describe('quarantine', () => {
  it('is a duration (the undo window), absent by default; zero and garbage are refused with the key path', async () => {
    expect((await load('home: /h\n')).quarantine).toBeUndefined();
    expect((await load('home: /h\nquarantine: 24h\n')).quarantine).toEqual({ windowSecs: 86_400 });
    expect((await load('home: /h\nquarantine: 7d\n')).quarantine).toEqual({ windowSecs: 7 * 86_400 });
    for (const bad of ['0', '24 h', '1.5h', '-1h', 'forever']) {
      const err = await loadError(load(`home: /h\nquarantine: ${bad}\n`));
      expect(err.keyPath).toBe('quarantine');
    }
  });
});

describe('strict schema', () => {
  it('refuses an unknown top-level key, naming it', async () => {
    const err = await loadError(load('home: /h\nlive-grace: 1h\n'));
    expect(err.keyPath).toBe('live-grace');
    expect(err.message).toContain(
      "live-grace: unknown key 'live-grace'; expected: home, force_home, schedule, run_on_start, random_delay, live_grace, max_delete, keep_free, quarantine, sessions, records, audit, log, metrics",
    );
  });

  it.each([
    [
      'sessions:\n  - root: /a\n  - root: /b\n    retian: {max_age: 1d}\n',
      'sessions[1].retian',
      'root, workdir, project, retain, max_bytes, children',
    ],
    ['records:\n  - capsul: shey\n', 'records[0].capsul', 'capsule, store, manifest, retain, max_bytes'],
    ['audit:\n  retention: {max_age: 1d}\n', 'audit.retention', 'retain'],
    ['log:\n  lvl: info\n', 'log.lvl', 'level'],
  ])('refuses a nested unknown key with its path (%#)', async (yaml, keyPath, expected) => {
    const err = await loadError(load(yaml));
    expect(err.keyPath).toBe(keyPath);
    const key = keyPath.split(/[.\]]/).pop();
    expect(err.message).toContain(`${keyPath}: unknown key '${key}'; expected: ${expected}`);
  });

  it.each([
    ['schedule: 5\n', 'schedule', 'must be a string'],
    ['run_on_start: yes\n', 'run_on_start', 'must be true or false'],
    ['home: ""\n', 'home', 'must not be empty'],
    ['sessions: {root: /x}\n', 'sessions', 'must be a list'],
    [
      'sessions:\n  - /x\n',
      'sessions[0]',
      'must be a block of keys (root, workdir, project, retain, max_bytes, children, keep_free)',
    ],
    ['sessions:\n  - root: 5\n', 'sessions[0].root', 'must be a string'],
    ['records:\n  - capsule: [a]\n', 'records[0].capsule', 'must be a string'],
    ['log:\n  level: verbose\n', 'log.level', 'must be one of: trace, debug, info, warn, error, fatal, silent'],
    ['audit: 5\n', 'audit', 'must be a block of keys (retain)'],
  ])('type errors name their path: %j', async (yaml, keyPath, message) => {
    const err = await loadError(load(yaml));
    expect(err.keyPath).toBe(keyPath);
    expect(err.message).toBe(`${path.join(tmp, 'conf/config.yaml')}: ${keyPath}: ${message}`);
  });

  it('children: { max_age } on a sessions entry: parsed, and every malformed form refused with its path', async () => {
    const cfg = await load('sessions:\n  - root: /a/.murmur\n    children: { max_age: 30d }\n  - root: /b/.murmur\n');
    expect(cfg.sessions.map((s) => s.childrenMaxAgeSecs)).toEqual([30 * 86_400, undefined]);
    for (const [yaml, keyPath, message] of [
      ['    children: 30d\n', 'sessions[0].children', 'must be a block of keys (max_age)'],
      ['    children: {}\n', 'sessions[0].children', 'must set max_age (e.g. children: { max_age: 30d })'],
      [
        '    children: { max_age: 30d, max_count: 3 }\n',
        'sessions[0].children.max_count',
        "unknown key 'max_count'; expected: max_age",
      ],
      ['    children: { max_age: 0 }\n', 'sessions[0].children.max_age', undefined],
      ['    children: { max_age: soon }\n', 'sessions[0].children.max_age', undefined],
    ] as const) {
      const err = await loadError(load(`sessions:\n  - root: /a/.murmur\n${yaml}`));
      expect(err.keyPath, yaml).toBe(keyPath);
      if (message) expect(err.message).toBe(`${path.join(tmp, 'conf/config.yaml')}: ${keyPath}: ${message}`);
    }
  });

  it('null sections read as absent', async () => {
    const cfg = await load('sessions:\nrecords:\naudit:\nlog:\n');
    expect(cfg.sessions).toEqual([]);
    expect(cfg.records).toEqual([]);
    expect(cfg.audit.retain).toEqual({ maxAgeSecs: 90 * 86_400 });
    expect(cfg.log.level).toBe('info');
  });

  it('retain blocks in the config follow the runtime rules, naming config paths', async () => {
    const cases: Array<[string, string, string]> = [
      ['sessions:\n  - root: /x\n    retain:\n', 'sessions[0].retain', 'must declare at least one key'],
      [
        'sessions:\n  - root: /x\n    retain: {max_session: 5}\n',
        'sessions[0].retain',
        "unknown key 'max_session'; expected: max_sessions, max_age",
      ],
      [
        'sessions:\n  - root: /x\n    retain: {max_sessions: 5.0}\n',
        'sessions[0].retain.max_sessions',
        'must be a whole number of at least 1',
      ],
      [
        'records:\n  - capsule: c\n    retain: {max_messages: 0}\n',
        'records[0].retain.max_messages',
        'must be at least 1 — a limit of zero',
      ],
      ['records:\n  - capsule: c\n    retain: {max_age: 30 m}\n', 'records[0].retain.max_age', `'30 m' ${FORM}`],
      [
        'records:\n  - capsule: c\n    retain: {max_sessions: 5}\n',
        'records[0].retain',
        "unknown key 'max_sessions'; expected: max_messages, max_age",
      ],
      ['audit:\n  retain: {}\n', 'audit.retain', 'must declare at least one key'],
    ];
    for (const [yaml, keyPath, message] of cases) {
      const err = await loadError(load(yaml));
      expect(err.keyPath).toBe(keyPath);
      expect(err.message).toContain(`${keyPath}: ${message}`);
    }
  });

  it('durations: live_grace > 0, random_delay ≥ 0', async () => {
    const cfg = await load('live_grace: 90m\nrandom_delay: 5m\n');
    expect(cfg.liveGraceSecs).toBe(5400);
    expect(cfg.randomDelaySecs).toBe(300);
    expect((await load('random_delay: 0\n')).randomDelaySecs).toBe(0);
    expect((await load('live_grace: 120\n')).liveGraceSecs).toBe(120);
    const zero = await loadError(load('live_grace: 0s\n'));
    expect(zero.keyPath).toBe('live_grace');
    expect(zero.message).toContain(`live_grace: must be greater than zero; ${FORM}`);
    const bad = await loadError(load('random_delay: 1w\n'));
    expect(bad.message).toContain(`random_delay: '1w' ${FORM}`);
  });

  it('the audit retain block is parsed as a trace block', async () => {
    expect((await load('audit:\n  retain: {max_sessions: 10}\n')).audit.retain).toEqual({ maxSessions: 10 });
    expect((await load('audit: {}\n')).audit.retain).toEqual({ maxAgeSecs: 90 * 86_400 });
  });

  it('log.level', async () => {
    expect((await load('log: {level: debug}\n')).log.level).toBe('debug');
  });
});

describe('schedule', () => {
  it.each(['0 3 * * *', '*/5 * * * * *', '@daily'])('accepts %j', async (s) => {
    expect((await load(`schedule: "${s}"\n`)).schedule).toBe(s);
  });

  it.each(['every 5 minutes', '61 * * * *', '* * * *', ''])('refuses %j naming `schedule`', async (s) => {
    const err = await loadError(load(`schedule: "${s}"\n`));
    expect(err.keyPath).toBe('schedule');
    expect(err.message).toContain(`schedule: '${s}' is not a valid cron expression`);
  });
});

describe('home', () => {
  it('config home, relative to the config file, and ~ expansion', async () => {
    expect((await load('home: ../murmur-home\n')).home).toBe(path.join(tmp, 'murmur-home'));
    expect((await load('home: ~/mh\n')).home).toBe(path.join(home, 'mh'));
    // $HOME itself is never a murmur home (src/config/home.ts) unless forced.
    expect((await loadError(load('home: "~"\n'))).message).toContain(
      `home: '${home}' is your home directory ($HOME) itself`,
    );
    expect((await load('home: "~"\nforce_home: true\n')).home).toBe(home);
    const bare = await loadError(load('home: ~\n'));
    expect(bare.keyPath).toBe('home');
    expect(bare.message).toContain(`home: must be a string (a bare ~ is YAML's null: write "~" or ~/…)`);
    expect((await load('home: /abs/h/\n')).home).toBe('/abs/h');
  });

  it('--home beats the config; a relative --home resolves against cwd', async () => {
    expect((await load('home: /from/config\n', { home: '/from/flag' })).home).toBe('/from/flag');
    expect((await load('home: /from/config\n', { home: 'rel/h', cwd: '/work/dir' })).home).toBe('/work/dir/rel/h');
    expect((await load('', { home: '~/x' })).home).toBe(path.join(home, 'x'));
  });

  it('HOME must be set, non-empty and absolute when it is needed', async () => {
    for (const env of [{}, { HOME: '' }]) {
      const err = await loadError(loadConfig({ env, cwd: tmp }));
      expect(err.message).toBe('the home directory could not be resolved: HOME is not set in the environment');
    }
    const rel = await loadError(loadConfig({ env: { HOME: 'relative/home' }, cwd: tmp }));
    expect(rel.message).toBe('the home directory could not be resolved: HOME is not an absolute path');

    const configPath = await write('conf/config.yaml', 'sessions:\n  - root: ~/x\n');
    const tilde = await loadError(loadConfig({ configPath, env: {}, home: '/h' }));
    expect(tilde.keyPath).toBe('sessions[0].root');
    expect(tilde.message).toContain(
      'sessions[0].root: the home directory could not be resolved: HOME is not set in the environment',
    );
  });

  it('HOME is not needed when nothing uses it', async () => {
    const configPath = await write('conf/config.yaml', 'home: /h\n');
    const cfg = await loadConfig({ configPath, env: {} });
    expect(cfg.home).toBe('/h');
  });

  it('refuses ~user', async () => {
    const err = await loadError(load('home: ~bob/x\n'));
    expect(err.keyPath).toBe('home');
    expect(err.message).toContain("'~bob/x': only '~' and '~/…' are expanded");
  });
});

describe('sessions', () => {
  it('root entries: absolute, relative to the config dir, ~, with or without retain', async () => {
    const cfg = await load(
      [
        'sessions:',
        '  - root: /abs/root/',
        '    retain: { max_sessions: 50, max_age: 30d }',
        '  - root: ../rel/.murmur',
        '  - root: ~/app/.murmur',
        '',
      ].join('\n'),
    );
    expect(cfg.sessions).toEqual([
      { root: '/abs/root', retain: { maxSessions: 50, maxAgeSecs: 30 * 86_400 }, origin: 'sessions[0]' },
      { root: path.join(tmp, 'rel/.murmur'), retain: undefined, origin: 'sessions[1]' },
      { root: path.join(home, 'app/.murmur'), retain: undefined, origin: 'sessions[2]' },
    ]);
  });

  it('glob roots expand to one entry per existing match, sorted, skipping dot-dirs', async () => {
    for (const d of ['runs/b/.murmur', 'runs/a/.murmur', 'runs/.hidden/.murmur', 'runs/c', 'runs/a1/.murmur']) {
      await fsp.mkdir(path.join(tmp, d), { recursive: true });
    }
    const cfg = await load('sessions:\n  - root: ../runs/*/.murmur\n    retain: {max_age: 7d}\n');
    expect(cfg.sessions).toEqual(
      ['a', 'a1', 'b'].map((d) => ({
        root: path.join(tmp, 'runs', d, '.murmur'),
        retain: { maxAgeSecs: 7 * 86_400 },
        origin: 'sessions[0]',
      })),
    );
    const q = await load('sessions:\n  - root: ../runs/?/.murmur\n  - root: ../runs/[!b]1/.murmur\n');
    expect(q.sessions.map((s) => [s.origin, path.relative(tmp, s.root)])).toEqual([
      ['sessions[0]', 'runs/a/.murmur'],
      ['sessions[0]', 'runs/b/.murmur'],
      ['sessions[1]', 'runs/a1/.murmur'],
    ]);
    // Two globs that meet on a root give it two entries: refused (one policy per root).
    await expect(load('sessions:\n  - root: ../runs/?/.murmur\n  - root: ../runs/[!a]*/.murmur\n')).rejects.toThrow(
      /sessions\[1\]: '.*runs\/b\/\.murmur' is the same sessions root as sessions\[0\] \(line 2\)/,
    );
    const dot = await load('sessions:\n  - root: ../runs/.*/.murmur\n');
    expect(dot.sessions.map((s) => path.relative(tmp, s.root))).toEqual(['runs/.hidden/.murmur']);
    const none = await load('sessions:\n  - root: ../nowhere/*/.murmur\n');
    expect(none.sessions).toEqual([]);
  });

  it('a literal root is kept even when it does not exist', async () => {
    const cfg = await load('sessions:\n  - root: /does/not/exist\n');
    expect(cfg.sessions).toEqual([{ root: '/does/not/exist', retain: undefined, origin: 'sessions[0]' }]);
  });

  const manifest = (retain: string) =>
    [
      'name: bot',
      'version: 0.1.0',
      'inference:',
      '  endpoint: https://example.invalid',
      '  model: m',
      'capabilities:',
      '  shell: { allow: [bash] }',
      'trace:',
      '  capture: meta',
      retain,
      'context:',
      '  record_store: ignored-here',
      '',
    ].join('\n');

  it('workdir: root <D>/.murmur, policy = trace.retain of <D>/murmur.yaml', async () => {
    await write('runs/bot/murmur.yaml', manifest('  retain:\n    max_sessions: 3\n    max_age: 1d'));
    const cfg = await load('sessions:\n  - workdir: ../runs/bot\n');
    expect(cfg.sessions).toEqual([
      {
        root: path.join(tmp, 'runs/bot/.murmur'),
        retain: { maxSessions: 3, maxAgeSecs: 86_400 },
        origin: 'sessions[0]',
      },
    ]);
  });

  it('project: root <P>/workdir, policy = trace.retain of <P>/murmur.yaml', async () => {
    await write('home/src/bot/murmur.yaml', manifest('  retain: { max_age: 14d }'));
    const cfg = await load('sessions:\n  - project: ~/src/bot\n');
    expect(cfg.sessions).toEqual([
      { root: path.join(home, 'src/bot/workdir'), retain: { maxAgeSecs: 14 * 86_400 }, origin: 'sessions[0]' },
    ]);
  });

  it('no manifest, no trace block, or no trace.retain: no policy', async () => {
    await write('p2/murmur.yaml', 'name: p2\nversion: 1\n');
    await write('p3/murmur.yaml', 'name: p3\ntrace:\n  capture: meta\n');
    await write('p4/murmur.yaml', 'name: p4\ntrace:\n');
    const cfg = await load(
      'sessions:\n  - workdir: ../p1\n  - project: ../p2\n  - project: ../p3\n  - workdir: ../p4\n',
    );
    expect(cfg.sessions.map((s) => s.retain)).toEqual([undefined, undefined, undefined, undefined]);
    expect(cfg.sessions.map((s) => path.relative(tmp, s.root))).toEqual([
      'p1/.murmur',
      'p2/workdir',
      'p3/workdir',
      'p4/.murmur',
    ]);
  });

  it('an explicit retain overrides the manifest (which is then not read)', async () => {
    await write('runs/bot/murmur.yaml', manifest('  retain: { max_sessions: 3 }'));
    await write('runs/broken/murmur.yaml', manifest('  retain: { max_age: forever }'));
    const cfg = await load(
      'sessions:\n  - workdir: ../runs/bot\n    retain: { max_age: 2d }\n  - workdir: ../runs/broken\n    retain: { max_sessions: 9 }\n',
    );
    expect(cfg.sessions.map((s) => s.retain)).toEqual([{ maxAgeSecs: 2 * 86_400 }, { maxSessions: 9 }]);
  });

  it('an invalid manifest retain block is an error naming the manifest and the runtime field path', async () => {
    // A workdir manifest is capsule-writable: a broken one makes its entry inert (deletes nothing)
    // and is reported by every sweep, instead of stopping every sweep.
    const file = await write('runs/bot/murmur.yaml', manifest('  retain:\n    max_age: 5 minutes'));
    const cfg = await load('sessions:\n  - workdir: ../runs/bot\n  - root: /other\n    retain: { max_sessions: 2 }\n');
    expect(cfg.sessions[0]).toEqual({
      root: path.join(tmp, 'runs/bot/.murmur'),
      retain: undefined,
      origin: 'sessions[0]',
      problem: {
        code: 'config_invalid',
        detail: expect.stringContaining(`${file}: trace.retain.max_age: '5 minutes' ${FORM}`) as string,
      },
    });
    expect(cfg.sessions[1]).toMatchObject({ root: '/other', retain: { maxSessions: 2 } });

    const file2 = await write('proj/murmur.yaml', 'name: x\ntrace:\n  retain:\n');
    const err2 = await loadError(load('sessions:\n  - project: ../proj\n'));
    expect(err2.file).toBe(file2);
    expect(err2.keyPath).toBe('trace.retain');
    expect(err2.message).toContain('must declare at least one key');

    const file3 = await write('proj3/murmur.yaml', 'name: x\ntrace: meta\n');
    const err3 = await loadError(load('sessions:\n  - project: ../proj3\n'));
    expect(err3.file).toBe(file3);
    expect(err3.keyPath).toBe('trace');
  });

  it('a manifest that is not valid YAML is an error naming it', async () => {
    const file = await write('proj/murmur.yaml', 'name: bot\ntrace: [\n');
    const err = await loadError(load('sessions:\n  - project: ../proj\n'));
    expect(err.file).toBe(file);
    expect(err.message).toMatch(/murmur\.yaml: invalid YAML at line \d+, column \d+/);
    await write('runs/bot/murmur.yaml', 'name: bot\ntrace: [\n');
    const cfg = await load('sessions:\n  - workdir: ../runs/bot\n');
    expect(cfg.sessions[0]?.problem?.detail).toMatch(/murmur\.yaml: invalid YAML at line \d+, column \d+/);
  });

  it('a workdir manifest that is a symlink or a FIFO is refused, never followed or opened', async () => {
    await write('elsewhere/murmur.yaml', manifest('  retain: { max_sessions: 1 }'));
    await fsp.mkdir(path.join(tmp, 'runs/linked'), { recursive: true });
    await fsp.symlink(path.join(tmp, 'elsewhere/murmur.yaml'), path.join(tmp, 'runs/linked/murmur.yaml'));
    const cfg = await load('sessions:\n  - workdir: ../runs/linked\n');
    expect(cfg.sessions[0]?.retain).toBeUndefined();
    expect(cfg.sessions[0]?.problem).toMatchObject({ code: 'config_invalid' });
    expect(cfg.sessions[0]?.problem?.detail).toContain(path.join(tmp, 'runs/linked/murmur.yaml'));
    expect(cfg.sessions[0]?.problem?.detail).toContain('is a symbolic link');

    await fsp.mkdir(path.join(tmp, 'runs/fifo'), { recursive: true });
    execFileSync('mkfifo', [path.join(tmp, 'runs/fifo/murmur.yaml')]);
    const cfg2 = await load('sessions:\n  - workdir: ../runs/fifo\n');
    expect(cfg2.sessions[0]?.problem?.detail).toContain('is not a regular file (a FIFO)');
  });

  it('each entry names exactly one of root, workdir, project', async () => {
    const none = await loadError(load('sessions:\n  - retain: {max_age: 1d}\n'));
    expect(none.keyPath).toBe('sessions[0]');
    expect(none.message).toContain('must name one of root, workdir or project');
    const two = await loadError(load('sessions:\n  - root: /a\n    workdir: /b\n'));
    expect(two.keyPath).toBe('sessions[0]');
    expect(two.message).toContain('names root and workdir; give exactly one of root, workdir or project');
  });
});

describe('records', () => {
  it('capsule entries: store defaults to the capsule', async () => {
    const cfg = await load(
      'records:\n  - capsule: shey\n    retain: { max_messages: 2000, max_age: 90d }\n  - capsule: bot\n    store: bot-store\n',
    );
    expect(cfg.records).toEqual([
      { capsule: 'shey', store: 'shey', retain: { maxMessages: 2000, maxAgeSecs: 90 * 86_400 }, origin: 'records[0]' },
      { capsule: 'bot', store: 'bot-store', retain: undefined, origin: 'records[1]' },
    ]);
  });

  it.each(['', 'a/b', '.', '..', '.hidden', '/abs', '../x'])(
    'capsule and store %j must be a single path segment',
    async (bad) => {
      const err = await loadError(load(`records:\n  - capsule: ${JSON.stringify(bad)}\n`));
      expect(err.keyPath).toBe('records[0].capsule');
      expect(err.message).toContain(`records[0].capsule: ${SEGMENT_RULE}`);
      const err2 = await loadError(load(`records:\n  - capsule: ok\n    store: ${JSON.stringify(bad)}\n`));
      expect(err2.keyPath).toBe('records[0].store');
      expect(err2.message).toContain(SEGMENT_RULE);
    },
  );

  it('manifest entries take name, context.record_store and context.retain', async () => {
    await write(
      'home/src/bot/murmur.yaml',
      'name: bot\nversion: 1.0.0\ncontext:\n  max_tokens: 1000\n  record_store: " bot-records "\n  retain:\n    max_messages: 500\n',
    );
    await write('home/src/plain/murmur.yaml', 'name: plain\n');
    const cfg = await load(
      'records:\n  - manifest: ~/src/bot/murmur.yaml\n  - manifest: ../home/src/plain/murmur.yaml\n',
    );
    expect(cfg.records).toEqual([
      { capsule: 'bot', store: 'bot-records', retain: { maxMessages: 500 }, origin: 'records[0]' },
      { capsule: 'plain', store: 'plain', retain: undefined, origin: 'records[1]' },
    ]);
  });

  it('an explicit retain overrides the manifest’s context.retain', async () => {
    await write('m/murmur.yaml', 'name: bot\ncontext:\n  retain: { max_messages: 500 }\n');
    const cfg = await load('records:\n  - manifest: ../m/murmur.yaml\n    retain: { max_age: 30d }\n');
    expect(cfg.records[0]?.retain).toEqual({ maxAgeSecs: 30 * 86_400 });
  });

  it('context.retain is inert (as in the runtime) when the manifest records nothing', async () => {
    await write('off/murmur.yaml', 'name: off\ncontext:\n  record: off\n  retain: { max_messages: 5 }\n');
    await write(
      'proc/murmur.yaml',
      'name: proc\ninference:\n  transport: process\ncontext:\n  retain: { max_messages: 5 }\n',
    );
    const cfg = await load('records:\n  - manifest: ../off/murmur.yaml\n  - manifest: ../proc/murmur.yaml\n');
    expect(cfg.records.map((r) => r.retain)).toEqual([undefined, undefined]);
    // …but it is still validated.
    const file = await write('off2/murmur.yaml', 'name: off\ncontext:\n  record: off\n  retain: {}\n');
    const err = await loadError(load('records:\n  - manifest: ../off2/murmur.yaml\n'));
    expect(err.file).toBe(file);
    expect(err.keyPath).toBe('context.retain');
  });

  it('manifest errors name the manifest and the runtime field', async () => {
    const f1 = await write('a/murmur.yaml', 'name: a\ncontext:\n  retain: { max_messages: -1 }\n');
    const e1 = await loadError(load('records:\n  - manifest: ../a/murmur.yaml\n'));
    expect(e1.file).toBe(f1);
    expect(e1.keyPath).toBe('context.retain.max_messages');
    expect(e1.message).toBe(`${f1}: context.retain.max_messages: must be a whole number of at least 1`);

    const f2 = await write('b/murmur.yaml', 'version: 1\n');
    const e2 = await loadError(load('records:\n  - manifest: ../b/murmur.yaml\n'));
    expect(e2.file).toBe(f2);
    expect(e2.keyPath).toBe('name');

    const f3 = await write('c/murmur.yaml', 'name: c\ncontext:\n  record_store: ../escape\n');
    const e3 = await loadError(load('records:\n  - manifest: ../c/murmur.yaml\n'));
    expect(e3.file).toBe(f3);
    expect(e3.keyPath).toBe('context.record_store');
    expect(e3.message).toContain(SEGMENT_RULE);
  });

  it('a missing manifest leaves that entry out with a warning; store with manifest is refused; exactly one of capsule/manifest', async () => {
    await fsp.mkdir(path.join(home, '.murmur'));
    const cfg = await load('records:\n  - manifest: ../none/murmur.yaml\n  - capsule: kept\n');
    expect(cfg.records.map((r) => r.origin)).toEqual(['records[1]']);
    const check = await checkConfig({ configPath: path.join(tmp, 'conf/config.yaml'), env: { HOME: home }, cwd: tmp });
    expect(check.errors).toEqual([]);
    expect(check.warnings).toEqual([
      expect.objectContaining({
        code: 'config_path_missing',
        keyPath: 'records[0].manifest',
        line: 2,
        column: 5,
        message: expect.stringContaining(`'${path.join(tmp, 'none/murmur.yaml')}' does not exist`),
      }),
    ]);

    await write('m/murmur.yaml', 'name: m\n');
    const e2 = await loadError(load('records:\n  - manifest: ../m/murmur.yaml\n    store: s\n'));
    expect(e2.keyPath).toBe('records[0].store');

    const e3 = await loadError(load('records:\n  - capsule: a\n    manifest: ../m/murmur.yaml\n'));
    expect(e3.keyPath).toBe('records[0]');
    const e4 = await loadError(load('records:\n  - store: a\n'));
    expect(e4.keyPath).toBe('records[0]');
    expect(e4.message).toContain('must name one of capsule or manifest');
  });
});

describe('config/files', () => {
  it('readTextFileIfExists: missing → undefined; size limit; symlink policy', async () => {
    expect(await readTextFileIfExists(path.join(tmp, 'missing.yaml'))).toBeUndefined();
    expect(await readTextFileIfExists(path.join(tmp, 'missing-dir/x.yaml'))).toBeUndefined();
    const f = await write('small.yaml', 'a: 1\n');
    expect(await readTextFileIfExists(f)).toBe('a: 1\n');

    const big = await write('big.yaml', 'x'.repeat((1 << 20) + 1));
    await expect(readTextFileIfExists(big)).rejects.toThrow(ConfigFileError);
    await expect(readTextFileIfExists(big)).rejects.toThrow('is larger than 1048576 bytes');
    const exact = await write('exact.yaml', 'x'.repeat(1 << 20));
    expect((await readTextFileIfExists(exact))?.length).toBe(1 << 20);

    const link = path.join(tmp, 'link.yaml');
    await fsp.symlink(f, link);
    expect(await readTextFileIfExists(link)).toBe('a: 1\n');
    const err = await readTextFileIfExists(link, { followSymlinks: false }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GcError);
    expect((err as GcError).code).toBe('symlink');

    await fsp.symlink('/dev/zero', path.join(tmp, 'dev.yaml'));
    const dev = await readTextFileIfExists(path.join(tmp, 'dev.yaml')).catch((e: unknown) => e);
    expect((dev as GcError).code).toBe('not_regular');

    const bad = await write('bad.yaml', '');
    await fsp.writeFile(bad, Buffer.from([0x61, 0xff, 0x62]));
    await expect(readTextFileIfExists(bad)).rejects.toThrow('is not valid UTF-8');
  });

  it('expandGlob: * ? [..], dot rule, literal passthrough, sorted absolute', async () => {
    for (const d of ['g/x1', 'g/x2', 'g/y1', 'g/.x3', 'g/x1/in', 'g/x2/in']) {
      await fsp.mkdir(path.join(tmp, d), { recursive: true });
    }
    await write('g/x9.txt', '');
    const rel = async (p: string) => (await expandGlob(path.join(tmp, p))).map((m) => path.relative(tmp, m));
    expect(await rel('g/*')).toEqual(['g/x1', 'g/x2', 'g/x9.txt', 'g/y1']);
    expect(await rel('g/x?')).toEqual(['g/x1', 'g/x2']);
    expect(await rel('g/[xy]1')).toEqual(['g/x1', 'g/y1']);
    expect(await rel('g/x[0-1]')).toEqual(['g/x1']);
    expect(await rel('g/x[!1]')).toEqual(['g/x2']);
    expect(await rel('g/.x*')).toEqual(['g/.x3']);
    expect(await rel('g/?x3')).toEqual([]);
    expect(await rel('g/*/in')).toEqual(['g/x1/in', 'g/x2/in']);
    expect(await rel('g/*/missing')).toEqual([]);
    expect(await rel('g/x[')).toEqual(['g/x[']); // an unclosed class is literal: no glob
    expect(await expandGlob('/definitely/not/here')).toEqual(['/definitely/not/here']);
    expect(await expandGlob(path.join(tmp, 'g', '..', 'g', 'x1') + '/')).toEqual([path.join(tmp, 'g/x1')]);
  });
});

describe('checkConfig: every problem at once', () => {
  const check = async (content: string) => {
    const configPath = await write('conf/config.yaml', content);
    return checkConfig({ configPath, env: { HOME: home }, cwd: tmp });
  };

  it('reports every error with file, line:column and key path, not only the first', async () => {
    const c = await check(
      [
        'schedule: "every day"', // 1
        'live_grace: 0', // 2
        'sessions:', // 3
        '  - root: /a', // 4
        '    retain: { max_age: 12 weeks }', // 5
        '  - root: /b', // 6
        '    retian: { max_sessions: 3 }', // 7
        'records:', // 8
        '  - capsule: ../x', // 9
        'keep_free: 150%', // 10
        'frobnicate: 1', // 11
        '',
      ].join('\n'),
    );
    const file = path.join(tmp, 'conf/config.yaml');
    const got = c.errors.map((e) => [e.keyPath, e.line, e.column, e.code, e.file]);
    // In line order (not the order the keys are resolved in).
    expect(got).toEqual([
      ['schedule', 1, 1, 'config_invalid', file],
      ['live_grace', 2, 1, 'config_invalid', file],
      ['sessions[0].retain.max_age', 5, 15, 'config_invalid', file],
      ['sessions[1].retian', 7, 5, 'config_invalid', file],
      ['records[0].capsule', 9, 5, 'config_invalid', file],
      ['keep_free', 10, 1, 'config_invalid', file],
      ['frobnicate', 11, 1, 'config_invalid', file],
    ]);
    expect(c.fatal).toBe(7);
    expect(c.config).toBeUndefined();
    // loadConfig throws the first of them by line, counting the rest in its hint
    const thrown = await loadConfig({ configPath: file, env: { HOME: home }, cwd: tmp }).catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as ConfigError).keyPath).toBe('schedule');
    expect((thrown as ConfigError).hint).toBe('6 more errors: `murmur-gc config check` lists every one');
  });

  it('reports every YAML syntax error with its line and column', async () => {
    const c = await check('a: [1, 2\nb: {\n');
    expect(c.errors.length).toBeGreaterThan(1);
    expect(
      c.errors.every(
        (e) => e.line !== undefined && e.column !== undefined && e.message.includes('invalid YAML at line'),
      ),
    ).toBe(true);
  });

  it('warns (and loads) for each root, workdir, project and manifest that does not exist', async () => {
    await fsp.mkdir(path.join(tmp, 'proj'), { recursive: true });
    await fsp.mkdir(path.join(tmp, 'home/.murmur'), { recursive: true });
    const c = await check(
      [
        'sessions:',
        '  - root: ../nowhere/.murmur',
        '  - root: ../nowhere/*/.murmur',
        '  - workdir: ../no-workdir',
        '  - project: ../no-project',
        '  - project: ../proj',
        'records:',
        '  - manifest: ../none/murmur.yaml',
        '',
      ].join('\n'),
    );
    expect(c.errors).toEqual([]);
    expect(c.config).toBeDefined();
    expect(c.warnings.map((w) => [w.code, w.keyPath, w.line])).toEqual([
      ['config_path_missing', 'sessions[0].root', 2],
      ['config_path_missing', 'sessions[1].root', 3],
      ['config_path_missing', 'sessions[2].workdir', 4],
      ['config_path_missing', 'sessions[3].project', 5],
      ['config_path_missing', 'sessions[4].project', 6],
      ['config_path_missing', 'records[0].manifest', 8],
    ]);
    expect(c.warnings[4]!.message).toContain(
      `'${path.join(tmp, 'proj/murmur.yaml')}' does not exist: no policy applies`,
    );
  });

  it('names where each policy came from: the config, a manifest, or nowhere', async () => {
    await write(
      'proj/murmur.yaml',
      'name: bot\ntrace:\n  retain: { max_sessions: 3 }\ncontext:\n  record: off\n  retain: { max_age: 1d }\n',
    );
    const c = await check(
      [
        'sessions:',
        '  - root: /r',
        '    retain: { max_age: 1d }',
        '  - project: ../proj',
        'records:',
        '  - capsule: a',
        '  - manifest: ../proj/murmur.yaml',
        '',
      ].join('\n'),
    );
    expect(c.errors).toEqual([]);
    const manifest = path.join(tmp, 'proj/murmur.yaml');
    expect(Object.fromEntries(c.sources)).toEqual({
      'sessions[0]': { from: 'config' },
      'sessions[1]': { from: 'manifest', manifest },
      'records[0]': { from: 'none' },
      'records[1]': { from: 'none', manifest, note: 'context.record is off: its context.retain is inert' },
    });
  });

  it('an error in a manifest is located in that manifest', async () => {
    const m = await write('proj/murmur.yaml', 'name: bot\ntrace:\n  retain:\n    max_sessions: 0\n');
    const c = await check('sessions:\n  - project: ../proj\n');
    expect(c.errors.map((e) => [e.file, e.keyPath, e.line, e.column])).toEqual([
      [m, 'trace.retain.max_sessions', 4, 5],
    ]);
  });
});

describe('capsule and record store names', () => {
  it.each([
    ['shey\nevil', 'U+000A'],
    ['shey\r', 'U+000D'],
    ['tab\there', 'U+0009'],
    ['bell\u0007', 'U+0007'],
    ['del\u007f', 'U+007F'],
    ['c1\u0085', 'U+0085'],
    ['sep\u2028', 'U+2028'],
  ])('%j is refused wherever a name is taken, naming the file, line and key', async (bad, code) => {
    const quoted = JSON.stringify(bad);
    for (const [yaml, key, line] of [
      [`records:\n  - capsule: ${quoted}\n`, 'records[0].capsule', 2],
      [`records:\n  - capsule: ok\n    store: ${quoted}\n`, 'records[0].store', 3],
    ] as const) {
      const err = await loadError(load(yaml));
      expect(err.code).toBe('config_invalid');
      expect(err.keyPath).toBe(key);
      expect(err.message).toContain(`${key}: ${quoted} holds ${code}: ${CONTROL_RULE}`);
      const check = await checkConfig({
        configPath: path.join(tmp, 'conf/config.yaml'),
        env: { HOME: home },
        cwd: tmp,
      });
      expect(check.errors.map((e) => [e.keyPath, e.line])).toEqual([[key, line]]);
    }
    // A manifest's name and context.record_store, checked as written (before any trimming).
    const m1 = await write('n/murmur.yaml', `name: ${quoted}\n`);
    const e1 = await loadError(load('records:\n  - manifest: ../n/murmur.yaml\n'));
    expect([e1.file, e1.keyPath]).toEqual([m1, 'name']);
    expect(e1.message).toContain(CONTROL_RULE);
    const m2 = await write('s/murmur.yaml', `name: ok\ncontext:\n  record_store: ${quoted}\n`);
    const e2 = await loadError(load('records:\n  - manifest: ../s/murmur.yaml\n'));
    expect([e2.file, e2.keyPath]).toEqual([m2, 'context.record_store']);
    expect(e2.message).toContain(CONTROL_RULE);
  });

  it('a manifest name ending in a newline (a block scalar) is refused, not read as the name without it', async () => {
    await write('b/murmur.yaml', 'name: |\n  shey\n');
    const err = await loadError(load('records:\n  - manifest: ../b/murmur.yaml\n'));
    expect(err.keyPath).toBe('name');
    expect(err.message).toContain('"shey\\n" holds U+000A');
  });

  it('names the runtime accepts still load: spaces trimmed from a manifest value, dots and dashes inside', async () => {
    await write('ok/murmur.yaml', 'name: " my.bot-2 "\ncontext:\n  record_store: " store_1 "\n');
    const cfg = await load('records:\n  - manifest: ../ok/murmur.yaml\n  - capsule: a.b-c_d\n');
    expect(cfg.records.map((r) => [r.capsule, r.store])).toEqual([
      ['my.bot-2', 'store_1'],
      ['a.b-c_d', 'a.b-c_d'],
    ]);
  });
});
