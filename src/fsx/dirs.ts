// Small directory helpers over descriptors (opening a chain of names, the home).
// Guarantees: every open goes through a descriptor (Dir), one component at a time, so a symlink
// swapped in along a chain is refused rather than followed.
import { dirname } from 'node:path';
import { Codes, GcError } from '../errors.js';
import { Dir, lstatPath } from './safe-fs.js';

export async function anyExists(paths: string[]): Promise<boolean> {
  for (const p of paths) if (await lstatPath(p)) return true;
  return false;
}

export async function openOrCreateHome(home: string, exists: boolean): Promise<Dir> {
  if (exists) return Dir.open(home, { followFinal: true });
  await using parent = await Dir.open(dirname(home), { followFinal: true });
  const name = home.slice(dirname(home).length + 1);
  return await parent.mkdir(name, 0o700);
}

/** Opens anchor/chain[0]/chain[1]/… one component at a time; the caller closes the result. */
export async function openChain(anchor: Dir, chain: string[]): Promise<Dir> {
  let cur = anchor;
  let owned = false;
  for (const name of chain) {
    const next = await cur.openDir(name);
    if (owned) await cur.close();
    cur = next;
    owned = true;
  }
  if (!owned) throw new GcError(Codes.ioError, 'empty path chain');
  return cur;
}

/** `path` open as a directory when it exists and can be opened (its final link followed only when asked), else undefined. */
export async function openAnchor(path: string, followFinal: boolean): Promise<Dir | undefined> {
  if (!(await lstatPath(path))) return undefined;
  try {
    return await Dir.open(path, { followFinal });
  } catch {
    return undefined;
  }
}
