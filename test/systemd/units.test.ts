// The shipped systemd user units: `systemd-analyze verify` accepts them without a single warning,
// the long-running service's offline security exposure stays <= 2.0 and fails no check beyond the
// reviewed ones (each explained in the unit file), and the directives that the liveness checks
// depend on stay out. Without systemd-analyze on PATH the group is skipped with a
// printed reason (test/helpers/requirements.ts); .ci/run installs it and lets nothing skip.
//
// Verify runs on the real files, in user mode, with HOME pointing at a scratch home that holds a
// dummy executable at the unit's ExecStart path (%h/.local/bin/murmur-gc), so verify's "command
// is not executable" check passes without changing the unit. The command, with $T a scratch dir:
//   HOME=$T/home XDG_RUNTIME_DIR=$T/run systemd-analyze verify --user \
//     systemd/murmur-gc.service systemd/murmur-gc-sweep.service systemd/murmur-gc.timer
import { execFile, spawnSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requirement } from '../helpers/requirements.js';

const UNITS_DIR = fileURLToPath(new URL('../../systemd/', import.meta.url));
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const DAEMON = 'murmur-gc.service';
const SWEEP = 'murmur-gc-sweep.service';
const TIMER = 'murmur-gc.timer';
const UNITS = [DAEMON, SWEEP, TIMER];
const MAX_EXPOSURE = 2.0;
const needs = requirement('systemd unit checks', ['cmd:systemd-analyze']);

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs systemd-analyze; never rejects on a non-zero exit, fails clearly when it is missing. */
function analyze(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(
      'systemd-analyze',
      args,
      {
        env: { ...process.env, LC_ALL: 'C', SYSTEMD_COLORS: '0', SYSTEMD_PAGER: 'cat', ...env },
        timeout: 30_000,
        maxBuffer: 4 * 1024 * 1024,
      },
      (err, stdout, stderr) => {
        if (err && (err as NodeJS.ErrnoException).code === 'ENOENT') {
          reject(new Error('systemd-analyze was not found on PATH: install it (Debian: `apt-get install systemd`).'));
          return;
        }
        let code = 0;
        if (err) code = typeof err.code === 'number' ? err.code : -1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** Non-comment, non-blank lines of a unit file, as `Key=value` strings. */
function directives(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#') && !l.startsWith(';') && !l.startsWith('['));
}

function values(text: string, key: string): string[] {
  return directives(text)
    .filter((l) => l.startsWith(`${key}=`))
    .map((l) => l.slice(key.length + 1));
}

let scratch: string;
let verifyEnv: NodeJS.ProcessEnv;
const unitText = new Map<string, string>();

beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'murmur-gc-units-'));
  const home = path.join(scratch, 'home');
  const run = path.join(scratch, 'run');
  await mkdir(path.join(home, '.local', 'bin'), { recursive: true });
  await mkdir(run, { mode: 0o700 });
  const fakeBin = path.join(home, '.local', 'bin', 'murmur-gc');
  await writeFile(fakeBin, '#!/bin/sh\nexit 0\n');
  await chmod(fakeBin, 0o755);
  verifyEnv = {
    HOME: home,
    XDG_RUNTIME_DIR: run,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_DATA_HOME: path.join(home, '.local', 'share'),
  };
  for (const unit of UNITS) unitText.set(unit, await readFile(path.join(UNITS_DIR, unit), 'utf8'));
});

afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe.runIf(needs.run)('systemd units', () => {
  beforeAll(() => needs.check());

  it('systemd-analyze is installed', async () => {
    const r = await analyze(['--version']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^systemd \d+/);
  });

  it('pass `systemd-analyze verify --user` with no output at all', async () => {
    const r = await analyze(['verify', '--user', ...UNITS.map((u) => path.join(UNITS_DIR, u))], verifyEnv);
    const output = (r.stdout + r.stderr).trim();
    expect({ code: r.code, output }).toEqual({ code: 0, output: '' });
  });

  it('the verify harness catches a broken unit (negative control)', async () => {
    const dir = path.join(scratch, 'broken');
    await mkdir(dir, { recursive: true });
    const broken = path.join(dir, DAEMON);
    await writeFile(broken, (unitText.get(DAEMON) ?? '').replace(/^ProtectSystem=strict$/m, 'ProtectSystem=stric'));
    const r = await analyze(['verify', '--user', broken], verifyEnv);
    expect(r.stdout + r.stderr).toMatch(/ProtectSystem|protect system/i);
  });

  it.each([DAEMON, SWEEP])('%s has an offline security exposure <= 2.0', async (unit) => {
    const r = await analyze(['security', '--offline=true', '--no-pager', path.join(UNITS_DIR, unit)]);
    expect(r.code, r.stderr).toBe(0);
    const m = new RegExp(`Overall exposure level for ${unit.replaceAll('.', '\\.')}: (\\d+(?:\\.\\d+)?)`).exec(
      r.stdout,
    );
    expect(m, `no "Overall exposure level" line in:\n${r.stdout}\n${r.stderr}`).not.toBeNull();
    const score = Number(m?.[1]);
    expect(score).toBeLessThanOrEqual(MAX_EXPOSURE);
  });

  // What each unit is allowed to fail in `systemd-analyze security --offline=true`: a check failing
  // beyond these is a regression. NotifyAccess= is the price of Type=notify (systemd-notify is a
  // child of the daemon); the others are explained in murmur-gc.service ("Left out on purpose").
  const ACCEPTED = [
    'RootDirectory=/RootImage=',
    'User=/DynamicUser=',
    'MemoryDenyWriteExecute=',
    'RestrictAddressFamilies=~AF_UNIX',
    'ProtectHome=',
    'ProtectProc=',
    'ProcSubset=',
    'DeviceAllow=',
    'IPAddressDeny=',
  ];
  it.each([
    [DAEMON, [...ACCEPTED, 'NotifyAccess='], 1.2],
    [SWEEP, ACCEPTED, 1.0],
  ] as const)('%s fails only the reviewed security checks', async (unit, accepted, exposure) => {
    const r = await analyze(['security', '--offline=true', '--no-pager', path.join(UNITS_DIR, unit)]);
    expect(r.code, r.stderr).toBe(0);
    const failed = r.stdout
      .split('\n')
      .filter((l) => l.startsWith('- ') || l.startsWith('✗')) // LC_ALL=C prints "-" for a failed check
      .map((l) => l.slice(1).trim().split(/\s+/)[0]);
    expect(failed.sort()).toEqual([...accepted].sort());
    expect(r.stdout).toContain(`Overall exposure level for ${unit}: ${exposure.toFixed(1)} `);
  });

  it('the daemon unit keeps what murmur-gc relies on', () => {
    const text = unitText.get(DAEMON) ?? '';
    // Ready only once its signal handlers exist (src/daemon/sd-notify.ts): no reload before that.
    expect(values(text, 'Type')).toEqual(['notify']);
    expect(values(text, 'NotifyAccess')).toEqual(['all']);
    expect(values(text, 'ExecReload')).toEqual(['/bin/kill -HUP $MAINPID']);
    expect(values(text, 'ExecStart')).toEqual(['%h/.local/bin/murmur-gc daemon']);
    expect(values(text, 'Restart')).toEqual(['on-failure']);
    expect(values(text, 'IOSchedulingClass')).toEqual(['idle']);
    expect(values(text, 'Nice')).toEqual(['10']);
    expect(values(text, 'UMask')).toEqual(['0077']);
    expect(values(text, 'PrivateUsers')).toEqual(['true']);
    expect(values(text, 'ReadWritePaths')).toEqual(['%h/.murmur']);
    expect(values(text, 'RestrictAddressFamilies')).toEqual(['AF_UNIX']);
  });

  it.each([DAEMON, SWEEP])('%s keeps other processes visible and V8 working', (unit) => {
    const text = unitText.get(unit) ?? '';
    // Liveness reads /proc/<pid>/stat (and /proc/stat's btime) and calls kill(pid, 0).
    for (const key of ['ProtectProc', 'ProcSubset', 'PrivatePIDs', 'MemoryDenyWriteExecute']) {
      expect(values(text, key), key).toEqual([]);
    }
  });

  it('the sweep service and timer are wired together', () => {
    const sweep = unitText.get(SWEEP) ?? '';
    const timer = unitText.get(TIMER) ?? '';
    expect(values(sweep, 'Type')).toEqual(['oneshot']);
    expect(values(sweep, 'ExecStart')).toEqual(['%h/.local/bin/murmur-gc sweep --unattended']);
    expect(values(timer, 'Unit')).toEqual([SWEEP]);
    expect(values(timer, 'OnCalendar')).toEqual(['*:0/30']);
    expect(values(timer, 'Persistent')).toEqual(['true']);
    expect(values(timer, 'RandomizedDelaySec')).toEqual(['5min']);
    expect(values(timer, 'AccuracySec')).toEqual(['1min']);
    expect(values(timer, 'WantedBy')).toEqual(['timers.target']);
  });
  it("the timer's sweep creates nothing: no ExecStartPre, a missing ~/.murmur is left out of the sandbox", () => {
    const sweep = unitText.get(SWEEP) ?? '';
    expect(values(sweep, 'ExecStartPre')).toEqual([]);
    // "-": systemd ignores the path when it does not exist (systemd.exec(5)); each run is a new
    // namespace, so the run after the runtime creates ~/.murmur gets it writable.
    expect(values(sweep, 'ReadWritePaths')).toEqual(['-%h/.murmur']);
  });

  it("the daemon's ExecStartPre mkdir is its only creation, and the README says so", async () => {
    const daemon = unitText.get(DAEMON) ?? '';
    expect(values(daemon, 'ExecStartPre')).toEqual(['+/bin/mkdir -p -m 0700 %h/.murmur']);
    const readme = (await readFile(path.join(REPO, 'README.md'), 'utf8')).replace(/\s+/g, ' ');
    expect(readme).toContain('creates nothing and exits 0. The one exception is the long-running service');
  });

  it('every unit carries Documentation= pointing at docs the package ships', () => {
    const prefix = 'file:%h/.local/lib/node_modules/murmur-gc/';
    const packed = spawnSync('npm', ['pack', '--dry-run', '--ignore-scripts', '--json'], {
      cwd: REPO,
      encoding: 'utf8',
    });
    expect(packed.status, packed.stderr).toBe(0);
    const shipped = new Set(
      (JSON.parse(packed.stdout) as { files: { path: string }[] }[])[0]!.files.map((x) => x.path),
    );
    for (const u of UNITS) {
      const uris = values(unitText.get(u) ?? '', 'Documentation').flatMap((v) => v.split(/\s+/));
      expect(uris.length, u).toBeGreaterThan(0);
      for (const uri of uris) {
        expect(uri.startsWith(prefix), `${u}: ${uri}`).toBe(true);
        expect(shipped.has(uri.slice(prefix.length)), `${u}: ${uri} is not in the package`).toBe(true);
      }
    }
  });
});
