import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig, parseConfigYaml } from '../../src/config/load.js';

const EXAMPLE = fileURLToPath(new URL('../../config.example.yaml', import.meta.url));

let home: string;

beforeEach(async () => {
  home = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), 'murmur-gc-example-')));
});

afterEach(async () => {
  await fsp.rm(home, { recursive: true, force: true });
});

describe('config.example.yaml', () => {
  it('sets every top-level key', async () => {
    const doc = parseConfigYaml(await fsp.readFile(EXAMPLE, 'utf8'), EXAMPLE) as Record<string, unknown>;
    expect(Object.keys(doc).sort()).toEqual(
      ['audit', 'home', 'keep_free', 'live_grace', 'log', 'max_delete', 'metrics', 'quarantine', 'random_delay', 'records', 'run_on_start', 'schedule', 'sessions'].sort(),
    );
  });

  it('loads with a fake HOME', async () => {
    // The manifests the example names, under the fake home.
    await fsp.mkdir(path.join(home, 'src/bot'), { recursive: true });
    await fsp.writeFile(
      path.join(home, 'src/bot/murmur.yaml'),
      'name: bot\nversion: 0.1.0\ntrace:\n  retain: { max_sessions: 20 }\ncontext:\n  retain: { max_age: 30d }\n',
    );

    const cfg = await loadConfig({ configPath: EXAMPLE, env: { HOME: home }, cwd: home });
    expect(cfg).toEqual({
      home: path.join(home, '.murmur'),
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
        { root: path.join(home, 'runs/bot/.murmur'), retain: undefined, origin: 'sessions[1]' },
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
      keepFree: { kind: 'percent', percent: 10 },
      quarantine: { windowSecs: 86_400 },
      audit: { retain: { maxAgeSecs: 90 * 86_400 } },
      log: { level: 'info' },
      metrics: { textfile: '/var/lib/node_exporter/textfile_collector/murmur-gc.prom' },
      source: EXAMPLE,
    });
  });
});
