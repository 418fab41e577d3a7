// `murmur-gc quarantine ls` and `murmur-gc restore TARGET`: the operator's side of the undo window
// (layout: src/murmur/quarantine.ts; the moves: src/io/quarantine.ts).
// Guarantees:
// - `ls` is read-only: held sessions of the configured sessions roots and the items of
//   `<home>/gc/quarantine`, with where each came from, when it goes and its bytes (allocated
//   bytes, as `du` counts them, walked descriptor-relatively without following links or crossing mounts).
// - `restore` runs under the sweep lock (so no sweep purges or holds meanwhile; busy → exit 75).
//   It puts an item back only where nothing of that name exists now (else `restore_exists`,
//   nothing changed), through descriptors, never replacing anything. A `ses_` id is a session;
//   anything else a context id. A context held whole goes back into its record store (created
//   0700 when it is gone); the lines a truncation dropped go back in front of the record's
//   current lines with the staged rewrite truncation uses (lines appended since stay after them;
//   under the record's lock), the header's `dropped` decreased by the messages put back, the
//   `truncated` marker removed when it reaches 0 — only when the record still carries the marker
//   of the newest held truncation (else `restore_conflict`: it was truncated again since, and
//   putting lines back would leave a gap). Each restore writes a murmur-gc audit trace
//   (`quarantine_restore` line; `history --target` shows it). `--dry-run` runs the same checks
//   and changes nothing.
// - What a restore put back is put on the protection list before the sweep lock is released (no
//   sweep acts on it until `murmur-gc release`), with its own audit trace, and judged by the
//   current policy (src/apply/protect.ts).
import type { FileHandle } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { GcConfig } from '../config/types.js';
import { BusyError, Codes, GcError, RefusalError, describeError } from '../errors.js';
import { CONVERSATIONS_DIR, RECORD_FILE } from '../io/inventory.js';
import { acquireLock, ensureLockDir, recordLockPath, sweepLockPath, type HeldLock } from '../io/lock.js';
import { listQuarantineDir, listRootHeld, openQuarantineDir, purgeEntry, type QueueItem, type RootHeld } from '../io/quarantine.js';
import { RECORD_FILE_MODE, firstLineEnd } from '../io/record-truncate.js';
import { Dir, lstatPath } from '../io/safe-fs.js';
import { stagedRewrite } from '../io/staged-rewrite.js';
import type { Logger } from '../log.js';
import { isSessionName, mintId } from '../murmur/ids.js';
import { CONTEXT_PAYLOAD, DROPPED_PAYLOAD, oldestFirst, restoredMarker, type HeldItem } from '../murmur/quarantine.js';
import { parseHeaderLine, serializeHeader, type RecordHeader } from '../murmur/record.js';
import { VERSION } from '../version.js';
import { AuditSession, GC_DIR } from './audit.js';
import { protectRestored, type ProtectOutcome } from './protect.js';

export const RestoreCodes = {
  /** nothing of that id is held */
  notHeld: 'restore_not_held',
  /** something of that name exists now */
  exists: 'restore_exists',
  /** held under more than one sessions root or record store */
  ambiguous: 'restore_ambiguous',
  /** the record was truncated again since (or is gone): the held lines cannot go back in order */
  conflict: 'restore_conflict',
} as const;

export interface HeldListing {
  home: string;
  items: (HeldItem & { path: string; incomplete?: boolean })[];
  totals: { items: number; bytes: number };
  problems: { target: string; code: string; detail: string }[];
}

async function openAnchor(path: string, followFinal: boolean): Promise<Dir | undefined> {
  if (!(await lstatPath(path))) return undefined;
  try {
    return await Dir.open(path, { followFinal });
  } catch {
    return undefined;
  }
}

/** Every held item (sessions in the configured roots, contexts and dropped lines in the home). */
export async function listHeld(config: GcConfig, measure = true): Promise<HeldListing> {
  const out: HeldListing = { home: config.home, items: [], totals: { items: 0, bytes: 0 }, problems: [] };
  const roots = [...new Set(config.sessions.map((s) => s.root))];
  for (const r of roots) {
    const d = await openAnchor(r, false);
    if (!d) continue;
    try {
      for (const h of await listRootHeld(d, measure)) out.items.push({ ...strip(h), path: d.display(h.entry) });
    } catch (err) {
      out.problems.push({ target: r, code: Codes.ioError, detail: `${r}: ${describeError(err)}` });
    } finally {
      await d.close();
    }
  }
  const home = await openAnchor(config.home, true);
  if (home) {
    try {
      const q = await openQuarantineDir(home, false);
      if (q) {
        try {
          const l = await listQuarantineDir(q, measure);
          out.problems.push(...l.problems);
          for (const i of l.items) {
            if (i.meta?.state === 'staged') continue; // its truncation never committed (or is committing)
            if (i.unreadable !== undefined) {
              // No sidecar: nothing to restore; the sweep purges it by the window in its name.
              if (!i.sidecarTempsOnly) out.problems.push({ target: q.display(i.entry), code: Codes.quarantineItemUnreadable, detail: `${q.display(i.entry)}: ${i.unreadable}; a sweep deletes it for good after ${new Date(i.untilMs).toISOString()}` });
              continue;
            }
            out.items.push({ ...strip(i), path: q.display(i.entry), ...(i.incomplete ? { incomplete: true } : {}) });
          }
        } finally {
          await q.close();
        }
      }
    } catch (err) {
      out.problems.push({ target: `${config.home}/gc/quarantine`, code: err instanceof GcError ? err.code : Codes.ioError, detail: describeError(err) });
    } finally {
      await home.close();
    }
  }
  out.items = oldestFirst(out.items);
  out.totals = { items: out.items.length, bytes: out.items.reduce((n, i) => n + i.bytes, 0) };
  return out;
}

function strip(i: HeldItem & Partial<Pick<QueueItem, 'identity' | 'meta' | 'incomplete'>> & Partial<Pick<RootHeld, 'uid'>>): HeldItem {
  const { kind, target, origin, untilMs, removedMs, bytes, parent, entry } = i;
  return { kind, target, origin, untilMs, removedMs, bytes, parent, entry, ...(i.reason ? { reason: i.reason } : {}), ...(i.messages !== undefined ? { messages: i.messages } : {}) };
}

// ---- restore ------------------------------------------------------------------------------------

export interface RestoreOptions {
  target: string;
  /** record store, when a context id is held from more than one */
  record?: string;
  /** sessions root, when a session id is held in more than one */
  root?: string;
  dryRun: boolean;
}

export interface RestoreResult {
  target: string;
  dry_run: boolean;
  /** what was (or would be) put back, in order */
  restored: { held: 'session' | 'context' | 'truncation'; from: string; to: string; messages?: number }[];
  /** the audit trace of this restore, null in a dry run */
  audit: string | null;
  /** what was put back is protected from every sweep (src/apply/protect.ts); absent in a dry run */
  protection?: ProtectOutcome;
  /** why it could not be protected (the list is unreadable: every sweep then keeps everything) */
  protection_error?: { code: string; message: string };
}

/** After a restore: protect what came back, and judge it by the current policy. */
async function withProtection(config: GcConfig, home: Dir, log: Logger, r: RestoreResult, now: () => number): Promise<RestoreResult> {
  try {
    const p = await protectRestored(config, home, log, r, now);
    return p ? { ...r, protection: p } : r;
  } catch (err) {
    if (!(err instanceof GcError)) throw err;
    log.warn({ code: err.code, target: r.target }, `restored but not protected: ${err.message}`);
    return { ...r, protection_error: { code: err.code, message: err.message } };
  }
}

function refuse(code: string, message: string, hint: string): RefusalError {
  return new RefusalError(code, message, hint);
}

async function withSweepLock<T>(config: GcConfig, dryRun: boolean, fn: () => Promise<T>): Promise<T> {
  if (dryRun) return fn();
  const lock = await acquireLock(sweepLockPath(config.home), { waitMs: 3000 });
  if (!lock) throw new BusyError(`a murmur-gc sweep holds ${sweepLockPath(config.home)}; try again when it has finished`);
  try {
    return await fn();
  } finally {
    await lock.release();
  }
}

export async function restoreTarget(config: GcConfig, log: Logger, opts: RestoreOptions, now: () => number = Date.now): Promise<RestoreResult> {
  const home = await openAnchor(config.home, true);
  if (!home && !isSessionName(opts.target)) throw refuse(RestoreCodes.notHeld, `nothing named '${opts.target}' is held: there is no murmur home at ${config.home}`, 'murmur-gc quarantine ls lists what the undo window holds');
  try {
    if (!home) {
      // A session may be held in a configured root even without a home; the audit trail needs one.
      throw refuse(RestoreCodes.notHeld, `there is no murmur home at ${config.home} to keep the audit trail of a restore`, 'run murmur-gc once the runtime has created its home');
    }
    if (!opts.dryRun) {
      const gc = await home.mkdir(GC_DIR, 0o700);
      await gc.close();
    }
    return await withSweepLock(config, opts.dryRun, async () => {
      const r = await (isSessionName(opts.target) ? restoreSession(config, home, log, opts, now) : restoreContext(config, home, log, opts, now));
      return opts.dryRun ? r : withProtection(config, home, log, r, now);
    });
  } finally {
    await home?.close();
  }
}

async function audited(home: Dir, now: () => number, restored: Parameters<AuditSession['finish']>[4]): Promise<string> {
  const id = mintId('ses_');
  const a = await AuditSession.begin(home, id, VERSION, now());
  await a.finish([], [], 'ok', now(), restored);
  return id;
}

async function restoreSession(config: GcConfig, home: Dir, log: Logger, opts: RestoreOptions, now: () => number): Promise<RestoreResult> {
  const wanted = opts.root === undefined ? undefined : resolve(opts.root);
  const roots = [...new Set(config.sessions.map((s) => s.root))].filter((r) => wanted === undefined || resolve(r) === wanted);
  const found: { root: string; h: RootHeld }[] = [];
  for (const r of roots) {
    const d = await openAnchor(r, false);
    if (!d) continue;
    try {
      for (const h of await listRootHeld(d, false)) if (h.target === opts.target) found.push({ root: r, h });
    } finally {
      await d.close();
    }
  }
  if (found.length === 0) {
    throw refuse(RestoreCodes.notHeld, `session ${opts.target} is not held in ${opts.root ?? 'any configured sessions root'}`, 'murmur-gc quarantine ls lists what the undo window holds; an item whose window passed is gone for good');
  }
  const roots2 = [...new Set(found.map((f) => f.root))];
  if (roots2.length > 1) {
    throw refuse(RestoreCodes.ambiguous, `session ${opts.target} is held in ${roots2.length} sessions roots: ${roots2.join(', ')}`, `pass --root <DIR> to say which one, e.g. --root ${roots2[0]}`);
  }
  // Held more than once in one root (removed, restored, removed again): the newest hold.
  const { root, h } = found.sort((a, b) => b.h.untilMs - a.h.untilMs)[0]!;
  const d = await Dir.open(root);
  try {
    if (await d.lstat(opts.target)) {
      throw refuse(RestoreCodes.exists, `${d.display(opts.target)} exists now; the held session was not put back`, `move it away first if the held one should take its place (the held one is ${d.display(h.entry)})`);
    }
    const step = { held: 'session' as const, from: d.display(h.entry), to: d.display(opts.target) };
    if (opts.dryRun) return { target: opts.target, dry_run: true, restored: [step], audit: null };
    const st = await d.lstat(h.entry);
    if (!st?.isDirectory()) throw new GcError(Codes.changedSinceScan, `${d.display(h.entry)} changed while it was being restored`);
    await d.openDir(h.entry, h.identity).then((x) => x.close());
    await d.rename(h.entry, opts.target);
    await d.sync().catch(() => undefined);
    log.info({ target: opts.target, root }, 'session restored from the quarantine');
    const audit = await audited(home, now, { restored: [{ store: 'sessions', held: 'session', target: opts.target, origin: root }] });
    return { target: opts.target, dry_run: false, restored: [step], audit };
  } finally {
    await d.close();
  }
}

async function restoreContext(config: GcConfig, home: Dir, log: Logger, opts: RestoreOptions, now: () => number): Promise<RestoreResult> {
  const q = await openQuarantineDir(home, false);
  if (!q) throw refuse(RestoreCodes.notHeld, `context '${opts.target}' is not held (the quarantine is empty)`, 'murmur-gc quarantine ls lists what the undo window holds');
  try {
    const listed = await listQuarantineDir(q, false);
    let mine = listed.items.filter((i) => !i.incomplete && i.meta?.context === opts.target && i.meta.state !== 'staged' && (opts.record === undefined || i.meta.store === opts.record));
    const stores = [...new Set(mine.map((i) => i.meta!.store))].sort();
    if (mine.length === 0) {
      throw refuse(
        RestoreCodes.notHeld,
        `context '${opts.target}' is not held${opts.record !== undefined ? ` from record store '${opts.record}'` : ''}`,
        'murmur-gc quarantine ls lists what the undo window holds; an item whose window passed is gone for good',
      );
    }
    if (stores.length > 1) throw refuse(RestoreCodes.ambiguous, `context '${opts.target}' is held from ${stores.length} record stores: ${stores.join(', ')}`, `pass --record <NAME> to say which one, e.g. --record ${stores[0]}`);
    const store = stores[0]!;
    mine = mine.sort((a, b) => (a.meta!.removed_ms - b.meta!.removed_ms) || (a.entry < b.entry ? -1 : 1));
    const contexts = mine.filter((i) => i.kind === 'context');
    const truncations = mine.filter((i) => i.kind === 'truncation');
    const result: RestoreResult = { target: opts.target, dry_run: opts.dryRun, restored: [], audit: null };
    const restored: NonNullable<Parameters<AuditSession['finish']>[4]>['restored'] = [];
    const conv = opts.dryRun ? await home.openDir(CONVERSATIONS_DIR).catch(() => undefined) : await home.mkdir(CONVERSATIONS_DIR, 0o700);
    const storeExists = conv ? (await conv.lstat(store)) !== undefined : false;
    await conv?.close();

    // 1. The context directory (the newest hold), when one is held.
    const ctxItem = contexts[contexts.length - 1];
    let storeDir: Dir | undefined;
    try {
      if (storeExists || (ctxItem && !opts.dryRun)) {
        const c = await home.openDir(CONVERSATIONS_DIR);
        try {
          storeDir = opts.dryRun ? await c.openDir(store) : await c.mkdir(store, 0o700);
        } finally {
          await c.close();
        }
      }
      if (ctxItem) {
        if (storeDir && (await storeDir.lstat(opts.target))) {
          throw refuse(RestoreCodes.exists, `${storeDir.display(opts.target)} exists now; the held context was not put back`, `move it away (murmur-gc conversation rm ${opts.target} --record ${store}) if the held one should take its place`);
        }
        const to = `${config.home}/${CONVERSATIONS_DIR}/${store}/${opts.target}`;
        result.restored.push({ held: 'context', from: `${q.display(ctxItem.entry)}/${CONTEXT_PAYLOAD}`, to });
        if (!opts.dryRun && storeDir) {
          const item = await q.openDir(ctxItem.entry, ctxItem.identity);
          try {
            await item.openDir(CONTEXT_PAYLOAD).then((x) => x.close());
            await item.renameInto(CONTEXT_PAYLOAD, storeDir, opts.target);
            await storeDir.sync().catch(() => undefined);
          } finally {
            await item.close();
          }
          await purgeEntry(q, ctxItem.entry, ctxItem.identity, mintId('ses_')).catch((err: unknown) => log.warn({ code: Codes.ioError, path: q.display(ctxItem.entry), err: describeError(err) }, 'the emptied quarantine item was not removed'));
          restored.push({ store: 'records', held: 'context', target: opts.target, origin: store });
        }
      }

      // 2. Dropped lines, oldest truncation first, in front of what the record holds now.
      const pending = ctxItem ? truncations.filter((t) => t.meta!.removed_ms <= ctxItem.meta!.removed_ms) : truncations;
      if (pending.length > 0) {
        const messages = await restoreTruncations(config, home, q, storeDir, store, opts, pending, log, ctxItem !== undefined);
        result.restored.push({ held: 'truncation', from: pending.map((p) => `${q.display(p.entry)}/${DROPPED_PAYLOAD}`).join(', '), to: `${config.home}/${CONVERSATIONS_DIR}/${store}/${opts.target}/${RECORD_FILE}`, messages });
        if (!opts.dryRun) restored.push({ store: 'records', held: 'truncation', target: opts.target, origin: store, messagesRestored: messages });
      }
    } finally {
      await storeDir?.close();
    }
    if (!opts.dryRun && restored.length > 0) result.audit = await audited(home, now, { restored });
    return result;
  } finally {
    await q.close();
  }
}

/** Put the held dropped lines of `items` (oldest first) back in front of the record. Returns messages restored. */
async function restoreTruncations(
  config: GcConfig,
  home: Dir,
  q: Dir,
  storeDir: Dir | undefined,
  store: string,
  opts: RestoreOptions,
  items: QueueItem[],
  log: Logger,
  ctxRestoredFirst: boolean,
): Promise<number> {
  const newest = items[items.length - 1]!.meta!;
  const oldest = items[0]!.meta!;
  const messages = items.reduce((n, i) => n + (i.meta!.messages ?? 0), 0);
  const ctxDir = storeDir ? await storeDir.openDir(opts.target).catch(() => undefined) : undefined;
  if (!ctxDir && !(opts.dryRun && ctxRestoredFirst)) {
    throw refuse(RestoreCodes.conflict, `${config.home}/${CONVERSATIONS_DIR}/${store}/${opts.target} does not exist: there is no record to put the held lines back into`, 'murmur-gc quarantine ls shows what is held; the lines go when their window passes');
  }
  if (!ctxDir) return messages; // dry run: the context is restored first, and it carries the marker
  let lock: HeldLock | undefined;
  const opened: FileHandle[] = [];
  try {
    const check = (h: RecordHeader | undefined) => {
      if (h?.truncated?.at_ms.toString() !== newest.at_ms) {
        throw refuse(
          RestoreCodes.conflict,
          `${ctxDir.display(RECORD_FILE)} was truncated again since its lines were held (its header does not carry the truncation of ${new Date(Number(newest.at_ms)).toISOString()}); putting them back would leave a gap`,
          'the held lines stay in the quarantine until their window passes (murmur-gc quarantine ls)',
        );
      }
    };
    if (opts.dryRun) {
      const st = await ctxDir.lstat(RECORD_FILE);
      if (!st) check(undefined);
      const { fh } = await ctxDir.openFile(RECORD_FILE);
      try {
        const end = await firstLineEnd(fh, Number((await fh.stat()).size));
        const head = Buffer.alloc(end);
        await fh.read(head, 0, end, 0);
        check(parseHeaderLine(head.subarray(0, head.length && head[head.length - 1] === 10 ? head.length - 1 : head.length)));
      } finally {
        await fh.close();
      }
      return messages;
    }
    await ensureLockDir(home, [encodeURIComponent(store)]);
    lock = await acquireLock(recordLockPath(config.home, store, opts.target), { waitMs: 3000 });
    if (!lock) throw new BusyError(`${ctxDir.display(RECORD_FILE)} is locked by another murmur-gc; try again when it has finished`);
    const inserts: { fh: FileHandle; from: number; to: number }[] = [];
    for (const it of items) {
      const item = await q.openDir(it.entry, it.identity);
      try {
        const { fh, stat } = await item.openFile(DROPPED_PAYLOAD);
        opened.push(fh);
        inserts.push({ fh, from: 0, to: Number(stat.size) });
      } finally {
        await item.close();
      }
    }
    const rw = await stagedRewrite({
      dir: ctxDir,
      name: RECORD_FILE,
      mode: RECORD_FILE_MODE,
      signal: lock.signal,
      stage: async (src, size) => {
        const end = await firstLineEnd(src, size);
        const head = Buffer.alloc(end);
        await src.read(head, 0, end, 0);
        const current = parseHeaderLine(head.subarray(0, end > 0 && head[end - 1] === 10 ? end - 1 : end));
        check(current);
        const h = current!;
        const marker = restoredMarker(h.truncated, messages, oldest.prior ?? null);
        const next: RecordHeader = { type: h.type, capsule: h.capsule, created_ms: h.created_ms, ...(marker ? { truncated: marker } : {}) };
        return { prefix: Buffer.from(serializeHeader(next)), insert: inserts, copyFrom: end };
      },
    });
    if (!rw) throw new GcError(Codes.ioError, `${ctxDir.display(RECORD_FILE)} was not rewritten`);
    for (const it of items) {
      await purgeEntry(q, it.entry, it.identity, mintId('ses_')).catch((err: unknown) => log.warn({ code: Codes.ioError, path: q.display(it.entry), err: describeError(err) }, 'the restored quarantine item was not removed'));
    }
    log.info({ target: opts.target, record: store, messages }, 'dropped lines restored from the quarantine');
    return messages;
  } finally {
    for (const fh of opened) await fh.close().catch(() => undefined);
    await lock?.release();
    await ctxDir.close();
  }
}
