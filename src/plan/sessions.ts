// Session pruning plan for one sessions root, pure (docs/design.md §R3, §2).
// Guarantees:
// - No policy (or a policy with no keys) condemns nothing.
// - Candidates are exactly the runtime's: names ranked newest-first over every session present
//   (live ones included, they keep their rank); over_age from the id's uuid-v7 time, never mtime;
//   over_count = rank >= max_sessions; both keys ANDed by construction (a session survives only
//   inside both); reason `max_age` when over age, else `max_sessions`.
// - A session at or after `floorId` (the running gc audit session, for <home>/gc) is never a candidate.
// - A protected session (the protection list, src/gchome/protect-list.ts) is never removed: it is
//   reported as skipped with `protected`, once, whatever condemns it. It keeps its rank (the
//   runtime counts it: it is present), so protecting a session never condemns another one.
// - A live session is never removed: it is reported as skipped with `live_session`.
// - Names are ranked and compared by their UTF-8 bytes, as Rust orders `String`s (not by UTF-16
//   code units, which order some non-ASCII names differently).
import type { SessionRetain } from '../config/types.js';
import { idTimestampMs } from '../runtime/ids.js';
import { compareUtf8 } from '../runtime/conversation-format.js';
import type { Liveness } from './liveness.js';

export interface SessionCandidateInput {
  name: string;
  liveness: Liveness;
  livenessWhy: string;
}

export interface SessionRemoval {
  name: string;
  reason: 'max_age' | 'max_sessions';
}

export interface SessionSkip {
  name: string;
  reason: 'max_age' | 'max_sessions';
  code: 'live_session' | 'protected';
  detail: string;
}

export interface SessionsPlan {
  remove: SessionRemoval[];
  skip: SessionSkip[];
}

export function planSessions(
  sessions: SessionCandidateInput[],
  retain: SessionRetain | undefined,
  nowMs: number,
  floorId?: string,
  isProtected: (name: string) => boolean = () => false,
): SessionsPlan {
  const plan: SessionsPlan = { remove: [], skip: [] };
  if (!retain || (retain.maxSessions === undefined && retain.maxAgeSecs === undefined)) return plan;
  // A copy of the list, sorted by the names themselves (compareUtf8): nothing made per session.
  const ranked = sessions
    .filter((s) => idTimestampMs(s.name, 'ses_') !== undefined)
    .sort((a, b) => compareUtf8(b.name, a.name));
  const ageFloor = retain.maxAgeSecs === undefined ? undefined : Math.max(0, nowMs - retain.maxAgeSecs * 1000);
  ranked.forEach((s, rank) => {
    if (floorId !== undefined && compareUtf8(s.name, floorId) >= 0) return;
    const minted = idTimestampMs(s.name, 'ses_') ?? 0;
    const overAge = ageFloor !== undefined && minted < ageFloor;
    const overCount = retain.maxSessions !== undefined && rank >= retain.maxSessions;
    if (!overAge && !overCount) return;
    const reason = overAge ? 'max_age' : 'max_sessions';
    if (isProtected(s.name)) {
      plan.skip.push({
        name: s.name,
        reason,
        code: 'protected',
        detail: `${s.name} is protected (murmur-gc protection ls; murmur-gc release lets the policy act on it); kept although ${reason} condemns it`,
      });
      return;
    }
    if (s.liveness === 'live') {
      plan.skip.push({
        name: s.name,
        reason,
        code: 'live_session',
        detail: `${s.name} is live (${s.livenessWhy}); kept although ${reason} condemns it`,
      });
      return;
    }
    plan.remove.push({ name: s.name, reason });
  });
  return plan;
}
