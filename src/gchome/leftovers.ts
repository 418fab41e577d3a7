// Clean-up (by every real sweep, its recover step) of what a killed murmur-gc left in `<home>/gc`:
// the temp files of its atomic small-file writes (`.state.json.<pid>.<hex>.tmp`,
// `.trace-cache.json.<pid>.<hex>.tmp`,
// `.trace-appends.json.<pid>.<hex>.tmp`, `.registry.jsonl.<pid>.<hex>.tmp`, the protection list's `.protected.json.<pid>.<hex>.tmp`)
// and lock-owner candidates/parked owner files
// (`.<lock>.owner.json.<pid>.<hex>.tmp`) at the top of `<home>/gc`, in `<home>/gc/locks` and in
// its subdirectories (`locks/<store>/`, `locks/traces/`), and audit directories it was building
// (`.<ses_id>.<pid>.<hex>.tmp`, holding only intent.jsonl/trace.jsonl); and, for each interrupted
// audit recovery completes, its `.where.json`/`.details.json`/`.trace.jsonl` temps; record and
// trace lock directories (`locks/<store>/<context>.lock`, `locks/traces/<key>.lock`) whose holder
// is dead;
// in `<home>/gc/quarantine`, the sidecar temps (`.item.json.<pid>.<hex>.tmp`) of dead processes,
// and an item directory left holding nothing (a hold killed before its sidecar was in place).
// Everything else a killed run leaves (record temp files, trash directories, unfinished audit
// traces) is recovered by other steps.
// Guarantees: only regular files in those directories whose name is exactly that shape are
// considered; one is removed only when the pid in its name is not a live process (and is not
// us) — a concurrent `murmur-gc sweep` keeps its temp files; a lock directory is removed only
// when every piece of evidence of its holder names a dead process (pid and start time:
// src/gchome/lock-owner.ts), never one of unknown holder; an item directory is removed only when
// empty (rmdir), after its dead temps went, or when it has been empty for over an hour (a hold
// makes its first file within moments of its mkdir); nothing is created; links are never
// followed (descriptor-relative access).
import { breakDeadLock, holderIsDead } from './lock.js';
import { readOwnerFile } from './lock-owner.js';
import { GC_DIR_NAME } from './paths.js';
import { sidecarTempPid } from './quarantine-store.js';
import { QUARANTINE_DIR, parseItemDirName } from './quarantine-layout.js';
import { allocatedBytes } from '../fsx/remove.js';
import { probeProcess } from '../runtime/running.js';
import { Dir, identityOf, lstatPath, sameIdentity } from '../fsx/safe-fs.js';

const TEMP_RE =
  /^\.(?:state\.json|trace-cache\.json|trace-appends\.json|registry\.jsonl|protected\.json|[A-Za-z0-9_.~!*'()%-]+\.owner\.json)\.(\d+)\.[0-9a-f]+\.tmp$/;

export interface RemovedTemp {
  path: string;
  /** the dead process that left it; undefined for an item directory left empty */
  pid: number | undefined;
  bytes: number;
  /** what it was, when not a temp file */
  detail?: string;
}

/** An item directory of the quarantine empty for this long is no hold in progress. */
const EMPTY_ITEM_AGE_MS = 60 * 60 * 1000;

/** The pid named by a gc temp-file name, or undefined when the name is not one. */
export function gcTempPid(name: string): number | undefined {
  const m = TEMP_RE.exec(name);
  if (!m?.[1]) return undefined;
  const pid = Number.parseInt(m[1], 10);
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
}

export async function removeDeadGcTemps(home: string, nowMs = Date.now()): Promise<RemovedTemp[]> {
  const out: RemovedTemp[] = [];
  if (!(await lstatPath(home))) return out;
  await using h = await Dir.open(home, { followFinal: true });
  const gst = await h.lstat(GC_DIR_NAME);
  if (!gst?.isDirectory()) return out;
  await using gc = await h.openDir(GC_DIR_NAME);
  await removeIn(gc, out);
  await removeAuditStaging(gc, out);
  await removeHoldDebris(gc, out, nowMs);
  const lst = await gc.lstat('locks');
  if (!lst?.isDirectory()) return out;
  await using locks = await gc.openDir('locks');
  await removeIn(locks, out);
  for (const name of await locks.list()) {
    if (name.endsWith('.lock')) continue;
    const st = await locks.lstat(name);
    if (!st?.isDirectory()) continue;
    await using sub = await locks.openDir(name, identityOf(st)).catch(() => undefined);
    if (!sub) continue;
    await breakDeadLocks(sub, `${home}/${GC_DIR_NAME}/locks/${name}`, out);
    await removeIn(sub, out);
  }
  return out;
}

/**
 * The record and trace lock directories in `sub` (`<home>/gc/locks/<store>` or `locks/traces`,
 * at `subPath`) whose holder is provably dead: broken as a contender would break them
 * (src/gchome/lock.ts breakDeadLock: the owner file parked first, the directory removed only while
 * it is still the inode judged, then the dead temps beside it). A live holder's, or one whose
 * holder is unknown (no evidence), stays.
 */
async function breakDeadLocks(sub: Dir, subPath: string, out: RemovedTemp[]): Promise<void> {
  for (const name of await sub.list()) {
    if (!name.endsWith('.lock')) continue;
    const st = await sub.lstat(name);
    if (!st?.isDirectory()) continue;
    const lockPath = `${subPath}/${name}`;
    if (!(await holderIsDead(lockPath))) continue;
    const owner = await readOwnerFile(lockPath);
    if (!(await breakDeadLock(lockPath))) continue;
    const pid = typeof owner?.pid === 'number' ? owner.pid : undefined;
    out.push({
      path: lockPath,
      pid,
      bytes: 0,
      detail: `lock directory of a killed process${pid !== undefined ? ` (pid ${pid})` : ''}`,
    });
  }
}

/**
 * In `<home>/gc/quarantine`: every item directory's sidecar temps (`.item.json.<pid>.<hex>.tmp`)
 * whose pid is dead, then the item directory itself when that leaves it empty — what a hold
 * killed while writing its sidecar leaves (it never became a hold: its payload is moved in only
 * once the sidecar is in place, so nothing else is in it) — or when it has been empty for over
 * an hour (killed between its mkdir and its first file). Anything else in an item is the
 * quarantine step's (src/sweep/steps/quarantine.ts).
 */
async function removeHoldDebris(gc: Dir, out: RemovedTemp[], nowMs: number): Promise<void> {
  const qst = await gc.lstat(QUARANTINE_DIR);
  if (!qst?.isDirectory()) return;
  await using q = await gc.openDir(QUARANTINE_DIR, identityOf(qst)).catch(() => undefined);
  if (!q) return;
  for (const entry of await q.list()) {
    if (!parseItemDirName(entry)) continue;
    const st = await q.lstat(entry);
    if (!st?.isDirectory()) continue;
    const item = await q.openDir(entry, identityOf(st)).catch(() => undefined);
    if (!item) continue;
    let left: number;
    const mine: RemovedTemp[] = [];
    try {
      await removeIn(item, mine, sidecarTempPid);
      left = (await item.list()).length;
    } finally {
      await item.close();
    }
    out.push(...mine);
    const emptyLong = mine.length === 0 && nowMs - Number(st.mtimeMs) > EMPTY_ITEM_AGE_MS;
    if (left !== 0 || (mine.length === 0 && !emptyLong)) continue;
    try {
      await q.rmdir(entry);
    } catch {
      continue; // something was made in it meanwhile: not ours to judge now
    }
    out.push({
      path: q.display(entry),
      pid: mine[0]?.pid,
      bytes: 0,
      detail: 'a held item a killed hold left without its sidecar or payload (it never became a hold)',
    });
  }
}

const AUDIT_STAGING_RE = /^\.ses_[0-9a-z]+\.(\d+)\.[0-9a-f]+\.tmp$/;
/** What an audit directory holds while it is built (src/gchome/audit.ts). */
const AUDIT_STAGING_FILES = new Set(['intent.jsonl', 'trace.jsonl']);

/**
 * Audit directories a killed murmur-gc was building (`.<ses_id>.<pid>.<hex>.tmp`, never yet a
 * `ses_` audit): removed when their pid is dead and they hold nothing but the files an audit is
 * built from (regular files, unlinked through the directory's descriptor); else left alone.
 */
async function removeAuditStaging(gc: Dir, out: RemovedTemp[]): Promise<void> {
  for (const name of await gc.list()) {
    const m = AUDIT_STAGING_RE.exec(name);
    const pid = m?.[1] ? Number.parseInt(m[1], 10) : NaN;
    if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) continue;
    const st = await gc.lstat(name);
    if (!st?.isDirectory()) continue;
    if ((await probeProcess(pid, undefined)) === 'alive') continue;
    const d = await gc.openDir(name, identityOf(st)).catch(() => undefined);
    if (!d) continue;
    let bytes = 0;
    try {
      const entries = await d.list();
      const files: string[] = [];
      for (const e of entries) {
        const est = await d.lstat(e);
        if (!AUDIT_STAGING_FILES.has(e) || !est?.isFile()) {
          files.length = 0;
          break;
        }
        files.push(e);
        bytes += allocatedBytes(est);
      }
      if (files.length !== entries.length) continue;
      for (const e of files) await d.unlink(e);
    } finally {
      await d.close();
    }
    await gc.rmdir(name);
    out.push({ path: gc.display(name), pid, bytes });
  }
}

/**
 * `.where.json.<pid>.<hex>.tmp`, `.details.json.<pid>.<hex>.tmp`, `.trace.jsonl.<pid>.<hex>.tmp`:
 * an audit's atomic writes.
 */
const AUDIT_TEMP_RE = /^\.(?:where\.json|details\.json|trace\.jsonl)\.(\d+)\.[0-9a-f]+\.tmp$/;

function auditTempPid(name: string): number | undefined {
  const m = AUDIT_TEMP_RE.exec(name);
  const pid = m?.[1] ? Number.parseInt(m[1], 10) : NaN;
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
}

/**
 * The temps of an interrupted audit's atomic writes (`where.json`, `details.json`, a whole
 * `trace.jsonl`) left in its directory by a killed run, removed when their pid is dead (recovery
 * completes that audit; src/gchome/audit-recovery.ts calls this for each one it completes).
 */
export async function removeDeadAuditTemps(auditDir: Dir): Promise<RemovedTemp[]> {
  const out: RemovedTemp[] = [];
  await removeIn(auditDir, out, auditTempPid);
  return out;
}

async function removeIn(
  dir: Dir,
  out: RemovedTemp[],
  pidOf: (name: string) => number | undefined = gcTempPid,
): Promise<void> {
  const names = await dir.list();
  const present = new Set(names);
  for (const name of names) {
    const pid = pidOf(name);
    if (pid === undefined || pid === process.pid) continue;
    // The evidence of a lock that still exists is left to whoever next takes that lock (it
    // breaks the lock of a dead holder and removes this with it; see gchome/lock-owner.ts).
    const lock = /^\.(.+\.lock)\.owner\.json\./.exec(name)?.[1];
    if (lock !== undefined && present.has(lock)) continue;
    const st = await dir.lstat(name);
    if (!st?.isFile()) continue;
    if ((await probeProcess(pid, undefined)) === 'alive') continue;
    const again = await dir.lstat(name);
    if (!again || !sameIdentity(identityOf(again), identityOf(st))) continue;
    await dir.unlink(name);
    out.push({ path: dir.display(name), pid, bytes: allocatedBytes(st) });
  }
}
