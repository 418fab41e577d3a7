// Start-up clean-up of what a killed murmur-gc left directly in `<home>/gc`: the temp files of
// its atomic small-file writes (`.state.json.<pid>.<hex>.tmp`, `.trace-cache.json.<pid>.<hex>.tmp`,
// `.sweep.lock.owner.json.<pid>.<hex>.tmp`). Everything else a killed run leaves (the sweep lock,
// record temp files, trash directories, unfinished audit traces) is recovered by the sweep itself.
// Guarantees: only regular files at the top of `<home>/gc` whose name is exactly that shape are
// considered; one is removed only when the pid in its name is not a live process (and is not
// us) — a concurrent `murmur-gc sweep` keeps its temp files; nothing is created; links are never
// followed (descriptor-relative access).
import { GC_DIR_NAME } from '../io/paths.js';
import { probeProcess } from '../io/running.js';
import { Dir, identityOf, lstatPath, sameIdentity } from '../io/safe-fs.js';

const TEMP_RE = /^\.(?:state\.json|trace-cache\.json|[A-Za-z0-9_.-]+\.owner\.json)\.(\d+)\.[0-9a-f]+\.tmp$/;

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
      for (const name of await gc.list()) {
        const pid = gcTempPid(name);
        if (pid === undefined || pid === process.pid) continue;
        const st = await gc.lstat(name);
        if (!st?.isFile()) continue;
        if ((await probeProcess(pid, undefined)) === 'alive') continue;
        const again = await gc.lstat(name);
        if (!again || !sameIdentity(identityOf(again), identityOf(st))) continue;
        await gc.unlink(name);
        out.push({ path: gc.display(name), pid, bytes: Number(st.size) });
      }
    } finally {
      await gc.close();
    }
  } finally {
    await h.close();
  }
  return out;
}
