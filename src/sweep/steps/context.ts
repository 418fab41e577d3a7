// The state one sweep's steps share, and the runner that times each step.
// Guarantees: every step reads and writes only this object (no hidden module state); skip/fail
// are the only way a step reports a per-item outcome, so the report and the logs always agree;
// each step's tally (items, bytes, time) is recorded in `steps`, in pipeline order.
import type { GcConfig } from '../../config/types.js';
import { Codes } from '../../errors.js';
import type { Debris, ModeEntry, Problem, RecordsScan } from '../../runtime/inventory.js';
import type { HeldLock } from '../../gchome/lock.js';
import type { Dir } from '../../fsx/safe-fs.js';
import type { MemoryTraceCache } from '../../runtime/trace-scan.js';
import type { ChmodAction } from '../../plan/modes.js';
import type { RecordsPlan } from '../../plan/records.js';
import type { SessionsPlan } from '../../plan/sessions.js';
import type { RecordPolicyConfig } from '../../config/types.js';
import type { Logger } from '../../log.js';
import type { StatFs } from '../../fsx/statfs.js';
import { mintId } from '../../runtime/ids.js';
import type { HeldItem } from '../../gchome/quarantine-layout.js';
import type { AuditSession, LostTask, PurgedItem, RetentionItem } from '../../gchome/audit.js';
import { REPORT_SCHEMA_VERSION, type ErrorEntry, type Skipped, type SweepReport } from '../report.js';
import type { RootPlanInput, SessionView, SessionsWorld } from '../world.js';
import type { ContextScan, RootScan } from '../../runtime/inventory.js';
import type { ClockSkew } from '../../plan/clock.js';
import { ProtectionSet } from '../../gchome/protect-list.js';

export interface SweepOptions {
  config: GcConfig;
  dryRun: boolean;
  log: Logger;
  now?: () => number;
  /** Aborted on SIGTERM/SIGINT: the sweep stops at the next safe point between items. */
  signal?: AbortSignal;
  /** How long a record lock may be waited for before the record is skipped as busy. */
  recordLockWaitMs?: number;
  /** Told the current step and its items done/total and bytes (for a progress line). */
  progress?: (p: Progress) => void;
  /** The daemon or the shipped timer: the unattended blast-radius default applies (src/plan/guards.ts). */
  unattended?: boolean;
  /** `--confirm-large`: no blast-radius limit for this sweep. */
  confirmLarge?: boolean;
  /** Free space of the home's filesystem, for keep_free (tests inject one); default statfs(2). */
  statfs?: StatFs;
}

export interface Progress {
  step: string;
  done: number;
  /** undefined while the total is not known (the scans) */
  total: number | undefined;
  bytes: number;
  /** What `done` counts, shown while the total is not known (`conversation ls`: records). */
  unit?: string;
}

/** What one step did: items acted on (or found, for scans), bytes, wall time. */
export interface StepStats {
  step: string;
  items: number;
  bytes: number;
  ms: number;
}

export type StepTally = Omit<StepStats, 'step' | 'ms'>;

export interface Step {
  name: string;
  run: (ctx: SweepContext) => Promise<StepTally>;
}

export interface SessionsRootPlan {
  input: RootPlanInput;
  scan: RootScan;
  /** the sessions of this root, with their liveness */
  views: SessionView[];
  plan: SessionsPlan;
}

export interface RecordsPolicyPlan {
  policy: RecordPolicyConfig;
  contexts: ContextScan[];
  plan: RecordsPlan;
}

export interface SweepContext {
  readonly opts: SweepOptions;
  readonly config: GcConfig;
  readonly home: string;
  readonly dryRun: boolean;
  readonly log: Logger;
  readonly now: () => number;
  /** the sweep's clock: every age is judged against this one instant */
  readonly nowMs: number;
  readonly uid: number;
  readonly report: SweepReport;
  /** set by a step when there is nothing more to do (no home, no roots) */
  stopped: boolean;

  // lock
  homeExists: boolean;
  homeDir: Dir | undefined;
  sweepLock: HeldLock | undefined;
  /** bytes of the keep_free reserve released before the lock (a dry run: that a real run would release) */
  reserveReleased: number;
  /** the caller's signal joined with the sweep lock's (lock compromised) */
  signal: AbortSignal | undefined;

  // clock (set by the clock step: the wall clock is behind the last sweep; no max_age applies)
  clockSkew: ClockSkew | undefined;

  // audit (created on first destructive step of a real run)
  readonly auditId: string;
  audit: AuditSession | undefined;
  readonly retentionItems: RetentionItem[];
  readonly lostTasks: LostTask[];

  // scans
  cache: MemoryTraceCache | undefined;
  world: SessionsWorld;
  records: RecordsScan | undefined;
  debris: Debris[];
  modes: ModeEntry[];

  // protect (the protection list: what no sweep acts on until the operator releases it)
  protection: ProtectionSet;

  // plans
  chmods: { entry: ModeEntry; action: ChmodAction }[];
  sessionPlans: SessionsRootPlan[];
  recordPlans: RecordsPolicyPlan[];

  // undo window
  /** `quarantine:` in ms; undefined: removals are at once */
  readonly quarantineMs: number | undefined;
  /** items this sweep held (or, in a dry run, would hold) */
  readonly heldNow: HeldItem[];
  /** `heldKey` of every held item this sweep purged (or would purge) */
  readonly purgedNow: Set<string>;
  /** held items deleted for good, for the audit trace (`quarantine_purge`) */
  readonly purged: PurgedItem[];
  /** `<home>/gc/quarantine`, opened (created in a real run) on first use */
  quarantineDir: Dir | undefined;

  /** what earlier removals set aside and this sweep could not remove either (src/fsx/remove.ts retryKept) */
  readonly kept: { path: string; bytes: number; sinceMs: number }[];

  // effects
  /** `<root>/<session>` of every session removed (or that would be), never reconciled after */
  readonly removedSessions: Set<string>;
  readonly steps: StepStats[];
  /** the step running now (for progress) */
  step: string;
}

/** The report of a sweep that has not run a step yet. */
export function newReport(config: GcConfig, dryRun: boolean, nowMs: number): SweepReport {
  return {
    dry_run: dryRun,
    home: config.home,
    home_exists: false,
    started_ms: nowMs,
    duration_ms: 0,
    actions: [],
    skipped: [],
    errors: [],
    audit: null,
    bytes_freed: 0,
    inventory: { sessions_roots: 0, sessions: 0, records: 0, traces_read: 0, traces_cached: 0, records_counted: 0, records_count_cached: 0 },
    schema_version: REPORT_SCHEMA_VERSION,
    config: config.source ?? null,
    steps: [],
  };
}

export function createContext(opts: SweepOptions, uid: number): SweepContext {
  const now = opts.now ?? Date.now;
  const nowMs = now();
  const home = opts.config.home;
  return {
    opts,
    config: opts.config,
    home,
    dryRun: opts.dryRun,
    log: opts.log,
    now,
    nowMs,
    uid,
    report: newReport(opts.config, opts.dryRun, nowMs),
    stopped: false,
    homeExists: false,
    homeDir: undefined,
    sweepLock: undefined,
    reserveReleased: 0,
    signal: undefined,
    clockSkew: undefined,
    auditId: mintId('ses_'),
    audit: undefined,
    retentionItems: [],
    lostTasks: [],
    cache: undefined,
    world: { roots: [], rootScans: [], views: [], liveContexts: new Set(), problems: [], counts: { sessions_roots: 0, sessions: 0, traces_read: 0, traces_cached: 0 } },
    records: undefined,
    debris: [],
    modes: [],
    protection: ProtectionSet.none,
    chmods: [],
    sessionPlans: [],
    recordPlans: [],
    quarantineMs: opts.config.quarantine ? opts.config.quarantine.windowSecs * 1000 : undefined,
    heldNow: [],
    purgedNow: new Set(),
    purged: [],
    quarantineDir: undefined,
    kept: [],
    removedSessions: new Set(),
    steps: [],
    step: '',
  };
}

/** Tells the caller's progress sink how far the current step is. */
export function progress(ctx: SweepContext, done: number, total: number | undefined, bytes = 0): void {
  ctx.opts.progress?.({ step: ctx.step, done, total, bytes });
}

/** A target left alone this sweep (reported, logged at warn). */
export function skip(ctx: SweepContext, s: Skipped): void {
  ctx.report.skipped.push(s);
  ctx.log.warn({ code: s.code, target: s.target }, s.detail);
}

/** A target that failed this sweep (reported, logged at error); the sweep goes on. */
export function fail(ctx: SweepContext, e: ErrorEntry): void {
  ctx.report.errors.push(e);
  ctx.log.error({ code: e.code, target: e.target }, e.detail);
}

/** A scan problem: an io_error is an error, anything else a skip. */
export function problem(ctx: SweepContext, p: Problem): void {
  if (p.code === Codes.ioError) fail(ctx, p);
  else skip(ctx, p);
}

/** Stamps the report's duration and hands it back. */
export function finishReport(ctx: SweepContext): SweepReport {
  ctx.report.duration_ms = ctx.now() - ctx.nowMs;
  const purges = ctx.report.actions.filter((a) => a.kind === 'purge_quarantine');
  if (ctx.quarantineMs !== undefined || purges.length > 0) {
    ctx.report.quarantine = {
      window_secs: Math.round((ctx.quarantineMs ?? 0) / 1000),
      held: ctx.heldNow.length,
      held_bytes: ctx.heldNow.reduce((n, h) => n + h.bytes, 0),
      purged: purges.length,
      purged_bytes: purges.reduce((n, a) => n + a.bytes, 0),
    };
  }
  if (ctx.kept.length > 0) {
    const k = [...ctx.kept].sort((a, b) => a.sinceMs - b.sinceMs);
    ctx.report.kept = { items: k.length, bytes: k.reduce((n, x) => n + x.bytes, 0), oldest_ms: k[0]!.sinceMs, paths: k.map((x) => x.path) };
    // One aggregated warning per sweep while anything is kept aside (the paths are in the report).
    ctx.log.warn({ code: Codes.keptAside, items: k.length, bytes: ctx.report.kept.bytes, oldest_ms: k[0]!.sinceMs, paths: k.slice(0, 10).map((x) => x.path) }, `${k.length} director${k.length === 1 ? 'y' : 'ies'} murmur-gc could not remove whole still kept aside (the oldest: ${k[0]!.path}); each sweep tries again`);
  }
  ctx.report.steps = ctx.steps;
  return ctx.report;
}

/** Runs one step, recording its tally and time (also when it throws). */
export async function runStep(ctx: SweepContext, step: Step): Promise<void> {
  const t0 = performance.now();
  let tally: StepTally = { items: 0, bytes: 0 };
  ctx.step = step.name;
  progress(ctx, 0, undefined);
  try {
    tally = await step.run(ctx);
  } finally {
    const stats: StepStats = { step: step.name, ...tally, ms: Math.round(performance.now() - t0) };
    ctx.steps.push(stats);
    ctx.log.debug({ step: stats.step, items: stats.items, bytes: stats.bytes, ms: stats.ms }, 'sweep step done');
  }
}
