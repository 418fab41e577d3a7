// The sweep's report: the one JSON document of DESIGN §3 and its human rendering.
// Guarantees: actions carry ids, names, counts, sizes and paths only — never record content;
// key names and reason words are the runtime's; the document is a plain JSON value.

export type Action =
  | { kind: 'remove_session'; root: string; target: string; reason: 'max_age' | 'max_sessions'; bytes: number }
  | { kind: 'remove_record'; record: string; target: string; reason: 'max_age'; path: string; bytes: number }
  | {
      kind: 'truncate_record';
      record: string;
      target: string;
      reason: 'max_messages';
      messages_dropped: number;
      kept: number;
      path: string;
      bytes: number;
      /** Present when a racing writer's lines had to be placed after newer ones (none lost). */
      concurrent_append?: { lines_out_of_order: number };
    }
  | {
      kind: 'shell_lost';
      session_id: string;
      root: string;
      work_id: string;
      binary: string;
      command: string;
      detached_at_ms: number;
      task_id: string | null;
    }
  | { kind: 'repair_torn_tail'; record: string; target: string; path: string }
  | { kind: 'chmod'; path: string; from: string; to: string }
  | { kind: 'remove_debris'; path: string; code: 'process_interrupted'; detail: string; bytes: number };

export interface Skipped {
  target: string;
  code: string;
  detail: string;
}

export interface ErrorEntry {
  target: string;
  code: string;
  detail: string;
}

export interface SweepReport {
  dry_run: boolean;
  home: string;
  home_exists: boolean;
  started_ms: number;
  duration_ms: number;
  actions: Action[];
  skipped: Skipped[];
  errors: ErrorEntry[];
  audit: string | null;
  bytes_freed: number;
  inventory: {
    sessions_roots: number;
    sessions: number;
    records: number;
    traces_read: number;
    traces_cached: number;
    records_counted: number;
    records_count_cached: number;
  };
  message?: string;
}

export function countByKind(actions: Action[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const a of actions) out[a.kind] = (out[a.kind] ?? 0) + 1;
  return out;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 * 1024 * 1024) return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
  return `${(n / (1024 * 1024 * 1024)).toFixed(1)} GiB`;
}

function plural(n: number, one: string, many = one + 's'): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** Human summary for the terminal. */
export function renderHuman(r: SweepReport): string {
  const lines: string[] = [];
  const would = r.dry_run ? 'would ' : '';
  lines.push(`murmur-gc ${r.dry_run ? 'dry run (nothing is changed)' : 'sweep'} — home ${r.home}`);
  if (r.message) lines.push(r.message);
  if (!r.home_exists && r.actions.length === 0 && r.errors.length === 0 && r.skipped.length === 0 && r.message) {
    return lines.join('\n') + '\n';
  }
  for (const a of r.actions) {
    switch (a.kind) {
      case 'remove_session':
        lines.push(`  ${would}remove session ${a.root}/${a.target}  (${a.reason}, ${formatBytes(a.bytes)})`);
        break;
      case 'remove_record':
        lines.push(`  ${would}remove record ${a.record}/${a.target}  (${a.reason}, ${formatBytes(a.bytes)})`);
        break;
      case 'truncate_record':
        lines.push(`  ${would}truncate record ${a.record}/${a.target}  (${a.reason}: ${plural(a.messages_dropped, 'message')} dropped, ${a.kept} kept)`);
        break;
      case 'shell_lost':
        lines.push(
          `  ${would}mark lost: background command ${a.work_id} of session ${a.session_id} (binary ${a.binary}, detached at ${isoOrMs(a.detached_at_ms)}) — no exit code, output or log exists for it`,
        );
        break;
      case 'repair_torn_tail':
        lines.push(`  ${would}terminate the torn last line of record ${a.record}/${a.target}`);
        break;
      case 'chmod':
        lines.push(`  ${would}chmod ${a.path}  ${a.from} -> ${a.to}`);
        break;
      case 'remove_debris':
        lines.push(`  ${would}remove leftover ${a.path}  (${a.code}: ${a.detail})`);
        break;
    }
  }
  for (const s of r.skipped) lines.push(`  skipped ${s.target}  [${s.code}] ${s.detail}`);
  for (const e of r.errors) lines.push(`  error ${e.target}  [${e.code}] ${e.detail}`);
  const c = countByKind(r.actions);
  const parts = [
    plural(c['remove_session'] ?? 0, 'session') + ' removed',
    plural(c['remove_record'] ?? 0, 'record') + ' removed',
    plural(c['truncate_record'] ?? 0, 'record') + ' truncated',
    plural(c['shell_lost'] ?? 0, 'lost command') + ' reconciled',
    plural(c['chmod'] ?? 0, 'mode') + ' fixed',
  ];
  if (c['remove_debris']) parts.push(plural(c['remove_debris'], 'leftover') + ' cleaned');
  if (c['repair_torn_tail']) parts.push(plural(c['repair_torn_tail'], 'torn line') + ' terminated');
  lines.push(
    `${r.dry_run ? 'Would have: ' : 'Done: '}${parts.join(', ')}; ${formatBytes(r.bytes_freed)} ${r.dry_run ? 'to free' : 'freed'}; ${plural(r.skipped.length, 'item')} skipped; ${plural(r.errors.length, 'error')}.`,
  );
  lines.push(
    `Scanned ${plural(r.inventory.sessions_roots, 'sessions root')}, ${plural(r.inventory.sessions, 'session')}, ${plural(r.inventory.records, 'conversation record')}.`,
  );
  if (r.audit) lines.push(`Audit trace: ${r.home}/gc/${r.audit}/trace.jsonl (murmur-gc history shows every sweep)`);
  return lines.join('\n') + '\n';
}

/** An ms timestamp as ISO 8601, or the raw number when it is outside Date's range (a u64 from a trace). */
function isoOrMs(ms: number): string {
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? `${ms} ms` : d.toISOString();
}
