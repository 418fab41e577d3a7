// Session names minted in the future, pure. Guarantees: a name counts when its id time (the
// runtime's rule, src/runtime/ids.ts) is more than FUTURE_TOLERANCE_MS after `nowMs`; the newest
// such name is the one that ranks first for `max_sessions` (names ranked by their UTF-8 bytes,
// as the planner ranks them). Ranking is left alone: such names outrank real sessions in the
// runtime too; this only lets the sweep say so.
import { idTimestampMs } from '../runtime/ids.js';
import { compareUtf8 } from '../runtime/conversation-format.js';

/** A clock corrected backwards by up to a day does not make the sessions it minted "future". */
export const FUTURE_TOLERANCE_MS = 86_400_000;

export interface FutureSessions {
  count: number;
  /** The future-dated name that ranks first (undefined when count is 0). */
  newest: string | undefined;
  newestMs: number;
}

export function futureSessions(names: Iterable<string>, nowMs: number): FutureSessions {
  const out: FutureSessions = { count: 0, newest: undefined, newestMs: 0 };
  for (const name of names) {
    const ms = idTimestampMs(name, 'ses_');
    if (ms === undefined || ms <= nowMs + FUTURE_TOLERANCE_MS) continue;
    out.count++;
    if (out.newest === undefined || compareUtf8(name, out.newest) > 0) {
      out.newest = name;
      out.newestMs = ms;
    }
  }
  return out;
}
