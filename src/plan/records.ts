// Conversation record plan for one record policy, pure (docs/design.md §R4, §R5, §1, §2).
// Guarantees:
// - Only records whose header names the policy's capsule are ever planned: headerless
//   (unowned) and foreign records are never touched automatically.
// - `max_age`: a whole context directory goes when its conversation.jsonl mtime is older than
//   now − max_age (reason always `max_age`). `max_messages` never removes a record.
// - `max_messages`: an owned record holding more message lines than the limit is truncated to the
//   newest N; a record removed on age is not also truncated.
// - A context named by a live session's trace is never removed or truncated (skipped, `live_context`).
// - A protected context (the protection list, src/gchome/protect-list.ts) is never removed or
//   truncated: skipped once with `protected`, whatever condemns it.
import type { RecordRetain } from '../config/types.js';
import type { RecordHeader } from '../runtime/record.js';

export interface ContextInput {
  context: string;
  header: RecordHeader | undefined;
  /** mtime of conversation.jsonl (ms) */
  mtimeMs: number;
  /** message lines, when counted (only needed for max_messages) */
  messages: number | undefined;
}

export interface RecordRemoval {
  context: string;
  reason: 'max_age';
}

export interface RecordTruncation {
  context: string;
  reason: 'max_messages';
  keep: number;
  /** planned from the scan; the rewrite reports what it actually dropped */
  messagesDropped: number;
}

export interface RecordSkip {
  context: string;
  code: 'live_context' | 'protected';
  detail: string;
}

export interface RecordsPlan {
  remove: RecordRemoval[];
  truncate: RecordTruncation[];
  skip: RecordSkip[];
}

export function planRecords(
  contexts: ContextInput[],
  capsule: string,
  retain: RecordRetain | undefined,
  liveContexts: ReadonlySet<string>,
  nowMs: number,
  isProtected: (context: string) => boolean = () => false,
): RecordsPlan {
  const plan: RecordsPlan = { remove: [], truncate: [], skip: [] };
  if (!retain || (retain.maxAgeSecs === undefined && retain.maxMessages === undefined)) return plan;
  const floor = retain.maxAgeSecs === undefined ? undefined : nowMs - retain.maxAgeSecs * 1000;
  const sorted = [...contexts].sort((a, b) => (a.context < b.context ? -1 : a.context > b.context ? 1 : 0));
  for (const c of sorted) {
    if (!c.header || c.header.capsule !== capsule) continue;
    const overAge = floor !== undefined && c.mtimeMs < floor;
    const overCount = retain.maxMessages !== undefined && c.messages !== undefined && c.messages > retain.maxMessages;
    if (!overAge && !overCount) continue;
    if (isProtected(c.context)) {
      plan.skip.push({
        context: c.context,
        code: 'protected',
        detail: `context ${c.context} is protected (murmur-gc protection ls; murmur-gc release lets the policy act on it); kept although ${overAge ? 'max_age' : 'max_messages'} condemns it`,
      });
      continue;
    }
    if (liveContexts.has(c.context)) {
      plan.skip.push({
        context: c.context,
        code: 'live_context',
        detail: `context ${c.context} is named by a live session; kept although ${overAge ? 'max_age' : 'max_messages'} condemns it`,
      });
      continue;
    }
    if (overAge) {
      plan.remove.push({ context: c.context, reason: 'max_age' });
    } else if (retain.maxMessages !== undefined && c.messages !== undefined) {
      plan.truncate.push({
        context: c.context,
        reason: 'max_messages',
        keep: retain.maxMessages,
        messagesDropped: c.messages - retain.maxMessages,
      });
    }
  }
  return plan;
}
