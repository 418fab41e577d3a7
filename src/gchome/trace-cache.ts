// Persistence of the trace summary and record message-count cache at `<home>/gc/trace-cache.json`
// (0600, atomic rename). Format: a first line `murmur-gc cache 6` (MAGIC), then one line per
// entry (`T|R <tab> key-json <tab> entry-json`, see MemoryTraceCache). The number changes whenever
// what an entry means changes, so a cache written by another version is never trusted: format 6 is
// the first whose unaccounted work is ids and the offsets of its lines, never a command, and whose
// session_start is its line's offset (format 5 added the work ids and child workdirs a trace names).
// Guarantees: a missing, oversized, foreign or corrupt cache (or any corrupt line of it) is treated
// as empty (it never wedges a sweep, logrotate#45's lesson) and rebuilt from the files; only entries
// looked at in this sweep are kept, so it cannot grow without bound; an unchanged cache is not
// rewritten; the write is not fsync'ed (after a crash the cache may be lost or torn, and is rebuilt).
// Size: never written over CACHE_MAX_BYTES (48 MiB), whatever the traces hold — an entry is at
// most CACHE_ENTRY_CAP (1 MiB, src/runtime/summary-cache.ts), and the lines past the total are left
// out (those files are read again by the next sweep); a larger file is not ours and reads as empty.
// Memory: the file is never whole in memory, nor a line of it over CACHE_LINE_CAP (16 MiB) —
// loading indexes it by directory in 1 MiB chunks and
// keeps it open (until `cache.close()`) so each directory's lines are read when first looked up;
// saving goes through one reused 1 MiB buffer.
import { GC_DIR_NAME } from './paths.js';
import { syncIo, yieldIfBusy, type Dir, type FileHandle } from '../fsx/safe-fs.js';
import { CACHE_MAX_BYTES, MemoryTraceCache } from '../runtime/summary-cache.js';

const CACHE_FILE = 'trace-cache.json';
const MAGIC = 'murmur-gc cache 6';

/** The cache is read in chunks of this size (a line longer than it grows the buffer, up to LINE_CAP). */
const CHUNK = 1 << 20;
/**
 * No entry murmur-gc writes comes near this; at a longer line (a planted or corrupt file) indexing
 * stops: the entries before it serve, the rest are misses (those files are read again).
 */
export const CACHE_LINE_CAP = 16 << 20;

/**
 * The cache of `<home>/gc/trace-cache.json`, indexed by directory; a directory's lines are read
 * back (and parsed) when the scan first looks it up. The file stays open until `cache.close()`
 * (the sweep closes it after its scans, and in any case at its end).
 */
export async function loadTraceCache(home: Dir, chunkBytes = CHUNK): Promise<MemoryTraceCache> {
  const cache = new MemoryTraceCache();
  let fd: number | undefined;
  try {
    const st = await home.lstat(GC_DIR_NAME);
    if (!st?.isDirectory()) return cache;
    await using gc = await home.openDir(GC_DIR_NAME);
    const f = gc.openReadFdSync(CACHE_FILE);
    fd = f.fd;
    if (f.stat.size > BigInt(CACHE_MAX_BYTES)) {
      syncIo.close(fd);
      return cache;
    }
    await indexFile(fd, Number(f.stat.size), cache, chunkBytes);
    const at = fd;
    cache.indexed(
      (start, end, into, to) => readAt(at, start, end, into, to),
      () => syncIo.close(at),
    );
    return cache;
  } catch {
    if (fd !== undefined) syncIo.close(fd);
    return new MemoryTraceCache();
  }
}

/** Read file bytes [start, end) into `into` at `to`; how many were read (fewer at end of file). */
function readAt(fd: number, start: number, end: number, into: Buffer, to: number): number {
  let off = 0;
  while (off < end - start) {
    const n = syncIo.read(fd, into.subarray(to + off), start + off, end - start - off);
    if (n === 0) break;
    off += n;
  }
  return off;
}

/**
 * One pass over the file in chunks, indexing whole lines by directory: it is never whole in memory
 * (27 MB at 100 000 sessions). A file not starting with MAGIC indexes nothing.
 */
async function indexFile(fd: number, size: number, cache: MemoryTraceCache, chunkBytes: number): Promise<void> {
  const magic = Buffer.from(MAGIC + '\n');
  let buf = Buffer.allocUnsafe(chunkBytes);
  let have = 0;
  /** file offset of buf[0] */
  let base = 0;
  let first = true;
  for (let pos = 0; ;) {
    await yieldIfBusy();
    if (have === buf.length) {
      if (buf.length >= CACHE_LINE_CAP) return;
      const bigger = Buffer.allocUnsafe(Math.min(buf.length * 2, CACHE_LINE_CAP));
      buf.copy(bigger, 0, 0, have);
      buf = bigger;
    }
    const n = pos < size ? syncIo.read(fd, buf.subarray(have), pos, buf.length - have) : 0;
    pos += n;
    const eof = n === 0;
    have += n;
    let start = 0;
    if (first) {
      if (have < magic.length && !eof) continue;
      if (have < magic.length || !buf.subarray(0, magic.length).equals(magic)) return;
      first = false;
      start = magic.length;
    }
    const lastNl = eof ? have : buf.lastIndexOf(10, have - 1);
    if (lastNl >= start) {
      cache.indexLines(buf, start, lastNl, base + start);
      start = lastNl + 1;
    }
    if (eof) return;
    const keep = Math.min(start, have);
    buf.copy(buf, 0, keep, have);
    have -= keep;
    base += keep;
  }
}

export async function saveTraceCache(home: Dir, cache: MemoryTraceCache): Promise<void> {
  if (!cache.changed) return;
  await using gc = await home.mkdir(GC_DIR_NAME, 0o700);
  // Streamed through one reused 1 MiB buffer: the cache is never one string in memory, and no
  // concatenated chunk strings pile up in the heap (60 MB of garbage at 100 000 entries).
  const tmp = `.${CACHE_FILE}.${process.pid}.${Date.now().toString(16)}${Math.random().toString(16).slice(2, 10)}.tmp`;
  const fh = await gc.createExclusive(tmp, 0o600);
  let renamed = false;
  try {
    let buf = Buffer.allocUnsafe(CHUNK);
    let used = buf.write(MAGIC + '\n', 0, 'utf8');
    let total = used;
    for (const l of cache.lines()) {
      const need = Buffer.byteLength(l, 'utf8') + 1;
      // Never more than CACHE_MAX_BYTES on disk: a line past it is left out (its file is read again).
      if (total + need > CACHE_MAX_BYTES) continue;
      total += need;
      if (used + need > buf.length) {
        await writeAll(fh, buf, used);
        used = 0;
        if (need > buf.length) buf = Buffer.allocUnsafe(need);
      }
      used += buf.write(l, used, 'utf8');
      buf[used++] = 10;
    }
    await writeAll(fh, buf, used);
    await fh.close();
    await gc.rename(tmp, CACHE_FILE);
    renamed = true;
  } finally {
    await fh.close().catch(() => undefined);
    if (!renamed) await gc.unlink(tmp).catch(() => undefined);
  }
}

async function writeAll(fh: FileHandle, buf: Buffer, len: number): Promise<void> {
  for (let off = 0; off < len;) {
    const { bytesWritten } = await fh.write(buf, off, len - off);
    if (bytesWritten <= 0) throw new Error('short write');
    off += bytesWritten;
  }
}
