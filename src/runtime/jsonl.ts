// The JSONL byte scanner: forward and backward line walks over an open FileHandle, and the two
// record questions built on them (count/locate, and "keep the newest N" for truncation).
//
// Invariants and decisions:
// - Never opens, writes or stats anything: callers open the file (O_NOFOLLOW etc. is theirs) and
//   pass a snapshot size; only bytes in [from, to) are ever read, even when the file has grown.
//   A file that ends before `to` (shrunk in place) raises `changed_since_scan`.
// - Lines are Rust `str::lines` lines split on byte 0x0A only: a trailing `\n` ends the last
//   line (no empty line after it); a final unterminated line is a line (`terminated: false`);
//   `\r` is not a separator. Every line is classified alike, the unterminated tail included.
// - One reused read buffer (default 1 MiB); a forward walk past its second chunk reads ahead into
//   a second one while the current chunk is scanned. A line crossing a chunk boundary is copied
//   into a separate carry buffer that grows to the longest such line up to `MAX_LINE_BYTES`
//   (32 MiB), so memory is O(buffers + line cap), never O(file) (docs/limits.md):
//   - forwards, a longer line whose first non-blank byte is not `{` cannot be a JSON object (no
//     event, header or message): it is read past without being held (its UTF-8 validity checked
//     as it streams) and yielded with `overlong` set and empty `bytes`; one that may be an object
//     raises `line_too_long` (the file is not judged);
//   - backwards (planKeepNewest), any longer line raises `line_too_long`.
// - scanRecord without `findId` first takes a fast path (docs/benchmarks.md): synchronous reads (a page-cache
//   read costs far less CPU than a thread-pool one) straight into a fixed 1 MiB region of the
//   WebAssembly memory (src/json/doc-wasm.ts `chunkRegion`, one scan at a time), each chunk's whole
//   lines UTF-8-checked in one call and counted in one WebAssembly call; the event loop runs
//   between chunks (`yieldIfBusy`). A line longer than the region, a region held by another scan,
//   or no WebAssembly hands the rest to the streaming scanner, which counts its UTF-8-checked
//   spans of whole lines the same way (copied into the memory). Every path is compared with the
//   line-by-line classification (test/parity/record-scan-paths.test.ts).
// - Records are read as the runtime reads them: a record that is not valid UTF-8 anywhere is
//   unreadable (`read_to_string` fails): the record scan reports `utf8: false` with no header and
//   no messages, and the truncation plan refuses it (`record_unreadable`). Lines are classified
//   by src/json/scan.ts (serde_json's grammar).
// - Yielded `bytes` are views into those buffers, valid only until the consumer asks for the next
//   line: copy them (Buffer.from(view)) to keep them.
// - `planKeepNewest` costs O(keep) lines backwards from EOF plus one scanRecord of the dropped
//   prefix (needed for the exact `dropped` count); it never holds more than one line.
// - `signal.throwIfAborted()` is checked before every read is issued and before every chunk is
//   handed out.
import type { FileHandle } from 'node:fs/promises';
import { isUtf8 } from 'node:buffer';
import { readSync } from 'node:fs';
import { GcError, Codes } from '../errors.js';
import { classifyLine, parseHeaderLine, type RecordHeader } from './record.js';
import { chunkRegion } from '../json/doc-wasm.js';
import { yieldIfBusy } from '../fsx/safe-fs.js';
import {
  T_STRING,
  countMessageLines,
  decodeJsonString,
  isMessageLine,
  lastMessageIdSpan,
  messageCount,
} from '../json/scan.js';
import { definedOnly } from '../defined.js';

export const DEFAULT_BUFFER_SIZE = 1024 * 1024;

const EMPTY = Buffer.alloc(0);

/** The longest line a scan holds in memory (docs/limits.md). */
export const MAX_LINE_BYTES = 32 * 1024 * 1024;

export interface Line {
  /** The line's bytes without its `\n` (a trailing `\r` is kept). A view: valid until the next iteration. */
  bytes: Buffer;
  /** File offset of the first byte. */
  start: number;
  /** File offset just past the last byte (exclusive; the `\n`, if any, is at `end`). */
  end: number;
  /** True when a `\n` follows the line inside the scanned range. */
  terminated: boolean;
  /**
   * Set for a line longer than the line cap that cannot be a JSON object (read past, not held:
   * `bytes` is empty); `utf8` tells whether its bytes were valid UTF-8.
   */
  overlong?: { utf8: boolean };
}

export interface ScanOptions {
  bufferSize?: number;
  signal?: AbortSignal;
  /** The line cap (default MAX_LINE_BYTES). */
  maxLineBytes?: number;
}

export interface ForwardOptions extends ScanOptions {
  /** Start offset (a line start); default 0. */
  from?: number;
  /** End offset (exclusive): a snapshot size. */
  to: number;
}

export interface BackwardOptions extends ScanOptions {
  /** End offset (exclusive): a snapshot size. */
  to: number;
  /** Lowest offset (a line start); default 0. */
  from?: number;
}

export interface RecordScanOptions extends ScanOptions {
  /** Also locate the last message line whose `id` equals this (`ls --message`). */
  findId?: string;
  /** Told the bytes read so far after each buffer (a progress line); never told any content. */
  onRead?: (bytesRead: number) => void;
}

export interface RecordScan {
  /** False when the record is not valid UTF-8: then header, messages and ids are all empty. */
  utf8: boolean;
  /** True when the scanned bytes are empty or end with `\n` (false: a torn last line). */
  terminated: boolean;
  /** The first line parsed as a header, or undefined. */
  header: RecordHeader | undefined;
  /** Offset just past the header line including its `\n`; 0 when there is no header. */
  headerEnd: number;
  /** Number of message lines. */
  messages: number;
  /** `id` of the last message line when it is a string; undefined when none. */
  lastMessageId?: string | undefined;
  /**
   * With `findId`: the 1-based index among message lines of the LAST line whose `id` equals it;
   * undefined when absent. Never set without `findId`.
   */
  position?: number | undefined;
}

export interface KeepPlan {
  header: RecordHeader | undefined;
  /** Message lines in [0, size). */
  total: number;
  /** total - keep when total > keep, else 0. */
  dropped: number;
  /** Messages that survive: min(total, keep). */
  kept: number;
  /**
   * When dropped > 0: offset of the first kept message line; [cutOffset, size) is kept verbatim
   * behind a new header and everything before it goes. 0 (meaningless) when dropped is 0.
   */
  cutOffset: number;
  /** `id` of the first kept message; `""` when it has none or nothing is dropped. */
  oldestSurvivingId: string;
  /** `id` of the last dropped message; `""` when it has none or nothing is dropped. */
  lastDroppedId: string;
  /**
   * True when [0, size) is empty or ends with `\n`. The runtime re-terminates an unterminated
   * tail when it rewrites; a verbatim copier may want to know.
   */
  terminated: boolean;
}

function checkRange(from: number, to: number): void {
  if (!Number.isSafeInteger(from) || from < 0) throw new RangeError(`from must be a non-negative integer, got ${from}`);
  if (!Number.isSafeInteger(to) || to < from) throw new RangeError(`to must be an integer >= from, got ${to}`);
}

function checkBufferSize(bufferSize: number | undefined): number {
  const size = bufferSize ?? DEFAULT_BUFFER_SIZE;
  if (!Number.isSafeInteger(size) || size < 1)
    throw new RangeError(`bufferSize must be a positive integer, got ${size}`);
  return size;
}

function bufferFor(bufferSize: number | undefined, span: number): Buffer {
  return Buffer.allocUnsafe(Math.max(1, Math.min(checkBufferSize(bufferSize), span)));
}

function lineTooLong(start: number, cap: number, backward = false): GcError {
  const which = backward ? `the line ending at byte ${start}` : `the line at byte ${start}`;
  return new GcError(
    Codes.lineTooLong,
    `${which} is longer than the ${cap}-byte line cap${backward ? '' : ' and may be JSON'}; the file is not judged (docs/limits.md)`,
  );
}

/**
 * A file whose size is more than this many times what it holds on disk (`st_blocks` × 512, but at
 * least one 4 KiB block) is "mostly holes" and not read (docs/limits.md "Sparse files"). A real
 * trace or record is append-only text and never sparse; only a compressing filesystem reports
 * fewer blocks than the size, and text compresses less: generated traces and records, cut into
 * ZFS's 128 KiB records, compress 6× with lz4, 8.5× with gzip -9 and 10.5× with zstd -19.
 */
export const SPARSE_RATIO = 16;
/** The least a file is taken to hold on disk: one block (so a small file is always read). */
export const SPARSE_FLOOR_BYTES = 4096;
/**
 * A file written this recently may not have its blocks counted yet (ZFS and btrfs count them when
 * their transaction commits, seconds after the write): when it looks sparse it is still read while
 * the recent-write allowance lasts.
 */
export const RECENT_WRITE_MS = 60_000;
/** The recent-write allowance: bytes of files that look sparse read per minute, per process. */
export const RECENT_SPARSE_BYTES_PER_MIN = 256 * 1024 * 1024;

/**
 * What may be read of files that look sparse but were written in the last RECENT_WRITE_MS: a token
 * bucket of RECENT_SPARSE_BYTES_PER_MIN, refilled continuously (monotonic clock). One per process:
 * whatever the number of files, sweeps and commands, such reads cost at most that much a minute.
 */
export class SparseAllowance {
  private left: number;
  private at: number;
  constructor(
    private readonly perMinute = RECENT_SPARSE_BYTES_PER_MIN,
    private readonly clock: () => number = () => performance.now(),
  ) {
    this.left = perMinute;
    this.at = clock();
  }
  /** Takes `bytes` from the allowance when it holds that much (then true); else takes nothing. */
  take(bytes: number): boolean {
    const t = this.clock();
    this.left = Math.min(this.perMinute, this.left + ((t - this.at) * this.perMinute) / 60_000);
    this.at = t;
    if (bytes > this.left) return false;
    this.left -= bytes;
    return true;
  }
}

const allowance = new SparseAllowance();

/**
 * A `sparse_file` error when a file of this stat is mostly holes (more than SPARSE_RATIO times
 * what it holds on disk: `truncate -s 5G` costs a capsule no disk and a reader 5 GiB of NUL bytes);
 * undefined when it may be read. Node cannot seek to data (SEEK_DATA), so such a file is not read
 * at all — unless it was written in the last RECENT_WRITE_MS and the process's recent-write
 * allowance covers it (its blocks may not be counted yet). Whatever a capsule plants, what a
 * process reads of files is at most SPARSE_RATIO × what they hold on disk (4 KiB at least each),
 * plus that allowance. `nowMs`: the wall clock (file mtimes are wall-clock times).
 */
export function sparseFileError(
  st: { size: bigint; blocks: bigint; mtimeMs: bigint | number },
  nowMs = Date.now(),
  recent: SparseAllowance = allowance,
): GcError | undefined {
  const allocated = st.blocks * 512n;
  const floor = allocated > BigInt(SPARSE_FLOOR_BYTES) ? allocated : BigInt(SPARSE_FLOOR_BYTES);
  if (st.size <= floor * BigInt(SPARSE_RATIO)) return undefined;
  const fresh = Number(st.mtimeMs) >= nowMs - RECENT_WRITE_MS;
  if (fresh && recent.take(Number(st.size))) return undefined;
  const why = fresh
    ? `; written in the last minute, but more than the ${RECENT_SPARSE_BYTES_PER_MIN / (1 << 20)} MiB a minute read of such files`
    : '';
  return new GcError(
    Codes.sparseFile,
    `the file is ${st.size} bytes of which ${allocated} are allocated on disk (mostly holes: over ${SPARSE_RATIO}× what it holds)${why}; not read (docs/limits.md)`,
  );
}

/** JSON's blanks (space, tab, CR; a line holds no LF). */
function isBlank(b: number): boolean {
  return b === 0x20 || b === 0x09 || b === 0x0d;
}

/** Expected length of the UTF-8 sequence led by `b` (0: not a lead byte). */
function seqLen(b: number): number {
  if (b < 0x80) return 1;
  if (b >= 0xc2 && b <= 0xdf) return 2;
  if (b >= 0xe0 && b <= 0xef) return 3;
  if (b >= 0xf0 && b <= 0xf4) return 4;
  return 0;
}

/**
 * UTF-8 validity of bytes pushed piece by piece (a sequence may be split between pieces): holds
 * at most the 3 bytes of an unfinished sequence.
 */
export class Utf8Stream {
  ok = true;
  private readonly tail = Buffer.alloc(4);
  private tailLen = 0;

  push(b: Buffer): void {
    if (!this.ok || b.length === 0) return;
    let from = 0;
    if (this.tailLen > 0) {
      const want = seqLen(this.tail[0] ?? 0) - this.tailLen;
      const take = Math.min(want, b.length);
      b.copy(this.tail, this.tailLen, 0, take);
      this.tailLen += take;
      from = take;
      if (take < want) return;
      if (!isUtf8(this.tail.subarray(0, this.tailLen))) {
        this.ok = false;
        return;
      }
      this.tailLen = 0;
    }
    // An unfinished sequence at the end waits for the next piece.
    let end = b.length;
    for (let k = b.length - 1; k >= Math.max(from, b.length - 3); k--) {
      const c = b[k] ?? 0;
      if ((c & 0xc0) === 0x80) continue; // a continuation byte: look further back
      const n = seqLen(c);
      if (n > 1 && b.length - k < n) end = k;
      break;
    }
    if (!isUtf8(b.subarray(from, end))) {
      this.ok = false;
      return;
    }
    b.copy(this.tail, 0, end);
    this.tailLen = b.length - end;
  }

  /** Validity of everything pushed (an unfinished last sequence is invalid); resets. */
  end(): boolean {
    const ok = this.ok && this.tailLen === 0;
    this.ok = true;
    this.tailLen = 0;
    return ok;
  }
}

function shrank(expectedEnd: number, at: number): GcError {
  return new GcError(
    Codes.changedSinceScan,
    `file ended at byte ${at} while reading a snapshot of ${expectedEnd} bytes (it shrank during the scan)`,
  );
}

/** Reads exactly `len` bytes at `pos` into buf[0, len) unless the file ends first. */
async function readFully(fh: FileHandle, buf: Buffer, len: number, pos: number, expectedEnd: number): Promise<void> {
  let got = 0;
  while (got < len) {
    const { bytesRead } = await fh.read(buf, got, len - got, pos + got);
    if (bytesRead === 0) throw shrank(expectedEnd, pos + got);
    got += bytesRead;
  }
}

// ---------------------------------------------------------------------------------------------
// Forward
// ---------------------------------------------------------------------------------------------

/**
 * Pull-style forward scanner: `await fill()` loads the next chunk (false when done), then `next()`
 * synchronously advances to each line in it (false when the chunk is exhausted). The current line
 * is in `bytes/start/end/terminated`. Used directly by the hot loops (no per-line promise) and
 * wrapped by `forwardLines`.
 */
class ForwardScanner {
  bytes: Buffer = Buffer.alloc(0);
  start = 0;
  end = 0;
  terminated = false;

  private readonly buf: Buffer;
  /** The second buffer of the read-ahead, allocated when a third chunk is wanted. */
  private spare: Buffer | undefined;
  /** The next chunk, being read while the consumer scans the current one. */
  private ahead: { done: Promise<void>; buf: Buffer; pos: number; len: number } | undefined;
  private chunks = 0;
  private chunk: Buffer = Buffer.alloc(0);
  private chunkPos = 0; // file offset of chunk[0]
  private i = 0; // next unscanned index in chunk
  private readPos: number;
  private delivered: number;
  private carry: Buffer = Buffer.alloc(0);
  private carryLen = 0;
  private carryStart = 0;
  /** The line being carried passed the line cap: it is read past, not held (`carryLen` stays 0). */
  private over = false;
  private readonly overUtf8 = new Utf8Stream();
  /** Set on the current line when it is an overlong one (then `bytes` is empty). */
  overlong: { utf8: boolean } | undefined;
  private readonly maxLine: number;
  private finalPending = false;
  private done = false;
  /**
   * With `checkUtf8`: true when the current line lies in the part of its chunk already validated
   * as UTF-8 in one call (whole lines only; `\n` never falls inside a UTF-8 sequence, so a span
   * of whole lines is valid iff each of its lines is). False means "not known": check the line.
   */
  utf8Known = false;
  private bulkStart = 0;
  private bulkEnd = 0;
  private bulkOk = false;
  checkUtf8 = false;

  constructor(
    private readonly fh: FileHandle,
    from: number,
    private readonly to: number,
    bufferSize: number | undefined,
    private readonly signal: AbortSignal | undefined,
    maxLineBytes?: number,
  ) {
    checkRange(from, to);
    this.readPos = from;
    this.delivered = from;
    this.buf = bufferFor(bufferSize, to - from);
    this.maxLine = maxLineBytes ?? MAX_LINE_BYTES;
  }

  /** A line is being carried into the next chunk (held, or read past). */
  private get pendingLine(): boolean {
    return this.carryLen > 0 || this.over;
  }

  private appendCarry(part: Buffer, fileStart: number): void {
    if (this.over) {
      this.overUtf8.push(part);
      return;
    }
    if (this.carryLen === 0) this.carryStart = fileStart;
    const need = this.carryLen + part.length;
    if (need > this.maxLine) {
      this.passCap(part);
      return;
    }
    if (need > this.carry.length) {
      const grown = Buffer.allocUnsafe(Math.min(this.maxLine, Math.max(need, this.carry.length * 2, 256)));
      this.carry.copy(grown, 0, 0, this.carryLen);
      this.carry = grown;
    }
    part.copy(this.carry, this.carryLen);
    this.carryLen = need;
  }

  /**
   * The carried line grows past the cap by `part`: when it may be a JSON object (its first
   * non-blank byte is `{`, or none is seen yet) the file cannot be judged; else it is read past.
   */
  private passCap(part: Buffer): void {
    let first = -1;
    for (const b of [this.carry.subarray(0, this.carryLen), part]) {
      for (let k = 0; k < b.length && first < 0; k++) if (!isBlank(b[k] ?? 0)) first = b[k] ?? 0;
      if (first >= 0) break;
    }
    if (first < 0 || first === 0x7b) throw lineTooLong(this.carryStart, this.maxLine);
    this.over = true;
    this.overUtf8.push(this.carry.subarray(0, this.carryLen));
    this.overUtf8.push(part);
    this.carryLen = 0;
    // The held bytes are dropped with the line: a scan never keeps a buffer of the cap's size.
    this.carry = Buffer.alloc(0);
  }

  /** Ends the carried line: an overlong one's verdict, or the held bytes. */
  private takeCarried(): Buffer {
    if (this.over) {
      this.over = false;
      this.overlong = { utf8: this.overUtf8.end() };
      return EMPTY;
    }
    const v = this.carry.subarray(0, this.carryLen);
    this.carryLen = 0;
    return v;
  }

  /** File offset up to which chunks have been handed out (read-ahead not counted). */
  get readPosition(): number {
    return this.delivered;
  }

  /** Starts reading the chunk at readPos into `buf`. */
  private startRead(buf: Buffer): { done: Promise<void>; buf: Buffer; pos: number; len: number } {
    this.signal?.throwIfAborted();
    const len = Math.min(buf.length, this.to - this.readPos);
    const pos = this.readPos;
    this.readPos += len;
    const done = readFully(this.fh, buf, len, pos, this.to);
    return { done, buf, pos, len };
  }

  async fill(): Promise<boolean> {
    this.bulkOk = false; // (it describes the chunk being left)
    if (this.done) return false;
    if (this.i < this.chunk.length) this.appendCarry(this.chunk.subarray(this.i), this.chunkPos + this.i);
    this.chunk = this.chunk.subarray(0, 0);
    this.i = 0;
    const ahead = this.ahead;
    this.ahead = undefined;
    if (ahead === undefined && this.readPos >= this.to) {
      this.done = true;
      if (this.pendingLine) {
        this.finalPending = true;
        return true;
      }
      return false;
    }
    this.signal?.throwIfAborted();
    const cur =
      ahead ?? this.startRead(this.chunks % 2 === 0 ? this.buf : (this.spare ??= Buffer.allocUnsafe(this.buf.length)));
    this.chunks++;
    // Read-ahead from the second chunk on (a reader that wants only the first line never pays
    // for it): the next chunk is read into the other buffer while this one is scanned. The
    // current chunk's views stay valid until the next fill(), whose first act is to copy the
    // unscanned rest into `carry`.
    if (this.chunks >= 2 && this.readPos < this.to) {
      const next = this.startRead(
        this.chunks % 2 === 0 ? this.buf : (this.spare ??= Buffer.allocUnsafe(this.buf.length)),
      );
      next.done.catch(() => undefined); // observed when awaited; never an unhandled rejection
      this.ahead = next;
    }
    await cur.done;
    this.chunk = cur.buf.subarray(0, cur.len);
    this.chunkPos = cur.pos;
    this.delivered = cur.pos + cur.len;
    this.bulkStart = this.bulkEnd = 0;
    this.bulkOk = false;
    if (this.checkUtf8) {
      const first = this.pendingLine ? this.chunk.indexOf(10) + 1 : 0;
      const last = this.chunk.lastIndexOf(10);
      if (first > 0 || !this.pendingLine) {
        if (last >= first && isUtf8(this.chunk.subarray(first, last))) {
          this.bulkStart = first;
          this.bulkEnd = last;
          this.bulkOk = true;
        }
      }
    }
    return true;
  }

  /**
   * With `checkUtf8`: when the next lines of the current chunk are whole lines already validated
   * as UTF-8 and none is the file's first line, the chunk index just past their last `\n` (they
   * are chunk[bulkFrom, that)); else -1. `skipBulk(to)` then moves past them.
   */
  bulkTo(): number {
    if (!this.bulkOk || this.finalPending || this.pendingLine) return -1;
    const i = this.i;
    if (i < this.bulkStart || i > this.bulkEnd || i >= this.chunk.length || this.chunkPos + i === 0) return -1;
    return this.bulkEnd + 1;
  }

  get bulkFrom(): number {
    return this.i;
  }

  get chunkBytes(): Buffer {
    return this.chunk;
  }

  skipBulk(to: number): void {
    this.i = to;
  }

  next(): boolean {
    this.overlong = undefined;
    if (this.finalPending) {
      this.finalPending = false;
      this.utf8Known = false;
      this.start = this.carryStart;
      this.bytes = this.takeCarried();
      this.end = this.to; // (the rest of the range)
      this.terminated = false;
      return true;
    }
    const chunk = this.chunk;
    if (this.i >= chunk.length) return false;
    const j = chunk.indexOf(10, this.i);
    if (j === -1) return false;
    if (this.pendingLine) {
      this.appendCarry(chunk.subarray(this.i, j), this.chunkPos + this.i);
      this.start = this.carryStart;
      this.bytes = this.takeCarried();
      this.utf8Known = false;
    } else {
      this.bytes = chunk.subarray(this.i, j);
      this.start = this.chunkPos + this.i;
      this.utf8Known = this.i >= this.bulkStart && j <= this.bulkEnd;
    }
    this.end = this.chunkPos + j;
    this.terminated = true;
    this.i = j + 1;
    return true;
  }
}

/**
 * The lines of [from, to) in file order. A final line without `\n` is yielded with
 * `terminated: false`. `bytes` is a view valid only until the next iteration.
 */
export async function* forwardLines(fh: FileHandle, opts: ForwardOptions): AsyncGenerator<Line, void, undefined> {
  const s = new ForwardScanner(fh, opts.from ?? 0, opts.to, opts.bufferSize, opts.signal, opts.maxLineBytes);
  while (await s.fill()) {
    while (s.next())
      yield s.overlong
        ? { bytes: s.bytes, start: s.start, end: s.end, terminated: s.terminated, overlong: s.overlong }
        : { bytes: s.bytes, start: s.start, end: s.end, terminated: s.terminated };
  }
}

// ---------------------------------------------------------------------------------------------
// Backward
// ---------------------------------------------------------------------------------------------

/**
 * Pull-style backward scanner, same protocol as ForwardScanner, lines from last to first.
 * The part of a line that lies in later chunks is kept in `carry`, filled from its end towards
 * its start so that prepending is a copy.
 */
class BackwardScanner {
  bytes: Buffer = Buffer.alloc(0);
  start = 0;
  end = 0;
  terminated = false;

  private readonly buf: Buffer;
  private chunk: Buffer = Buffer.alloc(0);
  private chunkPos: number; // file offset of chunk[0]
  private k = -1; // last unscanned index in chunk (scan goes down); -1 = exhausted
  private lineEnd: number; // exclusive end of the line being assembled
  private lineTerminated = false;
  private started = false;
  private carry: Buffer = Buffer.alloc(0);
  private carryLen = 0; // data occupies carry[carry.length - carryLen, carry.length)
  private firstPending = false;
  private done = false;

  constructor(
    private readonly fh: FileHandle,
    private readonly from: number,
    private readonly to: number,
    bufferSize: number | undefined,
    private readonly signal: AbortSignal | undefined,
    maxLineBytes?: number,
  ) {
    checkRange(from, to);
    this.chunkPos = to;
    this.lineEnd = to;
    this.buf = bufferFor(bufferSize, to - from);
    this.maxLine = maxLineBytes ?? MAX_LINE_BYTES;
  }

  private readonly maxLine: number;

  private prependCarry(part: Buffer): void {
    const need = this.carryLen + part.length;
    if (need > this.maxLine) throw lineTooLong(this.lineEnd, this.maxLine, true);
    if (need > this.carry.length) {
      const grown = Buffer.allocUnsafe(Math.min(this.maxLine, Math.max(need, this.carry.length * 2, 256)));
      this.carry.copy(grown, grown.length - this.carryLen, this.carry.length - this.carryLen);
      this.carry = grown;
    }
    part.copy(this.carry, this.carry.length - need);
    this.carryLen = need;
  }

  private takeCarry(): Buffer {
    const v = this.carry.subarray(this.carry.length - this.carryLen);
    this.carryLen = 0;
    return v;
  }

  async fill(): Promise<boolean> {
    if (this.done) return false;
    // Whatever is left of the current chunk belongs to a line that starts further back.
    if (this.k >= 0) this.prependCarry(this.chunk.subarray(0, this.k + 1));
    this.k = -1;
    if (this.chunkPos <= this.from) {
      this.done = true;
      // The first line of the range: it exists whenever the range is non-empty.
      if (this.started) {
        this.firstPending = true;
        return true;
      }
      return false;
    }
    this.signal?.throwIfAborted();
    const len = Math.min(this.buf.length, this.chunkPos - this.from);
    const pos = this.chunkPos - len;
    await readFully(this.fh, this.buf, len, pos, this.to);
    this.chunk = this.buf.subarray(0, len);
    this.chunkPos = pos;
    this.k = len - 1;
    if (!this.started) {
      this.started = true;
      if (this.chunk[this.k] === 10) {
        this.lineEnd -= 1;
        this.lineTerminated = true;
        this.k -= 1;
      }
    }
    return true;
  }

  next(): boolean {
    if (this.firstPending) {
      this.firstPending = false;
      this.emit(this.from, this.carryLen > 0 ? this.takeCarry() : this.chunk.subarray(0, 0));
      return true;
    }
    if (this.k < 0) return false; // (lastIndexOf with a negative offset would count from the end)
    const j = this.chunk.lastIndexOf(10, this.k);
    if (j === -1) return false;
    const lineStart = this.chunkPos + j + 1;
    let bytes: Buffer;
    if (this.carryLen > 0) {
      this.prependCarry(this.chunk.subarray(j + 1, this.k + 1));
      bytes = this.takeCarry();
    } else {
      bytes = this.chunk.subarray(j + 1, this.k + 1);
    }
    this.emit(lineStart, bytes);
    this.lineEnd = this.chunkPos + j;
    this.lineTerminated = true;
    this.k = j - 1;
    return true;
  }

  private emit(start: number, bytes: Buffer): void {
    this.bytes = bytes;
    this.start = start;
    this.end = this.lineEnd;
    this.terminated = this.lineTerminated;
  }
}

/**
 * The lines of [from, to) from the last to the first; the last may be unterminated. Same `Line`
 * shape as `forwardLines`; `bytes` is a view valid only until the next iteration.
 */
export async function* backwardLines(fh: FileHandle, opts: BackwardOptions): AsyncGenerator<Line, void, undefined> {
  const s = new BackwardScanner(fh, opts.from ?? 0, opts.to, opts.bufferSize, opts.signal, opts.maxLineBytes);
  while (await s.fill()) {
    while (s.next()) yield { bytes: s.bytes, start: s.start, end: s.end, terminated: s.terminated };
  }
}

// ---------------------------------------------------------------------------------------------
// Record questions
// ---------------------------------------------------------------------------------------------

/**
 * Reads [0, size) once: the header (first line), the number of message lines, the last message's
 * id and, with `findId`, the position of the last message carrying that id.
 */
/** The per-line logic of scanRecord, shared by the streamed and the in-memory forms. */
class RecordScanAccumulator {
  private header: RecordHeader | undefined;
  private headerEnd = 0;
  private messages = 0;
  private position: number | undefined;
  private utf8 = true;
  private terminated = true;
  /** The raw bytes of the last message's `id` string (quotes included); idLen -1: none. */
  private idBytes: Uint8Array = new Uint8Array(64);
  private idLen = -1;
  private idEscaped = false;
  /**
   * The last message's id span, still in the caller's line view (copied into idBytes only by
   * `keep()`, which the streaming caller runs before its buffers are reused: once per chunk, not
   * once per line).
   */
  private pending: Buffer | undefined;
  private pendingStart = 0;
  private pendingEnd = 0;
  private readonly findBytes: Buffer | undefined;
  constructor(private readonly findId: string | undefined) {
    this.findBytes = findId === undefined ? undefined : Buffer.from(JSON.stringify(findId), 'utf8');
  }

  /** `utf8Known`: the caller already validated this line's bytes as UTF-8. */
  line(bytes: Buffer, start: number, end: number, terminated: boolean, utf8Known = false): void {
    this.terminated = terminated;
    if (!this.utf8) return;
    if (!utf8Known && !isUtf8(bytes)) {
      this.utf8 = false;
      return;
    }
    if (start === 0) {
      // The first line of the snapshot is either terminated or the whole snapshot, so it is
      // always the runtime's first `str::lines` line.
      this.header = parseHeaderLine(bytes);
      if (this.header) this.headerEnd = terminated ? end + 1 : end;
    }
    if (!isMessageLine(bytes, 0, bytes.length)) return;
    this.messages++;
    // The id is decoded once at the end (the last message's) or when it may equal findId; its
    // bytes are kept because `bytes` is a view that the next chunk overwrites.
    const id = lastMessageIdSpan();
    if (id.type !== T_STRING) {
      this.pending = undefined;
      this.idLen = -1;
      return;
    }
    this.pending = bytes;
    this.pendingStart = id.start;
    this.pendingEnd = id.end;
    this.idEscaped = id.escaped;
    const want = this.findBytes;
    if (want === undefined) return;
    if (id.escaped) {
      if (decodeJsonString(bytes, id.start, id.end, true) === this.findId) this.position = this.messages;
    } else if (id.end - id.start === want.length) {
      // Unescaped and valid UTF-8: equal bytes iff equal strings (want is JSON.stringify'd; an id
      // JSON.stringify would escape never matches unescaped bytes, and is compared decoded above).
      let k = 0;
      while (k < want.length && bytes[id.start + k] === want[k]) k++;
      if (k === want.length) this.position = this.messages;
    }
  }

  /**
   * A line over the line cap that cannot be a JSON object: neither header nor message (the
   * runtime's reader skips it); it only tells UTF-8 validity and termination.
   */
  overlong(terminated: boolean, utf8: boolean): void {
    this.terminated = terminated;
    if (!utf8) this.utf8 = false;
  }

  /** Whether `bulk` may be used: no `findId` (each id is compared one line at a time). */
  get bulkOk(): boolean {
    return this.findBytes === undefined && this.utf8;
  }

  private readonly counted = messageCount();

  /**
   * Lines bytes[from, to): whole `\n`-ended lines, valid UTF-8, none the file's first line; the
   * same as `line` for each of them (with `bulkOk`).
   */
  bulk(bytes: Buffer, from: number, to: number): void {
    if (from === to) return;
    this.terminated = true;
    const c = this.counted;
    countMessageLines(bytes, from, to, c);
    if (c.messages === 0) return;
    this.messages += c.messages;
    if (c.id.type !== T_STRING) {
      this.pending = undefined;
      this.idLen = -1;
      return;
    }
    this.pending = bytes;
    this.pendingStart = c.id.start;
    this.pendingEnd = c.id.end;
    this.idEscaped = c.id.escaped;
  }

  /** Copies the pending id out of the line view; run before the views' buffers are reused. */
  keep(): void {
    const b = this.pending;
    if (b === undefined) return;
    this.pending = undefined;
    const len = this.pendingEnd - this.pendingStart;
    if (len > this.idBytes.length) this.idBytes = new Uint8Array(Math.max(len, this.idBytes.length * 2));
    this.idBytes.set(b.subarray(this.pendingStart, this.pendingEnd));
    this.idLen = len;
  }

  result(): RecordScan {
    if (!this.utf8) {
      const none: RecordScan = {
        utf8: false,
        terminated: this.terminated,
        header: undefined,
        headerEnd: 0,
        messages: 0,
        lastMessageId: undefined,
      };
      if (this.findId !== undefined) none.position = undefined;
      return none;
    }
    this.keep();
    const lastMessageId = this.idLen < 0 ? undefined : decodeJsonString(this.idBytes, 0, this.idLen, this.idEscaped);
    const scan: RecordScan = {
      utf8: true,
      terminated: this.terminated,
      header: this.header,
      headerEnd: this.headerEnd,
      messages: this.messages,
      lastMessageId,
    };
    if (this.findId !== undefined) scan.position = this.position;
    return scan;
  }
}

export async function scanRecord(fh: FileHandle, size: number, opts: RecordScanOptions = {}): Promise<RecordScan> {
  checkRange(0, size);
  const acc = new RecordScanAccumulator(opts.findId);
  let from = 0;
  if (acc.bulkOk && size > 0) {
    const region = chunkRegion();
    if (region !== undefined) {
      try {
        from = await scanIntoRegion(fh, size, opts, acc, region.buf);
      } finally {
        region.release();
      }
      if (from === size) return acc.result();
    }
  }
  const s = new ForwardScanner(fh, from, size, opts.bufferSize, opts.signal, opts.maxLineBytes);
  s.checkUtf8 = true;
  for (;;) {
    acc.keep(); // fill() reuses the buffers the last line views point into
    if (!(await s.fill())) break;
    opts.onRead?.(s.readPosition);
    for (;;) {
      const to = acc.bulkOk ? s.bulkTo() : -1;
      if (to >= 0) {
        acc.bulk(s.chunkBytes, s.bulkFrom, to);
        s.skipBulk(to);
        continue;
      }
      if (!s.next()) break;
      if (s.overlong) acc.overlong(s.terminated, s.overlong.utf8);
      else acc.line(s.bytes, s.start, s.end, s.terminated, s.utf8Known);
    }
  }
  return acc.result();
}

/**
 * scanRecord's fast path: chunks read synchronously (page-cache reads cost far less CPU than
 * thread-pool ones) straight into the WebAssembly memory's chunk region, whole lines counted
 * there in one call per chunk (src/json/scan.ts `countMessageLines`), the partial last line moved to
 * the region's start for the next chunk. The event loop is let run between chunks
 * (`yieldIfBusy`), the signal checked before each read. Returns the offset it stopped at: `size`,
 * or the start of a line longer than the region, which the caller's streaming scanner takes on.
 */
async function scanIntoRegion(
  fh: FileHandle,
  size: number,
  opts: RecordScanOptions,
  acc: RecordScanAccumulator,
  mem: Buffer,
): Promise<number> {
  const cap = Math.min(mem.length, checkBufferSize(opts.bufferSize));
  const fd = fh.fd;
  let pos = 0; // file offset of mem[0]
  let len = 0; // bytes held in mem
  while (pos + len < size) {
    if (len === cap) return pos; // a line longer than the region
    opts.signal?.throwIfAborted();
    const want = Math.min(cap - len, size - pos - len);
    let got = 0;
    while (got < want) {
      const n = readSync(fd, mem, len + got, want - got, pos + len + got);
      if (n === 0) throw shrank(size, pos + len + got);
      got += n;
    }
    len += got;
    opts.onRead?.(pos + len);
    const last = mem.lastIndexOf(10, len - 1);
    if (last >= 0) {
      let i = 0;
      if (pos === 0) {
        // the file's first line: the header, classified alone
        const nl = mem.indexOf(10);
        acc.line(mem.subarray(0, nl), 0, nl, true);
        i = nl + 1;
      }
      if (i <= last) {
        if (acc.bulkOk && isUtf8(mem.subarray(i, last + 1))) {
          acc.bulk(mem, i, last + 1);
        } else {
          for (let j = mem.indexOf(10, i); i <= last; i = j + 1, j = mem.indexOf(10, i))
            acc.line(mem.subarray(i, j), pos + i, pos + j, true);
        }
      }
      acc.keep(); // the id's bytes are about to be overwritten
      mem.copyWithin(0, last + 1, len);
      pos += last + 1;
      len -= last + 1;
    }
    await yieldIfBusy();
  }
  if (len > 0) acc.line(mem.subarray(0, len), pos, pos + len, false);
  acc.keep();
  return size;
}

/** scanRecord over bytes already in memory (a small record read whole). */
export function scanRecordBytes(data: Buffer, opts: { findId?: string } = {}): RecordScan {
  const acc = new RecordScanAccumulator(opts.findId);
  let from = 0;
  const first = data.indexOf(10);
  const last = data.lastIndexOf(10);
  if (acc.bulkOk && first >= 0 && last > first && isUtf8(data.subarray(0, last))) {
    // the first line alone (the header), the whole lines after it in one call
    acc.line(data.subarray(0, first), 0, first, true, true);
    acc.bulk(data, first + 1, last + 1);
    from = last + 1;
  }
  while (from < data.length) {
    const nl = data.indexOf(10, from);
    if (nl < 0) {
      acc.line(data.subarray(from), from, data.length, false);
      break;
    }
    acc.line(data.subarray(from, nl), from, nl, true);
    from = nl + 1;
  }
  return acc.result();
}

function unreadable(): GcError {
  return new GcError(
    Codes.recordUnreadable,
    'stream did not contain valid UTF-8 (the runtime cannot read this record; it is never truncated)',
  );
}

/**
 * Plans "keep the newest `keep` messages" over the snapshot [0, size) (docs/design.md §R5): the
 * backward walk from EOF stops at the (keep+1)-th message from the end (the last dropped one);
 * then the prefix before it is counted forwards for the exact `dropped`.
 */
export async function planKeepNewest(
  fh: FileHandle,
  size: number,
  keep: number,
  opts: ScanOptions & {
    /**
     * Message count of exactly this snapshot (same file, same size), e.g. from the sweep's
     * inventory scan. When given and consistent, the forward count of the dropped prefix is skipped.
     */
    knownTotal?: number;
  } = {},
): Promise<KeepPlan> {
  if (!Number.isSafeInteger(keep) || keep < 1) throw new RangeError(`keep must be an integer >= 1, got ${keep}`);
  checkRange(0, size);
  let header: RecordHeader | undefined;
  let terminated = size === 0;
  let found = 0;
  let cutOffset = 0;
  let oldestSurvivingId = '';
  let lastDroppedId = '';
  let lastDroppedStart = -1;

  const back = new BackwardScanner(fh, 0, size, opts.bufferSize, opts.signal, opts.maxLineBytes);
  let first = true;
  scan: while (await back.fill()) {
    while (back.next()) {
      if (first) {
        first = false;
        terminated = back.terminated;
      }
      if (!isUtf8(back.bytes)) throw unreadable();
      if (back.start === 0) header = parseHeaderLine(back.bytes);
      const c = classifyLine(back.bytes);
      if (!c.isMessage) continue;
      found++;
      if (found === keep) {
        cutOffset = back.start;
        oldestSurvivingId = c.id ?? '';
      } else if (found === keep + 1) {
        lastDroppedStart = back.start;
        lastDroppedId = c.id ?? '';
        break scan;
      }
    }
  }

  if (lastDroppedStart < 0) {
    return {
      header,
      total: found,
      dropped: 0,
      kept: found,
      cutOffset: 0,
      oldestSurvivingId: '',
      lastDroppedId: '',
      terminated,
    };
  }

  if (opts.knownTotal !== undefined && Number.isSafeInteger(opts.knownTotal) && opts.knownTotal > keep) {
    if (lastDroppedStart > 0) {
      // Only the first line is needed (the header, if any).
      const head = new ForwardScanner(fh, 0, lastDroppedStart, opts.bufferSize, opts.signal, opts.maxLineBytes);
      firstLine: while (await head.fill()) {
        if (head.next()) {
          header = head.start === 0 && !head.overlong ? parseHeaderLine(head.bytes) : undefined;
          break firstLine;
        }
      }
    }
    const dropped = opts.knownTotal - keep;
    return {
      header,
      total: opts.knownTotal,
      dropped,
      kept: keep,
      cutOffset,
      oldestSurvivingId,
      lastDroppedId,
      terminated,
    };
  }

  // Count the messages before the last dropped one; its start is a line start, so every line in
  // [0, lastDroppedStart) is terminated.
  // That is scanRecord's count of the prefix (its header is the same first line).
  let before = 0;
  if (lastDroppedStart > 0) {
    const prefix = await scanRecord(fh, lastDroppedStart, {
      ...definedOnly({ bufferSize: opts.bufferSize, maxLineBytes: opts.maxLineBytes }),
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    if (!prefix.utf8) throw unreadable();
    header = prefix.header;
    before = prefix.messages;
  }
  const dropped = before + 1;
  return {
    header,
    total: dropped + keep,
    dropped,
    kept: keep,
    cutOffset,
    oldestSurvivingId,
    lastDroppedId,
    terminated,
  };
}
