// Property (restore is exactly-once): `murmur-gc restore` SIGKILLed at any point — spread in time
// over putting back the dropped lines of two held truncations of a large record, and exactly at
// each of its steps (the intent, before and after the rewrite's rename, after the step is logged
// done, during and after the held items' removal, a removal that fails) — leaves the record
// exactly as truncated or exactly restored; then the next sweep's recovery leaves the held items
// either all held, whole, with no restore in the audit, or all gone with exactly one
// `quarantine_restore`; and a retried restore (after that sweep, or straight away) ends with every
// dropped line back exactly once, in order: no duplicate line, no lost line, no debris, one
// audited restore.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { restoreTarget } from '../../src/commands/quarantine.js';
import { runSweep } from '../../src/sweep/pipeline.js';
import { loadConfig } from '../../src/config/load.js';
import type { FailpointName } from '../../src/failpoint.js';
import { createLogger } from '../../src/log.js';
import * as f from '../helpers/fixtures.js';
import { readAudits } from './audit-check.js';
import { count, figures } from './soak.js';

let T: string;
let P: string; // pristine tree: a record truncated twice, both cuts held
const MESSAGES = count(20_000, 100_000);
const CUTS = [MESSAGES / 2, MESSAGES / 20];
let original = '';
let truncated = '';
const log = createLogger({ level: 'silent' });
const CTX = 'ctx_restore';

function cli(W: string, args: string[]): void {
  const r = f.runCli([...args, '--config', path.join(W, 'config.yaml')], W);
  if (r.status !== 0) throw new Error(`${args.join(' ')}: exit ${r.status}: ${r.stderr.slice(0, 400)}`);
}

beforeAll(() => {
  T = f.tempDir('rel-restore-crash');
  P = path.join(T, 'pristine');
  const home = path.join(P, '.murmur');
  const rec = f.writeRecord(home, 'shey', CTX, { capsule: 'shey', messages: MESSAGES });
  original = fs.readFileSync(rec.file, 'utf8');
  f.writeConfig(P, `quarantine: 24h\n`);
  for (const keep of CUTS) cli(P, ['conversation', 'truncate', CTX, '--keep', String(keep)]);
  truncated = fs.readFileSync(rec.file, 'utf8');
  if (f.readLines(rec.file).length !== CUTS[CUTS.length - 1]! + 1) throw new Error('pristine record not truncated');
}, 600_000);
afterAll(() => {
  if (T) f.rmrf(T);
});

function fresh(i: number): string {
  const W = path.join(T, `w${i}`);
  fs.cpSync(P, W, { recursive: true, preserveTimestamps: true });
  fs.writeFileSync(path.join(W, 'config.yaml'), fs.readFileSync(path.join(P, 'config.yaml'), 'utf8').replaceAll(P, W));
  for (const d of fs.readdirSync(path.join(W, '.murmur', 'gc', 'quarantine'))) {
    const item = path.join(W, '.murmur', 'gc', 'quarantine', d, 'item.json');
    fs.writeFileSync(item, fs.readFileSync(item, 'utf8').replaceAll(P, W));
  }
  return W;
}

function runKilled(
  W: string,
  afterMs: number,
  failpoint?: string,
): Promise<{ killed: boolean; code: number | null; ms: number }> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const env = { ...f.cliEnv(W), ...(failpoint ? { MURMUR_GC_FAILPOINT: failpoint } : {}) };
    const child = spawn(process.execPath, [f.BIN, 'restore', CTX, '--config', path.join(W, 'config.yaml')], {
      env,
      stdio: 'ignore',
    });
    const timer = afterMs >= 0 ? setTimeout(() => child.kill('SIGKILL'), afterMs) : undefined;
    child.on('exit', (code, sig) => {
      if (timer) clearTimeout(timer);
      resolve({ killed: sig === 'SIGKILL', code, ms: performance.now() - t0 });
    });
  });
}

const recordPath = (W: string) => path.join(W, '.murmur', 'conversations', 'shey', CTX, 'conversation.jsonl');
type RecState = 'truncated' | 'restored' | 'other';
function recordState(W: string): RecState {
  const text = fs.readFileSync(recordPath(W), 'utf8');
  return text === truncated ? 'truncated' : text === original ? 'restored' : 'other';
}

/** Held items: complete ones (sidecar + payload) and anything else left in the quarantine. */
function heldItems(W: string): { complete: number; other: string[] } {
  const q = path.join(W, '.murmur', 'gc', 'quarantine');
  const out = { complete: 0, other: [] as string[] };
  if (!fs.existsSync(q)) return out;
  for (const d of fs.readdirSync(q)) {
    const names = fs.readdirSync(path.join(q, d)).sort();
    if (names.join(',') === 'item.json,record.jsonl') out.complete++;
    else out.other.push(`${d}: ${names.join(',')}`);
  }
  return out;
}

function debris(W: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      if (e.name.endsWith('.tmp') || e.name.startsWith('.murmur-gc-trash.')) out.push(path.join(d, e.name));
      else if (e.isDirectory()) walk(path.join(d, e.name));
    }
  };
  walk(W);
  return out;
}

/** Lost and duplicated message lines of the record against the original (by line). */
function lineDiff(W: string): { lost: number; duplicated: number } {
  const want = original.split('\n').slice(1, -1);
  const got = fs.readFileSync(recordPath(W), 'utf8').split('\n').slice(1, -1);
  const counts = new Map<string, number>();
  for (const l of got) counts.set(l, (counts.get(l) ?? 0) + 1);
  let lost = 0;
  let duplicated = 0;
  for (const l of want) {
    const n = counts.get(l) ?? 0;
    if (n === 0) lost++;
    if (n > 1) duplicated += n - 1;
  }
  return { lost, duplicated };
}

/** After a killed restore: recovery (a sweep, or the retried restore itself), then a retry. */
async function afterKill(
  W: string,
  label: string,
  viaSweep: boolean,
  seen: Record<string, number>,
  problems: string[],
): Promise<void> {
  const home = path.join(W, '.murmur');
  const config = await loadConfig({ configPath: path.join(W, 'config.yaml'), env: { HOME: W }, cwd: W });
  if (viaSweep) {
    const s = await runSweep({ config, dryRun: false, log });
    if (s.errors.length) problems.push(`${label}: the sweep failed: ${JSON.stringify(s.errors).slice(0, 300)}`);
    // Fully held or fully restored, and the audit says which.
    const st = recordState(W);
    const held = heldItems(W);
    const restores = readAudits(home).restored.get(CTX) ?? 0;
    if (held.other.length) problems.push(`${label}: after recovery, partial items: ${held.other.join('; ')}`);
    if (st === 'restored' && (held.complete !== 0 || restores !== 1))
      problems.push(`${label}: restored, but ${held.complete} items still held and ${restores} restores audited`);
    if (st === 'truncated' && (held.complete !== CUTS.length || restores !== 0))
      problems.push(`${label}: not restored, but ${held.complete} items held and ${restores} restores audited`);
    seen[st === 'restored' ? 'recovered_restored' : 'recovered_held']!++;
  }
  try {
    await restoreTarget(config, log, { target: CTX, dryRun: false });
    seen['retried']!++;
  } catch (err) {
    // Nothing left to restore: the killed run's lines are back (completed by recovery).
    if ((err as { code?: string }).code !== 'restore_not_held')
      problems.push(`${label}: retried restore failed: ${String(err)}`);
  }
  // A further retry changes nothing.
  try {
    await restoreTarget(config, log, { target: CTX, dryRun: false });
    problems.push(`${label}: a second retry restored something again`);
  } catch (err) {
    if ((err as { code?: string }).code !== 'restore_not_held') problems.push(`${label}: second retry: ${String(err)}`);
  }
  const d = lineDiff(W);
  seen['lines_lost']! += d.lost;
  seen['lines_duplicated']! += d.duplicated;
  if (recordState(W) !== 'restored')
    problems.push(
      `${label}: the record is not the original after the retry (lost ${d.lost}, duplicated ${d.duplicated})`,
    );
  const held = heldItems(W);
  if (held.complete || held.other.length)
    problems.push(`${label}: items left in the quarantine: ${held.complete} + ${held.other.join('; ')}`);
  const left = debris(W);
  if (left.length) problems.push(`${label}: debris left: ${left.join(', ')}`);
  const audit = readAudits(home);
  problems.push(...audit.problems.map((p) => `${label}: ${p}`));
  if (audit.restored.get(CTX) !== 1) problems.push(`${label}: ${audit.restored.get(CTX) ?? 0} restores audited, not 1`);
  if (audit.messagesRestored.get(CTX) !== MESSAGES - CUTS[CUTS.length - 1]!)
    problems.push(`${label}: audit says ${audit.messagesRestored.get(CTX)} messages restored`);
}

function newSeen(): Record<string, number> {
  return {
    truncated: 0,
    restored: 0,
    other: 0,
    killed: 0,
    exited: 0,
    recovered_restored: 0,
    recovered_held: 0,
    retried: 0,
    lines_lost: 0,
    lines_duplicated: 0,
  };
}

describe('SIGKILL during a restore', () => {
  it('spread in time: the record is exactly truncated or restored; recovery and a retry bring every line back exactly once', async () => {
    const points = Number(process.env['MURMUR_GC_RESTORE_CRASH_POINTS'] ?? 0) || count(6, 200);
    // How long an uninterrupted run takes here (the fastest of three: on a loaded machine a slow
    // one would put many kill points after the run's end).
    let cleanMs = Infinity;
    for (let r = 0; r < 3; r++) {
      const base = fresh(-1 - r);
      const clean = await runKilled(base, -1);
      expect(clean.code).toBe(0);
      expect(recordState(base)).toBe('restored');
      f.rmrf(base);
      cleanMs = Math.min(cleanMs, clean.ms);
    }
    // Half the points spread over the whole run, half over its last 40 % (the rewrite's commit,
    // the removals and the audit come last).
    const half = Math.ceil(points / 2);
    const at = (i: number) =>
      Math.round(
        i < half ? ((i + 0.5) / half) * cleanMs : cleanMs * (0.6 + (0.4 * (i - half + 0.5)) / (points - half)),
      );
    const seen = newSeen();
    const problems: string[] = [];
    for (let i = 0; i < points; i++) {
      const W = fresh(i);
      const k = await runKilled(W, at(i));
      seen[k.killed ? 'killed' : 'exited']!++;
      // A run that ended before its kill point must have succeeded, and was faster than the
      // span: later points move in.
      if (!k.killed && k.code !== 0)
        problems.push(`kill at ${at(i)} ms: the restore ended by itself with exit ${k.code}`);
      if (!k.killed && k.code === 0) cleanMs = Math.min(cleanMs, k.ms);
      const st = recordState(W);
      seen[st]!++;
      if (st === 'other') problems.push(`kill at ${at(i)} ms: the record is neither truncated nor restored`);
      await afterKill(W, `kill at ${at(i)} ms`, i % 2 === 0, seen, problems);
      f.rmrf(W);
      if ((i + 1) % 25 === 0) figures('restore crash (progress)', { done: i + 1, ...seen, problems: problems.length });
    }
    figures('restore crash', {
      kill_points: points,
      run_ms: Math.round(cleanMs),
      messages: MESSAGES,
      held_items: CUTS.length,
      ...seen,
      problems: problems.length,
    });
    expect(problems.slice(0, 8)).toEqual([]);
  }, 7_200_000);

  it('at every step, exactly (fault injection): intent, before/after the rename, logged done, the removals, a failing removal, the audit', async () => {
    const points: [string, RecState][] = [
      ['audit:after_intent', 'truncated'],
      ['rewrite:before_commit', 'truncated'],
      ['rewrite:after_rename', 'restored'],
      ['restore:after_done', 'restored'],
      ['restore:remove_item', 'restored'],
      ['remove:after_trash_rename', 'restored'],
      ['restore:before_audit', 'restored'],
      ['restore:remove_item:error', 'restored'],
    ];
    const named = new Set<FailpointName>(points.map(([p]) => p.replace(/:error$/, '') as FailpointName));
    expect(named.size).toBe(7);
    const seen = newSeen();
    const problems: string[] = [];
    let n = 0;
    for (const [point, state] of points) {
      for (const viaSweep of [true, false]) {
        const W = fresh(1000 + n++);
        const k = await runKilled(W, -1, point);
        expect(point.endsWith(':error') ? k.code === 1 : k.killed, point).toBe(true);
        expect(recordState(W), point).toBe(state);
        seen[state]!++;
        seen[k.killed ? 'killed' : 'exited']!++;
        await afterKill(W, `${point}${viaSweep ? ' (sweep, retry)' : ' (retry)'}`, viaSweep, seen, problems);
        f.rmrf(W);
      }
    }
    figures('restore failpoints', { points: n, ...seen, problems: problems.length });
    expect(problems).toEqual([]);
  }, 1_200_000);
});
