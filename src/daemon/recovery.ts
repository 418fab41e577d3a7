// Clean-up (daemon start-up and every real sweep) of what a killed murmur-gc left in `<home>/gc`:
// the temp files of its atomic small-file writes (`.state.json.<pid>.<hex>.tmp`,
// `.trace-cache.json.<pid>.<hex>.tmp`) and lock-owner candidates/parked owner files
// (`.<lock>.owner.json.<pid>.<hex>.tmp`) at the top of `<home>/gc`, in `<home>/gc/locks` and in
// its subdirectories (`locks/<store>/`, `locks/traces/`). Everything else a killed run leaves
// (record temp files, trash directories, unfinished audit traces) is recovered by other steps.
// Guarantees: only regular files in those directories whose name is exactly that shape are
// considered; one is removed only when the pid in its name is not a live process (and is not
// us) — a concurrent `murmur-gc sweep` keeps its temp files; nothing is created; links are never
// followed (descriptor-relative access).
import { GC_DIR_NAME } from '../io/paths.js';
import { probeProcess } from '../io/running.js';
import { Dir, identityOf, lstatPath, sameIdentity } from '../io/safe-fs.js';

const TEMP_RE = /^\.(?:state\.json|trace-cache\.json|[A-Za-z0-9_.~!*'()%-]+\.owner\.json)\.(\d+)\.[0-9a-f]+\.tmp$/;

export interface RemovedTemp {
  path: string;
  pid: number;
  bytes: number;
}

/** The pid named by a gc temp-file name, or undefined when the name is not one. */
export function gcTempPid(name: string): number | undefined {
  const m = TEMP_RE.exec(name);
  if (!m?.[1]) return undefined;
  const pid = Number.parseInt(m[1], 10);
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
}

export async function removeDeadGcTemps(home: string): Promise<RemovedTemp[]> {
  const out: RemovedTemp[] = [];
  if (!(await lstatPath(home))) return out;
  const h = await Dir.open(home, { followFinal: true });
  try {
    const gst = await h.lstat(GC_DIR_NAME);
    if (!gst?.isDirectory()) return out;
    const gc = await h.openDir(GC_DIR_NAME);
    try {
      await removeIn(gc, out);
      const lst = await gc.lstat('locks');
      if (!lst?.isDirectory()) return out;
      const locks = await gc.openDir('locks');
      try {
        await removeIn(locks, out);
        for (const name of await locks.list()) {
          if (name.endsWith('.lock')) continue;
          const st = await locks.lstat(name);
          if (!st?.isDirectory()) continue;
          const sub = await locks.openDir(name, identityOf(st)).catch(() => undefined);
          if (!sub) continue;
          try {
            await removeIn(sub, out);
          } finally {
            await sub.close();
          }
        }
      } finally {
        await locks.close();
      }
    } finally {
      await gc.close();
    }
  } finally {
    await h.close();
  }
  return out;
}

async function removeIn(dir: Dir, out: RemovedTemp[]): Promise<void> {
  const names = await dir.list();
  const present = new Set(names);
  for (const name of names) {
    const pid = gcTempPid(name);
    if (pid === undefined || pid === process.pid) continue;
    // The evidence of a lock that still exists is left to whoever next takes that lock (it
    // breaks the lock of a dead holder and removes this with it; see io/lock-owner.ts).
    const lock = /^\.(.+\.lock)\.owner\.json\./.exec(name)?.[1];
    if (lock !== undefined && present.has(lock)) continue;
    const st = await dir.lstat(name);
    if (!st?.isFile()) continue;
    if ((await probeProcess(pid, undefined)) === 'alive') continue;
    const again = await dir.lstat(name);
    if (!again || !sameIdentity(identityOf(again), identityOf(st))) continue;
    await dir.unlink(name);
    out.push({ path: dir.display(name), pid, bytes: Number(st.size) });
  }
}
