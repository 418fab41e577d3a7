// `murmur-gc conversation ls|rm|truncate`: the operator's hands on the conversation records,
// behaving like the runtime's `mur conversation` (docs/design.md §R6) and built only from the
// sweep's own parts — one enumeration (`scanRecords`), one streaming reader (`scanRecord`), one
// staged append-safe rewrite (`truncateRecord`), one removal (`removeDir`), one per-record lock.
//
// Guarantees:
// - Enumeration is the sweep's: stores and contexts are the non-dot subdirectories of
//   `<home>/conversations/`, a context counts only when it holds a regular `conversation.jsonl`;
//   symlinked stores, contexts and record files are reported as problems and never followed; a
//   FIFO (or anything not a regular file) is never opened. Nothing is created by `ls`.
// - Counting streams (one bounded buffer per record, never the whole file in memory).
// - Resolution (`E-CNV-001`/`E-CNV-002`) matches only listed names, so no path is ever built
//   from user input, and it happens before anything beyond the listing is read or written.
// - `truncate` refuses a record some process holds open for writing (`record_held_open`, naming
//   the pids, exit 1; `--force` does not lift it: the lines that process writes would be lost),
//   before anything is locked, logged or held — dry runs too; the rewrite checks again up to its
//   rename. A process that opened it during the rewrite and still holds the replaced file is said
//   (`record_held_open`, exit 1): what it writes there is not in the record.
// - `rm`/`truncate` refuse a context named by a live session (`live_context`) unless forced, refuse
//   records owned by another uid (`foreign_owner`), and take the record's lock
//   (`<home>/gc/locks/<store>/<ctx>.lock`, the one the sweep takes); a lock still held after the
//   wait is `storage_busy` (exit 75). Dry runs run the same checks, only probe the lock, and
//   change nothing on disk: every act goes through the effects engine (src/sweep/effects.ts),
//   real or measure-only.
// - `rm` counts the messages of the directory it removes after moving it aside (so the count is
//   what went); `truncate` passes the record store as the capsule of a headerless record (§6.4).
// - A real `rm`/`truncate` is in murmur-gc's own audit trail like a sweep's removals: an audit
//   session of its own (`<home>/gc/ses_…`, intent logged before the act), one `retention` line
//   with `"trigger":"manual_cli"` (reason `manual` for rm, `max_messages` for truncate, which adds
//   `messages_dropped`), so `history --target` answers for it. A dry run, a refusal, and a
//   truncate that dropped nothing record nothing. A failure settles the audit against the disk
//   at once (what happened is recorded, exit status `failed`); if even that fails, the intent
//   log stays and the next sweep completes it.
// - With `quarantine:` configured, `rm` holds the context and `truncate` holds the dropped lines
//   for the window, as a sweep does (held reasons `conversation_rm`, `conversation_truncate`):
//   `murmur-gc restore CONTEXT-ID` undoes either. A store on another filesystem than the home
//   cannot be held: its context is removed at once, with a `cross_device` warning.
import { dirname } from 'node:path';
import type { GcConfig } from '../config/types.js';
import {
  BusyError,
  Codes,
  GcError,
  HeldOpenError,
  RefusalError,
  describeError,
  errnoCode,
  pidList,
} from '../errors.js';
import {
  CONVERSATIONS_DIR,
  RECORD_FILE,
  countMessages,
  scanRecords,
  type ContextScan,
  type Problem,
  type RecordsScan,
} from '../runtime/inventory.js';
import { scanRecord, sparseFileError } from '../runtime/jsonl.js';
import type { HeldLock } from '../gchome/lock.js';
import { heldOpenBy } from '../runtime/record-truncate.js';
import { Dir, identityOf, processUid, realpath } from '../fsx/safe-fs.js';
import { loadTraceCache } from '../gchome/trace-cache.js';
import type { Logger } from '../log.js';
import type { Progress } from '../sweep/steps/context.js';
import {
  ambiguousContextRefusal,
  compareUtf8,
  listingOf,
  liveContextRefusal,
  locateAnswer,
  locationOf,
  noContextRefusal,
  sortListings,
  type MessageLocation,
  type RecordListing,
  type RefusalText,
  type RemoveResult,
  type TruncateResult,
} from '../runtime/conversation-format.js';
import { MANUAL_TRIGGER } from '../runtime/trace.js';
import type { RetentionItem } from '../gchome/audit.js';
import { truncationLanded } from '../gchome/audit-recovery.js';
import type { ItemMeta } from '../gchome/quarantine-layout.js';
import { scanSessionsWorld } from '../sweep/world.js';
import { commandEffects, type CommandEffects } from '../sweep/effects.js';
import { groupBy } from '../group-by.js';

/** How long `rm`/`truncate` wait for a record lock held by a sweep before giving up (exit 75). */
export const RECORD_LOCK_WAIT_MS = 3000;
const DEBRIS_AGE_MS = 60 * 60 * 1000;

export interface ConversationContext {
  config: GcConfig;
  log: Logger;
  now?: () => number;
  /** Told how far `ls` has read (records, bytes), for a progress line on a terminal. */
  progress?: (p: Progress) => void;
}

function refusal(r: RefusalText): RefusalError {
  return new RefusalError(r.code, r.message, r.hint);
}

function problemOf(target: string, err: unknown): Problem {
  const code = err instanceof GcError ? err.code : errnoCode(err) === 'ELOOP' ? Codes.symlink : Codes.ioError;
  return { target, code, detail: `${target}: ${describeError(err)}` };
}

/**
 * A problem that makes a listing incomplete (exit 1): an I/O failure other than an entry that
 * vanished while it was being read. Symlinks and non-regular files are deliberate skips.
 */
export function isHardProblem(p: Problem): boolean {
  return p.code === Codes.ioError && !/\bENOENT\b/.test(p.detail);
}

/** The murmur home, or undefined when it does not exist (nothing is created). */
async function openHome(home: string): Promise<Dir | undefined> {
  try {
    return await Dir.open(home, { followFinal: true });
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw err;
  }
}

async function withHome<T>(home: string, fn: (dir: Dir | undefined) => Promise<T>): Promise<T> {
  await using dir = await openHome(home);
  return await fn(dir);
}

function scan(
  homeDir: Dir,
  home: string,
  countAll: boolean,
  record: string | undefined,
  nowMs: number,
  progress?: (p: Progress) => void,
): Promise<RecordsScan> {
  return scanRecords(homeDir, home, {
    countAll,
    ...(progress
      ? {
          onCount: (c: { records: number; bytes: number }) =>
            progress({
              step: 'count_records',
              label: 'counting messages',
              done: c.records,
              total: undefined,
              bytes: c.bytes,
              unit: c.records === 1 ? 'record' : 'records',
            }),
        }
      : {}),
    collectModes: false,
    nowMs,
    debrisAgeMs: DEBRIS_AGE_MS,
    isPidAlive: () => true,
    ...(record !== undefined ? { stores: new Set([record]) } : {}),
  });
}

/** `<home>/conversations/` as shown in refusals: through the home's real path. */
export async function conversationsRootDisplay(home: string): Promise<string> {
  let base = home;
  try {
    base = await realpath(home);
  } catch {
    // the home does not exist (or cannot be resolved): show it as configured
  }
  return `${base.endsWith('/') ? base.slice(0, -1) : base}/${CONVERSATIONS_DIR}/`;
}

/** Open `anchor/chain…` one directory at a time (O_NOFOLLOW, same device), closing the steps. */
async function openChain(anchor: Dir, chain: string[]): Promise<Dir> {
  let cur = anchor;
  for (const name of chain) {
    let next: Dir;
    try {
      next = await cur.openDir(name);
    } finally {
      if (cur !== anchor) await cur.close();
    }
    cur = next;
  }
  if (cur === anchor) throw new GcError(Codes.ioError, 'empty path chain');
  return cur;
}

// ---- ls ---------------------------------------------------------------------------------------

export interface ListOutcome {
  rows: RecordListing[];
  problems: Problem[];
}

/** Every listed record (or those of one store), counted, sorted by (record, context). */
export async function listRecords(ctx: ConversationContext, record: string | undefined): Promise<ListOutcome> {
  const nowMs = (ctx.now ?? Date.now)();
  return withHome(ctx.config.home, async (homeDir) => {
    if (!homeDir) return { rows: [], problems: [] };
    const s = await scan(homeDir, ctx.config.home, true, record, nowMs, ctx.progress);
    const rows = s.contexts.map((c) =>
      listingOf({
        record: c.store,
        context: c.context,
        path: c.path,
        messages: c.messages ?? 0,
        bytes: c.file.size,
        mtimeMs: c.file.mtimeMs,
        header: c.header,
      }),
    );
    return { rows: sortListings(rows), problems: s.problems };
  });
}

export interface LocateOutcome {
  locations: MessageLocation[];
  problems: Problem[];
}

/** `ls --message`: where a message id is (present / truncated) across every record store. */
export async function locateMessage(ctx: ConversationContext, msgId: string): Promise<LocateOutcome> {
  const nowMs = (ctx.now ?? Date.now)();
  return withHome(ctx.config.home, async (homeDir) => {
    if (!homeDir) return { locations: [], problems: [] };
    const s = await scan(homeDir, ctx.config.home, false, undefined, nowMs);
    const problems = [...s.problems];
    const found: MessageLocation[] = [];
    let records = 0;
    let before = 0;
    await forEachRecord(homeDir, s.contexts, problems, async (c, recordDir) => {
      const { fh, stat } = await recordDir.openFile(RECORD_FILE);
      await using _ = fh;
      records++;
      const base = before;
      const onRead = ctx.progress
        ? (b: number) =>
            ctx.progress?.({
              step: 'locate_message',
              label: 'looking for the message',
              done: records,
              total: s.contexts.length,
              bytes: base + b,
            })
        : undefined;
      before += Number(stat.size);
      const sparse = sparseFileError(stat);
      if (sparse) throw sparse;
      const r = await scanRecord(fh, Number(stat.size), { findId: msgId, ...(onRead ? { onRead } : {}) });
      const loc = locationOf(
        { record: c.store, context_id: c.context, path: c.path },
        locateAnswer(msgId, { position: r.position, messages: r.messages, header: r.header }),
      );
      if (loc) found.push(loc);
    });
    return { locations: sortListings(found), problems };
  });
}

/** Open each listed context directory (never following a link) and hand it to `fn`. */
async function forEachRecord(
  homeDir: Dir,
  contexts: ContextScan[],
  problems: Problem[],
  fn: (c: ContextScan, dir: Dir) => Promise<void>,
): Promise<void> {
  if (contexts.length === 0) return;
  const byStore = groupBy(contexts, (c) => c.store);
  /** `parent/name` opened, or undefined with the problem noted. */
  const openOrNote = (parent: Dir, name: string) =>
    parent.openDir(name).catch((err: unknown) => {
      problems.push(problemOf(parent.display(name), err));
      return undefined;
    });
  await using root = await openOrNote(homeDir, CONVERSATIONS_DIR);
  if (!root) return;
  for (const [store, list] of byStore) {
    await using sdir = await openOrNote(root, store);
    if (!sdir) continue;
    for (const c of list) {
      try {
        await using cdir = await sdir.openDir(c.context, c.dirIdentity);
        await fn(c, cdir);
      } catch (err) {
        problems.push(problemOf(c.path, err));
      }
    }
  }
}

// ---- resolution ---------------------------------------------------------------------------------

export interface Resolved {
  target: ContextScan;
  /** scan problems that concern the target (reported as warnings) */
  problems: Problem[];
}

/**
 * Reference §6.4 `resolve_context`: the listed records with this context id (under `record` when
 * given). None → E-CNV-001 (problems that explain why, e.g. a symlinked context, are logged
 * first); several → E-CNV-002 naming the stores in list order.
 */
async function resolveContext(
  ctx: ConversationContext,
  homeDir: Dir | undefined,
  context: string,
  record: string | undefined,
  nowMs: number,
  opts: { fileless?: boolean } = {},
): Promise<ContextScan> {
  const home = ctx.config.home;
  if (homeDir) {
    const s = await scan(homeDir, home, false, record, nowMs);
    // `rm` also reaches a context directory that holds no record file, as `mur conversation rm` does.
    const listed = opts.fileless === true ? [...s.contexts, ...s.fileless] : s.contexts;
    const matches = listed.filter((c) => c.context === context).sort((a, b) => compareUtf8(a.store, b.store));
    if (matches.length > 1)
      throw refusal(
        ambiguousContextRefusal(
          context,
          matches.map((m) => m.store),
        ),
      );
    const only = matches[0];
    if (only) return only;
    for (const p of s.problems) {
      if (concerns(p, home, context, record)) ctx.log.warn({ code: p.code, target: p.target }, p.detail);
    }
  }
  throw refusal(noContextRefusal(context, record, await conversationsRootDisplay(home)));
}

function concerns(p: Problem, home: string, context: string, record: string | undefined): boolean {
  const root = `${home.endsWith('/') ? home.slice(0, -1) : home}/${CONVERSATIONS_DIR}/`;
  if (!p.target.startsWith(root)) return false;
  const [store, ctxName] = p.target.slice(root.length).split('/');
  if (record !== undefined && store !== record) return false;
  return ctxName === undefined ? record !== undefined : ctxName === context;
}

// ---- checks shared by rm and truncate ------------------------------------------------------------

function checkOwner(target: ContextScan): void {
  const uid = processUid();
  if (target.dirUid !== uid || target.file.uid !== uid) {
    throw new GcError(
      Codes.foreignOwner,
      `${dirname(target.path)} belongs to uid ${target.dirUid !== uid ? target.dirUid : target.file.uid}, not ${uid}; murmur-gc only changes its own user's records`,
    );
  }
}

/** Refuses a context a live session uses (docs/design.md §2) unless `force`; then it only warns. */
async function checkLive(
  ctx: ConversationContext,
  homeDir: Dir,
  target: ContextScan,
  action: 'remove' | 'truncate',
  force: boolean,
  nowMs: number,
): Promise<void> {
  const cache = await loadTraceCache(homeDir);
  let world: Awaited<ReturnType<typeof scanSessionsWorld>>;
  try {
    world = await scanSessionsWorld(ctx.config, homeDir, cache, nowMs);
  } finally {
    cache.close();
  }
  for (const p of world.problems) ctx.log.warn({ code: p.code, target: p.target }, p.detail);
  if (!world.liveContexts.has(target.context)) return;
  const v = world.views.find(
    (w) =>
      w.liveness === 'live' && w.scan.trace?.ok === true && w.scan.trace.summary.contextIds.includes(target.context),
  );
  const r = liveContextRefusal(target.context, v ? { id: v.scan.name, root: v.root, why: v.why } : undefined, action);
  if (!force) throw refusal(r);
  ctx.log.warn(
    { code: Codes.liveContext, target: `${target.store}/${target.context}` },
    `${r.message} — going ahead because of --force`,
  );
}

function busy(target: ContextScan): BusyError {
  return new BusyError(
    `${target.path} is locked by another murmur-gc (a sweep is working on this record); try again when it has finished`,
  );
}

/** The effects of one `rm`/`truncate` (src/sweep/effects.ts): real, or measure-only for --dry-run. */
function effectsOf(ctx: ConversationContext, homeDir: Dir, opts: ActOptions, now: () => number): CommandEffects {
  return commandEffects({
    home: ctx.config.home,
    homeDir,
    measureOnly: opts.dryRun,
    now,
    log: ctx.log,
    recordLockWaitMs: opts.lockWaitMs ?? RECORD_LOCK_WAIT_MS,
  });
}

/** The record's lock, the sweep's (a dry run only probes it), or busy. */
async function lockRecord(
  ctx: ConversationContext,
  fx: CommandEffects,
  homeDir: Dir,
  target: ContextScan,
): Promise<HeldLock | undefined> {
  const lock = await fx.lockRecord(homeDir, target.store, target.context);
  if (lock === 'busy') throw busy(target);
  if (lock?.brokeDeadHolder) {
    ctx.log.warn(
      { code: Codes.processInterrupted, target: `${target.store}/${target.context}` },
      'the record lock of a murmur-gc that died was removed',
    );
  }
  return lock;
}

/**
 * Messages of the record in `dir` (streaming); the file must still be a regular file. No file:
 * 0 (a context directory without a record, which `rm` removes). Not UTF-8: 0, as the runtime.
 * Too hostile to count (`sparse_file`, `line_too_long`, docs/limits.md): 0, and it is removed all the same.
 */
async function countIn(dir: Dir, signal?: AbortSignal): Promise<number> {
  const st = await dir.lstat(RECORD_FILE);
  if (!st) return 0;
  if (!st.isFile())
    throw new GcError(Codes.changedSinceScan, `${dir.display(RECORD_FILE)} is no longer a regular file`);
  try {
    return (await countMessages(dir, RECORD_FILE, signal)).messages;
  } catch (err) {
    const code = errnoCode(err);
    if (code === Codes.sparseFile || code === Codes.lineTooLong) return 0;
    throw err;
  }
}

export interface ActOptions {
  context: string;
  record: string | undefined;
  dryRun: boolean;
  force: boolean;
  lockWaitMs?: number;
}

// ---- rm -----------------------------------------------------------------------------------------

/** Remove a whole context directory (the only way to reclaim a headerless record). */
export async function removeContext(ctx: ConversationContext, opts: ActOptions): Promise<RemoveResult> {
  const now = ctx.now ?? Date.now;
  const nowMs = now();
  return withHome(ctx.config.home, async (homeDir) => {
    const target = await resolveContext(ctx, homeDir, opts.context, opts.record, nowMs, { fileless: true });
    if (!homeDir) throw new GcError(Codes.ioError, 'unreachable: resolved without a home');
    checkOwner(target);
    await checkLive(ctx, homeDir, target, 'remove', opts.force, nowMs);
    const dirPath = dirname(target.path);
    const windowMs = ctx.config.quarantine ? ctx.config.quarantine.windowSecs * 1000 : undefined;
    const untilMs = windowMs === undefined ? undefined : nowMs + windowMs;

    await using fx = effectsOf(ctx, homeDir, opts, now);
    const lock = await lockRecord(ctx, fx, homeDir, target);
    try {
      await using storeDir = await openChain(homeDir, [CONVERSATIONS_DIR, target.store]);
      // Re-read under the lock: a sweep may have acted while we waited.
      const st = await storeDir.lstat(target.context);
      if (!st?.isDirectory())
        throw new GcError(Codes.changedSinceScan, `${dirPath} is no longer a context directory; nothing removed`);
      const identity = identityOf(st);
      const item: RetentionItem = {
        store: 'records',
        reason: 'manual',
        target: target.context,
        parent: storeDir.path,
        trigger: MANUAL_TRIGGER,
      };
      let messages = 0;
      const count = async (d: Dir) => {
        messages = await countIn(d, lock?.signal);
      };
      let held: { until_ms: number; path: string } | undefined;
      try {
        // In the audit trail before the act (no removal without its audit).
        held = await fx.audited(
          { kind: 'remove_record', ...item },
          async () => {
            if (untilMs !== undefined) {
              // The undo window: held like a sweep's removal (reason conversation_rm), unless the
              // store is on another filesystem than the home (then removed at once, with a warning).
              const meta: ItemMeta = {
                kind: 'context',
                store: target.store,
                context: target.context,
                removed_ms: nowMs,
                until_ms: untilMs,
                reason: 'conversation_rm',
                run: fx.auditId,
              };
              try {
                const h = await fx.holdContext(homeDir, storeDir, target.context, identity, meta, count);
                return { until_ms: untilMs, path: h.path };
              } catch (err) {
                if (!(err instanceof GcError && err.code === Codes.crossDevice)) throw err;
                ctx.log.warn(
                  { code: Codes.crossDevice, target: `${target.store}/${target.context}` },
                  `${describeError(err)}; removed at once`,
                );
              }
            }
            await fx.remove(storeDir, target.context, identity, {
              verify: count,
              ...(lock ? { signal: lock.signal } : {}),
            });
            return undefined;
          },
          (h) => ({ retention: h ? { ...item, heldUntilMs: h.until_ms } : item }),
        );
      } catch (err) {
        // Settle against the disk now: gone from the store means it was removed (or held).
        await settle(ctx, fx, 'failed', async () =>
          (await storeDir.lstat(target.context).catch(() => st)) === undefined ? [item] : [],
        );
        throw err;
      }
      await settle(ctx, fx, 'ok');
      return {
        action: 'remove',
        record: target.store,
        context_id: target.context,
        path: dirPath,
        messages,
        dry_run: opts.dryRun,
        ...(held ? { held } : {}),
      };
    } finally {
      await lock?.release();
    }
  });
}

// ---- truncate -----------------------------------------------------------------------------------

/** Keep the newest `keep` messages through the sweep's staged, append-safe rewrite. */
export async function truncateContext(
  ctx: ConversationContext,
  opts: ActOptions & { keep: number },
): Promise<TruncateResult> {
  const now = ctx.now ?? Date.now;
  const nowMs = now();
  return withHome(ctx.config.home, async (homeDir) => {
    const target = await resolveContext(ctx, homeDir, opts.context, opts.record, nowMs);
    if (!homeDir) throw new GcError(Codes.ioError, 'unreachable: resolved without a home');
    checkOwner(target);
    await checkLive(ctx, homeDir, target, 'truncate', opts.force, nowMs);
    await refuseHeldOpen(homeDir, target);

    await using fx = effectsOf(ctx, homeDir, opts, now);
    const lock = await lockRecord(ctx, fx, homeDir, target);
    try {
      await using cdir = await openChain(homeDir, [CONVERSATIONS_DIR, target.store, target.context]);
      const at = now();
      const untilMs = ctx.config.quarantine ? at + ctx.config.quarantine.windowSecs * 1000 : undefined;
      // The undo window: the dropped lines are held (reason conversation_truncate); the hold
      // names the audit session of this truncation as its run (`restore --sweep` finds it by it).
      const keeper =
        untilMs !== undefined
          ? await fx.dropKeeper(homeDir, {
              store: target.store,
              context: target.context,
              removed_ms: at,
              until_ms: untilMs,
              reason: 'conversation_truncate',
              run: fx.auditId,
              at_ms: String(at),
            })
          : undefined;
      // In the audit trail before the rewrite; the intent names the marker the new header will
      // carry, so what happened can be read back from the record itself.
      const intent = {
        kind: 'truncate_record',
        store: 'records',
        reason: 'max_messages',
        parent: dirname(cdir.path),
        target: target.context,
        at_ms: String(at),
        dropped_before: String(target.header?.truncated?.dropped ?? 0n),
        trigger: MANUAL_TRIGGER,
      } as const;
      const item = {
        store: 'records',
        reason: 'max_messages',
        target: target.context,
        parent: intent.parent,
        trigger: MANUAL_TRIGGER,
      } as const;
      let out: Awaited<ReturnType<typeof fx.truncate>>;
      try {
        out = await fx.audited(
          intent,
          () =>
            fx.truncate(cdir, RECORD_FILE, {
              keep: opts.keep,
              fallbackCapsule: target.store,
              nowMs: at,
              ...(lock ? { signal: lock.signal } : {}),
              ...(keeper ? { keepDropped: keeper.hook } : {}),
            }),
          (o) => ({
            done: { messages_dropped: o.dropped },
            ...(o.dropped > 0
              ? {
                  retention: {
                    ...item,
                    messagesDropped: o.dropped,
                    ...(keeper && untilMs !== undefined ? { heldUntilMs: untilMs } : {}),
                  },
                }
              : {}),
          }),
        );
      } catch (err) {
        // Held open by the time of the rename: nothing was renamed, so nothing is held either.
        if (err instanceof HeldOpenError) await keeper?.settle(false).catch(() => undefined);
        await settle(ctx, fx, 'failed', async () => {
          const dropped = await truncationLanded({ op: 'intent', seq: 0, ...intent });
          return dropped ? [{ ...item, messagesDropped: dropped }] : [];
        });
        throw err;
      }
      await keeper?.settle(out.dropped > 0, out.carriedTo);
      await settle(ctx, fx, 'ok');
      const q = fx.quarantinePath();
      const held =
        untilMs === undefined || out.dropped === 0
          ? undefined
          : {
              until_ms: untilMs,
              path:
                keeper?.entry !== undefined && q !== undefined
                  ? `${q}/${keeper.entry}/${keeper.payload}`
                  : `${ctx.config.home}/gc/quarantine`,
            };
      const outOfOrderLines = out.outOfOrder ? (out.outOfOrderLines ?? 0) : 0;
      const stillHeld = out.heldBy ?? [];
      if (out.outOfOrder) {
        // "none lost" only when it was checked: every replaced file let go, and carried whole.
        const carried = stillHeld.length === 0 ? ' (every line written to the replaced file is in the record)' : '';
        ctx.log.warn(
          { code: Codes.concurrentAppend, path: target.path, lines_out_of_order: outOfOrderLines },
          `a writer kept appending during the rewrite; ${outOfOrderLines} of its lines were placed after newer ones${carried}`,
        );
      } else if (out.reordered && stillHeld.length === 0) {
        ctx.log.info(
          { code: Codes.concurrentAppend, path: target.path },
          'a writer appended during the rename; its lines were kept in order',
        );
      }
      if (stillHeld.length > 0) {
        ctx.log.error(
          { code: Codes.recordHeldOpen, path: target.path, pids: stillHeld },
          `${pidList(stillHeld)} opened the record during the rewrite and still held the replaced file open for writing when it stopped waiting: lines written there from then on are not in the record`,
        );
      }
      return {
        action: 'truncate',
        record: target.store,
        context_id: target.context,
        path: target.path,
        dropped: out.dropped,
        kept: out.kept,
        oldest_surviving_id: out.dropped === 0 ? '' : out.oldestSurvivingId,
        last_dropped_id: out.dropped === 0 ? '' : out.lastDroppedId,
        dry_run: opts.dryRun,
        ...(out.outOfOrder ? { concurrent_append: { lines_out_of_order: outOfOrderLines } } : {}),
        ...(stillHeld.length > 0 ? { held_open_by: stillHeld } : {}),
        ...(held ? { held } : {}),
      };
    } finally {
      await lock?.release();
    }
  });
}

/** `record_held_open` (exit 1, `--force` or not) when a process holds the record open for writing. */
async function refuseHeldOpen(homeDir: Dir, target: ContextScan): Promise<void> {
  await using cdir = await openChain(homeDir, [CONVERSATIONS_DIR, target.store, target.context]);
  const pids = await heldOpenBy(cdir, RECORD_FILE, { expect: target.file.identity });
  if (pids.length > 0) throw new HeldOpenError(target.path, pids);
}

/**
 * Finish a manual action's audit: its retention line, or — when nothing changed — no audit at all
 * (the session is removed). A failure here is a warning: the intent log stays, and the next
 * sweep completes the audit from the disk.
 */
async function settle(
  ctx: ConversationContext,
  fx: CommandEffects,
  status: 'ok' | 'failed',
  more?: () => Promise<RetentionItem[]>,
): Promise<void> {
  try {
    await fx.finishAudit(status, more);
  } catch (err) {
    await fx.abandonAudit();
    ctx.log.warn(
      { code: Codes.ioError, audit: fx.auditId },
      `the audit trace could not be completed (${describeError(err)}); the next sweep completes it`,
    );
  }
}
