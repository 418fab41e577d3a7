// The trace/count cache file is indexed by directory in chunks and each directory's lines are
// parsed as they are looked up: whatever the chunk size and the lookup order, every entry written
// comes back exactly (and a stale one never does).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Dir } from '../../src/fsx/safe-fs.js';
import { loadTraceCache, saveTraceCache } from '../../src/gchome/trace-cache.js';
import {
  CACHE_ENTRY_CAP,
  CACHE_MAX_BYTES,
  MemoryTraceCache,
  type TraceFileState,
} from '../../src/runtime/summary-cache.js';
import type { TraceSummary } from '../../src/runtime/trace.js';
import * as f from '../helpers/fixtures.js';

let T: string;
const DIRS = ['/r/a/.murmur', '/r/b/.murmur', '/r/é "quoted"/.murmur'];
const NAMES = Array.from({ length: 40 }, (_, i) => f.idAt('ses_', 1_750_000_000_000 + i * 1000));

const state = (d: number, i: number): TraceFileState => ({
  dev: '2049',
  ino: String(1000 + d * 100 + i),
  size: 100 + i,
  mtimeMs: 1_750_000_000_123.5 + i,
});
const summary = (d: number, i: number): TraceSummary => ({
  sessionStart: undefined,
  contextIds: i % 3 === 0 ? [] : [`ctx_${i}_${'x'.repeat(i)}`, `ctx_${d}_${i}`],
  hasSessionEnd: i % 2 === 0,
  taskTrust: {},
  unaccounted: [],
  endsWithNewline: i % 5 !== 0,
  invalidLines: i % 7,
  utf8: true,
});
const plain = (s: TraceSummary) => ({
  contextIds: [...s.contextIds],
  hasSessionEnd: s.hasSessionEnd,
  endsWithNewline: s.endsWithNewline,
  invalidLines: s.invalidLines,
  utf8: s.utf8,
  unaccounted: s.unaccounted,
});

beforeAll(async () => {
  T = f.tempDir('trace-cache');
  fs.mkdirSync(path.join(T, 'gc'), { mode: 0o700 });
  const c = new MemoryTraceCache();
  DIRS.forEach((dir, d) => NAMES.forEach((n, i) => c.set(dir, n, state(d, i), summary(d, i))));
  c.setRecord('/h/conversations/notes', 'ctx_1', state(9, 1), { header: null, messages: 3, terminated: true });
  const home = await Dir.open(T);
  try {
    await saveTraceCache(home, c);
  } finally {
    await home.close();
  }
});

afterAll(() => f.rmrf(T));

async function load(chunk: number): Promise<MemoryTraceCache> {
  const home = await Dir.open(T);
  try {
    return await loadTraceCache(home, chunk);
  } finally {
    await home.close();
  }
}

describe('trace cache file', () => {
  for (const chunk of [16, 100, 4096, 1 << 20]) {
    it(`chunks of ${chunk} bytes: every entry comes back, in any lookup order`, async () => {
      const c = await load(chunk);
      try {
        // the second directory backwards (out of written order), then the others forwards
        for (const [d, order] of [
          [1, [...NAMES.keys()].reverse()],
          [0, [...NAMES.keys()]],
          [2, [...NAMES.keys()]],
        ] as [number, number[]][]) {
          for (const i of order) {
            const got = c.get(DIRS[d]!, NAMES[i]!, state(d, i));
            expect(got && plain(got), `${DIRS[d]}/${NAMES[i]}`).toEqual(plain(summary(d, i)));
          }
        }
        expect(c.getRecord('/h/conversations/notes', 'ctx_1', state(9, 1))).toMatchObject({
          messages: 3,
          terminated: true,
          header: null,
        });
        expect(c.changed).toBe(false);
      } finally {
        c.close();
      }
    });
  }

  it('a line over the line cap (a planted cache) is never held: indexing stops there, what follows is a miss', async () => {
    const file = path.join(T, 'gc', 'trace-cache.json');
    const good = fs.readFileSync(file);
    try {
      const lines = good.toString('utf8').split('\n');
      const first = lines.findIndex((l) => l.includes(NAMES[0]!) && l.includes(JSON.stringify(DIRS[0]).slice(1, -1)));
      const last = lines.findIndex((l) => l.includes(NAMES[39]!) && l.includes(JSON.stringify(DIRS[2]).slice(1, -1)));
      expect(first).toBeGreaterThan(0);
      expect(last).toBeGreaterThan(first);
      // the magic line, one good entry, a 20 MiB line of NULs, then the good entry of another directory
      const planted = Buffer.concat([
        Buffer.from([lines[0], lines[first], ''].join('\n')),
        Buffer.alloc(20 << 20),
        Buffer.from(['', lines[last], ''].join('\n')),
      ]);
      fs.writeFileSync(file, planted);
      const c = await load(1 << 20);
      try {
        expect(c.get(DIRS[0]!, NAMES[0]!, state(0, 0))).toBeDefined();
        expect(c.get(DIRS[2]!, NAMES[39]!, state(2, 39))).toBeUndefined();
      } finally {
        c.close();
      }
    } finally {
      fs.writeFileSync(file, good);
    }
  });

  it('a changed file is a miss; a forgotten directory serves nothing more', async () => {
    const c = await load(100);
    try {
      expect(c.get(DIRS[0]!, NAMES[3]!, { ...state(0, 3), size: 1 })).toBeUndefined();
      // looked up with the wrong state, the entry is stale: it is not kept, so the cache changed
      expect(c.get(DIRS[0]!, NAMES[3]!, state(0, 3))).toBeUndefined();
      c.forget(DIRS[1]!);
      expect(c.get(DIRS[1]!, NAMES[0]!, state(1, 0))).toBeUndefined();
      expect(c.get(DIRS[2]!, NAMES[5]!, state(2, 5))).toBeDefined();
      expect(c.changed).toBe(true);
    } finally {
      c.close();
    }
  });
});

describe('what a trace names beside its session (child workdirs, work ids)', () => {
  it('comes back from a saved cache exactly; a format-5 entry is a miss', async () => {
    const dir = fs.mkdtempSync(path.join(T, 'beside-'));
    fs.mkdirSync(path.join(dir, 'gc'), { mode: 0o700 });
    const st = state(7, 7);
    const s: TraceSummary = {
      ...summary(7, 2),
      workIds: ['wrk_0190f0f0f0f07000800000000000000a'],
      delegations: [
        { delegationId: 'del_1', childWorkdir: '.murmur/children/worker-0123456789abcdef', ended: true },
        { delegationId: 'del_2', childWorkdir: '../../x', ended: false },
      ],
    };
    const c = new MemoryTraceCache();
    c.set('/r/w/.murmur', NAMES[0]!, st, s);
    const home = await Dir.open(dir);
    try {
      await saveTraceCache(home, c);
      const back = await loadTraceCache(home);
      const got = back.get('/r/w/.murmur', NAMES[0]!, st);
      back.close();
      expect(got?.workIds).toEqual(s.workIds);
      expect(got?.delegations).toEqual(s.delegations);
      // an older cache (format 5, whose work carried its command) is never trusted: the trace is read again
      const file = path.join(dir, 'gc', 'trace-cache.json');
      const text = fs.readFileSync(file, 'utf8').replace('murmur-gc cache 6', 'murmur-gc cache 5');
      fs.writeFileSync(file, text);
      const old = await loadTraceCache(home);
      expect(old.get('/r/w/.murmur', NAMES[0]!, st)).toBeUndefined();
      old.close();
    } finally {
      await home.close();
    }
  });
});

describe('the cache never holds more than its caps, whatever the traces name', () => {
  const ctxIds = (n: number, tag: string) =>
    Array.from({ length: n }, (_, i) => `ctx_${tag}_${String(i).padStart(28, '0')}`);

  it('an entry over CACHE_ENTRY_CAP is not kept (that trace is read again); a smaller one is', () => {
    const c = new MemoryTraceCache();
    const st = state(8, 1);
    const big: TraceSummary = { ...summary(8, 1), contextIds: ctxIds(Math.ceil(CACHE_ENTRY_CAP / 36), 'b') };
    c.set('/r/big/.murmur', NAMES[0]!, st, big);
    expect(c.get('/r/big/.murmur', NAMES[0]!, st)).toBeUndefined();
    expect([...c.lines()]).toEqual([]);
    const fits: TraceSummary = { ...summary(8, 1), contextIds: ctxIds(Math.floor(CACHE_ENTRY_CAP / 80), 'f') };
    c.set('/r/big/.murmur', NAMES[1]!, st, fits);
    expect(c.get('/r/big/.murmur', NAMES[1]!, st)?.contextIds).toEqual(fits.contextIds);
    // an entry that grew past the cap replaces the one kept: neither is kept
    c.set('/r/big/.murmur', NAMES[1]!, st, big);
    expect([...c.lines()]).toEqual([]);
  });

  it(`the file is never written over CACHE_MAX_BYTES: the entries past it are left out`, async () => {
    const dir = fs.mkdtempSync(path.join(T, 'cap-'));
    fs.mkdirSync(path.join(dir, 'gc'), { mode: 0o700 });
    const c = new MemoryTraceCache();
    // 60 traces naming ~0.9 MiB of context ids each: ~54 MiB of entries
    const n = 60;
    for (let i = 0; i < n; i++)
      c.set('/r/many/.murmur', NAMES[i % NAMES.length]! + String(i), state(9, i), {
        ...summary(9, i),
        contextIds: ctxIds(24_000, String(i)),
      });
    const home = await Dir.open(dir);
    try {
      await saveTraceCache(home, c);
      const size = fs.statSync(path.join(dir, 'gc', 'trace-cache.json')).size;
      expect(size).toBeLessThanOrEqual(CACHE_MAX_BYTES);
      expect(size).toBeGreaterThan(CACHE_MAX_BYTES - 2 * CACHE_ENTRY_CAP);
      const back = await loadTraceCache(home);
      let served = 0;
      for (let i = 0; i < n; i++)
        if (back.get('/r/many/.murmur', NAMES[i % NAMES.length]! + String(i), state(9, i))) served++;
      back.close();
      expect(served).toBeGreaterThan(40);
      expect(served).toBeLessThan(n);
    } finally {
      await home.close();
    }
  }, 60_000);
});
