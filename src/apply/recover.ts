// Completion of audit trails left by a murmur-gc run that was killed mid-sweep.
// Guarantees: an audit session whose `intent.jsonl` is still present gets the retention lines of
// every intended action that demonstrably happened (marked done, or whose target no longer
// exists) and a `session_end` with exit_status "canceled" and the time it ran until its last
// intent write (never 0 ms); the intent log is then removed. It runs
// under the sweep lock, so the session it completes is never one still being written.
import { Codes } from '../errors.js';
import { idTimestampMs, mintId } from '../murmur/ids.js';
import { peekEventType, retentionLine, sessionEndLine } from '../murmur/trace.js';
import { Dir, lstatPath, readSmallFile } from '../io/safe-fs.js';
import { GC_DIR, INTENT_FILE, WHERE_FILE, groupRetention, parseIntentLog, whereText, type RetentionItem } from './audit.js';

export interface Recovered {
  target: string;
  detail: string;
}

export async function recoverInterruptedAudits(home: Dir, homePath: string, nowMs: number): Promise<Recovered[]> {
  const out: Recovered[] = [];
  const gst = await home.lstat(GC_DIR);
  if (!gst?.isDirectory()) return out;
  const gc = await home.openDir(GC_DIR);
  try {
    for (const name of await gc.list()) {
      if (!name.startsWith('ses_')) continue;
      const st = await gc.lstat(name);
      if (!st?.isDirectory()) continue;
      const sdir = await gc.openDir(name);
      try {
        const ist = await sdir.lstat(INTENT_FILE);
        if (!ist?.isFile()) continue;
        const log = parseIntentLog((await readSmallFile(sdir, INTENT_FILE, 64 << 20)).toString('utf8'));
        const items: RetentionItem[] = [];
        for (const [seq, intent] of log.intents) {
          if (!intent.store || !intent.reason || !intent.target) continue;
          const done = log.done.get(seq);
          let happened = done !== undefined;
          if (!happened && intent.kind !== 'truncate_record' && intent.parent) {
            happened = (await lstatPath(`${intent.parent}/${intent.target}`)) === undefined;
          }
          if (!happened) continue;
          if (intent.kind === 'truncate_record' && !(done?.messages_dropped && done.messages_dropped > 0)) continue;
          items.push({
            store: intent.store,
            reason: intent.reason,
            target: intent.target,
            ...(intent.parent ? { parent: intent.parent } : {}),
            ...(done?.messages_dropped !== undefined ? { messagesDropped: done.messages_dropped } : {}),
          });
        }
        const trace = (await readSmallFile(sdir, 'trace.jsonl', 64 << 20)).toString('utf8');
        const first = trace.split('\n')[0] ?? '';
        let startId: string | null = null;
        try {
          const o = JSON.parse(first) as { event_type?: unknown; event_id?: unknown };
          if (o.event_type === 'session_start' && typeof o.event_id === 'string') startId = o.event_id;
        } catch {
          startId = null;
        }
        const hasEnd = trace.split('\n').some((l) => peekEventType(Buffer.from(l.slice(0, 64))) === 'session_end');
        if (!hasEnd) {
          let text = trace.length > 0 && !trace.endsWith('\n') ? '\n' : '';
          const common = () => ({ eventId: mintId('evt_'), parentId: startId, sessionId: name, timestamp: nowMs });
          for (const g of groupRetention(items)) {
            text += retentionLine(common(), g.store, g.reason, g.targets, g.reason === 'max_messages' ? g.messagesDropped : undefined);
          }
          // Killed mid-way: it ran until its last intent-log write, and it was interrupted.
          const startedMs = idTimestampMs(name, 'ses_');
          const ranMs = startedMs === undefined ? 0 : Math.max(0, Math.floor(Number(ist.mtimeMs)) - startedMs);
          text += sessionEndLine(common(), ranMs, 'canceled');
          const where = whereText(items);
          if (where !== undefined) await sdir.writeFileAtomic(WHERE_FILE, where, 0o600, { durable: false }).catch(() => undefined);
          const { fh } = await sdir.openAppend('trace.jsonl');
          try {
            await fh.write(text);
            await fh.sync();
          } finally {
            await fh.close();
          }
        }
        await sdir.unlink(INTENT_FILE);
        out.push({
          target: `${homePath}/${GC_DIR}/${name}`,
          detail: `a murmur-gc run (${name}) was interrupted; its audit trace was completed with ${items.length} action(s) that had happened (${Codes.processInterrupted})`,
        });
      } finally {
        await sdir.close();
      }
    }
  } finally {
    await gc.close();
  }
  return out;
}
