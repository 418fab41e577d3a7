#!/usr/bin/env node
// What a hostile capsule's traces cost a sweep (docs/limits.md): each scenario built under a temp
// dir, swept through the built CLI (dist/cli/bin.js, as a user runs it), measured, and removed.
//
//   npm run build && node bench/hostile.mjs [--only NAME[,NAME…]] [--keep] [--bin PATH]
//   (--bin: another build's dist/cli/bin.js, e.g. a copy of the previous release's)
//
// Scenarios:
//   commands   one live session whose trace holds 25 `shell_detached` lines with 20 MiB `command`
//              strings (500 MiB of disk): two sweeps (`--json`), then `status --json`
//   reconcile  one dead session with 25 such lines (500 MiB; its shell_lost lines add as much): a
//              dry run, then a sweep
//   many-lost  one dead session with 50 000 unaccounted `shell_detached` lines (15 MB): one sweep
//   sparse-400 400 sessions whose trace is 64 MiB − 4 KiB with nothing allocated (`truncate`): a
//              dry run (never cached)
//   ratio      one 20 GiB trace with 5 % of it allocated (1 GiB of disk): a dry run
//   ids        one dead session naming 1 000 000 context ids and 1 000 000 work ids (240 MB): two sweeps
//   accounted  300 000 accounted work ids, then 10 unaccounted (a second pass): a dry run
// For each run: peak RSS (/usr/bin/time %M), wall and CPU seconds, the bytes the process read
// (`rchar` of /proc/self/io at its exit, through a --require preload), the size of `<home>/gc`,
// stdout's size and what the report says (shell_lost actions, sparse_file skips).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const argv = process.argv.slice(2);
const argv0 = (flag) => (argv.includes(flag) ? path.resolve(argv[argv.indexOf(flag) + 1]) : undefined);
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = argv0('--bin') ?? path.join(repo, 'dist', 'cli', 'bin.js');
const MiB = 1 << 20;
const DAY = 86_400_000;
const only = argv.includes('--only') ? argv[argv.indexOf('--only') + 1].split(',') : undefined;
const keep = argv.includes('--keep');
if (!fs.existsSync(bin)) {
  console.error('dist/cli/bin.js is missing: run `npm run build` first');
  process.exit(2);
}

const hex = (n) => Array.from({ length: n }, () => Math.floor(Math.random() * 16).toString(16)).join('');
const idAt = (prefix, ms) => prefix + Math.floor(ms).toString(16).padStart(12, '0') + '7' + hex(19);

/** Bytes of what `du -sb`-less counting finds under `dir`: allocated bytes, as `du` counts. */
function duBytes(dir) {
  if (!fs.existsSync(dir)) return 0;
  let n = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    const st = fs.lstatSync(p);
    n += st.blocks * 512;
    if (e.isDirectory()) n += duBytes(p);
  }
  return n;
}

/** A session directory of `env`'s root minted two days ago (dead: nothing will write to it); its trace path. */
function deadSession(env) {
  const t0 = Date.now() - 2 * DAY;
  const ses = idAt('ses_', t0);
  const dir = path.join(env.root, ses);
  fs.mkdirSync(dir);
  return { t0, ses, dir, trace: path.join(dir, 'trace.jsonl') };
}

function setup(label) {
  const T = fs.mkdtempSync(path.join(os.tmpdir(), `mgc-hostile-${label}-`));
  const home = path.join(T, '.murmur');
  const root = path.join(T, 'app', '.murmur');
  fs.mkdirSync(home, { recursive: true, mode: 0o700 });
  fs.mkdirSync(root, { recursive: true });
  const preload = path.join(T, 'io.cjs');
  fs.writeFileSync(
    preload,
    `process.on('exit', () => { try { require('fs').writeFileSync(process.env.MGC_IO_OUT, require('fs').readFileSync('/proc/self/io', 'latin1')); } catch {} });\n`,
  );
  const cfg = path.join(T, 'config.yaml');
  fs.writeFileSync(cfg, `home: ${home}\nsessions:\n  - root: ${root}\n`);
  return { T, home, root, preload, cfg };
}

/** One CLI run, measured (stdout goes to a file: a document of 500 MiB is no JS string). */
function measure(env, args) {
  const io = path.join(env.T, 'io.txt');
  const outFile = path.join(env.T, 'stdout.json');
  fs.rmSync(io, { force: true });
  const out = fs.openSync(outFile, 'w');
  const t = process.hrtime.bigint();
  const r = spawnSync('/usr/bin/time', ['-f', '@@%M %U %S', process.execPath, '--require', env.preload, bin, ...args], {
    env: { ...process.env, HOME: env.T, XDG_CONFIG_HOME: path.join(env.T, '.config'), MGC_IO_OUT: io },
    stdio: ['ignore', out, 'pipe'],
    encoding: 'utf8',
    maxBuffer: 256 * MiB,
  });
  fs.closeSync(out);
  const wall = Number(process.hrtime.bigint() - t) / 1e9;
  const m = /@@(\d+) ([\d.]+) ([\d.]+)\s*$/.exec(r.stderr ?? '');
  const rchar = Number(/rchar: (\d+)/.exec(fs.existsSync(io) ? fs.readFileSync(io, 'latin1') : '')?.[1] ?? NaN);
  const stdoutBytes = fs.statSync(outFile).size;
  let rep;
  try {
    rep = stdoutBytes < 256 * MiB ? JSON.parse(fs.readFileSync(outFile, 'utf8')) : undefined;
  } catch {
    rep = undefined;
  }
  fs.rmSync(outFile);
  return {
    status: r.status,
    rssMB: m ? Math.round(Number(m[1]) / 1024) : NaN,
    wallS: Math.round(wall * 10) / 10,
    cpuS: m ? Math.round((Number(m[2]) + Number(m[3])) * 10) / 10 : NaN,
    readMiB: Math.round(rchar / MiB),
    gcMiB: Math.round((duBytes(path.join(env.home, 'gc')) / MiB) * 10) / 10,
    stdoutMiB: Math.round((stdoutBytes / MiB) * 10) / 10,
    lost: rep?.actions?.filter((a) => a.kind === 'shell_lost').length,
    sparse: rep?.skipped?.filter((s) => s.code === 'sparse_file').length,
    deferred: rep?.skipped?.filter((s) => s.code === 'lost_work_deferred').length,
    stderrTail: r.status === 0 || r.status === 1 ? undefined : (r.stderr ?? '').slice(-500),
  };
}

function traceLine(o) {
  return JSON.stringify(o) + '\n';
}

const scenarios = {
  commands() {
    const env = setup('commands');
    const now = Date.now();
    const ses = idAt('ses_', now - 3600_000);
    const dir = path.join(env.root, ses);
    fs.mkdirSync(dir);
    const fd = fs.openSync(path.join(dir, 'trace.jsonl'), 'w');
    const start = idAt('evt_', now - 3600_000);
    fs.writeSync(
      fd,
      traceLine({
        event_type: 'session_start',
        event_id: start,
        parent_id: null,
        session_id: ses,
        timestamp: now - 3600_000,
        capsule_name: 'demo',
        capsule_version: '1',
        context_id: null,
      }),
    );
    const command = 'x'.repeat(20 * MiB);
    for (let i = 0; i < 25; i++) {
      fs.writeSync(
        fd,
        traceLine({
          event_type: 'shell_detached',
          event_id: idAt('evt_', now - 3000_000 + i),
          parent_id: start,
          session_id: ses,
          timestamp: now - 3000_000 + i,
          turn: 0,
          task_id: null,
          work_id: idAt('wrk_', now - 3000_000 + i),
          binary: '/bin/sh',
          command,
          grace_ms: 10000,
        }),
      );
    }
    fs.closeSync(fd);
    const rows = [
      ['sweep 1', measure(env, ['--json', '--config', env.cfg])],
      ['sweep 2', measure(env, ['--json', '--config', env.cfg])],
      ['status', measure(env, ['status', '--json', '--config', env.cfg])],
    ];
    return { env, rows };
  },
  reconcile() {
    // one dead session with 25 detached lines of 20 MiB commands: their shell_lost lines repeat them (1 GiB of disk)
    const env = setup('reconcile');
    const { t0, ses, trace } = deadSession(env);
    const fd = fs.openSync(trace, 'w');
    const start = idAt('evt_', t0);
    fs.writeSync(
      fd,
      traceLine({
        event_type: 'session_start',
        event_id: start,
        parent_id: null,
        session_id: ses,
        timestamp: t0,
        context_id: null,
      }),
    );
    const command = 'x'.repeat(20 * MiB);
    for (let i = 0; i < 25; i++)
      fs.writeSync(
        fd,
        traceLine({
          event_type: 'shell_detached',
          event_id: idAt('evt_', t0 + i),
          parent_id: start,
          session_id: ses,
          timestamp: t0 + i,
          turn: 0,
          task_id: null,
          work_id: idAt('wrk_', t0 + i),
          binary: '/bin/sh',
          command,
          grace_ms: 10000,
        }),
      );
    fs.closeSync(fd);
    fs.utimesSync(trace, t0 / 1000, t0 / 1000);
    const rows = [
      ['dry run', measure(env, ['--json', '--dry-run', '--config', env.cfg])],
      ['sweep', measure(env, ['--json', '--config', env.cfg])],
    ];
    return { env, rows };
  },
  'many-lost'() {
    const env = setup('many-lost');
    const t0 = Date.now() - 2 * DAY;
    const ses = idAt('ses_', t0);
    const dir = path.join(env.root, ses);
    fs.mkdirSync(dir);
    const start = idAt('evt_', t0);
    const lines = [
      traceLine({
        event_type: 'session_start',
        event_id: start,
        parent_id: null,
        session_id: ses,
        timestamp: t0,
        capsule_name: 'demo',
        capsule_version: '1',
        context_id: null,
      }),
    ];
    for (let i = 0; i < 50_000; i++) {
      lines.push(
        traceLine({
          event_type: 'shell_detached',
          event_id: idAt('evt_', t0 + i),
          parent_id: start,
          session_id: ses,
          timestamp: t0 + i,
          turn: 0,
          task_id: null,
          work_id: idAt('wrk_', t0 + i),
          binary: '/usr/bin/sleep',
          command: `sleep ${600 + i}`,
          grace_ms: 10000,
        }),
      );
    }
    const trace = path.join(dir, 'trace.jsonl');
    fs.writeFileSync(trace, lines.join(''));
    fs.utimesSync(trace, t0 / 1000, t0 / 1000);
    const rows = [['sweep 1', measure(env, ['--json', '--config', env.cfg])]];
    return { env, rows };
  },
  ids() {
    // a dead session naming 1 000 000 distinct context ids (task_start) and 1 000 000 work ids (shell_completed)
    const env = setup('ids');
    const { t0, ses, trace } = deadSession(env);
    const fd = fs.openSync(trace, 'w');
    fs.writeSync(
      fd,
      traceLine({
        event_type: 'session_start',
        event_id: idAt('evt_', t0),
        parent_id: null,
        session_id: ses,
        timestamp: t0,
        context_id: null,
      }),
    );
    for (let b = 0; b < 100; b++) {
      const lines = [];
      for (let i = 0; i < 10_000; i++) {
        const k = b * 10_000 + i;
        lines.push(
          traceLine({
            event_type: 'task_start',
            event_id: idAt('evt_', t0 + k),
            session_id: ses,
            timestamp: t0 + k,
            task_id: idAt('tsk_', t0 + k),
            context_id: idAt('ctx_', t0 + k),
            trust: 'trusted',
          }),
        );
        lines.push(
          traceLine({
            event_type: 'shell_completed',
            event_id: idAt('evt_', t0 + k),
            session_id: ses,
            timestamp: t0 + k,
            work_id: idAt('wrk_', t0 + k),
          }),
        );
      }
      fs.writeSync(fd, lines.join(''));
    }
    fs.closeSync(fd);
    fs.utimesSync(trace, t0 / 1000, t0 / 1000);
    const rows = [
      ['sweep 1', measure(env, ['--json', '--config', env.cfg])],
      ['sweep 2', measure(env, ['--json', '--config', env.cfg])],
    ];
    return { env, rows };
  },
  accounted() {
    // 300 000 accounted work ids (over the 262 144 remembered: a second pass), then 10 unaccounted
    const env = setup('accounted');
    const { t0, ses, trace } = deadSession(env);
    const lines = [
      traceLine({
        event_type: 'session_start',
        event_id: idAt('evt_', t0),
        parent_id: null,
        session_id: ses,
        timestamp: t0,
        context_id: null,
      }),
    ];
    for (let k = 0; k < 300_000; k++)
      lines.push(
        traceLine({
          event_type: 'shell_completed',
          event_id: idAt('evt_', t0 + k),
          session_id: ses,
          timestamp: t0 + k,
          work_id: `w${k}`,
        }),
      );
    for (let k = 0; k < 10; k++)
      lines.push(
        traceLine({
          event_type: 'shell_detached',
          event_id: idAt('evt_', t0 + k),
          session_id: ses,
          timestamp: t0 + k,
          work_id: `lost${k}`,
          binary: '/bin/sh',
          command: 'sleep 1',
        }),
      );
    fs.writeFileSync(trace, lines.join(''));
    fs.utimesSync(trace, t0 / 1000, t0 / 1000);
    const rows = [['dry run', measure(env, ['--json', '--dry-run', '--config', env.cfg])]];
    return { env, rows };
  },
  'sparse-400'() {
    const env = setup('sparse-400');
    const t0 = Date.now() - 2 * DAY;
    for (let i = 0; i < 400; i++) {
      const dir = path.join(env.root, idAt('ses_', t0 + i));
      fs.mkdirSync(dir);
      const trace = path.join(dir, 'trace.jsonl');
      fs.writeFileSync(trace, '');
      fs.truncateSync(trace, 64 * MiB - 4096);
      fs.utimesSync(trace, t0 / 1000, t0 / 1000);
    }
    const rows = [['dry run', measure(env, ['--json', '--dry-run', '--config', env.cfg])]];
    return { env, rows };
  },
  ratio() {
    const env = setup('ratio');
    const { t0, ses, trace } = deadSession(env);
    const fd = fs.openSync(trace, 'w');
    // 1 MiB of real lines every 20 MiB: 5 % of 20 GiB allocated
    const line = traceLine({
      event_type: 'inference',
      event_id: idAt('evt_', t0),
      session_id: ses,
      timestamp: t0,
      text: 'y'.repeat(200),
    });
    const chunk = Buffer.from(line.repeat(Math.floor(MiB / line.length)));
    for (let at = 0; at < 20 * 1024 * MiB; at += 20 * MiB) fs.writeSync(fd, chunk, 0, chunk.length, at);
    fs.ftruncateSync(fd, 20 * 1024 * MiB);
    fs.closeSync(fd);
    fs.utimesSync(trace, t0 / 1000, t0 / 1000);
    const rows = [['dry run', measure(env, ['--json', '--dry-run', '--config', env.cfg])]];
    return { env, rows };
  },
};

for (const [name, fn] of Object.entries(scenarios)) {
  if (only && !only.includes(name)) continue;
  const { env, rows } = fn();
  for (const [label, r] of rows) console.log(JSON.stringify({ scenario: name, run: label, ...r }));
  if (keep) console.log(`kept ${env.T}`);
  else fs.rmSync(env.T, { recursive: true, force: true });
}
