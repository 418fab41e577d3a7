// Fixture builders for murmur homes, sessions roots, traces and records, plus a runner for the
// built CLI. Tests create everything under a fresh temp dir and remove it afterwards.
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BIN = path.join(REPO, 'dist', 'cli', 'bin.js');

export function hex(n: number): string {
  return randomBytes(Math.ceil(n / 2))
    .toString('hex')
    .slice(0, n);
}

/** A uuid-v7-shaped id minted at `ms`. */
export function idAt(prefix: string, ms: number): string {
  return prefix + Math.floor(ms).toString(16).padStart(12, '0') + '7' + hex(19);
}

export const DAY = 86_400_000;

export function tempDir(label = 'mgc'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `${label}-`));
}

export function rmrf(p: string): void {
  fs.rmSync(p, { recursive: true, force: true });
}

export interface TraceOptions {
  sessionId: string;
  startMs?: number;
  contextId?: string | null;
  tasks?: { taskId: string; contextId: string; trust?: 'trusted' | 'untrusted' }[];
  detached?: { workId: string; taskId?: string | null; binary?: string; command?: string; atMs?: number }[];
  accounted?: { workId: string; type: 'shell_completed' | 'shell_abandoned' | 'shell_lost' }[];
  end?: boolean;
  extra?: string;
}

export function traceText(o: TraceOptions): { text: string; sessionStartId: string } {
  const t0 = o.startMs ?? Date.now() - 3 * DAY;
  const startId = idAt('evt_', t0);
  const lines: Record<string, unknown>[] = [];
  lines.push({
    event_type: 'session_start',
    event_id: startId,
    parent_id: null,
    session_id: o.sessionId,
    timestamp: t0,
    capsule_name: 'demo',
    capsule_version: '1.0.0',
    context_id: o.contextId ?? null,
  });
  let t = t0;
  for (const task of o.tasks ?? []) {
    t += 10;
    lines.push({
      event_type: 'task_start',
      event_id: idAt('evt_', t),
      parent_id: startId,
      session_id: o.sessionId,
      timestamp: t,
      task_id: task.taskId,
      context_id: task.contextId,
      source: 'task_md',
      origin: 'user',
      trust: task.trust ?? 'trusted',
      lane: 'user',
      message_parts_bytes: 10,
    });
  }
  for (const d of o.detached ?? []) {
    t += 10;
    lines.push({
      event_type: 'shell_detached',
      event_id: idAt('evt_', t),
      parent_id: startId,
      session_id: o.sessionId,
      timestamp: d.atMs ?? t,
      turn: 0,
      task_id: d.taskId === undefined ? (o.tasks?.[0]?.taskId ?? null) : d.taskId,
      work_id: d.workId,
      binary: d.binary ?? '/usr/bin/sleep',
      command: d.command ?? '600',
      grace_ms: 10000,
    });
  }
  for (const a of o.accounted ?? []) {
    t += 10;
    lines.push({
      event_type: a.type,
      event_id: idAt('evt_', t),
      parent_id: startId,
      session_id: o.sessionId,
      timestamp: t,
      work_id: a.workId,
      binary: '/usr/bin/sleep',
      command: '600',
    });
  }
  if (o.end) {
    t += 10;
    lines.push({
      event_type: 'session_end',
      event_id: idAt('evt_', t),
      parent_id: startId,
      session_id: o.sessionId,
      timestamp: t,
      total_turns: 0,
      total_input_tokens: 0,
      total_output_tokens: 0,
      total_tool_calls: 0,
      total_shell_calls: 0,
      duration_ms: 5,
      exit_status: 'ok',
    });
  }
  return { text: lines.map((l) => JSON.stringify(l)).join('\n') + '\n' + (o.extra ?? ''), sessionStartId: startId };
}

/** Write a session dir with a trace; mtime defaults to the session's mint time (old). */
export function writeSession(
  root: string,
  o: TraceOptions & { mtimeMs?: number; files?: Record<string, string> },
): string {
  const dir = path.join(root, o.sessionId);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'trace.jsonl'), traceText(o).text);
  for (const [rel, content] of Object.entries(o.files ?? {})) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), content);
  }
  const m = (o.mtimeMs ?? o.startMs ?? Date.now() - 3 * DAY) / 1000;
  fs.utimesSync(path.join(dir, 'trace.jsonl'), m, m);
  fs.utimesSync(dir, m, m);
  return dir;
}

export function messageLine(id: string, role = 'user', text = 'hello'): string {
  return JSON.stringify({ role, content: [{ type: 'text', text }], id });
}

export interface RecordOptions {
  capsule?: string | null;
  createdMs?: number;
  truncated?: { dropped: number; oldest_surviving_id: string; last_dropped_id: string; at_ms: number };
  messages?: number;
  startMs?: number;
  lines?: string[];
  mtimeMs?: number;
  mode?: number;
}

export function recordText(o: RecordOptions): { text: string; ids: string[] } {
  const out: string[] = [];
  if (o.capsule) {
    const h: Record<string, unknown> = {
      type: 'murmur.record',
      capsule: o.capsule,
      created_ms: o.createdMs ?? 1756400000000,
    };
    if (o.truncated) h['truncated'] = o.truncated;
    out.push(JSON.stringify(h));
  }
  const ids: string[] = [];
  const t0 = o.startMs ?? Date.now() - 10 * DAY;
  for (let i = 0; i < (o.messages ?? 0); i++) {
    const id = idAt('msg_', t0 + i * 1000);
    ids.push(id);
    out.push(messageLine(id, i % 2 === 0 ? 'user' : 'assistant', `message ${i}`));
  }
  out.push(...(o.lines ?? []));
  return { text: out.length ? out.join('\n') + '\n' : '', ids };
}

export function writeRecord(
  home: string,
  store: string,
  context: string,
  o: RecordOptions,
): { file: string; ids: string[] } {
  const dir = path.join(home, 'conversations', store, context);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, 'conversation.jsonl');
  const { text, ids } = recordText(o);
  fs.writeFileSync(file, text, { mode: o.mode ?? 0o600 });
  if (o.mode !== undefined) fs.chmodSync(file, o.mode);
  if (o.mtimeMs !== undefined) fs.utimesSync(file, o.mtimeMs / 1000, o.mtimeMs / 1000);
  return { file, ids };
}

/**
 * The trace lines (for TraceOptions.extra) of a session `sessionId` that launched each child
 * workdir of `dels` (`child`: the workdir as the runtime writes it, e.g. `.murmur/children/x`),
 * from `startMs` + 100 on: a `delegation_start` each, and its `delegation` when `ended`.
 */
export function delegationLines(
  sessionId: string,
  startMs: number,
  dels: { child: string; ended?: boolean }[],
): string {
  let t = startMs + 100;
  const lines: Record<string, unknown>[] = [];
  for (const [i, d] of dels.entries()) {
    const delegationId = `del_${i}_${hex(8)}`;
    lines.push({
      event_type: 'delegation_start',
      event_id: idAt('evt_', ++t),
      parent_id: null,
      session_id: sessionId,
      timestamp: t,
      delegation_id: delegationId,
      capsule: 'worker',
      version: '1.0.0',
      child_session_id: idAt('ses_', t),
      child_workdir: d.child,
    });
    if (d.ended)
      lines.push({
        event_type: 'delegation',
        event_id: idAt('evt_', ++t),
        parent_id: null,
        session_id: sessionId,
        timestamp: t,
        delegation_id: delegationId,
        child_session_id: idAt('ses_', t),
        outcome: 'ok',
      });
  }
  return lines.map((l) => JSON.stringify(l) + '\n').join('');
}

export function writeConfig(dir: string, yaml: string): string {
  const p = path.join(dir, 'config.yaml');
  fs.writeFileSync(p, yaml);
  return p;
}

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

export function cliEnv(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), ...extra };
  delete env['NODE_OPTIONS'];
  delete env['VITEST'];
  return env;
}

/** Run the built CLI synchronously with HOME set to `home`. */
export function runCli(
  args: string[],
  home: string,
  extraEnv: Record<string, string> = {},
  timeoutMs = 60_000,
): CliResult {
  const r: SpawnSyncReturns<string> = spawnSync(process.execPath, [BIN, ...args], {
    env: cliEnv(home, extraEnv),
    encoding: 'utf8',
    timeout: timeoutMs,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Run the built CLI asynchronously (for concurrency tests). */
export function runCliAsync(args: string[], home: string, extraEnv: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: cliEnv(home, extraEnv) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

export function json<T = Record<string, unknown>>(r: CliResult): T {
  try {
    return JSON.parse(r.stdout) as T;
  } catch {
    throw new Error(`stdout is not one JSON document (status ${r.status}):\n${r.stdout}\nstderr:\n${r.stderr}`);
  }
}

/** Snapshot of a tree: path → {mode, size, mtimeMs, content hash or link target}. */
export function snapshotTree(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (p: string) => {
    const st = fs.lstatSync(p);
    const rel = path.relative(root, p) || '.';
    if (st.isSymbolicLink()) {
      out[rel] = `link:${fs.readlinkSync(p)}:${st.mode.toString(8)}`;
      return;
    }
    if (st.isDirectory()) {
      out[rel] = `dir:${st.mode.toString(8)}:${st.mtimeMs}`;
      for (const n of fs.readdirSync(p).sort()) walk(path.join(p, n));
      return;
    }
    if (st.isFile()) {
      out[rel] =
        `file:${st.mode.toString(8)}:${st.size}:${st.mtimeMs}:${fs.readFileSync(p).toString('base64').slice(0, 4096)}`;
      return;
    }
    out[rel] = `other:${st.mode.toString(8)}`;
  };
  walk(root);
  return out;
}

export function readLines(file: string): string[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '');
}

/** A running record as the runtime writes it (docs/design.md §R1): pretty JSON, every field. */
export function runningRecordJson(o: {
  sessionId: string;
  pid: number;
  processStart: string | undefined;
  workdir: string;
}): string {
  return JSON.stringify(
    {
      session_id: o.sessionId,
      url: '127.0.0.1:4100',
      pid: o.pid,
      process_start: o.processStart,
      capsule_name: 'demo',
      capsule_version: '1.0.0',
      workdir: o.workdir,
      outlives_launcher: false,
      started_at: '2026-01-01T00:00:00Z',
    },
    null,
    2,
  );
}

/** Field 22 of /proc/<pid>/stat: the runtime's process start token. */
export function processStartOf(pid: number): string {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
}

/** Deterministic PRNG (mulberry32, as bench/gen.mjs uses): numbers in [0, 1). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Record `dir/name` (an existing directory) in `<home>/gc/registry.jsonl` as murmur-gc's own, as
 * the run that made it would have before its rename (src/gchome/registry.ts): what a killed or
 * failed run leaves in a sessions root is then vouched for. `kind` follows from the name.
 */
export function vouch(
  home: string,
  dir: string,
  name: string,
  hold?: { session: string; untilMs: number; reason?: string },
): void {
  const st = fs.lstatSync(path.join(dir, name), { bigint: true });
  const kind = name.startsWith('.murmur-gc-quarantine.')
    ? 'hold'
    : name.startsWith('.murmur-gc-trash.')
      ? 'trash'
      : 'kept';
  const run = /^\.murmur-gc-(?:trash|kept)\.(ses_[0-9a-z]+)\./.exec(name)?.[1] ?? 'ses_0190000000007000800000000000000';
  const rec = {
    op: 'add',
    dir,
    name,
    kind,
    dev: String(st.dev),
    ino: String(st.ino),
    birth: String(st.birthtimeNs),
    run,
    ...(hold ? { session: hold.session, until_ms: hold.untilMs, reason: hold.reason ?? 'max_age' } : {}),
  };
  fs.mkdirSync(path.join(home, 'gc'), { recursive: true, mode: 0o700 });
  fs.appendFileSync(path.join(home, 'gc', 'registry.jsonl'), JSON.stringify(rec) + '\n', { mode: 0o600 });
}
