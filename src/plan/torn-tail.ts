// Which records a sweep repairs by terminating their torn last line, pure (docs/design.md §4).
// Guarantees: only a record a policy covers (its header names the policy's capsule and the policy
// has a retain block), that is readable by the runtime (valid UTF-8), known to end with a torn
// line (read whole this sweep or cached from an identical file), idle for at least live_grace,
// not named by a live session, and not already removed or truncated by this sweep (truncation
// terminates a kept torn tail itself). Whether a writer holds it open is checked when acting.
import type { RecordRetain } from '../config/types.js';
import type { RecordHeader } from '../runtime/record.js';

export interface TornTailInput {
  context: string;
  header: RecordHeader | undefined;
  mtimeMs: number;
  /** false: ends with a torn line; undefined: not known (never repaired). */
  terminated: boolean | undefined;
  unreadable: boolean;
}

export function planTornTails(
  contexts: readonly TornTailInput[],
  capsule: string,
  retain: RecordRetain | undefined,
  liveContexts: ReadonlySet<string>,
  alreadyActedOn: ReadonlySet<string>,
  nowMs: number,
  liveGraceMs: number,
): string[] {
  if (!retain || (retain.maxAgeSecs === undefined && retain.maxMessages === undefined)) return [];
  return contexts
    .filter(
      (c) =>
        c.terminated === false &&
        !c.unreadable &&
        c.header?.capsule === capsule &&
        nowMs - c.mtimeMs >= liveGraceMs &&
        !liveContexts.has(c.context) &&
        !alreadyActedOn.has(c.context),
    )
    .map((c) => c.context)
    .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
}
