// The runtime's running records (`<home>/running/<ses>.json`) and process probes.
// Guarantees: a record is read only when it is a small regular file (never a link or FIFO);
// a malformed record is reported and otherwise ignored; a process counts as the record's
// process only when its start time (field 22 of /proc/<pid>/stat, the runtime's own token)
// matches — a reused pid is not alive. When /proc cannot be read but kill(pid, 0) says the pid
// exists, the process is taken as alive (never doom a session on missing evidence).
import { Codes, describeError } from '../errors.js';
import { readProcStat, readSmallFile, type Dir } from './safe-fs.js';

export interface RunningRecord {
  file: string;
  sessionId: string;
  pid: number | undefined;
  startTime: string | undefined;
  /** The session's workdir (its parent is a sessions root), when the record names one. */
  workdir: string | undefined;
}

export interface RunningScan {
  records: RunningRecord[];
  problems: { target: string; code: string; detail: string }[];
}

function pickString(o: Record<string, unknown>, keys: string[]): string | undefined {
  for (const k of keys) {
    const v = o[k];
    if (typeof v === 'string' && v !== '') return v;
    if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  }
  return undefined;
}

export function parseRunningRecord(file: string, raw: string): RunningRecord | undefined {
  let obj: unknown;
  try {
    obj = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) return undefined;
  const o = obj as Record<string, unknown>;
  const stem = file.endsWith('.json') ? file.slice(0, -5) : file;
  const sessionId = pickString(o, ['session_id', 'session']) ?? stem;
  const pidRaw = o['pid'];
  const pid = typeof pidRaw === 'number' && Number.isInteger(pidRaw) && pidRaw > 0 ? pidRaw : undefined;
  const startTime = pickString(o, ['pid_start_time', 'start_time', 'proc_start_time', 'starttime', 'process_start_time']);
  const workdir = pickString(o, ['workdir', 'session_workdir', 'session_dir']);
  return { file, sessionId, pid, startTime, workdir };
}

/** Read every `*.json` under `<home>/running`. Missing directory → no records. */
export async function readRunningRecords(home: Dir): Promise<RunningScan> {
  const scan: RunningScan = { records: [], problems: [] };
  const st = await home.lstat('running');
  if (!st || !st.isDirectory()) return scan;
  const dir = await home.openDir('running');
  try {
    for (const name of await dir.list()) {
      if (!name.endsWith('.json') || name.startsWith('.')) continue;
      try {
        const raw = await readSmallFile(dir, name, 64 * 1024);
        const rec = parseRunningRecord(name, raw.toString('utf8'));
        if (rec) scan.records.push(rec);
        else scan.problems.push({ target: dir.display(name), code: Codes.invalidLine, detail: `${dir.display(name)} is not a running record (not a JSON object)` });
      } catch (err) {
        const code = typeof err === 'object' && err !== null && 'code' in err ? String((err).code) : Codes.ioError;
        scan.problems.push({ target: dir.display(name), code: code.startsWith('E') ? Codes.ioError : code, detail: `${dir.display(name)}: ${describeError(err)}` });
      }
    }
  } finally {
    await dir.close();
  }
  return scan;
}

/** Field 22 (starttime) of a /proc/<pid>/stat line; the command name may hold spaces and parens. */
export function procStartTime(statLine: string): string | undefined {
  const close = statLine.lastIndexOf(')');
  if (close < 0) return undefined;
  const rest = statLine.slice(close + 2).trim().split(/\s+/);
  // rest[0] is field 3 (state); field 22 is rest[19].
  return rest[19];
}

export type ProcessProbe = 'alive' | 'dead';

export async function probeProcess(pid: number, startTime: string | undefined): Promise<ProcessProbe> {
  const stat = await readProcStat(pid);
  if (stat !== undefined) {
    if (startTime === undefined) return 'alive';
    return procStartTime(stat) === startTime ? 'alive' : 'dead';
  }
  try {
    process.kill(pid, 0);
    return 'alive';
  } catch (err) {
    return typeof err === 'object' && err !== null && (err as { code?: string }).code === 'EPERM' ? 'alive' : 'dead';
  }
}

/** Start time token of a live process (used by tests and by the daemon's own pid file). */
export async function startTimeOf(pid: number): Promise<string | undefined> {
  const stat = await readProcStat(pid);
  return stat === undefined ? undefined : procStartTime(stat);
}

/**
 * Pids (other than ours) that hold the file with this identity open FOR WRITING, read from
 * /proc/<pid>/fd and /proc/<pid>/fdinfo (a reader such as `tail -f` does not count). Only
 * processes of our own uid are looked at (the runtime runs as the same user as murmur-gc; others'
 * fd tables are not readable anyway without privilege). `ownFd` — a descriptor we hold on the same
 * file — gives the kernel's name for it, so each foreign descriptor costs one readlink, and only a
 * matching name is confirmed with stat (dev/ino) and its open flags. Synchronous: one pass over
 * /proc costs a few ms even with thousands of descriptors.
 */
export async function processesHolding(identity: { dev: bigint; ino: bigint }, ownFd?: number): Promise<number[]> {
  await Promise.resolve();
  const { fstatSync, readdirSync, readFileSync, readlinkSync, statSync } = await import('node:fs');
  const uid = typeof process.geteuid === 'function' ? process.geteuid() : -1;
  let wanted: string | undefined;
  if (ownFd !== undefined) {
    try {
      // A file with other hard links may be open under another name: then compare by stat only.
      wanted = fstatSync(ownFd).nlink <= 1 ? readlinkSync(`/proc/self/fd/${ownFd}`) : undefined;
    } catch {
      wanted = undefined;
    }
  }
  const holders: number[] = [];
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((n) => /^\d+$/.test(n) && Number(n) !== process.pid);
  } catch {
    return holders;
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      if (uid >= 0 && statSync(`/proc/${pid}`).uid !== uid) continue;
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (wanted !== undefined && readlinkSync(`/proc/${pid}/fd/${fd}`) !== wanted) continue;
        const st = statSync(`/proc/${pid}/fd/${fd}`, { bigint: true });
        if (st.ino !== identity.ino || st.dev !== identity.dev) continue;
        const info = (() => {
          try {
            return readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'latin1');
          } catch {
            return '';
          }
        })();
        const flags = /^flags:\s*([0-7]+)/m.exec(info)?.[1];
        // O_WRONLY = 1, O_RDWR = 2; unknown flags count as a writer (never miss one).
        if (flags === undefined || (Number.parseInt(flags, 8) & 3) !== 0) {
          holders.push(Number(pid));
          break;
        }
      } catch {
        // closed meanwhile
      }
    }
  }
  return holders;
}
