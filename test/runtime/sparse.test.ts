// Which files a scan reads (src/runtime/jsonl.ts sparseFileError, docs/limits.md "Sparse files"):
// a trace or record more than 16 times larger than what it holds on disk (one 4 KiB block at least)
// is not read, at any size — unless it was written in the last minute and the recent-write
// allowance (256 MiB a minute) covers it, as a filesystem may not have counted its blocks yet.
import { describe, expect, it } from 'vitest';
import { RECENT_SPARSE_BYTES_PER_MIN, SparseAllowance, sparseFileError } from '../../src/runtime/jsonl.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;
const NOW = 1_800_000_000_000;
const OLD = NOW - 3600_000;
const st = (size: number, allocated: number, mtimeMs = OLD) => ({
  size: BigInt(size),
  blocks: BigInt(Math.ceil(allocated / 512)),
  mtimeMs: BigInt(mtimeMs),
});
const read = (s: ReturnType<typeof st>, allowance = new SparseAllowance()) =>
  sparseFileError(s, NOW, allowance) === undefined;

describe('sparse files', () => {
  it('a file up to 16 blocks with nothing allocated is read (a small file is never judged by its blocks)', () => {
    expect(read(st(60, 0))).toBe(true); // inline data: no block at all
    expect(read(st(64 * KiB, 0))).toBe(true);
    expect(read(st(64 * KiB + 1, 0))).toBe(false);
  });

  it('below 64 MiB too: 64 MiB − 4 KiB with nothing allocated is not read', () => {
    const e = sparseFileError(st(64 * MiB - 4 * KiB, 0), NOW, new SparseAllowance());
    expect(e?.code).toBe('sparse_file');
    expect(e?.message).toContain(`${64 * MiB - 4 * KiB} bytes of which 0 are allocated`);
  });

  it('at 1 in 16 allocated a file is read, under it not: 20 GiB at 5 % is not read', () => {
    expect(read(st(20 * GiB, 0.05 * 20 * GiB))).toBe(false);
    expect(read(st(20 * GiB, 0.07 * 20 * GiB))).toBe(true);
    expect(read(st(16 * GiB, 1 * GiB))).toBe(true);
    expect(read(st(16 * GiB, 1 * GiB - 512))).toBe(false);
  });

  it('a file written in the last minute that looks sparse is read while the allowance lasts, and again once it refilled', () => {
    let clock = 0;
    const allowance = new SparseAllowance(RECENT_SPARSE_BYTES_PER_MIN, () => clock);
    const fresh = st(64 * MiB - 4 * KiB, 0, NOW - 5_000);
    const got = Array.from({ length: 5 }, () => read(fresh, allowance));
    expect(got).toEqual([true, true, true, true, false]);
    // an old one never takes from it
    expect(read(st(64 * MiB - 4 * KiB, 0), allowance)).toBe(false);
    expect(sparseFileError(fresh, NOW, allowance)?.message).toContain('written in the last minute');
    clock += 30_000; // half a minute: half the allowance back
    expect([read(fresh, allowance), read(fresh, allowance), read(fresh, allowance)]).toEqual([true, true, false]);
    // a future mtime (planted) counts as recent: it takes from the same allowance
    clock += 60_000;
    expect(read(st(200 * MiB, 0, NOW + 365 * 86_400_000), allowance)).toBe(true);
    expect(read(st(100 * MiB, 0, NOW + 365 * 86_400_000), allowance)).toBe(false);
  });
});
