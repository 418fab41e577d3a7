// Property (what goes beside a session is exactly-once): a sweep SIGKILLed at any point while it
// removes (or holds, under a quarantine window) parent sessions of a `--workdir` root with their
// finished child workdirs and `wrk_` logs, and an orphaned child under `children: { max_age }` —
// exactly at every pass of every named point these steps reach (each intent, each trash rename,
// between a session and what goes with it, after each hold's rename, after each registry append) and at spread instants —
// followed by two more runs, ends with every due session, child, log and orphan gone (or held,
// once, inside its own session's hold), nothing the capsule owns or a staying session names
// touched, no debris, and the audit naming each item exactly once.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSweep } from '../../src/sweep/pipeline.js';
import { loadConfig } from '../../src/config/load.js';
import type { FailpointName } from '../../src/failpoint.js';
import { createLogger } from '../../src/log.js';
import * as f from '../helpers/fixtures.js';
import { readAudits } from './audit-check.js';
import { SOAK, count, figures } from './soak.js';

let T: string;
let P: string; // pristine tree
const now = Date.now();
const log = createLogger({ level: 'silent' });
/** per parent session that goes: the children and logs that go with it */
const due = new Map<string, { children: string[]; logs: string[] }>();
let orphan = '';
const kept: string[] = []; // relative to W: what must stay exactly as it was

const app = (W: string) => path.join(W, 'app');
const rootOf = (W: string) => path.join(W, 'app', '.murmur');

function parent(root: string, daysAgo: number, dels: { child: string; ended: boolean }[], works: string[]): string {
  const startMs = now - daysAgo * f.DAY;
  const id = f.idAt('ses_', startMs);
  f.writeSession(root, {
    sessionId: id,
    startMs,
    end: true,
    detached: works.map((w) => ({ workId: w })),
    accounted: works.map((w) => ({ workId: w, type: 'shell_completed' as const })),
    extra: f.delegationLines(
      id,
      startMs,
      dels.map((d) => ({ ...d, child: `.murmur/children/${d.child}` })),
    ),
  });
  return id;
}

function child(root: string, ageDays = 4): string {
  const name = `worker-${f.hex(16)}`;
  const dir = path.join(root, 'children', name);
  fs.mkdirSync(path.join(dir, 'logs'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'task.md'), 'do it');
  fs.writeFileSync(path.join(dir, 'logs', 'bootstrap.log'), 'x'.repeat(5000));
  f.writeSession(path.join(dir, '.murmur'), {
    sessionId: f.idAt('ses_', now - ageDays * f.DAY),
    startMs: now - ageDays * f.DAY,
    end: true,
    files: { 'work/a.txt': 'a'.repeat(3000) },
  });
  const m = (now - ageDays * f.DAY) / 1000;
  fs.utimesSync(dir, m, m);
  return name;
}

function workLog(W: string): string {
  const id = f.idAt('wrk_', now - 5 * f.DAY).replace(/[^0-9a-z_]/g, '');
  fs.mkdirSync(path.join(W, 'logs'), { recursive: true });
  fs.writeFileSync(path.join(W, 'logs', `${id}.log`), 'y'.repeat(3000));
  return id;
}

beforeAll(() => {
  T = f.tempDir('rel-workdir-crash');
  P = path.join(T, 'pristine');
  const W = app(P);
  const root = rootOf(P);
  fs.mkdirSync(path.join(P, '.murmur'), { recursive: true, mode: 0o700 });
  fs.mkdirSync(root, { recursive: true });
  // the capsule's own files
  fs.mkdirSync(path.join(W, 'checkpoints'));
  fs.writeFileSync(path.join(W, 'checkpoints', 'c1.json'), '{}');
  fs.writeFileSync(path.join(W, 'task.md'), 'task');
  fs.writeFileSync(path.join(W, 'murmur.yaml'), 'name: demo\n');
  fs.mkdirSync(path.join(W, 'out'));
  fs.writeFileSync(path.join(W, 'out', 'result.md'), 'r');
  fs.mkdirSync(path.join(W, 'logs'));
  fs.writeFileSync(path.join(W, 'logs', 'shell-1700000000000.log'), 'z'.repeat(2000));
  kept.push('checkpoints', 'task.md', 'murmur.yaml', 'out', 'logs/shell-1700000000000.log');
  // two parents that go (max_sessions: 1), each with finished children and a wrk_ log; one of
  // them also names an unfinished child (kept)
  const a1 = child(root);
  const a2 = child(root);
  const unfinished = child(root);
  const la = workLog(W);
  const a = parent(
    root,
    9,
    [
      { child: a1, ended: true },
      { child: a2, ended: true },
      { child: unfinished, ended: false },
    ],
    [la],
  );
  const b1 = child(root);
  const lb = workLog(W);
  const b = parent(root, 8, [{ child: b1, ended: true }], [lb]);
  due.set(a, { children: [a1, a2], logs: [`${la}.log`] });
  due.set(b, { children: [b1], logs: [`${lb}.log`] });
  // the newest session stays, with the child it names
  const stays = child(root);
  const c = parent(root, 1, [{ child: stays, ended: true }], []);
  kept.push(`.murmur/${c}`, `.murmur/children/${unfinished}`, `.murmur/children/${stays}`);
  orphan = child(root, 10);
  fs.writeFileSync(
    path.join(P, 'config.yaml'),
    `sessions:\n  - root: ${root}\n    retain: { max_sessions: 1 }\n    children: { max_age: 7d }\n`,
  );
});
afterAll(() => {
  if (T) f.rmrf(T);
});

function fresh(label: string, hold: boolean): string {
  const W = path.join(T, label);
  fs.cpSync(P, W, { recursive: true, preserveTimestamps: true });
  // a directory's times are set before its entries are copied in: set them again, deepest first
  const times = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) times(path.join(d, e.name));
    const st = fs.statSync(path.join(P, path.relative(W, d)));
    fs.utimesSync(d, st.atime, st.mtime);
  };
  times(W);
  const yaml = fs.readFileSync(path.join(P, 'config.yaml'), 'utf8').replaceAll(P, W);
  fs.writeFileSync(path.join(W, 'config.yaml'), (hold ? 'quarantine: 24h\n' : '') + yaml);
  return W;
}

function runKilled(W: string, afterMs: number, failpoint?: string): Promise<{ killed: boolean; ms: number }> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const env = { ...f.cliEnv(W), ...(failpoint ? { MURMUR_GC_FAILPOINT: failpoint } : {}) };
    const c = spawn(process.execPath, [f.BIN, '--json', '--config', path.join(W, 'config.yaml')], {
      env,
      stdio: 'ignore',
    });
    const timer = afterMs >= 0 ? setTimeout(() => c.kill('SIGKILL'), afterMs) : undefined;
    c.on('exit', (_code, sig) => {
      if (timer) clearTimeout(timer);
      resolve({ killed: sig === 'SIGKILL', ms: performance.now() - t0 });
    });
  });
}

function snap(W: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of kept) for (const [p, v] of Object.entries(f.snapshotTree(path.join(app(W), k)))) out[`${k}/${p}`] = v;
  return out;
}

function debris(W: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      if (
        e.name.endsWith('.tmp') ||
        e.name.startsWith('.murmur-gc-trash.') ||
        e.name.startsWith('.murmur-gc-kept.') ||
        (e.isDirectory() && e.name.endsWith('.lock'))
      )
        out.push(path.join(d, e.name));
      else if (e.isDirectory()) walk(path.join(d, e.name));
    }
  };
  walk(W);
  return out;
}

/** Two more runs after the killed one; what they must leave, as problems. */
async function afterRetries(
  W: string,
  hold: boolean,
  label: string,
  pristine: Record<string, string>,
  problems: string[],
): Promise<void> {
  const config = await loadConfig({ configPath: path.join(W, 'config.yaml'), env: { HOME: W }, cwd: W });
  for (let i = 0; i < 2; i++) {
    const r = await runSweep({ config, dryRun: false, log });
    if (r.errors.length) problems.push(`${label}: run ${i + 2} failed: ${JSON.stringify(r.errors).slice(0, 400)}`);
  }
  const root = rootOf(W);
  const entries = fs.readdirSync(root);
  const childrenNow = fs.readdirSync(path.join(root, 'children'));
  const logsNow = fs.readdirSync(path.join(app(W), 'logs'));
  for (const [s, items] of due) {
    if (entries.includes(s)) problems.push(`${label}: ${s} still there`);
    for (const c of items.children)
      if (childrenNow.includes(c)) problems.push(`${label}: child ${c} of ${s} still there`);
    for (const l of items.logs) if (logsNow.includes(l)) problems.push(`${label}: log ${l} of ${s} still there`);
    const held = entries.filter((e) => e.startsWith('.murmur-gc-quarantine.') && e.endsWith(`.${s}`));
    if (!hold) {
      if (held.length) problems.push(`${label}: ${s} held without a quarantine window`);
      continue;
    }
    if (held.length !== 1) {
      problems.push(`${label}: ${s} held ${held.length} times`);
      continue;
    }
    const beside = path.join(root, held[0]!, '.murmur-gc-beside');
    const list = (sub: string) =>
      fs.existsSync(path.join(beside, sub)) ? fs.readdirSync(path.join(beside, sub)).sort() : [];
    if (JSON.stringify(list('children')) !== JSON.stringify([...items.children].sort()))
      problems.push(`${label}: ${s}'s hold holds children ${list('children').join(',')}`);
    if (JSON.stringify(list('logs')) !== JSON.stringify([...items.logs].sort()))
      problems.push(`${label}: ${s}'s hold holds logs ${list('logs').join(',')}`);
    for (const c of list('children'))
      if (!fs.existsSync(path.join(beside, 'children', c, 'task.md')))
        problems.push(`${label}: held child ${c} is not whole`);
  }
  if (childrenNow.includes(orphan)) problems.push(`${label}: the orphan is still there`);
  const now2 = snap(W);
  if (JSON.stringify(now2) !== JSON.stringify(pristine))
    problems.push(
      `${label}: something the capsule or a staying session owns changed: ${Object.keys({ ...now2, ...pristine })
        .filter((k) => now2[k] !== pristine[k])
        .join(', ')}`,
    );
  const left = debris(W);
  if (left.length) problems.push(`${label}: debris left: ${left.join(', ')}`);
  const audit = readAudits(path.join(W, '.murmur'));
  problems.push(...audit.problems.map((p) => `${label}: ${p}`));
  const named = [...due].flatMap(([s, items]) => [
    s,
    ...items.children.map((c) => `.murmur/children/${c}`),
    ...items.logs.map((l) => `logs/${l}`),
  ]);
  named.push(`.murmur/children/${orphan}`);
  for (const t of named)
    if (audit.sessions.get(t) !== 1)
      problems.push(`${label}: the audit names ${t} ${audit.sessions.get(t) ?? 0} times`);
  for (const t of audit.sessions.keys())
    if (!named.includes(t)) problems.push(`${label}: the audit names ${t}, which was not due`);
}

const POINTS: FailpointName[] = [
  'audit:after_intent',
  'remove:after_trash_rename',
  'beside:session_boundary',
  'beside:after_hold',
  'registry:after_place',
];
/** How often each point is passed by an unkilled run (the soak run checks every pass is reached). */
const PASSES: Record<'removed' | 'held', Record<string, number>> = {
  // at once: a1, a2, log a, session a, b1, log b, session b, orphan — trash: a1, a2, a, b1, b, orphan
  // registry: the root's names (sessions, children), then the orphan's
  removed: {
    'audit:after_intent': 8,
    'remove:after_trash_rename': 6,
    'beside:session_boundary': 2,
    'beside:after_hold': 0,
    'registry:after_place': 2,
  },
  // held: session a, a1, a2, log a, session b, b1, log b, orphan — trash: the orphan only
  held: {
    'audit:after_intent': 8,
    'remove:after_trash_rename': 1,
    'beside:session_boundary': 2,
    'beside:after_hold': 5,
    'registry:after_place': 2,
  },
};
/** The default run: one pass of each kind of step (a child, a log, a session, the orphan, each boundary). */
const SHORT: Record<'removed' | 'held', [FailpointName, number][]> = {
  removed: [
    ['audit:after_intent', 1],
    ['audit:after_intent', 3],
    ['audit:after_intent', 4],
    ['audit:after_intent', 8],
    ['remove:after_trash_rename', 1],
    ['remove:after_trash_rename', 6],
    ['beside:session_boundary', 1],
    ['registry:after_place', 1],
  ],
  held: [
    ['audit:after_intent', 1],
    ['audit:after_intent', 2],
    ['audit:after_intent', 4],
    ['audit:after_intent', 8],
    ['remove:after_trash_rename', 1],
    ['beside:session_boundary', 1],
    ['beside:after_hold', 1],
    ['beside:after_hold', 3],
    ['registry:after_place', 1],
  ],
};

describe.each([
  ['removed at once', false],
  ['held (quarantine: 24h)', true],
])('SIGKILL while parents go with what lies beside them: %s', (_name, hold) => {
  it('ends, after two more runs, with each due item gone (or held) once and audited once', async () => {
    const tag = hold ? 'h' : 'r';
    const mode = hold ? 'held' : 'removed';
    const problems: string[] = [];
    const seen: Record<string, number> = { killed: 0 };
    // the soak: every pass of every named point (`<point>@n`, n = 1, 2, ... until a run ends
    // unkilled); the default run: one pass of each kind
    const plan: [FailpointName, number][] = SOAK
      ? POINTS.flatMap((pt) =>
          Array.from({ length: PASSES[mode][pt]! + 1 }, (_, i): [FailpointName, number] => [pt, i + 1]),
        )
      : SHORT[mode];
    for (const [point, n] of plan) {
      const W = fresh(`${tag}-${point.replace(':', '_')}-${n}`, hold);
      const pristine = snap(W);
      const k = await runKilled(W, -1, `${point}@${n}`);
      // the pass after the last one is never reached: the run ends by itself
      if (k.killed !== n <= PASSES[mode][point]!) problems.push(`${point}@${n}: ${k.killed ? 'killed' : 'not killed'}`);
      if (k.killed) seen['killed']!++;
      await afterRetries(W, hold, `${point}@${n}`, pristine, problems);
      f.rmrf(W);
    }
    // and spread instants over an unkilled run
    const base = fresh(`${tag}-base`, hold);
    let pristine = snap(base);
    const clean = await runKilled(base, -1);
    await afterRetries(base, hold, 'unkilled', pristine, problems);
    f.rmrf(base);
    const points = count(1, 40);
    for (let i = 0; i < points; i++) {
      const at = Math.round(((i + 0.5) / points) * clean.ms * 1.1);
      const W = fresh(`${tag}-t${i}`, hold);
      pristine = snap(W);
      const k = await runKilled(W, at);
      if (k.killed) seen['killed']!++;
      await afterRetries(W, hold, `kill at ${at} ms`, pristine, problems);
      f.rmrf(W);
    }
    figures(`workdir crash (${mode})`, {
      run_ms: Math.round(clean.ms),
      named_points: plan.length,
      timed_points: points,
      ...seen,
      problems: problems.length,
    });
    expect(problems.slice(0, 12)).toEqual([]);
    expect(seen['killed']).toBeGreaterThanOrEqual(plan.filter(([pt, n]) => n <= PASSES[mode][pt]!).length);
  }, 1_800_000);
});
