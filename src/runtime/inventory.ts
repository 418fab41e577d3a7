// Inventory: what is on disk, read without changing anything (the sweep's only scanning code).
// Guarantees:
// - Read-only: nothing here writes, renames, chmods or creates (so --dry-run can share it).
// - Every directory below an anchor (home, a sessions root) is reached descriptor-relatively
//   with O_NOFOLLOW; symlinks are reported, never followed; FIFOs/sockets/devices never opened.
// - Problems are collected per item with a stable code; one bad item never stops the scan.
// - Records are read streaming; message lines are counted only where a max_messages policy
//   could act on them (owned records), and headers are read from the first line only.
// - Memory: a scanned session is one ScannedSession plus (nearly always) one CompactTrace, ~530
//   bytes with its name and context ids (test/integration/sweep-memory.test.ts bounds it); mode
//   entries can be filtered as they are found (`keepMode`). Whatever a capsule writes, reading a
//   file holds at most the line cap (docs/limits.md): a trace or record too hostile to judge
//   (`sparse_file`, `line_too_long`, `too_many_ids`) is a problem naming it, the time it cost, and
//   the scan goes on; a file more than 16 times what it holds on disk is not read, at any size. A
//   scanned trace holds its unaccounted work only as far as the caller's LostQuota allows (a
//   sweep: 16 384 over all its roots; a scan without one, such as `status`'s, holds none).
import { Codes, describeError, errnoCode } from '../errors.js';
import { idTimestampMs } from './ids.js';
import { SESSION_QUARANTINE_PREFIX, parseSessionQuarantineName } from './gc-entries.js';
import { parseHeaderLine, type RecordHeader } from './record.js';
import type { LostQuota, TraceSummary } from './trace.js';
import { scanRecord, scanRecordBytes, sparseFileError } from './jsonl.js';
import {
  Dir,
  identityOf,
  inoOf,
  lstatPath,
  modeBits,
  packIno,
  processUid,
  yieldIfBusy,
  type BigIntStats,
  type Identity,
  type PackedIno,
} from '../fsx/safe-fs.js';
import { KEPT_PREFIX } from '../fsx/remove.js';
import { parseTempName } from './staged-rewrite.js';
import { readTraceSummary } from './trace-scan.js';
import {
  CompactTrace,
  MemoryTraceCache,
  traceFileState,
  type TraceCache,
  type TraceFileState,
} from './summary-cache.js';
import { definedOnly } from '../defined.js';

/** A path whose mode the sweep reasserts (src/plan/modes.ts decides how), as scanned. */
export type ModeRole = 'home' | 'private_dir' | 'private_file';

export interface ModeInput {
  path: string;
  role: ModeRole;
  kind: 'dir' | 'file' | 'symlink' | 'other';
  mode: number;
  uid: number;
  nlink: number;
}

export const RECORD_FILE = 'conversation.jsonl';
export const CONVERSATIONS_DIR = 'conversations';
export const TRASH_PREFIX = '.murmur-gc-trash.';

export interface Problem {
  target: string;
  code: string;
  detail: string;
}

/** A path under an anchor, as the chain of names to walk from it. */
export interface PathRef {
  anchor: string;
  chain: string[];
}

export interface ModeEntry extends ModeInput {
  ref: PathRef;
  identity: Identity;
}

export interface Debris {
  /** kept_dir: what an earlier removal could not remove whole, set aside (`.murmur-gc-kept.*`) */
  /**
   * running_temp / running_record: what a killed runtime left in `<home>/running` (a
   * `<ses>.json.writing-<pid>`, a record whose process is gone); `pid` (and `startTime`) are
   * probed again at the moment of action
   */
  kind: 'temp_file' | 'trash_dir' | 'kept_dir' | 'running_temp' | 'running_record';
  pid?: number;
  startTime?: string;
  ref: PathRef;
  path: string;
  identity: Identity;
  /** trash_dir / kept_dir: the directory's birth time (ns; 0 where none is kept), to vouch for it (src/gchome/registry.ts) */
  birth?: bigint;
  detail: string;
}

function kindOf(st: BigIntStats): ModeInput['kind'] {
  if (st.isSymbolicLink()) return 'symlink';
  if (st.isDirectory()) return 'dir';
  if (st.isFile()) return 'file';
  return 'other';
}

function modeEntry(dir: Dir, anchor: string, chain: string[], st: BigIntStats, role: ModeRole): ModeEntry {
  return modeEntryAt(chain.length === 0 ? anchor : dir.display(chain[chain.length - 1] ?? ''), anchor, chain, st, role);
}

function modeEntryAt(path: string, anchor: string, chain: string[], st: BigIntStats, role: ModeRole): ModeEntry {
  return {
    path,
    role,
    kind: kindOf(st),
    mode: modeBits(st),
    uid: Number(st.uid),
    nlink: Number(st.nlink),
    ref: { anchor, chain },
    identity: identityOf(st),
  };
}

/** An abort (SIGTERM, lock compromised) must stop the scan, never become a per-item problem. */
function rethrowAbort(err: unknown): void {
  if (err instanceof Error && err.name === 'AbortError') throw err;
  if (signalReason(err)) throw err;
}

function signalReason(err: unknown): boolean {
  return (
    typeof err === 'object' &&
    err !== null &&
    'code' in err &&
    (err.code === Codes.lockCompromised || err.code === Codes.aborted)
  );
}

/** The directory `parent/name` opened, or undefined with why it could not be added to `problems`. */
async function openOrProblem(parent: Dir, name: string, problems: Problem[]): Promise<Dir | undefined> {
  try {
    return await parent.openDir(name);
  } catch (err) {
    problems.push(problemOf(parent.display(name), err));
    return undefined;
  }
}

function problemOf(target: string, err: unknown): Problem {
  rethrowAbort(err);
  const code = typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : '';
  const stable = Object.values(Codes).includes(code as (typeof Codes)[keyof typeof Codes]) ? code : Codes.ioError;
  return { target, code: stable, detail: `${target}: ${describeError(err)}` };
}

// ---- records ---------------------------------------------------------------------------------

function pushMode(out: { modes: ModeEntry[] }, opts: { keepMode?: (e: ModeEntry) => boolean }, e: ModeEntry): void {
  if (!opts.keepMode || opts.keepMode(e)) out.modes.push(e);
}

export interface ContextScan {
  store: string;
  context: string;
  path: string;
  dirIdentity: Identity;
  dirUid: number;
  file: {
    identity: Identity;
    size: number;
    mtimeMs: number;
    uid: number;
  };
  header: RecordHeader | undefined;
  messages: number | undefined;
  /** Not valid UTF-8 (known only when the whole file was read): no header, 0 messages, never owned. */
  unreadable?: boolean;
  /** False when the file ends with a torn (unterminated) line; known only when it was read whole. */
  terminated?: boolean;
}

export interface RecordsScan {
  exists: boolean;
  /** records whose messages were counted by reading them / served from the count cache */
  counted: number;
  /** bytes of the records counted by reading them */
  countedBytes: number;
  countsCached: number;
  contexts: ContextScan[];
  /**
   * Context directories holding no conversation.jsonl: invisible to ls and to the sweep (the
   * runtime skips them), but `conversation rm` removes them as `mur conversation rm` does.
   * `file` describes the directory; `messages` is 0.
   */
  fileless: ContextScan[];
  modes: ModeEntry[];
  debris: Debris[];
  problems: Problem[];
}

const HEADER_PROBE = 64 * 1024;

/**
 * Read and parse the first line only (a header is small; a longer first line is not one).
 * `lstat`: the file's lstat the caller just made (what is opened must still be that file).
 */
export async function readHeader(dir: Dir, name: string, lstat?: BigIntStats): Promise<RecordHeader | undefined> {
  await Promise.resolve();
  const { data: head, stat } = dir.readHeadSync(name, HEADER_PROBE, lstat);
  const nl = head.indexOf(10);
  if (nl < 0 && head.length < Number(stat.size)) return undefined;
  return parseHeaderLine(nl < 0 ? head : head.subarray(0, nl));
}

/** Records up to this size are read whole in one synchronous call; larger ones are streamed. */
const SMALL_RECORD_BYTES = 1 << 20;

/**
 * The buffer small records are read into (grown as needed, up to SMALL_RECORD_BYTES). Shared by
 * every scan: a read and the scan of its bytes happen in one synchronous stretch, so no other
 * scan can interleave between them.
 */
let recordBuf: Buffer | undefined;
function recordBuffer(size: number): Buffer {
  if (!recordBuf || recordBuf.length < size)
    recordBuf = Buffer.allocUnsafe(
      Math.min(SMALL_RECORD_BYTES, Math.max(64 << 10, 2 ** Math.ceil(Math.log2(size + 1)))),
    );
  return recordBuf;
}

/**
 * Count message lines of one record file (small ones read whole, large ones streamed). Throws
 * `sparse_file` for a record that is mostly holes (not read, at any size) and `line_too_long` for
 * one holding a line over the line cap that may be JSON (docs/limits.md).
 */
export async function countMessages(
  dir: Dir,
  name: string,
  signal?: AbortSignal,
  onRead?: (bytesRead: number) => void,
): Promise<{ messages: number; header: RecordHeader | undefined; utf8: boolean; terminated: boolean }> {
  // Judged before anything is read, at any size (a 1 MiB hole costs no disk either).
  const pre = dir.lstatSync(name);
  if (pre?.isFile()) {
    const sparse = sparseFileError(pre);
    if (sparse) throw sparse;
  }
  const small = dir.readSmallSync(name, SMALL_RECORD_BYTES, pre);
  if (small) {
    const r = scanRecordBytes(small.data);
    onRead?.(small.data.length);
    return { messages: r.messages, header: r.header, utf8: r.utf8, terminated: r.terminated };
  }
  const { fh, stat } = await dir.openFile(name);
  await using _ = fh;
  // (judged again when what was opened is not what was judged: it may have grown since)
  const sparse = pre && pre.size === stat.size && pre.blocks === stat.blocks ? undefined : sparseFileError(stat);
  if (sparse) throw sparse;
  const r = await scanRecord(fh, Number(stat.size), { ...(signal ? { signal } : {}), ...(onRead ? { onRead } : {}) });
  return { messages: r.messages, header: r.header, utf8: r.utf8, terminated: r.terminated };
}

export interface RecordsScanOptions {
  /** Only these stores (undefined = all). */
  stores?: ReadonlySet<string>;
  /**
   * Read whole (count + UTF-8 check) the records owned by (store, capsule) pairs in this set
   * (`store\0capsule`): a record a policy may act on must be readable by the runtime.
   */
  countOwned?: ReadonlySet<string>;
  /** Count every record's messages (conversation ls). */
  countAll?: boolean;
  collectModes: boolean;
  /**
   * With collectModes: keep only the entries this says yes to (the sweep keeps those whose mode
   * needs a change or a report, not the thousands that are already right).
   */
  keepMode?: (e: ModeEntry) => boolean;
  nowMs: number;
  /** Temp files older than this are debris even if their pid is alive (pid reuse). */
  debrisAgeMs: number;
  isPidAlive: (pid: number) => boolean;
  /** Message counts of unchanged records from an earlier sweep (dev/ino/size/mtime must match). */
  countCache?: MemoryTraceCache;
  signal?: AbortSignal;
  /** Told after each buffer of counting: records counted so far and bytes read so far (progress). */
  onCount?: (p: { records: number; bytes: number }) => void;
}

/** Scan `<home>/conversations`. `home` stays open; everything below is opened and closed here. */
export async function scanRecords(home: Dir, anchor: string, opts: RecordsScanOptions): Promise<RecordsScan> {
  const out: RecordsScan = {
    exists: false,
    counted: 0,
    countedBytes: 0,
    countsCached: 0,
    contexts: [],
    fileless: [],
    modes: [],
    debris: [],
    problems: [],
  };
  const rootSt = await home.lstat(CONVERSATIONS_DIR);
  if (!rootSt) return out;
  if (opts.collectModes) pushMode(out, opts, modeEntry(home, anchor, [CONVERSATIONS_DIR], rootSt, 'private_dir'));
  if (!rootSt.isDirectory()) return out;
  out.exists = true;
  await using root = await openOrProblem(home, CONVERSATIONS_DIR, out.problems);
  if (!root) return out;
  for (const store of await root.list()) {
    if (store.startsWith('.')) continue;
    if (opts.stores && !opts.stores.has(store)) continue;
    const sst = await root.lstat(store);
    if (!sst) continue;
    if (opts.collectModes) pushMode(out, opts, modeEntry(root, anchor, [CONVERSATIONS_DIR, store], sst, 'private_dir'));
    if (sst.isSymbolicLink()) {
      out.problems.push({
        target: root.display(store),
        code: Codes.symlink,
        detail: `${root.display(store)} is a symbolic link; record stores are never followed`,
      });
      continue;
    }
    if (!sst.isDirectory()) continue;
    await using sdir = await openOrProblem(root, store, out.problems);
    if (!sdir) continue;
    await scanStore(sdir, store, anchor, opts, out);
    opts.countCache?.forget(sdir.path);
  }
  return out;
}

/**
 * A count that a hostile record's size makes unreadable (`sparse_file`, `line_too_long`) is a
 * problem for that record, which is still listed with its header and no count (so no
 * `max_messages` truncation, and `conversation rm` still reaches it); other errors propagate.
 */
async function uncountable<T>(target: string, out: RecordsScan, count: () => Promise<T>): Promise<T | undefined> {
  const t0 = performance.now();
  try {
    return await count();
  } catch (err) {
    const code = errnoCode(err);
    if (code !== Codes.sparseFile && code !== Codes.lineTooLong) throw err;
    out.problems.push({
      target,
      code,
      detail: `${target}: ${describeError(err)}; its messages are not counted (${Math.round(performance.now() - t0)} ms spent)`,
    });
    return undefined;
  }
}

/** Contexts looked at per relative pass (bounds the stats held at once). */
const CONTEXT_BATCH = 32;

/** A context's directory and record lstat, when they may let warmRecord settle it. */
interface WarmRecord {
  cst: BigIntStats;
  fst: BigIntStats;
}

/**
 * The contexts of `batch` that warmRecord may settle, found in one relative pass
 * (Dir.relativePassSync: an lstat of the context and of its record, a listing of the context):
 * a directory whose record is a regular file and that holds no temp file of a rewrite. Every other
 * context (a link, a temp file, no record, an error) takes scanStore's descriptor-relative path,
 * as on a first sweep. The listing only ever sends a context there.
 */
function warmRecords(sdir: Dir, batch: readonly string[]): Map<string, WarmRecord> {
  const out = new Map<string, WarmRecord>();
  const candidates = batch.filter((c) => !c.startsWith('.'));
  if (candidates.length === 0) return out;
  sdir.relativePassSync((at) => {
    for (const context of candidates) {
      const cst = at.lstat(context);
      if (!cst || cst instanceof Error || !cst.isDirectory()) continue;
      const fst = at.lstat(`${context}/${RECORD_FILE}`);
      if (!fst || fst instanceof Error || !fst.isFile()) continue;
      const entries = at.list(context);
      if (entries instanceof Error || entries.some((e) => parseTempName(e, RECORD_FILE) !== undefined)) continue;
      out.set(context, { cst, fst });
    }
  });
  return out;
}

async function scanStore(
  sdir: Dir,
  store: string,
  anchor: string,
  opts: RecordsScanOptions,
  out: RecordsScan,
): Promise<void> {
  const contexts = await sdir.list();
  // Asked once, before this scan stores anything under the store: a first sweep makes no pass.
  const cacheKnowsStore = opts.countCache?.knowsDir('R', sdir.path) === true;
  let warm = new Map<string, WarmRecord>();
  for (let i = 0; i < contexts.length; i++) {
    const context = contexts[i] as string;
    if (cacheKnowsStore && i % CONTEXT_BATCH === 0) warm = warmRecords(sdir, contexts.slice(i, i + CONTEXT_BATCH));
    await yieldIfBusy();
    opts.signal?.throwIfAborted();
    const chain = [CONVERSATIONS_DIR, store, context];
    const w = warm.get(context);
    if (w && warmRecord(sdir, store, context, anchor, chain, w, opts, out)) continue;
    if (context.startsWith(TRASH_PREFIX)) {
      const st = await sdir.lstat(context);
      if (st?.isDirectory()) {
        out.debris.push({
          kind: 'trash_dir',
          ref: { anchor, chain },
          path: sdir.display(context),
          identity: identityOf(st),
          detail: 'a context directory an interrupted murmur-gc run had started to remove',
        });
      }
      continue;
    }
    if (context.startsWith(KEPT_PREFIX)) {
      const st = await sdir.lstat(context);
      if (st?.isDirectory())
        out.debris.push({
          kind: 'kept_dir',
          ref: { anchor, chain },
          path: sdir.display(context),
          identity: identityOf(st),
          detail: 'what an earlier removal could not remove whole',
        });
      continue;
    }
    if (context.startsWith('.')) continue;
    const cst = await sdir.lstat(context);
    if (!cst) continue;
    if (cst.isSymbolicLink()) {
      out.problems.push({
        target: sdir.display(context),
        code: Codes.symlink,
        detail: `${sdir.display(context)} is a symbolic link; contexts are never followed`,
      });
      continue;
    }
    if (!cst.isDirectory()) continue;
    if (opts.collectModes) pushMode(out, opts, modeEntry(sdir, anchor, chain, cst, 'private_dir'));
    await using cdir = await openOrProblem(sdir, context, out.problems);
    if (!cdir) continue;
    for (const entry of await cdir.list()) {
      const t = parseTempName(entry, RECORD_FILE);
      if (!t) continue;
      const tst = await cdir.lstat(entry);
      if (!tst?.isFile()) continue;
      const old = opts.nowMs - Number(tst.mtimeMs) > opts.debrisAgeMs;
      if ((t.pid !== process.pid && !opts.isPidAlive(t.pid)) || old) {
        out.debris.push({
          kind: 'temp_file',
          ref: { anchor, chain: [...chain, entry] },
          path: cdir.display(entry),
          identity: identityOf(tst),
          detail: `temp file of an interrupted rewrite (pid ${t.pid})`,
        });
      }
    }
    const fst = await cdir.lstat(RECORD_FILE);
    if (!fst) {
      out.fileless.push({
        store,
        context,
        path: cdir.display(RECORD_FILE),
        dirIdentity: identityOf(cst),
        dirUid: Number(cst.uid),
        file: { identity: identityOf(cst), size: 0, mtimeMs: Number(cst.mtimeMs), uid: Number(cst.uid) },
        header: undefined,
        messages: 0,
      });
      continue;
    }
    if (opts.collectModes) pushMode(out, opts, modeEntry(cdir, anchor, [...chain, RECORD_FILE], fst, 'private_file'));
    if (fst.isSymbolicLink()) {
      out.problems.push({
        target: cdir.display(RECORD_FILE),
        code: Codes.symlink,
        detail: `${cdir.display(RECORD_FILE)} is a symbolic link; never followed`,
      });
      continue;
    }
    if (!fst.isFile()) {
      out.problems.push({
        target: cdir.display(RECORD_FILE),
        code: Codes.notRegular,
        detail: `${cdir.display(RECORD_FILE)} is not a regular file; never opened`,
      });
      continue;
    }
    let header: RecordHeader | undefined;
    let messages: number | undefined;
    let unreadable: boolean;
    let terminated: boolean | undefined;
    try {
      const key = cdir.display(RECORD_FILE);
      const state = traceFileState(fst);
      const known = opts.countCache?.getRecord(sdir.path, context, state);
      // A small record that may need counting is read once, for its header and its count.
      const mayCount = opts.countAll === true || (opts.countOwned?.size ?? 0) > 0;
      // (read into one reused buffer: scanRecordBytes copies out what it returns, and nothing
      // else sees the bytes, so 10 000 records do not leave 10 000 buffers for the GC)
      // (one that looks sparse is not read here: countMessages reports it, `sparse_file`)
      const whole =
        !known && mayCount && fst.size <= BigInt(SMALL_RECORD_BYTES) && !sparseFileError(fst)
          ? cdir.readSmallSync(RECORD_FILE, SMALL_RECORD_BYTES, fst, recordBuffer(Number(fst.size)))
          : undefined;
      const wholeScan = whole ? scanRecordBytes(whole.data) : undefined;
      unreadable = known?.unreadable === true || wholeScan?.utf8 === false;
      terminated = known ? known.terminated : wholeScan?.terminated;
      header = known
        ? (known.header ?? undefined)
        : wholeScan
          ? wholeScan.header
          : await readHeader(cdir, RECORD_FILE, fst);
      const owned = header !== undefined && opts.countOwned?.has(`${store}\0${header.capsule}`) === true;
      if (!unreadable && (opts.countAll || owned)) {
        if (known?.messages !== undefined) {
          messages = known.messages;
          out.countsCached++;
        } else {
          out.counted++;
          const before = out.countedBytes;
          const onRead = opts.onCount
            ? (b: number) => opts.onCount?.({ records: out.counted, bytes: before + b })
            : undefined;
          const c =
            wholeScan ?? (await uncountable(key, out, () => countMessages(cdir, RECORD_FILE, opts.signal, onRead)));
          out.countedBytes = before + Number(fst.size);
          if (wholeScan) onRead?.(Number(fst.size));
          if (c) {
            messages = c.messages;
            header = c.header;
            unreadable = !c.utf8;
            terminated = c.terminated;
          }
        }
      }
      recordFound(
        out,
        opts,
        { sdir, store, context, key, state, cst, fst },
        { header, messages, unreadable, terminated },
      );
    } catch (err) {
      out.problems.push(problemOf(cdir.display(RECORD_FILE), err));
      continue;
    }
  }
}

/**
 * Settle a context from the cache, as scanStore's descriptor-relative path would report it, when
 * its record's dev/ino/size/mtime are exactly those of the entry an earlier sweep cached (an entry
 * made from a descriptor-relative read, so the cached header and count are that very file's,
 * whatever route the lstat took) and no count is needed that the cache lacks. False (nothing
 * reported): scanStore reads it.
 */
function warmRecord(
  sdir: Dir,
  store: string,
  context: string,
  anchor: string,
  chain: string[],
  w: WarmRecord,
  opts: RecordsScanOptions,
  out: RecordsScan,
): boolean {
  const state = traceFileState(w.fst);
  const known = opts.countCache?.getRecord(sdir.path, context, state);
  if (!known) return false;
  const unreadable = known.unreadable === true;
  const header = known.header ?? undefined;
  const owned = header !== undefined && opts.countOwned?.has(`${store}\0${header.capsule}`) === true;
  const counted = !unreadable && (opts.countAll === true || owned);
  if (counted && known.messages === undefined) return false;
  const key = `${sdir.display(context)}/${RECORD_FILE}`;
  if (opts.collectModes) {
    pushMode(out, opts, modeEntry(sdir, anchor, chain, w.cst, 'private_dir'));
    pushMode(out, opts, modeEntryAt(key, anchor, [...chain, RECORD_FILE], w.fst, 'private_file'));
  }
  if (counted) out.countsCached++;
  recordFound(
    out,
    opts,
    { sdir, store, context, key, state, cst: w.cst, fst: w.fst },
    { header, messages: counted ? known.messages : undefined, unreadable, terminated: known.terminated },
  );
  return true;
}

/** Report a record read (or found in the cache): its problem if unreadable, its cache entry, its context. */
function recordFound(
  out: RecordsScan,
  opts: RecordsScanOptions,
  at: {
    sdir: Dir;
    store: string;
    context: string;
    key: string;
    state: TraceFileState;
    cst: BigIntStats;
    fst: BigIntStats;
  },
  found: {
    header: RecordHeader | undefined;
    messages: number | undefined;
    unreadable: boolean;
    terminated: boolean | undefined;
  },
): void {
  let { header, messages } = found;
  const { unreadable, terminated } = found;
  if (unreadable) {
    // The runtime reads nothing in it: no header, no messages, no owner (docs/design.md §R1).
    header = undefined;
    messages = 0;
    out.problems.push({
      target: at.key,
      code: Codes.recordUnreadable,
      detail: `${at.key} is not valid UTF-8; the runtime cannot read it, so it is never pruned or truncated (\`conversation rm\` removes it)`,
    });
  }
  opts.countCache?.setRecord(at.sdir.path, at.context, at.state, {
    header: header ?? null,
    unreadable,
    ...definedOnly({ messages, terminated }),
  });
  out.contexts.push({
    store: at.store,
    context: at.context,
    path: at.key,
    dirIdentity: identityOf(at.cst),
    dirUid: Number(at.cst.uid),
    file: {
      identity: identityOf(at.fst),
      size: Number(at.fst.size),
      mtimeMs: Number(at.fst.mtimeMs),
      uid: Number(at.fst.uid),
    },
    header,
    messages,
    ...(unreadable ? { unreadable } : {}),
    ...definedOnly({ terminated }),
  });
}

// ---- home mode targets beyond conversations ---------------------------------------------------

/** Mode entries for the home itself, `state/` (+ stores), `running/` (+ files) and `gc/`. */
export async function scanHomeModes(home: Dir, anchor: string): Promise<{ modes: ModeEntry[]; problems: Problem[] }> {
  const modes: ModeEntry[] = [];
  const problems: Problem[] = [];
  modes.push({
    path: anchor,
    role: 'home',
    kind: 'dir',
    mode: modeBits(home.stat),
    uid: Number(home.stat.uid),
    nlink: Number(home.stat.nlink),
    ref: { anchor, chain: [] },
    identity: home.identity,
  });
  for (const [name, childRole] of [
    ['state', 'private_dir'],
    ['running', 'private_file'],
    ['gc', undefined],
  ] as const) {
    const st = await home.lstat(name);
    if (!st) continue;
    modes.push(modeEntry(home, anchor, [name], st, 'private_dir'));
    if (!childRole || !st.isDirectory()) continue;
    try {
      await using d = await home.openDir(name);
      for (const child of await d.list()) {
        if (child.startsWith('.')) continue;
        const cst = await d.lstat(child);
        if (!cst) continue;
        if (childRole === 'private_file' && !child.endsWith('.json')) continue;
        modes.push(modeEntry(d, anchor, [name, child], cst, childRole));
      }
    } catch (err) {
      problems.push(problemOf(home.display(name), err));
    }
  }
  return { modes, problems };
}

// ---- sessions roots --------------------------------------------------------------------------

/** A trace that was read or served from the cache (a CompactTrace is one, for nearly every session). */
export interface TraceOk {
  readonly ok: true;
  readonly summary: TraceSummary;
  readonly mtimeMs: number;
  readonly size: number;
  readonly identity: Identity;
  readonly fromCache: boolean;
}

export interface SessionScan {
  readonly name: string;
  readonly identity: Identity;
  readonly uid: number;
  readonly dirMtimeMs: number;
  /**
   * undefined: no trace.jsonl. Not ok: unreadable; `mtimeMs` is the trace's own when it was
   * found but too hostile to judge (`sparse_file`, `line_too_long`, `too_many_ids`), so liveness
   * still sees its writes.
   */
  trace: TraceOk | { ok: false; code: string; detail: string; mtimeMs?: number } | undefined;
}

/**
 * One scanned session as the sweep holds it until the end (100 000 of them at once): its identity
 * as two fields (the device's bigint shared), the object built only when asked for.
 */
class ScannedSession implements SessionScan {
  readonly dev: bigint;
  readonly ino: PackedIno;
  readonly uid: number;
  readonly dirMtimeMs: number;
  trace: SessionScan['trace'] = undefined;
  constructor(
    readonly name: string,
    st: BigIntStats,
  ) {
    this.dev = identityOf(st).dev;
    this.ino = packIno(st.ino);
    this.uid = Number(st.uid);
    this.dirMtimeMs = Number(st.mtimeMs);
  }
  get identity(): Identity {
    return { dev: this.dev, ino: inoOf(this.ino) };
  }
}

function traceOk(summary: TraceSummary, state: TraceFileState, identity: Identity, fromCache: boolean): TraceOk {
  // A compact trace carries its own state and identity (those of the file it was built from).
  if (summary instanceof CompactTrace) return summary;
  return { ok: true, summary, mtimeMs: state.mtimeMs, size: state.size, identity, fromCache };
}

export interface RootScan {
  root: string;
  exists: boolean;
  identity: Identity | undefined;
  sessions: SessionScan[];
  /** Sessions held in this root by the undo window (`.murmur-gc-quarantine.<until>.<ses>`). */
  held: { entry: string; session: string; untilMs: number; identity: Identity; uid: number; birth: bigint }[];
  debris: Debris[];
  problems: Problem[];
}

/**
 * The cached summary of `<root>/<name>/trace.jsonl` when that file is unchanged, found with one
 * lstat and without opening the session directory (the warm sweep's common case).
 * Why this is safe although the path walks through `<name>`: a hit requires the file found to be a
 * regular file on the root's device with exactly the dev/ino/size/mtime of the file summarized
 * under this key by an earlier sweep, which read it descriptor-relatively. So the summary is of
 * that very file, whatever route reached it. Anything else (a miss, no trace, an error) returns
 * undefined and the caller takes the descriptor-relative path.
 */
function cachedTrace(root: Dir, name: string, cache: TraceCache, trace: WarmTrace | undefined): TraceOk | undefined {
  if (!trace) return undefined;
  const summary = cache.get(root.path, name, trace.state);
  if (!summary) return undefined;
  return traceOk(summary, trace.state, trace.identity, true);
}

/** Names looked at per batch of lstats (bounds what is held at once, whatever the root's size). */
const LSTAT_BATCH = 256;

/** What a warm lstat of a session directory found. */
type WarmDir = ScannedSession | 'gone' | 'link' | 'other' | Error;
/** The trace's state when it is a regular file on the root's device (else no cache hit). */
interface WarmTrace {
  state: TraceFileState;
  identity: Identity;
}

/**
 * For the session names of `batch` (called only when the cache knew this root as its scan began):
 * the session directory's lstat and its trace's, made in one pass (Dir.relativePassSync), kept as
 * what the scan needs of them. The cache itself is asked in the scan's loop, name by name (has,
 * then get: it reads its lines in that order, and a line looked up as it comes is decoded in place).
 */
function warmStats(root: Dir, batch: readonly string[]): Map<string, { dir: WarmDir; trace: WarmTrace | undefined }> {
  const out = new Map<string, { dir: WarmDir; trace: WarmTrace | undefined }>();
  const known = batch.filter((name) => idTimestampMs(name, 'ses_') !== undefined);
  root.relativePassSync((at) => {
    for (const name of known) {
      const d = at.lstat(name);
      const dir: WarmDir =
        d === undefined
          ? 'gone'
          : d instanceof Error
            ? d
            : d.isSymbolicLink()
              ? 'link'
              : d.isDirectory()
                ? new ScannedSession(name, d)
                : 'other';
      const t = at.lstat(`${name}/trace.jsonl`);
      const hit = t !== undefined && !(t instanceof Error) && t.isFile() && t.dev === root.stat.dev;
      out.set(name, { dir, trace: hit ? { state: traceFileState(t), identity: identityOf(t) } : undefined });
    }
  });
  return out;
}

function symlinkSession(root: Dir, name: string): Problem {
  return {
    target: root.display(name),
    code: Codes.symlink,
    detail: `${root.display(name)} is a symbolic link; not a session directory, never followed`,
  };
}

/**
 * A trace as the scan keeps it: its unaccounted work cut to what `lost` still allows (none: none
 * kept; the scans that never reconcile hold none of it).
 */
function kept(t: TraceOk, lost: LostQuota | undefined): TraceOk {
  if (t.summary.unaccounted.length === 0) return t;
  const summary = lost ? lost.take(t.summary) : { ...t.summary, unaccounted: [], unaccountedMore: true };
  return summary === t.summary
    ? t
    : { ok: true, summary, mtimeMs: t.mtimeMs, size: t.size, identity: t.identity, fromCache: t.fromCache };
}

/**
 * Scan one sessions root. The root's final component must not be a symlink. `lost`: the
 * unaccounted work the caller (a sweep, which reconciles it) may still hold; without it none is kept.
 */
export async function scanSessionsRoot(
  rootPath: string,
  cache: TraceCache | undefined,
  signal?: AbortSignal,
  lost?: LostQuota,
): Promise<RootScan> {
  const out: RootScan = {
    root: rootPath,
    exists: false,
    identity: undefined,
    sessions: [],
    held: [],
    debris: [],
    problems: [],
  };
  let root: Dir;
  try {
    const pre = await lstatPath(rootPath);
    if (!pre) return out;
    if (pre.isSymbolicLink()) {
      out.problems.push({
        target: rootPath,
        code: Codes.symlink,
        detail: `${rootPath} is a symbolic link; a sessions root is never followed`,
      });
      return out;
    }
    if (!pre.isDirectory()) return out;
    root = await Dir.open(rootPath);
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ENOENT' || code === 'ENOTDIR') return out;
    if (code === 'ELOOP') {
      out.problems.push({
        target: rootPath,
        code: Codes.symlink,
        detail: `${rootPath} is a symbolic link; a sessions root is never followed`,
      });
      return out;
    }
    out.problems.push(problemOf(rootPath, err));
    return out;
  }
  await using _ = root;
  out.exists = true;
  out.identity = root.identity;
  if (Number(root.stat.uid) !== processUid()) {
    out.problems.push({
      target: rootPath,
      code: Codes.foreignOwner,
      detail: `${rootPath} belongs to uid ${root.stat.uid}, not ${processUid()}; not swept`,
    });
    return out;
  }
  const names = await root.list();
  // Asked once, before this scan stores anything under the root (it knows the root from then
  // on): a first sweep makes no pass, and no lstat that could only miss.
  const cacheKnowsRoot = cache?.knowsDir('T', root.path) === true;
  let warm = new Map<string, { dir: WarmDir; trace: WarmTrace | undefined }>();
  const debrisDir = async (name: string, kind: 'trash_dir' | 'kept_dir', detail: string) => {
    const st = await root.lstat(name);
    if (st?.isDirectory())
      out.debris.push({
        kind,
        ref: { anchor: rootPath, chain: [name] },
        path: root.display(name),
        identity: identityOf(st),
        birth: st.birthtimeNs,
        detail,
      });
  };
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    if (cacheKnowsRoot && i % LSTAT_BATCH === 0) warm = warmStats(root, names.slice(i, i + LSTAT_BATCH));
    await yieldIfBusy();
    signal?.throwIfAborted();
    if (name.startsWith(TRASH_PREFIX)) {
      await debrisDir(name, 'trash_dir', 'a session directory an interrupted murmur-gc run had started to remove');
      continue;
    }
    if (name.startsWith(KEPT_PREFIX)) {
      await debrisDir(name, 'kept_dir', 'what an earlier removal could not remove whole');
      continue;
    }
    if (name.startsWith(SESSION_QUARANTINE_PREFIX)) {
      const q = parseSessionQuarantineName(name);
      const st = q ? await root.lstat(name) : undefined;
      if (q && st?.isDirectory())
        out.held.push({
          entry: name,
          session: q.session,
          untilMs: q.untilMs,
          identity: identityOf(st),
          uid: Number(st.uid),
          birth: st.birthtimeNs,
        });
      continue;
    }
    if (idTimestampMs(name, 'ses_') === undefined) continue;
    let s: ScannedSession;
    let sdir: Dir | undefined;
    const pre = warm.get(name);
    if (cache && pre && cache.has(root.path, name)) {
      // Known from an earlier sweep: its lstat and its trace's (made for its batch) usually
      // settle it.
      if (pre.dir instanceof Error) throw pre.dir;
      if (pre.dir === 'gone' || pre.dir === 'other') continue;
      if (pre.dir === 'link') {
        out.problems.push(symlinkSession(root, name));
        continue;
      }
      s = pre.dir;
      const known = cachedTrace(root, name, cache, pre.trace);
      if (known) {
        s.trace = kept(known, lost);
        out.sessions.push(s);
        continue;
      }
    } else {
      // Not in the cache (a first sweep): open it at once (O_DIRECTORY|O_NOFOLLOW: a link is
      // refused with ELOOP, anything else that is not a directory with ENOTDIR, before it is
      // opened) and take its identity from the descriptor held; no lstat before.
      try {
        sdir = await root.openDir(name);
      } catch (err) {
        const code = errnoCode(err);
        if (code === 'ENOENT' || code === 'ENOTDIR') continue;
        out.problems.push(code === 'ELOOP' ? symlinkSession(root, name) : problemOf(root.display(name), err));
        continue;
      }
      s = new ScannedSession(name, sdir.stat);
    }
    try {
      sdir ??= await root.openDir(name, s.identity);
      await using _ = sdir;
      const tst = await sdir.lstat('trace.jsonl');
      if (tst) {
        const t0 = performance.now();
        try {
          const r = await readTraceSummary(sdir, { dir: root.path, name }, cache, signal, tst);
          s.trace = kept(traceOk(r.summary, r.state, identityOf(tst), r.fromCache), lost);
        } catch (err) {
          const p = problemOf(sdir.display('trace.jsonl'), err);
          s.trace = { ok: false, code: p.code, detail: p.detail };
          // A trace too hostile to judge is reported (an unreadable one is judged by its mtime alone).
          if (p.code === Codes.sparseFile || p.code === Codes.lineTooLong || p.code === Codes.tooManyIds) {
            s.trace.mtimeMs = Number(tst.mtimeMs);
            out.problems.push({
              ...p,
              detail: `${p.detail}; the session is judged by the trace's mtime alone (${Math.round(performance.now() - t0)} ms spent)`,
            });
          }
        }
      }
    } catch (err) {
      out.problems.push(problemOf(root.display(name), err));
      continue;
    }
    out.sessions.push(s);
  }
  cache?.forget(root.path);
  return out;
}
