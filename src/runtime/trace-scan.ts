// Reads a session's trace.jsonl into a TraceSummary, streaming, parsing only the lines whose
// event type the sweep needs. Guarantees: never follows a link or opens a FIFO (Dir.openFile);
// reads at most the size seen at open; torn or garbage lines are counted and skipped; the
// summary of an unchanged file (same dev/ino/size/mtime) is served from a cache. Memory is
// bounded whatever the trace holds (docs/limits.md): a line over the line cap is read past (or,
// when it may be JSON, the trace is not judged: `line_too_long`), and a large trace that is mostly
// holes is not read (`sparse_file`).
import { inoOf, packIno, type BigIntStats, type Dir, type Identity, type PackedIno } from '../fsx/safe-fs.js';
import { forwardLines, sparseFileError, type Line } from './jsonl.js';
import { parseHeaderLine, serializeHeader, type RecordHeader } from './record.js';
import { TraceAccumulator, isWorkId, type Delegation, type DetachedWork, type TraceSummary, type Trust } from './trace.js';

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
function parseLine(data: Buffer, start: number, end: number): { kind: 'T' | 'R'; dir: string; name: string; raw: string } | undefined {
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
  return { kind: kind === 84 ? 'T' : 'R', dir: item.slice(0, slash), name: item.slice(slash + 1), raw: data.toString('utf8', tab + 1, end) };
}

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
 * - Memory: the persisted file is indexed by directory when loaded (byte ranges, no entry parsed)
 *   and a directory's lines are read and parsed when it is first looked up (one sessions root or
 *   store at a time, not the whole file). Entries are held per directory by name (the name string
 *   the caller already holds, once looked up), each encoded entry as its own string (never a
 *   slice pinning a buffer); an entry moves from "loaded" to "kept" when used, and `forget(dir)`
 *   drops the unused rest. A
 *   trace with nothing unaccounted (nearly all) is kept as one CompactTrace, which is also what the
 *   scan holds for that session (summary, file state and identity in one object; no string kept).
 * - `changed` is false when persisting would write back exactly what was loaded.
 */
export class MemoryTraceCache implements TraceCache {
  /** as loaded, not yet used in this sweep */
  private readonly loadedTraces: Entries = new Map();
  private readonly loadedRecords: Entries = new Map();
  private loadedTraceCount = 0;
  private loadedRecordCount = 0;
  /** the persisted file's lines not read yet: `T|R \0 dir` → byte ranges, and how to read them */
  private pending = new Map<string, { start: number; end: number }[]>();
  /** reads file bytes [start, end) into `into` at `at`; returns how many */
  private readRange: ((start: number, end: number, into: Buffer, at: number) => number) | undefined;
  private spare: Buffer | undefined;
  /** directories read back and being parsed as they are looked up: `T|R \0 dir` → bytes, next line */
  private readonly streams = new Map<string, { data: Buffer; end: number; pos: number }>();
  private closeSource: (() => void) | undefined;
  /** what this sweep keeps */
  private readonly keptTraces: Entries = new Map();
  private readonly keptRecords: Entries = new Map();
  private dirty = false;

  get(dir: string, name: string, state: TraceFileState): TraceSummary | undefined {
    const d = dirKey(dir);
    const kept = entryOf(this.keptTraces, d, name);
    if (kept instanceof CompactTrace) return kept.sameState(state) ? kept : undefined;
    const loaded = kept === undefined;
    const raw = kept ?? this.takeLoaded(this.loadedTraces, d, name);
    if (raw === undefined) return undefined;
    const summary = decodeTrace(raw, state, loaded);
    // Once valid, a compact trace replaces its text (the text is rebuilt from it when persisted).
    if (summary) put(this.keptTraces, d, name, summary instanceof CompactTrace ? summary : raw);
    return summary;
  }

  set(dir: string, name: string, state: TraceFileState, summary: TraceSummary): void {
    const d = dirKey(dir);
    const prev = entryOf(this.keptTraces, d, name);
    const entry = isCompact(summary) ? CompactTrace.of(state, summary, false) : encodeTrace(state, summary);
    // (encoded only to compare with an entry already kept; a new one changes the cache anyway)
    if (prev === undefined || encoded(prev) !== encoded(entry)) this.dirty = true;
    put(this.keptTraces, d, name, entry);
  }

  has(dir: string, name: string): boolean {
    const d = dirKey(dir);
    if (entryOf(this.keptTraces, d, name) !== undefined) return true;
    const raw = this.takeLoaded(this.loadedTraces, d, name);
    // looked at, not used: put back where get() takes it from
    if (raw !== undefined) put(this.loadedTraces, d, name, raw);
    return raw !== undefined;
  }

  forget(dir: string): void {
    this.loadedTraces.delete(dirKey(dir));
    this.loadedRecords.delete(dirKey(dir));
    for (const k of [`T\0${dirKey(dir)}`, `R\0${dirKey(dir)}`]) {
      this.pending.delete(k);
      this.endStream(k);
    }
  }

  /** Read back the persisted lines of one directory, the first time it is looked up (parsed as looked up). */
  private readPending(kind: 'T' | 'R', dir: string): void {
    const key = `${kind}\0${dir}`;
    const ranges = this.pending.get(key);
    if (!ranges || !this.readRange) return;
    this.pending.delete(key);
    const total = ranges.reduce((n, r) => n + r.end - r.start + 1, 0);
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
    this.streams.set(key, { data, end: used, pos: 0 });
  }

  /** A directory's bytes are parsed (or forgotten): its buffer serves the next one. */
  private endStream(key: string): void {
    const st = this.streams.get(key);
    if (!st) return;
    this.streams.delete(key);
    if (!this.spare || st.data.length > this.spare.length) this.spare = st.data;
  }

  /**
   * What an earlier sweep learnt about a conversation record (`<dir>/<name>/conversation.jsonl`) —
   * its header (null: none) and, when it was counted, its message lines; same staleness rule as traces.
   */
  getRecord(dir: string, name: string, state: TraceFileState): CachedRecord | undefined {
    const d = dirKey(dir);
    const kept = entryOf(this.keptRecords, d, name);
    const raw = kept ?? this.takeLoaded(this.loadedRecords, d, name);
    if (raw === undefined) return undefined;
    const r = decodeRecord(encoded(raw), state);
    if (r) put(this.keptRecords, d, name, raw);
    return r;
  }

  setRecord(dir: string, name: string, state: TraceFileState, value: CachedRecord): void {
    const raw = encodeRecord(state, value);
    const d = dirKey(dir);
    const prev = entryOf(this.keptRecords, d, name);
    if (prev === undefined || encoded(prev) !== raw) this.dirty = true;
    put(this.keptRecords, d, name, raw);
  }

  /** A loaded entry, removed from the loaded set (a stale one is not kept: it falls away). */
  private takeLoaded(loaded: Entries, dir: string, name: string): string | undefined {
    const kind = loaded === this.loadedTraces ? 'T' : 'R';
    if (this.pending.size) this.readPending(kind, dir);
    const d = loaded.get(dir);
    const raw = d?.get(name);
    if (raw !== undefined) {
      d?.delete(name);
      return typeof raw === 'string' ? raw : undefined;
    }
    // Parse the directory's lines only as far as this name: the scan looks names up in the order
    // they were written, so each line is parsed just before it is used (nothing piles up).
    const key = `${kind}\0${dir}`;
    const st = this.streams.get(key);
    if (!st) return undefined;
    let found: string | undefined;
    while (found === undefined && st.pos < st.end) {
      let nl = st.data.indexOf(10, st.pos);
      if (nl < 0 || nl > st.end) nl = st.end;
      const e = parseLine(st.data, st.pos, nl);
      st.pos = nl + 1;
      if (!e) continue;
      if (e.kind === kind && e.dir === dir && e.name === name) found = e.raw;
      else put(e.kind === 'T' ? this.loadedTraces : this.loadedRecords, e.dir, e.name, e.raw);
    }
    if (st.pos >= st.end) this.endStream(key);
    return found;
  }

  /** True when the persisted form would differ from what was loaded. */
  get changed(): boolean {
    return this.dirty || countOf(this.keptTraces) !== this.loadedTraceCount || countOf(this.keptRecords) !== this.loadedRecordCount;
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
    this.pending.clear();
    this.streams.clear();
    this.spare = undefined;
    this.readRange = undefined;
    const c = this.closeSource;
    this.closeSource = undefined;
    c?.();
  }

  /** the previous indexed line's kind and directory bytes, and its pending key */
  private lastDirBytes: Buffer | undefined;
  private lastKind = 0;
  private lastKey = '';

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
    const dirBytes = data.subarray(start + 3, slash);
    let key = this.lastKey;
    if (kind !== this.lastKind || !this.lastDirBytes?.equals(dirBytes)) {
      let path: unknown;
      try {
        path = JSON.parse(data.toString('utf8', start + 2, tab));
      } catch {
        return;
      }
      if (typeof path !== 'string' || !path.endsWith(suffix)) return;
      const item = path.slice(0, -suffix.length);
      key = `${kind === 84 ? 'T' : 'R'}\0${item.slice(0, Math.max(0, item.lastIndexOf('/')))}`;
      this.lastDirBytes = Buffer.from(dirBytes);
      this.lastKind = kind;
      this.lastKey = key;
    }
    if (kind === 84) this.loadedTraceCount++;
    else this.loadedRecordCount++;
    const ranges = this.pending.get(key);
    const last = ranges?.[ranges.length - 1];
    if (last && last.end + 1 === offset) last.end = offset + (end - start);
    else if (ranges) ranges.push({ start: offset, end: offset + (end - start) });
    else this.pending.set(key, [{ start: offset, end: offset + (end - start) }]);
  }




  /** The persisted lines of this sweep's entries. */
  *lines(): Generator<string> {
    for (const [dir, d] of this.keptTraces) for (const [name, v] of d) yield `T\t${JSON.stringify(`${dir}/${name}${TRACE_SUFFIX}`)}\t${encoded(v)}`;
    for (const [dir, d] of this.keptRecords) for (const [name, v] of d) yield `R\t${JSON.stringify(`${dir}/${name}${RECORD_SUFFIX}`)}\t${encoded(v)}`;
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

/** Nothing unaccounted, no work log and no child workdir named (nearly every trace): kept as a CompactTrace. */
function isCompact(s: TraceSummary): boolean {
  return s.unaccounted.length === 0 && !s.workIds?.length && !s.delegations?.length;
}

function encodeTrace(st: TraceFileState, s: TraceSummary): string {
  const work = s.unaccounted.length ? s.unaccounted : 0;
  const trust = Object.keys(s.taskTrust).length ? s.taskTrust : 0;
  // session_start's event id is only ever needed to reconcile unaccounted work (shell_lost's parent).
  const startId = work === 0 ? null : (s.sessionStartEventId ?? null);
  const workIds = s.workIds?.length ? s.workIds : 0;
  const dels = s.delegations?.length ? s.delegations.map((d) => [d.delegationId, d.childWorkdir, d.ended ? 1 : 0]) : 0;
  return flat(JSON.stringify([st.dev, st.ino, st.size, st.mtimeMs, s.hasSessionEnd ? 1 : 0, s.endsWithNewline ? 1 : 0, s.invalidLines, startId, s.contextIds, work, trust, s.utf8 === false ? 0 : 1, workIds, dels]));
}

function decodeDelegations(v: unknown): Delegation[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const out: Delegation[] = [];
  for (const d of v) {
    if (!Array.isArray(d) || d.length !== 3 || typeof d[0] !== 'string' || typeof d[1] !== 'string' || (d[2] !== 0 && d[2] !== 1)) return undefined;
    out.push({ delegationId: d[0], childWorkdir: d[1], ended: d[2] === 1 });
  }
  return out;
}

function isWork(w: unknown): w is DetachedWork {
  if (typeof w !== 'object' || w === null) return false;
  const o = w as Record<string, unknown>;
  return typeof o['workId'] === 'string' && typeof o['binary'] === 'string' && typeof o['command'] === 'string' && typeof o['detachedAtMs'] === 'number' && typeof o['detachedAtText'] === 'string' && (o['taskId'] === null || typeof o['taskId'] === 'string');
}

function decodeTrace(raw: string, st: TraceFileState, fromCache: boolean): TraceSummary | undefined {
  const a = parseArray(raw);
  if (!a || a.length !== 14 || !sameState(a, st)) return undefined;
  const [, , , , end, nl, invalid, startId, contexts, work, trust, utf8, workIds, dels] = a;
  if ((end !== 0 && end !== 1) || (nl !== 0 && nl !== 1) || (utf8 !== 0 && utf8 !== 1) || !Number.isSafeInteger(invalid) || (startId !== null && typeof startId !== 'string')) return undefined;
  if (!Array.isArray(contexts) || !contexts.every((c) => typeof c === 'string')) return undefined;
  if (work !== 0 && !(Array.isArray(work) && work.every(isWork))) return undefined;
  if (trust !== 0 && !(typeof trust === 'object' && trust !== null && !Array.isArray(trust) && Object.values(trust).every((t) => t === 'trusted' || t === 'untrusted'))) return undefined;
  if (workIds !== 0 && !(Array.isArray(workIds) && workIds.every((w) => typeof w === 'string' && isWorkId(w)))) return undefined;
  const delegations = dels === 0 ? [] : decodeDelegations(dels);
  if (!delegations) return undefined;
  if (work !== 0 || workIds !== 0 || delegations.length) {
    return {
      sessionStartEventId: startId ?? undefined,
      contextIds: contexts,
      hasSessionEnd: end === 1,
      taskTrust: trust === 0 ? EMPTY_TRUST : (trust as Record<string, Trust>),
      unaccounted: work === 0 ? EMPTY_WORK : work,
      endsWithNewline: nl === 1,
      invalidLines: invalid as number,
      utf8: utf8 === 1,
      ...(workIds !== 0 && workIds.length ? { workIds: workIds as string[] } : {}),
      ...(delegations.length ? { delegations } : {}),
    };
  }
  // The common case — nothing unaccounted: one compact object (no text kept).
  return new CompactTrace(st, (end === 1 ? END : 0) | (nl === 1 ? NL : 0) | (utf8 === 1 ? UTF8 : 0), invalid as number, contextsText(contexts), fromCache);
}

const END = 1;
const NL = 2;
const UTF8 = 4;
const EMPTY_CONTEXTS: string[] = Object.freeze([]) as unknown as string[];

/**
 * Context ids as one JSON text (undefined: none): ~2.5 ids a session held as strings in an array
 * cost ~230 bytes; the text ~110. Only a live session's are ever read back (a few, once each).
 */
function contextsText(ids: readonly string[]): string | undefined {
  return ids.length ? flat(JSON.stringify(ids)) : undefined;
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
 * A trace with no unaccounted work, as the scan and the cache both keep it: its summary (flags,
 * invalid-line count, context ids) and the state of the file it was built from (dev/ino/size/
 * mtime, also the trace's identity). It is the scan's `trace` entry for its session as well
 * (`ok`, `summary`, `identity`, `mtimeMs`, `size`, `fromCache`): ~100 bytes a session in all.
 */
export class CompactTrace implements TraceSummary {
  readonly dev: bigint;
  private readonly ino: PackedIno;
  readonly size: number;
  readonly mtimeMs: number;
  constructor(
    st: TraceFileState,
    private readonly flags: number,
    readonly invalidLines: number,
    private readonly contexts: string | undefined,
    /** served from the cache loaded at the start of this sweep (not read in it) */
    readonly fromCache: boolean,
  ) {
    this.dev = devOf(st.dev);
    this.ino = packIno(BigInt(st.ino));
    this.size = st.size;
    this.mtimeMs = st.mtimeMs;
  }

  static of(st: TraceFileState, s: TraceSummary, fromCache: boolean): CompactTrace {
    return new CompactTrace(st, (s.hasSessionEnd ? END : 0) | (s.endsWithNewline ? NL : 0) | (s.utf8 === false ? 0 : UTF8), s.invalidLines, contextsText(s.contextIds), fromCache);
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
    return this.size === st.size && this.mtimeMs === st.mtimeMs && this.ino.toString() === st.ino && this.dev.toString() === st.dev;
  }
  encode(): string {
    return encodeTrace(this.state, this);
  }

  get contextIds(): string[] {
    return this.contexts === undefined ? EMPTY_CONTEXTS : (JSON.parse(this.contexts) as string[]);
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
  get sessionStartEventId(): undefined {
    return undefined;
  }
  toJSON(): TraceSummary {
    return { sessionStartEventId: undefined, contextIds: this.contextIds, hasSessionEnd: this.hasSessionEnd, taskTrust: {}, unaccounted: [], endsWithNewline: this.endsWithNewline, invalidLines: this.invalidLines, utf8: this.utf8 };
  }
}

/** Headers are stored as their exact line (u64 values above 2^53 survive) and re-validated on use. */
function encodeRecord(st: TraceFileState, r: CachedRecord): string {
  const header = r.header === null ? null : serializeHeader(r.header).slice(0, -1);
  return flat(JSON.stringify([st.dev, st.ino, st.size, st.mtimeMs, header, r.messages ?? -1, r.unreadable === true ? 1 : 0, r.terminated === undefined ? -1 : r.terminated ? 1 : 0]));
}

function decodeRecord(raw: string, st: TraceFileState): CachedRecord | undefined {
  const a = parseArray(raw);
  if (!a || a.length !== 8 || !sameState(a, st)) return undefined;
  const [, , , , h, messages, unreadable, terminated] = a;
  // A cached header is re-validated with the runtime's own rule; anything odd is a miss.
  const header = h === null ? null : typeof h === 'string' ? parseHeaderLine(h) : undefined;
  if (header === undefined) return undefined;
  if (!(typeof messages === 'number' && Number.isSafeInteger(messages) && messages >= -1)) return undefined;
  if ((unreadable !== 0 && unreadable !== 1) || (terminated !== -1 && terminated !== 0 && terminated !== 1)) return undefined;
  return {
    header,
    unreadable: unreadable === 1,
    ...(messages === -1 ? {} : { messages }),
    ...(terminated === -1 ? {} : { terminated: terminated === 1 }),
  };
}

/** Traces up to this size are read in one synchronous call; larger ones are streamed. */
const SMALL_TRACE_BYTES = 1 << 20;

/** The buffer small traces are read into: grown as needed (powers of two), up to SMALL_TRACE_BYTES. */
let traceBuf: Buffer | undefined;
function traceBuffer(pre: BigIntStats | undefined): Buffer | undefined {
  if (!pre?.isFile() || pre.size > BigInt(SMALL_TRACE_BYTES)) return undefined;
  const size = Number(pre.size);
  if (!traceBuf || traceBuf.length < size) traceBuf = Buffer.allocUnsafe(Math.min(SMALL_TRACE_BYTES, Math.max(64 << 10, 2 ** Math.ceil(Math.log2(size + 1)))));
  return traceBuf;
}

export interface TraceRead {
  summary: TraceSummary;
  state: TraceFileState;
  fromCache: boolean;
}

/** Where a trace sits, as the cache keys it: `<dir>/<name>/trace.jsonl`. */
export interface TraceAt {
  dir: string;
  name: string;
}

/**
 * Summarize `<sessionDir>/trace.jsonl` (`at`: the session directory's parent and name). Throws
 * GcError(symlink|not_regular) or fs errors.
 */
export async function readTraceSummary(sessionDir: Dir, at: TraceAt, cache: TraceCache | undefined, signal?: AbortSignal, pre?: BigIntStats): Promise<TraceRead> {
  if (pre?.isFile() && cache) {
    // An unchanged trace (same dev/ino/size/mtime as when it was summarized) is not even opened.
    const state = traceFileState(pre);
    const cached = cache.get(at.dir, at.name, state);
    if (cached) return { summary: cached, state, fromCache: true };
  }
  const acc = new TraceAccumulator();
  let lastTerminated = true;
  const feed = (l: Line) => {
    lastTerminated = l.terminated;
    if (l.overlong) acc.addOverlongLine(l.overlong.utf8);
    else acc.addLine(l.bytes, 0, l.bytes.length);
  };
  // Most traces are small: read them in one go (no thread-pool round trips) into one reused
  // buffer, and summarize them in the same synchronous stretch (nothing else can reuse the buffer
  // meanwhile; the summary copies out what it keeps); stream the rest.
  const small = sessionDir.readSmallSync('trace.jsonl', SMALL_TRACE_BYTES, pre, traceBuffer(pre));
  let state: TraceFileState;
  if (small) {
    state = traceFileState(small.stat);
    // (the file opened is the one lstat saw: when its size and mtime are too, it was looked up above)
    const looked = pre !== undefined && pre.size === small.stat.size && pre.mtimeMs === small.stat.mtimeMs;
    const cached = looked ? undefined : cache?.get(at.dir, at.name, state);
    if (cached) return { summary: cached, state, fromCache: true };
    lastTerminated = acc.addLines(small.data);
  } else {
    const { fh, stat } = await sessionDir.openFile('trace.jsonl');
    try {
      state = traceFileState(stat);
      const cached = cache?.get(at.dir, at.name, state);
      if (cached) return { summary: cached, state, fromCache: true };
      const sparse = sparseFileError(stat);
      if (sparse) throw sparse;
      const opts = signal ? { to: state.size, signal } : { to: state.size };
      for await (const l of forwardLines(fh, opts)) feed(l);
    } finally {
      await fh.close();
    }
  }
  const summary = acc.finish(state.size === 0 || lastTerminated);
  if (!cache) return { summary, state, fromCache: false };
  cache.set(at.dir, at.name, state, summary);
  // What the sweep keeps of it is the compact cached form (the same values, decoded on demand).
  return { summary: cache.get(at.dir, at.name, state) ?? summary, state, fromCache: false };
}
