// The next expiries, pure (docs/forecast.md "Next expiries"): when the undo window next lets held
// items go, and when a `max_age` policy next condemns an item that is kept now only because it is
// young. `status` shows them, the metrics carry them.
// Guarantees:
// - No fs, no clock: `nowMs` is the caller's. Every instant is the first whole ms at which a sweep
//   does it, by the planners' own comparisons: a hold goes once `until_ms <= now`
//   (src/gchome/quarantine-layout.ts isExpired), a session is over age once its id's mint time is
//   before `now − max_age` (src/plan/sessions.ts), a record once its mtime is (src/plan/records.ts).
// - The next purge is the hold whose window ends first, with every hold the first sweep after that
//   instant purges with it (those whose windows ended by then); holds already past their window
//   (no sweep since) are one purge, due now.
// - An item is "kept only because it is young" when its policy has max_age and nothing condemns it
//   now: a session inside `max_sessions` (or with no count key) and not protected; a record whose
//   header names the policy's capsule, not protected. Liveness is not judged here (it needs the
//   traces): a session or context live at the due instant is kept then, as any sweep keeps it.
import type { RecordRetain, SessionRetain } from '../config/types.js';
import { idTimestampMs } from '../runtime/ids.js';
import type { NextMaxAge, NextPurge } from '../schema/json-schemas.js';

/** The next purge of the undo window, the next item a max_age policy condemns: `status`'s (src/schema/json-schemas.ts). */
export type { NextMaxAge, NextPurge };

/** The purge the undo window makes next, or null when it holds nothing. */
export function nextPurge(holds: readonly { untilMs: number; bytes: number }[], nowMs: number): NextPurge | null {
  if (holds.length === 0) return null;
  const first = Math.min(...holds.map((h) => h.untilMs));
  const by = Math.max(first, nowMs);
  const due = holds.filter((h) => h.untilMs <= by);
  return { at_ms: first, items: due.length, bytes: due.reduce((n, h) => n + h.bytes, 0) };
}

/** The earliest session of one sessions root that `retain.max_age` will condemn, or undefined. */
export function nextSessionAge(
  names: readonly string[],
  retain: SessionRetain | undefined,
  nowMs: number,
  origin: string,
  isProtected: (name: string) => boolean = () => false,
): NextMaxAge | undefined {
  if (retain?.maxAgeSecs === undefined) return undefined;
  const ageMs = retain.maxAgeSecs * 1000;
  // ranked as src/plan/sessions.ts ranks them: newest first by the UTF-8 bytes of the name
  const ranked = names
    .filter((n) => idTimestampMs(n, 'ses_') !== undefined)
    .map((n) => ({ n, bytes: Buffer.from(n, 'utf8') }))
    .sort((a, b) => Buffer.compare(b.bytes, a.bytes));
  let best: NextMaxAge | undefined;
  ranked.forEach(({ n }, rank) => {
    if (retain.maxSessions !== undefined && rank >= retain.maxSessions) return; // condemned now by the count
    const minted = idTimestampMs(n, 'ses_') ?? 0;
    if (minted < nowMs - ageMs || isProtected(n)) return; // condemned now, or never taken
    const at = minted + ageMs + 1;
    if (!best || at < best.at_ms || (at === best.at_ms && n < best.target))
      best = { at_ms: at, store: 'sessions', origin, target: n };
  });
  return best;
}

/** The earliest context of one record store that a policy's max_age will condemn, or undefined. */
export function nextRecordAge(
  contexts: readonly { context: string; capsule: string | undefined; mtimeMs: number }[],
  policies: readonly { capsule: string; retain: RecordRetain | undefined }[],
  nowMs: number,
  origin: string,
  isProtected: (context: string) => boolean = () => false,
): NextMaxAge | undefined {
  let best: NextMaxAge | undefined;
  for (const c of contexts) {
    if (c.capsule === undefined || isProtected(c.context)) continue;
    const ages = policies
      .filter((p) => p.capsule === c.capsule && p.retain?.maxAgeSecs !== undefined)
      .map((p) => p.retain!.maxAgeSecs! * 1000);
    if (ages.length === 0) continue;
    const ageMs = Math.min(...ages);
    if (c.mtimeMs < nowMs - ageMs) continue; // condemned now
    const at = Math.floor(c.mtimeMs + ageMs) + 1;
    if (!best || at < best.at_ms || (at === best.at_ms && c.context < best.target))
      best = { at_ms: at, store: 'records', origin, target: c.context };
  }
  return best;
}

/** The earliest of several (null when there is none). */
export function earliest(xs: readonly (NextMaxAge | undefined)[]): NextMaxAge | null {
  let best: NextMaxAge | null = null;
  for (const x of xs) if (x && (!best || x.at_ms < best.at_ms)) best = x;
  return best;
}
