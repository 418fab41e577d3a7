// Which records a sweep repairs by terminating their torn last line: every condition of the
// planner on its own, with the boundary of the idle time (live_grace) exact.
import { describe, expect, it } from 'vitest';
import { planTornTails, type TornTailInput } from '../../src/plan/torn-tail.js';

const NOW = 1_800_000_000_000;
const GRACE = 3_600_000;
const header = (capsule: string) => ({ type: 'murmur.record' as const, capsule, created_ms: 1n });

/** A record of `shey` ending with a torn line, idle for twice the grace: repaired by default. */
function torn(context: string, over: Partial<TornTailInput> = {}): TornTailInput {
  return { context, header: header('shey'), mtimeMs: NOW - 2 * GRACE, terminated: false, unreadable: false, ...over };
}

const plan = (
  contexts: TornTailInput[],
  o: { retain?: Parameters<typeof planTornTails>[2]; live?: string[]; acted?: string[] } = {},
): string[] =>
  planTornTails(
    contexts,
    'shey',
    'retain' in o ? o.retain : { maxMessages: 5 },
    new Set(o.live ?? []),
    new Set(o.acted ?? []),
    NOW,
    GRACE,
  );

describe('planTornTails', () => {
  it('repairs an owned, idle record with a torn last line under either key', () => {
    expect(plan([torn('c1')], { retain: { maxMessages: 5 } })).toEqual(['c1']);
    expect(plan([torn('c1')], { retain: { maxAgeSecs: 86_400 } })).toEqual(['c1']);
  });

  it('repairs nothing without a policy, or with a policy that has no keys', () => {
    expect(plan([torn('c1')], { retain: undefined })).toEqual([]);
    expect(plan([torn('c1')], { retain: {} })).toEqual([]);
  });

  it('only a record known to end with a torn line: terminated or not known is left alone', () => {
    expect(plan([torn('c1', { terminated: true }), torn('c2', { terminated: undefined }), torn('c3')])).toEqual(['c3']);
  });

  it('never a record the runtime cannot read (not UTF-8)', () => {
    expect(plan([torn('c1', { unreadable: true }), torn('c2')])).toEqual(['c2']);
  });

  it("only the policy's capsule: a foreign or headerless record is never repaired", () => {
    expect(plan([torn('c1', { header: header('other') }), torn('c2', { header: undefined }), torn('c3')])).toEqual([
      'c3',
    ]);
  });

  it('idle for at least live_grace: exactly live_grace is repaired, a millisecond less is not', () => {
    expect(plan([torn('c1', { mtimeMs: NOW - GRACE })])).toEqual(['c1']);
    expect(plan([torn('c1', { mtimeMs: NOW - GRACE + 1 })])).toEqual([]);
    // a write from the future (clock stepped back) is "just written"
    expect(plan([torn('c1', { mtimeMs: NOW + GRACE })])).toEqual([]);
  });

  it('never a context named by a live session, nor one this sweep already removed or truncated', () => {
    expect(plan([torn('c1'), torn('c2'), torn('c3')], { live: ['c1'], acted: ['c3'] })).toEqual(['c2']);
  });

  it('returns the contexts ordered by their bytes, whatever the input order', () => {
    const names = ['ctx_b', 'ctx_\u00e9', 'ctx_a', 'ctx_Z'];
    expect(plan(names.map((n) => torn(n)))).toEqual(['ctx_Z', 'ctx_a', 'ctx_b', 'ctx_\u00e9']);
    expect(plan([...names].reverse().map((n) => torn(n)))).toEqual(['ctx_Z', 'ctx_a', 'ctx_b', 'ctx_\u00e9']);
    // UTF-16 code units put U+1F600 (a surrogate pair) before U+FF5E; its UTF-8 bytes sort after
    expect(plan([torn('ctx_\u{1F600}'), torn('ctx_\uFF5E')])).toEqual(['ctx_\uFF5E', 'ctx_\u{1F600}']);
  });
});
