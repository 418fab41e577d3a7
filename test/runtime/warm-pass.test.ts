// A scan prepares for cache hits (one relative pass of lstats per batch of names) only under a
// directory the cache knew when that scan began. A first sweep stores entries as it goes, and the
// cache then knows the directory; asking it again batch by batch made every later batch of a
// first sweep lstat each session and its trace twice, for hits that could not come.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Dir } from '../../src/fsx/safe-fs.js';
import { scanRecords, scanSessionsRoot, type RecordsScanOptions } from '../../src/runtime/inventory.js';
import { MemoryTraceCache } from '../../src/runtime/summary-cache.js';
import * as f from '../helpers/fixtures.js';

let T: string;
const now = Date.now();

beforeEach(() => {
  T = f.tempDir('warm-pass');
});
afterEach(() => {
  vi.restoreAllMocks();
  f.rmrf(T);
});

describe('the warm scans prepare for hits only where the cache knew the directory at the start', () => {
  it('sessions: a first scan of 600 sessions makes no pass; the next one makes one per 256 names, and every trace is a hit', async () => {
    const root = path.join(T, 'app', '.murmur');
    for (let i = 0; i < 600; i++)
      f.writeSession(root, { sessionId: f.idAt('ses_', now - (i + 2) * 60_000), end: true });
    const passes = vi.spyOn(Dir.prototype, 'relativePassSync');
    const reads = vi.spyOn(Dir.prototype, 'readHeadSync');
    const cache = new MemoryTraceCache();

    const first = await scanSessionsRoot(root, cache);
    expect(first.sessions.filter((s) => s.trace?.ok)).toHaveLength(600);
    expect(reads).toHaveBeenCalledTimes(600);
    expect(passes).not.toHaveBeenCalled();

    reads.mockClear();
    const second = await scanSessionsRoot(root, cache);
    expect(second.sessions.filter((s) => s.trace?.ok)).toHaveLength(600);
    expect(reads).not.toHaveBeenCalled();
    expect(passes).toHaveBeenCalledTimes(3);
  });

  it('records: a first scan of 100 contexts makes no pass; the next one makes one per 32 contexts, and every count is a hit', async () => {
    const home = path.join(T, '.murmur');
    fs.mkdirSync(home, { mode: 0o700 });
    for (let i = 0; i < 100; i++)
      f.writeRecord(home, 'shey', `ctx_${String(i).padStart(3, '0')}`, { capsule: 'shey', messages: 2 });
    const passes = vi.spyOn(Dir.prototype, 'relativePassSync');
    const countCache = new MemoryTraceCache();
    const opts: RecordsScanOptions = {
      countAll: true,
      collectModes: false,
      nowMs: now,
      debrisAgeMs: Infinity,
      isPidAlive: () => true,
      countCache,
    };
    const scan = async () => {
      const dir = await Dir.open(home);
      try {
        return await scanRecords(dir, home, opts);
      } finally {
        await dir.close();
      }
    };

    const first = await scan();
    expect([first.counted, first.countsCached]).toEqual([100, 0]);
    expect(passes).not.toHaveBeenCalled();

    const second = await scan();
    expect([second.counted, second.countsCached]).toEqual([0, 100]);
    expect(passes).toHaveBeenCalledTimes(4);
  });
});
