// groupBy (src/group-by.ts): groups in first-seen key order, items in input order, every item in
// exactly one group, input unchanged.
import { describe, expect, it } from 'vitest';
import { groupBy } from '../src/group-by.js';

describe('groupBy', () => {
  it('keeps first-seen key order and each group in input order', () => {
    const items = [
      { root: '/b', n: 1 },
      { root: '/a', n: 2 },
      { root: '/b', n: 3 },
      { root: '/c', n: 4 },
      { root: '/a', n: 5 },
    ];
    const copy = structuredClone(items);
    const g = groupBy(items, (i) => i.root);
    expect([...g.keys()]).toEqual(['/b', '/a', '/c']);
    expect(g.get('/b')!.map((i) => i.n)).toEqual([1, 3]);
    expect(g.get('/a')!.map((i) => i.n)).toEqual([2, 5]);
    expect(g.get('/c')!.map((i) => i.n)).toEqual([4]);
    expect(items).toEqual(copy);
  });

  it('puts every item in exactly one group, the same object', () => {
    const items = Array.from({ length: 50_000 }, (_, i) => ({ i, k: i % 7 }));
    const g = groupBy(items, (x) => x.k);
    const all = [...g.values()].flat();
    expect(all).toHaveLength(items.length);
    expect(new Set(all).size).toBe(items.length);
    for (const [k, list] of g) expect(list.every((x) => x.k === k && items[x.i] === x)).toBe(true);
  });

  it('takes any iterable, and an empty one gives no group', () => {
    expect(groupBy(new Set(['ab', 'ac', 'b']), (s) => s[0]).get('a')).toEqual(['ab', 'ac']);
    expect(groupBy([], (x: number) => x).size).toBe(0);
  });
});
