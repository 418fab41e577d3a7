import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkConfig, loadConfig } from '../../src/config/load.js';
import { parseConfigYaml } from '../../src/config/parse.js';
import { BIN, cliEnv } from '../helpers/fixtures.js';
import { spawnSync } from 'node:child_process';

const EXAMPLE = fileURLToPath(new URL('../../config.example.yaml', import.meta.url));

let home: string;

beforeEach(async () => {
  home = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), 'murmur-gc-example-')));
});

afterEach(async () => {
  await fsp.rm(home, { recursive: true, force: true });
});

describe('config.example.yaml', () => {
  it('shows every top-level key: set, or (metrics, which needs a directory) commented out and valid once uncommented', async () => {
    const text = await fsp.readFile(EXAMPLE, 'utf8');
    const doc = parseConfigYaml(text, EXAMPLE) as Record<string, unknown>;
    expect(Object.keys(doc).sort()).toEqual(
      [
        'audit',
        'home',
        'keep_free',
        'live_grace',
        'log',
        'max_delete',
        'quarantine',
        'random_delay',
        'records',
        'run_on_start',
        'schedule',
        'sessions',
      ].sort(),
    );
    const uncommented = text.replace(/^#(metrics:| {2}textfile:| {2}interval:)/gm, '$1');
    const file = path.join(home, 'uncommented.yaml');
    await fsp.writeFile(file, uncommented);
    const cfg = await loadConfig({ configPath: file, env: { HOME: home }, cwd: home });
    expect(cfg.metrics).toEqual({
      textfile: '/var/lib/node_exporter/textfile_collector/murmur-gc.prom',
      intervalSecs: 1800,
    });
  });

  it('loads as it is on a fresh machine (nothing it names exists): warnings, no error', async () => {
    const cfg = await loadConfig({ configPath: EXAMPLE, env: { HOME: home }, cwd: home });
    // the records entry whose manifest does not exist is left out; the rest works
    expect(cfg.records.map((r) => r.origin)).toEqual(['records[0]']);
    expect(cfg.sessions.map((s) => [s.origin, s.retain])).toEqual([
      ['sessions[0]', { maxSessions: 50, maxAgeSecs: 30 * 86_400 }],
      ['sessions[1]', undefined],
      ['sessions[2]', undefined],
    ]);
    const check = await checkConfig({ configPath: EXAMPLE, env: { HOME: home }, cwd: home });
    expect(check.errors).toEqual([]);
    expect(check.warnings.map((w) => w.keyPath)).toEqual([
      'home',
      'sessions[0].root',
      'sessions[1].workdir',
      'sessions[2].project',
      'records[1].manifest',
    ]);
    expect(
      check.warnings.every((w) => w.code === 'config_path_missing' && w.file === EXAMPLE && w.line !== undefined),
    ).toBe(true);
  });

  it('`murmur-gc config check` on it exits 0 and prints the effective policy (built CLI)', () => {
    const r = spawnSync(process.execPath, [BIN, 'config', 'check', '--config', EXAMPLE], {
      env: cliEnv(home),
      encoding: 'utf8',
      cwd: home,
    });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(`murmur-gc config check: ${EXAMPLE}\n`);
    expect(r.stdout).toMatch(
      new RegExp(
        `warning\\[config_path_missing\\] ${EXAMPLE.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+:5: records\\[1\\]\\.manifest: '${home}/src/bot/murmur.yaml' does not exist`,
      ),
    );
    expect(r.stdout).toMatch(/shey +shey +records\[0\] +max_messages 2000, max_age 90d +max_bytes 2\.0 GiB +config/);
    expect(r.stdout).toMatch(/0 errors, 5 warnings: the configuration is valid\.\n$/);
    expect(r.stdout).toContain('quarantine: 1d (removals held, murmur-gc restore undoes them)');
    // --check-config is the same check
    const r2 = spawnSync(process.execPath, [BIN, '--check-config', '--json', '--config', EXAMPLE], {
      env: cliEnv(home),
      encoding: 'utf8',
      cwd: home,
    });
    expect(r2.status).toBe(0);
    const doc = JSON.parse(r2.stdout) as {
      schema_version: number;
      config: string;
      ok: boolean;
      errors: unknown[];
      warnings: { key: string }[];
      policy: { records: { store: string; source: { from: string } }[] };
    };
    expect(doc).toMatchObject({ schema_version: 2, config: EXAMPLE, ok: true, errors: [] });
    expect((doc.policy as unknown as { quarantine_secs: number }).quarantine_secs).toBe(86_400);
    expect(doc.warnings).toHaveLength(5);
    expect(doc.policy.records).toEqual([
      expect.objectContaining({ store: 'shey', source: { from: 'config', manifest: null, note: null } }),
    ]);
  });

  it('loads with a fake HOME where the manifests it names exist', async () => {
    // The manifests the example names, under the fake home.
    await fsp.mkdir(path.join(home, 'src/bot'), { recursive: true });
    await fsp.writeFile(
      path.join(home, 'src/bot/murmur.yaml'),
      'name: bot\nversion: 0.1.0\ntrace:\n  retain: { max_sessions: 20 }\ncontext:\n  retain: { max_age: 30d }\n',
    );

    const cfg = await loadConfig({ configPath: EXAMPLE, env: { HOME: home }, cwd: home });
    expect(cfg).toEqual({
      home: path.join(home, '.murmur'),
      userHomes: [home],
      homeKey: 'home',
      schedule: '*/30 * * * *',
      runOnStart: true,
      randomDelaySecs: 0,
      liveGraceSecs: 3600,
      maxDelete: { count: 500, fraction: 0.5 },
      sessions: [
        {
          root: path.join(home, 'src/app/.murmur'),
          retain: { maxSessions: 50, maxAgeSecs: 30 * 86_400 },
          maxBytes: 10 * 1024 ** 3,
          origin: 'sessions[0]',
        },
        // no <workdir>/murmur.yaml under the fake home: no policy
        {
          root: path.join(home, 'runs/bot/.murmur'),
          retain: undefined,
          childrenMaxAgeSecs: 30 * 86_400,
          origin: 'sessions[1]',
        },
        { root: path.join(home, 'src/bot/workdir'), retain: { maxSessions: 20 }, origin: 'sessions[2]' },
      ],
      records: [
        {
          capsule: 'shey',
          store: 'shey',
          retain: { maxMessages: 2000, maxAgeSecs: 90 * 86_400 },
          maxBytes: 2 * 1024 ** 3,
          origin: 'records[0]',
        },
        { capsule: 'bot', store: 'bot', retain: { maxAgeSecs: 30 * 86_400 }, origin: 'records[1]' },
      ],
      keepFree: { kind: 'percent', percent: 10, perSweepPercent: 50 },
      quarantine: { windowSecs: 86_400 },
      audit: { retain: { maxAgeSecs: 90 * 86_400 } },
      log: { level: 'info' },
      source: EXAMPLE,
    });
  });
});
