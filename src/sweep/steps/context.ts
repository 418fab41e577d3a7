// The state one sweep's steps share, and the runner that times each step.
// Guarantees: every step reads and writes only this object (no hidden module state); skip/fail
// are the only way a step reports a per-item outcome. `acted` reports an action, counts its bytes
// freed (none for what the undo window holds) and logs it in the action's own words
// (src/sweep/voice.ts) or the step's (or not at all); every step reports its actions through it;
// per-item lines are at debug, and the sweep's end logs one line per cause (flushGrouped,
// src/sweep/log-groups.ts); the run's effects (real or measure-only, src/sweep/effects.ts) are picked here,
// once, from `dryRun`; each step's tally (items, bytes, time) is recorded in `steps`, in pipeline
// order.
import type { GcConfig } from '../../config/types.js';
import { Codes, NORMAL_CODES } from '../../errors.js';
import type { Debris, ModeEntry, Problem, RecordsScan } from '../../runtime/inventory.js';
import type { HeldLock } from '../../gchome/lock.js';
import type { Dir } from '../../fsx/safe-fs.js';
import type { MemoryTraceCache } from '../../runtime/summary-cache.js';
import type { ChmodAction } from '../../plan/modes.js';
import type { Fate, FatePlan, HoldFate } from '../../plan/fates.js';
import type { RecordPolicyConfig } from '../../config/types.js';
import type { Logger } from '../../log.js';
import type { StatFs } from '../../fsx/statfs.js';
import { mintId } from '../../runtime/ids.js';
import type { HeldItem } from '../../gchome/quarantine-layout.js';
import type { AuditSession, LostTask, PurgedItem, RetentionItem } from '../../gchome/audit.js';
import { newReport, type ErrorEntry, type Skipped, type SweepReport } from '../report.js';
import type { RootPlanInput, SessionView, SessionsWorld } from '../world.js';
import { TraceAppends } from '../../gchome/trace-appends.js';
import { Registry } from '../../gchome/registry.js';
import type { ContextScan, RootScan } from '../../runtime/inventory.js';
import type { BesideScan } from '../../runtime/workdir-scan.js';
import type { ClockSkew } from '../../plan/clock.js';
import { ProtectionSet } from '../../gchome/protect-list.js';
import type { Action } from '../report.js';
import { wordsOf, type Said } from '../voice.js';
import { pickEffects, type Effects } from '../effects.js';
import { GroupedLog, placeOf } from '../log-groups.js';
import { countFates } from '../fate-counts.js';
import type { listQuarantineDir } from '../../gchome/quarantine-store.js';

/** What `<home>/gc/quarantine` holds, listed once per sweep. */
export type QuarantineListing = Awaited<ReturnType<typeof listQuarantineDir>>;

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
  /** Called once the steps are over, before the grouped skip/error lines are logged (the CLI erases its progress line). */
  beforeLogs?: () => void;
  /** The daemon or the shipped timer: the unattended blast-radius default applies (src/plan/guards.ts). */
  unattended?: boolean;
  /** `--confirm-large`: no blast-radius limit for this sweep. */
  confirmLarge?: boolean;
  /**
   * Also tell which stores the guard would stop in an unattended sweep (report.stopped_unattended;
   * `config check --plan`): the same plan made once more as the daemon would make it.
   */
  alsoUnattended?: boolean;
  /** Free space of the home's filesystem, for keep_free (tests inject one); default statfs(2). */
  statfs?: StatFs;
  /**
   * Called once the steps are over, before anything the sweep opened is closed, with everything
   * it scanned, measured and planned (`murmur-gc explain` reads one item's fate from a dry run).
   */
  inspect?: (ctx: SweepContext) => Promise<void> | void;
}

export interface Progress {
  step: string;
  /** What is being done, in words, for the progress line (a step's `label`). */
  label: string;
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
  /** What the step does, in words, for the progress line ("scanning sessions"). */
  label: string;
  run: (ctx: SweepContext) => Promise<StepTally>;
}

/** A sessions root the sweep looks at (it exists), with its sessions: what its fates are keyed by. */
export interface SessionsRootPlan {
  input: RootPlanInput;
  scan: RootScan;
  /** what lies beside a `W/.murmur` root (docs/design.md §9a) */
  beside?: BesideScan;
  /** the sessions of this root, with their liveness */
  views: SessionView[];
  /** `sessions:<root>`: the key of its fates (src/plan/fates.ts) */
  key: string;
  /** children named by the traces of this root's held sessions (never orphans; set by the remove step) */
  heldTied?: Set<string>;
  /** a held session of this root (or an entry named like one) whose trace could not be read: it may name any child, so no orphan goes */
  heldUncertain?: string;
}

/** A record store the configuration names, with the policies naming it and its contexts. */
export interface RecordStorePlan {
  store: string;
  /** `records:<store>`: the key of its fates */
  key: string;
  /** in configuration order */
  policies: RecordPolicyConfig[];
  contexts: ContextScan[];
}

/** What the measure step found: sizes by item, hold and store (see the header). */
export interface MeasuredSizes {
  /** itemKey(`sessions:<root>` | `records:<store>`, name) → allocated bytes (a session with what goes beside it) */
  items: Map<string, number>;
  /** itemKey(`records:<store>`, context) → allocated bytes its max_messages truncation leaves */
  afterTruncation: Map<string, number>;
  /** per sessions root key: the child workdirs no rule takes, with their bytes */
  fixed: Map<string, { target: string; code: string; bytes: number }[]>;
  /** hold key (`<parent>/<entry>`) → allocated bytes */
  holds: Map<string, number>;
  /** the inodes (files and directories) of the items and holds above, by the same keys, when keep_free counts inodes */
  inodes: Map<string, number>;
  /** store keys that could not be measured: no budget acts on them this sweep */
  unmeasured: Set<string>;
}

/** The filesystem under the home when the sweep measured it (a dry run: with what a real run's reserve release adds). */
export interface HomeSpace {
  totalBytes: number;
  freeBytes: number;
  /** what keep_free asks, in bytes; undefined when it is not configured */
  keepFreeBytes: number | undefined;
  /** inodes (src/fsx/statfs.ts), only where the filesystem has a fixed number of them */
  totalInodes?: number;
  freeInodes?: number;
  /** what keep_free asks, in inodes (src/config/size.ts keepFreeInodes), where inodes are counted */
  keepFreeInodes?: number;
}

/**
 * The slots of one sweep. Each says who writes it (`writes:`; "created" = set once by
 * createContext and never replaced, though a collection may be added to) and who reads it
 * (`reads:`; step names are the files of src/sweep/steps/, "commands" the read-only commands that
 * run the steps themselves: src/commands/du.ts and explain.ts). A slot a later step reads is set
 * by an earlier step in SWEEP_STEPS order (src/sweep/pipeline.ts); a step that finds its input
 * slot unset (no home, no roots, a step stopped) does nothing with it.
 */
export interface SweepContext {
  /** writes: created. reads: lock, guard, budget, measure, plan (dryRun, unattended, confirmLarge, the signal). */
  readonly opts: SweepOptions;
  /** writes: created. reads: the scans, measure, plan, budget, guard, beside, orphans, repair-torn-tail. */
  readonly config: GcConfig;
  /** writes: created (config.home). reads: every step that opens or names something under the home. */
  readonly home: string;
  /** what this run does to the disk: real, or measure-only (a dry run); steps act only through it. writes: created. reads: every step that changes the disk. */
  readonly fx: Effects;
  /** writes: created. reads: every step (debug lines per item; one line per cause through `grouped`). */
  readonly log: Logger;
  /** skips, errors and per-item warnings, logged one line per cause at the end (flushGrouped). writes: skip/fail/acted here. reads: flushGrouped. */
  readonly grouped: GroupedLog;
  /** writes: created (opts.now or Date.now). reads: lock, recover, audit, reconcile, truncate (instants to record, not ages). */
  readonly now: () => number;
  /** the sweep's clock: every age is judged against this one instant. writes: created. reads: clock, the scans, measure, plan, debris, quarantine, remove, orphans, beside, repair-torn-tail, recover. */
  readonly nowMs: number;
  /** writes: created. reads: the scans, plan, quarantine, truncate, beside, orphans, repair-torn-tail (what this uid owns). */
  readonly uid: number;
  /** writes: created, then every step through acted/skip/fail; plan, budget, beside, orphans and no-home set their own parts. reads: finishReport and the commands. */
  readonly report: SweepReport;
  /** set by a step when there is nothing more to do (no home, no roots). writes: no-home. reads: the pipeline's runner (it stops there), commands. */
  stopped: boolean;

  // lock
  /** writes: lock. reads: clock, commands (du). */
  homeExists: boolean;
  /** the home, opened. writes: lock. reads: every later step that touches the home. */
  homeDir: Dir | undefined;
  /** writes: lock (a real run). reads: the pipeline (released at the end). */
  sweepLock: HeldLock | undefined;
  /** bytes of the keep_free reserve released before the lock (a dry run: that a real run would release). writes: lock. reads: measure, budget. */
  reserveReleased: number;
  /** inodes of the reserve's inode part released before the lock (likewise). writes: lock. reads: measure, budget. */
  reserveInodesReleased: number;
  /** the caller's signal joined with the sweep lock's (lock compromised). writes: lock. reads: every step that loops over items. */
  signal: AbortSignal | undefined;

  // clock
  /** the wall clock is behind the last sweep; no max_age applies. writes: clock. reads: plan, commands (explain). */
  clockSkew: ClockSkew | undefined;

  // audit (created on the first destructive act of a real run)
  /** writes: created. reads: plan (the audit root's floor), the acting steps, reconcile, audit. */
  readonly auditId: string;
  /** writes: src/sweep/effects.ts (on the first act that must be audited). reads: audit. */
  audit: AuditSession | undefined;
  /** writes: src/sweep/effects.ts (each act's retention event). reads: audit. */
  readonly retentionItems: RetentionItem[];
  /** writes: reconcile. reads: audit. */
  readonly lostTasks: LostTask[];

  // scans
  /** the trace cache, loaded from and saved to <home>/gc. writes: scan-sessions. reads: scan-records, the pipeline (saved at the end), commands (du). */
  cache: MemoryTraceCache | undefined;
  /** liveness of every session and context. writes: scan-sessions. reads: scan-records, measure, plan, quarantine, beside, orphans, reconcile, repair-torn-tail, trust, audit, commands. */
  world: SessionsWorld;
  /** writes: scan-records. reads: measure, commands. */
  records: RecordsScan | undefined;
  /** writes: scan-records. reads: debris. */
  debris: Debris[];
  /** writes: scan-records. reads: plan. */
  modes: ModeEntry[];

  // protect (the protection list: what no sweep acts on until the operator releases it)
  /** writes: protect. reads: plan, commands. */
  protection: ProtectionSet;

  // the stores
  /** writes: scan-sessions. reads: measure, plan, budget, remove, orphans, commands. */
  sessionPlans: SessionsRootPlan[];
  /** writes: scan-records. reads: plan, budget, remove, truncate, repair-torn-tail, commands (explain). */
  recordPlans: RecordStorePlan[];

  // measure (sizes only when a budget is configured; the space whenever the home exists)
  /** writes: measure. reads: plan, commands (du). */
  sizes: MeasuredSizes | undefined;
  /** writes: measure. reads: plan, budget. */
  space: HomeSpace | undefined;
  /** keep_free short: the largest live sessions on the home's filesystem, largest first (what is filling it, most likely). writes: measure. reads: budget. */
  liveLargest: { path: string; bytes: number }[];
  /** which part of the reserve is not in place (or a real run releases it this sweep); inodes only where they are counted. writes: measure. reads: plan, budget. */
  reserveMissing: { bytes: boolean; inodes: boolean };
  /** `<home>/gc/quarantine` as measure listed it. writes: measure. reads: plan, quarantine, budget, commands (explain). */
  quarantineListing: QuarantineListing | undefined;

  // plan
  /** writes: plan. reads: chmod. */
  chmods: { entry: ModeEntry; action: ChmodAction }[];
  /** what the fate planner decided (src/plan/fates.ts; its input is made from this context again when a budget is planned again). writes: plan, budget (planned again). reads: quarantine, remove, truncate, repair-torn-tail, budget, commands. */
  fates: FatePlan | undefined;
  /** items (itemKey) and holds (`<parent>/<entry>`) whose act did not happen: a budget planned again counts them as staying. writes: quarantine, remove, truncate, budget. reads: budget, commands (explain). */
  readonly failed: Set<string>;
  /** items and holds acted on this sweep (itemKey / hold key), with the fate each act carried out (or tried). writes: quarantine, remove, truncate. reads: budget, commands (explain). */
  readonly acts: Map<string, Fate | HoldFate>;

  // undo window
  /** `quarantine:` in ms; undefined: removals are at once. writes: created. reads: plan, commands (explain). */
  readonly quarantineMs: number | undefined;
  /** items this sweep held (or, in a dry run, would hold). writes: remove, truncate. reads: finishReport. */
  readonly heldNow: HeldItem[];
  /** `heldKey` of every held item this sweep purged (or would purge). writes: quarantine. reads: beside, finishReport. */
  readonly purgedNow: Set<string>;
  /** held items deleted for good, for the audit trace (`quarantine_purge`). writes: src/sweep/effects.ts. reads: audit. */
  readonly purged: PurgedItem[];
  /** `<home>/gc/quarantine`, opened (created in a real run) on first use. writes: measure, quarantine. reads: plan, budget, truncate, the pipeline (closed at the end), commands. */
  quarantineDir: Dir | undefined;
  /**
   * What murmur-gc placed under its own names in directories a capsule can write
   * (src/gchome/registry.ts): only what it vouches for is held into, purged, restored or finished.
   * writes: trust. reads: debris, beside, audit, commands (explain).
   */
  registry: Registry;

  /**
   * Sessions roots this process may not write (the scan step's one probe per root), with what
   * this sweep did not attempt there, per kind: reported once per root at the end.
   * writes: scan-sessions. reads: plan, debris, finishReport.
   */
  readonly unwritable: Map<string, Unwritable>;

  /** what earlier removals set aside and this sweep could not remove either (src/fsx/remove.ts retryKept). writes: debris, quarantine. reads: finishReport. */
  readonly kept: { path: string; bytes: number; sinceMs: number }[];

  // effects
  /** `<root>/<session>` of every session removed (or that would be), never reconciled after. writes: remove. reads: reconcile. */
  readonly removedSessions: Set<string>;
  /** writes: runStep. reads: the pipeline, finishReport. */
  readonly steps: StepStats[];
  /** the step running now, and its label (for progress). writes: runStep. reads: progress. */
  step: string;
  stepLabel: string;
}

/** A sessions root this process may not write, and what the sweep therefore left alone there. */
export interface Unwritable {
  errno: 'EROFS' | 'EACCES' | 'EPERM';
  /** what was not attempted, e.g. "sessions to remove" → 12 */
  notAttempted: Map<string, number>;
}

/**
 * The state of a sweep that has not run a step yet: an empty report, a fresh audit id, nothing
 * opened, scanned or locked; its effects (real or measure-only) picked once from `opts.dryRun`.
 */
export function createContext(opts: SweepOptions, uid: number): SweepContext {
  const now = opts.now ?? Date.now;
  const nowMs = now();
  const home = opts.config.home;
  const ctx: Omit<SweepContext, 'fx'> & { fx?: Effects } = {
    opts,
    config: opts.config,
    home,
    log: opts.log,
    grouped: new GroupedLog(opts.log),
    now,
    nowMs,
    uid,
    report: newReport(opts.config, opts.dryRun, nowMs),
    stopped: false,
    homeExists: false,
    homeDir: undefined,
    sweepLock: undefined,
    reserveReleased: 0,
    reserveInodesReleased: 0,
    signal: undefined,
    clockSkew: undefined,
    auditId: mintId('ses_'),
    audit: undefined,
    retentionItems: [],
    lostTasks: [],
    cache: undefined,
    world: {
      roots: [],
      rootScans: [],
      running: new Map(),
      runningDebris: [],
      views: [],
      liveContexts: new Set(),
      appends: new TraceAppends(),
      problems: [],
      counts: { sessions_roots: 0, sessions: 0, traces_read: 0, traces_cached: 0 },
    },
    records: undefined,
    debris: [],
    modes: [],
    protection: ProtectionSet.none,
    sessionPlans: [],
    recordPlans: [],
    sizes: undefined,
    space: undefined,
    reserveMissing: { bytes: false, inodes: false },
    liveLargest: [],
    quarantineListing: undefined,
    chmods: [],
    fates: undefined,
    failed: new Set(),
    acts: new Map(),
    quarantineMs: opts.config.quarantine ? opts.config.quarantine.windowSecs * 1000 : undefined,
    heldNow: [],
    purgedNow: new Set(),
    purged: [],
    quarantineDir: undefined,
    registry: Registry.empty(),
    kept: [],
    unwritable: new Map(),
    removedSessions: new Set(),
    steps: [],
    step: '',
    stepLabel: '',
  };
  ctx.fx = pickEffects(ctx, opts.dryRun);
  return ctx as SweepContext;
}

/**
 * An action done (or, in a measure-only run, that would be): reported, its bytes counted as freed
 * unless the undo window holds it, and logged at `level` in the run's voice — the action's own
 * words (`log` names the deed more closely; null: no log line).
 */
export function acted(
  ctx: SweepContext,
  a: Action,
  level: 'debug' | 'info' | 'warn',
  fields: Record<string, unknown>,
  log?: Said | null,
): void {
  ctx.report.actions.push(a);
  // what the undo window holds (a session, a context, dropped lines, what went beside a session) is not freed yet
  const heldByWindow = 'held' in a && a.held !== undefined;
  if ('bytes' in a && !heldByWindow) ctx.report.bytes_freed += a.bytes;
  if (log === null) return;
  const words = ctx.fx.say(log ?? wordsOf(a).log);
  // A per-item warning is grouped with the others of its cause (one line per cause at the end).
  const code = fields['code'];
  if (level === 'warn' && typeof code === 'string') warnItem(ctx, code, targetOf(fields), words, fields);
  else ctx.log[level](fields, words);
}

/** Tells the caller's progress sink how far the current step is. */
export function progress(ctx: SweepContext, done: number, total: number | undefined, bytes = 0): void {
  ctx.opts.progress?.({ step: ctx.step, label: ctx.stepLabel, done, total, bytes });
}

/**
 * A target left alone this sweep (reported; logged at debug now, grouped at warn at the end —
 * unless it is the normal state, src/errors.ts NORMAL_CODES, which is never a warning).
 */
export function skip(ctx: SweepContext, s: Skipped): void {
  ctx.report.skipped.push(s);
  ctx.grouped.note({
    level: NORMAL_CODES.has(s.code) ? 'normal' : 'warn',
    code: s.code,
    target: s.target,
    detail: s.detail,
  });
}

/** A target that failed this sweep (reported; logged at debug now, grouped at error at the end); the sweep goes on. */
export function fail(ctx: SweepContext, e: ErrorEntry): void {
  ctx.report.errors.push(e);
  ctx.grouped.note({ level: 'error', code: e.code, target: e.target, detail: e.detail });
}

/** A per-item warning that is neither a skip nor an error (e.g. a leftover removed): grouped like them. */
export function warnItem(
  ctx: SweepContext,
  code: string,
  target: string,
  detail: string,
  fields: Record<string, unknown> = {},
): void {
  ctx.grouped.note({ level: 'warn', code, target, detail, fields });
}

/**
 * True when `root` is a sessions root this process may not write: the `n` items of this kind are
 * then not attempted (counted, and reported once per root when the sweep ends).
 */
export function notWritable(ctx: SweepContext, root: string, what: string, n: number): boolean {
  const u = ctx.unwritable.get(root);
  if (!u) return false;
  u.notAttempted.set(what, (u.notAttempted.get(what) ?? 0) + n);
  return true;
}

/** The systemd specifier-escaped form of a path for a unit file (`%` → `%%`). */
function unitPath(p: string): string {
  return p.replaceAll('%', '%%');
}

/**
 * One error per unwritable root where this sweep had something to do, with the fix. A root with
 * nothing to do this sweep is not reported (nothing failed there).
 */
function reportUnwritable(ctx: SweepContext): void {
  for (const [root, u] of ctx.unwritable) {
    const n = [...u.notAttempted.values()].reduce((a, b) => a + b, 0);
    if (n === 0) continue;
    const what = [...u.notAttempted].map(([k, v]) => `${v} ${k}`).join(', ');
    const head = `${root} is not writable for murmur-gc`;
    const fix =
      u.errno === 'EROFS'
        ? ` (EROFS: a read-only mount, or a systemd sandbox without it in ReadWritePaths=); nothing there was attempted (${what}). Under the shipped units only ~/.murmur is writable: add it with a drop-in — systemctl --user edit murmur-gc.service (the timer: murmur-gc-sweep.service), lines "[Service]" and "ReadWritePaths=${unitPath(root)}", then restart it (docs/daemon.md "Making more paths writable")`
        : ` (${u.errno}: its owner, mode or ACL does not let uid ${ctx.uid} write it); nothing there was attempted (${what}). Run murmur-gc as the user who owns the sessions, or give that user write access to ${root}`;
    fail(ctx, { target: root, code: Codes.rootNotWritable, detail: head + fix });
  }
}

/** Logs the sweep's skips, errors and per-item warnings, one line per (code, root or store). */
export function flushGrouped(ctx: SweepContext): void {
  ctx.grouped.flush((target) =>
    placeOf(
      target,
      ctx.world.roots.map((r) => r.root),
      ctx.home,
    ),
  );
}

/** A scan problem: an io_error is an error, anything else a skip. */
export function problem(ctx: SweepContext, p: Problem): void {
  if (p.code === Codes.ioError) fail(ctx, p);
  else skip(ctx, p);
}

/** Stamps the report's duration and hands it back. */
export function finishReport(ctx: SweepContext): SweepReport {
  reportUnwritable(ctx);
  ctx.report.duration_ms = ctx.now() - ctx.nowMs;
  const purges = ctx.report.actions.filter((a) => a.kind === 'purge_quarantine');
  if (ctx.quarantineMs !== undefined || purges.length > 0) {
    // What the window holds once the sweep is over: an item a disk budget purged in this same
    // sweep was removed, not held.
    const held = ctx.heldNow.filter((h) => !ctx.purgedNow.has(`${h.parent}/${h.entry}`));
    ctx.report.quarantine = {
      window_secs: Math.round((ctx.quarantineMs ?? 0) / 1000),
      held: held.length,
      held_bytes: held.reduce((n, h) => n + h.bytes, 0),
      purged: purges.length,
      purged_bytes: purges.reduce((n, a) => n + a.bytes, 0),
    };
  }
  if (ctx.fates) {
    const q = ctx.quarantineDir;
    ctx.report.fates = countFates(
      ctx.sessionPlans.map((p) => ({
        root: p.input.root,
        key: p.key,
        names: p.views.map((v) => v.scan.name),
        holds: p.scan.held.map((h) => `${p.input.root}/${h.entry}`),
      })),
      ctx.recordPlans.map((r) => ({ store: r.store, key: r.key, names: r.contexts.map((c) => c.context) })),
      q ? { place: q.path, holds: [...ctx.fates.holds.keys()].filter((k) => k.startsWith(`${q.path}/`)) } : undefined,
      { plan: ctx.fates, acts: ctx.acts, failed: ctx.failed },
    );
  }
  if (ctx.kept.length > 0) {
    const k = [...ctx.kept].sort((a, b) => a.sinceMs - b.sinceMs);
    ctx.report.kept = {
      items: k.length,
      bytes: k.reduce((n, x) => n + x.bytes, 0),
      oldest_ms: k[0]!.sinceMs,
      paths: k.map((x) => x.path),
    };
    // One aggregated warning per sweep while anything is kept aside (the paths are in the report).
    ctx.log.warn(
      {
        code: Codes.keptAside,
        items: k.length,
        bytes: ctx.report.kept.bytes,
        oldest_ms: k[0]!.sinceMs,
        paths: k.slice(0, 10).map((x) => x.path),
      },
      `${k.length} director${k.length === 1 ? 'y' : 'ies'} murmur-gc could not remove whole still kept aside (the oldest: ${k[0]!.path}); each sweep tries again`,
    );
  }
  ctx.report.steps = ctx.steps;
  return ctx.report;
}

/** Runs one step, recording its tally and time (also when it throws). */
export async function runStep(ctx: SweepContext, step: Step): Promise<void> {
  const t0 = performance.now();
  let tally: StepTally = { items: 0, bytes: 0 };
  ctx.step = step.name;
  ctx.stepLabel = step.label;
  progress(ctx, 0, undefined);
  try {
    tally = await step.run(ctx);
  } finally {
    const stats: StepStats = { step: step.name, ...tally, ms: Math.round(performance.now() - t0) };
    ctx.steps.push(stats);
    ctx.log.debug({ step: stats.step, items: stats.items, bytes: stats.bytes, ms: stats.ms }, 'sweep step done');
  }
}

/** The path or target a log line's fields name, for grouping. */
function targetOf(fields: Record<string, unknown>): string {
  const t = fields['path'] ?? fields['target'];
  return typeof t === 'string' ? t : '';
}
