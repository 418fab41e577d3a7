// The session planner against the runtime's rules (docs/design.md §R3, and the runtime's own test cases), with chosen ids and clocks.
import { describe, expect, it } from 'vitest';
import { planSessions, type SessionCandidateInput } from '../../src/plan/sessions.js';
import { idAt, DAY } from '../helpers/fixtures.js';

const NOW = 1_800_000_000_000;
const dead = (name: string): SessionCandidateInput => ({ name, liveness: 'finished', livenessWhy: 'ended' });

describe('planSessions', () => {
  const ids = [6, 5, 4, 3, 2, 1].map((d) => idAt('ses_', NOW - d * DAY)); // oldest first

  it('no policy, or a policy with no keys, condemns nothing', () => {
    expect(planSessions(ids.map(dead), undefined, NOW)).toEqual({ remove: [], skip: [] });
    expect(planSessions(ids.map(dead), {}, NOW)).toEqual({ remove: [], skip: [] });
  });

  it('max_sessions leaves exactly the newest N, counting live sessions in the rank', () => {
    const input = ids.map(dead);
    input[5] = { name: ids[5]!, liveness: 'live', livenessWhy: 'running' }; // the newest is live
    const p = planSessions(input, { maxSessions: 3 }, NOW);
    expect(p.remove.map((r) => r.name).sort()).toEqual(ids.slice(0, 3).sort());
    expect(p.remove.every((r) => r.reason === 'max_sessions')).toBe(true);
  });

  it('a live session is skipped with live_session and keeps its rank', () => {
    const input = ids.map(dead);
    input[0] = { name: ids[0]!, liveness: 'live', livenessWhy: 'its running record names a live process' };
    const p = planSessions(input, { maxSessions: 2 }, NOW);
    expect(p.skip).toEqual([expect.objectContaining({ name: ids[0], code: 'live_session', reason: 'max_sessions' })]);
    expect(p.remove.map((r) => r.name).sort()).toEqual(ids.slice(1, 4).sort());
  });

  it('max_age reads the id (ages are exact at the floor) and wins the reason over max_sessions', () => {
    const p = planSessions(ids.map(dead), { maxSessions: 5, maxAgeSecs: 4 * 86400 }, NOW);
    // ids minted 6 and 5 days ago are over age; 4 days ago is exactly at the floor: kept (runtime: < floor)
    expect(p.remove).toEqual([
      { name: ids[1], reason: 'max_age' },
      { name: ids[0], reason: 'max_age' },
    ]);
  });

  it('max_age alone removes what is over age and nothing else', () => {
    const p = planSessions(ids.map(dead), { maxAgeSecs: 4 * 86400 }, NOW);
    expect(p).toEqual({
      remove: [
        { name: ids[1], reason: 'max_age' },
        { name: ids[0], reason: 'max_age' },
      ],
      skip: [],
    });
    // a max_age longer than the epoch is old: nothing is over it
    expect(planSessions(ids.map(dead), { maxAgeSecs: NOW / 1000 + 1 }, NOW).remove).toEqual([]);
  });

  it('both keys AND: only sessions inside both survive', () => {
    const p = planSessions(ids.map(dead), { maxSessions: 4, maxAgeSecs: 5.5 * 86400 }, NOW);
    expect(p.remove.map((r) => [r.name, r.reason])).toEqual([
      [ids[1], 'max_sessions'],
      [ids[0], 'max_age'],
    ]);
  });

  it('non-session names are never ranked or removed; the floor id and anything newer are never candidates', () => {
    const names = [...ids, 'notes', 'ses_zz', 'ses_'];
    const p = planSessions(names.map(dead), { maxSessions: 1, maxAgeSecs: 1 }, NOW, ids[3]);
    const removed = p.remove.map((r) => r.name);
    expect(removed).not.toContain('notes');
    expect(removed).not.toContain('ses_zz');
    expect(removed.sort()).toEqual(ids.slice(0, 3).sort());
  });

  it('increasing a limit never removes more (monotonic)', () => {
    for (let n = 1; n < 7; n++) {
      const a = planSessions(ids.map(dead), { maxSessions: n }, NOW).remove.length;
      const b = planSessions(ids.map(dead), { maxSessions: n + 1 }, NOW).remove.length;
      expect(b).toBeLessThanOrEqual(a);
    }
  });
});

describe('protected sessions', () => {
  const ids = [6, 5, 4, 3, 2, 1].map((d) => idAt('ses_', NOW - d * DAY)); // oldest first
  const dead = (names: string[]): SessionCandidateInput[] =>
    names.map((name) => ({ name, liveness: 'dead', livenessWhy: '' }));

  it('a protected session is skipped once (protected) whether max_age or max_sessions condemns it', () => {
    const p = planSessions(
      dead(ids),
      { maxSessions: 3, maxAgeSecs: 5.5 * 86_400 },
      NOW,
      undefined,
      (n) => n === ids[0] || n === ids[1],
    );
    expect(p.skip).toEqual([
      expect.objectContaining({ name: ids[1], code: 'protected', reason: 'max_sessions' }),
      expect.objectContaining({ name: ids[0], code: 'protected', reason: 'max_age' }),
    ]);
    expect(p.remove.map((r) => r.name)).toEqual([ids[2]]);
  });

  it('keeps its rank: protecting a session never condemns another one in its place', () => {
    const all = planSessions(dead(ids), { maxSessions: 3 }, NOW);
    const withNewest = planSessions(dead(ids), { maxSessions: 3 }, NOW, undefined, (n) => n === ids[5]);
    const withOld = planSessions(dead(ids), { maxSessions: 3 }, NOW, undefined, (n) => n === ids[1]);
    expect(withNewest.remove).toEqual(all.remove);
    expect(withOld.remove.map((r) => r.name)).toEqual(all.remove.map((r) => r.name).filter((n) => n !== ids[1]));
  });
});

describe('what a session skip says (the report, -v and the JSON show these words)', () => {
  const ids = [6, 5, 4, 3, 2, 1].map((d) => idAt('ses_', NOW - d * DAY)); // oldest first

  it('a live session: why it is live and which key condemns it', () => {
    const input = ids.map(dead);
    input[0] = { name: ids[0]!, liveness: 'live', livenessWhy: 'its running record names a live process' };
    input[2] = { name: ids[2]!, liveness: 'live', livenessWhy: 'its trace was written in the last 60 s' };
    const p = planSessions(input, { maxSessions: 3, maxAgeSecs: 5.5 * 86_400 }, NOW);
    expect(p.skip).toEqual([
      {
        name: ids[2],
        reason: 'max_sessions',
        code: 'live_session',
        detail: `${ids[2]} is live (its trace was written in the last 60 s); kept although max_sessions condemns it`,
      },
      {
        name: ids[0],
        reason: 'max_age',
        code: 'live_session',
        detail: `${ids[0]} is live (its running record names a live process); kept although max_age condemns it`,
      },
    ]);
  });

  it('a protected session: how to release it and which key condemns it', () => {
    const p = planSessions(ids.map(dead), { maxSessions: 3, maxAgeSecs: 5.5 * 86_400 }, NOW, undefined, () => true);
    expect(p.remove).toEqual([]);
    expect(p.skip.map((s) => s.detail)).toEqual([
      `${ids[2]} is protected (murmur-gc protection ls; murmur-gc release lets the policy act on it); kept although max_sessions condemns it`,
      `${ids[1]} is protected (murmur-gc protection ls; murmur-gc release lets the policy act on it); kept although max_sessions condemns it`,
      `${ids[0]} is protected (murmur-gc protection ls; murmur-gc release lets the policy act on it); kept although max_age condemns it`,
    ]);
  });
});
