// Golden files: the rendered human report (sweep and dry run, default and -v), `status` and
// `history` (human and --json), rendered from fixed inputs at a fixed "now" and compared byte for
// byte with test/golden/*.txt|json. A wording change shows as a diff of those files:
// `UPDATE_GOLDEN=1 npx vitest run test/golden` rewrites them (CONTRIBUTING.md).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderHuman } from '../../src/sweep/report.js';
import type { Layout } from '../../src/layout.js';
import { gatherStatus, renderStatus } from '../../src/commands/status.js';
import { readAuditHistory } from '../../src/commands/audit-read.js';
import { buildHistory, heldNowKey, renderHistory, type HistoryQuery } from '../../src/commands/history.js';
import { historyJson } from '../../src/cli/json-contract.js';
import { recordOneShotSweep } from '../../src/gchome/state.js';
import { loadConfig } from '../../src/config/load.js';
import * as f from '../helpers/fixtures.js';
import {
  FAR_ROOT,
  HOME,
  NOW,
  OPERATOR_HOME,
  cleanReport,
  dryReport,
  fixedId,
  lastSweep,
  realReport,
  statusDoc,
} from './inputs.js';

const DIR = path.dirname(new URL(import.meta.url).pathname);
const UPDATE = process.env['UPDATE_GOLDEN'] === '1';
/** Not a terminal: 80 columns; the operator's home is /home/op. */
const TERM: Layout = { width: 80, homeDir: OPERATOR_HOME };

/** Compare `text` with the golden file `name` (or rewrite it under UPDATE_GOLDEN=1). */
function golden(name: string, text: string): void {
  const file = path.join(DIR, name);
  if (UPDATE) {
    fs.writeFileSync(file, text);
    return;
  }
  expect(fs.existsSync(file), `${name} is missing: UPDATE_GOLDEN=1 npx vitest run test/golden writes it`).toBe(true);
  expect(text).toBe(fs.readFileSync(file, 'utf8'));
}

/** The fixture's temp prefix taken out of every string, so paths read as `/home/op/...`. */
function normalize<T>(v: T, tmp: string, extra: (key: string, value: unknown) => unknown = (_k, x) => x): T {
  return JSON.parse(
    JSON.stringify(v, (k, x: unknown) => extra(k, typeof x === 'string' ? x.split(tmp).join('') : x)),
  ) as T;
}

/**
 * Every line of `text` fits `width` columns — but for a path `-v` lists whole: a line may pass
 * the width only by its last word, a path, and what comes before it fits.
 */
function fits(text: string, width: number, wholePaths = false): void {
  const over = text.split('\n').filter((l) => {
    if ([...l].length <= width) return false;
    const cut = l.lastIndexOf(' ');
    const last = l.slice(cut + 1);
    return !(wholePaths && (last.startsWith('/') || last.startsWith('~/')) && cut < width);
  });
  expect(over, `lines wider than ${width} columns`).toEqual([]);
}

describe('golden: the sweep report', () => {
  it("fits 80 columns (not a terminal) and the terminal's width on one; -v shows every path whole", () => {
    for (const v of ['normal', 'verbose'] as const) {
      for (const r of [realReport(), dryReport(), cleanReport()]) {
        fits(renderHuman(r, v, TERM, NOW), 80, v === 'verbose');
      }
    }
    // A wider terminal shows the long sessions root whole.
    expect(renderHuman(realReport(), 'normal', { ...TERM, width: 132 }, NOW)).toContain(`\n  ${FAR_ROOT}\n`);
    expect(renderHuman(realReport(), 'normal', TERM, NOW)).not.toContain(`\n  ${FAR_ROOT}\n`);
    // -v (to a file, a pipe, 80 columns) lists every item with its whole path, ids included
    const v = renderHuman(realReport(), 'verbose', TERM, NOW);
    for (const a of realReport().actions)
      if (a.kind === 'remove_session') expect(v).toContain(`${a.root.replace(TERM.homeDir ?? '\0', '~')}/${a.target}`);
    expect(v).not.toContain('…');
  });

  it('status fits 80 columns (not a terminal)', () => {
    fits(renderStatus(statusDoc(), NOW), 80);
  });

  it('a real sweep, grouped and -v', () => {
    golden('sweep.txt', renderHuman(realReport(), 'normal', TERM, NOW));
    golden('sweep-verbose.txt', renderHuman(realReport(), 'verbose', TERM, NOW));
  });
  it('a dry run, grouped and -v', () => {
    golden('sweep-dry-run.txt', renderHuman(dryReport(), 'normal', TERM, NOW));
    golden('sweep-dry-run-verbose.txt', renderHuman(dryReport(), 'verbose', TERM, NOW));
  });
  it('a sweep with nothing to do', () => {
    golden('sweep-clean.txt', renderHuman(cleanReport(), 'normal', TERM, NOW));
  });
});

describe('golden: status', () => {
  let tmp: string;
  beforeAll(() => {
    tmp = f.tempDir('mgc-golden-status');
  });
  afterAll(() => f.rmrf(tmp));

  it('human, from a fixed document', () => {
    golden('status.txt', renderStatus(statusDoc(), NOW));
  });

  it('--json and human, gathered from a fixture home (sizes on disk are zeroed: they depend on the filesystem)', async () => {
    const home = tmp + HOME;
    const root = path.join(home, 'sessions');
    fs.mkdirSync(root, { recursive: true });
    for (let i = 0; i < 3; i++)
      f.writeSession(root, {
        sessionId: fixedId('ses_', NOW - (10 + i) * f.DAY, i),
        startMs: NOW - (10 + i) * f.DAY,
        end: true,
      });
    f.writeRecord(home, 'shey', 'ctx_triage', { capsule: 'shey', messages: 4, startMs: NOW - 5 * f.DAY });
    const cfg = f.writeConfig(tmp, `home: ${home}\nsessions:\n  - root: ${root}\n    retain:\n      max_age: 30d\n`);
    await recordOneShotSweep(home, lastSweep(), NOW);
    const config = await loadConfig({ configPath: cfg, env: { HOME: tmp + '/home/op' }, cwd: tmp });
    const doc = normalize(await gatherStatus(config, () => Promise.resolve({ state: 'inactive' }), NOW), tmp, (k, x) =>
      k === 'bytes' || k.endsWith('_bytes')
        ? 0
        : k === 'version'
          ? '0.0.0-golden'
          : k === 'config' && typeof x === 'string'
            ? '/home/op/.config/murmur-gc/config.yaml'
            : x,
    );
    golden('status.json', JSON.stringify(doc, null, 2) + '\n');
    golden('status-fixture.txt', renderStatus(doc, NOW));
  });
});

describe('golden: history', () => {
  let tmp: string;
  let home: string;
  beforeAll(() => {
    tmp = f.tempDir('mgc-golden-history');
    home = tmp + HOME;
    writeAuditTrail(home);
  });
  afterAll(() => f.rmrf(tmp));

  const run = async (q: HistoryQuery) => {
    const read = await readAuditHistory(home, q);
    // The undo window holds B1 now (and ctx_triage's dropped lines): they read as held, not removed.
    const held = new Map([
      [heldNowKey('sessions', B1), NOW + 12 * H],
      [heldNowKey('records', 'ctx_triage'), NOW + 20 * H],
    ]);
    const doc = buildHistory(
      { home, auditRoot: read.auditRoot, exists: read.exists, problems: read.problems, where: read.where, held },
      read.sweeps,
      q,
    );
    return normalize(doc, tmp);
  };

  it('every sweep, human and --json', async () => {
    const doc = await run({});
    golden('history.txt', renderHistory(doc, NOW));
    golden('history.json', JSON.stringify(historyJson(doc), null, 2) + '\n');
  });

  it('--target, human and --json', async () => {
    for (const [name, target] of [
      ['removed', A1],
      ['purged', B2],
      ['held', B1],
      ['restored', B3],
      ['reconciled', LOST],
      ['prefix', A1.slice(0, 20)],
      ['truncated', 'ctx_triage'],
    ] as const) {
      const doc = await run({ target });
      golden(`history-target-${name}.txt`, renderHistory(doc, NOW));
      if (name === 'purged' || name === 'held')
        golden(`history-target-${name}.json`, JSON.stringify(historyJson(doc), null, 2) + '\n');
    }
  });
});

const H = 3_600_000;
const SWEEP_A = fixedId('ses_', NOW - 72 * H, 1);
const SWEEP_B = fixedId('ses_', NOW - 48 * H, 2);
const SWEEP_C = fixedId('ses_', NOW - 24 * H, 3);
const RESTORE = fixedId('ses_', NOW - 12 * H, 4);
const BY_HAND = fixedId('ses_', NOW - 6 * H, 5);
const KILLED = fixedId('ses_', NOW - 1 * H, 6);
const A1 = fixedId('ses_', NOW - 50 * f.DAY, 11);
const A2 = fixedId('ses_', NOW - 51 * f.DAY, 12);
const B1 = fixedId('ses_', NOW - 20 * f.DAY, 21);
const B2 = fixedId('ses_', NOW - 21 * f.DAY, 22);
const B3 = fixedId('ses_', NOW - 22 * f.DAY, 23);
const LOST = fixedId('ses_', NOW - 4 * f.DAY, 31);

/** Six audit sessions: sweeps that removed, held, truncated, reconciled and purged; a restore; a `conversation rm`; a killed sweep. */
function writeAuditTrail(home: string): void {
  const root = `${home}/sessions`;
  const store = `${home}/conversations/shey`;
  let n = 0;
  const write = (
    id: string,
    at: number,
    body: Record<string, unknown>[],
    end: 'ok' | 'failed' | null,
    where?: Record<string, string>,
  ) => {
    const dir = path.join(home, 'gc', id);
    fs.mkdirSync(dir, { recursive: true });
    const start = fixedId('evt_', at, ++n);
    const lines = [
      {
        event_type: 'session_start',
        event_id: start,
        parent_id: null,
        session_id: id,
        timestamp: at,
        capsule_name: 'murmur-gc',
        capsule_version: '0.1.0',
        context_id: null,
      },
      ...body.map((b) => ({
        event_type: b['event_type'],
        event_id: fixedId('evt_', at + 1, ++n),
        parent_id: start,
        session_id: id,
        timestamp: at + 900,
        ...b,
      })),
    ];
    if (end)
      lines.push({
        event_type: 'session_end',
        event_id: fixedId('evt_', at + 1, ++n),
        parent_id: start,
        session_id: id,
        timestamp: at + 5012,
        duration_ms: 5012,
        exit_status: end,
      } as never);
    fs.writeFileSync(path.join(dir, 'trace.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    if (where) fs.writeFileSync(path.join(dir, 'where.json'), JSON.stringify(where) + '\n');
    if (!end) fs.writeFileSync(path.join(dir, 'intent.jsonl'), '');
  };
  const task = fixedId('tsk_', NOW - 72 * H, 1);
  write(
    SWEEP_A,
    NOW - 72 * H,
    [
      { event_type: 'retention', store: 'sessions', reason: 'max_age', removed: 2, targets: [A1, A2] },
      {
        event_type: 'retention',
        store: 'records',
        reason: 'max_messages',
        removed: 2,
        targets: ['ctx_triage', 'ctx_long'],
        messages_dropped: 1203,
      },
      {
        event_type: 'task_start',
        task_id: task,
        context_id: fixedId('ctx_', NOW - 72 * H, 1),
        source: 'detached_lost',
        origin: 'system',
        trust: 'trusted',
        lane: 'system',
        message_parts_bytes: 120,
      },
      { event_type: 'task_end', task_id: task, status: 'ok', turns: 0 },
    ],
    'ok',
    { [A1]: root, [A2]: root, ctx_triage: store, ctx_long: store },
  );
  fs.writeFileSync(
    path.join(home, 'gc', SWEEP_A, 'details.json'),
    JSON.stringify({
      dropped: { ctx_triage: 1200, ctx_long: 3 },
      reconciled: { [task]: { session: LOST, root, work_ids: ['wrk_01', 'wrk_02'] } },
    }) + '\n',
  );
  write(
    SWEEP_B,
    NOW - 48 * H,
    [{ event_type: 'retention', store: 'sessions', reason: 'max_sessions', removed: 3, targets: [B1, B2, B3] }],
    'failed',
    { [B1]: root, [B2]: root, [B3]: root },
  );
  write(
    SWEEP_C,
    NOW - 24 * H,
    [
      {
        event_type: 'quarantine_purge',
        store: 'sessions',
        reason: 'expired',
        removed: 1,
        targets: [B2],
        kinds: ['session'],
      },
    ],
    'ok',
  );
  write(
    RESTORE,
    NOW - 12 * H,
    [{ event_type: 'quarantine_restore', store: 'sessions', held: 'session', target: B3, origin: root }],
    'ok',
  );
  write(
    BY_HAND,
    NOW - 6 * H,
    [
      {
        event_type: 'retention',
        store: 'records',
        reason: 'max_age',
        removed: 1,
        targets: ['ctx_old'],
        trigger: 'manual_cli',
      },
    ],
    'ok',
    { ctx_old: store },
  );
  write(KILLED, NOW - 1 * H, [], null);
}
