// Persistence of the trace summary and record message-count cache at `<home>/gc/trace-cache.json` (0600, atomic write).
// Guarantees: a missing, oversized or corrupt cache is treated as empty (it never wedges a sweep,
// logrotate#45's lesson); only entries looked at in this sweep are kept, so it cannot grow without bound.
import { GC_DIR_NAME } from './paths.js';
import { readSmallFile, type Dir } from './safe-fs.js';
import { MemoryTraceCache } from './trace-scan.js';

const CACHE_FILE = 'trace-cache.json';

export async function loadTraceCache(home: Dir): Promise<MemoryTraceCache> {
  try {
    const st = await home.lstat(GC_DIR_NAME);
    if (!st?.isDirectory()) return new MemoryTraceCache();
    const gc = await home.openDir(GC_DIR_NAME);
    try {
      const raw = await readSmallFile(gc, CACHE_FILE, 256 << 20);
      const parsed = JSON.parse(raw.toString('utf8')) as { version?: unknown; entries?: unknown; records?: unknown };
      if (parsed.version !== 2) return new MemoryTraceCache();
      const cache = MemoryTraceCache.fromJSON(parsed.entries);
      cache.loadRecords(parsed.records);
      return cache;
    } finally {
      await gc.close();
    }
  } catch {
    return new MemoryTraceCache();
  }
}

export async function saveTraceCache(home: Dir, cache: MemoryTraceCache): Promise<void> {
  const gc = await home.mkdir(GC_DIR_NAME, 0o700);
  try {
    await gc.writeFileAtomic(CACHE_FILE, JSON.stringify({ version: 2, entries: cache.toJSON(), records: cache.recordsToJSON() }), 0o600);
  } finally {
    await gc.close();
  }
}
