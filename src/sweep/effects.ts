// The effects engine: the one place that answers "what does --dry-run do?" for every command
// that changes the disk — the sweep, `restore` (and `restore --sweep`, which runs it per item)
// and `conversation rm|truncate`. Each run picks its effects once (`pickEffects`; a command:
// `commandEffects`): `realEffects` acts, `measureOnly` (--dry-run) measures the same entries and
// acts on none. Callers call these methods and never ask which one they have; the voice (`say`)
// is the only thing that tells the two apart in words (src/sweep/voice.ts).
// Guarantees:
// - Every change a sweep or a command makes under the home and the roots goes through one method
//   here: record what it places in a capsule's directory, remove, hold, purge, finish a trash
//   entry, unlink a temp file, retry a kept-aside directory, truncate or repair a record, chmod,
//   mark background work lost, release or create the keep_free reserve, take a lock, recover
//   interrupted audits, put a held item back, write the audit, and `upkeep` (state, cache,
//   protection).
// - measureOnly opens, verifies and measures exactly the entries a real run would act on and
//   reports the same results (bytes, entries, outcomes); it writes nothing: no audit, no state,
//   no cache, no quarantine directory, no `gc/`, no reserve, no lock file (it only probes locks).
// - realEffects intends each audited act in the audit log before it starts and marks it done
//   after (`audited`); what the audit trace must list (retention, purges, restores) is recorded
//   only then.
// - Both forms take the same decisions from the same numbers: every budget is decided by the fate
//   planner before anything is done (src/plan/fates.ts); `unappliedFreed` is the one number a
//   measure-only run adds to what it measured (the reserve a real run releases first).
//
// A new step or command: take what it changes on disk from here (or add one method, with its
// real and its measure-only form side by side below), report each sweep action with `acted`
// (steps/context.ts), and never branch on the mode.
import type { FileHandle } from 'node:fs/promises';
import { BusyError, Codes, GcError, describeError, errnoCode, withPath } from '../errors.js';
import { failpoint } from '../failpoint.js';
import type { Logger } from '../log.js';
import { openChain, openOrCreateHome } from '../fsx/dirs.js';
import { Dir, identityOf, sameIdentity, type Identity } from '../fsx/safe-fs.js';
import { finishTrash, measureDir, removeDir, retryKept, type KeptRetry } from '../fsx/remove.js';
import {
  AuditSession,
  GC_DIR,
  INTENT_FILE,
  type IntentLine,
  type PurgedItem,
  type RestoredItem,
  type RetentionItem,
} from '../gchome/audit.js';
import { recoverInterruptedAudits, type Recovered } from '../gchome/audit-recovery.js';
import { removeDeadGcTemps, type RemovedTemp } from '../gchome/leftovers.js';
import { protectRecovered } from '../gchome/protect-file.js';
import { acquireLock, ensureLockDir, probeLock, recordLockPath, sweepLockPath, type HeldLock } from '../gchome/lock.js';
import {
  dropKeeper,
  holdContext,
  holdSession,
  listQuarantineDir,
  openHeldLines,
  openQuarantineDir,
  purgeEntry,
  type QueueItem,
} from '../gchome/quarantine-store.js';
import {
  CONTEXT_PAYLOAD,
  restoreChain,
  restoredMarker,
  type HeldItem,
  type ItemMeta,
} from '../gchome/quarantine-layout.js';
import { sessionQuarantineName } from '../runtime/gc-entries.js';
import { holdBeside, listBeside, restoreBeside, type BesideHeld, type BesideSub } from '../gchome/quarantine-beside.js';
import { Registry, type Placed } from '../gchome/registry.js';
import {
  createInodeReserve,
  createReserve,
  releaseInodes,
  releaseReserve,
  reserveBytes,
  reserveInodes,
} from '../gchome/reserve.js';
import { CONVERSATIONS_DIR, RECORD_FILE, type ModeEntry } from '../runtime/inventory.js';
import { mintId } from '../runtime/ids.js';
import { parseHeaderLine, serializeHeader, type RecordHeader } from '../runtime/record.js';
import { stagedRewrite } from '../runtime/staged-rewrite.js';
import {
  RECORD_FILE_MODE,
  firstLineEnd,
  measureTornTail,
  measureTruncation,
  repairTornTail,
  truncateRecord,
  type RepairOutcome,
  type TruncateOptions,
  type TruncateOutcome,
} from '../runtime/record-truncate.js';
import { VERSION } from '../version.js';
import { say, type Said } from './voice.js';

/** What the effects read and write of the sweep's shared state (the SweepContext has it all). */
export interface EffectsHost {
  readonly home: string;
  readonly homeDir: Dir | undefined;
  readonly auditId: string;
  readonly now: () => number;
  readonly log: Logger;
  readonly opts: { recordLockWaitMs?: number };
  readonly report: { audit: string | null };
  readonly retentionItems: RetentionItem[];
  readonly purged: PurgedItem[];
  readonly heldNow: HeldItem[];
  readonly reserveReleased: number;
  readonly reserveInodesReleased: number;
  audit: AuditSession | undefined;
  quarantineDir: Dir | undefined;
  readonly registry: Registry;
}

/** An intent line of the audit log (`op` and `seq` are added when it is written). */
export type Intent = Omit<IntentLine, 'op' | 'seq'>;

/** What an audited act adds to the audit once done. */
export interface AuditRecord {
  done?: { messages_dropped?: number };
  retention?: RetentionItem;
  purged?: PurgedItem;
}

/** A check run on an entry's directory before it goes (a real run: in the trash, after the rename). */
export type Verify = (dir: Dir) => Promise<void>;

/** The dropped lines of a truncation, kept by the undo window (src/gchome/quarantine-store.ts). */
export type DropKeeper = ReturnType<typeof dropKeeper>;

/** Lines of background work marked lost in one session's trace. */
export interface LostMarks<W> {
  landed: W[];
  /** the `detached_lost` task that reports them; null when nothing was written (measure-only) */
  taskId: string | null;
}

/** What recovery did (`recover`): each run completed, and the temps removed. */
export interface Recovery {
  recovered: Recovered[];
  temps: RemovedTemp[];
  /** why `gc/` could not be searched for temps */
  tempsError?: unknown;
}

/** The dropped lines to put back (`putBackLines`). */
export interface PutBackLines {
  q: Dir;
  /** the context's directory; undefined when it does not exist (now) */
  ctxDir: Dir | undefined;
  /** this context's held truncations */
  candidates: QueueItem[];
  /** the newest hold time a context restored first allows */
  cutoff: number | undefined;
  /** a held context is restored first (a measure-only run: it would carry the newest marker) */
  ctxRestoredFirst: boolean;
  item: RestoredItem;
  noRecord: () => Error;
  conflict: (ctxDir: Dir) => Error;
  busy: (ctxDir: Dir) => Error;
}

export interface Effects {
  /** tmpfiles' log_action: the would-form in a measure-only run, the did-form in a real one. */
  say(words: Said): string;

  /**
   * `<home>/gc/sweep.lock`. Real: opens (creating) the home, `check`s it, creates `gc/`, runs
   * `settle(gc)`, takes the lock (undefined: busy). Measure-only: probes the lock (busy: nothing
   * opened), opens an existing home, `check`s it, and runs `settle` on an existing `gc/`.
   */
  lockSweep(
    home: string,
    exists: boolean,
    check: (home: Dir) => void,
    settle: (gc: Dir) => Promise<void>,
  ): Promise<{ homeDir: Dir | undefined; lock: HeldLock | undefined; busy: boolean }>;
  /**
   * A record's lock (real: a dead holder's taken over at once, a live one waited for
   * `recordLockWaitMs`) or a probe of it (measure-only: undefined when free).
   */
  lockRecord(home: Dir, store: string, context: string): Promise<HeldLock | undefined | 'busy'>;
  /**
   * `<home>/gc/sweep.lock` for a command (restore): real creates `gc/` and takes the lock (a dead
   * holder's at once, a live one waited for 3 s; still held: BusyError). Measure-only: nothing,
   * not even a probe (a dry run reads what a sweep might change meanwhile, and says so).
   */
  lockForCommand(home: Dir): Promise<HeldLock | undefined>;
  /**
   * The one recovery path (the sweep's recover step, and restore before it acts): completes the
   * audits of runs killed or failed mid-way (src/gchome/audit-recovery.ts), protects what an
   * interrupted restore put back, removes the temps killed runs left under `gc/`
   * (`nowMs` judges their age). Measure-only: nothing.
   */
  recover(home: Dir, nowMs?: number): Promise<Recovery>;

  /**
   * Puts the held session `root/held.entry` back as `root/target`, what went beside it first
   * (src/gchome/quarantine-beside.ts; `exists` refuses a path that exists now), intended before
   * and done after in the audit; what came back beside it. Measure-only: what is beside it.
   */
  putBackSession(
    root: Dir,
    held: { entry: string; identity: Identity },
    target: string,
    item: RestoredItem,
    registry: Registry,
    exists: (path: string) => Error,
  ): Promise<BesideHeld[]>;
  /**
   * `<home>/conversations/<store>`: real creates `conversations/` (and the store too when
   * `create`); measure-only opens what exists. Undefined when the store is not there (nor made).
   */
  openStore(home: Dir, store: string, create: boolean): Promise<Dir | undefined>;
  /** Puts a context held whole back into `store` (audited; its held item removed after). Measure-only: nothing. */
  putBackContext(q: Dir, held: QueueItem, store: Dir | undefined, item: RestoredItem): Promise<void>;
  /**
   * Puts dropped lines back in front of the record in `o.ctxDir` (the chain of held truncations
   * ending at the marker the record carries now, src/gchome/quarantine-layout.ts restoreChain),
   * under the record's lock, with the staged rewrite (audited; the held items removed after);
   * the items put back (oldest first) and the messages. Measure-only: the same chain, read.
   */
  putBackLines(o: PutBackLines): Promise<{ messages: number; items: QueueItem[] }>;
  /**
   * Finishes a command's audit with its retention (and `more`), its restores, and `status`;
   * an audit that recorded nothing is removed whole. Its id, or null (none was begun, or
   * measure-only).
   */
  finishAudit(status: 'ok' | 'failed', more?: () => Promise<RetentionItem[]>): Promise<string | null>;
  /** A command's act failed: its intent log stays, and the next sweep (or restore) completes it. */
  abandonAudit(): Promise<void>;

  /** `act`, intended in the audit log before and marked done after (real runs; measure-only: `act` alone). */
  audited<T>(intent: Intent, act: () => Promise<T>, record?: (t: T) => AuditRecord): Promise<T>;

  /**
   * Records in the registry (src/gchome/registry.ts), durably, the names the acts that follow will
   * give entries in directories a capsule can write (holds, trash, kept-aside), before any of them
   * is made. Measure-only: nothing (the names are never made).
   */
  place(items: readonly Placed[]): Promise<void>;
  /** Removes `parent/name` (rename to trash, `verify` there, delete); the bytes it held. */
  remove(parent: Dir, name: string, identity: Identity, o?: { verify?: Verify; signal?: AbortSignal }): Promise<number>;
  /** Holds a session in its own root until `untilMs`: its entry there and its bytes. */
  holdSession(
    root: Dir,
    name: string,
    identity: Identity,
    untilMs: number,
    verify: Verify,
  ): Promise<{ entry: string; bytes: number }>;
  /** Holds a context in `<home>/gc/quarantine`: where it is held (`parent`/`entry`; `path` of the payload) and its bytes. */
  holdContext(
    home: Dir,
    store: Dir,
    name: string,
    identity: Identity,
    meta: ItemMeta,
    verify: Verify,
  ): Promise<{ parent: string; entry: string; path: string; bytes: number }>;
  /**
   * Holds `from/name` (a child workdir or a work log beside a session) inside the held session
   * `root/heldEntry` (src/gchome/quarantine-beside.ts), `verify` run on it once moved (a failure
   * puts it back); its bytes (measure-only: `verify` on it in place, then `measured()`).
   */
  holdBeside(
    root: Dir,
    heldEntry: string,
    heldIdentity: Identity,
    from: Dir,
    sub: BesideSub,
    name: string,
    identity: Identity,
    measured: () => Promise<number>,
    verify?: Verify,
  ): Promise<number>;
  /**
   * What the disk holds for the held item `parent/entry` once it is held, as `du` counts it (its
   * sidecar and directories included: what `quarantine ls`, `status` and the metrics count for
   * it); `counted` when it cannot be measured. Measure-only: `counted`, what would be moved (the
   * bookkeeping a real run writes is not there to measure).
   */
  heldBytes(parent: Dir | undefined, entry: string, counted: number): Promise<number>;
  /** Deletes a held item for good; its bytes. */
  purge(parent: Dir, entry: string, identity: Identity): Promise<number>;
  /** Finishes a trash entry an interrupted removal left; its bytes. */
  finishTrash(parent: Dir, name: string, identity: Identity): Promise<number>;
  /** Unlinks a leftover file (already checked to be the scanned one). */
  unlink(parent: Dir, name: string): Promise<void>;
  /** Tries a kept-aside directory again (measure-only: it stays, measured). */
  retryKept(parent: Dir, name: string, identity: Identity): Promise<KeptRetry>;

  /** The keeper of a truncation's dropped lines (undefined in a measure-only run). */
  dropKeeper(home: Dir, base: Parameters<typeof dropKeeper>[1]): Promise<DropKeeper | undefined>;
  truncate(dir: Dir, name: string, opts: TruncateOptions): Promise<TruncateOutcome>;
  repairTornTail(dir: Dir, name: string, opts: Parameters<typeof repairTornTail>[2]): Promise<RepairOutcome>;
  /** Sets the mode of a scanned entry (through descriptors, never a link). */
  chmod(entry: ModeEntry, mode: number): Promise<void>;
  /** Marks background work lost in a session's trace: `write` does it in a real run; measure-only: all `works` would land. */
  markLost<W>(works: W[], write: () => Promise<LostMarks<W> | undefined>): Promise<LostMarks<W> | undefined>;

  /** Releases the keep_free reserve in `gc`: the bytes released (measure-only: that would be). */
  releaseReserve(gc: Dir): Promise<number>;
  /** Releases the reserve's inode part in `gc`: the inodes released (measure-only: that would be). */
  releaseInodes(gc: Dir): Promise<number>;
  /** Creates the parts of the reserve named in `<home>/gc`: whether they are (measure-only: would be) in place. */
  createReserve(home: Dir, parts: { bytes: boolean; inodes: boolean }): Promise<boolean>;

  /** Housekeeping a measure-only run neither does nor reports (state, cache, recovery): `fn`'s result, or undefined. */
  upkeep<T>(fn: () => Promise<T>): Promise<T | undefined>;

  /**
   * Bytes a real run has freed by now that a measure-only run did not (the reserve the lock step
   * releases on a full filesystem), so free space is judged alike; 0 in a real run.
   */
  unappliedFreed(): number;
  /** Inodes likewise (the reserve's inode part). */
  unappliedFreedInodes(): number;
}

/** Picks the effects of one run. */
export function pickEffects(host: EffectsHost, measureOnlyRun: boolean): Effects {
  return measureOnlyRun ? measureOnly(host) : realEffects(host);
}

/** One command's run (restore TARGET, conversation rm|truncate) on an open home. */
export interface CommandRun {
  home: string;
  homeDir: Dir;
  measureOnly: boolean;
  now: () => number;
  log: Logger;
  recordLockWaitMs: number;
}

/** The effects of one command: its own audit id (minted now; begun at its first act); disposing closes what it opened. */
export type CommandEffects = Effects &
  AsyncDisposable & { readonly auditId: string; quarantinePath(): string | undefined };

export function commandEffects(run: CommandRun): CommandEffects {
  const host: EffectsHost = {
    home: run.home,
    homeDir: run.homeDir,
    auditId: mintId('ses_'),
    now: run.now,
    log: run.log,
    opts: { recordLockWaitMs: run.recordLockWaitMs },
    report: { audit: null },
    retentionItems: [],
    purged: [],
    heldNow: [],
    reserveReleased: 0,
    reserveInodesReleased: 0,
    audit: undefined,
    quarantineDir: undefined,
    registry: Registry.empty(),
  };
  return Object.assign(pickEffects(host, run.measureOnly), {
    auditId: host.auditId,
    quarantinePath: () => host.quarantineDir?.path,
    async [Symbol.asyncDispose]() {
      await host.quarantineDir?.close();
      host.quarantineDir = undefined;
    },
  });
}

/** Opens `parent/name` as the scanned directory, runs `verify` on it, and measures it. */
async function verifiedBytes(
  parent: Dir,
  name: string,
  identity: Identity,
  verify: Verify | undefined,
): Promise<number> {
  if (verify) {
    await using d = await parent.openDir(name, identity);
    await verify(d);
  }
  return (await measureDir(parent, name, identity)).bytes;
}

/** A lock: a dead holder's taken over at once, a live one waited for `waitMs`. */
async function takeLock(path: string, waitMs: number): Promise<HeldLock | undefined> {
  return (await acquireLock(path, { waitMs: 0 })) ?? (waitMs > 0 ? acquireLock(path, { waitMs }) : undefined);
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

/** The held truncations among `items` that go back in front of a record whose header is `h`. */
function chainFor(h: RecordHeader | undefined, items: QueueItem[]): (QueueItem & { meta: ItemMeta })[] {
  return restoreChain(items as (QueueItem & { meta: ItemMeta })[], h?.truncated?.at_ms.toString());
}

const messagesOf = (items: QueueItem[]): number => items.reduce((n, i) => n + (i.meta!.messages ?? 0), 0);

/** Removes held items whose contents are back (their restore is logged done). */
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

function realEffects(host: EffectsHost): Effects {
  const ensureAudit = async (): Promise<AuditSession | undefined> => {
    if (!host.homeDir) return undefined;
    if (!host.audit) {
      host.audit = await AuditSession.begin(host.homeDir, host.auditId, VERSION, host.now());
      host.report.audit = host.auditId;
    }
    return host.audit;
  };
  const quarantineDir = async (home: Dir): Promise<Dir> => {
    host.quarantineDir ??= await openQuarantineDir(home, true);
    if (!host.quarantineDir) throw new GcError(Codes.ioError, 'the quarantine directory could not be opened');
    return host.quarantineDir;
  };
  // A restore's steps: intended durably before each, done durably once its change landed and
  // before its held item is removed, so a restore killed at any point is completed by recovery.
  const restored: RestoredItem[] = [];
  const intendRestore = async (intent: Intent): Promise<number> => {
    const a = await ensureAudit();
    if (!a) throw new GcError(Codes.ioError, 'there is no murmur home to keep the audit trail of a restore');
    return a.intend(intent).catch((err: unknown) => {
      throw withPath(err, `${a.dirPath}/${INTENT_FILE}`);
    });
  };
  const doneRestore = async (seq: number, item: RestoredItem): Promise<void> => {
    await host.audit!.done(seq, {}, true);
    restored.push(item);
    failpoint('restore:after_done');
  };
  const lockRecord = async (home: Dir, store: string, context: string): Promise<HeldLock | 'busy'> => {
    await ensureLockDir(home, [encodeURIComponent(store)]);
    return (await takeLock(recordLockPath(host.home, store, context), host.opts.recordLockWaitMs ?? 2000)) ?? 'busy';
  };
  return {
    say: (words) => say(false, words),
    async lockSweep(home, exists, check, settle) {
      const homeDir = await openOrCreateHome(home, exists);
      try {
        check(homeDir);
        const gc = await homeDir.mkdir(GC_DIR, 0o700);
        try {
          await settle(gc);
        } finally {
          await gc.close();
        }
        const lock = await acquireLock(sweepLockPath(home), { waitMs: 0 });
        return { homeDir, lock, busy: lock === undefined };
      } catch (err) {
        await homeDir.close();
        throw err;
      }
    },
    lockRecord,
    async lockForCommand(home) {
      const gc = await home.mkdir(GC_DIR, 0o700);
      await gc.close();
      const path = sweepLockPath(host.home);
      const lock = await takeLock(path, 3000);
      if (!lock) throw new BusyError(`a murmur-gc sweep holds ${path}; try again when it has finished`);
      return lock;
    },
    async recover(home, nowMs) {
      const recovered = await recoverInterruptedAudits(home, host.home, host.now());
      await protectRecovered(
        home,
        host.log,
        recovered.flatMap((r) => r.restored),
        host.now,
      );
      return removeDeadGcTemps(host.home, nowMs).then(
        (temps) => ({ recovered, temps }),
        (err: unknown) => ({ recovered, temps: [], tempsError: err }),
      );
    },
    async putBackSession(root, held, target, item, registry, exists) {
      const st = await root.lstat(held.entry);
      if (!st?.isDirectory())
        throw new GcError(Codes.changedSinceScan, `${root.display(held.entry)} changed while it was being restored`);
      await root.openDir(held.entry, held.identity).then((x) => x.close());
      const seq = await intendRestore({
        kind: 'restore_session',
        parent: item.origin,
        target: held.entry,
        restore: { ...item, to: root.display(target), entries: [held.entry] },
      });
      const beside = await restoreBeside(root, held.entry, held.identity, exists);
      await root.rename(held.entry, target);
      await root.sync().catch(() => undefined);
      await doneRestore(seq, item);
      // the hold is gone: the registry keeps only what is still there
      registry.touched();
      if (host.homeDir)
        await registry
          .settle(host.homeDir)
          .catch((err: unknown) =>
            host.log.warn(
              { code: Codes.ioError },
              `registry not settled (the next sweep settles it): ${describeError(err)}`,
            ),
          );
      host.log.info({ target, root: item.origin }, 'session restored from the quarantine');
      return beside;
    },
    async openStore(home, store, create) {
      await using conv = await home.mkdir(CONVERSATIONS_DIR, 0o700);
      return create || (await conv.lstat(store)) ? await conv.mkdir(store, 0o700) : undefined;
    },
    async putBackContext(q, held, store, item) {
      if (!store) return; // (openStore made it)
      {
        await using d = await q.openDir(held.entry, held.identity);
        await d.openDir(CONTEXT_PAYLOAD).then((x) => x.close());
        const seq = await intendRestore({
          kind: 'restore_context',
          parent: q.path,
          target: held.entry,
          restore: { ...item, to: store.display(item.target), entries: [held.entry] },
        });
        await d.renameInto(CONTEXT_PAYLOAD, store, item.target);
        await store.sync().catch(() => undefined);
        await doneRestore(seq, item);
      }
      await removeRestored(q, [held]);
    },
    async putBackLines(o) {
      const { q, ctxDir, item } = o;
      if (!ctxDir) throw o.noRecord();
      const lock = await lockRecord(host.homeDir!, item.origin, item.target);
      if (lock === 'busy') throw o.busy(ctxDir);
      const opened: FileHandle[] = [];
      try {
        // Listed again under the record's lock: a truncation that held lines since is seen whole.
        const fresh = (await listQuarantineDir(q, false)).items.filter(
          (i) =>
            !i.incomplete &&
            i.kind === 'truncation' &&
            i.meta?.context === item.target &&
            i.meta.store === item.origin &&
            (o.cutoff === undefined || i.meta.removed_ms <= o.cutoff),
        );
        let chain: QueueItem[] = [];
        let messages = 0;
        const inserts: { fh: FileHandle; from: number; to: number }[] = [];
        let seq: number | undefined;
        const rw = await stagedRewrite({
          dir: ctxDir,
          name: RECORD_FILE,
          mode: RECORD_FILE_MODE,
          signal: lock.signal,
          stage: async (src, size) => {
            const head = await headLine(src, size);
            chain = chainFor(head.header, fresh);
            if (chain.length === 0) throw o.conflict(ctxDir);
            for (const it of chain) {
              await using held = await q.openDir(it.entry, it.identity);
              const lines = await openHeldLines(held, it.meta!);
              opened.push(lines.fh);
              inserts.push(lines);
            }
            messages = messagesOf(chain);
            const h = head.header!;
            const marker = restoredMarker(h.truncated, messages, chain[0]!.meta!.prior ?? null);
            const expected = serializeHeader({
              type: h.type,
              capsule: h.capsule,
              created_ms: h.created_ms,
              ...(marker ? { truncated: marker } : {}),
            });
            // Logged before the rewrite: recovery reads the record's first line (and the lines after
            // it) to tell whether this rewrite landed (src/gchome/audit-recovery.ts).
            seq = await intendRestore({
              kind: 'restore_truncation',
              parent: q.path,
              target: chain[0]!.entry,
              restore: {
                ...item,
                messagesRestored: messages,
                to: ctxDir.display(RECORD_FILE),
                entries: chain.map((c) => c.entry),
                header: expected,
              },
            });
            return { prefix: Buffer.from(expected), insert: inserts, copyFrom: head.end };
          },
        });
        if (!rw || seq === undefined)
          throw new GcError(Codes.ioError, `${ctxDir.display(RECORD_FILE)} was not rewritten`);
        await doneRestore(seq, { ...item, messagesRestored: messages });
        for (const fh of opened.splice(0)) await fh.close().catch(() => undefined);
        await removeRestored(q, chain);
        host.log.info(
          { target: item.target, record: item.origin, messages },
          'dropped lines restored from the quarantine',
        );
        return { messages, items: chain };
      } finally {
        for (const fh of opened) await fh.close().catch(() => undefined);
        await lock.release();
      }
    },
    async finishAudit(status, more) {
      const a = host.audit;
      if (!a || !host.homeDir) return null;
      const items = [...host.retentionItems, ...((await more?.()) ?? [])];
      if (items.length === 0 && restored.length === 0) {
        await using gc = await host.homeDir.openDir(GC_DIR);
        await a.discard(gc);
        host.audit = undefined;
        return null;
      }
      if (restored.length > 0) failpoint('restore:before_audit');
      await a.finish(items, [], status, host.now(), { restored });
      host.audit = undefined;
      return host.auditId;
    },
    async abandonAudit() {
      await host.audit?.abandon().catch(() => undefined);
    },
    async audited(intent, act, record) {
      const a = await ensureAudit();
      const seq = await a?.intend(intent);
      const t = await act();
      const r = record?.(t) ?? {};
      if (a && seq !== undefined) await a.done(seq, r.done);
      if (r.retention) host.retentionItems.push(r.retention);
      if (r.purged) host.purged.push(r.purged);
      return t;
    },
    async place(items) {
      if (items.length === 0) return;
      if (!host.homeDir)
        throw new GcError(
          Codes.ioError,
          `there is no murmur home to record what this sweep would place in a capsule's directory; nothing is`,
        );
      // the acts that follow need their audit: made first, so a run that cannot make it stops once
      await ensureAudit();
      await host.registry.place(host.homeDir, items);
    },
    async remove(parent, name, identity, o = {}) {
      const { verify, signal } = o;
      return (
        await removeDir(parent, name, identity, {
          runId: host.auditId,
          ...(verify ? { verifyInTrash: verify } : {}),
          ...(signal ? { signal } : {}),
        })
      ).bytes;
    },
    holdSession: (root, name, identity, untilMs, verify) => holdSession(root, name, identity, untilMs, verify),
    holdBeside: (root, heldEntry, heldIdentity, from, sub, name, identity, _measured, verify) =>
      holdBeside(root, heldEntry, heldIdentity, from, sub, name, identity, verify),
    async holdContext(home, store, name, identity, meta, verify) {
      const q = await quarantineDir(home);
      const h = await holdContext(store, name, identity, q, meta, verify);
      return { parent: q.path, entry: h.entry, path: `${q.path}/${h.entry}/ctx`, bytes: h.bytes };
    },
    heldBytes: async (parent, entry, counted) =>
      parent
        ? measureDir(parent, entry).then(
            (m) => m.bytes,
            () => counted,
          )
        : counted,
    purge: async (parent, entry, identity) => (await purgeEntry(parent, entry, identity, host.auditId)).bytes,
    finishTrash: async (parent, name, identity) => (await finishTrash(parent, name, identity)).bytes,
    unlink: (parent, name) => parent.unlink(name),
    retryKept: (parent, name, identity) => retryKept(parent, name, identity),
    dropKeeper: async (home, base) => dropKeeper(await quarantineDir(home), base),
    truncate: (dir, name, opts) => truncateRecord(dir, name, opts),
    repairTornTail: (dir, name, opts) => repairTornTail(dir, name, opts),
    chmod: (entry, mode) => applyChmod(entry, mode),
    markLost: async (_works, write) => {
      // The lost tasks are reported by this sweep's audit trace: it exists before the first line lands.
      if (!(await ensureAudit())) return undefined;
      return write();
    },
    releaseReserve: (gc) => releaseReserve(gc),
    releaseInodes: (gc) => releaseInodes(gc),
    async createReserve(home, parts) {
      if (!(await home.lstat(GC_DIR))?.isDirectory()) return false;
      await using gc = await home.openDir(GC_DIR);
      const inodes = !parts.inodes || (await createInodeReserve(gc));
      const bytes = !parts.bytes || (await createReserve(gc));
      return inodes && bytes;
    },
    upkeep: (fn) => fn(),
    unappliedFreed: () => 0,
    unappliedFreedInodes: () => 0,
  };
}

function measureOnly(host: EffectsHost): Effects {
  return {
    say: (words) => say(true, words),
    async lockSweep(home, exists, check, settle) {
      if (exists && (await probeLock(sweepLockPath(home)))) return { homeDir: undefined, lock: undefined, busy: true };
      const homeDir = exists ? await Dir.open(home, { followFinal: true }) : undefined;
      try {
        if (homeDir) check(homeDir);
        if (homeDir && (await homeDir.lstat(GC_DIR))?.isDirectory()) {
          await using gc = await homeDir.openDir(GC_DIR);
          await settle(gc);
        }
      } catch (err) {
        await homeDir?.close();
        throw err;
      }
      return { homeDir, lock: undefined, busy: false };
    },
    lockRecord: async (_home, store, context) =>
      (await probeLock(recordLockPath(host.home, store, context))) ? 'busy' : undefined,
    lockForCommand: () => Promise.resolve(undefined),
    recover: () => Promise.resolve({ recovered: [], temps: [] }),
    async putBackSession(root, held, _target, item) {
      await using hd = await root.openDir(held.entry, held.identity);
      return listBeside(hd, item.origin);
    },
    async openStore(home, store) {
      await using conv = await home.openDir(CONVERSATIONS_DIR).catch(() => undefined);
      return conv && (await conv.lstat(store)) ? await conv.openDir(store) : undefined;
    },
    putBackContext: () => Promise.resolve(),
    async putBackLines(o) {
      const { ctxDir } = o;
      if (!ctxDir) {
        if (!o.ctxRestoredFirst) throw o.noRecord();
        // the context is restored first, and it carries the marker of the newest truncation
        const items = o.candidates.filter((i) => i.meta!.state !== 'staged');
        return { messages: messagesOf(items), items };
      }
      if (!(await ctxDir.lstat(RECORD_FILE))) throw o.conflict(ctxDir);
      const { fh, stat } = await ctxDir.openFile(RECORD_FILE);
      await using _ = fh;
      const chain = chainFor((await headLine(fh, Number(stat.size))).header, o.candidates);
      if (chain.length === 0) throw o.conflict(ctxDir);
      return { messages: messagesOf(chain), items: chain };
    },
    finishAudit: () => Promise.resolve(null),
    abandonAudit: () => Promise.resolve(),
    audited: (_intent, act) => act(),
    place: () => Promise.resolve(),
    remove: (parent, name, identity, o = {}) => verifiedBytes(parent, name, identity, o.verify),
    holdSession: async (root, name, identity, untilMs, verify) => ({
      entry: sessionQuarantineName(untilMs, name),
      bytes: await verifiedBytes(root, name, identity, verify),
    }),
    async holdBeside(_root, _heldEntry, _heldIdentity, from, _sub, name, identity, measured, verify) {
      if (verify) {
        await using d = await from.openDir(name, identity);
        await verify(d);
      }
      return measured();
    },
    async holdContext(home, store, name, identity, _meta, verify) {
      const q = `${home.path}/${GC_DIR}/quarantine`;
      // A real move is refused across filesystems (the caller then removes it at once): said alike.
      if (store.identity.dev !== home.identity.dev)
        throw new GcError(
          Codes.crossDevice,
          `${store.display(name)} is on another filesystem than ${q}; it cannot be held in the quarantine`,
        );
      return { parent: q, entry: `(${name})`, path: q, bytes: await verifiedBytes(store, name, identity, verify) };
    },
    heldBytes: (_parent, _entry, counted) => Promise.resolve(counted),
    purge: async (parent, entry, identity) => (await measureDir(parent, entry, identity)).bytes,
    finishTrash: async (parent, name, identity) => (await measureDir(parent, name, identity)).bytes,
    unlink: () => Promise.resolve(),
    retryKept: async (parent, name, identity) => ({
      removed: false,
      bytes: await measureDir(parent, name, identity).then(
        (m) => m.bytes,
        () => 0,
      ),
      why: '',
    }),
    dropKeeper: () => Promise.resolve(undefined),
    truncate: (dir, name, opts) => measureTruncation(dir, name, opts),
    repairTornTail: (dir, name, opts) => measureTornTail(dir, name, opts),
    chmod: () => Promise.resolve(),
    markLost: (works) => Promise.resolve({ landed: works, taskId: null }),
    releaseReserve: (gc) => reserveBytes(gc),
    releaseInodes: (gc) => reserveInodes(gc),
    createReserve: () => Promise.resolve(true),
    upkeep: () => Promise.resolve(undefined),
    unappliedFreed: () => host.reserveReleased,
    unappliedFreedInodes: () => host.reserveInodesReleased,
  };
}

/** chmod of a scanned entry: through a descriptor of the entry itself, or (unreadable to its owner) an O_PATH one. */
async function applyChmod(entry: ModeEntry, mode: number): Promise<void> {
  await using anchor = await Dir.open(entry.ref.anchor, { followFinal: true });
  if (entry.ref.chain.length === 0) {
    if (!sameIdentity(anchor.identity, entry.identity))
      throw new GcError(Codes.changedSinceScan, `${entry.path} changed since it was scanned`);
    await anchor.chmodSelf(mode);
    return;
  }
  const parent = entry.ref.chain.length === 1 ? anchor : await openChain(anchor, entry.ref.chain.slice(0, -1));
  const name = entry.ref.chain[entry.ref.chain.length - 1] ?? '';
  try {
    if (entry.kind === 'dir') {
      await using d = await parent.openDir(name, entry.identity).catch(async (err: unknown) => {
        if (errnoCode(err) !== 'EACCES') throw err;
        return undefined;
      });
      if (d) {
        await d.chmodSelf(mode);
        return;
      }
    } else {
      const f = await parent.openFile(name).catch((err: unknown) => {
        if (errnoCode(err) !== 'EACCES') throw err;
        return undefined;
      });
      if (f) {
        await using _ = f.fh;
        if (!sameIdentity(identityOf(f.stat), entry.identity))
          throw new GcError(Codes.changedSinceScan, `${entry.path} changed since it was scanned`);
        await f.fh.chmod(mode);
        return;
      }
    }
    // Unreadable to its owner (e.g. mode 0000): chmod through an O_PATH descriptor, never by name.
    await parent.chmodChildNoFollow(name, entry.identity, mode);
  } finally {
    if (parent !== anchor) await parent.close();
  }
}
