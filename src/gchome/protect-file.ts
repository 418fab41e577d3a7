// Reading and writing the protection list `<home>/gc/protected.json` (format: src/gchome/protect-list.ts).
// Guarantees:
// - Read through descriptors, never following a link, never opening a FIFO, socket or device, and
//   never reading more than PROTECT_LIMIT bytes: a missing file is an empty list; anything else
//   that is not a protection list (garbage, empty, too big, not a regular file, unreadable) is
//   `unreadable` with a detail naming the path — never an exception, never a hang.
// - Written atomically (exclusive temp 0600, fsync, rename, directory fsync) into `<home>/gc`,
//   created 0700 when missing. Callers serialise writers with the sweep lock.
import { GC_DIR_NAME } from './paths.js';
import { Dir, readSmallFile } from '../fsx/safe-fs.js';
import { describeError, errnoCode } from '../errors.js';
import { PROTECT_FILE, PROTECT_LIMIT, PROTECT_VERSION, parseProtected, protectedText, type ProtectedItem } from './protect-list.js';

export type ProtectionRead = { status: 'ok'; items: ProtectedItem[] } | { status: 'unreadable'; detail: string };

export function protectionPath(home: string): string {
  return `${home}/${GC_DIR_NAME}/${PROTECT_FILE}`;
}

/** The protection list under the home open as `home` (read-only; creates nothing). */
export async function readProtection(home: Dir): Promise<ProtectionRead> {
  const path = protectionPath(home.path);
  let gc: Dir;
  try {
    const st = await home.lstat(GC_DIR_NAME);
    if (!st) return { status: 'ok', items: [] };
    gc = await home.openDir(GC_DIR_NAME);
  } catch (err) {
    return { status: 'unreadable', detail: `${home.path}/${GC_DIR_NAME}: ${describeError(err)}` };
  }
  try {
    if (!(await gc.lstat(PROTECT_FILE))) return { status: 'ok', items: [] };
    const raw = await readSmallFile(gc, PROTECT_FILE, PROTECT_LIMIT);
    const items = parseProtected(raw.toString('utf8'));
    if (!items) return { status: 'unreadable', detail: `${path} is not a murmur-gc protection list (version ${PROTECT_VERSION})` };
    return { status: 'ok', items };
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return { status: 'ok', items: [] };
    return { status: 'unreadable', detail: `${path}: ${describeError(err)}` };
  } finally {
    await gc.close();
  }
}

/** Replace the protection list atomically. */
export async function writeProtection(home: Dir, items: ProtectedItem[]): Promise<void> {
  const gc = await home.mkdir(GC_DIR_NAME, 0o700);
  try {
    await gc.writeFileAtomic(PROTECT_FILE, protectedText(items), 0o600);
  } finally {
    await gc.close();
  }
}
