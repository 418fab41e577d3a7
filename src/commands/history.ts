// `murmur-gc history`: past sweeps as told by their own audit traces (`<home>/gc/ses_*/trace.jsonl`),
// pure part — aggregation, filtering, the `--target` answer, rendering.
// Guarantees: built only from murmur-gc's own trace lines (session_start with capsule_name
// "murmur-gc", retention, task_start/task_end, session_end, and its own quarantine_purge,
// quarantine_restore and protection lines); ids, counts and reasons only — the
// audit trail holds no content and neither does this. Unknown or malformed lines are counted,
// never fatal. A trace with no session_end is reported as unfinished (a sweep in progress, or a
// killed one whose audit the next run completes). An operator's `conversation rm|truncate` has an
// audit session of its own whose retention line carries `trigger: manual_cli`: it is shown as
// done "by hand", never as a sweep.
// Removed, held, purged and restored are told apart: what a sweep took is "held" while the undo
// window holds it now (the caller passes what `quarantine ls` lists), "purged" or "restored" when
// a later line of the trail says so, else "removed" (`fate` per line, `state` per --target match).
// The totals count items of their own kind — sessions (`ses_` targets), records, and apart from
// them the child workdirs and work logs that went with a session — and never call a hold a
// removal: what a sweep's details file says it held (or, for older sweeps, what the trail and the
// window show was held) is counted as held.
import { formatDuration, formatWhen } from '../sweep/report.js';
import { idTimestampMs } from '../runtime/ids.js';
import { outcomeWords } from '../sweep/summary.js';
import { Codes, GcError, ExitCodes } from '../errors.js';
import type { AuditDetails } from '../gchome/audit.js';
import type {
  HistoryDoc,
  HistorySweepTotals as SweepTotals,
  ReconciledSession,
  RetentionEntry,
  RetentionFate as Fate,
  SweepHistory,
  TargetMatch,
} from '../schema/json-schemas.js';

/** What `history` reads, in the trail's words: `history --json`'s schema's (src/schema/json-schemas.ts). */
export type { HistoryDoc, ReconciledSession, RetentionEntry, SweepHistory, TargetMatch };
export type { HistorySweepTotals as SweepTotals, RetentionFate as Fate } from '../schema/json-schemas.js';

export const GC_CAPSULE = 'murmur-gc';

/** What is held in the undo window now: `<store>\0<target>` → until when (src/commands/quarantine.ts listHeld). */
export type HeldNow = ReadonlyMap<string, number>;

export const heldNowKey = (store: string, target: string): string => `${store}\0${target}`;

const noTotals = (): SweepTotals => ({
  sessions_removed: 0,
  sessions_held: 0,
  records_removed: 0,
  records_held: 0,
  beside_removed: 0,
  beside_held: 0,
  records_truncated: 0,
  messages_dropped: 0,
});

/** Fill in what the sweep's details file adds to its trace lines (src/gchome/audit.ts DETAILS_FILE). */
export function applyDetails(h: SweepHistory, d: AuditDetails | undefined): void {
  if (!d) return;
  const dropped = isObj(d.dropped) ? d.dropped : undefined;
  if (dropped) {
    for (const r of h.retention) {
      if (r.reason !== 'max_messages') continue;
      const per: Record<string, number> = {};
      for (const t of r.targets) {
        const n = num(dropped[t]);
        if (n !== undefined) per[t] = n;
      }
      if (Object.keys(per).length > 0) r.dropped_by_target = per;
    }
  }
  const held = isObj(d.held) ? d.held : undefined;
  if (held) {
    for (const r of h.retention) {
      const per: Record<string, number> = {};
      for (const t of r.targets) {
        const until = num(held[t]);
        if (until !== undefined) per[t] = until;
      }
      if (Object.keys(per).length > 0) r.held_until_by_target = per;
    }
  }
  const beside = isObj(d.beside) ? d.beside : undefined;
  if (beside) {
    for (const r of h.retention) {
      const per: Record<string, string> = {};
      for (const t of r.targets) if (typeof beside[t] === 'string') per[t] = beside[t];
      if (Object.keys(per).length > 0) r.parent_session_by_target = per;
    }
  }
  const rec = isObj(d.reconciled) ? d.reconciled : undefined;
  if (rec) {
    const sessions: ReconciledSession[] = [];
    for (const task of h.reconciled.task_ids) {
      const e: unknown = rec[task];
      if (!isObj(e) || typeof e['session'] !== 'string' || typeof e['root'] !== 'string') continue;
      const works = Array.isArray(e['work_ids']) ? e['work_ids'].filter((w): w is string => typeof w === 'string') : [];
      sessions.push({ task_id: task, session: e['session'], root: e['root'], work_ids: works });
    }
    if (sessions.length > 0) h.reconciled.sessions = sessions;
  }
  h.totals = totalsOf(h);
}

export interface TraceLinesMeta {
  invalidLines: number;
  intentPending: boolean;
  truncatedRead: boolean;
}

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/**
 * One sweep from the parsed lines of its trace (in file order). Undefined when the trace is
 * not murmur-gc's (its session_start names another capsule).
 */
export function summarizeAuditTrace(
  sessionId: string,
  lines: unknown[],
  meta: TraceLinesMeta,
): SweepHistory | undefined {
  const h: SweepHistory = {
    session_id: sessionId,
    started_ms: idTimestampMs(sessionId, 'ses_') ?? null,
    ended_ms: null,
    duration_ms: null,
    exit_status: null,
    outcome: 'unfinished',
    complete: false,
    intent_pending: meta.intentPending,
    capsule_version: null,
    manual: false,
    retention: [],
    reconciled: { tasks: 0, task_ids: [] },
    quarantine: { purged: [], restored: [] },
    totals: noTotals(),
    invalid_lines: meta.invalidLines,
    truncated_read: meta.truncatedRead,
  };
  for (const l of lines) {
    if (!isObj(l)) {
      h.invalid_lines++;
      continue;
    }
    switch (l['event_type']) {
      case 'session_start': {
        if (typeof l['capsule_name'] === 'string' && l['capsule_name'] !== GC_CAPSULE) return undefined;
        const ts = num(l['timestamp']);
        if (ts !== undefined) h.started_ms = ts;
        if (typeof l['capsule_version'] === 'string') h.capsule_version = l['capsule_version'];
        break;
      }
      case 'retention': {
        const store = typeof l['store'] === 'string' ? l['store'] : '?';
        const reason = typeof l['reason'] === 'string' ? l['reason'] : '?';
        const targets = Array.isArray(l['targets'])
          ? l['targets'].filter((t): t is string => typeof t === 'string')
          : [];
        const removed = num(l['removed']) ?? targets.length;
        const e: RetentionEntry = { store, reason, removed, targets };
        if (typeof l['trigger'] === 'string') {
          e.trigger = l['trigger'];
          if (l['trigger'] === 'manual_cli') h.manual = true;
        }
        const dropped = num(l['messages_dropped']);
        if (reason === 'max_messages') e.messages_dropped = dropped ?? 0;
        h.retention.push(e);
        break;
      }
      case 'quarantine_purge': {
        const targets = Array.isArray(l['targets'])
          ? l['targets'].filter((t): t is string => typeof t === 'string')
          : [];
        h.quarantine.purged.push({
          store: typeof l['store'] === 'string' ? l['store'] : '?',
          reason: typeof l['reason'] === 'string' ? l['reason'] : '?',
          targets,
        });
        break;
      }
      case 'quarantine_restore': {
        const str = (k: string) => (typeof l[k] === 'string' ? l[k] : '?');
        const r: SweepHistory['quarantine']['restored'][number] = {
          store: str('store'),
          held: str('held'),
          target: str('target'),
          origin: str('origin'),
        };
        const m = num(l['messages_restored']);
        if (m !== undefined) r.messages_restored = m;
        h.quarantine.restored.push(r);
        break;
      }
      case 'protection': {
        const str = (k: string) => (typeof l[k] === 'string' ? l[k] : '?');
        (h.protection ??= []).push({
          change: str('change'),
          store: str('store'),
          target: str('target'),
          origin: str('origin'),
          by: str('by'),
        });
        break;
      }
      case 'task_start':
        if (l['source'] === 'detached_lost') {
          h.reconciled.tasks++;
          if (typeof l['task_id'] === 'string') h.reconciled.task_ids.push(l['task_id']);
        }
        break;
      case 'session_end': {
        h.complete = true;
        h.ended_ms = num(l['timestamp']) ?? null;
        h.duration_ms = num(l['duration_ms']) ?? null;
        h.exit_status = typeof l['exit_status'] === 'string' ? l['exit_status'] : null;
        h.outcome = h.exit_status === 'ok' ? 'ok' : h.exit_status === 'canceled' ? 'aborted' : 'errors';
        break;
      }
      default:
        break;
    }
  }
  h.totals = totalsOf(h);
  return h;
}

/**
 * What one sweep took, by kind and fate. `stateOf` tells what became of a target since: what the
 * sweep's details say it held counts as held; for a sweep that did not record it, what the trail
 * or the window shows was held (held now, purged or restored since) does.
 */
export function totalsOf(
  s: SweepHistory,
  stateOf: (r: RetentionEntry, target: string) => keyof Fate = () => 'removed',
): SweepTotals {
  const t = noTotals();
  for (const r of s.retention) {
    if (r.reason === 'max_messages') {
      t.records_truncated += r.removed;
      t.messages_dropped += r.messages_dropped ?? 0;
      continue;
    }
    for (const target of r.targets) {
      const wasHeld = r.held_until_by_target ? target in r.held_until_by_target : stateOf(r, target) !== 'removed';
      const kind = r.store === 'records' ? 'records' : target.startsWith('ses_') ? 'sessions' : 'beside';
      t[`${kind}_${wasHeld ? 'held' : 'removed'}`]++;
    }
  }
  return t;
}

/**
 * What became of `target` (of `store`) after the sweep that took it: the first purge or restore of
 * it in `after` (the sweeps that followed, oldest first), else held when the undo window holds it
 * now, else removed.
 */
function fateOf(
  after: SweepHistory[],
  store: string,
  target: string,
  held: HeldNow,
): { state: keyof Fate; until?: number } {
  for (const s of after) {
    if (s.quarantine.purged.some((p) => p.store === store && p.targets.includes(target))) return { state: 'purged' };
    if (s.quarantine.restored.some((r) => r.store === store && r.target === target)) return { state: 'restored' };
    // taken again by a later sweep: that later line tells its fate
    if (s.retention.some((r) => r.store === store && r.targets.includes(target))) return { state: 'removed' };
  }
  const until = held.get(heldNowKey(store, target));
  return until !== undefined ? { state: 'held', until } : { state: 'removed' };
}

export function findTarget(
  sweeps: SweepHistory[],
  target: string,
  where: Record<string, string> = {},
  held: HeldNow = new Map(),
  all: SweepHistory[] = sweeps,
): TargetMatch[] {
  const out: TargetMatch[] = [];
  const later = (s: SweepHistory) => all.slice(all.indexOf(s) + 1);
  for (const s of sweeps) {
    for (const r of s.retention) {
      if (!r.targets.includes(target)) continue;
      const m: TargetMatch = {
        sweep: s.session_id,
        started_ms: s.started_ms,
        store: r.store,
        reason: r.reason,
        action: r.reason === 'max_messages' ? 'truncated' : 'removed',
        exit_status: s.exit_status,
        outcome: statusWord(s),
        where: where[s.session_id] ?? null,
        line_removed: r.removed,
        manual: r.trigger === 'manual_cli',
      };
      if (r.messages_dropped !== undefined) m.line_messages_dropped = r.messages_dropped;
      const parentSession = r.parent_session_by_target?.[target];
      if (parentSession !== undefined) m.parent_session = parentSession;
      const own = r.dropped_by_target?.[target];
      if (own !== undefined) m.messages_dropped = own;
      const f = fateOf(later(s), r.store, target, held);
      m.state = f.state;
      if (f.until !== undefined) m.held_until_ms = f.until;
      out.push(m);
    }
    for (const p of s.quarantine.purged) {
      if (!p.targets.includes(target)) continue;
      out.push({
        sweep: s.session_id,
        started_ms: s.started_ms,
        store: p.store,
        reason: p.reason,
        action: 'purged',
        exit_status: s.exit_status,
        outcome: statusWord(s),
        where: null,
        line_removed: p.targets.length,
        manual: false,
      });
    }
    for (const r of s.quarantine.restored) {
      if (r.target !== target) continue;
      const m: TargetMatch = {
        sweep: s.session_id,
        started_ms: s.started_ms,
        store: r.store,
        reason: r.held,
        action: 'restored',
        exit_status: s.exit_status,
        outcome: statusWord(s),
        where: r.origin,
        line_removed: 1,
        manual: true,
      };
      if (r.messages_restored !== undefined) m.line_messages_dropped = r.messages_restored;
      out.push(m);
    }
    for (const r of s.reconciled.sessions ?? []) {
      if (r.session !== target) continue;
      out.push({
        sweep: s.session_id,
        started_ms: s.started_ms,
        store: 'sessions',
        reason: 'shell_lost',
        action: 'reconciled',
        exit_status: s.exit_status,
        outcome: statusWord(s),
        where: r.root,
        line_removed: r.work_ids.length,
        manual: false,
        work_ids: r.work_ids,
      });
    }
    for (const p of s.protection ?? []) {
      if (p.target !== target) continue;
      out.push({
        sweep: s.session_id,
        started_ms: s.started_ms,
        store: p.store,
        reason: p.by,
        action: p.change === 'release' ? 'released' : 'protected',
        exit_status: s.exit_status,
        outcome: statusWord(s),
        where: p.origin,
        line_removed: 1,
        manual: true,
      });
    }
  }
  return out;
}

export interface HistoryQuery {
  sinceMs?: number;
  target?: string;
}

function startKey(s: SweepHistory): number {
  return s.started_ms ?? idTimestampMs(s.session_id, 'ses_') ?? 0;
}

export function buildHistory(
  base: {
    home: string;
    auditRoot: string;
    exists: boolean;
    problems: HistoryDoc['problems'];
    where?: Record<string, string>;
    held?: HeldNow;
  },
  all: SweepHistory[],
  q: HistoryQuery,
): HistoryDoc {
  const held = base.held ?? new Map<string, number>();
  const ordered = [...all].sort((a, b) => startKey(a) - startKey(b) || (a.session_id < b.session_id ? -1 : 1));
  ordered.forEach((s, i) => {
    const after = ordered.slice(i + 1);
    for (const r of s.retention) {
      const fate: Fate = { removed: 0, held: 0, purged: 0, restored: 0 };
      for (const target of r.targets) fate[fateOf(after, r.store, target, held).state]++;
      r.fate = fate;
    }
    s.totals = totalsOf(s, (r, target) => fateOf(after, r.store, target, held).state);
  });
  let sweeps = ordered;
  if (q.sinceMs !== undefined) {
    const since = q.sinceMs;
    sweeps = sweeps.filter((s) => startKey(s) >= since);
  }
  let matches: TargetMatch[] | undefined;
  const target = q.target === undefined ? undefined : resolveTarget(ordered, q.target);
  if (target !== undefined) {
    matches = findTarget(sweeps, target, base.where, held, ordered);
    const hit = new Set(matches.map((m) => m.sweep));
    sweeps = sweeps.filter((s) => hit.has(s.session_id));
  }
  const totals = { sweeps: sweeps.length, ...noTotals(), reconciled_tasks: 0, held: 0 };
  for (const s of sweeps) {
    for (const r of s.retention) totals.held += r.fate?.held ?? 0;
    for (const k of Object.keys(s.totals) as (keyof SweepTotals)[]) totals[k] += s.totals[k];
    totals.reconciled_tasks += s.reconciled.tasks;
  }
  const doc: HistoryDoc = {
    home: base.home,
    audit_root: base.auditRoot,
    audit_root_exists: base.exists,
    since_ms: q.sinceMs ?? null,
    target: target ?? null,
    sweeps,
    totals,
    problems: base.problems,
  };
  if (matches) doc.matches = matches;
  if (target !== undefined && target !== q.target) doc.target_prefix = q.target ?? null;
  return doc;
}

/** Every name the trail mentions: targets taken, purged, restored, protected, sessions reconciled. */
function namesIn(sweeps: SweepHistory[]): Set<string> {
  const out = new Set<string>();
  for (const s of sweeps) {
    for (const r of s.retention) for (const t of r.targets) out.add(t);
    for (const p of s.quarantine.purged) for (const t of p.targets) out.add(t);
    for (const r of s.quarantine.restored) out.add(r.target);
    for (const p of s.protection ?? []) out.add(p.target);
    for (const r of s.reconciled.sessions ?? []) out.add(r.session);
  }
  return out;
}

/**
 * The other names an operator types for a child workdir or work log of the trail (its target is
 * relative to W): the child's directory name, the work id, the log's file name.
 */
function besideAliases(name: string): string[] {
  const child = /^\.murmur\/children\/([^/]+)$/.exec(name);
  if (child) return [child[1]!];
  const log = /^logs\/(wrk_[^/]+)\.log$/.exec(name);
  return log ? [log[1]!, `${log[1]!}.log`] : [];
}

/** `given` is an absolute path ending in the child workdir or work log `name` (a trailing slash allowed). */
function isPathOf(given: string, name: string): boolean {
  if (!given.startsWith('/') || besideAliases(name).length === 0) return false;
  const g = given.replace(/\/+$/, '');
  return g.endsWith(`/${name}`);
}

/**
 * Whether `name` of the trail is what `given` (a --target) may stand for: the name or a prefix of
 * it, a child workdir's directory name or work id (or their prefix), a log's file name, or an
 * absolute path ending in it.
 */
export function targetMatches(name: string, given: string): boolean {
  return name.startsWith(given) || besideAliases(name).some((a) => a.startsWith(given)) || isPathOf(given, name);
}

/** At most this many candidates named by an ambiguous prefix. */
const CANDIDATES_SHOWN = 10;

/**
 * `--target`: the name itself when the trail mentions it, else the one name it is a prefix of
 * (as git and docker take a unique id prefix); several → `target_ambiguous` (exit 2) naming them;
 * none → the name as given (no match: exit 1).
 */
export function resolveTarget(sweeps: SweepHistory[], given: string): string {
  const names = namesIn(sweeps);
  if (names.has(given) || given === '') return given;
  const exact = [...names].filter((n) => besideAliases(n).includes(given) || isPathOf(given, n));
  const hits = exact.length > 0 ? exact.sort() : [...names].filter((n) => targetMatches(n, given)).sort();
  if (hits.length <= 1) return hits[0] ?? given;
  const shown = hits.slice(0, CANDIDATES_SHOWN).join(', ');
  const more = hits.length > CANDIDATES_SHOWN ? ` and ${hits.length - CANDIDATES_SHOWN} more` : '';
  throw new GcError(
    Codes.targetAmbiguous,
    `--target ${given} is a prefix of ${hits.length} names in the audit trail: ${shown}${more}`,
    {
      exitCode: ExitCodes.usage,
      hint: 'give more of the id',
    },
  );
}

// ---- rendering ---------------------------------------------------------------------------------

function when(ms: number | null, nowMs: number): string {
  return ms === null ? '(unknown time)' : formatWhen(ms, nowMs);
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

function statusWord(s: SweepHistory): string {
  if (s.complete) return outcomeWords(s.outcome === 'unfinished' ? 'errors' : s.outcome);
  return s.intent_pending ? 'unfinished (running, or killed and not yet recovered)' : 'unfinished';
}

function retentionWords(r: RetentionEntry): string {
  if (r.trigger === 'manual_cli') {
    return r.reason === 'max_messages'
      ? `by hand (conversation truncate): ${plural(r.removed, 'record')} truncated, ${plural(r.messages_dropped ?? 0, 'message')} dropped`
      : `by hand (conversation rm): ${r.removed} removed`;
  }
  if (r.reason === 'max_messages') {
    return `${r.store}/${r.reason}: ${plural(r.removed, 'record')} truncated, ${plural(r.messages_dropped ?? 0, 'message')} dropped${perRecord(r.dropped_by_target)}${fateWords(r.fate, 'truncation')}`;
  }
  const f = r.fate;
  const beside = r.store === 'sessions' ? r.targets.filter((t) => !t.startsWith('ses_')).length : 0;
  const own = r.targets.length - beside;
  const what =
    r.store === 'sessions' ? (r.reason === 'children_max_age' ? 'orphaned child workdir' : 'session') : 'record';
  const n = r.reason === 'children_max_age' ? r.targets.length : own;
  const besideWords =
    beside > 0 && r.reason !== 'children_max_age'
      ? ` (and ${plural(beside, 'child workdir or work log', 'child workdirs and work logs')} with them)`
      : '';
  if (f && f.removed !== r.targets.length)
    return `${r.store}/${r.reason}: ${plural(n, what)} taken${besideWords}${fateWords(f, 'item')}`;
  return `${r.store}/${r.reason}: ${plural(n, what)} removed${besideWords}`;
}

/** Records named with their count at most (--json and --target have them all). */
const PER_RECORD_SHOWN = 5;

/** ` (ctx_a 1200, ctx_b 3)`: messages dropped per record, the largest first. */
function perRecord(d: Record<string, number> | undefined): string {
  if (!d) return '';
  const all = Object.entries(d).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const more = all.length > PER_RECORD_SHOWN ? `, and ${all.length - PER_RECORD_SHOWN} more` : '';
  return ` (${all
    .slice(0, PER_RECORD_SHOWN)
    .map(([t, n]) => `${t} ${n}`)
    .join(', ')}${more})`;
}

/** ` — 1 removed, 1 held now (restorable), 1 held then deleted for good, 1 held then restored`; nothing when all were removed at once. */
function fateWords(f: Fate | undefined, what: 'item' | 'truncation'): string {
  if (!f || f.held + f.purged + f.restored === 0) return '';
  if (what === 'truncation') {
    const parts = [
      ...(f.held > 0 ? [`${f.held} held now (restorable)`] : []),
      ...(f.purged > 0 ? [`${f.purged} held then deleted for good`] : []),
      ...(f.restored > 0 ? [`${f.restored} held then restored`] : []),
    ];
    return `; dropped lines: ${parts.join(', ')}`;
  }
  const parts = [
    ...(f.removed > 0 ? [`${f.removed} removed`] : []),
    ...(f.held > 0 ? [`${f.held} held now (restorable)`] : []),
    ...(f.purged > 0 ? [`${f.purged} held then deleted for good`] : []),
    ...(f.restored > 0 ? [`${f.restored} held then restored`] : []),
  ];
  return ` — ${parts.join(', ')}`;
}

/** The verb of a removed/truncated match: `removed`, or `held` when the undo window took it. */
function matchVerb(m: TargetMatch): string {
  if (m.state === undefined || m.state === 'removed' || m.action === 'truncated') return m.action;
  return 'held';
}

/** Under a match the undo window holds now: until when, and how to put it back. */
function heldNote(m: TargetMatch, target: string, iso: (ms: number | null) => string): string[] {
  if (m.state !== 'held') return [];
  const until = iso(m.held_until_ms ?? null);
  return m.action === 'truncated'
    ? [`    its dropped lines are held until ${until}: murmur-gc restore ${target} puts them back`]
    : [`    held now, until ${until}: murmur-gc restore ${target} puts it back`];
}

/** Reconciled sessions listed per sweep at most. */
const RECONCILED_SHOWN = 5;

export function renderHistory(doc: HistoryDoc, nowMs = Date.now()): string {
  const iso = (ms: number | null) => when(ms, nowMs);
  const out: string[] = [];
  const since = doc.since_ms === null ? '' : ` since ${iso(doc.since_ms)}`;
  if (!doc.audit_root_exists) {
    out.push(
      `murmur-gc history — no audit trail at ${doc.audit_root}: no sweep has removed, truncated or reconciled anything there yet.`,
    );
    return out.join('\n') + '\n';
  }
  if (doc.target !== null) {
    const matches = doc.matches ?? [];
    if (matches.length === 0) {
      out.push(
        `${doc.target}: no sweep in the audit trail${since} removed, held, truncated, purged, restored or reconciled it, nor did a conversation rm or truncate (${doc.audit_root}; audit traces themselves are retained by audit.retain).`,
      );
    } else {
      out.push(
        `${doc.target}:${doc.target_prefix ? ` (the one name in the trail starting ${doc.target_prefix})` : ''}`,
      );
      for (const m of matches) {
        if (m.action === 'purged') {
          out.push(
            `  deleted for good from the quarantine by sweep ${m.sweep} at ${iso(m.started_ms)}: ${m.store}/${m.reason === 'expired' ? 'its undo window passed' : `${m.reason}: purged for space before its window passed`}; that sweep: ${m.outcome}`,
          );
          continue;
        }
        if (m.action === 'protected' || m.action === 'released') {
          const place = `${m.store === 'sessions' ? 'sessions root' : 'record store'} ${m.where ?? '?'}`;
          out.push(
            m.action === 'protected'
              ? `  protected by murmur-gc ${m.reason === 'restore' ? 'restore, with what it put back' : 'protect'} (${m.sweep}) at ${iso(m.started_ms)} in ${place}: no sweep acts on it until it is released`
              : `  released by murmur-gc release (${m.sweep}) at ${iso(m.started_ms)} in ${place}: sweeps act on it again by the policy`,
          );
          continue;
        }
        if (m.action === 'reconciled') {
          out.push(
            `  reconciled by sweep ${m.sweep} at ${iso(m.started_ms)} in sessions root ${m.where ?? '?'}: ${plural(m.line_removed, 'background command')} marked lost (shell_lost); that sweep: ${m.outcome}`,
          );
          for (const w of m.work_ids ?? []) out.push(`    ${w}`);
          continue;
        }
        if (m.action === 'restored') {
          const what =
            m.reason === 'truncation'
              ? `${plural(m.line_messages_dropped ?? 0, 'dropped message')} put back`
              : `the held ${m.reason} put back`;
          out.push(
            `  restored by murmur-gc restore (${m.sweep}) at ${iso(m.started_ms)} into ${m.store === 'sessions' ? 'sessions root' : 'record store'} ${m.where ?? '?'}: ${what}`,
          );
          continue;
        }
        const extra =
          m.action === 'truncated'
            ? m.messages_dropped !== undefined
              ? `, ${plural(m.messages_dropped, 'message')} dropped${m.line_removed > 1 ? ` (that sweep truncated ${plural(m.line_removed, 'record')}, ${plural(m.line_messages_dropped ?? 0, 'message')} dropped in all)` : ''}`
              : ` (that sweep truncated ${plural(m.line_removed, 'record')} by ${m.reason}, ${plural(m.line_messages_dropped ?? 0, 'message')} dropped in all)`
            : m.line_removed > 1
              ? ` (with ${m.line_removed - 1} other${m.line_removed - 1 === 1 ? '' : 's'})`
              : '';
        const from =
          m.where !== null ? ` from ${m.store === 'sessions' ? 'sessions root' : 'record store'} ${m.where}` : '';
        if (m.manual) {
          const by =
            m.action === 'truncated'
              ? `murmur-gc conversation truncate, ${plural(m.line_messages_dropped ?? 0, 'message')} dropped`
              : 'murmur-gc conversation rm';
          out.push(`  ${m.action} by hand (${by}; audit ${m.sweep}) at ${iso(m.started_ms)}${from}; ${m.outcome}`);
          continue;
        }
        const withSession = m.parent_session !== undefined ? ` with session ${m.parent_session}` : '';
        out.push(
          `  ${matchVerb(m)}${withSession} by sweep ${m.sweep} at ${iso(m.started_ms)}${from}: ${m.store}/${m.reason}${extra}; that sweep: ${m.outcome}`,
        );
        out.push(...heldNote(m, doc.target, iso));
      }
    }
    return out.join('\n') + '\n';
  }
  const byHand = doc.sweeps.filter((s) => s.manual).length;
  const hand = byHand > 0 ? ` and ${plural(byHand, 'action')} by hand (conversation rm/truncate)` : '';
  out.push(
    `murmur-gc history — ${plural(doc.sweeps.length - byHand, 'sweep')} with changes${hand}${since} (audit trail ${doc.audit_root})`,
  );
  for (const s of doc.sweeps) {
    const dur = s.duration_ms === null ? '' : `, ${formatDuration(s.duration_ms)}`;
    out.push(`${iso(s.started_ms)}  ${s.session_id}  ${s.manual ? 'by hand, ' : ''}${statusWord(s)}${dur}`);
    for (const r of s.retention) out.push(`    ${retentionWords(r)}`);
    for (const p of s.quarantine.purged)
      out.push(
        `    quarantine: ${p.targets.length} held ${p.store === 'sessions' ? 'session(s)' : 'record item(s)'} deleted for good (${p.reason})`,
      );
    for (const r of s.quarantine.restored)
      out.push(
        `    restored from the quarantine: ${r.held} ${r.target} into ${r.origin}${r.messages_restored !== undefined ? ` (${plural(r.messages_restored, 'message')})` : ''}`,
      );
    for (const p of s.protection ?? [])
      out.push(
        `    ${p.change === 'release' ? 'released from' : 'put on'} the protection list: ${p.store === 'sessions' ? 'session' : 'context'} ${p.target} in ${p.origin}${p.by === 'restore' ? ' (restored)' : ''}`,
      );
    if (s.reconciled.tasks > 0) {
      // One line per session reconciled (its work ids below it with --target), never every id on one line.
      const known = s.reconciled.sessions ?? [];
      out.push(`    reconciled lost background work: ${plural(s.reconciled.tasks, 'session')}`);
      for (const r of known.slice(0, RECONCILED_SHOWN))
        out.push(`      ${r.session}: ${plural(r.work_ids.length, 'command')} marked lost (task ${r.task_id})`);
      if (known.length > RECONCILED_SHOWN)
        out.push(`      … and ${known.length - RECONCILED_SHOWN} more (--json has them all)`);
      const unnamed = s.reconciled.task_ids.filter((t) => !known.some((r) => r.task_id === t));
      for (const t of unnamed.slice(0, RECONCILED_SHOWN)) out.push(`      detached_lost task ${t}`);
      if (unnamed.length > RECONCILED_SHOWN)
        out.push(`      … and ${unnamed.length - RECONCILED_SHOWN} more tasks (--json has them all)`);
    }
    if (
      s.retention.length === 0 &&
      s.reconciled.tasks === 0 &&
      s.quarantine.purged.length === 0 &&
      s.quarantine.restored.length === 0 &&
      !s.protection?.length
    )
      out.push('    no removals recorded');
    if (s.invalid_lines > 0) out.push(`    (${plural(s.invalid_lines, 'unreadable line')} skipped)`);
    if (s.truncated_read) out.push('    (trace larger than the read cap; only its beginning was read)');
  }
  const t = doc.totals;
  const pair = (removed: number, heldN: number, one: string, many?: string) =>
    `${plural(removed, one, many)} removed${heldN > 0 ? `, ${heldN} held` : ''}`;
  const beside =
    t.beside_removed + t.beside_held > 0
      ? `, ${pair(t.beside_removed, t.beside_held, 'child workdir or work log', 'child workdirs and work logs')}`
      : '';
  out.push(
    `Total: ${pair(t.sessions_removed, t.sessions_held, 'session')}, ${pair(t.records_removed, t.records_held, 'record')}${beside}, ${plural(t.records_truncated, 'record truncation')} (${plural(t.messages_dropped, 'message')} dropped), ${plural(t.reconciled_tasks, 'reconciliation')}${t.held > 0 ? `; of what they held, ${t.held} still held (murmur-gc quarantine ls)` : ''}.`,
  );
  for (const p of doc.problems) out.push(`  unreadable: ${p.target} [${p.code}] ${p.detail}`);
  return out.join('\n') + '\n';
}
