// Which directory murmur-gc accepts as the murmur home (`home:`, `--home`; docs/config.md
// "The home: what murmur-gc accepts").
// Guarantees:
// - A home is refused when it is a system path — `/`; each of SYSTEM_TOP directly under `/`; any
//   directory directly inside one of SYSTEM_PARENTS (`/usr/lib`, `/var/tmp`, `/etc/ssh`,
//   `/home/bob`, `/run/user/1000`…); anything inside `/proc`, `/sys` or `/dev`; the user's $HOME
//   itself and each of its ancestors — judged on the path as configured and on the path the
//   kernel has for the opened directory (a link to `/etc` is `/etc`).
// - An existing home is refused unless it is recognisably a murmur home: one of HOME_MARKERS in it
//   as a directory (lstat: a link does not count), or nothing in it at all (a fresh home, e.g. the
//   empty `~/.murmur` the shipped service unit creates before the daemon starts). A home that does
//   not exist is judged on its path only: nothing is made there until the runtime (or a sweep
//   with a configured root that exists) creates it.
// - `force` (`--force-home`, `force_home: true`) lifts both; the caller says so (a warning).
// - `judgeHomeDir` reads only through the open descriptor, synchronously (a listing and lstats),
//   so the sweep can judge the very directory it is about to change, at the moment of action.
import * as path from 'node:path';
import { errnoCode } from '../errors.js';
import { Dir } from '../fsx/safe-fs.js';

/** Entries only a murmur home has (the runtime's stores, murmur-gc's own gc/). */
export const HOME_MARKERS = ['conversations', 'running', 'state', 'spend', 'compiled', 'formations', 'gc'] as const;

/** Directories directly under `/` that are the system's, never a murmur home. */
export const SYSTEM_TOP = [
  'bin',
  'boot',
  'dev',
  'etc',
  'home',
  'lib',
  'lib32',
  'lib64',
  'libx32',
  'lost+found',
  'media',
  'mnt',
  'opt',
  'proc',
  'root',
  'run',
  'sbin',
  'snap',
  'srv',
  'sys',
  'tmp',
  'usr',
  'var',
] as const;

/** Directories whose direct entries are the system's (or other users' homes, or mount points). */
export const SYSTEM_PARENTS = [
  '/usr',
  '/usr/local',
  '/var',
  '/etc',
  '/run',
  '/run/user',
  '/home',
  '/mnt',
  '/media',
] as const;

/** Everything inside these is a kernel filesystem. */
const KERNEL_TREES = ['/proc', '/sys', '/dev'];

/** Why `p` (absolute) is a system path, or undefined. `userHomes`: $HOME as set, and its real path. */
export function systemPathReason(p: string, userHomes: readonly string[]): string | undefined {
  const at = path.resolve(p);
  if (at === '/') return 'is the root directory';
  for (const u of userHomes) {
    const home = path.resolve(u);
    if (at === home) return 'is your home directory ($HOME) itself';
    if (home.startsWith(`${at}/`)) return 'holds your home directory ($HOME)';
  }
  if (KERNEL_TREES.some((k) => at === k || at.startsWith(`${k}/`))) return 'is inside a kernel filesystem';
  const parent = path.dirname(at);
  if (parent === '/' && (SYSTEM_TOP as readonly string[]).includes(path.basename(at))) return 'is a system directory';
  if ((SYSTEM_PARENTS as readonly string[]).includes(parent)) return `is a system directory (directly in ${parent})`;
  return undefined;
}

/** What a home's entries say: recognised (a marker, or empty), or why not. */
function recognition(dir: Dir): string | undefined {
  let entries: string[];
  try {
    entries = dir.listSync();
  } catch (err) {
    // Not listable by its owner (its mode): nothing can be swept there either, and the command
    // that reads it says so; there is nothing to judge.
    if (errnoCode(err) === 'EACCES') return undefined;
    throw err;
  }
  if (entries.length === 0) return undefined;
  for (const m of HOME_MARKERS) if (entries.includes(m) && dir.lstatSync(m)?.isDirectory()) return undefined;
  return `is not a murmur home: it holds ${entries.length} ${entries.length === 1 ? 'entry' : 'entries'} and none of ${HOME_MARKERS.map((m) => `${m}/`).join(', ')}`;
}

/**
 * Why the open directory `dir` (the home, as `configured`) may not be the murmur home, or
 * undefined when it may (see the header). Synchronous, through the descriptor only.
 */
export function judgeHomeDir(dir: Dir, configured: string, userHomes: readonly string[]): string | undefined {
  const lexical = systemPathReason(configured, userHomes);
  if (lexical) return lexical;
  let real: string | undefined;
  try {
    real = dir.realPathSync();
  } catch {
    real = undefined;
  }
  if (real !== undefined && real !== path.resolve(configured)) {
    const why = systemPathReason(real, userHomes);
    if (why) return `resolves to ${real}, which ${why}`;
  }
  return recognition(dir);
}

/**
 * Why `home` may not be the murmur home, or undefined when it may (or does not exist and its path
 * is no system path). The directory is opened as the sweep opens it (its final link followed).
 */
export async function judgeHome(home: string, userHomes: readonly string[]): Promise<string | undefined> {
  let dir: Dir;
  try {
    dir = await Dir.open(home, { followFinal: true });
  } catch (err) {
    const code = errnoCode(err);
    // Missing (or not a directory, which the commands report themselves): the path alone.
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EACCES') return systemPathReason(home, userHomes);
    throw err;
  }
  await using _ = dir;
  return judgeHomeDir(dir, home, userHomes);
}

/** The message of a refused home, naming how to point elsewhere or force it. */
export function refusedHomeMessage(home: string, why: string, key: 'home' | '--home'): string {
  const fix = key === '--home' ? 'point --home at the murmur home' : 'point home: at the murmur home';
  return `'${home}' ${why}: murmur-gc would make it private and create gc/ in it, so it is not used; ${fix} (default ~/.murmur), or, if this really is one, pass --force-home (or set force_home: true)`;
}
