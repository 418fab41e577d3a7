// Reading murmur-gc's own audit traces back for the reliability properties.
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface AuditSummary {
  traces: number;
  /** Problems: a trace not opening with session_start, not closed by session_end, a dangling parent, intent logs left. */
  problems: string[];
  /** sessions removed, by target, with how many times they are mentioned. */
  sessions: Map<string, number>;
  /** messages dropped per record target. */
  dropped: Map<string, number>;
  /** quarantine_restore lines per target (messages restored summed in `messagesRestored`). */
  restored: Map<string, number>;
  messagesRestored: Map<string, number>;
}

export function readAudits(home: string): AuditSummary {
  const gc = path.join(home, 'gc');
  const out: AuditSummary = {
    traces: 0,
    problems: [],
    sessions: new Map(),
    dropped: new Map(),
    restored: new Map(),
    messagesRestored: new Map(),
  };
  if (!fs.existsSync(gc)) return out;
  for (const name of fs.readdirSync(gc)) {
    if (!name.startsWith('ses_')) continue;
    const dir = path.join(gc, name);
    if (fs.existsSync(path.join(dir, 'intent.jsonl'))) out.problems.push(`${name}: intent.jsonl left`);
    const tf = path.join(dir, 'trace.jsonl');
    if (!fs.existsSync(tf)) {
      out.problems.push(`${name}: no trace.jsonl`);
      continue;
    }
    out.traces++;
    const lines = fs
      .readFileSync(tf, 'utf8')
      .split('\n')
      .filter((l) => l !== '');
    const evs = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const ids = new Set<unknown>();
    if (evs[0]?.['event_type'] !== 'session_start')
      out.problems.push(`${name}: first line is ${String(evs[0]?.['event_type'])}`);
    if (evs[evs.length - 1]?.['event_type'] !== 'session_end')
      out.problems.push(`${name}: last line is ${String(evs[evs.length - 1]?.['event_type'])}`);
    for (const e of evs) {
      if (e['parent_id'] !== null && !ids.has(e['parent_id']))
        out.problems.push(
          `${name}: ${String(e['event_type'])} has parent ${JSON.stringify(e['parent_id'])}, not an earlier line`,
        );
      ids.add(e['event_id']);
      if (e['event_type'] === 'quarantine_restore') {
        const t = String(e['target']);
        out.restored.set(t, (out.restored.get(t) ?? 0) + 1);
        if (typeof e['messages_restored'] === 'number')
          out.messagesRestored.set(t, (out.messagesRestored.get(t) ?? 0) + e['messages_restored']);
      }
      if (e['event_type'] !== 'retention') continue;
      const targets = e['targets'] as string[];
      if (e['store'] === 'sessions') for (const t of targets) out.sessions.set(t, (out.sessions.get(t) ?? 0) + 1);
      if (e['store'] === 'records' && e['reason'] === 'max_messages') {
        for (const t of targets) out.dropped.set(t, (out.dropped.get(t) ?? 0) + Number(e['messages_dropped']));
      }
    }
  }
  return out;
}
