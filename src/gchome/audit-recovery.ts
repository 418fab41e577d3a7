// Completion of audit trails left by a murmur-gc run that was killed mid-sweep.
// Guarantees:
// - Every logged intent is settled against the disk (a purge of a held item: its entry is gone,
//   and it gets its `quarantine_purge` line): marked done; or, for a removal, its target
//   no longer exists; or, for a truncation, the record's header carries the truncation marker the
//   intent named (`at_ms`) — the rename happened, and the messages it dropped are the marker's
//   cumulative count minus the count before. Each that happened gets its retention line; the
//   report says how many were settled either way.
// - A trace is never written without its session_start: an audit whose trace is missing, empty
//   or does not open with a complete session_start is rewritten whole (atomically: session_start,
//   retention lines, session_end); otherwise retention lines and a `session_end` are appended.
// - The session_end says "canceled" (it was interrupted) and the time it ran until its last intent
//   write (never 0 ms). The intent log is removed last, so a crash here is retried.
// - A restore (intents `restore_session|restore_context|restore_truncation`) is completed exactly
//   once: it happened when its intent is marked done, or — killed before that — when the disk
//   shows it: the held entry is gone and the session or context is back; for dropped lines, the
//   record's first line is the restored header the intent names and the bytes after it are the
//   held lines. Then what is left of its held items (and of their trash, if killed removing one)
//   is removed and the trace gets its
//   `quarantine_restore` line; otherwise the items stay held, whole, and the trace says nothing
//   was restored. The killed restore's temp files in the record's directory are removed.
// - It runs under the sweep lock, so no sweep's session it completes is still being written; an
//   audit whose intent log names a live owner other than this process (a `conversation rm` or
//   `truncate` in progress) is left alone. Manual actions keep their `trigger` when completed.
import { basename, dirname } from 'node:path';
import { Codes, errnoCode } from '../errors.js';
import { idTimestampMs, mintId } from '../runtime/ids.js';
import { CONTEXT_PAYLOAD, parseItemDirName } from './quarantine-layout.js';
import {
  peekEventType,
  quarantinePurgeLine,
  quarantineRestoreLine,
  retentionLine,
  sessionEndLine,
  sessionStartLine,
} from '../runtime/trace.js';
import { RECORD_FILE, TRASH_PREFIX, readHeader } from '../runtime/inventory.js';
import { finishTrash } from '../fsx/remove.js';
import { openQuarantineDir, purgeEntry } from './quarantine-store.js';
import { probeProcess } from '../runtime/running.js';
import { Dir, identityOf, lstatPath, readSmallFile } from '../fsx/safe-fs.js';
import { parseTempName } from '../runtime/staged-rewrite.js';
import { VERSION } from '../version.js';
import {
  GC_DIR,
  INTENT_FILE,
  WHERE_FILE,
  groupPurges,
  groupRetention,
  parseIntentLog,
  whereText,
  type IntentLine,
  type PurgedItem,
  type RestoredItem,
  type RetentionItem,
} from './audit.js';
import { removeDeadAuditTemps } from './leftovers.js';
import { restoreLanded } from './restore-landed.js';
import { definedOnly } from '../defined.js';

export interface Recovered {
  target: string;
  detail: string;
  /** what the interrupted run had restored (its `quarantine_restore` lines): to be protected */
  restored: RestoredItem[];
}

/** Did a logged truncation's rename happen? Read the record's header marker (messages dropped). */
export async function truncationLanded(intent: IntentLine): Promise<number | undefined> {
  if (!intent.parent || !intent.target || intent.at_ms === undefined) return undefined;
  let store: Dir | undefined;
  let ctx: Dir | undefined;
  try {
    store = await Dir.open(intent.parent);
    ctx = await store.openDir(intent.target);
    const h = await readHeader(ctx, RECORD_FILE);
    const m = h?.truncated;
    if (!m || typeof intent.at_ms !== 'string' || m.at_ms !== BigInt(intent.at_ms)) return undefined;
    const dropped = Number(m.dropped - BigInt(typeof intent.dropped_before === 'string' ? intent.dropped_before : '0'));
    return dropped > 0 ? dropped : undefined;
  } catch {
    return undefined; // gone or unreadable: nothing shows the rename happened
  } finally {
    await ctx?.close();
    await store?.close();
  }
}

/** The temps a dead restore left beside the record it rewrote (`.<record>.<pid>.<hex>.tmp`). */
async function removeDeadRecordTemps(recordPath: string): Promise<void> {
  let dir: Dir | undefined;
  try {
    dir = await Dir.open(dirname(recordPath));
    for (const name of await dir.list()) {
      const t = parseTempName(name, basename(recordPath));
      if (!t || t.pid === process.pid) continue;
      const st = await dir.lstat(name);
      if (!st?.isFile() || (await probeProcess(t.pid, undefined)) === 'alive') continue;
      await dir.unlink(name);
    }
  } catch {
    // best effort: the sweep's debris step removes what is left
  } finally {
    await dir?.close();
  }
}

/**
 * Settle one logged restore against the disk (see the module comment); its `quarantine_restore`
 * item when it happened (its held items then removed), else undefined (they stay held).
 */
async function settleRestore(home: Dir, intent: IntentLine, done: boolean): Promise<RestoredItem | undefined> {
  const r = intent.restore;
  if (!r || !intent.parent || !intent.target || typeof r.to !== 'string' || !Array.isArray(r.entries)) return undefined;
  const item: RestoredItem = {
    store: r.store,
    held: r.held,
    target: r.target,
    origin: r.origin,
    ...definedOnly({ messagesRestored: r.messagesRestored }),
  };
  if (intent.kind === 'restore_session') {
    const happened =
      done ||
      ((await lstatPath(`${intent.parent}/${intent.target}`)) === undefined && (await lstatPath(r.to)) !== undefined);
    return happened ? item : undefined;
  }
  await using q = await openQuarantineDir(home, false);
  if (!q) return done ? item : undefined;
  let happened = done;
  if (!happened && intent.kind === 'restore_context') {
    happened =
      (await lstatPath(`${q.path}/${intent.target}/${CONTEXT_PAYLOAD}`)) === undefined &&
      (await lstatPath(r.to)) !== undefined;
  }
  if (!happened && intent.kind === 'restore_truncation') happened = await restoreLanded(q, r);
  if (intent.kind === 'restore_truncation') await removeDeadRecordTemps(r.to);
  if (!happened) return undefined;
  const names = await q.list();
  for (const entry of r.entries) {
    if (!parseItemDirName(entry)) continue;
    const st = await q.lstat(entry);
    if (st?.isDirectory()) await purgeEntry(q, entry, identityOf(st), mintId('ses_'));
    // killed while removing it: its trash (`.murmur-gc-trash.<run>.<entry>`) is finished too
    for (const t of names.filter((n) => n.startsWith(TRASH_PREFIX) && n.endsWith(`.${entry}`))) {
      const tst = await q.lstat(t);
      if (tst?.isDirectory()) await finishTrash(q, t, identityOf(tst));
    }
  }
  return item;
}

export async function recoverInterruptedAudits(home: Dir, homePath: string, nowMs: number): Promise<Recovered[]> {
  const out: Recovered[] = [];
  const gst = await home.lstat(GC_DIR);
  if (!gst?.isDirectory()) return out;
  await using gc = await home.openDir(GC_DIR);
  for (const name of await gc.list()) {
    if (!name.startsWith('ses_')) continue;
    const st = await gc.lstat(name);
    if (!st?.isDirectory()) continue;
    await using sdir = await gc.openDir(name);
    const ist = await sdir.lstat(INTENT_FILE);
    if (!ist?.isFile()) continue;
    const log = parseIntentLog((await readSmallFile(sdir, INTENT_FILE, 64 << 20)).toString('utf8'));
    // Still being written by a live process (a `conversation rm|truncate` runs outside the
    // sweep lock): not interrupted, leave it alone.
    const owner = log.owner;
    if (
      owner?.pid !== undefined &&
      owner.pid !== process.pid &&
      (await probeProcess(owner.pid, owner.start_time ?? undefined)) === 'alive'
    )
      continue;
    const items: RetentionItem[] = [];
    const purged: PurgedItem[] = [];
    const restored: RestoredItem[] = [];
    let settled = 0;
    for (const [seq, intent] of log.intents) {
      if (intent.kind?.startsWith('restore_')) {
        settled++;
        const r = await settleRestore(home, intent, log.done.get(seq) !== undefined);
        if (r) restored.push(r);
        continue;
      }
      if (intent.kind === 'purge_quarantine') {
        // Happened when the held entry is gone from where it was (its trash, if any, is the
        // debris step's): its quarantine_purge line is written like the sweep would have.
        const p = intent.purge;
        if (!p || !intent.parent || !intent.target || typeof p.target !== 'string') continue;
        settled++;
        if (log.done.get(seq) === undefined && (await lstatPath(`${intent.parent}/${intent.target}`)) !== undefined)
          continue;
        purged.push({ store: p.store, reason: String(p.reason), target: p.target, held: String(p.held) });
        continue;
      }
      if (!intent.store || !intent.reason || !intent.target) continue;
      settled++;
      const done = log.done.get(seq);
      if (intent.kind === 'truncate_record') {
        const dropped = done ? done.messages_dropped : await truncationLanded(intent);
        if (!dropped || dropped <= 0) continue;
        items.push({
          store: intent.store,
          reason: intent.reason,
          target: intent.target,
          messagesDropped: dropped,
          ...(intent.parent ? { parent: intent.parent } : {}),
          ...(intent.trigger ? { trigger: intent.trigger } : {}),
        });
        continue;
      }
      let happened = done !== undefined;
      if (!happened && intent.parent) happened = (await lstatPath(`${intent.parent}/${intent.target}`)) === undefined;
      if (!happened) continue;
      items.push({
        store: intent.store,
        reason: intent.reason,
        target: intent.target,
        ...(intent.parent ? { parent: intent.parent } : {}),
        ...(intent.trigger ? { trigger: intent.trigger } : {}),
      });
    }
    let trace = '';
    try {
      trace = (await readSmallFile(sdir, 'trace.jsonl', 64 << 20)).toString('utf8');
    } catch (err) {
      if (errnoCode(err) !== 'ENOENT') throw err;
    }
    const nl = trace.indexOf('\n');
    let startId: string | null = null;
    if (nl > 0) {
      try {
        const o = JSON.parse(trace.slice(0, nl)) as {
          event_type?: unknown;
          event_id?: unknown;
          session_id?: unknown;
        };
        if (o.event_type === 'session_start' && typeof o.event_id === 'string' && o.session_id === name)
          startId = o.event_id;
      } catch {
        startId = null;
      }
    }
    const hasEnd =
      startId !== null && trace.split('\n').some((l) => peekEventType(Buffer.from(l.slice(0, 64))) === 'session_end');
    if (!hasEnd) {
      const fresh = startId === null;
      let text = fresh ? '' : trace.endsWith('\n') ? '' : '\n';
      const sessionEventId = startId ?? mintId('evt_');
      if (fresh)
        text += sessionStartLine({ eventId: sessionEventId, sessionId: name, timestamp: nowMs }, 'murmur-gc', VERSION);
      const common = () => ({
        eventId: mintId('evt_'),
        parentId: sessionEventId,
        sessionId: name,
        timestamp: nowMs,
      });
      for (const g of groupRetention(items)) {
        text += retentionLine(
          common(),
          g.store,
          g.reason,
          g.targets,
          g.reason === 'max_messages' ? g.messagesDropped : undefined,
          g.trigger,
        );
      }
      for (const g of groupPurges(purged)) text += quarantinePurgeLine(common(), g.store, g.reason, g.targets, g.kinds);
      for (const r of restored) text += quarantineRestoreLine(common(), r);
      // Killed mid-way: it ran until its last intent-log write, and it was interrupted.
      const startedMs = idTimestampMs(name, 'ses_');
      const ranMs = startedMs === undefined ? 0 : Math.max(0, Math.floor(Number(ist.mtimeMs)) - startedMs);
      text += sessionEndLine(common(), ranMs, 'canceled');
      const where = whereText(items);
      if (where !== undefined)
        await sdir.writeFileAtomic(WHERE_FILE, where, 0o600, { durable: false }).catch(() => undefined);
      if (fresh) {
        // No usable session_start: the trace is written whole, atomically.
        await sdir.writeFileAtomic('trace.jsonl', text, 0o600);
      } else {
        const { fh } = await sdir.openAppend('trace.jsonl');
        await using _ = fh;
        await fh.write(text);
        await fh.sync();
      }
    }
    await sdir.unlink(INTENT_FILE);
    // the killed run's own atomic-write temps in this audit (e.g. killed writing where.json)
    await removeDeadAuditTemps(sdir).catch(() => undefined);
    out.push({
      target: `${homePath}/${GC_DIR}/${name}`,
      detail: `a murmur-gc run (${name}) was interrupted; ${settled} logged action(s) settled against the disk, ${items.length + purged.length + restored.length} had happened and are now in its audit trace (${Codes.processInterrupted})`,
      restored,
    });
  }
  return out;
}
