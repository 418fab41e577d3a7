// Every session murmur-gc can see, with its liveness (docs/design.md §2) — shared by the sweep and by
// `conversation rm|truncate` (which refuses contexts a live session uses).
// Guarantees: read-only; sessions roots are the configured ones, the ones named by running records
// (parent of the record's workdir; never pruned unless a policy names them) and <home>/gc (the
// audit root); the same directory reached twice is scanned once, keeping the entry with a policy.
import { dirname } from 'node:path';
import type { GcConfig, SessionRetain } from '../config/types.js';
import { judgeLiveness, type Liveness, type RunningProbe } from '../plan/liveness.js';
import { scanSessionsRoot, type Problem, type RootScan, type SessionScan } from '../runtime/inventory.js';
import { probeProcess, readRunningRecords, type RunningRecord } from '../runtime/running.js';
import { lstatPath, type Dir, type Identity } from '../fsx/safe-fs.js';
import type { TraceCache } from '../runtime/summary-cache.js';
import { LostQuota } from '../runtime/trace.js';
import { GC_DIR } from '../gchome/audit.js';
import { scanBeside, type BesideScan } from '../runtime/workdir-scan.js';
import { definedOnly } from '../defined.js';
import { loadTraceAppends, type TraceAppends } from '../gchome/trace-appends.js';

export interface RootPlanInput {
  root: string;
  retain: SessionRetain | undefined;
  /** disk budget of the entry (`max_bytes`) */
  maxBytes?: number;
  /** `children: { max_age }` (seconds): orphaned child workdirs older than this go */
  childrenMaxAgeSecs?: number;
  /** `keep_free: false`: never gives up anything for keep_free */
  keepFree?: false;
  /** murmur-gc's own audit root: retained by audit.retain, never reconciled */
  isAuditRoot: boolean;
  origin: string;
}

export interface RunningDebris {
  kind: 'running_temp' | 'running_record';
  name: string;
  identity: Identity;
  mtimeMs: number;
  pid: number;
  /** running_record: the start token it names (re-probed at the moment of action) */
  startTime?: string;
}

export interface SessionView {
  root: string;
  scan: SessionScan;
  liveness: Liveness;
  why: string;
  /**
   * The write liveness was judged by: the trace's mtime, or, when the only change since the
   * runtime's last write is murmur-gc's own append (src/gchome/trace-appends.ts), the runtime's.
   */
  lastWriteMs: number;
}

export interface SessionsWorld {
  roots: RootPlanInput[];
  /** `beside`: what lies beside a `W/.murmur` root in W (docs/design.md §9a); undefined for other roots */
  rootScans: { input: RootPlanInput; scan: RootScan; beside?: BesideScan }[];
  /** running-record probes by session id (sessions inside child workdirs are judged with them too) */
  running: ReadonlyMap<string, RunningProbe>;
  /**
   * What killed runtimes left in `<home>/running` (docs/design.md §R1): staging files and records
   * whose process is gone (the runtime's own prune test), for the debris step.
   */
  runningDebris: RunningDebris[];
  views: SessionView[];
  liveContexts: Set<string>;
  /** What murmur-gc appended to traces (reconciliation records into it; a real sweep saves it). */
  appends: TraceAppends;
  problems: Problem[];
  counts: { sessions_roots: number; sessions: number; traces_read: number; traces_cached: number };
}

export async function scanSessionsWorld(
  config: GcConfig,
  homeDir: Dir | undefined,
  cache: TraceCache | undefined,
  nowMs: number,
  signal?: AbortSignal,
): Promise<SessionsWorld> {
  const problems: Problem[] = [];
  const running = new Map<string, RunningProbe>();
  const discovered: RootPlanInput[] = [];
  const runningDebris: RunningDebris[] = [];
  const staleRecords: { r: RunningRecord; file: { identity: Identity; mtimeMs: number } }[] = [];
  if (homeDir) {
    const rs = await readRunningRecords(homeDir);
    problems.push(...rs.problems);
    for (const t of rs.staging)
      runningDebris.push({ kind: 'running_temp', name: t.name, identity: t.identity, mtimeMs: t.mtimeMs, pid: t.pid });
    for (const r of rs.records) {
      const probe: RunningProbe = r.pid === undefined ? 'dead' : await probeProcess(r.pid, r.startTime);
      if (running.get(r.sessionId) !== 'alive') running.set(r.sessionId, probe);
      const file = rs.files.get(r.file);
      if (probe === 'dead' && file) staleRecords.push({ r, file });
      if (r.workdir && r.workdir.startsWith('/')) {
        discovered.push({
          root: dirname(r.workdir),
          retain: undefined,
          isAuditRoot: false,
          origin: `running/${r.file}`,
        });
      }
    }
  }
  const roots = await dedupeRoots([
    ...config.sessions.map((s) => ({
      root: s.root,
      retain: s.retain,
      ...definedOnly({ maxBytes: s.maxBytes, childrenMaxAgeSecs: s.childrenMaxAgeSecs, keepFree: s.keepFree }),
      isAuditRoot: false,
      origin: s.origin,
    })),
    ...discovered,
    ...(homeDir
      ? [{ root: `${config.home}/${GC_DIR}`, retain: config.audit.retain, isAuditRoot: true, origin: 'audit' }]
      : []),
  ]);
  const counts = { sessions_roots: 0, sessions: 0, traces_read: 0, traces_cached: 0 };
  const rootScans: SessionsWorld['rootScans'] = [];
  // The unaccounted work this sweep holds, across its roots (docs/limits.md): the rest waits.
  const lost = new LostQuota();
  for (const input of roots) {
    signal?.throwIfAborted();
    const scan = await scanSessionsRoot(input.root, cache, signal, lost);
    problems.push(...scan.problems);
    if (scan.exists && !input.isAuditRoot) counts.sessions_roots++;
    if (!input.isAuditRoot) counts.sessions += scan.sessions.length;
    for (const s of scan.sessions) {
      if (s.trace?.ok) {
        if (s.trace.fromCache) counts.traces_cached++;
        else counts.traces_read++;
      }
    }
    const beside =
      scan.exists && !input.isAuditRoot ? await scanBeside(input.root, scan.identity, cache, signal) : undefined;
    if (beside) problems.push(...beside.problems);
    rootScans.push({ input, scan, ...(beside ? { beside } : {}) });
  }
  const views: SessionView[] = [];
  const liveContexts = new Set<string>();
  const appends = await loadTraceAppends(homeDir);
  for (const { input, scan } of rootScans) {
    for (const s of scan.sessions) {
      // murmur-gc's own appends are no evidence of life: such a trace is judged by the runtime's last write.
      const lastWriteMs = s.trace?.ok
        ? (appends.runtimeWriteMs(input.root, s.name, s.trace) ?? s.trace.mtimeMs)
        : (s.trace?.mtimeMs ?? s.dirMtimeMs);
      const v = judgeLiveness(
        {
          running: running.get(s.name) ?? 'none',
          lastWriteMs,
          hasSessionEnd: s.trace?.ok ? s.trace.summary.hasSessionEnd : undefined,
        },
        nowMs,
        config.liveGraceSecs * 1000,
      );
      views.push({ root: input.root, scan: s, liveness: v.state, why: v.why, lastWriteMs });
      if (v.state === 'live' && s.trace?.ok) s.trace.summary.contextIds.forEach((c) => liveContexts.add(c));
    }
  }
  // A stale record goes once what it points at needs nothing more: its session is gone, or has no
  // unaccounted work left to reconcile (else the next sweep takes it, after this one reconciled).
  // (the first view of each name, as a search of the views in order finds it; made only when needed)
  const viewOf = new Map<string, SessionView>();
  if (staleRecords.length > 0) for (const v of views) if (!viewOf.has(v.scan.name)) viewOf.set(v.scan.name, v);
  for (const { r, file } of staleRecords) {
    const v = viewOf.get(r.sessionId);
    if (v?.scan.trace?.ok && (v.scan.trace.summary.unaccounted.length > 0 || v.scan.trace.summary.unaccountedMore))
      continue;
    runningDebris.push({
      kind: 'running_record',
      name: r.file,
      identity: file.identity,
      mtimeMs: file.mtimeMs,
      pid: r.pid,
      startTime: r.startTime,
    });
  }
  return { roots, rootScans, running, runningDebris, views, liveContexts, appends, problems, counts };
}

async function dedupeRoots(inputs: RootPlanInput[]): Promise<RootPlanInput[]> {
  const seen = new Map<string, RootPlanInput>();
  for (const i of inputs) {
    const st = await lstatPath(i.root);
    const key = st ? `${st.dev}:${st.ino}` : `path:${i.root}`;
    const prev = seen.get(key);
    if (!prev) seen.set(key, i);
    else if (
      !prev.retain &&
      prev.maxBytes === undefined &&
      prev.childrenMaxAgeSecs === undefined &&
      (i.retain || i.maxBytes !== undefined || i.childrenMaxAgeSecs !== undefined)
    )
      seen.set(key, { ...i, isAuditRoot: prev.isAuditRoot || i.isAuditRoot });
  }
  return [...seen.values()];
}
