// `murmur-gc protection ls` (and the protection part of `status`): the protection list as it is
// now, read-only (format: src/gchome/protect-list.ts; docs/protect.md).
// Guarantees: reads the list and stats each item's path; never writes, never takes the sweep
// lock, so it loads none of the writers (src/commands/protect.ts changes the list). An unreadable
// list is reported (`unreadable`, naming the file), never guessed.
import type { GcConfig } from '../config/types.js';
import { describeError } from '../errors.js';
import { CONVERSATIONS_DIR } from '../runtime/inventory.js';
import { protectionPath, readProtection } from '../gchome/protect-file.js';
import { Dir, lstatPath } from '../fsx/safe-fs.js';
import type { ProtectedItem } from '../gchome/protect-list.js';
import type { ProtectionListing } from '../schema/json-schemas.js';

/** The list as `protection ls` tells it: its schema's (src/schema/json-schemas.ts). */
export type { ProtectionListing };

export async function openHome(config: GcConfig): Promise<Dir | undefined> {
  if (!(await lstatPath(config.home))) return undefined;
  return Dir.open(config.home, { followFinal: true });
}

export async function exists(path: string): Promise<boolean> {
  return (await lstatPath(path).catch(() => undefined)) !== undefined;
}

export function itemPath(config: GcConfig, i: Pick<ProtectedItem, 'kind' | 'target' | 'where'>): string {
  return i.kind === 'session' ? `${i.where}/${i.target}` : `${config.home}/${CONVERSATIONS_DIR}/${i.where}/${i.target}`;
}

/** Everything on the protection list, and whether each item is present now. Read-only. */
export async function listProtection(config: GcConfig): Promise<ProtectionListing> {
  const out: ProtectionListing = { home: config.home, file: protectionPath(config.home), unreadable: null, items: [] };
  await using home = await openHome(config).catch((err: unknown) => {
    out.unreadable = `${config.home}: ${describeError(err)}`;
    return undefined;
  });
  if (!home) return out;
  const read = await readProtection(home);
  if (read.status === 'unreadable') {
    out.unreadable = read.detail;
    return out;
  }
  for (const i of read.items) out.items.push({ ...i, present: await exists(itemPath(config, i)) });
  return out;
}
