// The record planner: ownership gate, age, message counts, live contexts (docs/design.md §R4, §R5).
import { describe, expect, it } from 'vitest';
import { planRecords, type ContextInput } from '../../src/plan/records.js';

const NOW = 1_800_000_000_000;
const DAY = 86_400_000;
const header = (capsule: string) => ({ type: 'murmur.record' as const, capsule, created_ms: 1n });

function ctx(context: string, capsule: string | undefined, ageDays: number, messages?: number): ContextInput {
  return { context, header: capsule ? header(capsule) : undefined, mtimeMs: NOW - ageDays * DAY, messages };
}

describe('planRecords', () => {
  it('removes only owned records older than max_age; headerless and foreign never', () => {
    const p = planRecords(
      [
        ctx('ctx_b', 'shey', 100),
        ctx('ctx_a', 'shey', 100),
        ctx('ctx_fresh', 'shey', 1),
        ctx('ctx_foreign', 'other', 100),
        ctx('ctx_unowned', undefined, 100),
      ],
      'shey',
      { maxAgeSecs: 90 * 86400 },
      new Set(),
      NOW,
    );
    expect(p.remove).toEqual([
      { context: 'ctx_a', reason: 'max_age' },
      { context: 'ctx_b', reason: 'max_age' },
    ]);
    expect(p.truncate).toEqual([]);
  });

  it('the age floor is exact: a record whose mtime is exactly now - max_age is kept, a millisecond older goes', () => {
    const at = (mtimeMs: number): ContextInput => ({
      context: 'c',
      header: header('shey'),
      mtimeMs,
      messages: undefined,
    });
    expect(planRecords([at(NOW - 90 * DAY)], 'shey', { maxAgeSecs: 90 * 86400 }, new Set(), NOW).remove).toEqual([]);
    expect(planRecords([at(NOW - 90 * DAY - 1)], 'shey', { maxAgeSecs: 90 * 86400 }, new Set(), NOW).remove).toEqual([
      { context: 'c', reason: 'max_age' },
    ]);
  });

  it('max_messages truncates owned records over the limit and never removes one', () => {
    const p = planRecords(
      [ctx('c1', 'shey', 1, 10), ctx('c2', 'shey', 1, 3), ctx('c3', undefined, 1, 50)],
      'shey',
      { maxMessages: 3 },
      new Set(),
      NOW,
    );
    expect(p.remove).toEqual([]);
    expect(p.truncate).toEqual([{ context: 'c1', reason: 'max_messages', keep: 3, messagesDropped: 7 }]);
  });

  it('a record removed on age is not also truncated', () => {
    const p = planRecords([ctx('c1', 'shey', 100, 10)], 'shey', { maxMessages: 3, maxAgeSecs: 86400 }, new Set(), NOW);
    expect(p.remove).toHaveLength(1);
    expect(p.truncate).toHaveLength(0);
  });

  it('a context named by a live session is skipped with live_context', () => {
    const p = planRecords(
      [ctx('c1', 'shey', 100, 10), ctx('c2', 'shey', 1, 10)],
      'shey',
      { maxMessages: 3, maxAgeSecs: 86400 },
      new Set(['c1', 'c2']),
      NOW,
    );
    expect(p.remove).toEqual([]);
    expect(p.truncate).toEqual([]);
    expect(p.skip.map((s) => [s.context, s.code])).toEqual([
      ['c1', 'live_context'],
      ['c2', 'live_context'],
    ]);
  });

  it('no policy removes nothing', () => {
    expect(planRecords([ctx('c1', 'shey', 1000, 1000)], 'shey', undefined, new Set(), NOW)).toEqual({
      remove: [],
      truncate: [],
      skip: [],
    });
  });
});

describe('protected contexts', () => {
  it('are skipped once (protected), for max_age and for max_messages, and nothing else changes', () => {
    const input = [ctx('c_old', 'shey', 100, 2), ctx('c_long', 'shey', 1, 10), ctx('c_other', 'shey', 100, 2)];
    const p = planRecords(
      input,
      'shey',
      { maxMessages: 3, maxAgeSecs: 90 * 86_400 },
      new Set(),
      NOW,
      (c) => c === 'c_old' || c === 'c_long',
    );
    expect(p.skip.map((s) => [s.context, s.code])).toEqual([
      ['c_long', 'protected'],
      ['c_old', 'protected'],
    ]);
    expect(p.remove.map((r) => r.context)).toEqual(['c_other']);
    expect(p.truncate).toEqual([]);
  });
});

describe('what a skip says (the report, -v and the JSON show these words)', () => {
  const policy = { maxMessages: 3, maxAgeSecs: 90 * 86_400 };

  it('a live context names the key that condemns it: max_age when over age, else max_messages', () => {
    const p = planRecords(
      [ctx('c_old', 'shey', 100, 2), ctx('c_long', 'shey', 1, 10)],
      'shey',
      policy,
      new Set(['c_old', 'c_long']),
      NOW,
    );
    expect(p.skip).toEqual([
      {
        context: 'c_long',
        code: 'live_context',
        detail: 'context c_long is named by a live session; kept although max_messages condemns it',
      },
      {
        context: 'c_old',
        code: 'live_context',
        detail: 'context c_old is named by a live session; kept although max_age condemns it',
      },
    ]);
  });

  it('a protected context names the key that condemns it and how to release it', () => {
    const p = planRecords(
      [ctx('c_old', 'shey', 100, 2), ctx('c_long', 'shey', 1, 10)],
      'shey',
      policy,
      new Set(),
      NOW,
      () => true,
    );
    expect(p.skip).toEqual([
      {
        context: 'c_long',
        code: 'protected',
        detail:
          'context c_long is protected (murmur-gc protection ls; murmur-gc release lets the policy act on it); kept although max_messages condemns it',
      },
      {
        context: 'c_old',
        code: 'protected',
        detail:
          'context c_old is protected (murmur-gc protection ls; murmur-gc release lets the policy act on it); kept although max_age condemns it',
      },
    ]);
  });
});

describe('order and boundaries', () => {
  it('contexts are planned in name order whatever the input order', () => {
    const names = ['ctx_c', 'ctx_a', 'ctx_d', 'ctx_b'];
    const want = ['ctx_a', 'ctx_b', 'ctx_c', 'ctx_d'];
    for (const order of [names, [...names].reverse(), ['ctx_b', 'ctx_d', 'ctx_a', 'ctx_c']]) {
      const p = planRecords(
        order.map((n) => ctx(n, 'shey', 100, 10)),
        'shey',
        { maxAgeSecs: 86_400 },
        new Set(),
        NOW,
      );
      expect(p.remove.map((r) => r.context)).toEqual(want);
      const t = planRecords(
        order.map((n) => ctx(n, 'shey', 1, 10)),
        'shey',
        { maxMessages: 3 },
        new Set(),
        NOW,
      );
      expect(t.truncate.map((r) => r.context)).toEqual(want);
    }
  });

  it('max_messages is exact: exactly the limit is kept whole, one more is truncated to it', () => {
    const p = planRecords(
      [ctx('c_at', 'shey', 1, 3), ctx('c_over', 'shey', 1, 4), ctx('c_uncounted', 'shey', 1)],
      'shey',
      { maxMessages: 3 },
      new Set(),
      NOW,
    );
    expect(p).toEqual({
      remove: [],
      truncate: [{ context: 'c_over', reason: 'max_messages', keep: 3, messagesDropped: 1 }],
      skip: [],
    });
  });

  it('a max_age policy alone removes what is over age and truncates nothing', () => {
    const p = planRecords(
      [ctx('c_old', 'shey', 100, 50), ctx('c_new', 'shey', 1, 50)],
      'shey',
      { maxAgeSecs: 90 * 86_400 },
      new Set(),
      NOW,
    );
    expect(p).toEqual({ remove: [{ context: 'c_old', reason: 'max_age' }], truncate: [], skip: [] });
  });

  it('a max_messages policy alone never removes, however old the record', () => {
    const p = planRecords(
      [ctx('c_old', 'shey', 10_000, 50), ctx('c_ok', 'shey', 10_000, 2)],
      'shey',
      { maxMessages: 3 },
      new Set(),
      NOW,
    );
    expect(p).toEqual({
      remove: [],
      truncate: [{ context: 'c_old', reason: 'max_messages', keep: 3, messagesDropped: 47 }],
      skip: [],
    });
  });
});
