// One sweep over a Murmur home: inventory → pure plans → step-by-step execution → audit.
// Guarantees:
// - --dry-run runs the same inventory, liveness checks, lock probes and planners as a real run
//   and changes nothing on disk (no lock taken, no cache written, no audit, no chmod); the
//   actions it reports are the ones a real run on the unchanged tree performs.
// - One sweep at a time (`<home>/gc/sweep.lock`, BusyError → exit 75); one writer per record.
// - Live sessions and the contexts their traces name are never removed, truncated or reconciled.
// - Every failure is reported per item with a stable code; the rest of the run continues.
// - Each destructive step is intended in the audit log before it runs; the audit trace is
//   finished at the end (or completed by the next run if this one is killed).
import { dirname } from 'node:path';
import type { GcConfig } from '../config/types.js';
import { BusyError, Codes, GcError, codeOf, describeError, errnoCode, isAbort } from '../errors.js';
import { mintId } from '../murmur/ids.js';
import { planMode, type ChmodAction } from '../plan/modes.js';
import { planRecords } from '../plan/records.js';
import { planSessions } from '../plan/sessions.js';
import {
  CONVERSATIONS_DIR,
  RECORD_FILE,
  scanHomeModes,
  scanRecords,
  type ContextScan,
  type Debris,
  type ModeEntry,
  type Problem,
} from '../io/inventory.js';
import { acquireLock, ensureLockDir, probeLock, recordLockPath, sweepLockPath, type HeldLock } from '../io/lock.js';
import { truncateRecord } from '../io/record-truncate.js';
import { finishTrash, measureDir, removeDir } from '../io/remove.js';
import { probeProcess } from '../io/running.js';
import { Dir, formatMode, identityOf, lstatPath, processUid, sameIdentity } from '../io/safe-fs.js';
import { loadTraceCache, saveTraceCache } from '../io/trace-cache-file.js';
import { MemoryTraceCache } from '../io/trace-scan.js';
import { AuditSession, GC_DIR, type LostTask, type RetentionItem } from './audit.js';
import { reconcileSession, type ReconcileContext } from './reconcile.js';
import { scanSessionsWorld } from './world.js';
import { recoverInterruptedAudits } from './recover.js';
import type { ErrorEntry, Skipped, SweepReport } from './report.js';
import type { Logger } from '../log.js';
import { VERSION } from '../version.js';

export interface SweepOptions {
  config: GcConfig;
  dryRun: boolean;
  log: Logger;
  now?: () => number;
  /** Aborted on SIGTERM/SIGINT: the sweep stops at the next safe point between items. */
  signal?: AbortSignal;
  /** How long a record lock may be waited for before the record is skipped as busy. */
  recordLockWaitMs?: number;
}

const DEBRIS_AGE_MS = 60 * 60 * 1000;

export async function runSweep(opts: SweepOptions): Promise<SweepReport> {
  const now = opts.now ?? Date.now;
  const nowMs = now();
  const { config, log } = opts;
  const home = config.home;
  const report: SweepReport = {
    dry_run: opts.dryRun,
    home,
    home_exists: false,
    started_ms: nowMs,
    duration_ms: 0,
    actions: [],
    skipped: [],
    errors: [],
    audit: null,
    bytes_freed: 0,
    inventory: { sessions_roots: 0, sessions: 0, records: 0, traces_read: 0, traces_cached: 0, records_counted: 0, records_count_cached: 0 },
  };
  const skip = (s: Skipped) => {
    report.skipped.push(s);
    log.warn({ code: s.code, target: s.target }, s.detail);
  };
  const fail = (e: ErrorEntry) => {
    report.errors.push(e);
    log.error({ code: e.code, target: e.target }, e.detail);
  };
  const problem = (p: Problem) => (p.code === Codes.ioError ? fail(p) : skip(p));
  const finishReport = () => {
    report.duration_ms = now() - nowMs;
    return report;
  };

  // ---- the home -------------------------------------------------------------------------------
  const homeSt = await lstatPath(home);
  const configuredRootsExist = await anyExists(config.sessions.map((s) => s.root));
  if (!homeSt) {
    if (!configuredRootsExist) {
      report.message = `No murmur home at ${home} and no configured sessions root exists: nothing to sweep. (murmur-gc creates nothing until the runtime has written state.)`;
      return finishReport();
    }
  } else if (!homeSt.isDirectory() && !homeSt.isSymbolicLink()) {
    throw new GcError(Codes.ioError, `${home} is not a directory`);
  }
  report.home_exists = homeSt !== undefined;

  // ---- one sweep at a time --------------------------------------------------------------------
  let sweepLock: HeldLock | undefined;
  let homeDir: Dir | undefined;
  if (opts.dryRun) {
    if (homeSt && (await probeLock(sweepLockPath(home)))) {
      throw new BusyError(`another murmur-gc sweep holds ${sweepLockPath(home)}; try again when it has finished`);
    }
  } else {
    homeDir = await openOrCreateHome(home, homeSt !== undefined);
    const gc = await homeDir.mkdir(GC_DIR, 0o700);
    await gc.close();
    sweepLock = await acquireLock(sweepLockPath(home), { waitMs: 0 });
    if (sweepLock?.brokeDeadHolder) {
      skip({ target: sweepLockPath(home), code: Codes.processInterrupted, detail: 'the sweep lock of a murmur-gc that died was removed' });
    }
    if (!sweepLock) throw new BusyError(`another murmur-gc sweep holds ${sweepLockPath(home)}; try again when it has finished`);
  }
  const signals = [sweepLock?.signal, opts.signal].filter((s): s is AbortSignal => s !== undefined);
  const signal = signals.length === 0 ? undefined : signals.length === 1 ? signals[0] : AbortSignal.any(signals);

  let audit: AuditSession | undefined;
  const auditId = mintId('ses_');
  const retentionItems: RetentionItem[] = [];
  const lostTasks: LostTask[] = [];
  try {
    if (!homeDir && homeSt) homeDir = await Dir.open(home, { followFinal: true });
    if (homeDir && Number(homeDir.stat.uid) !== processUid()) {
      throw new GcError(Codes.foreignOwner, `${home} belongs to uid ${homeDir.stat.uid}, not ${processUid()}; murmur-gc only maintains its own user's home`);
    }

    // Complete the audit of a run that was killed mid-way (real runs only: it writes).
    if (homeDir && !opts.dryRun) {
      for (const r of await recoverInterruptedAudits(homeDir, home, now())) {
        skip({ target: r.target, code: Codes.processInterrupted, detail: r.detail });
      }
    }

    const cache = homeDir ? await loadTraceCache(homeDir) : new MemoryTraceCache();

    // ---- running records, sessions roots, liveness -------------------------------------------
    for (const s of config.sessions) {
      if (s.problem) fail({ target: s.root, code: s.problem.code, detail: s.problem.detail });
    }
    const world = await scanSessionsWorld(config, homeDir, cache, nowMs, signal);
    world.problems.forEach(problem);
    Object.assign(report.inventory, world.counts);
    const { roots, rootScans, views, liveContexts } = world;

    // ---- records ------------------------------------------------------------------------------
    const countOwned = new Set<string>();
    for (const p of config.records) if (p.retain?.maxMessages !== undefined) countOwned.add(`${p.store}\0${p.capsule}`);
    const recordsScan = homeDir
      ? await scanRecords(homeDir, home, {
          countOwned,
          collectModes: true,
          nowMs,
          debrisAgeMs: DEBRIS_AGE_MS,
          isPidAlive: () => false, // decided below with a real probe (async)
          countCache: cache,
          ...(signal ? { signal } : {}),
        })
      : undefined;
    recordsScan?.problems.forEach(problem);
    report.inventory.records = recordsScan?.contexts.length ?? 0;
    report.inventory.records_counted = recordsScan?.counted ?? 0;
    report.inventory.records_count_cached = recordsScan?.countsCached ?? 0;
    // Temp files: decide pid liveness now (async probe) — a temp of a live process is in use.
    const debris: Debris[] = [...rootScans.flatMap((r) => r.scan.debris)];
    for (const d of recordsScan?.debris ?? []) debris.push(d);
    const liveTempPids = new Set<number>();
    for (const d of debris) {
      if (d.kind !== 'temp_file') continue;
      const pid = Number(/\.(\d+)\.[0-9a-f]+\.tmp$/.exec(d.path)?.[1] ?? 0);
      if (pid > 0 && pid !== process.pid && (await probeProcess(pid, undefined)) === 'alive') liveTempPids.add(pid);
    }

    // ---- modes --------------------------------------------------------------------------------
    const modeEntries: ModeEntry[] = [];
    if (homeDir) {
      const hm = await scanHomeModes(homeDir, home);
      hm.problems.forEach(problem);
      modeEntries.push(...hm.modes, ...(recordsScan?.modes ?? []));
    }
    const chmods: { entry: ModeEntry; action: ChmodAction }[] = [];
    const uid = processUid();
    for (const e of modeEntries) {
      const r = planMode(e, uid);
      if (!r) continue;
      if ('code' in r) {
        // A symlinked store/context is already reported by the scan; report others once.
        if (r.code !== 'symlink' || e.ref.chain.length <= 1) skip({ target: r.path, code: r.code, detail: r.detail });
        continue;
      }
      chmods.push({ entry: e, action: r });
    }

    // ================================ execution =====================================
    const ensureAudit = async (): Promise<AuditSession | undefined> => {
      if (opts.dryRun || !homeDir) return undefined;
      if (!audit) {
        audit = await AuditSession.begin(homeDir, auditId, VERSION, now());
        report.audit = auditId;
      }
      return audit;
    };

    // 1. debris of interrupted runs
    for (const d of debris) {
      signal?.throwIfAborted();
      const pid = Number(/\.(\d+)\.[0-9a-f]+\.tmp$/.exec(d.path)?.[1] ?? 0);
      if (d.kind === 'temp_file' && liveTempPids.has(pid)) continue;
      try {
        const bytes = await actOnDebris(d, opts.dryRun);
        report.actions.push({ kind: 'remove_debris', path: d.path, code: 'process_interrupted', detail: d.detail, bytes });
        report.bytes_freed += bytes;
        log.warn({ code: Codes.processInterrupted, path: d.path, bytes }, 'leftover of an interrupted run removed');
      } catch (err) {
        fail({ target: d.path, code: codeOf(err), detail: `${d.path}: ${describeError(err)}` });
      }
    }

    // 2. modes
    for (const { entry, action } of chmods) {
      try {
        if (!opts.dryRun) await applyChmod(entry, action.to);
        report.actions.push({ kind: 'chmod', path: action.path, from: formatMode(action.from), to: formatMode(action.to) });
        log.info({ path: action.path, from: formatMode(action.from), to: formatMode(action.to) }, 'mode reasserted');
      } catch (err) {
        fail({ target: action.path, code: codeOf(err), detail: `${action.path}: ${describeError(err)}` });
      }
    }

    // 3. sessions
    const removedSessions = new Set<string>();
    for (const { input, scan } of rootScans) {
      if (!scan.exists) continue;
      const mine = views.filter((v) => v.root === input.root);
      const plan = planSessions(
        mine.map((v) => ({ name: v.scan.name, liveness: v.liveness, livenessWhy: v.why })),
        input.retain,
        nowMs,
        input.isAuditRoot ? auditId : undefined,
      );
      for (const s of plan.skip) skip({ target: `${input.root}/${s.name}`, code: s.code, detail: s.detail });
      if (plan.remove.length === 0) continue;
      let rootDir: Dir;
      try {
        rootDir = await Dir.open(input.root);
        if (!scan.identity || !sameIdentity(rootDir.identity, scan.identity)) {
          await rootDir.close();
          throw new GcError(Codes.changedSinceScan, `${input.root} was replaced since it was scanned`);
        }
      } catch (err) {
        fail({ target: input.root, code: codeOf(err), detail: `${input.root}: ${describeError(err)}` });
        continue;
      }
      try {
        for (const r of plan.remove) {
          signal?.throwIfAborted();
          const view = mine.find((v) => v.scan.name === r.name);
          if (!view) continue;
          const target = `${input.root}/${r.name}`;
          if (view.scan.uid !== uid) {
            skip({ target, code: Codes.foreignOwner, detail: `${target} belongs to uid ${view.scan.uid}; not removed` });
            continue;
          }
          try {
            let bytes: number;
            if (opts.dryRun) {
              bytes = (await measureDir(rootDir, r.name, view.scan.identity)).bytes;
            } else {
              const a = await ensureAudit();
              const seq = await a?.intend({ kind: 'remove_session', store: 'sessions', reason: r.reason, parent: input.root, target: r.name });
              // A session written since the scan (a resume reading or reconciling it, a late
              // teardown) is put back and kept: liveness is re-checked at the moment of action.
              const unchanged = async (sdir: Dir) => {
                const st = await sdir.lstat('trace.jsonl');
                const scanned = view.scan.trace?.ok ? view.scan.trace : undefined;
                const same = scanned
                  ? st !== undefined && Number(st.size) === scanned.size && Number(st.mtimeMs) === scanned.mtimeMs
                  : st === undefined || view.scan.trace !== undefined;
                if (!same) throw new GcError(Codes.changedSinceScan, `${target} was written since it was scanned; kept`);
              };
              bytes = (await removeDir(rootDir, r.name, view.scan.identity, { runId: auditId, verifyInTrash: unchanged, ...(signal ? { signal } : {}) })).bytes;
              if (a && seq !== undefined) await a.done(seq);
              retentionItems.push({ store: 'sessions', reason: r.reason, target: r.name });
            }
            removedSessions.add(target);
            report.actions.push({ kind: 'remove_session', root: input.root, target: r.name, reason: r.reason, bytes });
            report.bytes_freed += bytes;
            log.info({ root: input.root, target: r.name, reason: r.reason, bytes }, opts.dryRun ? 'would remove session' : 'session removed');
          } catch (err) {
            if (isAbort(err)) throw err;
            const code = codeOf(err);
            (code === Codes.changedSinceScan ? skip : fail)({ target, code, detail: `${target}: ${describeError(err)}` });
          }
        }
      } finally {
        await rootDir.close();
      }
    }

    // 4 + 5. records
    if (homeDir && recordsScan?.exists) {
      for (const policy of config.records) {
        const contexts = recordsScan.contexts.filter((c) => c.store === policy.store);
        const plan = planRecords(
          contexts.map((c) => ({ context: c.context, header: c.header, mtimeMs: c.file.mtimeMs, messages: c.messages })),
          policy.capsule,
          policy.retain,
          liveContexts,
          nowMs,
        );
        for (const s of plan.skip) skip({ target: `${policy.store}/${s.context}`, code: s.code, detail: s.detail });
        for (const r of plan.remove) {
          signal?.throwIfAborted();
          const c = contexts.find((x) => x.context === r.context);
          if (!c) continue;
          await removeRecord(homeDir, c, policy.store, r.reason);
        }
        for (const t of plan.truncate) {
          signal?.throwIfAborted();
          const c = contexts.find((x) => x.context === t.context);
          if (!c) continue;
          await truncateOne(homeDir, c, policy.capsule, t.keep);
        }
      }
    }

    // 6. reconciliation of lost background work (dead or finished sessions only)
    const reconcileCtx: ReconcileContext = {
      home,
      homeDir,
      auditId,
      now,
      log,
      ensureAudit,
      action: (a) => report.actions.push(a),
      skip,
      fail,
      task: (t) => lostTasks.push(t),
    };
    for (const v of views) {
      signal?.throwIfAborted();
      const rootInput = roots.find((r) => r.root === v.root);
      if (!rootInput || rootInput.isAuditRoot) continue;
      if (v.liveness === 'live') continue;
      if (!v.scan.trace?.ok || v.scan.trace.summary.unaccounted.length === 0) continue;
      const target = `${v.root}/${v.scan.name}`;
      if (removedSessions.has(target)) continue;
      await reconcileSession(reconcileCtx, v, opts.dryRun);
    }

    // 7. finish the audit
    if (audit) {
      await audit.finish(retentionItems, lostTasks, report.errors.length === 0 ? 'ok' : 'failed', now());
      log.info({ audit: auditId }, 'audit trace written');
    }
    if (!opts.dryRun && homeDir) await saveTraceCache(homeDir, cache).catch((err: unknown) => log.warn({ code: Codes.ioError, err: describeError(err) }, 'trace cache not saved'));
    return finishReport();

    // ---------------------------------------------------------------------------------------
    async function removeRecord(home: Dir, c: ContextScan, store: string, reason: 'max_age'): Promise<void> {
      const target = `${store}/${c.context}`;
      if (c.dirUid !== uid || c.file.uid !== uid) {
        skip({ target, code: Codes.foreignOwner, detail: `${c.path} belongs to another user; not removed` });
        return;
      }
      let lock: HeldLock | undefined;
      let storeDir: Dir | undefined;
      try {
        const held = await holdRecord(home, store, c);
        if (held === 'busy') return;
        lock = held;
        storeDir = await openChain(home, [CONVERSATIONS_DIR, store]);
        const verify = async (ctx: Dir) => {
          const st = await ctx.lstat(RECORD_FILE);
          if (!st || !sameIdentity(identityOf(st), c.file.identity) || Number(st.size) !== c.file.size || Number(st.mtimeMs) !== c.file.mtimeMs) {
            throw new GcError(Codes.concurrentAppend, `${c.path} was written since it was scanned; kept`);
          }
        };
        let bytes: number;
        if (opts.dryRun) {
          const ctx = await storeDir.openDir(c.context, c.dirIdentity);
          try {
            await verify(ctx);
          } finally {
            await ctx.close();
          }
          bytes = (await measureDir(storeDir, c.context, c.dirIdentity)).bytes;
        } else {
          const a = await ensureAudit();
          const seq = await a?.intend({ kind: 'remove_record', store: 'records', reason, parent: storeDir.path, target: c.context });
          const lockSignal = lock?.signal;
          bytes = (
            await removeDir(storeDir, c.context, c.dirIdentity, {
              runId: auditId,
              verifyInTrash: verify,
              ...(lockSignal ? { signal: lockSignal } : {}),
            })
          ).bytes;
          if (a && seq !== undefined) await a.done(seq);
          retentionItems.push({ store: 'records', reason, target: c.context });
        }
        report.actions.push({ kind: 'remove_record', record: store, target: c.context, reason, path: c.path, bytes });
        report.bytes_freed += bytes;
        log.info({ record: store, target: c.context, reason, bytes }, opts.dryRun ? 'would remove record' : 'record removed');
      } catch (err) {
        recordFailure(err, target, lock);
      } finally {
        await storeDir?.close();
        await lock?.release();
      }
    }

    async function truncateOne(home: Dir, c: ContextScan, capsule: string, keep: number): Promise<void> {
      const target = `${c.store}/${c.context}`;
      if (c.file.uid !== uid) {
        skip({ target, code: Codes.foreignOwner, detail: `${c.path} belongs to another user; not truncated` });
        return;
      }
      let lock: HeldLock | undefined;
      let ctx: Dir | undefined;
      try {
        const held = await holdRecord(home, c.store, c);
        if (held === 'busy') return;
        lock = held;
        ctx = await openChain(home, [CONVERSATIONS_DIR, c.store, c.context]);
        if (!sameIdentity(ctx.identity, c.dirIdentity)) throw new GcError(Codes.changedSinceScan, `${ctx.path} was replaced since it was scanned`);
        let seq: number | undefined;
        const a = await ensureAudit();
        if (a) seq = await a.intend({ kind: 'truncate_record', store: 'records', reason: 'max_messages', parent: dirname(ctx.path), target: c.context });
        const lockSignal = lock?.signal;
        const out = await truncateRecord(ctx, RECORD_FILE, {
          keep,
          fallbackCapsule: capsule,
          nowMs: now(),
          dryRun: opts.dryRun,
          expect: c.file.identity,
          ...(c.messages !== undefined ? { known: { messages: c.messages, size: c.file.size, mtimeMs: c.file.mtimeMs, identity: c.file.identity } } : {}),
          ...(lockSignal ? { signal: lockSignal } : {}),
        });
        if (a && seq !== undefined) await a.done(seq, { messages_dropped: out.dropped });
        if (out.dropped === 0) return;
        if (!opts.dryRun) retentionItems.push({ store: 'records', reason: 'max_messages', target: c.context, messagesDropped: out.dropped });
        const freed = Math.max(0, out.bytesBefore - out.bytesAfter);
        report.actions.push({
          kind: 'truncate_record',
          record: c.store,
          target: c.context,
          reason: 'max_messages',
          messages_dropped: out.dropped,
          kept: out.kept,
          path: c.path,
          bytes: freed,
        });
        report.bytes_freed += freed;
        if (out.outOfOrder) {
          log.warn({ code: Codes.concurrentAppend, path: c.path, rounds: out.rounds, still_held: out.stillHeld }, 'a writer kept appending to the replaced file; its last lines were appended after newer ones (none lost)');
        } else if (out.reordered) {
          log.info({ code: Codes.concurrentAppend, path: c.path }, 'writers appended during the rename; their lines were kept in order');
        }
        log.info({ record: c.store, target: c.context, dropped: out.dropped, kept: out.kept, appended_during: out.appendedDuring }, opts.dryRun ? 'would truncate record' : 'record truncated');
      } catch (err) {
        recordFailure(err, target, lock);
      } finally {
        await ctx?.close();
        await lock?.release();
      }
    }

    /**
     * The record's lock (a real run) or a probe of it (a dry run: same answer, nothing created).
     * 'busy' has already been reported as skipped.
     */
    async function holdRecord(home: Dir, store: string, c: ContextScan): Promise<HeldLock | undefined | 'busy'> {
      const busy = opts.dryRun ? await probeLock(recordLockPath(config.home, store, c.context)) : undefined;
      const lock = opts.dryRun ? undefined : await lockRecord(home, store, c.context);
      if (busy === true || (!opts.dryRun && !lock)) {
        skip({ target: `${store}/${c.context}`, code: Codes.storageBusy, detail: `${c.path} is locked by another murmur-gc; skipped this sweep` });
        return 'busy';
      }
      return lock;
    }

    /** A record step failed: a change under our feet is a skip, anything else an error; aborts propagate. */
    function recordFailure(err: unknown, target: string, lock: HeldLock | undefined): void {
      if (isAbort(err) && !lock?.signal.aborted) throw err;
      const code = codeOf(err);
      (code === Codes.concurrentAppend || code === Codes.changedSinceScan ? skip : fail)({ target, code, detail: describeError(err) });
    }

    async function lockRecord(home: Dir, store: string, context: string): Promise<HeldLock | undefined> {
      await ensureLockDir(home, [encodeURIComponent(store)]);
      return acquireLock(recordLockPath(config.home, store, context), { waitMs: opts.recordLockWaitMs ?? 2000 });
    }

  } catch (err) {
    if (audit) {
      // Stopped part-way (signal or lock compromised): write what was done so far.
      await audit.finish(retentionItems, lostTasks, 'failed', now()).catch(() => audit?.abandon());
    }
    if (isAbort(err)) {
      const reason = signal?.reason as unknown;
      fail({ target: home, code: reason instanceof GcError ? reason.code : Codes.aborted, detail: `sweep stopped early: ${reason instanceof Error ? reason.message : 'interrupted'}` });
      return finishReport();
    }
    throw err;
  } finally {
    await homeDir?.close();
    await sweepLock?.release();
  }
}

// ---- helpers --------------------------------------------------------------------------------

async function anyExists(paths: string[]): Promise<boolean> {
  for (const p of paths) if (await lstatPath(p)) return true;
  return false;
}

async function openOrCreateHome(home: string, exists: boolean): Promise<Dir> {
  if (exists) return Dir.open(home, { followFinal: true });
  const parent = await Dir.open(dirname(home), { followFinal: true });
  try {
    const name = home.slice(dirname(home).length + 1);
    return await parent.mkdir(name, 0o700);
  } finally {
    await parent.close();
  }
}

async function openChain(anchor: Dir, chain: string[]): Promise<Dir> {
  let cur = anchor;
  let owned = false;
  for (const name of chain) {
    const next = await cur.openDir(name);
    if (owned) await cur.close();
    cur = next;
    owned = true;
  }
  if (!owned) throw new GcError(Codes.ioError, 'empty path chain');
  return cur;
}

async function actOnDebris(d: Debris, dryRun: boolean): Promise<number> {
  const anchor = await Dir.open(d.ref.anchor, { followFinal: true });
  try {
    const parentChain = d.ref.chain.slice(0, -1);
    const name = d.ref.chain[d.ref.chain.length - 1];
    if (name === undefined) return 0;
    const parent = parentChain.length === 0 ? anchor : await openChain(anchor, parentChain);
    try {
      if (d.kind === 'trash_dir') {
        if (dryRun) return (await measureDir(parent, name, d.identity)).bytes;
        return (await finishTrash(parent, name, d.identity)).bytes;
      }
      const st = await parent.lstat(name);
      if (!st || !st.isFile() || !sameIdentity(identityOf(st), d.identity)) return 0;
      if (!dryRun) await parent.unlink(name);
      return Number(st.size);
    } finally {
      if (parent !== anchor) await parent.close();
    }
  } finally {
    await anchor.close();
  }
}

async function applyChmod(entry: ModeEntry, mode: number): Promise<void> {
  const anchor = await Dir.open(entry.ref.anchor, { followFinal: true });
  try {
    if (entry.ref.chain.length === 0) {
      if (!sameIdentity(anchor.identity, entry.identity)) throw new GcError(Codes.changedSinceScan, `${entry.path} changed since it was scanned`);
      await anchor.chmodSelf(mode);
      return;
    }
    const parent = entry.ref.chain.length === 1 ? anchor : await openChain(anchor, entry.ref.chain.slice(0, -1));
    const name = entry.ref.chain[entry.ref.chain.length - 1] ?? '';
    try {
      if (entry.kind === 'dir') {
        const d = await parent.openDir(name, entry.identity).catch(async (err: unknown) => {
          if (errnoCode(err) !== 'EACCES') throw err;
          return undefined;
        });
        if (d) {
          try {
            await d.chmodSelf(mode);
          } finally {
            await d.close();
          }
          return;
        }
      } else {
        const f = await parent.openFile(name).catch((err: unknown) => {
          if (errnoCode(err) !== 'EACCES') throw err;
          return undefined;
        });
        if (f) {
          try {
            if (!sameIdentity(identityOf(f.stat), entry.identity)) throw new GcError(Codes.changedSinceScan, `${entry.path} changed since it was scanned`);
            await f.fh.chmod(mode);
          } finally {
            await f.fh.close();
          }
          return;
        }
      }
      // Unreadable to its owner (e.g. mode 0000): no descriptor can be had; chmod by name after
      // re-checking with lstat that it is still the same non-link entry.
      await parent.chmodChildByName(name, entry.identity, mode);
    } finally {
      if (parent !== anchor) await parent.close();
    }
  } finally {
    await anchor.close();
  }
}
