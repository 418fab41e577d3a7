// Property: the daemon is not killed by a signal during its start-up. SIGHUP/SIGTERM that arrive
// while the configuration is still being loaded are handled (a reload, a clean stop, exit 0),
// never the default action (exit 129/143) — `systemctl reload` right after start is safe.
// Under systemd (Type=notify) the guard is the unit: systemd runs no reload before READY=1, so the
// daemon must send READY only once its handlers are installed. A fake service manager (a python3
// unix datagram socket as NOTIFY_SOCKET) reads /proc/<pid>/status the moment READY arrives and
// sends the SIGHUP systemd would then be free to send, at once.
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import * as f from '../helpers/fixtures.js';
import { requirement } from '../helpers/requirements.js';
import { count, figures } from './soak.js';

let T: string;
beforeEach(() => {
  T = f.tempDir('rel-daemon');
});
afterEach(() => f.rmrf(T));

function caught(pid: number): bigint {
  try {
    const m = /SigCgt:\s*([0-9a-f]+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? BigInt(`0x${m[1]}`) : 0n;
  } catch {
    return 0n;
  }
}
const bit = (n: number) => 1n << BigInt(n - 1);

describe("signals during the daemon's start-up", () => {
  it.each(['SIGHUP', 'SIGTERM'] as const)(
    '%s while the configuration is being loaded is handled, and the daemon stops with 0',
    (sig) => {
      const cfg = f.writeConfig(T, `home: ${path.join(T, '.murmur')}\n`);
      const script = `
      const [repo, cfg, sig] = process.argv.slice(1);
      const { runDaemonCommand } = await import(repo + '/dist/cli/daemon.js');
      const { loadConfig } = await import(repo + '/dist/config/load.js');
      const pause = (ms) => new Promise((r) => setTimeout(r, ms));
      const code = await runDaemonCommand({ config: cfg }, {
        load: async (fl) => {
          process.kill(process.pid, sig); // arrives mid-load
          await pause(100);
          const c = await loadConfig({ configPath: fl.config, env: process.env, cwd: process.cwd() });
          if (sig === 'SIGHUP') setTimeout(() => process.kill(process.pid, 'SIGTERM'), 1500);
          return c;
        },
      });
      process.stdout.write('exit ' + code + '\\n');
      process.exit(code);
    `;
      const r = spawnSync(process.execPath, ['--input-type=module', '-e', script, f.REPO, cfg, sig], {
        env: f.cliEnv(T),
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(r.signal).toBeNull();
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toContain('exit 0');
      if (sig === 'SIGHUP') expect(r.stderr).toContain('SIGHUP: reloading the configuration');
    },
  );

  it('the real executable, signalled as soon as it catches SIGHUP/SIGTERM, reloads and stops with 0', async () => {
    const runs = count(3, 20);
    const cfg = f.writeConfig(T, `home: ${path.join(T, '.murmur')}\n`);
    const latencies: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      const child = spawn(process.execPath, [f.BIN, 'daemon', '--config', cfg], {
        env: f.cliEnv(T),
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child.on('exit', (code, signal) => resolve({ code, signal })),
      );
      while ((caught(child.pid!) & (bit(1) | bit(15))) !== (bit(1) | bit(15)))
        await new Promise((r) => setTimeout(r, 2));
      latencies.push(performance.now() - t0);
      // Configuration not read yet (or just): a reload, then a stop.
      child.kill('SIGHUP');
      await new Promise((r) => setTimeout(r, 50));
      child.kill('SIGTERM');
      const ex = await exited;
      expect(ex.signal, err).toBeNull();
      expect(ex.code, err).toBe(0);
    }
    figures('daemon-startup', {
      runs,
      handlers_after_ms_max: Math.round(Math.max(...latencies)),
      handlers_after_ms_min: Math.round(Math.min(...latencies)),
    });
  }, 900_000);
});

// The fake service manager: prints each datagram as a JSON line (with the receiving process's
// caught-signal mask read the moment READY=1 arrives), sends MAINPID the signal in argv[2] right
// then, and closes the file descriptors it is passed (systemd-notify's barrier waits for that).
const MANAGER = `
import array, json, os, signal, socket, sys
path, sig = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
print(json.dumps({"listening": True}), flush=True)
while True:
    data, anc, _, _ = s.recvmsg(4096, socket.CMSG_SPACE(16 * 4))
    text = data.decode("utf-8", "replace")
    fields = dict(l.split("=", 1) for l in text.split("\\n") if "=" in l)
    out = {"text": text}
    if fields.get("READY") == "1" and "MAINPID" in fields:
        pid = int(fields["MAINPID"])
        with open("/proc/%d/status" % pid) as st:
            out["sigcgt"] = [l.split()[1] for l in st if l.startswith("SigCgt:")][0]
        if sig != "none":
            os.kill(pid, getattr(signal, sig))
    for level, kind, payload in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds = array.array("i")
            fds.frombytes(payload[: len(payload) - (len(payload) % fds.itemsize)])
            for fd in fds:
                os.close(fd)
    print(json.dumps(out), flush=True)
`;

/** `p`, or a rejection naming what did not happen within `ms`. */
function within<T>(p: Promise<T>, ms: number, what: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(what())), ms)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

const needsNotify = requirement('systemd notification', ['cmd:python3', 'cmd:systemd-notify']);

interface Manager {
  socket: string;
  messages: { text?: string; sigcgt?: string }[];
  ready: Promise<{ text?: string; sigcgt?: string }>;
  stop(): void;
}

async function fakeManager(dir: string, sig: 'SIGHUP' | 'SIGTERM' | 'none'): Promise<Manager> {
  const script = path.join(dir, 'manager.py');
  fs.writeFileSync(script, MANAGER);
  const socket = path.join(dir, 'notify.sock');
  const py = spawn('python3', [script, socket, sig], { stdio: ['ignore', 'pipe', 'inherit'] });
  const messages: Manager['messages'] = [];
  let onReady: (m: Manager['messages'][number]) => void = () => {};
  const ready = new Promise<Manager['messages'][number]>((r) => (onReady = r));
  let listening: () => void = () => {};
  const up = new Promise<void>((r) => (listening = r));
  let buf = '';
  py.stdout.on('data', (d: Buffer) => {
    buf += d.toString();
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const m = JSON.parse(buf.slice(0, nl)) as { listening?: boolean; text?: string; sigcgt?: string };
      buf = buf.slice(nl + 1);
      if (m.listening) listening();
      else {
        messages.push(m);
        if (m.sigcgt !== undefined) onReady(m);
      }
    }
  });
  await up;
  return { socket, messages, ready, stop: () => py.kill('SIGKILL') };
}

describe.runIf(needsNotify.run)('under systemd (Type=notify): READY=1 only once the handlers are installed', () => {
  beforeAll(() => needsNotify.check());

  it('a SIGHUP sent the moment READY arrives reloads, and the daemon then stops with 0', async () => {
    const runs = count(3, 20);
    const cfg = f.writeConfig(T, `home: ${path.join(T, '.murmur')}\n`);
    const latencies: number[] = [];
    for (let i = 0; i < runs; i++) {
      const dir = fs.mkdtempSync(path.join(T, 'mgr-'));
      const mgr = await fakeManager(dir, 'SIGHUP');
      try {
        const t0 = performance.now();
        const child = spawn(process.execPath, [f.BIN, 'daemon', '--config', cfg], {
          env: f.cliEnv(T, { NOTIFY_SOCKET: mgr.socket }),
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        let err = '';
        child.stderr.on('data', (d: Buffer) => (err += d.toString()));
        const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
          child.on('exit', (code, signal) => resolve({ code, signal })),
        );
        const ready = await within(mgr.ready, 60_000, () => `no READY=1 within 60 s; daemon stderr:\n${err}`);
        latencies.push(performance.now() - t0);
        // READY=1 from systemd-notify --ready --pid=<the daemon>, not from another process
        expect(ready.text?.split('\n')).toEqual(expect.arrayContaining(['READY=1', `MAINPID=${child.pid}`]));
        const mask = BigInt(`0x${ready.sigcgt}`);
        for (const n of [1, 2, 15]) expect((mask & bit(n)) !== 0n, `signal ${n} caught at READY`).toBe(true);
        while (!err.includes('SIGHUP: reloading the configuration')) {
          expect(child.exitCode, err).toBeNull();
          await new Promise((r) => setTimeout(r, 20));
        }
        child.kill('SIGTERM');
        const ex = await exited;
        expect(ex.signal, err).toBeNull();
        expect(ex.code, err).toBe(0);
        expect(err).not.toContain('could not tell systemd');
        // exactly one READY=1
        expect(mgr.messages.filter((m) => m.text?.split('\n').includes('READY=1'))).toHaveLength(1);
      } finally {
        mgr.stop();
      }
    }
    figures('daemon-notify', {
      runs,
      ready_after_ms_min: Math.round(Math.min(...latencies)),
      ready_after_ms_max: Math.round(Math.max(...latencies)),
    });
  }, 900_000);

  it('a notification that cannot be delivered is logged (io_error); the daemon runs and stops with 0', async () => {
    const cfg = f.writeConfig(T, `home: ${path.join(T, '.murmur')}\n`);
    const child = spawn(process.execPath, [f.BIN, 'daemon', '--config', cfg], {
      env: f.cliEnv(T, { NOTIFY_SOCKET: path.join(T, 'no-such-socket') }),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    );
    while (!err.includes('could not tell systemd the daemon is ready')) {
      expect(child.exitCode, err).toBeNull();
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(err).toContain('"code":"io_error"');
    child.kill('SIGTERM');
    const ex = await exited;
    expect({ code: ex.code, signal: ex.signal }).toEqual({ code: 0, signal: null });
  }, 60_000);

  it('without NOTIFY_SOCKET nothing is sent and nothing is logged about systemd', async () => {
    const dir = fs.mkdtempSync(path.join(T, 'mgr-'));
    const mgr = await fakeManager(dir, 'none');
    try {
      const cfg = f.writeConfig(T, `home: ${path.join(T, '.murmur')}\n`);
      const env = f.cliEnv(T);
      delete env['NOTIFY_SOCKET'];
      const child = spawn(process.execPath, [f.BIN, 'daemon', '--config', cfg], {
        env,
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      while (!err.includes('murmur-gc daemon started')) await new Promise((r) => setTimeout(r, 20));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(mgr.messages).toEqual([]);
      expect(err).not.toContain('systemd');
    } finally {
      mgr.stop();
    }
  }, 60_000);
});
