// The cache of trace summaries and record scans a sweep keeps between sweeps (MemoryTraceCache),
// and the compact forms its entries take in memory and on disk. Persisted as
// <home>/gc/trace-cache.json by src/gchome/trace-cache.ts; src/runtime/trace-scan.ts reads through
// it, src/runtime/inventory.ts stores the record entries. Guarantees: an entry is served only for
// the file state it was made from (same dev/ino/size/mtime); what a line of the persisted file
// says is decoded exactly or not at all (a line it cannot read is a miss, never a wrong summary);
// the common summary is one CompactTrace with its ids packed (packIds), and memory is bounded: no
// entry over CACHE_ENTRY_CAP is kept, and at most CACHE_MAX_BYTES is persisted (docs/limits.md).
import { inoOf, packIno, type BigIntStats, type Identity, type PackedIno } from '../fsx/safe-fs.js';
import { parseHeaderLine, serializeHeader, type RecordHeader } from './record.js';
import { isWorkId, type Delegation, type DetachedWork, type LineAt, type TraceSummary, type Trust } from './trace.js';

export interface TraceFileState {
  dev: string;
  ino: string;
  size: number;
  mtimeMs: number;
}

export function traceFileState(st: BigIntStats): TraceFileState {
  return { dev: st.dev.toString(), ino: st.ino.toString(), size: Number(st.size), mtimeMs: Number(st.mtimeMs) };
}

export function sameFileState(a: TraceFileState, b: TraceFileState): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs;
}

/**
 * Summaries keyed by where the trace is: `dir` (the report path of the directory holding the session
 * directory) and `name` (the session directory's name); the caller persists it (under <home>/gc/)
 * between sweeps.
 */
export interface TraceCache {
  get(dir: string, name: string, state: TraceFileState): TraceSummary | undefined;
  set(dir: string, name: string, state: TraceFileState, summary: TraceSummary): void;
  /** Whether an entry for (dir, name) exists at all (valid or not): none means no lookup can hit. */
  has(dir: string, name: string): boolean;
  /**
   * Whether any trace ('T') or record ('R') entry under `dir` exists (valid or not): none means no
   * lookup there can hit (a first sweep), and a scan need not prepare for hits.
   */
  knowsDir(kind: 'T' | 'R', dir: string): boolean;
  /** Nothing more will be looked up under `dir` in this sweep: entries loaded for it and not used are dropped. */
  forget(dir: string): void;
}

export interface CachedRecord {
  header: RecordHeader | null;
  messages?: number;
  /** Not valid UTF-8: the runtime reads nothing in it (set only when the whole file was read). */
  unreadable?: boolean;
  /** False: the file ends with a torn line (set only when the whole file was read). */
  terminated?: boolean;
}

const EMPTY_TRUST: Record<string, Trust> = Object.freeze({});
const EMPTY_WORK: DetachedWork[] = Object.freeze([]) as unknown as DetachedWork[];

const TRACE_SUFFIX = '/trace.jsonl';
const RECORD_SUFFIX = '/conversation.jsonl';

/** A directory's report path as a cache key (no trailing slash, so `display()` round-trips). */
function dirKey(dir: string): string {
  return dir.endsWith('/') ? dir.slice(0, -1) : dir;
}

/** One persisted line, parsed: its kind, directory, name and encoded entry (strings copied out). */
function parseLine(
  data: Buffer,
  start: number,
  end: number,
): { kind: 'T' | 'R'; dir: string; name: string; raw: string } | undefined {
  const kind = data[start];
  if (data[start + 1] !== 9 || (kind !== 84 && kind !== 82)) return undefined; // 'T' | 'R', then a tab
  const tab = data.indexOf(9, start + 2);
  if (tab < 0 || tab >= end) return undefined;
  let path: unknown;
  try {
    path = JSON.parse(data.toString('utf8', start + 2, tab));
  } catch {
    return undefined;
  }
  const suffix = kind === 84 ? TRACE_SUFFIX : RECORD_SUFFIX;
  if (typeof path !== 'string' || !path.endsWith(suffix)) return undefined;
  const item = path.slice(0, -suffix.length);
  const slash = item.lastIndexOf('/');
  if (slash < 0 || slash === item.length - 1) return undefined;
  return {
    kind: kind === 84 ? 'T' : 'R',
    dir: item.slice(0, slash),
    name: item.slice(slash + 1),
    raw: data.toString('utf8', tab + 1, end),
  };
}

type Kind = 'T' | 'R';
interface Range {
  start: number;
  end: number;
}
/** One directory's persisted lines, read back: bytes, where the next line starts, its key prefix (see readPending). */
interface Stream {
  data: Buffer;
  end: number;
  pos: number;
  prefix: Buffer | undefined;
}
/** `take`'s answer when the entry is its stream's next line (decoded from the bytes in place). */
const IN_PLACE = Symbol('in place');
/** What follows the name in a key, up to the entry: the suffix, the closing quote, the tab. */
const TRACE_TAIL = Buffer.from(`${TRACE_SUFFIX}"\t`);
const RECORD_TAIL = Buffer.from(`${RECORD_SUFFIX}"\t`);

/**
 * Where the entry of the line `data[start, end)` starts when its key is `prefix` + `name` + `tail`
 * byte for byte, else -1. `prefix` is `K<tab>"<dir>/` for a directory JSON writes as it is; a name
 * is matched here only when it is printable ASCII with no quote, backslash or slash (then its JSON
 * is itself, and parseLine would split the key at the same slash): any other line answers -1 and
 * is parsed by parseLine, which then decides alone.
 */
function entryStart(data: Buffer, start: number, end: number, prefix: Buffer, name: string, tail: Buffer): number {
  const n = name.length;
  const at = start + prefix.length;
  if (n === 0 || at + n + tail.length > end || !bytesAt(data, start, prefix)) return -1;
  for (let i = 0; i < n; i++) {
    const c = name.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x2f || c === 0x5c || data[at + i] !== c) return -1;
  }
  return bytesAt(data, at + n, tail) ? at + n + tail.length : -1;
}

/** Whether `data` holds `bytes` at `at` (a loop: a short compare costs less than Buffer.compare's call). */
function bytesAt(data: Buffer, at: number, bytes: Buffer): boolean {
  for (let i = 0; i < bytes.length; i++) if (data[at + i] !== bytes[i]) return false;
  return true;
}

/**
 * The largest entry the cache keeps (UTF-8 bytes of its encoded form): a summary is ids and offsets
 * only, and one this large names tens of thousands of ids (such a trace is read again each sweep).
 */
export const CACHE_ENTRY_CAP = 1 << 20;
/**
 * The most the persisted cache holds (`<home>/gc/trace-cache.json`, src/gchome/trace-cache.ts):
 * never written larger (the entries past it are left out, and their files read again), and a
 * larger file is not murmur-gc's (treated as empty). ~27 MB hold 100 000 sessions.
 */
export const CACHE_MAX_BYTES = 48 << 20;

/** A kept entry: its encoded form, or (a trace with nothing unaccounted) the compact trace itself. */
type Entry = string | CompactTrace;

/** dir → name → entry */
type Entries = Map<string, Map<string, Entry>>;

function entryOf(m: Entries, dir: string, name: string): Entry | undefined {
  return m.get(dir)?.get(name);
}

function put(m: Entries, dir: string, name: string, raw: Entry): void {
  let d = m.get(dir);
  if (!d) m.set(dir, (d = new Map<string, Entry>()));
  d.set(name, raw);
}

function encoded(e: Entry): string {
  return typeof e === 'string' ? e : e.encode();
}

function countOf(m: Entries): number {
  let n = 0;
  for (const d of m.values()) n += d.size;
  return n;
}

/**
 * The trace-summary and record-count cache, kept as the serialized entries it is persisted as.
 * Guarantees:
 * - An entry is returned only when the file's dev/ino/size/mtime equal the ones it was built from;
 *   an entry that does not decode to well-typed values (corrupt, older format) is a miss, never
 *   an error, and the file is read again. A cached record header is re-validated with the
 *   runtime's own header rule.
 * - Entries are decoded only when looked up (loading a cache of 100 000 entries parses no entry);
 *   only the entries looked up or stored in this sweep are persisted (stale ones fall away).
 * - Lookups are cheap: a line whose key is the one looked up is recognized by its bytes in place,
 *   and the common trace entry is decoded from them (no JSON parse, no string but the ids kept);
 *   any other line or entry takes the general parse, which alone decides what it means otherwise
 *   (the in-place path only ever answers as it would). Storing what a lookup just returned
 *   unchanged re-encodes nothing.
 * - Memory: the persisted file is indexed by directory when loaded (byte ranges, no entry parsed)
 *   and a directory's lines are read and parsed when it is first looked up (one sessions root or
 *   store at a time, not the whole file). Entries are held per directory by name (the name string
 *   the caller already holds, once looked up), each encoded entry as its own string (never a
 *   slice pinning a buffer); an entry moves from "loaded" to "kept" when used, and `forget(dir)`
 *   drops the unused rest. A trace with nothing unaccounted and no child workdir (nearly all) is
 *   kept as one CompactTrace, which is also what the scan holds for that session (summary, file
 *   state and identity in one object; no entry text kept).
 * - Size: an entry whose encoded form is over CACHE_ENTRY_CAP is not kept (that trace is read
 *   again next sweep), nor one past CACHE_MAX_BYTES of entry text stored this sweep; the file
 *   written is at most CACHE_MAX_BYTES (src/gchome/trace-cache.ts). An entry holds ids and
 *   offsets only (encodeTrace): the unaccounted work a trace names never carries its command.
 * - `changed` is false when persisting would write back exactly what was loaded.
 */
export class MemoryTraceCache implements TraceCache {
  /** as loaded, not yet used in this sweep */
  private readonly loadedTraces: Entries = new Map();
  private readonly loadedRecords: Entries = new Map();
  private loadedTraceCount = 0;
  private loadedRecordCount = 0;
  /** the persisted file's lines not read yet, by kind: dir → byte ranges, and how to read them */
  private readonly pendingTraces = new Map<string, Range[]>();
  private readonly pendingRecords = new Map<string, Range[]>();
  /** reads file bytes [start, end) into `into` at `at`; returns how many */
  private readRange: ((start: number, end: number, into: Buffer, at: number) => number) | undefined;
  private spare: Buffer | undefined;
  /** directories read back and being parsed as they are looked up, by kind: dir → bytes, next line */
  private readonly traceStreams = new Map<string, Stream>();
  private readonly recordStreams = new Map<string, Stream>();
  /**
   * The entry `locate` found in place, not consumed yet (its stream's next line): which one, and
   * its stream's bytes [inStart, inEnd), the line ending at inEnd. Any other lookup drops it.
   */
  private inData: Buffer | undefined;
  private inStart = 0;
  private inEnd = 0;
  private inKind: Kind = 'T';
  private inDir = '';
  private inName = '';
  private closeSource: (() => void) | undefined;
  /** what this sweep keeps */
  private readonly keptTraces: Entries = new Map();
  private readonly keptRecords: Entries = new Map();
  /** the record `getRecord` returned last (kept as its loaded text): storing it back unchanged re-encodes nothing */
  private lastRecord: { dir: string; name: string; state: TraceFileState; value: CachedRecord } | undefined;
  private dirty = false;
  /** UTF-8 bytes of the trace entries this sweep stored as text (the uncommon ones): at most CACHE_MAX_BYTES. */
  private textBytes = 0;

  get(dir: string, name: string, state: TraceFileState): TraceSummary | undefined {
    const d = dirKey(dir);
    const kept = entryOf(this.keptTraces, d, name);
    if (kept instanceof CompactTrace) return kept.sameState(state) ? kept : undefined;
    let raw = kept;
    if (raw === undefined) {
      const t = this.take('T', d, name);
      if (t === undefined) return undefined;
      if (t === IN_PLACE) {
        const fast = decodeTraceAt(this.inData as Buffer, this.inStart, this.inEnd, state);
        if (fast) {
          this.inData = undefined;
          put(this.keptTraces, d, name, fast);
          return fast;
        }
        raw = this.inPlaceText();
      } else raw = t;
    }
    const summary = decodeTrace(raw, state, kept === undefined);
    // Once valid, a compact trace replaces its text (the text is rebuilt from it when persisted).
    if (summary) put(this.keptTraces, d, name, summary instanceof CompactTrace ? summary : raw);
    return summary;
  }

  set(dir: string, name: string, state: TraceFileState, summary: TraceSummary): void {
    const d = dirKey(dir);
    const prev = entryOf(this.keptTraces, d, name);
    const entry = isCompact(summary) ? CompactTrace.of(state, summary, false) : encodeTrace(state, summary);
    // An entry over the cap (a trace naming tens of thousands of ids), or one past what the cache
    // may hold in all, is not kept: that trace is read again by the next sweep (docs/limits.md).
    const bytes = typeof entry === 'string' ? Buffer.byteLength(entry) : entry.encodedBytesAtMost();
    if (bytes > CACHE_ENTRY_CAP || (typeof entry === 'string' && this.textBytes + bytes > CACHE_MAX_BYTES)) {
      if (prev !== undefined) {
        this.keptTraces.get(d)?.delete(name);
        this.dirty = true;
      }
      return;
    }
    if (typeof entry === 'string') this.textBytes += bytes;
    // (encoded only to compare with an entry already kept; a new one changes the cache anyway)
    if (prev === undefined || encoded(prev) !== encoded(entry)) this.dirty = true;
    put(this.keptTraces, d, name, entry);
  }

  has(dir: string, name: string): boolean {
    const d = dirKey(dir);
    return entryOf(this.keptTraces, d, name) !== undefined || this.locate('T', d, name);
  }

  knowsDir(kind: Kind, dir: string): boolean {
    const d = dirKey(dir);
    const t = kind === 'T';
    const some = (m: Entries): boolean => (m.get(d)?.size ?? 0) > 0;
    return (
      (t ? this.pendingTraces : this.pendingRecords).has(d) ||
      (t ? this.traceStreams : this.recordStreams).has(d) ||
      some(t ? this.loadedTraces : this.loadedRecords) ||
      some(t ? this.keptTraces : this.keptRecords)
    );
  }

  forget(dir: string): void {
    const d = dirKey(dir);
    this.loadedTraces.delete(d);
    this.loadedRecords.delete(d);
    this.pendingTraces.delete(d);
    this.pendingRecords.delete(d);
    this.endStream(this.traceStreams, d);
    this.endStream(this.recordStreams, d);
    this.inData = undefined;
  }

  /** Read back the persisted lines of one directory, the first time it is looked up (parsed as looked up). */
  private readPending(kind: Kind, dir: string): void {
    const pending = kind === 'T' ? this.pendingTraces : this.pendingRecords;
    const ranges = pending.get(dir);
    if (!ranges || !this.readRange) return;
    pending.delete(dir);
    let total = 0;
    for (const r of ranges) total += r.end - r.start + 1;
    // One buffer is reused from directory to directory (no 27 MB of buffers waiting for a GC).
    const data = this.spare && this.spare.length >= total ? this.spare : Buffer.allocUnsafe(Math.max(total, 64 << 10));
    this.spare = undefined;
    let used = 0;
    for (const r of ranges) {
      try {
        used += this.readRange(r.start, r.end, data, used);
      } catch {
        // unreadable now: those entries are misses (the files are read instead)
      }
      data[used++] = 10;
    }
    // A directory whose path JSON writes as it is (no quote, backslash, control character or lone
    // surrogate) has its lines' keys recognized in place: `K<tab>"<dir>/`, the name, the suffix.
    const prefix = JSON.stringify(dir) === `"${dir}"` ? Buffer.from(`${kind}\t"${dir}/`) : undefined;
    (kind === 'T' ? this.traceStreams : this.recordStreams).set(dir, { data, end: used, pos: 0, prefix });
  }

  /** A directory's bytes are parsed (or forgotten): its buffer serves the next one. */
  private endStream(streams: Map<string, Stream>, dir: string): void {
    const st = streams.get(dir);
    if (!st) return;
    streams.delete(dir);
    if (!this.spare || st.data.length > this.spare.length) this.spare = st.data;
  }

  /**
   * What an earlier sweep learnt about a conversation record (`<dir>/<name>/conversation.jsonl`) —
   * its header (null: none) and, when it was counted, its message lines; same staleness rule as traces.
   */
  getRecord(dir: string, name: string, state: TraceFileState): CachedRecord | undefined {
    const d = dirKey(dir);
    let raw = entryOf(this.keptRecords, d, name);
    let r: CachedRecord | undefined;
    if (raw === undefined) {
      const t = this.take('R', d, name);
      if (t === undefined) return undefined;
      if (t === IN_PLACE) {
        r = decodeRecordAt(this.inData as Buffer, this.inStart, this.inEnd, state);
        raw = this.inPlaceText();
      } else raw = t;
    }
    r ??= decodeRecord(encoded(raw), state);
    if (r) {
      put(this.keptRecords, d, name, raw);
      this.lastRecord = { dir: d, name, state, value: r };
    }
    return r;
  }

  setRecord(dir: string, name: string, state: TraceFileState, value: CachedRecord): void {
    const d = dirKey(dir);
    const prev = entryOf(this.keptRecords, d, name);
    const last = this.lastRecord;
    this.lastRecord = undefined;
    // What getRecord just returned for this entry (its text is what is kept), stored back unchanged.
    if (
      prev !== undefined &&
      last?.dir === d &&
      last.name === name &&
      sameFileState(last.state, state) &&
      sameRecord(last.value, value)
    )
      return;
    const raw = encodeRecord(state, value);
    if (prev === undefined || encoded(prev) !== raw) this.dirty = true;
    put(this.keptRecords, d, name, raw);
  }

  /**
   * Whether a loaded entry of `kind` for (dir, name) exists: it is then in the loaded set, or it is
   * the next line of its directory's stream, recognized in place (`inStart`/`inEnd`).
   */
  private locate(kind: Kind, dir: string, name: string): boolean {
    this.readPending(kind, dir);
    const loaded = kind === 'T' ? this.loadedTraces : this.loadedRecords;
    if (loaded.get(dir)?.has(name)) return true;
    if (this.inData !== undefined) {
      // (has() then get(): the line found in place a moment ago is still the stream's next)
      if (this.inName === name && this.inDir === dir && this.inKind === kind) return true;
      this.inData = undefined;
    }
    // Parse the directory's lines only as far as this name: the scan looks names up in the order
    // they were written, so each line is parsed just before it is used (nothing piles up).
    const streams = kind === 'T' ? this.traceStreams : this.recordStreams;
    const st = streams.get(dir);
    if (!st) return false;
    let found = false;
    while (!found && st.pos < st.end) {
      let nl = st.data.indexOf(10, st.pos);
      if (nl < 0 || nl > st.end) nl = st.end;
      if (st.prefix) {
        const at = entryStart(st.data, st.pos, nl, st.prefix, name, kind === 'T' ? TRACE_TAIL : RECORD_TAIL);
        if (at >= 0) {
          this.inData = st.data;
          this.inStart = at;
          this.inEnd = nl;
          this.inKind = kind;
          this.inDir = dir;
          this.inName = name;
          return true;
        }
      }
      const e = parseLine(st.data, st.pos, nl);
      st.pos = nl + 1;
      if (!e) continue;
      put(e.kind === 'T' ? this.loadedTraces : this.loadedRecords, e.dir, e.name, e.raw);
      found = e.kind === kind && e.dir === dir && e.name === name;
    }
    if (st.pos >= st.end) this.endStream(streams, dir);
    return found;
  }

  /**
   * A loaded entry, removed from the loaded set (a stale one is not kept: it falls away): its text,
   * or IN_PLACE when it is its stream's next line (consumed here; `inData[inStart, inEnd)`, which
   * the caller decodes at once and then clears, so no later lookup takes it for the next line).
   */
  private take(kind: Kind, dir: string, name: string): string | typeof IN_PLACE | undefined {
    if (!this.locate(kind, dir, name)) return undefined;
    const d = (kind === 'T' ? this.loadedTraces : this.loadedRecords).get(dir);
    if (this.inData === undefined || d?.has(name)) {
      const raw = d?.get(name);
      d?.delete(name);
      return typeof raw === 'string' ? raw : undefined;
    }
    const streams = kind === 'T' ? this.traceStreams : this.recordStreams;
    const st = streams.get(dir) as Stream;
    st.pos = this.inEnd + 1;
    if (st.pos >= st.end) this.endStream(streams, dir);
    return IN_PLACE;
  }

  /** The entry found in place, as its own string. */
  private inPlaceText(): string {
    const text = (this.inData as Buffer).toString('utf8', this.inStart, this.inEnd);
    this.inData = undefined;
    return text;
  }

  /** True when the persisted form would differ from what was loaded. */
  get changed(): boolean {
    return (
      this.dirty ||
      countOf(this.keptTraces) !== this.loadedTraceCount ||
      countOf(this.keptRecords) !== this.loadedRecordCount
    );
  }

  /**
   * Index persisted lines (whole lines in `data[start, end)`, at file offset `fileOffset` of
   * `data[start]`) by directory without parsing their entries; `readRange` reads a range of the
   * file back when that directory is first looked up. Call `indexed(readRange)` after the last.
   * A line whose directory is misjudged here is still filed under its own key when parsed.
   */
  indexLines(data: Buffer, start: number, end: number, fileOffset: number): void {
    let at = start;
    while (at < end) {
      let nl = data.indexOf(10, at);
      if (nl < 0 || nl > end) nl = end;
      this.indexLine(data, at, nl, fileOffset + (at - start));
      at = nl + 1;
    }
  }

  indexed(readRange: (start: number, end: number, into: Buffer, at: number) => number, close: () => void): void {
    this.readRange = readRange;
    this.closeSource = close;
  }

  /** No more lookups of loaded entries: the persisted file is closed (idempotent). */
  close(): void {
    this.pendingTraces.clear();
    this.pendingRecords.clear();
    this.traceStreams.clear();
    this.recordStreams.clear();
    this.inData = undefined;
    this.spare = undefined;
    this.readRange = undefined;
    const c = this.closeSource;
    this.closeSource = undefined;
    c?.();
  }

  /** the previous indexed line's kind and directory bytes, and its directory */
  private lastDirBytes: Buffer | undefined;
  private lastKind = 0;
  private lastDir = '';

  private indexLine(data: Buffer, start: number, end: number, offset: number): void {
    const kind = data[start];
    if (data[start + 1] !== 9 || (kind !== 84 && kind !== 82)) return;
    const tab = data.indexOf(9, start + 2);
    if (tab < 0 || tab >= end) return;
    // key bytes: "<dir>/<name><suffix>" — the directory's bytes end at the last '/' before the suffix
    const suffix = kind === 84 ? TRACE_SUFFIX : RECORD_SUFFIX;
    const nameEnd = tab - 1 - suffix.length;
    const slash = nameEnd > start + 3 ? data.lastIndexOf(47, nameEnd - 1) : -1;
    if (slash <= start + 2) return;
    let dir = this.lastDir;
    const lastBytes = this.lastDirBytes;
    if (kind !== this.lastKind || lastBytes?.length !== slash - start - 3 || !bytesAt(data, start + 3, lastBytes)) {
      let path: unknown;
      try {
        path = JSON.parse(data.toString('utf8', start + 2, tab));
      } catch {
        return;
      }
      if (typeof path !== 'string' || !path.endsWith(suffix)) return;
      const item = path.slice(0, -suffix.length);
      dir = item.slice(0, Math.max(0, item.lastIndexOf('/')));
      this.lastDirBytes = Buffer.from(data.subarray(start + 3, slash));
      this.lastKind = kind;
      this.lastDir = dir;
    }
    if (kind === 84) this.loadedTraceCount++;
    else this.loadedRecordCount++;
    const pending = kind === 84 ? this.pendingTraces : this.pendingRecords;
    const ranges = pending.get(dir);
    const last = ranges?.[ranges.length - 1];
    if (last && last.end + 1 === offset) last.end = offset + (end - start);
    else if (ranges) ranges.push({ start: offset, end: offset + (end - start) });
    else pending.set(dir, [{ start: offset, end: offset + (end - start) }]);
  }

  /** The persisted lines of this sweep's entries. */
  *lines(): Generator<string> {
    for (const [dir, d] of this.keptTraces)
      for (const [name, v] of d) yield `T\t${JSON.stringify(`${dir}/${name}${TRACE_SUFFIX}`)}\t${encoded(v)}`;
    for (const [dir, d] of this.keptRecords)
      for (const [name, v] of d) yield `R\t${JSON.stringify(`${dir}/${name}${RECORD_SUFFIX}`)}\t${encoded(v)}`;
  }
}

function parseArray(raw: string): unknown[] | undefined {
  try {
    const v: unknown = JSON.parse(raw);
    return Array.isArray(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

function sameState(a: unknown[], st: TraceFileState): boolean {
  return a[0] === st.dev && a[1] === st.ino && a[2] === st.size && a[3] === st.mtimeMs;
}

/** Nothing unaccounted and no child workdir named (nearly every trace): kept as a CompactTrace. */
function isCompact(s: TraceSummary): boolean {
  return s.unaccounted.length === 0 && s.unaccountedMore !== true && !s.delegations?.length;
}

/**
 * `[dev, ino, size, mtimeMs, end, nl, invalid, start, contexts, work, trust, utf8, workIds, dels,
 * more]`: `start` the last session_start line's `[at, length]` (only with unaccounted work: it is
 * only ever read again to reconcile it), `work` each unaccounted work as `[work id, detached_at
 * digits, task id | null, at, length]` — ids and offsets, never a command.
 */
export function encodeTrace(st: TraceFileState, s: TraceSummary): string {
  const lost = s.unaccounted.length > 0 || s.unaccountedMore === true;
  const work = s.unaccounted.length
    ? s.unaccounted.map((w) => [w.workId, w.detachedAtText, w.taskId, w.at, w.length])
    : 0;
  const trust = Object.keys(s.taskTrust).length ? s.taskTrust : 0;
  const start = lost && s.sessionStart ? [s.sessionStart.at, s.sessionStart.length] : null;
  const workIds = s.workIds?.length ? s.workIds : 0;
  const dels = s.delegations?.length ? s.delegations.map((d) => [d.delegationId, d.childWorkdir, d.ended ? 1 : 0]) : 0;
  return flat(
    JSON.stringify([
      st.dev,
      st.ino,
      st.size,
      st.mtimeMs,
      s.hasSessionEnd ? 1 : 0,
      s.endsWithNewline ? 1 : 0,
      s.invalidLines,
      start,
      s.contextIds,
      work,
      trust,
      s.utf8 === false ? 0 : 1,
      workIds,
      dels,
      s.unaccountedMore === true ? 1 : 0,
    ]),
  );
}

function decodeDelegations(v: unknown): Delegation[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const out: Delegation[] = [];
  for (const d of v) {
    if (
      !Array.isArray(d) ||
      d.length !== 3 ||
      typeof d[0] !== 'string' ||
      typeof d[1] !== 'string' ||
      (d[2] !== 0 && d[2] !== 1)
    )
      return undefined;
    out.push({ delegationId: d[0], childWorkdir: d[1], ended: d[2] === 1 });
  }
  return out;
}

const isOffset = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

function decodeLineAt(v: unknown): LineAt | undefined | false {
  if (v === null) return undefined;
  return Array.isArray(v) && v.length === 2 && isOffset(v[0]) && isOffset(v[1]) ? { at: v[0], length: v[1] } : false;
}

function decodeWork(v: unknown): DetachedWork[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const out: DetachedWork[] = [];
  for (const w of v) {
    if (!Array.isArray(w) || w.length !== 5) return undefined;
    const [workId, text, taskId, at, length] = w as unknown[];
    if (
      typeof workId !== 'string' ||
      typeof text !== 'string' ||
      !/^(?:0|[1-9][0-9]{0,19})$/.test(text) ||
      (taskId !== null && typeof taskId !== 'string') ||
      !isOffset(at) ||
      !isOffset(length)
    )
      return undefined;
    out.push({ workId, detachedAtMs: Number(text), detachedAtText: text, taskId, at, length });
  }
  return out;
}

function decodeTrace(raw: string, st: TraceFileState, fromCache: boolean): TraceSummary | undefined {
  const a = parseArray(raw);
  if (!a || a.length !== 15 || !sameState(a, st)) return undefined;
  const [, , , , end, nl, invalid, start, contexts, work, trust, utf8, workIds, dels, more] = a;
  if (
    (end !== 0 && end !== 1) ||
    (nl !== 0 && nl !== 1) ||
    (utf8 !== 0 && utf8 !== 1) ||
    (more !== 0 && more !== 1) ||
    !Number.isSafeInteger(invalid)
  )
    return undefined;
  const sessionStart = decodeLineAt(start);
  if (sessionStart === false) return undefined;
  if (!Array.isArray(contexts) || !contexts.every((c) => typeof c === 'string')) return undefined;
  const unaccounted = work === 0 ? EMPTY_WORK : decodeWork(work);
  if (!unaccounted) return undefined;
  if (
    trust !== 0 &&
    !(
      typeof trust === 'object' &&
      trust !== null &&
      !Array.isArray(trust) &&
      Object.values(trust).every((t) => t === 'trusted' || t === 'untrusted')
    )
  )
    return undefined;
  if (workIds !== 0 && !(Array.isArray(workIds) && workIds.every((w) => typeof w === 'string' && isWorkId(w))))
    return undefined;
  const delegations = dels === 0 ? [] : decodeDelegations(dels);
  if (!delegations) return undefined;
  if (unaccounted.length || more === 1 || delegations.length) {
    return {
      sessionStart,
      contextIds: contexts,
      hasSessionEnd: end === 1,
      taskTrust: trust === 0 ? EMPTY_TRUST : (trust as Record<string, Trust>),
      unaccounted,
      ...(more === 1 ? { unaccountedMore: true } : {}),
      endsWithNewline: nl === 1,
      invalidLines: invalid as number,
      utf8: utf8 === 1,
      ...(workIds !== 0 && workIds.length ? { workIds: workIds as string[] } : {}),
      ...(delegations.length ? { delegations } : {}),
    };
  }
  // The common case — nothing unaccounted, no child workdir: one compact object (no entry text kept).
  return CompactTrace.at(
    st,
    (end === 1 ? END : 0) | (nl === 1 ? NL : 0) | (utf8 === 1 ? UTF8 : 0),
    invalid as number,
    contexts,
    fromCache,
    workIds === 0 ? undefined : (workIds as string[]),
  );
}

const COMMA = 0x2c;
const QUOTE = 0x22;
const OPEN = 0x5b;
const CLOSE = 0x5d;

/**
 * The file state every entry opens with, `["dev","ino",size,mtimeMs,`, read in place at `b[p]`:
 * the position of the comma after mtimeMs when it is exactly `st`, else -1.
 */
function stateAt(b: Buffer, p: number, end: number, st: TraceFileState): number {
  if (b[p] !== OPEN) return -1;
  p = digitText(b, p + 1, st.dev);
  if (p < 0 || b[p] !== COMMA) return -1;
  p = digitText(b, p + 1, st.ino);
  if (p < 0 || b[p] !== COMMA) return -1;
  p = intAt(b, p + 1, end);
  if (p < 0 || intValue !== st.size || b[p] !== COMMA) return -1;
  p = intAt(b, p + 1, end);
  return p < 0 || intValue !== st.mtimeMs || b[p] !== COMMA ? -1 : p;
}

/**
 * decodeTrace's common case read in place from the cache file's bytes `b[p, end)`: an entry of
 * exactly the form encodeTrace writes for a compact trace (`["dev","ino",size,mtimeMs,0|1,0|1,
 * invalid,null,[context ids],0,0,0|1,0|[work ids],0,0]`, ids printable ASCII without escapes,
 * integers canonical) whose state is `st`. Returns the CompactTrace decodeTrace would, or
 * undefined for anything else — another state, another shape, a corrupt entry — which decodeTrace
 * then judges from the entry's text. Every read past `end` fails the final position check.
 */
function decodeTraceAt(b: Buffer, p: number, end: number, st: TraceFileState): CompactTrace | undefined {
  p = stateAt(b, p, end, st);
  if (p < 0) return undefined;
  const sessionEnd = b[p + 1];
  const newline = b[p + 3];
  if (
    (sessionEnd !== 0x30 && sessionEnd !== 0x31) ||
    b[p + 2] !== COMMA ||
    (newline !== 0x30 && newline !== 0x31) ||
    b[p + 4] !== COMMA
  )
    return undefined;
  p = intAt(b, p + 5, end);
  const invalid = intValue;
  // `,null,` (no session_start id), then the context ids
  if (
    p < 0 ||
    b[p] !== COMMA ||
    b[p + 1] !== 0x6e ||
    b[p + 2] !== 0x75 ||
    b[p + 3] !== 0x6c ||
    b[p + 4] !== 0x6c ||
    b[p + 5] !== COMMA
  )
    return undefined;
  const ctxAt = p + 6;
  p = idsAt(b, ctxAt, end, false);
  // `,0,0,` (no unaccounted work, no trust), utf8, then 0 or the work ids
  if (p < 0 || b[p] !== COMMA || b[p + 1] !== 0x30 || b[p + 2] !== COMMA || b[p + 3] !== 0x30 || b[p + 4] !== COMMA)
    return undefined;
  const utf8 = b[p + 5];
  if ((utf8 !== 0x30 && utf8 !== 0x31) || b[p + 6] !== COMMA) return undefined;
  const ctxEnd = p;
  const workAt = p + 7;
  p = b[workAt] === 0x30 ? workAt + 1 : idsAt(b, workAt, end, true);
  // `,0,0]` (no child workdir, nothing more unaccounted) ending the entry
  if (
    p < 0 ||
    b[p] !== COMMA ||
    b[p + 1] !== 0x30 ||
    b[p + 2] !== COMMA ||
    b[p + 3] !== 0x30 ||
    b[p + 4] !== CLOSE ||
    p + 5 !== end
  )
    return undefined;
  const flags = (sessionEnd === 0x31 ? END : 0) | (newline === 0x31 ? NL : 0) | (utf8 === 0x31 ? UTF8 : 0);
  const ino = Number(st.ino);
  return new CompactTrace(
    devOf(st.dev),
    ino <= Number.MAX_SAFE_INTEGER ? ino : BigInt(st.ino),
    st.size,
    st.mtimeMs,
    flags,
    invalid,
    ctxEnd - ctxAt > 2 ? packIdsAt(b, ctxAt, ctxEnd) : undefined,
    true,
    b[workAt] === OPEN && p - workAt > 2 ? packIdsAt(b, workAt, p) : undefined,
  );
}

/** `"<s>"` at p, s being one or more digits: the index after it, else -1. */
function digitText(b: Buffer, p: number, s: string): number {
  const n = s.length;
  if (n === 0 || b[p] !== QUOTE || b[p + n + 1] !== QUOTE) return -1;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x30 || c > 0x39 || b[p + 1 + i] !== c) return -1;
  }
  return p + n + 2;
}

/** the value intAt read last */
let intValue = 0;

/** A canonical JSON integer of 1 to 15 digits at p (exact as a double): the index after it (its value in intValue), else -1. */
function intAt(b: Buffer, p: number, end: number): number {
  let q = p;
  let v = 0;
  for (; q < end && q - p < 16; q++) {
    const c = b[q] as number;
    if (c < 0x30 || c > 0x39) break;
    v = v * 10 + (c - 0x30);
  }
  const n = q - p;
  if (n === 0 || n > 15 || (n > 1 && b[p] === 0x30)) return -1;
  intValue = v;
  return q;
}

/**
 * A JSON array of strings at p, each printable ASCII without quote or backslash (so its text is
 * what JSON.stringify writes for it) and, when `work`, each a work id: the index after it, else -1.
 */
function idsAt(b: Buffer, p: number, end: number, work: boolean): number {
  if (b[p] !== OPEN) return -1;
  if (b[++p] === CLOSE) return p + 1;
  for (;;) {
    if (b[p] !== QUOTE) return -1;
    const s = ++p;
    for (; p < end; p++) {
      const c = b[p] as number;
      if (c < 0x20 || c > 0x7e || c === QUOTE || c === 0x5c) break;
    }
    if (p >= end || b[p] !== QUOTE || (work && !isWorkIdAt(b, s, p))) return -1;
    const next = b[++p];
    if (next === CLOSE) return p + 1;
    if (next !== COMMA) return -1;
    p++;
  }
}

/** isWorkId on the bytes [s, e): `wrk_` + 32 lowercase hex. */
function isWorkIdAt(b: Buffer, s: number, e: number): boolean {
  if (e - s !== 36 || b[s] !== 0x77 || b[s + 1] !== 0x72 || b[s + 2] !== 0x6b || b[s + 3] !== 0x5f) return false;
  for (let i = s + 4; i < e; i++) {
    const c = b[i] as number;
    if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66))) return false;
  }
  return true;
}

/**
 * decodeRecord's common case read in place, as decodeTraceAt: an entry `["dev","ino",size,
 * mtimeMs,null|"header",messages,0|1,-1|0|1]` whose state is `st`, its header printable ASCII with
 * no escape but `\"`. Returns what decodeRecord would, or undefined for anything else (then
 * decodeRecord judges the entry's text). The header is re-validated by parseHeaderLine, on the
 * same bytes the text would give it.
 */
function decodeRecordAt(b: Buffer, p: number, end: number, st: TraceFileState): CachedRecord | undefined {
  p = stateAt(b, p, end, st);
  if (p < 0) return undefined;
  p++;
  let header: RecordHeader | null = null;
  if (b[p] === 0x6e) {
    if (b[p + 1] !== 0x75 || b[p + 2] !== 0x6c || b[p + 3] !== 0x6c) return undefined;
    p += 4;
  } else {
    if (b[p] !== QUOTE) return undefined;
    // the header line, unescaped into a reused buffer (parseHeaderLine copies out what it keeps)
    if (headerBuf.length < end - p) headerBuf = Buffer.allocUnsafe(Math.max(2 * headerBuf.length, end - p));
    let n = 0;
    for (p++; ; p++) {
      if (p >= end) return undefined;
      let c = b[p] as number;
      if (c === QUOTE) break;
      if (c === 0x5c) {
        if (b[p + 1] !== QUOTE) return undefined;
        c = QUOTE;
        p++;
      } else if (c < 0x20 || c > 0x7e) return undefined;
      headerBuf[n++] = c;
    }
    p++;
    const h = parseHeaderLine(headerBuf.subarray(0, n));
    if (h === undefined) return undefined;
    header = h;
  }
  if (b[p] !== COMMA) return undefined;
  let messages = -1;
  if (b[p + 1] === 0x2d) {
    if (b[p + 2] !== 0x31) return undefined;
    p += 3;
  } else {
    p = intAt(b, p + 1, end);
    if (p < 0) return undefined;
    messages = intValue;
  }
  const unreadable = b[p + 1];
  if (b[p] !== COMMA || (unreadable !== 0x30 && unreadable !== 0x31) || b[p + 2] !== COMMA) return undefined;
  p += 3;
  let terminated = -1;
  if (b[p] === 0x2d) {
    if (b[p + 1] !== 0x31) return undefined;
    p += 2;
  } else {
    if (b[p] !== 0x30 && b[p] !== 0x31) return undefined;
    terminated = b[p] === 0x31 ? 1 : 0;
    p++;
  }
  if (b[p] !== CLOSE || p + 1 !== end) return undefined;
  return {
    header,
    unreadable: unreadable === 0x31,
    ...(messages === -1 ? {} : { messages }),
    ...(terminated === -1 ? {} : { terminated: terminated === 1 }),
  };
}

/** decodeRecordAt's header line, unescaped */
let headerBuf = Buffer.allocUnsafe(256);

/** Whether two record values encode alike (a header by identity: the one a lookup returned). */
function sameRecord(a: CachedRecord, b: CachedRecord): boolean {
  return (
    a.header === b.header &&
    (a.messages ?? -1) === (b.messages ?? -1) &&
    (a.unreadable === true) === (b.unreadable === true) &&
    a.terminated === b.terminated
  );
}

const END = 1;
const NL = 2;
const UTF8 = 4;
/** No context (or work) ids. */
const EMPTY_CONTEXTS: string[] = Object.freeze([]) as unknown as string[];

/** First character of a packed id list (see packIds); a JSON text starts with `[`. */
const PACKED = 1;
/** Ids per packed list at most (longer lists are kept as their JSON text). */
const PACK_MAX_IDS = 256;

/** Each byte's value as a lowercase hex digit, -1 for any other byte. */
const HEX_VALUE = Int8Array.from({ length: 256 }, (_, c) =>
  c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x61 + 10 : -1,
);
/** Where a packed list is assembled before it is made one string (PACK_MAX_IDS ids at most). */
const PACK_SCRATCH = Buffer.alloc(4 + 16 * PACK_MAX_IDS);
/** Where packIds puts the text it packs, as bytes (a packable list's 39 × PACK_MAX_IDS + 1 at most). */
const TEXT_SCRATCH = Buffer.alloc(39 * PACK_MAX_IDS + 1);

/**
 * The JSON text of an id list (JSON.stringify's), kept in half the memory when every id is one
 * three-letter prefix, `_` and 32 lowercase hex digits (as the runtime mints context and work
 * ids): PACKED, the prefix, then each id's 16 bytes as 16 one-byte characters. ~60 bytes a session
 * less at 2.5 context ids; 100 000 sessions hold 14 MB of id texts. Any other text is returned as
 * it is. unpackIds gives back exactly the ids of the text.
 */
export function packIds(text: string): string {
  const n = text.length;
  const k = packableIds(n);
  if (k === 0) return text;
  // a packable list is printable ASCII, which latin1 writes one byte a character
  for (let i = 0; i < n; i++) if (text.charCodeAt(i) > 0x7e) return text;
  TEXT_SCRATCH.write(text, 0, n, 'latin1');
  return packedAt(TEXT_SCRATCH, 0, n, k) ?? text;
}

/** The packed list in PACK_SCRATCH (k ids of the prefix p0 p1 p2, their bytes at 4 + 16i) as one string. */
function packedText(p0: number, p1: number, p2: number, k: number): string {
  const out = PACK_SCRATCH;
  out[0] = PACKED;
  out[1] = p0;
  out[2] = p1;
  out[3] = p2;
  return out.toString('latin1', 0, 4 + 16 * k);
}

/**
 * Context (or work) ids as one kept text (undefined: none), as packIds keeps their JSON text:
 * ~2.5 ids a session held as strings in an array cost ~230 bytes; the text ~110, packed ~50. Only
 * a live session's contexts, and the work ids of a root with work logs beside it, are ever read
 * back (unpackIds).
 */
function packedIds(ids: readonly string[] | undefined): string | undefined {
  return ids?.length ? packIdList(ids) : undefined;
}

/**
 * packIds(JSON.stringify(ids)) of a list that is not empty, read from the ids themselves: a list
 * packIds would pack (k ids of one prefix, each `xxx_` and 32 lowercase hex digits) is packed
 * without its JSON text being made; any other takes packIds' own path, so the result is the same
 * string.
 */
export function packIdList(ids: readonly string[]): string {
  const k = ids.length;
  const first = ids[0];
  if (first === undefined || k > PACK_MAX_IDS || first.length !== 36) return packIdsOfText(ids);
  const p0 = first.charCodeAt(0);
  const p1 = first.charCodeAt(1);
  const p2 = first.charCodeAt(2);
  if (!(p0 >= 0x61 && p0 <= 0x7a && p1 >= 0x61 && p1 <= 0x7a && p2 >= 0x61 && p2 <= 0x7a)) return packIdsOfText(ids);
  const out = PACK_SCRATCH;
  for (let i = 0; i < k; i++) {
    const id = ids[i] as string;
    if (
      id.length !== 36 ||
      id.charCodeAt(0) !== p0 ||
      id.charCodeAt(1) !== p1 ||
      id.charCodeAt(2) !== p2 ||
      id.charCodeAt(3) !== 0x5f
    )
      return packIdsOfText(ids);
    const to = 4 + 16 * i;
    for (let j = 0; j < 16; j++) {
      // (a character past 0xff is no hex digit: HEX_VALUE has no entry for it)
      const hi = HEX_VALUE[id.charCodeAt(4 + 2 * j)] ?? -1;
      const lo = HEX_VALUE[id.charCodeAt(5 + 2 * j)] ?? -1;
      if (hi < 0 || lo < 0) return packIdsOfText(ids);
      out[to + j] = (hi << 4) | lo;
    }
  }
  return packedText(p0, p1, p2, k);
}

/** packIdList's general path: packIds of the list's JSON text. */
function packIdsOfText(ids: readonly string[]): string {
  return packIds(flat(JSON.stringify(ids)));
}

/** packIds of the latin1 text b[start, end), read from the bytes (a cache line's ids, in place). */
function packIdsAt(b: Buffer, start: number, end: number): string {
  const k = packableIds(end - start);
  return (k === 0 ? undefined : packedAt(b, start, end, k)) ?? b.toString('latin1', start, end);
}

/** The number of ids a list of `n` characters holds if it is packable (39k + 1, 1 ≤ k ≤ PACK_MAX_IDS), else 0. */
function packableIds(n: number): number {
  // `[` + k × `"xxx_<32 hex>"` joined by `,` + `]`: 39k + 1 characters
  const k = (n - 1) / 39;
  return Number.isInteger(k) && k >= 1 && k <= PACK_MAX_IDS ? k : 0;
}

/**
 * The packed form of the k-id list b[start, end) (end - start = 39k + 1; b is not PACK_SCRATCH),
 * undefined when it is not k ids of one three-letter prefix.
 */
function packedAt(b: Buffer, start: number, end: number, k: number): string | undefined {
  if (b[start] !== 0x5b || b[end - 1] !== 0x5d) return undefined;
  const p0 = b[start + 2] as number;
  const p1 = b[start + 3] as number;
  const p2 = b[start + 4] as number;
  if (!(p0 >= 0x61 && p0 <= 0x7a && p1 >= 0x61 && p1 <= 0x7a && p2 >= 0x61 && p2 <= 0x7a)) return undefined;
  const out = PACK_SCRATCH;
  for (let i = 0; i < k; i++) {
    const at = start + 1 + 39 * i; // the id's opening quote
    if (
      b[at] !== 0x22 ||
      b[at + 1] !== p0 ||
      b[at + 2] !== p1 ||
      b[at + 3] !== p2 ||
      b[at + 4] !== 0x5f ||
      b[at + 37] !== 0x22 ||
      b[at + 38] !== (i === k - 1 ? 0x5d : 0x2c)
    )
      return undefined;
    const to = 4 + 16 * i;
    for (let j = 0; j < 16; j++) {
      const hi = HEX_VALUE[b[at + 5 + 2 * j] as number] as number;
      const lo = HEX_VALUE[b[at + 6 + 2 * j] as number] as number;
      if (hi < 0 || lo < 0) return undefined;
      out[to + j] = (hi << 4) | lo;
    }
  }
  return packedText(p0, p1, p2, k);
}

/** The UTF-8 length of the JSON text a packIds result stands for (undefined: none, `[]`). */
function idsBytes(kept: string | undefined): number {
  if (kept === undefined) return 2;
  // packed: 16 characters an id, each written as 39 (`"`, 36, `"`, `,` or `]`), and the `[`
  return kept.charCodeAt(0) === PACKED ? ((kept.length - 4) / 16) * 39 + 1 : Buffer.byteLength(kept);
}

/** Lowercase hex digits' character codes, by value. */
const HEX_DIGIT = Uint8Array.from('0123456789abcdef', (c) => c.charCodeAt(0));

/**
 * Writes the `i`th id of a packed text (`xxx_` and its 32 hex digits) into TEXT_SCRATCH at `at`;
 * returns where it ends.
 */
function writePackedId(kept: string, i: number, at: number): number {
  const b = TEXT_SCRATCH;
  b[at] = kept.charCodeAt(1);
  b[at + 1] = kept.charCodeAt(2);
  b[at + 2] = kept.charCodeAt(3);
  b[at + 3] = 0x5f;
  let w = at + 4;
  for (let j = 4 + 16 * i, end = j + 16; j < end; j++) {
    const v = kept.charCodeAt(j);
    b[w++] = HEX_DIGIT[v >> 4] as number;
    b[w++] = HEX_DIGIT[v & 15] as number;
  }
  return w;
}

/** The JSON text of the ids of a text packIds returned (JSON.stringify(unpackIds(kept)), without the strings). */
function idsJson(kept: string): string {
  if (kept.charCodeAt(0) !== PACKED) return kept;
  // (at most PACK_MAX_IDS ids: 39 characters each and the `[`, what TEXT_SCRATCH holds)
  const b = TEXT_SCRATCH;
  const k = (kept.length - 4) / 16;
  let at = 0;
  b[at++] = 0x5b;
  for (let i = 0; i < k; i++) {
    if (i > 0) b[at++] = 0x2c;
    b[at++] = 0x22;
    at = writePackedId(kept, i, at);
    b[at++] = 0x22;
  }
  b[at++] = 0x5d;
  return b.toString('latin1', 0, at);
}

/** The ids of a text packIds returned. */
export function unpackIds(kept: string): string[] {
  if (kept.charCodeAt(0) !== PACKED) return JSON.parse(kept) as string[];
  const ids: string[] = [];
  for (let i = 0, k = (kept.length - 4) / 16; i < k; i++)
    ids.push(TEXT_SCRATCH.toString('latin1', 0, writePackedId(kept, i, 0)));
  return ids;
}

/**
 * V8 builds long JSON.stringify results and concatenations as ropes (a tree of pieces, ~1.7× the
 * bytes); reading a character makes it flatten the string once, and the GC then drops the pieces.
 * For strings held for the whole sweep.
 */
export function flat(s: string): string {
  s.charCodeAt(0);
  return s;
}

/** Device numbers as bigints, one per device (a sweep sees one or a few). */
const devs = new Map<string, bigint>();
function devOf(dev: string): bigint {
  let d = devs.get(dev);
  if (d === undefined) devs.set(dev, (d = BigInt(dev)));
  return d;
}

/**
 * A trace with no unaccounted work and no child workdir, as the scan and the cache both keep it:
 * its summary (flags, invalid-line count, context and work ids as packed texts: packIds) and the
 * state of the file it was built from (dev/ino/size/mtime, also the trace's identity). It is the
 * scan's `trace` entry for its session as well (`ok`, `summary`, `identity`, `mtimeMs`, `size`,
 * `fromCache`).
 */
export class CompactTrace implements TraceSummary {
  /** `contexts` and `works`: the ids' JSON texts as packIds returns them (undefined: none). */
  constructor(
    readonly dev: bigint,
    private readonly ino: PackedIno,
    readonly size: number,
    readonly mtimeMs: number,
    private readonly flags: number,
    readonly invalidLines: number,
    private readonly contexts: string | undefined,
    /** served from the cache loaded at the start of this sweep (not read in it) */
    readonly fromCache: boolean,
    private readonly works: string | undefined,
  ) {}

  static at(
    st: TraceFileState,
    flags: number,
    invalidLines: number,
    contexts: readonly string[] | undefined,
    fromCache: boolean,
    works: readonly string[] | undefined,
  ): CompactTrace {
    return new CompactTrace(
      devOf(st.dev),
      packIno(BigInt(st.ino)),
      st.size,
      st.mtimeMs,
      flags,
      invalidLines,
      packedIds(contexts),
      fromCache,
      packedIds(works),
    );
  }

  static of(st: TraceFileState, s: TraceSummary, fromCache: boolean): CompactTrace {
    return CompactTrace.at(
      st,
      (s.hasSessionEnd ? END : 0) | (s.endsWithNewline ? NL : 0) | (s.utf8 === false ? 0 : UTF8),
      s.invalidLines,
      s.contextIds,
      fromCache,
      s.workIds,
    );
  }

  get ok(): true {
    return true;
  }
  get summary(): TraceSummary {
    return this;
  }
  get identity(): Identity {
    return { dev: this.dev, ino: inoOf(this.ino) };
  }
  get state(): TraceFileState {
    return { dev: this.dev.toString(), ino: this.ino.toString(), size: this.size, mtimeMs: this.mtimeMs };
  }
  sameState(st: TraceFileState): boolean {
    return (
      this.size === st.size &&
      this.mtimeMs === st.mtimeMs &&
      this.ino.toString() === st.ino &&
      this.dev.toString() === st.dev
    );
  }
  /**
   * encodeTrace's text for this trace, written from the fields as they are kept (the packed ids
   * spelled out, nothing unpacked into strings and stringified again): every one is a digit
   * string, a number, a flag or an id list's JSON text, as JSON.stringify writes them.
   */
  encode(): string {
    const works = this.works === undefined ? '0' : idsJson(this.works);
    const contexts = this.contexts === undefined ? '[]' : idsJson(this.contexts);
    const flag = (bit: number) => ((this.flags & bit) !== 0 ? 1 : 0);
    return flat(
      `["${this.dev}","${this.ino}",${JSON.stringify(this.size)},${JSON.stringify(this.mtimeMs)},${flag(END)},` +
        `${flag(NL)},${JSON.stringify(this.invalidLines)},null,${contexts},0,0,${flag(UTF8)},${works},0,0]`,
    );
  }
  /** At least encode()'s UTF-8 length, without encoding: its fixed fields (at most 160) and its two id lists. */
  encodedBytesAtMost(): number {
    return 160 + idsBytes(this.contexts) + idsBytes(this.works);
  }

  get contextIds(): string[] {
    return this.contexts === undefined ? EMPTY_CONTEXTS : unpackIds(this.contexts);
  }
  /** The work ids the trace names (none: empty), parsed from their text on each read. */
  get workIds(): string[] {
    return this.works === undefined ? EMPTY_CONTEXTS : unpackIds(this.works);
  }
  get hasSessionEnd(): boolean {
    return (this.flags & END) !== 0;
  }
  get endsWithNewline(): boolean {
    return (this.flags & NL) !== 0;
  }
  get utf8(): boolean {
    return (this.flags & UTF8) !== 0;
  }
  get taskTrust(): Record<string, Trust> {
    return EMPTY_TRUST;
  }
  get unaccounted(): DetachedWork[] {
    return EMPTY_WORK;
  }
  /** Not kept: only reconciliation reads it, and only for a session with unaccounted work. */
  get sessionStart(): undefined {
    return undefined;
  }
  toJSON(): TraceSummary {
    const workIds = this.workIds;
    return {
      sessionStart: undefined,
      contextIds: this.contextIds,
      hasSessionEnd: this.hasSessionEnd,
      taskTrust: {},
      unaccounted: [],
      endsWithNewline: this.endsWithNewline,
      invalidLines: this.invalidLines,
      utf8: this.utf8,
      ...(workIds.length ? { workIds } : {}),
    };
  }
}

/** Headers are stored as their exact line (u64 values above 2^53 survive) and re-validated on use. */
function encodeRecord(st: TraceFileState, r: CachedRecord): string {
  const header = r.header === null ? null : serializeHeader(r.header).slice(0, -1);
  return flat(
    JSON.stringify([
      st.dev,
      st.ino,
      st.size,
      st.mtimeMs,
      header,
      r.messages ?? -1,
      r.unreadable === true ? 1 : 0,
      r.terminated === undefined ? -1 : r.terminated ? 1 : 0,
    ]),
  );
}

function decodeRecord(raw: string, st: TraceFileState): CachedRecord | undefined {
  const a = parseArray(raw);
  if (!a || a.length !== 8 || !sameState(a, st)) return undefined;
  const [, , , , h, messages, unreadable, terminated] = a;
  // A cached header is re-validated with the runtime's own rule; anything odd is a miss.
  const header = h === null ? null : typeof h === 'string' ? parseHeaderLine(h) : undefined;
  if (header === undefined) return undefined;
  if (!(typeof messages === 'number' && Number.isSafeInteger(messages) && messages >= -1)) return undefined;
  if ((unreadable !== 0 && unreadable !== 1) || (terminated !== -1 && terminated !== 0 && terminated !== 1))
    return undefined;
  return {
    header,
    unreadable: unreadable === 1,
    ...(messages === -1 ? {} : { messages }),
    ...(terminated === -1 ? {} : { terminated: terminated === 1 }),
  };
}
