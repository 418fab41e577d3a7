// The one-line summary of a daemon sweep (log line + state), pure.
// Guarantees: counts, sizes, codes, ids and durations only — never record content; the outcome
// is derived from stable codes, never from message text.
import { Codes, NORMAL_CODES } from '../errors.js';
import type { Logger } from '../log.js';
import { countByFate, fateKind, formatBytes, formatDuration, type SweepReport } from './report.js';
import type { SweepOutcome, SweepSummary, SweepTrigger } from '../gchome/state.js';
import { definedOnly } from '../defined.js';

function countCodes(items: { code: string }[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const i of items) out[i.code] = (out[i.code] ?? 0) + 1;
  return out;
}

export function outcomeOf(report: SweepReport): SweepOutcome {
  // A stop can surface as an error (the sweep stopped early) or, when it hit a per-item read,
  // as a skipped item; either way the sweep did not get through its plan.
  if ([...report.errors, ...report.skipped].some((e) => e.code === Codes.aborted)) return 'aborted';
  return report.errors.length > 0 ? 'errors' : 'ok';
}

export function summarizeReport(
  report: SweepReport,
  trigger: SweepTrigger,
  startedMs: number,
  endedMs: number,
): SweepSummary {
  const s: SweepSummary = {
    trigger,
    started_ms: startedMs,
    ended_ms: endedMs,
    duration_ms: Math.max(0, endedMs - startedMs),
    outcome: outcomeOf(report),
    counts: countByFate(report.actions),
    bytes_freed: report.bytes_freed,
    skipped: report.skipped.length,
    skipped_by_code: countCodes(report.skipped),
    errors: report.errors.length,
    errors_by_code: countCodes(report.errors),
    audit: report.audit,
  };
  if (report.message !== undefined) s.message = report.message;
  s.actions_by_store = actionsByStore(report);
  s.messages_dropped = report.actions.reduce((n, a) => n + (a.kind === 'truncate_record' ? a.messages_dropped : 0), 0);
  if (report.kept) s.kept = { items: report.kept.items, bytes: report.kept.bytes, oldest_ms: report.kept.oldest_ms };
  return s;
}

/** A sweep that did not run because another murmur-gc holds the sweep lock. */
export function busySummary(trigger: SweepTrigger, startedMs: number, endedMs: number, message: string): SweepSummary {
  return {
    trigger,
    started_ms: startedMs,
    ended_ms: endedMs,
    duration_ms: Math.max(0, endedMs - startedMs),
    outcome: 'busy',
    counts: {},
    bytes_freed: 0,
    skipped: 0,
    skipped_by_code: {},
    errors: 0,
    errors_by_code: {},
    audit: null,
    message,
  };
}

/** A sweep that failed as a whole (its error is counted under `code`). */
export function failedSummary(
  trigger: SweepTrigger,
  startedMs: number,
  endedMs: number,
  code: string,
  message: string,
): SweepSummary {
  return {
    ...busySummary(trigger, startedMs, endedMs, message),
    outcome: 'failed',
    errors: 1,
    errors_by_code: { [code]: 1 },
  };
}

/**
 * The words `status` and `history` both use for how a sweep ended (JSON keeps the stable values):
 * ok, errors, aborted (stopped by a signal, or killed and completed by the next run), busy, failed.
 */
export function outcomeWords(o: SweepOutcome | 'unfinished'): string {
  switch (o) {
    case 'ok':
      return 'ok';
    case 'errors':
      return 'finished with errors';
    case 'aborted':
      return 'stopped early';
    case 'busy':
      return 'skipped (another sweep held the lock)';
    case 'failed':
      return 'failed';
    case 'unfinished':
      return 'unfinished';
  }
}

/** [kind, noun, verb]: `1 session removed`, `2 sessions removed`. */
const KIND_WORDS: [string, string, string][] = [
  ['remove_session', 'session', 'removed'],
  ['hold_session', 'session', 'held'],
  ['remove_record', 'record', 'removed'],
  ['hold_record', 'record', 'held'],
  ['remove_child_workdir', 'child workdir', 'removed'],
  ['hold_child_workdir', 'child workdir', 'held'],
  ['remove_work_log', 'work log', 'removed'],
  ['hold_work_log', 'work log', 'held'],
  ['remove_orphan_workdir', 'orphaned child workdir', 'removed'],
  ['purge_quarantine', 'held item', 'purged'],
  ['truncate_record', 'record', 'truncated'],
  ['shell_lost', 'lost command', 'reconciled'],
  ['chmod', 'mode', 'fixed'],
  ['remove_debris', 'leftover', 'cleaned'],
];

/** The human part of the summary line, e.g. `sweep ok: 3 sessions removed, 1.2 MiB freed, 0 skipped, 0 errors (812 ms)`. */
export function summaryText(s: SweepSummary): string {
  if (s.outcome === 'busy') return `sweep skipped: ${s.message ?? 'another murmur-gc sweep holds the lock'}`;
  if (s.outcome === 'failed') return `sweep failed: ${s.message ?? 'see the error above'}`;
  const parts = KIND_WORDS.filter(([k]) => (s.counts[k] ?? 0) > 0).map(([k, noun, verb]) => {
    const n = s.counts[k] ?? 0;
    return `${n} ${noun}${n === 1 ? '' : 's'} ${verb}`;
  });
  if (parts.length === 0) parts.push('nothing to do');
  const head = s.outcome === 'aborted' ? 'sweep stopped early' : `sweep ${s.outcome}`;
  const kept = s.kept
    ? `; ${s.kept.items} kept aside (${formatBytes(s.kept.bytes)} murmur-gc could not remove; murmur-gc status lists them)`
    : '';
  // live and protected items a rule condemns are the normal state: counted apart from the skips
  const normal = Object.entries(s.skipped_by_code).reduce((n, [code, k]) => n + (NORMAL_CODES.has(code) ? k : 0), 0);
  const live = normal > 0 ? `; ${normal} kept live or protected` : '';
  return `${head}: ${parts.join(', ')}; ${formatBytes(s.bytes_freed)} freed; ${s.skipped - normal} skipped${live}; ${s.errors} errors${kept} (${formatDuration(s.duration_ms)})`;
}

/** The stable code a summary line carries when it is a warning or an error. */
export function summaryCode(s: SweepSummary): string | undefined {
  switch (s.outcome) {
    case 'ok':
      return undefined;
    case 'busy':
      return Codes.storageBusy;
    case 'aborted':
      return Codes.aborted;
    case 'errors':
    case 'failed':
      return Object.keys(s.errors_by_code)[0] ?? Codes.ioError;
  }
}

/**
 * The one `sweep_summary` log line of a sweep — the daemon's and a one-shot `murmur-gc sweep`'s
 * alike: at info when ok or stopped, warn when busy or with errors, error when it failed; always
 * logged at least at info, whatever `log.level` says.
 */
export function logSweepSummary(log: Logger, s: SweepSummary): void {
  const code = summaryCode(s);
  const fields = {
    event: 'sweep_summary',
    ...definedOnly({ code }),
    trigger: s.trigger,
    outcome: s.outcome,
    counts: s.counts,
    bytes_freed: s.bytes_freed,
    skipped: s.skipped,
    skipped_by_code: s.skipped_by_code,
    errors: s.errors,
    errors_by_code: s.errors_by_code,
    started_ms: s.started_ms,
    ended_ms: s.ended_ms,
    duration_ms: s.duration_ms,
    audit: s.audit,
    ...definedOnly({ message: s.message }),
    ...(s.kept ? { kept: s.kept } : {}),
  };
  const text = summaryText(s);
  const out = summaryLogger(log);
  if (s.outcome === 'ok' || s.outcome === 'aborted') out.info(fields, text);
  else if (s.outcome === 'failed') out.error(fields, text);
  else out.warn(fields, text);
}

/** Where an action happened, for `actions_by_store`: the sessions root, the record store, or `home`. */
function storeOf(a: SweepReport['actions'][number]): string {
  switch (a.kind) {
    case 'remove_session':
    case 'remove_child_workdir':
    case 'remove_work_log':
    case 'shell_lost':
      return a.root;
    case 'remove_record':
    case 'truncate_record':
      return a.record;
    case 'purge_quarantine':
      return a.origin;
    default:
      return 'home';
  }
}

export function actionsByStore(report: SweepReport): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const a of report.actions) {
    const byStore = (out[fateKind(a)] ??= {});
    const store = storeOf(a);
    byStore[store] = (byStore[store] ?? 0) + 1;
  }
  return out;
}

/** The logger for per-sweep summaries: at least `info`, unless logging is off. */
export function summaryLogger(log: Logger): Logger {
  if (log.level === 'silent' || log.isLevelEnabled('info')) return log;
  return log.child({}, { level: 'info' });
}
