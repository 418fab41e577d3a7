// Has a logged restore landed? Read-only checks against the disk, shared by the completion of
// a killed restore (src/gchome/audit-recovery.ts) and `quarantine ls` / `status`, which list what
// is held (src/gchome/held-listing.ts).
// Guarantees: opens, reads and compares only (descriptor-relative, never following links);
// anything unreadable or missing counts as "not landed"; it takes no lock and writes nothing, so
// a read-only command that lists held items loads no writer.
import { basename, dirname } from 'node:path';
import { ITEM_FILE, parseItemDirName, parseMeta } from './quarantine-layout.js';
import { openHeldLines, openQuarantineDir } from './quarantine-store.js';
import { firstLineEnd } from '../runtime/record-truncate.js';
import { Dir, readSmallFile, type FileHandle } from '../fsx/safe-fs.js';
import { GC_DIR, INTENT_FILE, parseIntentLog, type IntentLine } from './audit.js';

/** Are bytes [aFrom, aFrom+len) of `a` those of [bFrom, bFrom+len) of `b`? (streamed) */
async function sameBytes(a: FileHandle, aFrom: number, b: FileHandle, bFrom: number, len: number): Promise<boolean> {
  const x = Buffer.allocUnsafe(1 << 20);
  const y = Buffer.allocUnsafe(1 << 20);
  for (let off = 0; off < len;) {
    const n = Math.min(x.length, len - off);
    const r1 = (await a.read(x, 0, n, aFrom + off)).bytesRead;
    const r2 = (await b.read(y, 0, n, bFrom + off)).bytesRead;
    if (r1 !== n || r2 !== n || !x.subarray(0, n).equals(y.subarray(0, n))) return false;
    off += n;
  }
  return true;
}

type RestoreIntent = NonNullable<IntentLine['restore']>;

/**
 * Did a logged restore of dropped lines land? The record's first line is the restored header the
 * intent names and the held lines of every item, in order, follow it byte for byte. (Before the
 * rewrite the header carries the newest held truncation's marker, which the restored one never
 * does.) Anything unreadable or missing: no.
 */
export async function restoreLanded(q: Dir, r: RestoreIntent): Promise<boolean> {
  if (typeof r.header !== 'string' || !Array.isArray(r.entries)) return false;
  let dir: Dir | undefined;
  const open: FileHandle[] = [];
  try {
    dir = await Dir.open(dirname(r.to));
    const { fh, stat } = await dir.openFile(basename(r.to));
    open.push(fh);
    const size = Number(stat.size);
    const end = await firstLineEnd(fh, size);
    const want = Buffer.from(r.header);
    if (end !== want.length) return false;
    const head = Buffer.alloc(end);
    await fh.read(head, 0, end, 0);
    if (!head.equals(want)) return false;
    let pos = end;
    for (const entry of r.entries) {
      if (!parseItemDirName(entry)) return false;
      await using item = await q.openDir(entry);
      const meta = parseMeta((await readSmallFile(item, ITEM_FILE, 64 * 1024)).toString('utf8'));
      if (meta?.kind !== 'truncation') return false;
      const held = await openHeldLines(item, meta);
      open.push(held.fh);
      const len = held.to - held.from;
      if (pos + len > size || !(await sameBytes(held.fh, held.from, fh, pos, len))) return false;
      pos += len;
    }
    return true;
  } catch {
    return false;
  } finally {
    for (const fh of open) await fh.close().catch(() => undefined);
    await dir?.close();
  }
}

/**
 * Held items (entry names in `<home>/gc/quarantine`) whose restore already happened but is not
 * completed yet (killed, or its item's removal failed): read-only, for `quarantine ls`. A restore
 * logged done, or one of dropped lines whose rewrite the record shows landed.
 */
export async function restoredPendingEntries(home: Dir): Promise<Set<string>> {
  const out = new Set<string>();
  const gst = await home.lstat(GC_DIR);
  if (!gst?.isDirectory()) return out;
  const gc = await home.openDir(GC_DIR);
  let q: Dir | undefined;
  try {
    for (const name of await gc.list()) {
      if (!name.startsWith('ses_')) continue;
      await using sdir = await gc.openDir(name).catch(() => undefined);
      if (!sdir) continue;
      try {
        if (!(await sdir.lstat(INTENT_FILE))?.isFile()) continue;
        const log = parseIntentLog((await readSmallFile(sdir, INTENT_FILE, 64 << 20)).toString('utf8'));
        for (const [seq, intent] of log.intents) {
          const r = intent.restore;
          if (
            !intent.kind?.startsWith('restore_') ||
            intent.kind === 'restore_session' ||
            !r ||
            !Array.isArray(r.entries)
          )
            continue;
          q ??= await openQuarantineDir(home, false);
          if (!q) return out;
          if (log.done.get(seq) !== undefined || (intent.kind === 'restore_truncation' && (await restoreLanded(q, r))))
            for (const e of r.entries) out.add(e);
        }
      } catch {
        // unreadable: nothing known about it
      }
    }
  } finally {
    await q?.close();
    await gc.close();
  }
  return out;
}
