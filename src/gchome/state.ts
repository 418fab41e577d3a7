// The daemon's state file, `<home>/gc/state.json`: what the last sweep did, when the next one is
// due, and which process is the daemon.
// Guarantees:
// - Written atomically (exclusive temp 0600, fsync, rename, directory fsync) through the safe-fs
//   layer; `<home>/gc` is created 0700 only when the home already exists (murmur-gc creates no
//   home of its own) and only in a home owned by this user.
// - Read leniently: a missing file is "no state"; a file that is not a JSON object of the known
//   version is "corrupt" and is ignored (the daemon rewrites it) — it never wedges anything. A
//   field of the wrong type is dropped, not trusted.
// - The file alone never proves a daemon is running: readers must probe pid + start time.
// - Holds ids, counts, codes, sizes and times only — never record content.
// - `clock_reference_ms` (the clock-sanity reference, src/plan/clock.ts) only ever moves forward:
//   every write keeps the larger of the value on disk and the one written, so the daemon's own
//   state writes (which do not carry it) never lower it. It is set only from murmur-gc's own clock
//   at the start of a real sweep, never from anything a capsule writes (ids, mtimes).
// - `totals` (the Prometheus counters `murmur_gc_sweeps_total`, `murmur_gc_freed_bytes_total`,
//   docs/metrics.md): every write keeps, per count, the larger of the file's and the written
//   value, and adds a sweep exactly in the write that first puts it on disk as `last_sweep` (its
//   `ended_ms` later than the file's). A missing or corrupt file starts them again from 0, which
//   Prometheus reads as a counter reset. There is no lock: two writers within the same instant
//   can undo one's increment (the same lost-update window every field here has).
import { GC_DIR_NAME, STATE_FILE } from './paths.js';
import { Dir, lstatPath, processUid, readSmallFile } from '../fsx/safe-fs.js';
import { describeError, errnoCode } from '../errors.js';
import { definedOnly } from '../defined.js';
import type { SweepSummary, SweepTotals } from '../schema/json-schemas.js';

export const STATE_VERSION = 1;

/**
 * One sweep as the daemon logs it, and the running totals: what `status --json` shows of the
 * state file as it is, so their types are that schema's (src/schema/json-schemas.ts).
 */
export type { SweepSummary, SweepTotals };
export type SweepOutcome = SweepSummary['outcome'];
export type SweepTrigger = SweepSummary['trigger'];
const STATE_LIMIT = 1 << 20;

export interface DaemonInfo {
  pid: number;
  /** Field 22 of /proc/<pid>/stat when the daemon started: tells the daemon from a reused pid. */
  start_time: string | null;
  started_ms: number;
  /** Set when the daemon stopped cleanly. */
  stopped_ms: number | null;
  /** The configuration file in force (null = built-in defaults). */
  config: string | null;
  schedule: string;
}

export interface DaemonState {
  version: typeof STATE_VERSION;
  updated_ms: number;
  daemon: DaemonInfo | null;
  /** When the next scheduled sweep is due (null when the daemon is stopped). */
  next_run_ms: number | null;
  /** The sweep in progress, if any. */
  current_sweep: { started_ms: number; trigger: SweepTrigger } | null;
  last_sweep: SweepSummary | null;
  /** When the last sweep with outcome `ok` ended (kept across sweeps and restarts). */
  last_success_ms?: number | null;
  /**
   * The latest wall-clock time (ms) at which a real sweep started: max over every sweep, never
   * lowered by a write. A sweep that finds the clock well behind it skips age-based deletion.
   */
  clock_reference_ms?: number;
  /** Counts since the state file was created; maintained by writeStateFile (see the header). */
  totals?: SweepTotals;
}

export type StateRead =
  { status: 'ok'; state: DaemonState } | { status: 'missing' | 'no_home' } | { status: 'corrupt'; detail: string };

export function emptyState(nowMs: number): DaemonState {
  return {
    version: STATE_VERSION,
    updated_ms: nowMs,
    daemon: null,
    next_run_ms: null,
    current_sweep: null,
    last_sweep: null,
  };
}

// ---- parsing (pure) ---------------------------------------------------------------------------

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

function numOrNull(v: unknown): number | null {
  return num(v) ?? null;
}

function countMap(v: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  if (!isObj(v)) return out;
  for (const [k, n] of Object.entries(v)) {
    const x = num(n);
    if (x !== undefined && x >= 0) out[k] = x;
  }
  return out;
}

const OUTCOMES: readonly SweepOutcome[] = ['ok', 'errors', 'busy', 'failed', 'aborted'];
const TRIGGERS: readonly SweepTrigger[] = ['start', 'schedule', 'manual', 'unattended', 'keep_free'];

function parseTotals(v: unknown): SweepTotals | undefined {
  if (!isObj(v)) return undefined;
  const by = countMap(v['sweeps']);
  const sweeps = Object.fromEntries(OUTCOMES.map((o) => [o, Math.floor(by[o] ?? 0)])) as Record<SweepOutcome, number>;
  const bytes = num(v['bytes_freed']) ?? 0;
  return { sweeps, bytes_freed: bytes >= 0 ? bytes : 0 };
}

/**
 * The totals a write puts on disk: per count the larger of the file's and `state`'s, plus
 * `state.last_sweep` when it is newer than the file's (the write that first records it).
 */
export function nextTotals(
  state: Pick<DaemonState, 'last_sweep' | 'totals'>,
  onDisk: Pick<DaemonState, 'last_sweep' | 'totals'> | undefined,
): SweepTotals | undefined {
  const a = state.totals;
  const b = onDisk?.totals;
  const last = state.last_sweep;
  const fresh = last !== null && (onDisk?.last_sweep == null || last.ended_ms > onDisk.last_sweep.ended_ms);
  if (a === undefined && b === undefined && !fresh) return undefined;
  const sweeps = Object.fromEntries(OUTCOMES.map((o) => [o, Math.max(a?.sweeps[o] ?? 0, b?.sweeps[o] ?? 0)])) as Record<
    SweepOutcome,
    number
  >;
  let bytes = Math.max(a?.bytes_freed ?? 0, b?.bytes_freed ?? 0);
  if (fresh) {
    sweeps[last.outcome] += 1;
    bytes += last.bytes_freed;
  }
  return { sweeps, bytes_freed: bytes };
}

export function parseSweepSummary(v: unknown): SweepSummary | null {
  if (!isObj(v)) return null;
  const started = num(v['started_ms']);
  const ended = num(v['ended_ms']);
  const outcome = OUTCOMES.find((o) => o === v['outcome']);
  if (started === undefined || ended === undefined || outcome === undefined) return null;
  const s: SweepSummary = {
    trigger: TRIGGERS.find((t) => t === v['trigger']) ?? 'schedule',
    started_ms: started,
    ended_ms: ended,
    duration_ms: num(v['duration_ms']) ?? Math.max(0, ended - started),
    outcome,
    counts: countMap(v['counts']),
    bytes_freed: num(v['bytes_freed']) ?? 0,
    skipped: num(v['skipped']) ?? 0,
    skipped_by_code: countMap(v['skipped_by_code']),
    errors: num(v['errors']) ?? 0,
    errors_by_code: countMap(v['errors_by_code']),
    audit: typeof v['audit'] === 'string' ? v['audit'] : null,
  };
  if (typeof v['message'] === 'string') s.message = v['message'];
  if (isObj(v['actions_by_store'])) {
    const by: Record<string, Record<string, number>> = {};
    for (const [kind, stores] of Object.entries(v['actions_by_store'])) by[kind] = countMap(stores);
    s.actions_by_store = by;
  }
  const dropped = num(v['messages_dropped']);
  if (dropped !== undefined) s.messages_dropped = dropped;
  const kept = v['kept'];
  if (isObj(kept)) {
    const items = num(kept['items']);
    if (items !== undefined && items > 0)
      s.kept = { items, bytes: num(kept['bytes']) ?? 0, oldest_ms: num(kept['oldest_ms']) ?? null };
  }
  return s;
}

function parseDaemonInfo(v: unknown): DaemonInfo | null {
  if (!isObj(v)) return null;
  const pid = num(v['pid']);
  const started = num(v['started_ms']);
  if (pid === undefined || !Number.isInteger(pid) || pid <= 0 || started === undefined) return null;
  return {
    pid,
    start_time: typeof v['start_time'] === 'string' ? v['start_time'] : null,
    started_ms: started,
    stopped_ms: numOrNull(v['stopped_ms']),
    config: typeof v['config'] === 'string' ? v['config'] : null,
    schedule: typeof v['schedule'] === 'string' ? v['schedule'] : '',
  };
}

/**
 * Parse the text of a state file. `undefined` = corrupt (not JSON, not an object, another
 * version); individual fields of the wrong shape come back as null.
 */
export function parseState(text: string): DaemonState | undefined {
  let o: unknown;
  try {
    o = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObj(o) || o['version'] !== STATE_VERSION) return undefined;
  const cur = o['current_sweep'];
  const curStart = isObj(cur) ? num(cur['started_ms']) : undefined;
  const lastSuccess = num(o['last_success_ms']);
  const clockRef = num(o['clock_reference_ms']);
  const totals = parseTotals(o['totals']);
  return {
    version: STATE_VERSION,
    updated_ms: num(o['updated_ms']) ?? 0,
    daemon: parseDaemonInfo(o['daemon']),
    next_run_ms: numOrNull(o['next_run_ms']),
    current_sweep:
      isObj(cur) && curStart !== undefined
        ? { started_ms: curStart, trigger: TRIGGERS.find((t) => t === cur['trigger']) ?? 'schedule' }
        : null,
    last_sweep: parseSweepSummary(o['last_sweep']),
    ...definedOnly({ last_success_ms: lastSuccess, clock_reference_ms: clockRef, totals }),
  };
}

export function stateText(state: DaemonState): string {
  return JSON.stringify(state, null, 2) + '\n';
}

// ---- file access ------------------------------------------------------------------------------

export function statePath(home: string): string {
  return `${home}/${GC_DIR_NAME}/${STATE_FILE}`;
}

/** Read `<home>/gc/state.json` without creating or changing anything. */
export async function readStateFile(home: string): Promise<StateRead> {
  if (!(await lstatPath(home))) return { status: 'no_home' };
  let h: Dir;
  try {
    h = await Dir.open(home, { followFinal: true });
  } catch (err) {
    return { status: 'corrupt', detail: `${home}: ${describeError(err)}` };
  }
  await using _ = h;
  try {
    const gst = await h.lstat(GC_DIR_NAME);
    if (!gst) return { status: 'missing' };
    if (!gst.isDirectory()) return { status: 'corrupt', detail: `${home}/${GC_DIR_NAME} is not a directory` };
    await using gc = await h.openDir(GC_DIR_NAME);
    const raw = await readSmallFile(gc, STATE_FILE, STATE_LIMIT);
    const state = parseState(raw.toString('utf8'));
    return state
      ? { status: 'ok', state }
      : { status: 'corrupt', detail: `${statePath(home)} is not a murmur-gc state file (version ${STATE_VERSION})` };
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return { status: 'missing' };
    return { status: 'corrupt', detail: `${statePath(home)}: ${describeError(err)}` };
  }
}

/** The state on disk (undefined when there is none or the file is unreadable or corrupt). */
async function stateIn(gc: Dir): Promise<DaemonState | undefined> {
  try {
    return parseState((await readSmallFile(gc, STATE_FILE, STATE_LIMIT)).toString('utf8'));
  } catch {
    return undefined;
  }
}

/**
 * Write the state atomically. Returns false (and writes nothing) when the home does not exist
 * or belongs to another user. `clock_reference_ms` becomes the larger of the file's and `state`'s;
 * `totals` are the file's carried forward (nextTotals), whatever `state` carries.
 */
export async function writeStateFile(home: string, state: DaemonState): Promise<boolean> {
  const st = await lstatPath(home);
  if (!st) return false;
  await using h = await Dir.open(home, { followFinal: true });
  if (Number(h.stat.uid) !== processUid()) return false;
  await using gc = await h.mkdir(GC_DIR_NAME, 0o700);
  const onDisk = await stateIn(gc);
  const ref = Math.max(onDisk?.clock_reference_ms ?? -Infinity, state.clock_reference_ms ?? -Infinity);
  const out: DaemonState = Number.isFinite(ref) ? { ...state, clock_reference_ms: ref } : { ...state };
  const totals = nextTotals(state, onDisk);
  if (totals !== undefined) out.totals = totals;
  await gc.writeFileAtomic(STATE_FILE, stateText(out), 0o600);
  return true;
}

/**
 * What two writers' views of the sweep history agree on: the newer `last_sweep` (the later
 * `ended_ms`; a tie keeps `mine`) and the later `last_success_ms`. A one-shot sweep (the timer's
 * route) and the daemon both write state.json; each merges what is on disk before it writes, so
 * neither puts back an older summary over the other's newer one.
 */
export function newerSweeps(
  mine: Pick<DaemonState, 'last_sweep' | 'last_success_ms'>,
  onDisk: Pick<DaemonState, 'last_sweep' | 'last_success_ms'> | undefined,
): { last_sweep: SweepSummary | null; last_success_ms?: number } {
  const a = mine.last_sweep;
  const b = onDisk?.last_sweep ?? null;
  const last = a === null ? b : b !== null && b.ended_ms > a.ended_ms ? b : a;
  const successes = [mine.last_success_ms, onDisk?.last_success_ms].filter((v): v is number => typeof v === 'number');
  return { last_sweep: last, ...(successes.length > 0 ? { last_success_ms: Math.max(...successes) } : {}) };
}

/**
 * A one-shot sweep's outcome, recorded as `last_sweep` where `status` reads it; the daemon's
 * entry and schedule are kept as they are (and a newer summary already on disk wins). False when
 * there is no home (nothing is created).
 */
export async function recordOneShotSweep(home: string, summary: SweepSummary, nowMs: number): Promise<boolean> {
  const read = await readStateFile(home);
  const base = read.status === 'ok' ? read.state : emptyState(nowMs);
  const mine = { last_sweep: summary, ...(summary.outcome === 'ok' ? { last_success_ms: summary.ended_ms } : {}) };
  return writeStateFile(home, { ...base, updated_ms: nowMs, ...newerSweeps(mine, base) });
}

/**
 * Start of a real sweep: the clock reference becomes max(reference, nowMs) (the rest of the
 * state is kept; a corrupt file is replaced by an empty state, as the daemon does). False when
 * there is no home or it is another user's.
 */
export async function advanceClockReference(home: string, nowMs: number): Promise<boolean> {
  const read = await readStateFile(home);
  const base = read.status === 'ok' ? read.state : emptyState(nowMs);
  return writeStateFile(home, { ...base, updated_ms: nowMs, clock_reference_ms: nowMs });
}
