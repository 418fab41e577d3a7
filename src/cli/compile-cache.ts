// Node's module compile cache (Node >= 22.1: `module.enableCompileCache`) for the CLI's own code:
// the V8 code of the bundled chunks is kept on disk, so a later run does not compile them again
// (docs/benchmarks.md, "Start-up").
// Guarantees:
// - It never makes a run fail: any error, an older Node (20 has no such API), no uid, or a
//   directory that is not safe to use just leaves the cache off.
// - Per user, never shared: the cache lives in <tmpdir>/murmur-gc-compile-cache-<uid>, created
//   0700; it is used only when lstat shows a real directory (not a link) owned by this uid that no
//   one else can write or read. A directory planted there by another user is not used, so code
//   another user wrote is never loaded.
// - NODE_COMPILE_CACHE (the user's own directory) and NODE_DISABLE_COMPILE_CACHE=1 keep their
//   Node meaning: with the first Node has already enabled the cache there; with the second it
//   stays off and no directory is created.
import { lstatSync, mkdirSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

type Enable = (dir?: string) => { status: number; directory?: string; message?: string };

/** The per-user cache directory for `uid` under `tmp`. */
export function compileCacheDir(uid: number, tmp: string = tmpdir()): string {
  return join(tmp, `murmur-gc-compile-cache-${uid}`);
}

/**
 * `dir` is a directory this uid may trust: created now (0700) or already there, not a link,
 * owned by `uid`, with no group or other permission bits.
 */
export function safeCacheDir(dir: string, uid: number): boolean {
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return false;
  }
  const st = lstatSync(dir);
  return st.isDirectory() && st.uid === uid && (st.mode & 0o077) === 0;
}

/** Turns the compile cache on where it is available and safe; the directory used, if any. */
export function enableCompileCache(env: NodeJS.ProcessEnv = process.env): string | undefined {
  try {
    const enable = (nodeModule as { enableCompileCache?: Enable }).enableCompileCache;
    const uid = process.getuid?.();
    if (typeof enable !== 'function' || uid === undefined || (env['NODE_DISABLE_COMPILE_CACHE'] ?? '') !== '')
      return undefined;
    if ((env['NODE_COMPILE_CACHE'] ?? '') !== '') return enable().directory;
    const dir = compileCacheDir(uid);
    return safeCacheDir(dir, uid) ? enable(dir).directory : undefined;
  } catch {
    return undefined;
  }
}
