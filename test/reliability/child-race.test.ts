// Property (a child workdir goes only while nothing lives in it): a session a racing process
// starts inside a finished child workdir while a sweep removes it (at once, held with its parent
// under quarantine, or as an orphan under children.max_age) is never lost — the child is either
// moved before the session's mkdir resolves its path (the mkdir fails: nothing was started), or
// the session is seen, by the re-check before the move or by the look right after it, and the
// child is put back and kept (`child_kept`). Each child is raced once: the racer waits for the
// sweep's intent naming it and starts the session after a jitter spread over the window in which
// the child is judged and moved (calibrated first). Real sweeps, in process; the racer is its own
// process (test/reliability/session-racer.mjs).
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSweep } from '../../src/sweep/pipeline.js';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/log.js';
import * as f from '../helpers/fixtures.js';
import { count, figures } from './soak.js';

let T: string;
let home: string;
let racer: ChildProcessByStdio<Writable, Readable, null>;
let lines: readline.Interface;
const log = createLogger({ level: 'silent' });
/** children raced per sweep */
const PER_SWEEP = 25;
/** sessions inside each child (the re-check reads each of their traces) */
const INNER = 4;

beforeAll(() => {
  T = fs.realpathSync(f.tempDir('rel-child-race'));
  home = path.join(T, 'home');
  fs.mkdirSync(home, { mode: 0o700 });
  racer = spawn(process.execPath, [path.join(f.REPO, 'test', 'reliability', 'session-racer.mjs')], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  lines = readline.createInterface({ input: racer.stdout });
});
afterAll(() => {
  racer?.kill('SIGKILL');
  if (T) f.rmrf(T);
});

interface Raced {
  child: string;
  session: string | null;
  created: boolean;
  ms: number;
}

function nextLine(): Promise<string> {
  return new Promise((resolve) => lines.once('line', resolve));
}

type Mode = 'at_once' | 'held' | 'orphan';

/** One workdir: a parent due under max_sessions naming `PER_SWEEP` finished children (or, orphan: none names them), and a session that stays. */
function tree(label: string, mode: Mode): { root: string; children: string[]; yaml: string } {
  const now = Date.now();
  const W = path.join(T, label);
  const root = path.join(W, '.murmur');
  const children: string[] = [];
  const lines: string[] = [];
  const pid = f.idAt('ses_', now - 9 * f.DAY);
  let t = now - 9 * f.DAY + 100;
  for (let i = 0; i < PER_SWEEP; i++) {
    const name = `worker-${f.hex(16)}`;
    const dir = path.join(root, 'children', name);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'task.md'), 'do it');
    for (let k = 0; k < INNER; k++)
      f.writeSession(path.join(dir, '.murmur'), {
        sessionId: f.idAt('ses_', now - (5 + k) * f.DAY),
        startMs: now - (5 + k) * f.DAY,
        end: true,
      });
    fs.utimesSync(dir, (now - 10 * f.DAY) / 1000, (now - 10 * f.DAY) / 1000);
    children.push(dir);
    const delegationId = `del_${i}_${f.hex(8)}`;
    lines.push(
      JSON.stringify({
        event_type: 'delegation_start',
        event_id: f.idAt('evt_', ++t),
        parent_id: null,
        session_id: pid,
        timestamp: t,
        delegation_id: delegationId,
        capsule: 'worker',
        version: '1.0.0',
        child_session_id: f.idAt('ses_', t),
        child_workdir: `.murmur/children/${name}`,
      }),
    );
    lines.push(
      JSON.stringify({
        event_type: 'delegation',
        event_id: f.idAt('evt_', ++t),
        parent_id: null,
        session_id: pid,
        timestamp: t,
        delegation_id: delegationId,
        child_session_id: f.idAt('ses_', t),
        outcome: 'ok',
      }),
    );
  }
  if (mode !== 'orphan')
    f.writeSession(root, {
      sessionId: pid,
      startMs: now - 9 * f.DAY,
      end: true,
      extra: lines.map((l) => l + '\n').join(''),
    });
  f.writeSession(root, { sessionId: f.idAt('ses_', now - f.DAY), startMs: now - f.DAY, end: true });
  const yaml =
    mode === 'orphan'
      ? `sessions:\n  - root: ${root}\n    children: { max_age: 2d }\n`
      : `${mode === 'held' ? 'quarantine: 24h\n' : ''}sessions:\n  - root: ${root}\n    retain: { max_sessions: 1 }\n`;
  return { root, children, yaml };
}

/** One sweep against the racer; the racer's results. */
async function race(
  label: string,
  mode: Mode,
  jitterUs: (i: number) => number,
  calibrate = false,
): Promise<{ results: Raced[]; kept: number }> {
  const { children, yaml } = tree(label, mode);
  const configPath = f.writeConfig(path.join(T, label), `home: ${home}\n${yaml}`);
  const config = await loadConfig({ configPath, env: { HOME: T }, cwd: T });
  const answer = nextLine();
  racer.stdin.write(
    JSON.stringify({ gc: path.join(home, 'gc'), children, jitterUs: children.map((_, i) => jitterUs(i)), calibrate }) +
      '\n',
  );
  racer.stdin.write('go\n');
  const r = await runSweep({ config, dryRun: false, log });
  const { results } = JSON.parse(await answer) as { results: Raced[] };
  expect(r.errors).toEqual([]);
  return { results, kept: r.skipped.filter((s) => s.code === 'child_kept').length };
}

describe('a session started inside a child workdir while the sweep removes it', () => {
  for (const mode of ['at_once', 'held', 'orphan'] as const) {
    const sweeps = mode === 'at_once' ? count(8, 40) : count(2, 20);
    it(`is never lost (${mode === 'at_once' ? 'removed at once' : mode === 'held' ? 'held with its parent' : 'an orphan'}; ${sweeps * PER_SWEEP} children raced${mode === 'at_once' ? '' : ' here'})`, async () => {
      // the window: from the intent naming a child to the child leaving its path
      const cal = (await race(`${mode}-cal`, mode, () => 0, true)).results
        .map((x) => x.ms)
        .filter((ms) => ms >= 0)
        .sort((a, b) => a - b);
      expect(cal.length).toBeGreaterThan(PER_SWEEP / 2);
      const windowUs = Math.max(200, Math.round(cal[Math.floor(cal.length / 2)]! * 1000));
      let raced = 0;
      let created = 0;
      let kept = 0;
      const lost: string[] = [];
      const t0 = performance.now();
      // at least `sweeps`; more (up to four times as many) while no session has met the race yet:
      // on a loaded machine a few sweeps can pass with every session started after its child moved
      let run = 0;
      for (let s = 0; s < sweeps || (created === 0 && s < 4 * sweeps); s++) {
        run++;
        // spread over the window, a little past it
        const r = await race(`${mode}-${s}`, mode, () => Math.floor(Math.random() * windowUs * 1.2));
        kept += r.kept;
        for (const x of r.results) {
          if (x.session === null) continue; // the sweep never came to it
          raced++;
          if (!x.created) continue;
          created++;
          if (!fs.existsSync(path.join(x.child, '.murmur', x.session))) lost.push(`${x.child}/.murmur/${x.session}`);
        }
      }
      figures(`child-race-${mode}`, {
        sweeps: run,
        children: raced,
        sessions_started: created,
        children_kept: kept,
        lost: lost.length,
        window_us: windowUs,
        ms: Math.round(performance.now() - t0),
      });
      expect(raced).toBe(run * PER_SWEEP);
      expect(lost).toEqual([]);
      // the race was met: some sessions started before the child moved, and each kept its child
      expect(created).toBeGreaterThan(0);
      expect(kept).toBeGreaterThanOrEqual(created);
    });
  }
});
