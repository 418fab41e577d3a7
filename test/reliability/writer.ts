// A separate process that appends numbered lines like the runtime does: open(O_APPEND), one
// write, close — per line, at a fixed rate (startWriter); or one that keeps a single O_APPEND
// descriptor open across its appends, which the runtime never does (startHeldWriter). Lines are
// `{"seq":N,"w":W}` so order, loss and duplication can be checked exactly.
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';

const SCRIPT = `
const fs = require('node:fs');
const [file, total, rate, w] = process.argv.slice(1);
const n = Number(total), perSec = Number(rate);
const sleeper = new Int32Array(new SharedArrayBuffer(4));
const t0 = process.hrtime.bigint();
for (let i = 0; i < n; i++) {
  const due = t0 + BigInt(Math.floor((i * 1e9) / perSec));
  for (;;) {
    const ahead = Number(due - process.hrtime.bigint()) / 1e6;
    if (ahead <= 0) break;
    if (ahead > 1) Atomics.wait(sleeper, 0, 0, Math.floor(ahead));
  }
  const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_APPEND);
  fs.writeSync(fd, '{"seq":' + i + ',"w":' + w + '}\\n');
  fs.closeSync(fd);
}
const secs = Number(process.hrtime.bigint() - t0) / 1e9;
process.stdout.write(JSON.stringify({ lines: n, secs }));
`;

export interface Writer {
  child: ChildProcess;
  done: Promise<{ lines: number; secs: number }>;
}

export function startWriter(file: string, total: number, perSec: number, id = 0): Writer {
  const child = spawn(process.execPath, ['-e', SCRIPT, file, String(total), String(perSec), String(id)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  const done = new Promise<{ lines: number; secs: number }>((resolve, reject) => {
    child.on('exit', (code) =>
      code === 0
        ? resolve(JSON.parse(out) as { lines: number; secs: number })
        : reject(new Error(`writer exited ${code}`)),
    );
  });
  return { child, done };
}

/**
 * Check the complete lines of a record written by writers: per writer, seq strictly consecutive
 * (nothing lost or duplicated in between, nothing out of order). Returns per-writer first/last.
 */
export function checkSequence(text: string): {
  problems: string[];
  last: Map<number, number>;
  first: Map<number, number>;
  lines: number;
} {
  const problems: string[] = [];
  const last = new Map<number, number>();
  const first = new Map<number, number>();
  let lines = 0;
  const parts = text.split('\n');
  parts.pop(); // an incomplete last line (a writer mid-write) or ''
  for (const [i, l] of parts.entries()) {
    if (!l.startsWith('{"seq"')) continue; // a header or other non-writer line
    let o: { seq: number; w: number };
    try {
      o = JSON.parse(l) as { seq: number; w: number };
    } catch {
      problems.push(`line ${i + 1} is torn`);
      continue;
    }
    lines++;
    const prev = last.get(o.w);
    if (prev === undefined) first.set(o.w, o.seq);
    else if (o.seq !== prev + 1) problems.push(`line ${i + 1}: writer ${o.w} seq ${o.seq} after ${prev}`);
    last.set(o.w, o.seq);
  }
  return { problems, last, first, lines };
}

const HELD_SCRIPT = `
const fs = require('node:fs');
const [file, rate, w, stopFile, maxMs] = process.argv.slice(1);
const perSec = Number(rate);
const sleeper = new Int32Array(new SharedArrayBuffer(4));
const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_APPEND);
process.stdout.write('open\\n');
const t0 = process.hrtime.bigint();
const end = Date.now() + Number(maxMs);
let i = 0;
for (;;) {
  if (i % 50 === 0 && (fs.existsSync(stopFile) || Date.now() > end)) break;
  if (perSec > 0) {
    const due = t0 + BigInt(Math.floor((i * 1e9) / perSec));
    for (;;) {
      const ahead = Number(due - process.hrtime.bigint()) / 1e6;
      if (ahead <= 0) break;
      if (ahead > 1) Atomics.wait(sleeper, 0, 0, Math.floor(ahead));
    }
    fs.writeSync(fd, '{"seq":' + i + ',"w":' + w + '}\\n');
    i++;
  } else {
    Atomics.wait(sleeper, 0, 0, 20);
  }
}
fs.closeSync(fd);
const secs = Number(process.hrtime.bigint() - t0) / 1e9;
process.stdout.write(JSON.stringify({ lines: i, secs }) + '\\n');
`;

export interface HeldWriter {
  child: ChildProcess;
  /** Resolves once the writer holds its descriptor. */
  opened: Promise<void>;
  /** Makes the writer close its descriptor and exit; resolves with what it wrote. */
  stop: () => Promise<{ lines: number; secs: number }>;
}

/**
 * A separate process that opens `file` once (O_WRONLY|O_APPEND) and keeps that descriptor while
 * it appends `{"seq":N,"w":W}` lines at `perSec` (0: it writes nothing, it only holds the file),
 * until `stop()` or `maxMs` — the shape the runtime never has (it opens, appends and closes per
 * line), and the one a staged rewrite must never rename over.
 */
export function startHeldWriter(file: string, perSec: number, id = 0, maxMs = 20_000): HeldWriter {
  const stopFile = `${file}.stop-${process.pid}-${id}`;
  const child = spawn(
    process.execPath,
    ['-e', HELD_SCRIPT, file, String(perSec), String(id), stopFile, String(maxMs)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  let markOpen: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => (markOpen = resolve));
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
    if (out.startsWith('open\n')) markOpen();
  });
  const done = new Promise<{ lines: number; secs: number }>((resolve, reject) => {
    child.on('exit', (code) => {
      fs.rmSync(stopFile, { force: true });
      if (code !== 0) return reject(new Error(`held writer exited ${code}`));
      resolve(JSON.parse(out.slice('open\n'.length)) as { lines: number; secs: number });
    });
  });
  return {
    child,
    opened,
    stop: () => {
      fs.writeFileSync(stopFile, '');
      return done;
    },
  };
}
