// Who holds a murmur-gc lock, written so that a lock directory never exists without evidence of
// its creator (a killed holder's lock is then broken at once, not after going stale).
// Protocol (all beside the lock directory, in its parent, under <home>/gc):
// - before trying mkdir, a contender writes a *candidate* `.<lock>.owner.json.<pid>.<hex>.tmp`
//   ({pid, start_time}; the pid is also in the name, so even an empty candidate names it);
// - the winner then renames a complete `<lock>.owner.json` ({pid, start_time, lock_ino}) into
//   place and only then unlinks its candidate; a loser unlinks its candidate;
// - release and break first rename the owner file back to a temp name carrying the holder's pid,
//   then remove the lock directory, then unlink that temp.
// Guarantees: at every instant a lock directory has either an owner file naming its inode or a
// candidate of its creator (alive or dead), so "all evidence dead" is decidable; a live
// contender's candidate blocks a break only when no owner file names the lock; temps of dead pids
// are removed by whoever next takes or breaks that lock, and by the sweep when no lock directory
// exists (src/gchome/leftovers.ts); never follows a link.
import { dirname, basename } from 'node:path';
import { Dir, readSmallFile } from '../fsx/safe-fs.js';
import { probeProcess } from '../runtime/running.js';

export interface LockOwner {
  pid: number;
  start_time: string | null;
  /** inode of the lock directory this owner created; a different lock dir is not ours to break */
  lock_ino: string | null;
}

export async function lockDirIno(lockPath: string): Promise<string | null> {
  try {
    await using d = await Dir.open(dirname(lockPath));
    const st = await d.lstat(basename(lockPath));
    return st?.isDirectory() ? st.ino.toString() : null;
  } catch {
    return null;
  }
}

function ownerName(lockPath: string): string {
  return `${basename(lockPath)}.owner.json`;
}

/** `.<lock>.owner.json.<pid>.<hex>.tmp`: a candidate, or an owner file being released. */
function tempName(lockPath: string, pid: number): string {
  return `.${ownerName(lockPath)}.${pid}.${Date.now().toString(16)}${Math.random().toString(16).slice(2, 10)}.tmp`;
}

/** pid named by a temp of this lock, or undefined when `name` is not one. */
function tempPidOf(lockPath: string, name: string): number | undefined {
  const prefix = `.${ownerName(lockPath)}.`;
  if (!name.startsWith(prefix)) return undefined;
  const m = /^(\d+)\.[0-9a-f]+\.tmp$/.exec(name.slice(prefix.length));
  const pid = m?.[1] ? Number.parseInt(m[1], 10) : NaN;
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
}

/** Write our candidate before trying to create the lock directory. Returns its name. */
export async function writeCandidate(lockPath: string, owner: Omit<LockOwner, 'lock_ino'>): Promise<string> {
  await using d = await Dir.open(dirname(lockPath));
  const name = tempName(lockPath, owner.pid);
  // Not fsync'ed: after a crash of the machine no process is alive anyway.
  await using fh = await d.createExclusive(name, 0o600);
  try {
    await fh.writeFile(JSON.stringify({ ...owner, lock_ino: null }));
  } catch {
    // A full disk: the empty candidate still names our pid (its start time only sharpens it).
    await fh.truncate(0).catch(() => undefined);
  }
  return name;
}

export async function removeCandidate(lockPath: string, candidate: string): Promise<void> {
  await using d = await Dir.open(dirname(lockPath));
  await d.unlink(candidate).catch(() => undefined);
}

/**
 * Winner: put the complete owner file in place, then drop the candidate (evidence throughout),
 * then the temps dead processes left for this lock: a contender killed after writing its
 * candidate and before its mkdir left one that no lock directory will ever need (the lock is ours
 * now, and our owner file names it). Live contenders' candidates stay; they drop their own.
 */
export async function promoteCandidate(lockPath: string, candidate: string, owner: LockOwner): Promise<void> {
  await using d = await Dir.open(dirname(lockPath));
  await d.writeFileAtomic(ownerName(lockPath), JSON.stringify(owner), 0o600, { durable: false });
  await d.unlink(candidate).catch(() => undefined);
  await removeDeadTemps(d, lockPath);
}

/** Unlinks this lock's temps (candidates, parked owner files) whose process is dead. */
async function removeDeadTemps(d: Dir, lockPath: string): Promise<void> {
  for (const name of await d.list()) {
    const pid = tempPidOf(lockPath, name);
    if (pid === undefined || pid === process.pid) continue;
    if (!(await ownerAlive(await readOwnerIn(d, name), pid))) await d.unlink(name).catch(() => undefined);
  }
}

export async function readOwnerFile(lockPath: string): Promise<Partial<LockOwner> | undefined> {
  try {
    await using d = await Dir.open(dirname(lockPath));
    return await readOwnerIn(d, ownerName(lockPath));
  } catch {
    return undefined;
  }
}

async function readOwnerIn(d: Dir, name: string): Promise<Partial<LockOwner> | undefined> {
  try {
    const raw = await readSmallFile(d, name, 4096);
    const o = JSON.parse(raw.toString('utf8')) as unknown;
    return typeof o === 'object' && o !== null ? o : undefined;
  } catch {
    return undefined;
  }
}

async function ownerAlive(o: Partial<LockOwner> | undefined, pid: number): Promise<boolean> {
  const token = typeof o?.start_time === 'string' ? o.start_time : undefined;
  return (await probeProcess(pid, token)) === 'alive';
}

export type HolderVerdict = 'none' | 'alive' | 'dead' | 'unknown';

/**
 * What the evidence beside an existing lock directory says about its holder. An owner file that
 * names this lock directory's inode decides alone; otherwise the candidates of other processes
 * do: any alive → alive (maybe its creator between mkdir and owner file); all dead → dead.
 */
export async function judgeHolder(lockPath: string): Promise<{ verdict: HolderVerdict; ino: string | null }> {
  await using d = await Dir.open(dirname(lockPath));
  const st = await d.lstat(basename(lockPath));
  if (!st?.isDirectory()) return { verdict: 'none', ino: null };
  const ino = st.ino.toString();
  const owner = await readOwnerIn(d, ownerName(lockPath));
  if (owner && typeof owner.pid === 'number' && owner.lock_ino === ino) {
    if (owner.pid === process.pid) return { verdict: 'alive', ino };
    return { verdict: (await ownerAlive(owner, owner.pid)) ? 'alive' : 'dead', ino };
  }
  let deadSeen = false;
  for (const name of await d.list()) {
    const pid = tempPidOf(lockPath, name);
    if (pid === undefined || pid === process.pid) continue;
    if (await ownerAlive(await readOwnerIn(d, name), pid)) return { verdict: 'alive', ino };
    deadSeen = true;
  }
  return { verdict: deadSeen ? 'dead' : 'unknown', ino };
}

/**
 * Remove a lock directory whose holder is dead, or our own on release: the owner file is first
 * renamed to a temp carrying `holderPid` (so the directory is never left without evidence), then
 * `removeDir` runs (a break passes the judged inode: the directory is removed only if it is still
 * that one; a release always runs proper-lockfile's own unlock), then that temp and the temps of
 * other dead processes for this lock go.
 */
export async function dismantleLock(
  lockPath: string,
  holderPid: number,
  ino: string | null,
  removeDir: () => Promise<void>,
): Promise<void> {
  await using d = await Dir.open(dirname(lockPath));
  const parked = tempName(lockPath, holderPid);
  let didPark = false;
  const owner = await readOwnerIn(d, ownerName(lockPath));
  if (owner && owner.pid === holderPid && (ino === null || owner.lock_ino === ino)) {
    didPark = await d.rename(ownerName(lockPath), parked).then(
      () => true,
      () => false,
    );
  }
  if (ino === null) {
    await removeDir();
  } else {
    const st = await d.lstat(basename(lockPath));
    if (st?.isDirectory() && st.ino.toString() === ino) await removeDir();
  }
  if (didPark) await d.unlink(parked).catch(() => undefined);
  if (holderPid === process.pid) return; // a release: other leftovers are the sweep's debris
  await removeDeadTemps(d, lockPath);
}

/** rmdir of the lock directory by its parent's descriptor (proper-lockfile's layout: empty dir). */
export async function removeLockDir(lockPath: string): Promise<void> {
  await using d = await Dir.open(dirname(lockPath));
  await d.rmdir(basename(lockPath));
}
