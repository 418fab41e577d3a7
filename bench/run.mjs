#!/usr/bin/env node
// The benchmark suite: every scenario, each run back to back with its physical
// baseline in the same script, several times; prints medians, ratios and peak RSS in one table.
//
//   npm run bench                 # full: 100 000 sessions in 100 roots + 10 000 records, 2 × 2 GiB records
//   npm run bench -- --quick      # CI smoke: every scenario once on a small home (under a minute on
//                                 # an idle 2-core machine); exit 1 when a sanity check fails
//   options: --runs N   --big-mb X (big records)   --trunc-mb X (count/truncate record, default 512)
//            --data DIR (generate there, reuse if present, keep)   --md FILE (write the table)
//            --only sweeps|records|startup (run only the sweep scenarios, only the big-record ones on
//            a minimal home, or only the start-up rows: what a change needs, without generating
//            100 000 sessions); --only small: the start-up rows and the sweeps at 10 000 sessions
//            (the issue's small-home goals) without the 100 000-session home
//
// Scenarios (murmur-gc run through its own bin, as a user runs it):
//   start-up  `--dry-run` with no ~/.murmur, `status`, `--help`   vs node -e 0, alternating, CPU ratio
//             (the median of 9 runs each, 3 with --quick; the per-command CPU goal is ≤ 2.5×)
//   warm     real sweep, nothing changed since the last one      vs find ROOTS -maxdepth 2 -printf '%s %T@\n'
//   first    real sweep, no cache (trace-cache.json removed)     vs cat of every file it must read
//   explain  `explain ses_…` of one session, after a warm sweep    vs that warm sweep (goal ≤ 1.5× CPU)
//   daemon   `murmur-gc daemon` sweeping every few seconds: the CPU of each scheduled sweep after
//            its first (start-up is paid once per daemon)        vs the warm sweep's find
//   du       `murmur-gc du` on the warm home (its walk of every root, three plans)   vs the warm sweep (CPU ratio);
//            beside it du's floor: its dry run + a walk of every entry (bench/floor.mjs du, and GNU du -s -B1 -x)
//   (both at 1/10 size too: the scaling pair)
//   one root  the warm sweep of 3× the small home's sessions in a single sessions root   vs find,
//            and a dry run condemning all but a thirtieth of them (max_sessions); each judged
//            against the same on the small home (≤ 1.1× per session: nothing grows faster than a
//            root's size)
//   count    --dry-run on a big record never seen before         vs wc -l   (and GB/s net of node start-up)
//   trunc    sweep truncating a big record to 1000 messages, count already cached from an earlier
//            sweep                                               vs tail -n 1000 f > t && mv t f, plus node -e 0
//   trunc-new  the same, record never seen before                vs wc -l
//   peer     the warm sweep again, against systemd-tmpfiles --clean over the same roots and record
//            stores (one `d PATH - - - 3650d` line each: it walks every entry and removes nothing),
//            when systemd-tmpfiles is installed; goals ≤ 1.5× at the small home, ≤ 1× at the large
//   floor    bench/floor.mjs beside each warm and first sweep: the system calls murmur-gc's safety
//            rules make for that home, alone in node (no parsing, no plan), against the same
//            baseline; the table says what CPU each ≤ 2× goal leaves above that floor
// Peak RSS is the child's maximum resident set (/usr/bin/time %M). Generated data is deleted at the
// end unless --data was given.
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generate } from './gen.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(repo, 'dist', 'cli', 'bin.js');
const floorScript = path.join(repo, 'bench', 'floor.mjs');

function args(argv) {
  const o = {
    quick: false,
    runs: undefined,
    bigMb: undefined,
    truncMb: undefined,
    data: undefined,
    md: undefined,
    only: undefined,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--quick') o.quick = true;
    else if (a === '--runs') o.runs = Number(argv[++i]);
    else if (a === '--big-mb') o.bigMb = Number(argv[++i]);
    else if (a === '--trunc-mb') o.truncMb = Number(argv[++i]);
    else if (a === '--data') o.data = path.resolve(argv[++i]);
    else if (a === '--md') o.md = path.resolve(argv[++i]);
    else if (a === '--only' && ['sweeps', 'records', 'startup', 'small'].includes(argv[i + 1])) o.only = argv[++i];
    else {
      console.error(`unknown argument ${a}`);
      process.exit(2);
    }
  }
  return o;
}

const opt = args(process.argv.slice(2));
const runs = opt.runs ?? (opt.quick ? 1 : 3);
const L = opt.quick ? { sessions: 1000, roots: 10, records: 100 } : { sessions: 100000, roots: 100, records: 10000 };
const S = { sessions: L.sessions / 10, roots: Math.max(1, L.roots / 10), records: L.records / 10 };
const bigMb = opt.bigMb ?? (opt.quick ? 32 : 2048);
/** Size of the record the count/truncate scenarios work on: the head of a big record, cut at a line end. */
const truncMb = Math.min(opt.truncMb ?? (opt.quick ? 32 : 512), bigMb);
const KEEP = 1000;
const hasTime = fs.existsSync('/usr/bin/time');
const tmpfilesBin = ['/usr/bin/systemd-tmpfiles', '/bin/systemd-tmpfiles'].find((p) => fs.existsSync(p));
if (!fs.existsSync(bin)) {
  console.error('dist/cli/bin.js is missing: run `npm run build` first (npm run bench does)');
  process.exit(2);
}

/** Run one command; wall seconds (hrtime around the child) and its peak RSS in MB. */
function run(cmd, argv, o = {}) {
  const full = hasTime ? ['/usr/bin/time', ['-f', '@@%M %U %S', cmd, ...argv]] : [cmd, argv];
  const t = process.hrtime.bigint();
  const r = spawnSync(full[0], full[1], { encoding: 'utf8', maxBuffer: 1 << 28, ...o });
  const s = Number(process.hrtime.bigint() - t) / 1e9;
  const m = /@@(\d+) ([\d.]+) ([\d.]+)\s*$/.exec(r.stderr ?? '');
  const ok = o.allowStatus ? o.allowStatus.includes(r.status) : r.status === 0;
  if (!ok) throw new Error(`${cmd} ${argv.join(' ')} exited ${r.status}: ${(r.stderr ?? '').slice(-2000)}`);
  return { s, cpu: m ? Number(m[2]) + Number(m[3]) : NaN, rssMB: m ? Number(m[1]) / 1024 : NaN, stdout: r.stdout };
}
const sh = (script) => run('sh', ['-c', script]);

/**
 * The daemon's scheduled sweeps: `murmur-gc daemon` on a copy of `cfg` that sweeps at start and
 * then every `everySecs` seconds; the CPU of each sweep after the first (the process's own
 * user+sys from /proc between two summary lines: the first sweep also pays start-up) and the
 * daemon's peak RSS (VmHWM). `sweeps` steady sweeps; each must end ok with nothing to do.
 */
function daemonSweeps(cfg, label, sweeps, everySecs) {
  const dcfg = path.join(tmp, `${label}-daemon.yaml`);
  fs.writeFileSync(dcfg, `${fs.readFileSync(cfg, 'utf8')}\nschedule: "*/${everySecs} * * * * *"\nrun_on_start: true\n`);
  const env = { ...process.env };
  delete env.NOTIFY_SOCKET;
  const child = spawn(process.execPath, [...nodeFlags, bin, 'daemon', '--config', dcfg], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env,
  });
  const tick = 100; // USER_HZ: /proc/<pid>/stat counts CPU in 1/100 s on Linux
  const proc = (file) => fs.readFileSync(`/proc/${child.pid}/${file}`, 'utf8');
  const cpuNow = () => {
    const stat = proc('stat');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields from the 3rd: utime is the 14th
    return (Number(f[11]) + Number(f[12])) / tick;
  };
  return new Promise((resolve, reject) => {
    const marks = [];
    let rssMB = NaN;
    let buf = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), (sweeps + 2) * (everySecs + 60) * 1000);
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d) => {
      buf += d;
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (!line.includes('"sweep_summary"')) continue;
        const summary = JSON.parse(line);
        marks.push({ cpu: cpuNow(), summary });
        rssMB = Number(/VmHWM:\s+(\d+)/.exec(proc('status'))?.[1]) / 1024;
        if (marks.length === sweeps + 1) child.kill('SIGTERM');
      }
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (marks.length < sweeps + 1)
        return reject(new Error(`${label} daemon exited ${code} after ${marks.length} sweeps`));
      for (const { summary } of marks)
        check(
          summary.outcome === 'ok' && Object.keys(summary.counts ?? {}).length === 0,
          `${label} daemon sweep had nothing to do (${summary.outcome}, ${JSON.stringify(summary.counts)})`,
        );
      resolve(marks.slice(1).map((m, k) => ({ s: m.summary.duration_ms / 1000, cpu: m.cpu - marks[k].cpu, rssMB })));
    });
  });
}

/**
 * Like run(), for runs of a few tens of milliseconds: CPU from bash's `times` (the children's
 * user + sys, to the millisecond; /usr/bin/time counts in 10 ms steps, too coarse next to
 * `node -e 0`), peak RSS from /usr/bin/time -o (its own few hundred microseconds are counted on
 * both sides of a ratio alike).
 */
function runShort(cmd, argv, o = {}) {
  const rssFile = path.join(tmp, 'rss');
  const script = `${hasTime ? '/usr/bin/time -f "@@%M" -o "$0" ' : ''}"$@" > /dev/null 2>&1; s=$?; times; exit $s`;
  const t = process.hrtime.bigint();
  const r = spawnSync('bash', ['-c', script, rssFile, cmd, ...argv], { encoding: 'utf8', ...o });
  const s = Number(process.hrtime.bigint() - t) / 1e9;
  if (r.status !== 0) throw new Error(`${cmd} ${argv.join(' ')} exited ${r.status}`);
  const secs = (x) => {
    const m = /^(\d+)m([\d.]+)s$/.exec(x);
    return m ? Number(m[1]) * 60 + Number(m[2]) : NaN;
  };
  const [user, sys] = (r.stdout.trim().split('\n')[1] ?? '').split(/\s+/).map(secs);
  const rss = hasTime ? /@@(\d+)/.exec(fs.readFileSync(rssFile, 'utf8'))?.[1] : undefined;
  return { s, cpu: user + sys, rssMB: rss === undefined ? NaN : Number(rss) / 1024 };
}
const median = (xs) => {
  const v = [...xs].sort((a, b) => a - b);
  return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
};
const q = (p) => `'${p.replace(/'/g, `'\\''`)}'`;

// murmur-gc is run as its installed bin runs: with the node flags its shebang names.
const shebang = /^#!\/usr\/bin\/env -S node(.*)$/.exec(fs.readFileSync(bin, 'utf8').split('\n')[0] ?? '');
const nodeFlags = shebang ? shebang[1].trim().split(/\s+/).filter(Boolean) : [];
function gcRun(cfg, extra = [], env = {}) {
  const r = run(process.execPath, [...nodeFlags, bin, '--json', '--config', cfg, ...extra], {
    env: { ...process.env, ...env },
  });
  return { ...r, report: JSON.parse(r.stdout) };
}

/** Generated data: reuse DIR/<name> when its manifest matches, else generate it. */
function home(name, spec, big) {
  const root = opt.data ?? tmp;
  const dir = path.join(root, name);
  const mf = path.join(dir, 'manifest.json');
  if (fs.existsSync(mf)) {
    const m = JSON.parse(fs.readFileSync(mf, 'utf8'));
    if (
      m.sessions === spec.sessions &&
      m.records === spec.records &&
      m.roots.length === spec.roots &&
      (big === 0 || (m.big[0]?.bytes ?? 0) >= big * 1048576)
    )
      return m;
    fs.rmSync(dir, { recursive: true, force: true });
  }
  process.stderr.write(
    `generating ${name}: ${spec.sessions} sessions / ${spec.roots} roots / ${spec.records} records${big ? ` / ${opt.quick || opt.only === 'records' ? 1 : 2} × ${big} MiB` : ''} … `,
  );
  const m = generate({ ...spec, bigMb: big, big: opt.quick || opt.only === 'records' ? 1 : 2, out: dir });
  process.stderr.write(`${(m.seconds.sessions + m.seconds.records + m.seconds.big).toFixed(1)} s\n`);
  return m;
}

const rows = [];
function row(name, mgc, base, baseName, goal, floor = false, max = undefined) {
  const ms = median(mgc.map((r) => r.s));
  const bs = median(base.map((r) => r.s));
  const cpu = median(mgc.map((x) => x.cpu));
  const bcpu = median(base.map((x) => x.cpu));
  // (a baseline under 10 ms of CPU cannot give a CPU ratio: /usr/bin/time counts in 10 ms steps)
  const r = {
    name,
    s: ms,
    cpu,
    rss: Math.max(...mgc.map((x) => x.rssMB)),
    baseName,
    base: bs,
    bcpu,
    ratio: ms / bs,
    cpuRatio: bcpu >= 0.01 ? cpu / bcpu : NaN,
    goal,
    floor,
    max,
  };
  rows.push(r);
  process.stderr.write(
    `  ${name}: ${ms.toFixed(3)} s (cpu ${cpu.toFixed(2)} s, ${r.rss.toFixed(0)} MB) vs ${baseName} ${bs.toFixed(3)} s (cpu ${bcpu.toFixed(2)} s) = ${r.ratio.toFixed(2)}× wall, ${r.cpuRatio.toFixed(2)}× cpu\n`,
  );
}
const notes = [];
const check = (cond, what) => {
  if (!cond) notes.push(`CHECK FAILED: ${what}`);
};

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mgc-bench-'));
const started = Date.now();
const loadAtStart = os.loadavg();
try {
  const startup = [];
  for (let i = 0; i < runs; i++) startup.push(run(process.execPath, ['-e', '0']));
  const nodeStart = median(startup.map((r) => r.s));
  const nodeStartCpu = median(startup.map((r) => r.cpu));

  // ---- start-up: what every small run pays, against node's own ---------------------------------
  // A machine with no ~/.murmur and no configuration: HOME and XDG_CONFIG_HOME point at an empty
  // directory. The commands and `node -e 0` alternate (A B C D A B C D …), so a drift of the
  // machine's speed hits them alike; on Node >= 22 the bin's compile cache is warm after the first.
  const startupRuns = opt.quick ? 3 : 9;
  const bareHome = path.join(tmp, 'bare-home');
  fs.mkdirSync(bareHome, { mode: 0o700 });
  const bareEnv = { ...process.env, HOME: bareHome, XDG_CONFIG_HOME: path.join(bareHome, '.config') };
  delete bareEnv.NODE_OPTIONS;
  const cmds = [['--dry-run'], ['status'], ['--help']];
  const base = [],
    byCmd = cmds.map(() => []);
  for (let i = 0; i < startupRuns; i++) {
    base.push(runShort(process.execPath, ['-e', '0'], { env: bareEnv }));
    cmds.forEach((c, k) => byCmd[k].push(runShort(process.execPath, [...nodeFlags, bin, ...c], { env: bareEnv })));
  }
  cmds.forEach((c, k) =>
    row(
      `start-up: murmur-gc ${c.join(' ')}${c[0] === '--dry-run' ? ' (no ~/.murmur)' : ''}`,
      byCmd[k],
      base,
      'node -e 0',
      '≤ 2.5× CPU',
    ),
  );

  // ---- homes: warm / first, at two sizes -----------------------------------------------------
  const sweepScenario = async (label, m, daemonEverySecs) => {
    const cfg = path.join(m.out, 'config.yaml');
    const cacheFile = path.join(m.home, 'gc', 'trace-cache.json');
    const stores = fs.readdirSync(path.join(m.home, 'conversations')).map((s) => path.join(m.home, 'conversations', s));
    const walk = `find ${m.roots.map(q).join(' ')} ${stores.map(q).join(' ')} -maxdepth 2 -printf '%s %T@\\n' > /dev/null`;
    // The files a first sweep must read: every trace, every record of a configured store whole,
    // the first 64 KiB (header probe) of the others.
    const list = path.join(tmp, `${label}.files`);
    sh(
      `find ${m.roots.map(q).join(' ')} -mindepth 2 -maxdepth 2 -name trace.jsonl -print0 > ${q(list)}; ` +
        `find ${stores
          .filter((s) => !s.endsWith('/archive'))
          .map(q)
          .join(' ')} -mindepth 2 -maxdepth 2 -name conversation.jsonl -print0 >> ${q(list)}`,
    );
    const archive = stores.find((s) => s.endsWith('/archive'));
    const readAll = `xargs -0 cat < ${q(list)} > /dev/null; for f in ${q(archive)}/*/conversation.jsonl; do [ ! -e "$f" ] || head -c 65536 "$f"; done > /dev/null`;
    // explain: one session in the middle of the first root (its fate, from a whole dry run)
    const inRoot = fs
      .readdirSync(m.roots[0])
      .filter((n) => n.startsWith('ses_'))
      .sort();
    const target = inRoot[Math.floor(inRoot.length / 2)];
    const first = [],
      firstBase = [],
      warm = [],
      warmBase = [],
      dry = [],
      firstFloor = [],
      warmFloor = [],
      explain = [],
      du = [],
      duWalkFloor = [],
      duWalkPeer = [],
      peerBase = [];
    // The peer: systemd-tmpfiles cleaning the same directories by age, an age nothing here reaches.
    const tmpfilesConf = path.join(tmp, `${label}.tmpfiles.conf`);
    fs.writeFileSync(tmpfilesConf, [...m.roots, ...stores].map((d) => `d ${d} - - - 3650d\n`).join(''));
    const peer = tmpfilesBin ? `${q(tmpfilesBin)} --clean ${q(tmpfilesConf)}` : undefined;
    const entriesNow = () => sh(`find ${m.roots.map(q).join(' ')} ${stores.map(q).join(' ')} | wc -l`).stdout.trim();
    const entriesBefore = peer ? entriesNow() : '';
    for (let i = 0; i < runs; i++) {
      fs.rmSync(cacheFile, { force: true });
      firstBase.push(sh(readAll));
      firstFloor.push(run(process.execPath, [floorScript, 'first', m.out]));
      const f = gcRun(cfg);
      first.push(f);
      check(
        f.report.actions.length === 0 && f.report.errors.length === 0,
        `${label} first sweep had nothing to do (${f.report.actions.length} actions, ${f.report.errors.length} errors)`,
      );
      warmBase.push(sh(walk));
      if (peer) peerBase.push(sh(peer));
      warmFloor.push(run(process.execPath, [floorScript, 'warm', m.out]));
      const w = gcRun(cfg);
      warm.push(w);
      check(
        w.report.inventory?.traces_read === 0,
        `${label} warm sweep read no trace (${JSON.stringify(w.report.inventory)})`,
      );
      dry.push(gcRun(cfg, ['--dry-run']));
      const e = run(process.execPath, [...nodeFlags, bin, 'explain', target, '--json', '--config', cfg]);
      explain.push(e);
      check(JSON.parse(e.stdout).fate?.word === 'kept:policy', `${label} explain ${target} says kept:policy`);
      const d = run(process.execPath, [...nodeFlags, bin, 'du', '--json', '--config', cfg]);
      du.push(d);
      const dr = JSON.parse(d.stdout);
      check(
        dr.inventory?.traces_read === 0 && dr.problems.length === 0,
        `${label} du read no trace and found nothing unreadable (${JSON.stringify(dr.inventory)})`,
      );
      duWalkFloor.push(run(process.execPath, [floorScript, 'du', m.out]));
      duWalkPeer.push(sh(`du -s -B1 -x ${m.roots.map(q).join(' ')} ${q(m.home)} > /dev/null`));
    }
    const n = `${m.sessions} sessions/${m.roots.length} roots + ${m.records} records`;
    if (peer)
      check(
        entriesNow() === entriesBefore,
        `${label} systemd-tmpfiles --clean removed nothing (${entriesBefore} entries before)`,
      );
    row(`warm sweep, ${n}`, warm, warmBase, 'find -maxdepth 2 -printf', '≤ 2×');
    if (peer)
      row(
        `warm sweep against the peer, ${n}`,
        warm,
        peerBase,
        'systemd-tmpfiles --clean',
        label === 'large' ? '≤ 1×' : '≤ 1.5×',
        false,
        label === 'large' ? 1 : 1.5,
      );
    row(`warm --dry-run, ${n}`, dry, warmBase, 'find -maxdepth 2 -printf', '≤ 2×');
    row(`first sweep, ${n}`, first, firstBase, 'cat of the files read', '≤ 2×');
    row(`explain one session (a whole dry run), ${n}`, explain, warm, 'the warm sweep', '≤ 1.5× CPU');
    row(`du, ${n}`, du, warm, 'the warm sweep', '≤ 1.5× CPU');
    // du's floor: the dry run it plans from plus a walk of every entry (du must lstat each one); it
    // pays one node start-up (~0.05 s) more than du
    const plus = (a, b) => a.map((x, i) => ({ s: x.s + b[i].s, cpu: x.cpu + b[i].cpu, rssMB: x.rssMB }));
    row(
      `floor of du: its dry run + its walk in node (bench/floor.mjs du), ${n}`,
      plus(dry, duWalkFloor),
      warm,
      'the warm sweep',
      '(not murmur-gc)',
      true,
    );
    row(
      `floor of du: its dry run + GNU du -s -B1 -x, ${n}`,
      plus(dry, duWalkPeer),
      warm,
      'the warm sweep',
      '(not murmur-gc)',
      true,
    );
    // (wall: the sweep's own duration_ms; the baseline's wall is the whole find)
    row(
      `warm sweep in the daemon (each scheduled sweep after its first), ${n}`,
      await daemonSweeps(cfg, label, runs, daemonEverySecs),
      warmBase,
      'find -maxdepth 2 -printf',
      '≤ 2×',
    );
    row(
      `floor of a warm sweep: its lstats in node (bench/floor.mjs), ${n}`,
      warmFloor,
      warmBase,
      'find -maxdepth 2 -printf',
      '(not murmur-gc)',
      true,
    );
    row(
      `floor of a first sweep: its opens and reads in node (bench/floor.mjs), ${n}`,
      firstFloor,
      firstBase,
      'cat of the files read',
      '(not murmur-gc)',
      true,
    );
    return {
      first: median(first.map((r) => r.s)),
      warm: median(warm.map((r) => r.s)),
      firstCpu: median(first.map((r) => r.cpu)),
      warmCpu: median(warm.map((r) => r.cpu)),
    };
  };
  // ---- one root: three times the small home's sessions in a single sessions root ------------
  // Work that grows with a root's size faster than linearly shows here and not in the homes
  // above, whose roots hold 1 000 sessions each: the warm sweep, and a dry run whose max_sessions
  // condemns all but a thirtieth of each root (it measures and plans every removal), each judged
  // against the same on the small home, per session.
  const condemning = (m) => {
    const keep = Math.max(1, Math.floor(m.sessions / m.roots.length / 30));
    const cfg = path.join(m.out, 'config-condemn.yaml');
    const text = fs
      .readFileSync(path.join(m.out, 'config.yaml'), 'utf8')
      .replace(/max_sessions: \d+/g, `max_sessions: ${keep}`);
    fs.writeFileSync(cfg, text);
    return { cfg, condemned: m.sessions - keep * m.roots.length };
  };
  const condemnRuns = (label, m) => {
    const c = condemning(m);
    const out = [];
    for (let i = 0; i < runs; i++) {
      const d = gcRun(c.cfg, ['--dry-run']);
      check(
        d.report.actions.length === c.condemned && d.report.errors.length === 0,
        `${label} dry run condemns ${c.condemned} sessions (${d.report.actions.length} actions, ${d.report.errors.length} errors)`,
      );
      out.push(d);
    }
    return { ...c, runs: out, cpu: median(out.map((r) => r.cpu)) };
  };
  const oneRootScenario = (m, mS) => {
    const cfg = path.join(m.out, 'config.yaml');
    const walk = `find ${m.roots.map(q).join(' ')} -maxdepth 2 -printf '%s %T@\\n' > /dev/null`;
    gcRun(cfg); // the first sweep fills the cache
    const warm = [],
      warmBase = [];
    for (let i = 0; i < runs; i++) {
      warmBase.push(sh(walk));
      const w = gcRun(cfg);
      warm.push(w);
      check(w.report.inventory?.traces_read === 0, `one-root warm sweep read no trace`);
    }
    row(
      `one root: warm sweep of ${m.sessions} sessions`,
      warm,
      warmBase,
      'find -maxdepth 2 -printf',
      '(scaling, below)',
    );
    const one = condemnRuns('one-root', m);
    const small = condemnRuns('small', mS);
    row(
      `one root: dry run condemning ${one.condemned} of ${m.sessions} sessions`,
      one.runs,
      small.runs,
      `the same on the small home (${small.condemned} of ${mS.sessions})`,
      '(scaling, below)',
    );
    return {
      sessions: m.sessions,
      warmCpu: median(warm.map((r) => r.cpu)),
      condemned: one.condemned,
      condemnCpu: one.cpu,
      smallCondemned: small.condemned,
      smallCondemnCpu: small.cpu,
    };
  };
  let small, large, mL, oneRoot;
  if (opt.only === 'startup') {
    // start-up rows only
  } else if (opt.only === 'small') {
    small = await sweepScenario('small', home('small', S, 0), 2);
    oneRoot = oneRootScenario(
      home('one-root', { sessions: 3 * S.sessions, roots: 1, records: S.records / 10 }, 0),
      home('small', S, 0),
    );
  } else if (opt.only !== 'records') {
    const mS = home('small', S, 0);
    small = await sweepScenario('small', mS, 2);
    oneRoot = oneRootScenario(home('one-root', { sessions: 3 * S.sessions, roots: 1, records: S.records / 10 }, 0), mS);
    mL = home('large', L, bigMb);
    large = await sweepScenario('large', mL, 10);
  } else {
    mL = home('records-only', { sessions: 10, roots: 1, records: 10 }, bigMb);
  }

  // ---- one big record: count, truncate (new), truncate (indexed) -----------------------------
  let countS;
  let big;
  const count = [],
    countBase = [],
    gcStart = [];
  if (opt.only !== 'sweeps' && opt.only !== 'startup' && opt.only !== 'small') {
    // The count/truncate record: the first truncMb MiB of the first big record, cut at a line end.
    big = (() => {
      const src = mL.big[0];
      const want = Math.min(src.bytes, truncMb * 1048576);
      if (want >= src.bytes) return src;
      const fd = fs.openSync(src.path, 'r');
      const buf = Buffer.allocUnsafe(want);
      fs.readSync(fd, buf, 0, want, 0);
      fs.closeSync(fd);
      const cut = buf.lastIndexOf(10) + 1;
      const p = path.join(tmp, 'trunc-src.jsonl');
      fs.writeFileSync(p, buf.subarray(0, cut), { mode: 0o600 });
      let lines = 0;
      for (let i = buf.indexOf(10); i >= 0 && i < cut; i = buf.indexOf(10, i + 1)) lines++;
      return { path: p, bytes: cut, messages: lines - 1 };
    })();
    const th = path.join(tmp, 'trunc', '.murmur');
    const tdir = path.join(th, 'conversations', 'archive', 'ctx_big');
    fs.mkdirSync(tdir, { recursive: true, mode: 0o700 });
    for (const d of [th, path.dirname(tdir), path.dirname(path.dirname(tdir)), tdir]) fs.chmodSync(d, 0o700);
    const tfile = path.join(tdir, 'conversation.jsonl');
    const cfgKeep = path.join(tmp, 'trunc-keep.yaml');
    const cfgIndex = path.join(tmp, 'trunc-index.yaml');
    fs.writeFileSync(cfgKeep, `home: ${th}\nrecords:\n  - capsule: archive\n    retain: { max_messages: ${KEEP} }\n`);
    fs.writeFileSync(
      cfgIndex,
      `home: ${th}\nrecords:\n  - capsule: archive\n    retain: { max_messages: 1000000000 }\n`,
    );
    const fresh = () => {
      fs.rmSync(path.join(th, 'gc'), { recursive: true, force: true });
      fs.copyFileSync(big.path, tfile);
      fs.chmodSync(tfile, 0o600);
    };
    const other = path.join(tmp, 'copy.jsonl');
    const tNew = [],
      tNewBase = [],
      tIdx = [],
      tIdxBase = [];
    // murmur-gc's own start-up (module loading, configuration, an empty sweep): a dry run on an
    // empty home, to give the counting rate of the scan itself
    const emptyHome = path.join(tmp, 'empty-home');
    fs.mkdirSync(emptyHome, { mode: 0o700 });
    for (let i = 0; i < runs; i++)
      gcStart.push(run(process.execPath, [...nodeFlags, bin, '--home', emptyHome, '--dry-run', '--quiet']));
    fresh();
    for (let i = 0; i < runs; i++) {
      countBase.push(run('wc', ['-l', tfile]));
      const c = gcRun(cfgKeep, ['--dry-run']);
      count.push(c);
      check(
        c.report.actions[0]?.messages_dropped === big.messages - KEEP,
        `count: dry run plans to drop ${c.report.actions[0]?.messages_dropped}, expected ${big.messages - KEEP}`,
      );
    }
    for (let i = 0; i < runs; i++) {
      fresh();
      tNewBase.push(run('wc', ['-l', tfile]));
      const t = gcRun(cfgKeep);
      tNew.push(t);
      check(t.report.actions[0]?.kept === KEEP, `trunc-new kept ${t.report.actions[0]?.kept}`);
    }
    for (let i = 0; i < runs; i++) {
      fresh();
      const idx = gcRun(cfgIndex);
      check(idx.report.actions.length === 0, 'indexing sweep changed nothing');
      fs.copyFileSync(big.path, other);
      tIdxBase.push(sh(`tail -n ${KEEP} ${q(other)} > ${q(other)}.t && mv ${q(other)}.t ${q(other)}`));
      const t = gcRun(cfgKeep);
      tIdx.push(t);
      check(
        t.report.actions[0]?.kept === KEEP && t.report.inventory?.records_count_cached === 1,
        `trunc (indexed) kept ${t.report.actions[0]?.kept}, inventory ${JSON.stringify(t.report.inventory)}`,
      );
    }
    fs.rmSync(other, { force: true });
    const mib = (big.bytes / 1048576).toFixed(0);
    row(`count a new ${mib} MiB record (--dry-run)`, count, countBase, 'wc -l', '≥ 1 GB/s');
    row(`truncate a new ${mib} MiB record to ${KEEP}`, tNew, tNewBase, 'wc -l', '—');
    row(
      `truncate an indexed ${mib} MiB record to ${KEEP}`,
      tIdx,
      tIdxBase.map((r) => ({ s: r.s + nodeStart, cpu: r.cpu + nodeStartCpu })),
      `tail -n ${KEEP} > t && mv + node -e 0`,
      '≤ 3×',
    );
    countS = median(count.map((r) => r.s));
  }

  // ---- table ---------------------------------------------------------------------------------
  const cpu = os.cpus();
  const lines = [];
  lines.push(
    `machine: ${cpu[0]?.model ?? '?'} × ${cpu.length}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB RAM, ${os.type()} ${os.release()}; load average at start ${loadAtStart.map((x) => x.toFixed(1)).join(' ')}, at the end ${os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
  );
  lines.push(
    `node ${process.version}; ${new Date(started).toISOString()}; ${runs} runs each, medians; peak RSS = max over runs`,
  );
  lines.push(
    `node start-up (node -e 0): ${nodeStart.toFixed(3)} s wall, ${nodeStartCpu.toFixed(2)} s CPU; murmur-gc run as its bin's shebang runs it: node ${[...nodeFlags, 'dist/cli/bin.js'].join(' ')}`,
  );
  lines.push('');
  lines.push(
    '| scenario | murmur-gc wall (s) | CPU (s) | peak RSS (MB) | baseline | baseline wall (s) | CPU (s) | ratio wall | ratio CPU | goal |',
  );
  lines.push('|---|---:|---:|---:|---|---:|---:|---:|---:|---|');
  const c = (x) => x.toFixed(x < 1 ? 3 : 2);
  for (const r of rows)
    lines.push(
      `| ${r.name} | ${r.s.toFixed(3)} | ${c(r.cpu)} | ${r.rss.toFixed(0)} | ${r.baseName} | ${r.base.toFixed(3)} | ${c(r.bcpu)} | ${r.ratio.toFixed(2)}× | ${Number.isNaN(r.cpuRatio) ? '—' : r.cpuRatio.toFixed(2) + '×'} | ${r.goal} |`,
    );
  lines.push('');
  if (big !== undefined) {
    const gbs = big.bytes / 1e9 / Math.max(countS - nodeStart, 1e-3);
    const countCpu = median(count.map((r) => r.cpu));
    lines.push(
      `counting: ${(big.bytes / 1e9 / countS).toFixed(2)} GB/s wall, ${gbs.toFixed(2)} GB/s net of node start-up, ${(big.bytes / 1e9 / Math.max(countCpu - nodeStartCpu, 1e-3)).toFixed(2)} GB/s per CPU-second net of start-up (goal ≥ 1 GB/s); wc -l ${(big.bytes / 1e9 / median(countBase.map((r) => r.s))).toFixed(2)} GB/s wall`,
    );
    const own = median(gcStart.map((r) => r.cpu));
    lines.push(
      `murmur-gc's own start-up (--dry-run on an empty home): ${median(gcStart.map((r) => r.s)).toFixed(3)} s wall, ${own.toFixed(2)} s CPU; counting net of it: ${(big.bytes / 1e9 / Math.max(countCpu - own, 1e-3)).toFixed(2)} GB/s per CPU-second`,
    );
  }
  if (large !== undefined) {
    lines.push(
      `scaling ×10 entries (${S.sessions}+${S.records} → ${L.sessions}+${L.records}): first sweep ${(large.first / small.first).toFixed(2)}× wall, ${(large.firstCpu / small.firstCpu).toFixed(2)}× CPU; warm sweep ${(large.warm / small.warm).toFixed(2)}× wall, ${(large.warmCpu / small.warmCpu).toFixed(2)}× CPU (goal ≤ 11×)`,
    );
  }
  // What the sweep goals leave above the floor of their system calls (bench/floor.mjs): the CPU
  // murmur-gc may spend on start-up, parsing, validation and planning within its goal.
  for (const f of rows.filter((r) => r.floor && !r.name.startsWith('floor of du'))) {
    const what = f.name.replace(/^floor of (a \w+ sweep): .*, (\d+ sessions.*)$/, '$1 at $2');
    if (Number.isNaN(f.cpuRatio)) continue; // (a baseline under 10 ms of CPU: the quick smoke)
    lines.push(
      `floor of ${what}: ${f.cpu.toFixed(2)} s CPU, ${f.cpuRatio.toFixed(2)}× ${f.baseName}; the ≤ 2× goal leaves ${(2 * f.bcpu - f.cpu).toFixed(2)} s of CPU above it`,
    );
  }
  for (const d of rows.filter((r) => r.name.startsWith('du,'))) {
    const at = d.name.slice('du, '.length);
    const inNode = rows.find(
      (r) => r.name === `floor of du: its dry run + its walk in node (bench/floor.mjs du), ${at}`,
    );
    const gnu = rows.find((r) => r.name === `floor of du: its dry run + GNU du -s -B1 -x, ${at}`);
    if (!inNode || !gnu || Number.isNaN(d.cpuRatio)) continue;
    lines.push(
      `du at ${at}: ${d.cpu.toFixed(2)} s CPU, ${d.cpuRatio.toFixed(2)}× the warm sweep; its floor, the dry run + a walk of every entry, is ${inNode.cpuRatio.toFixed(2)}× the warm sweep in node (${gnu.cpuRatio.toFixed(2)}× with GNU du's walk): du is ${(d.cpu / inNode.cpu).toFixed(2)}× its floor`,
    );
  }
  const peak = Math.max(...rows.filter((r) => !r.floor).map((r) => r.rss));
  lines.push(`memory: peak RSS over every murmur-gc run ${peak.toFixed(0)} MB (goal ≤ 150 MB)`);
  // Every goal with its verdict, judged on CPU time (user + sys): on a shared machine the steadier
  // measure; wall is shown beside it.
  const goals = [];
  const ratioGoal = (r, max) =>
    goals.push(
      Number.isNaN(r.cpuRatio)
        ? [
            `${r.name}: ≤ ${max}× ${r.baseName}`,
            `baseline under 10 ms of CPU: ${r.ratio.toFixed(2)}× wall only`,
            undefined,
          ]
        : [
            `${r.name}: ≤ ${max}× ${r.baseName}`,
            `${r.cpuRatio.toFixed(2)}× CPU (${r.ratio.toFixed(2)}× wall)`,
            r.cpuRatio <= max,
          ],
    );
  for (const r of rows) {
    if (r.max !== undefined) ratioGoal(r, r.max);
    else if (r.name.startsWith('start-up:')) ratioGoal(r, 2.5);
    else if (/^(warm sweep|first sweep)/.test(r.name)) ratioGoal(r, 2);
    else if (r.name.startsWith('truncate an indexed')) ratioGoal(r, 3);
    else if (r.name.startsWith('explain')) ratioGoal(r, 1.5);
    else if (r.name.startsWith('du,')) ratioGoal(r, 1.5);
  }
  if (big !== undefined) {
    const gbsCpu = big.bytes / 1e9 / median(count.map((r) => r.cpu));
    goals.push([
      'counting a new record ≥ 1 GB/s (the whole --dry-run command, start-up included)',
      `${gbsCpu.toFixed(2)} GB/s per CPU-second (${(big.bytes / 1e9 / countS).toFixed(2)} GB/s wall)`,
      gbsCpu >= 1,
    ]);
  }
  if (large !== undefined) {
    const f = large.firstCpu / small.firstCpu,
      w = large.warmCpu / small.warmCpu;
    goals.push([
      'scaling: ×10 entries ≤ ×11 time',
      `first sweep ×${f.toFixed(2)}, warm ×${w.toFixed(2)} CPU`,
      Math.max(f, w) <= 11,
    ]);
  }
  if (oneRoot !== undefined && small !== undefined) {
    const x = oneRoot.warmCpu / small.warmCpu;
    const k = oneRoot.sessions / S.sessions;
    goals.push([
      `scaling within one root: ${oneRoot.sessions} sessions in one root ≤ ${(1.1 * k).toFixed(1)}× the warm sweep of ${S.sessions} over ${S.roots} roots`,
      `×${x.toFixed(2)} CPU`,
      x <= 1.1 * k,
    ]);
    const y = oneRoot.condemnCpu / oneRoot.smallCondemnCpu;
    const kc = oneRoot.condemned / oneRoot.smallCondemned;
    goals.push([
      `scaling within one root: a dry run condemning ${oneRoot.condemned} sessions of one root ≤ ${(1.1 * kc).toFixed(1)}× one condemning ${oneRoot.smallCondemned} over ${S.roots} roots`,
      `×${y.toFixed(2)} CPU`,
      y <= 1.1 * kc,
    ]);
  }
  // the first sweep against the floor of its own system calls (same home, same run)
  for (const f of rows.filter((r) => r.floor && r.name.startsWith('floor of a first sweep'))) {
    const at = f.name.replace(/^.*\), /, '');
    const sweep = rows.find((r) => r.name === `first sweep, ${at}`);
    if (sweep && f.cpu >= 0.01)
      goals.push([
        `first sweep, ${at}: ≤ 2× its floor (bench/floor.mjs)`,
        `${(sweep.cpu / f.cpu).toFixed(2)}× CPU (${(sweep.s / f.s).toFixed(2)}× wall)`,
        sweep.cpu / f.cpu <= 2,
      ]);
  }
  goals.push(['peak RSS ≤ 150 MB in every run', `${peak.toFixed(0)} MB`, peak <= 150]);
  lines.push('');
  lines.push('| goal | result | holds? |');
  lines.push('|---|---|---|');
  for (const [g, r, ok] of goals) lines.push(`| ${g} | ${r} | ${ok === undefined ? '—' : ok ? '**yes**' : '**no**'} |`);
  for (const n of notes) lines.push(n);
  const text = lines.join('\n');
  console.log(text);
  if (opt.md) fs.writeFileSync(opt.md, text + '\n');
  if (notes.length) process.exitCode = 1;
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
