// Names murmur-gc gives the entries it leaves inside the runtime's own directories, and what
// they say. Pure. The scanner (src/runtime/inventory.ts) recognises them so that none is ever
// taken for a runtime entry: the runtime ranks `ses_` names only, and so does the planner.
// - A session held in the undo window stays in its sessions root as
//   `.murmur-gc-quarantine.<until_ms>.<ses_id>` (the undo window, docs/config.md): one rename away.
// - A directory a removal could not finish is set aside as `.murmur-gc-kept.<run>.<name>`
//   (src/fsx/remove.ts `KEPT_PREFIX`); the run id's time says since when.
import { idTimestampMs, isSessionName } from './ids.js';
import { KEPT_PREFIX } from '../fsx/remove.js';
import type { BigIntStats } from '../fsx/safe-fs.js';

export const SESSION_QUARANTINE_PREFIX = '.murmur-gc-quarantine.';

/** `.murmur-gc-quarantine.<until_ms>.<ses_id>` */
export function sessionQuarantineName(untilMs: number, session: string): string {
  return `${SESSION_QUARANTINE_PREFIX}${untilMs}.${session}`;
}

export function parseSessionQuarantineName(name: string): { untilMs: number; session: string } | undefined {
  if (!name.startsWith(SESSION_QUARANTINE_PREFIX)) return undefined;
  const m = /^([0-9]{1,16})\.(.+)$/.exec(name.slice(SESSION_QUARANTINE_PREFIX.length));
  if (!m || !isSessionName(m[2]!)) return undefined;
  const untilMs = Number(m[1]);
  return Number.isSafeInteger(untilMs) ? { untilMs, session: m[2]! } : undefined;
}

/** When `.murmur-gc-kept.<run>.<name>` was set aside: the run's id time, else the entry's mtime. */
export function keptSinceMs(name: string, st: BigIntStats): number {
  const run = name.startsWith(KEPT_PREFIX) ? name.slice(KEPT_PREFIX.length).split('.')[0] : undefined;
  const fromId = run !== undefined ? idTimestampMs(run, 'ses_') : undefined;
  return fromId ?? Number(st.mtimeMs);
}
