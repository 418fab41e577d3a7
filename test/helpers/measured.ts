// Runs the built CLI (dist/cli/bin.js, as a user runs it: with the V8 flags its shebang line
// gives node) and measures the process: its peak RSS
// (VmHWM at exit, see PEAK_RSS_KB_JS) and the bytes it read (`rchar` of /proc/self/io at exit), both
// reported by a --require preload. A watchdog kills the child once its RSS passes the ceiling, so
// a regression fails fast instead of exhausting the machine.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { BIN, cliEnv } from './fixtures.js';

export interface Measured {
  status: number | null;
  stdout: string;
  stderr: string;
  /** peak RSS of the CLI process (KB); Infinity when it did not exit by itself */
  maxRssKb: number;
  /** bytes the CLI process read (read(2) and friends, page cache included); Infinity when unknown */
  readBytes: number;
  /** killed by the watchdog: its RSS passed the ceiling */
  killed: boolean;
}

/**
 * JavaScript (CommonJS or ESM) for the peak RSS in KB of the process that evaluates it: VmHWM of
 * /proc/self/status, the high-water mark of its own address space since exec. Not
 * process.resourceUsage().maxRSS: Linux carries getrusage's maxrss across exec, so a child forked
 * from a large test worker reports at least the worker's RSS (a Node 24 worker at 300 MB made
 * every child "peak" there).
 */
export const PEAK_RSS_KB_JS =
  "Number(/VmHWM:\\s+(\\d+)/.exec(process.getBuiltinModule('node:fs').readFileSync('/proc/self/status', 'latin1'))[1])";

const PRELOAD = `process.on('exit', () => {
  const fs = require('node:fs');
  const io = fs.readFileSync('/proc/self/io', 'latin1');
  fs.writeFileSync(process.env.MGC_MEASURED_OUT, JSON.stringify({ maxRssKb: ${PEAK_RSS_KB_JS}, rchar: Number(/rchar: (\\d+)/.exec(io)[1]) }));
});
`;

let preload: string | undefined;
/** The preload, one file per user named by its content (written once, by rename: never half written). */
function preloadFile(): string {
  if (preload) return preload;
  const name = path.join(
    os.tmpdir(),
    `mgc-measured-${process.getuid?.() ?? 0}-${createHash('sha256').update(PRELOAD).digest('hex').slice(0, 12)}.cjs`,
  );
  if (!fs.existsSync(name)) {
    const tmp = `${name}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, PRELOAD);
    fs.renameSync(tmp, name);
  }
  return (preload = name);
}

/** The node flags of the bin's shebang (`#!/usr/bin/env -S node <flags>`): what the executable runs with. */
export function shebangFlags(bin = BIN): string[] {
  const first = fs.readFileSync(bin, 'latin1').split('\n', 1)[0] ?? '';
  const m = /^#!\/usr\/bin\/env -S node((?: --[a-z-]+=[0-9]+)*)$/.exec(first);
  if (!m) throw new Error(`${bin}: unexpected shebang line ${JSON.stringify(first)}`);
  return m[1]!.trim().split(' ').filter(Boolean);
}

/** Run `murmur-gc args` with HOME = `home`, killed past `ceilingKb` of RSS. */
export function runMeasured(args: string[], home: string, ceilingKb = 300 * 1024): Promise<Measured> {
  const out = path.join(os.tmpdir(), `mgc-measured-out-${process.pid}-${Math.random().toString(16).slice(2)}.json`);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...shebangFlags(), '--require', preloadFile(), BIN, ...args], {
      env: { ...cliEnv(home), MGC_MEASURED_OUT: out },
    });
    const stdout: Buffer[] = [];
    let stderr = '';
    let killed = false;
    child.stdout.on('data', (d: Buffer) => stdout.push(d));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const watch = setInterval(() => {
      try {
        const rss = Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'latin1'))?.[1] ?? 0);
        if (rss > ceilingKb) {
          killed = true;
          child.kill('SIGKILL');
        }
      } catch {
        // gone
      }
    }, 20);
    child.on('close', (status) => {
      clearInterval(watch);
      let m: { maxRssKb: number; rchar: number } = { maxRssKb: Infinity, rchar: Infinity };
      try {
        m = JSON.parse(fs.readFileSync(out, 'utf8')) as typeof m;
        fs.rmSync(out);
      } catch {
        // killed before it could say
        fs.rmSync(out, { force: true });
      }
      resolve({
        status,
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr,
        killed,
        maxRssKb: m.maxRssKb,
        readBytes: m.rchar,
      });
    });
  });
}

/** Allocated bytes under `dir` (what `du` counts), 0 when it does not exist. */
export function duBytes(dir: string): number {
  let n = 0;
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    n += fs.lstatSync(p).blocks * 512;
    if (e.isDirectory()) n += duBytes(p);
  }
  return n;
}
