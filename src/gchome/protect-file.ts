// Reading and writing the protection list `<home>/gc/protected.json` (format: src/gchome/protect-list.ts).
// Guarantees:
// - Read through descriptors, never following a link, never opening a FIFO, socket or device, and
//   never reading more than PROTECT_LIMIT bytes: a missing file is an empty list; anything else
//   that is not a protection list (garbage, empty, too big, not a regular file, unreadable) is
//   `unreadable` with a detail naming the path — never an exception, never a hang.
// - Written atomically (exclusive temp 0600, fsync, rename, directory fsync) into `<home>/gc`,
//   created 0700 when missing. Callers serialise writers with the sweep lock.
// - Each change is audited: one murmur-gc audit trace with one `protection` line.
// - What a restore completed by recovery put back is protected before anything can plan on it.
import { resolve } from 'node:path';
import { GC_DIR_NAME } from './paths.js';
import { Dir, readSmallFile } from '../fsx/safe-fs.js';
import { codeOf, describeError, errnoCode } from '../errors.js';
import type { Logger } from '../log.js';
import { mintId } from '../runtime/ids.js';
import { VERSION } from '../version.js';
import { AuditSession, type ProtectionChange, type RestoredItem } from './audit.js';
import {
  PROTECT_FILE,
  PROTECT_LIMIT,
  PROTECT_VERSION,
  parseProtected,
  protectedText,
  sameItem,
  type ProtectedItem,
  type ProtectedKind,
} from './protect-list.js';

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
  await using _ = gc;
  try {
    if (!(await gc.lstat(PROTECT_FILE))) return { status: 'ok', items: [] };
    const raw = await readSmallFile(gc, PROTECT_FILE, PROTECT_LIMIT);
    const items = parseProtected(raw.toString('utf8'));
    if (!items)
      return {
        status: 'unreadable',
        detail: `${path} is not a murmur-gc protection list (version ${PROTECT_VERSION})`,
      };
    return { status: 'ok', items };
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return { status: 'ok', items: [] };
    return { status: 'unreadable', detail: `${path}: ${describeError(err)}` };
  }
}

/** Replace the protection list atomically. */
export async function writeProtection(home: Dir, items: ProtectedItem[]): Promise<void> {
  await using gc = await home.mkdir(GC_DIR_NAME, 0o700);
  await gc.writeFileAtomic(PROTECT_FILE, protectedText(items), 0o600);
}

/** One murmur-gc audit trace holding one `protection` line; returns its id. */
export async function auditProtection(home: Dir, now: () => number, change: ProtectionChange): Promise<string> {
  const id = mintId('ses_');
  const a = await AuditSession.begin(home, id, VERSION, now());
  await a.finish([], [], 'ok', now(), { protection: [change] });
  return id;
}

/**
 * What an interrupted restore put back (completed by recovery: the sweep's recover step, or a
 * retried restore) is protected as the restore itself would have done, before anything can plan
 * on it; an item already on the list is left as it is. Runs under the sweep lock. Never throws:
 * a list that cannot be read or written is logged (`protected_unreadable` already makes every
 * sweep count every item as protected).
 */
export async function protectRecovered(
  home: Dir,
  log: Logger,
  restored: readonly RestoredItem[],
  now: () => number,
): Promise<number> {
  if (restored.length === 0) return 0;
  const failed = (code: string | undefined, detail: string): number => {
    log.warn({ code }, `an interrupted restore was completed, but what it put back could not be protected: ${detail}`);
    return 0;
  };
  try {
    const read = await readProtection(home);
    if (read.status === 'unreadable') return failed('protected_unreadable', `${read.detail}; it was not changed`);
    const items = read.items;
    const add: ProtectedItem[] = [];
    for (const r of restored) {
      const kind: ProtectedKind = r.store === 'sessions' ? 'session' : 'context';
      const item: ProtectedItem = {
        kind,
        target: r.target,
        where: kind === 'session' ? resolve(r.origin) : r.origin,
        since_ms: now(),
        by: 'restore',
      };
      if (![...items, ...add].some((i) => sameItem(i, item))) add.push(item);
    }
    if (add.length === 0) return 0;
    await writeProtection(home, [...items, ...add]);
    for (const i of add) {
      log.info({ target: i.target, origin: i.where, by: i.by }, 'protected (a restore completed by recovery)');
      await auditProtection(home, now, {
        change: 'protect',
        store: i.kind === 'session' ? 'sessions' : 'records',
        target: i.target,
        origin: i.where,
        by: i.by,
      });
    }
    return add.length;
  } catch (err) {
    return failed(codeOf(err), describeError(err));
  }
}
