// Real servers for integration tests (node_exporter, Prometheus): started on a free 127.0.0.1
// port, waited for with a bounded readiness poll, and always stopped — by the test's afterAll;
// by this process's exit handler; and, should the test worker be killed outright, by the kernel:
// each server runs under `setpriv --pdeathsig KILL` (util-linux), so it gets SIGKILL when the
// worker dies. Callers list `cmd:setpriv` among their requirements.
// Guarantees: a server that exits before it is ready (a port taken between the probe and its
// bind) is retried on another port, at most 3 times; stop() sends SIGTERM, then SIGKILL after
// 5 s, and resolves once the process has exited. Nothing is left running after the test file.
import { spawn, type ChildProcess } from 'node:child_process';
import * as net from 'node:net';

export interface Server {
  port: number;
  url: string;
  /** stdout and stderr so far (for failure messages). */
  output(): string;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
let exitHook = false;

function hookExit(): void {
  if (exitHook) return;
  exitHook = true;
  process.on('exit', () => {
    for (const c of running) c.kill('SIGKILL');
  });
}

/** A port that was free a moment ago on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => (a !== null && typeof a === 'object' ? resolve(a.port) : reject(new Error('no port'))));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Start `cmd` with `args(port)` and wait until GET `url + readyPath` answers 200, for at most
 * `timeoutMs`. Throws with the server's output when it never gets ready.
 */
export async function startServer(
  cmd: string,
  args: (port: number) => string[],
  readyPath: string,
  timeoutMs = 20_000,
): Promise<Server> {
  hookExit();
  let last = '';
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const child = spawn('setpriv', ['--pdeathsig', 'KILL', '--', cmd, ...args(port)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    running.add(child);
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    let exited = false;
    const done = new Promise<void>((resolve) => {
      child.once('exit', () => {
        exited = true;
        running.delete(child);
        resolve();
      });
    });
    const url = `http://127.0.0.1:${port}`;
    const server: Server = {
      port,
      url,
      output: () => out,
      async stop() {
        if (exited) return;
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await done;
        clearTimeout(t);
      },
    };
    const t0 = Date.now();
    while (!exited && Date.now() - t0 < timeoutMs) {
      try {
        const r = await fetch(url + readyPath, { signal: AbortSignal.timeout(2_000) });
        if (r.status === 200) return server;
      } catch {
        // not listening yet
      }
      await sleep(100);
    }
    await server.stop();
    last = `${cmd} on port ${port} ${exited ? 'exited' : `was not ready after ${timeoutMs} ms`}:\n${out}`;
  }
  throw new Error(last);
}

/** Poll `probe` every 250 ms until it returns a value other than undefined, for at most `timeoutMs`. */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const t0 = Date.now();
  let lastErr: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      lastErr = err;
    }
    if (Date.now() - t0 > timeoutMs)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${lastErr instanceof Error ? `: ${lastErr.message}` : ''}`,
      );
    await sleep(250);
  }
}
