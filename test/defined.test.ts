// definedOnly: the undefined-valued keys dropped, the rest kept in order, typed optional.
import { describe, expect, expectTypeOf, it } from 'vitest';
import { definedOnly } from '../src/defined.js';

describe('definedOnly', () => {
  it('drops exactly the undefined-valued keys and keeps the others in order', () => {
    const o = { a: 1, b: undefined, c: null, d: 0, e: '', f: false, g: 'x' };
    const r = definedOnly(o);
    expect(r).toEqual({ a: 1, c: null, d: 0, e: '', f: false, g: 'x' });
    expect(Object.keys(r)).toEqual(['a', 'c', 'd', 'e', 'f', 'g']);
    expect('b' in r).toBe(false);
    expect(JSON.stringify({ z: 0, ...definedOnly({ y: undefined as number | undefined, x: 2 }) })).toBe(
      '{"z":0,"x":2}',
    );
    expect(o).toEqual({ a: 1, b: undefined, c: null, d: 0, e: '', f: false, g: 'x' });
  });

  it('types a key that may be undefined as optional, and keeps the others required', () => {
    const maybe = undefined as string | undefined;
    const r = definedOnly({ n: 1, s: maybe });
    expectTypeOf(r).toEqualTypeOf<{ n: number } & { s?: string }>();
    const target: { n: number; s?: string } = r;
    expect(target).toEqual({ n: 1 });
  });
});
