// The keep_free reserve file: real blocks, whole or absent, never followed through a link.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RESERVE_BYTES, createReserve, fitsReserve, releaseReserve, releasesReserve, reserveBytes } from '../../src/gchome/reserve.js';
import { Dir } from '../../src/fsx/safe-fs.js';
import { rmrf, tempDir } from '../helpers/fixtures.js';

let T: string;
let gc: Dir;
beforeEach(async () => {
  T = tempDir('reserve');
  gc = await Dir.open(T);
});
afterEach(async () => {
  await gc.close();
  rmrf(T);
});

const allocated = (p: string) => Number(fs.statSync(p, { bigint: true }).blocks) * 512;

describe('the keep_free reserve', () => {
  it('is written with real blocks (not sparse), replacing the temp of a killed creation; released whole', async () => {
    fs.writeFileSync(path.join(T, '.reserve.tmp'), Buffer.alloc(5000, 1));
    expect(await createReserve(gc)).toBe(true);
    expect(allocated(path.join(T, '.reserve'))).toBe(RESERVE_BYTES);
    expect(fs.readdirSync(T)).toEqual(['.reserve']);
    expect(await reserveBytes(gc)).toBe(RESERVE_BYTES);
    expect(await releaseReserve(gc)).toBe(RESERVE_BYTES);
    expect(fs.readdirSync(T)).toEqual([]);
    expect(await releaseReserve(gc)).toBe(0);
  });

  it('a symlink at its name is no reserve: neither followed nor removed', async () => {
    fs.writeFileSync(path.join(T, 'target'), Buffer.alloc(RESERVE_BYTES, 1));
    fs.symlinkSync(path.join(T, 'target'), path.join(T, '.reserve'));
    expect(await reserveBytes(gc)).toBe(0);
    expect(await releaseReserve(gc)).toBe(0);
    expect(fs.lstatSync(path.join(T, '.reserve')).isSymbolicLink()).toBe(true);
    expect(fs.statSync(path.join(T, 'target')).size).toBe(RESERVE_BYTES);
  });

  it('is released below its own size free, and put back only with room for it beyond keep_free', () => {
    expect(releasesReserve(0)).toBe(true);
    expect(releasesReserve(RESERVE_BYTES - 1)).toBe(true);
    expect(releasesReserve(RESERVE_BYTES)).toBe(false);
    expect(fitsReserve(10 + RESERVE_BYTES, 10)).toBe(true);
    expect(fitsReserve(10 + RESERVE_BYTES - 1, 10)).toBe(false);
  });
});
