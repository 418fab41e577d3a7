// The keep_free reserve file: real blocks, whole or absent, never followed through a link.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  RESERVE_BYTES,
  RESERVE_INODES,
  RESERVE_INODES_ROOM,
  createInodeReserve,
  createReserve,
  fitsInodes,
  fitsReserve,
  releaseInodes,
  releaseReserve,
  releasesInodes,
  releasesReserve,
  reserveBytes,
  reserveInodes,
} from '../../src/gchome/reserve.js';
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

  it('is released below its own size free, and put back once it leaves its own size free (so the next sweep keeps it)', () => {
    expect(releasesReserve(0)).toBe(true);
    expect(releasesReserve(RESERVE_BYTES - 1)).toBe(true);
    expect(releasesReserve(RESERVE_BYTES)).toBe(false);
    expect(fitsReserve(2 * RESERVE_BYTES)).toBe(true);
    expect(fitsReserve(2 * RESERVE_BYTES - 1)).toBe(false);
    // put back at the least free space it may be, the next sweep does not release it
    expect(releasesReserve(2 * RESERVE_BYTES - RESERVE_BYTES)).toBe(false);
  });
});

describe('the reserve of inodes', () => {
  const dir = () => path.join(T, '.reserve-inodes');
  it('is a directory of empty files, created whole (a killed creation replaced), released whole', async () => {
    fs.mkdirSync(path.join(T, '.reserve-inodes.tmp'));
    fs.writeFileSync(path.join(T, '.reserve-inodes.tmp', 'i00'), '');
    expect(await createInodeReserve(gc)).toBe(true);
    expect(fs.readdirSync(T)).toEqual(['.reserve-inodes']);
    expect(fs.readdirSync(dir())).toHaveLength(RESERVE_INODES);
    expect(await reserveInodes(gc)).toBe(RESERVE_INODES_ROOM);
    expect(await createInodeReserve(gc)).toBe(true); // in place: nothing done
    expect(await releaseInodes(gc)).toBe(RESERVE_INODES_ROOM);
    expect(fs.readdirSync(T)).toEqual([]);
    expect(await releaseInodes(gc)).toBe(0);
  });

  it('one a killed release left short counts as missing and is made whole again', async () => {
    expect(await createInodeReserve(gc)).toBe(true);
    for (const n of fs.readdirSync(dir()).slice(0, 10)) fs.unlinkSync(path.join(dir(), n));
    expect(await reserveInodes(gc)).toBe(RESERVE_INODES_ROOM - 10);
    expect(await createInodeReserve(gc)).toBe(true);
    expect(await reserveInodes(gc)).toBe(RESERVE_INODES_ROOM);
  });

  it('anything else at its names is no reserve: never emptied, never followed', async () => {
    fs.mkdirSync(dir());
    fs.writeFileSync(path.join(dir(), 'i00'), 'data');
    fs.writeFileSync(path.join(dir(), 'notes'), '');
    expect(await reserveInodes(gc)).toBe(0);
    expect(await releaseInodes(gc)).toBe(0);
    expect(fs.readdirSync(dir()).sort()).toEqual(['i00', 'notes']);
    fs.rmSync(dir(), { recursive: true });
    fs.mkdirSync(path.join(T, 'elsewhere'));
    fs.symlinkSync(path.join(T, 'elsewhere'), dir());
    expect(await reserveInodes(gc)).toBe(0);
    expect(await releaseInodes(gc)).toBe(0);
    fs.symlinkSync(path.join(T, 'elsewhere'), path.join(T, '.reserve-inodes.tmp'));
    fs.unlinkSync(dir());
    expect(await createInodeReserve(gc)).toBe(false); // a temp that is not ours is left alone
    expect(fs.readdirSync(path.join(T, 'elsewhere'))).toEqual([]);
  });

  it('is released when fewer inodes than it holds are free, and put back with as many again to spare', () => {
    expect(releasesInodes(RESERVE_INODES - 1)).toBe(true);
    expect(releasesInodes(RESERVE_INODES)).toBe(false);
    expect(fitsInodes(2 * RESERVE_INODES_ROOM)).toBe(true);
    expect(fitsInodes(2 * RESERVE_INODES_ROOM - 1)).toBe(false);
    expect(releasesInodes(2 * RESERVE_INODES_ROOM - RESERVE_INODES_ROOM)).toBe(false);
  });
});
