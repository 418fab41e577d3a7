// `murmur-gc quarantine ls` and `murmur-gc restore TARGET`: the operator's side of the undo window
// (layout: src/gchome/quarantine-layout.ts; the moves: src/gchome/quarantine-store.ts).
// Guarantees:
// - `ls` is read-only: it shows what src/gchome/held-listing.ts reads.
// - `restore` runs under the sweep lock (so no sweep purges or holds meanwhile; busy → exit 75).
//   It puts back a held session only when murmur-gc's registry vouches for its hold
//   (src/gchome/registry.ts; anything else named like one is refused, `restore_not_held`), and an
//   item only where nothing of that name exists now (else `restore_exists`,
//   nothing changed), through descriptors, never replacing anything. A session id (`ses_` and at
//   least 12 hex digits) is a session; anything else a context id, and a refusal for a name that
//   starts with `ses_` but is no session id says it was taken for one. A context held whole goes
//   back into its record store (created 0700 when it is gone); the lines a truncation dropped go
//   back in front of the record's current lines with the staged rewrite truncation uses (lines
//   appended since stay after them; under the record's lock), the header's `dropped` decreased by
//   the messages put back, the `truncated` marker removed when it reaches 0. Only the chain of held
//   truncations ending at the marker the record carries now goes back (restoreChain,
//   src/gchome/quarantine-layout.ts; none: `restore_conflict` — it was truncated again since, and
//   putting lines back would leave a gap); an item outside it (its lines are back already) is never
//   put back again. A truncation whose run was killed before marking its item held is restorable as
//   soon as the record carries its marker. `--dry-run` runs the same checks and changes nothing.
// - Exactly once: each step is an intent in the restore's audit (logged durably before it runs,
//   marked done durably once its change landed, before its held item is removed); the audit ends
//   with one `quarantine_restore` line per step (`history --target` shows it). Killed or failing
//   at any point (a held item that cannot be removed fails the restore, exit 1), it is completed
//   by the next sweep's recover step or the next restore, which runs that recovery first
//   (src/gchome/audit-recovery.ts): lines back once and the item gone, or the item held whole and the
//   audit saying nothing was restored.
// - What a restore put back is put on the protection list before the sweep lock is released (no
//   sweep acts on it until `murmur-gc release`), with its own audit trace, and judged by the
//   current policy (src/commands/protect.ts).
import type { FileHandle } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { GcConfig } from '../config/types.js';
import { BusyError, Codes, GcError, RefusalError, describeError, withPath } from '../errors.js';
import { CONVERSATIONS_DIR, RECORD_FILE } from '../runtime/inventory.js';
import { acquireLock, ensureLockDir, recordLockPath, sweepLockPath, type HeldLock } from '../gchome/lock.js';
import {
  listQuarantineDir,
  listRootHeld,
  openHeldLines,
  openQuarantineDir,
  purgeEntry,
  type QueueItem,
  type RootHeld,
} from '../gchome/quarantine-store.js';
import { RECORD_FILE_MODE, firstLineEnd } from '../runtime/record-truncate.js';
import { Dir, type Identity } from '../fsx/safe-fs.js';
import { stagedRewrite } from '../runtime/staged-rewrite.js';
import type { Logger } from '../log.js';
import { isSessionName, mintId, notASessionId } from '../runtime/ids.js';
import {
  CONTEXT_PAYLOAD,
  payloadOf,
  restoreChain,
  restoredMarker,
  type ItemMeta,
} from '../gchome/quarantine-layout.js';
import { parseHeaderLine, serializeHeader, type RecordHeader } from '../runtime/record.js';
import { VERSION } from '../version.js';
import { failpoint } from '../failpoint.js';
import { AuditSession, GC_DIR, INTENT_FILE, type IntentLine, type RestoredItem } from '../gchome/audit.js';
import { removeDeadGcTemps } from '../gchome/leftovers.js';
import { BESIDE_DIR, listBeside, restoreBeside, type BesideHeld } from '../gchome/quarantine-beside.js';
import { protectRestored, type ProtectOutcome } from './protect.js';
import { protectRecovered } from '../gchome/protect-file.js';
import { recoverInterruptedAudits } from '../gchome/audit-recovery.js';
import { openAnchor } from '../fsx/dirs.js';
import { landedStaged, notOurHold } from '../gchome/held-listing.js';
import { Registry } from '../gchome/registry.js';

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
  restored: {
    held_kind: 'session' | 'context' | 'truncation' | 'child_workdir' | 'work_log';
    from: string;
    to: string;
    messages_restored?: number;
  }[];
  /** the audit trace of this restore, null in a dry run */
  audit: string | null;
  /** what was put back is protected from every sweep (src/commands/protect.ts); absent in a dry run */
  protection?: ProtectOutcome;
  /** why it could not be protected (the list is unreadable: every sweep then keeps everything) */
  protection_error?: { code: string; message: string };
}

/** After a restore: protect what came back, and judge it by the current policy. */
async function withProtection(
  config: GcConfig,
  home: Dir,
  log: Logger,
  r: RestoreResult,
  now: () => number,
): Promise<RestoreResult> {
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

/** A lock whose holder is dead (a killed restore or sweep) is taken at once; a live one is waited for (3 s). */
async function takeLock(path: string): Promise<HeldLock | undefined> {
  return (await acquireLock(path, { waitMs: 0 })) ?? (await acquireLock(path, { waitMs: 3000 }));
}

async function withSweepLock<T>(config: GcConfig, dryRun: boolean, fn: () => Promise<T>): Promise<T> {
  if (dryRun) return fn();
  const lock = await takeLock(sweepLockPath(config.home));
  if (!lock)
    throw new BusyError(`a murmur-gc sweep holds ${sweepLockPath(config.home)}; try again when it has finished`);
  try {
    return await fn();
  } finally {
    await lock.release();
  }
}

export async function restoreTarget(
  config: GcConfig,
  log: Logger,
  opts: RestoreOptions,
  now: () => number = Date.now,
): Promise<RestoreResult> {
  const home = await openAnchor(config.home, true);
  if (!home && !isSessionName(opts.target))
    throw refuse(
      RestoreCodes.notHeld,
      `nothing named '${opts.target}' is held: there is no murmur home at ${config.home}`,
      'murmur-gc quarantine ls lists what the undo window holds',
    );
  try {
    if (!home) {
      // A session may be held in a configured root even without a home; the audit trail needs one.
      throw refuse(
        RestoreCodes.notHeld,
        `there is no murmur home at ${config.home} to keep the audit trail of a restore`,
        'run murmur-gc once the runtime has created its home',
      );
    }
    if (!opts.dryRun) {
      const gc = await home.mkdir(GC_DIR, 0o700);
      await gc.close();
    }
    return await withSweepLock(config, opts.dryRun, async () => {
      if (!opts.dryRun) {
        // A restore (or sweep) killed or failed mid-way is completed first, as a sweep's recover
        // step would (src/sweep/steps/recover.ts): a retried restore then finds its lines back and
        // its held item gone.
        const recovered = await recoverInterruptedAudits(home, config.home, now());
        for (const r of recovered) log.warn({ code: Codes.processInterrupted, path: r.target }, r.detail);
        await protectRecovered(
          home,
          log,
          recovered.flatMap((r) => r.restored),
          now,
        );
        // and the small temps a killed run left under <home>/gc (e.g. an audit it was creating)
        for (const t of await removeDeadGcTemps(config.home).catch(() => []))
          log.warn(
            { code: Codes.processInterrupted, path: t.path, pid: t.pid },
            'leftover temp file of a killed murmur-gc removed',
          );
      }
      const r = await (isSessionName(opts.target)
        ? restoreSession(config, home, log, opts, now)
        : restoreContext(config, home, log, opts, now));
      return opts.dryRun ? r : withProtection(config, home, log, r, now);
    });
  } finally {
    await home?.close();
  }
}

/**
 * The audit of one restore, begun before its first change: every step is an intent (durably
 * logged before it runs, marked done durably once its change landed and before its held item is
 * removed), so a restore killed or failing at any point is completed by recovery — exactly once.
 */
class RestoreAudit {
  private session: AuditSession | undefined;
  readonly restored: RestoredItem[] = [];
  constructor(
    private readonly home: Dir,
    private readonly now: () => number,
  ) {}

  async intend(entry: Omit<IntentLine, 'op' | 'seq'>): Promise<number> {
    this.session ??= await AuditSession.begin(this.home, mintId('ses_'), VERSION, this.now());
    const s = this.session;
    return s.intend(entry).catch((err: unknown) => {
      throw withPath(err, `${s.dirPath}/${INTENT_FILE}`);
    });
  }

  async done(seq: number, item: RestoredItem): Promise<void> {
    await this.session!.done(seq, {}, true);
    this.restored.push(item);
    failpoint('restore:after_done');
  }

  async finish(): Promise<string | null> {
    if (!this.session) return null;
    failpoint('restore:before_audit');
    await this.session.finish([], [], 'ok', this.now(), { restored: this.restored });
    return this.session.sessionId;
  }

  /** A step failed: the intent log stays, and the next sweep (or restore) completes the audit. */
  async abandon(): Promise<void> {
    await this.session?.abandon().catch(() => undefined);
  }
}

/** Remove held items whose contents are back (their restore is logged done). */
async function removeRestored(parent: Dir, entries: { entry: string; identity: Identity }[]): Promise<void> {
  for (const e of entries) {
    try {
      failpoint('restore:remove_item');
      await purgeEntry(parent, e.entry, e.identity, mintId('ses_'));
    } catch (err) {
      throw new GcError(
        Codes.ioError,
        `${parent.display(e.entry)}: what it held is back, but the held item could not be removed (${describeError(err)}); the next sweep (or restore) removes it and completes the audit`,
        { cause: err },
      );
    }
  }
}

/**
 * What the audit trail says became of a target restore does not find held: deleted for good by
 * which sweep, and why (its window passed, or keep_free purged it for space); else where to look.
 */
async function notHeldHint(home: string, target: string): Promise<string> {
  const general = `murmur-gc quarantine ls lists what the undo window holds; murmur-gc history --target ${target} says what became of it`;
  try {
    const { readAuditHistory } = await import('./audit-read.js');
    const { findTarget } = await import('./history.js');
    const read = await readAuditHistory(home, { target });
    const purges = findTarget(read.sweeps, target).filter((m) => m.action === 'purged');
    const last = purges.at(-1);
    if (!last) return general;
    const why =
      last.reason === 'expired'
        ? 'its undo window had passed'
        : `purged for space (${last.reason}) before its window passed`;
    return `it was deleted for good by sweep ${last.sweep}: ${why} (murmur-gc history --target ${target} has the whole trail)`;
  } catch {
    return general;
  }
}

async function restoreSession(
  config: GcConfig,
  home: Dir,
  log: Logger,
  opts: RestoreOptions,
  now: () => number,
): Promise<RestoreResult> {
  const wanted = opts.root === undefined ? undefined : resolve(opts.root);
  const roots = [...new Set(config.sessions.map((s) => s.root))].filter(
    (r) => wanted === undefined || resolve(r) === wanted,
  );
  const found: { root: string; h: RootHeld }[] = [];
  // Only a hold murmur-gc's registry vouches for is put back (docs/design.md §4a).
  const registry = await Registry.load(home);
  const notOurs: string[] = [];
  for (const r of roots) {
    const d = await openAnchor(r, false);
    if (!d) continue;
    try {
      for (const h of await listRootHeld(d, false)) {
        if (h.target !== opts.target) continue;
        if (registry.vouch(h.entry, h)?.kind === 'hold') found.push({ root: r, h });
        else notOurs.push(d.display(h.entry));
      }
    } finally {
      await d.close();
    }
  }
  if (found.length === 0) {
    if (notOurs.length > 0)
      throw refuse(
        RestoreCodes.notHeld,
        `session ${opts.target} is not held by murmur-gc: ${notOurHold(notOurs[0]!)}`,
        'murmur-gc quarantine ls lists what the undo window holds',
      );
    throw refuse(
      RestoreCodes.notHeld,
      `session ${opts.target} is not held in ${opts.root ?? 'any configured sessions root'}`,
      await notHeldHint(config.home, opts.target),
    );
  }
  const roots2 = [...new Set(found.map((f) => f.root))];
  if (roots2.length > 1) {
    throw refuse(
      RestoreCodes.ambiguous,
      `session ${opts.target} is held in ${roots2.length} sessions roots: ${roots2.join(', ')}`,
      `pass --root <DIR> to say which one, e.g. --root ${roots2[0]}`,
    );
  }
  // Held more than once in one root (removed, restored, removed again): the newest hold.
  const { root, h } = found.sort((a, b) => b.h.untilMs - a.h.untilMs)[0]!;
  await using d = await Dir.open(root);
  if (await d.lstat(opts.target)) {
    throw refuse(
      RestoreCodes.exists,
      `${d.display(opts.target)} exists now; the held session was not put back`,
      `move it away first if the held one should take its place (the held one is ${d.display(h.entry)})`,
    );
  }
  const step = { held_kind: 'session' as const, from: d.display(h.entry), to: d.display(opts.target) };
  // What went with it from beside the root comes back with it, first (docs/design.md §9a).
  const besideStep = (b: BesideHeld) => ({
    held_kind: b.sub === 'children' ? ('child_workdir' as const) : ('work_log' as const),
    from: `${d.display(h.entry)}/${BESIDE_DIR}/${b.sub}/${b.name}`,
    to: b.to,
  });
  if (opts.dryRun) {
    const hd = await d.openDir(h.entry, h.identity);
    const beside = await listBeside(hd, root).finally(() => hd.close());
    return { target: opts.target, dry_run: true, restored: [...beside.map(besideStep), step], audit: null };
  }
  const st = await d.lstat(h.entry);
  if (!st?.isDirectory())
    throw new GcError(Codes.changedSinceScan, `${d.display(h.entry)} changed while it was being restored`);
  await d.openDir(h.entry, h.identity).then((x) => x.close());
  const audit = new RestoreAudit(home, now);
  const item: RestoredItem = { store: 'sessions', held: 'session', target: opts.target, origin: root };
  let besideBack: BesideHeld[];
  try {
    const seq = await audit.intend({
      kind: 'restore_session',
      parent: root,
      target: h.entry,
      restore: { ...item, to: d.display(opts.target), entries: [h.entry] },
    });
    besideBack = await restoreBeside(d, h.entry, h.identity, (p) =>
      refuse(
        RestoreCodes.exists,
        `${p} exists now; the held session was not put back`,
        `move it away first if the held one should take its place`,
      ),
    );
    await d.rename(h.entry, opts.target);
    await d.sync().catch(() => undefined);
    await audit.done(seq, item);
    // the hold is gone: the registry keeps only what is still there
    registry.touched();
    await registry
      .settle(home)
      .catch((err: unknown) =>
        log.warn({ code: Codes.ioError }, `registry not settled (the next sweep settles it): ${describeError(err)}`),
      );
  } catch (err) {
    await audit.abandon();
    throw err;
  }
  log.info({ target: opts.target, root }, 'session restored from the quarantine');
  return {
    target: opts.target,
    dry_run: false,
    restored: [...besideBack.map(besideStep), step],
    audit: await audit.finish(),
  };
}

async function restoreContext(
  config: GcConfig,
  home: Dir,
  log: Logger,
  opts: RestoreOptions,
  now: () => number,
): Promise<RestoreResult> {
  const q = await openQuarantineDir(home, false);
  const lookalike = notASessionId(opts.target);
  if (!q) {
    const what =
      lookalike !== undefined
        ? `${lookalike}, and no context is held (the quarantine is empty)`
        : `context '${opts.target}' is not held (the quarantine is empty)`;
    throw refuse(RestoreCodes.notHeld, what, 'murmur-gc quarantine ls lists what the undo window holds');
  }
  const audit = new RestoreAudit(home, now);
  try {
    const listed = await listQuarantineDir(q, false);
    const landed = await landedStaged(home, listed.items);
    let mine = listed.items.filter(
      (i) =>
        !i.incomplete &&
        i.meta?.context === opts.target &&
        (i.meta.state !== 'staged' || landed.has(i.entry)) &&
        (opts.record === undefined || i.meta.store === opts.record),
    );
    const stores = [...new Set(mine.map((i) => i.meta!.store))].sort();
    if (mine.length === 0) {
      throw refuse(
        RestoreCodes.notHeld,
        `${lookalike !== undefined ? `${lookalike}, and no context of that name is held` : `context '${opts.target}' is not held`}${opts.record !== undefined ? ` from record store '${opts.record}'` : ''}`,
        await notHeldHint(config.home, opts.target),
      );
    }
    if (stores.length > 1)
      throw refuse(
        RestoreCodes.ambiguous,
        `context '${opts.target}' is held from ${stores.length} record stores: ${stores.join(', ')}`,
        `pass --record <NAME> to say which one, e.g. --record ${stores[0]}`,
      );
    const store = stores[0]!;
    mine = mine.sort((a, b) => a.meta!.removed_ms - b.meta!.removed_ms || (a.entry < b.entry ? -1 : 1));
    const contexts = mine.filter((i) => i.kind === 'context');
    const truncations = mine.filter((i) => i.kind === 'truncation');
    const result: RestoreResult = { target: opts.target, dry_run: opts.dryRun, restored: [], audit: null };
    const conv = opts.dryRun
      ? await home.openDir(CONVERSATIONS_DIR).catch(() => undefined)
      : await home.mkdir(CONVERSATIONS_DIR, 0o700);
    const storeExists = conv ? (await conv.lstat(store)) !== undefined : false;
    await conv?.close();

    // 1. The context directory (the newest hold), when one is held.
    const ctxItem = contexts[contexts.length - 1];
    let storeDir: Dir | undefined;
    try {
      if (storeExists || (ctxItem && !opts.dryRun)) {
        await using c = await home.openDir(CONVERSATIONS_DIR);
        storeDir = opts.dryRun ? await c.openDir(store) : await c.mkdir(store, 0o700);
      }
      if (ctxItem) {
        if (storeDir && (await storeDir.lstat(opts.target))) {
          throw refuse(
            RestoreCodes.exists,
            `${storeDir.display(opts.target)} exists now; the held context was not put back`,
            `move it away (murmur-gc conversation rm ${opts.target} --record ${store}) if the held one should take its place`,
          );
        }
        const to = `${config.home}/${CONVERSATIONS_DIR}/${store}/${opts.target}`;
        result.restored.push({ held_kind: 'context', from: `${q.display(ctxItem.entry)}/${CONTEXT_PAYLOAD}`, to });
        if (!opts.dryRun && storeDir) {
          const item = await q.openDir(ctxItem.entry, ctxItem.identity);
          const restored: RestoredItem = { store: 'records', held: 'context', target: opts.target, origin: store };
          try {
            await item.openDir(CONTEXT_PAYLOAD).then((x) => x.close());
            const seq = await audit.intend({
              kind: 'restore_context',
              parent: q.path,
              target: ctxItem.entry,
              restore: { ...restored, to: storeDir.display(opts.target), entries: [ctxItem.entry] },
            });
            await item.renameInto(CONTEXT_PAYLOAD, storeDir, opts.target);
            await storeDir.sync().catch(() => undefined);
            await audit.done(seq, restored);
          } finally {
            await item.close();
          }
          await removeRestored(q, [ctxItem]);
        }
      }

      // 2. Dropped lines, oldest truncation first, in front of what the record holds now.
      const cutoff = ctxItem?.meta!.removed_ms;
      const pending = cutoff !== undefined ? truncations.filter((t) => t.meta!.removed_ms <= cutoff) : truncations;
      if (pending.length > 0) {
        const done = await restoreTruncations(
          config,
          home,
          q,
          storeDir,
          store,
          opts,
          pending,
          cutoff,
          log,
          ctxItem !== undefined,
          audit,
        );
        result.restored.push({
          held_kind: 'truncation',
          from: done.items.map((p) => `${q.display(p.entry)}/${payloadOf(p.meta!)}`).join(', '),
          to: `${config.home}/${CONVERSATIONS_DIR}/${store}/${opts.target}/${RECORD_FILE}`,
          messages_restored: done.messages,
        });
      }
    } finally {
      await storeDir?.close();
    }
    if (!opts.dryRun) result.audit = await audit.finish();
    return result;
  } catch (err) {
    await audit.abandon();
    throw err;
  } finally {
    await q.close();
  }
}

/** The record's first line (with its `\n`, when it has one) and its end offset. */
async function headLine(
  fh: FileHandle,
  size: number,
): Promise<{ line: Buffer; end: number; header: RecordHeader | undefined }> {
  const end = await firstLineEnd(fh, size);
  const line = Buffer.alloc(end);
  await fh.read(line, 0, end, 0);
  return { line, end, header: parseHeaderLine(line.subarray(0, end > 0 && line[end - 1] === 10 ? end - 1 : end)) };
}

/**
 * Put the held dropped lines back in front of the record: the chain of held truncations ending at
 * the marker the record carries now (restoreChain; `candidates` are this context's truncation
 * items, `cutoff` the newest hold time a context restored first allows). Under the record's lock.
 * Returns the items put back (oldest first) and the messages restored.
 */
async function restoreTruncations(
  config: GcConfig,
  home: Dir,
  q: Dir,
  storeDir: Dir | undefined,
  store: string,
  opts: RestoreOptions,
  candidates: QueueItem[],
  cutoff: number | undefined,
  log: Logger,
  ctxRestoredFirst: boolean,
  audit: RestoreAudit,
): Promise<{ messages: number; items: QueueItem[] }> {
  const ctxDir = storeDir ? await storeDir.openDir(opts.target).catch(() => undefined) : undefined;
  if (!ctxDir && !(opts.dryRun && ctxRestoredFirst)) {
    throw refuse(
      RestoreCodes.conflict,
      `${config.home}/${CONVERSATIONS_DIR}/${store}/${opts.target} does not exist: there is no record to put the held lines back into`,
      'murmur-gc quarantine ls shows what is held; the lines go when their window passes',
    );
  }
  if (!ctxDir) {
    // dry run: the context is restored first, and it carries the marker of the newest truncation
    const items = candidates.filter((i) => i.meta!.state !== 'staged');
    return { messages: items.reduce((n, i) => n + (i.meta!.messages ?? 0), 0), items };
  }
  let lock: HeldLock | undefined;
  const opened: FileHandle[] = [];
  try {
    const conflict = () =>
      refuse(
        RestoreCodes.conflict,
        `${ctxDir.display(RECORD_FILE)} does not carry the truncation marker of a held truncation (it was truncated again since its lines were held, or they are back already); putting them back would leave a gap or repeat them`,
        'the held lines stay in the quarantine until their window passes (murmur-gc quarantine ls)',
      );
    const chainFor = (h: RecordHeader | undefined, items: QueueItem[]) =>
      restoreChain(items as (QueueItem & { meta: ItemMeta })[], h?.truncated?.at_ms.toString());
    if (opts.dryRun) {
      if (!(await ctxDir.lstat(RECORD_FILE))) throw conflict();
      const { fh, stat } = await ctxDir.openFile(RECORD_FILE);
      try {
        const chain = chainFor((await headLine(fh, Number(stat.size))).header, candidates);
        if (chain.length === 0) throw conflict();
        return { messages: chain.reduce((n, i) => n + (i.meta.messages ?? 0), 0), items: chain };
      } finally {
        await fh.close();
      }
    }
    await ensureLockDir(home, [encodeURIComponent(store)]);
    lock = await takeLock(recordLockPath(config.home, store, opts.target));
    if (!lock)
      throw new BusyError(
        `${ctxDir.display(RECORD_FILE)} is locked by another murmur-gc; try again when it has finished`,
      );
    // Listed again under the record's lock: a truncation that held lines since is seen whole.
    const fresh = (await listQuarantineDir(q, false)).items.filter(
      (i) =>
        !i.incomplete &&
        i.kind === 'truncation' &&
        i.meta?.context === opts.target &&
        i.meta.store === store &&
        (cutoff === undefined || i.meta.removed_ms <= cutoff),
    );
    let chain: QueueItem[] = [];
    let messages = 0;
    let expected = '';
    const inserts: { fh: FileHandle; from: number; to: number }[] = [];
    let seq: number | undefined;
    const restored: RestoredItem = { store: 'records', held: 'truncation', target: opts.target, origin: store };
    const rw = await stagedRewrite({
      dir: ctxDir,
      name: RECORD_FILE,
      mode: RECORD_FILE_MODE,
      signal: lock.signal,
      stage: async (src, size) => {
        const head = await headLine(src, size);
        chain = chainFor(head.header, fresh);
        if (chain.length === 0) throw conflict();
        for (const it of chain) {
          await using item = await q.openDir(it.entry, it.identity);
          const held = await openHeldLines(item, it.meta!);
          opened.push(held.fh);
          inserts.push(held);
        }
        messages = chain.reduce((n, i) => n + (i.meta!.messages ?? 0), 0);
        const h = head.header!;
        const marker = restoredMarker(h.truncated, messages, chain[0]!.meta!.prior ?? null);
        expected = serializeHeader({
          type: h.type,
          capsule: h.capsule,
          created_ms: h.created_ms,
          ...(marker ? { truncated: marker } : {}),
        });
        // Logged before the rewrite: recovery reads the record's first line (and the lines after
        // it) to tell whether this rewrite landed (src/gchome/audit-recovery.ts).
        seq = await audit.intend({
          kind: 'restore_truncation',
          parent: q.path,
          target: chain[0]!.entry,
          restore: {
            ...restored,
            messagesRestored: messages,
            to: ctxDir.display(RECORD_FILE),
            entries: chain.map((c) => c.entry),
            header: expected,
          },
        });
        return { prefix: Buffer.from(expected), insert: inserts, copyFrom: head.end };
      },
    });
    if (!rw || seq === undefined) throw new GcError(Codes.ioError, `${ctxDir.display(RECORD_FILE)} was not rewritten`);
    await audit.done(seq, { ...restored, messagesRestored: messages });
    for (const fh of opened.splice(0)) await fh.close().catch(() => undefined);
    await removeRestored(q, chain);
    log.info({ target: opts.target, record: store, messages }, 'dropped lines restored from the quarantine');
    return { messages, items: chain };
  } finally {
    for (const fh of opened) await fh.close().catch(() => undefined);
    await lock?.release();
    await ctxDir.close();
  }
}
