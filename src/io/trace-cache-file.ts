// Persistence of the trace summary and record message-count cache at `<home>/gc/trace-cache.json`
// (0600, atomic rename). Format: a first line `murmur-gc cache 3`, then one line per entry
// (`T|R <tab> key-json <tab> entry-json`, see MemoryTraceCache).
// Guarantees: a missing, oversized, foreign or corrupt cache (or any corrupt line of it) is treated
// as empty (it never wedges a sweep, logrotate#45's lesson) and rebuilt from the files; only entries
// looked at in this sweep are kept, so it cannot grow without bound; an unchanged cache is not
// rewritten; the write is not fsync'ed (after a crash the cache may be lost or torn, and is rebuilt).
import { GC_DIR_NAME } from './paths.js';
import { readSmallFile, type Dir } from './safe-fs.js';
import { MemoryTraceCache } from './trace-scan.js';

const CACHE_FILE = 'trace-cache.json';
const MAGIC = 'murmur-gc cache 3';

export async function loadTraceCache(home: Dir): Promise<MemoryTraceCache> {
  const cache = new MemoryTraceCache();
  try {
    const st = await home.lstat(GC_DIR_NAME);
    if (!st?.isDirectory()) return cache;
    const gc = await home.openDir(GC_DIR_NAME);
    try {
      // Parsed from the bytes: the file is never one string, and no entry pins it in memory.
      const data = await readSmallFile(gc, CACHE_FILE, 256 << 20);
      const magic = Buffer.from(MAGIC + '\n');
      if (data.length < magic.length || !data.subarray(0, magic.length).equals(magic)) return cache;
      cache.load(data, magic.length);
      return cache;
    } finally {
      await gc.close();
    }
  } catch {
    return new MemoryTraceCache();
  }
}

export async function saveTraceCache(home: Dir, cache: MemoryTraceCache): Promise<void> {
  if (!cache.changed) return;
  const gc = await home.mkdir(GC_DIR_NAME, 0o700);
  try {
    // Streamed in chunks: a cache of 100 000 entries is never one string in memory.
    const tmp = `.${CACHE_FILE}.${process.pid}.${Date.now().toString(16)}${Math.random().toString(16).slice(2, 10)}.tmp`;
    const fh = await gc.createExclusive(tmp, 0o600);
    let renamed = false;
    try {
      let chunk = MAGIC + '\n';
      for (const l of cache.lines()) {
        chunk += l + '\n';
        if (chunk.length >= 1 << 20) {
          await fh.write(chunk);
          chunk = '';
        }
      }
      await fh.write(chunk);
      await fh.close();
      await gc.rename(tmp, CACHE_FILE);
      renamed = true;
    } finally {
      await fh.close().catch(() => undefined);
      if (!renamed) await gc.unlink(tmp).catch(() => undefined);
    }
  } finally {
    await gc.close();
  }
}
