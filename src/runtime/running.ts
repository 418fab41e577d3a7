// The runtime's running records (`<home>/running/<ses>.json`, docs/design.md §R1) and process probes.
// Guarantees:
// - A record is read only when it is a small regular file (never a link or FIFO). It counts only
//   when it deserializes as the runtime's record: valid UTF-8, serde_json's grammar
//   (src/json/scan.ts, last duplicate key wins), every field present with its type —
//   `session_id`, `url`, `process_start`, `capsule_name`, `capsule_version`, `workdir`,
//   `started_at` strings, `pid` a u32, `outlives_launcher` a bool. Anything else gives no
//   liveness evidence (the runtime's reader unlinks it) and is reported with the warning-level
//   code `running_record_invalid` — a 100 MB file, a FIFO or garbage in running/ never fails a sweep.
// - A record's process is live only when kill(pid, 0) finds it AND its current start token
//   (field 22 of /proc/<pid>/stat) equals `process_start`: a reused pid, or a token that cannot
//   be read, is not live (the runtime's layers 1 and 2).
// - A file counts as *held open* for writing only when the same process holds a write descriptor
//   on it at every look over HELD_OPEN_WATCH_MS (and at least HELD_OPEN_LOOKS looks): a writer
//   that opens, appends and closes per line (the runtime) is seen now and then, not at every one
//   of them (docs/design.md §3). No holder at the first look answers at once, after one /proc scan.
import { isUtf8 } from 'node:buffer';
import { Codes, describeError } from '../errors.js';
import { JsonScanner, T_FALSE, T_OBJECT, T_TRUE, jsonKeys, spanString, spanU64, type Span } from '../json/scan.js';
import { identityOf, readProcStat, readSmallFile, type Dir, type Identity } from '../fsx/safe-fs.js';

export interface RunningRecord {
  file: string;
  sessionId: string;
  pid: number;
  /** `process_start`: the runtime's opaque start token, compared by string equality. */
  startTime: string;
  /** The session's workdir (its parent is a sessions root). */
  workdir: string;
}

export interface RunningScan {
  records: RunningRecord[];
  problems: { target: string; code: string; detail: string }[];
  /** each record file's identity and mtime, by file name (to remove a stale one only if unchanged) */
  files: Map<string, { identity: Identity; mtimeMs: number }>;
  /** `<ses>.json.writing-<pid>`: a record being written, or left by a runtime killed mid-write */
  staging: { name: string; pid: number; identity: Identity; mtimeMs: number }[];
}

/** `<ses>.json.writing-<pid>` (docs/design.md §R1): the pid, or undefined when it is not one. */
export function stagingPid(name: string): number | undefined {
  const m = /^[^.][^/]*\.json\.writing-([0-9]{1,10})$/.exec(name);
  const pid = m ? Number(m[1]) : undefined;
  return pid !== undefined && pid > 0 && pid <= 4294967295 ? pid : undefined;
}

/** A running record is small (a few hundred bytes of pretty JSON); anything larger is not one. */
export const RUNNING_RECORD_MAX_BYTES = 64 * 1024;

const RUNNING_KEYS = jsonKeys(
  'session_id',
  'url',
  'pid',
  'process_start',
  'capsule_name',
  'capsule_version',
  'workdir',
  'outlives_launcher',
  'started_at',
);
const STRING_FIELDS = [0, 1, 3, 4, 5, 6, 8];
const runningScanner = new JsonScanner();
const U32_MAX = 4294967295n;

/** The runtime's `RunningRecord` deserialization; undefined when the file is not one. */
export function parseRunningRecord(file: string, raw: Buffer | string): RunningRecord | undefined {
  const buf = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw;
  if (!isUtf8(buf)) return undefined;
  const sc = runningScanner;
  if (!sc.scan(buf, 0, buf.length, RUNNING_KEYS) || sc.top !== T_OBJECT) return undefined;
  const f = sc.fields;
  const strings: Array<string | undefined> = [];
  for (let k = 0; k < RUNNING_KEYS.strings.length; k++)
    strings.push(STRING_FIELDS.includes(k) ? spanString(buf, f[k] as Span) : undefined);
  if (STRING_FIELDS.some((k) => strings[k] === undefined)) return undefined;
  const pid = spanU64(buf, f[2] as Span);
  if (pid === undefined || pid > U32_MAX) return undefined;
  const outlives = (f[7] as Span).type;
  if (outlives !== T_TRUE && outlives !== T_FALSE) return undefined;
  return {
    file,
    sessionId: strings[0] as string,
    pid: Number(pid),
    startTime: strings[3] as string,
    workdir: strings[6] as string,
  };
}

/** Read every `*.json` under `<home>/running`. Missing directory → no records. */
export async function readRunningRecords(home: Dir): Promise<RunningScan> {
  const scan: RunningScan = { records: [], problems: [], files: new Map(), staging: [] };
  const st = await home.lstat('running');
  if (!st || !st.isDirectory()) return scan;
  await using dir = await home.openDir('running');
  for (const name of await dir.list()) {
    const pid = stagingPid(name);
    if (pid !== undefined) {
      const sst = await dir.lstat(name);
      if (sst?.isFile()) scan.staging.push({ name, pid, identity: identityOf(sst), mtimeMs: Number(sst.mtimeMs) });
      continue;
    }
    if (!name.endsWith('.json') || name.startsWith('.')) continue;
    const target = dir.display(name);
    try {
      const fst = await dir.lstat(name);
      if (fst?.isFile()) scan.files.set(name, { identity: identityOf(fst), mtimeMs: Number(fst.mtimeMs) });
      const raw = await readSmallFile(dir, name, RUNNING_RECORD_MAX_BYTES);
      const rec = parseRunningRecord(name, raw);
      if (rec) scan.records.push(rec);
      else
        scan.problems.push({
          target,
          code: Codes.runningRecordInvalid,
          detail: `${target} is not a running record (it does not parse with every required field); it gives no liveness evidence`,
        });
    } catch (err) {
      // Too big, a FIFO or link, unreadable: not a running record either; never an error.
      scan.problems.push({
        target,
        code: Codes.runningRecordInvalid,
        detail: `${target} is not a running record (${describeError(err)}); it gives no liveness evidence`,
      });
    }
  }
  return scan;
}

/** Field 22 (starttime) of a /proc/<pid>/stat line; the command name may hold spaces and parens. */
export function procStartTime(statLine: string): string | undefined {
  const close = statLine.lastIndexOf(')');
  if (close < 0) return undefined;
  const rest = statLine
    .slice(close + 2)
    .trim()
    .split(/\s+/);
  // rest[0] is field 3 (state); field 22 is rest[19].
  return rest[19];
}

export type ProcessProbe = 'alive' | 'dead';

/**
 * With a `startTime` token: alive only when the pid exists and its token is exactly that one (an
 * unreadable token is not alive). Without one (our own temp files, which carry only a pid): alive
 * when the pid exists.
 */
export async function probeProcess(pid: number, startTime: string | undefined): Promise<ProcessProbe> {
  if (!Number.isSafeInteger(pid) || pid <= 0) return 'dead';
  let exists: boolean;
  try {
    process.kill(pid, 0);
    exists = true;
  } catch (err) {
    exists = typeof err === 'object' && err !== null && (err as { code?: string }).code === 'EPERM';
  }
  if (!exists) return 'dead';
  if (startTime === undefined) return 'alive';
  const stat = await readProcStat(pid);
  return stat !== undefined && procStartTime(stat) === startTime ? 'alive' : 'dead';
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

/** How long a process must hold a write descriptor, seen at every look, to hold a file open. */
export const HELD_OPEN_WATCH_MS = 250;
/**
 * The fewest looks that judgement takes. A writer that opens, appends and closes per line as fast
 * as it can is found mid-line by about six looks in ten (measured on a loaded 2-core machine;
 * runs of eight in a row are common), so a few looks are not enough: 24 in a row happen about once
 * in 200 000 checks of such a writer; one at the runtime's pace (a few lines a second) is nearly
 * never seen at all.
 */
export const HELD_OPEN_LOOKS = 24;

/**
 * Pids that hold the file with this identity open for writing (see the header): present in
 * every look of `probe` (default: processesHolding) over `watchMs` and at least HELD_OPEN_LOOKS
 * looks; [] as soon as a look finds none of the pids still there. `ownFd` as for processesHolding.
 */
export async function writersHoldingOpen(
  identity: { dev: bigint; ino: bigint },
  ownFd?: number,
  opts: {
    probe?: (identity: { dev: bigint; ino: bigint }, ownFd?: number) => Promise<number[]>;
    watchMs?: number;
  } = {},
): Promise<number[]> {
  const probe = opts.probe ?? processesHolding;
  const watchMs = opts.watchMs ?? HELD_OPEN_WATCH_MS;
  let held = new Set(await probe(identity, ownFd));
  const start = Date.now();
  const pause = Math.max(2, Math.floor(watchMs / HELD_OPEN_LOOKS));
  for (let looks = 1; held.size > 0; looks++) {
    if (looks >= HELD_OPEN_LOOKS && Date.now() - start >= watchMs) break;
    await new Promise((r) => setTimeout(r, pause));
    const now = new Set(await probe(identity, ownFd));
    held = new Set([...held].filter((p) => now.has(p)));
  }
  return [...held].sort((a, b) => a - b);
}
