// The requirement guard: a missing requirement skips its group with a reason, except under
// MURMUR_GC_REQUIRE_ALL=1 (.ci/run), where the group runs and fails with that reason.
import { describe, expect, it } from 'vitest';
import { onPath, requireAll, requirement } from './requirements.js';

const MISSING = 'cmd:murmur-gc-no-such-command';

describe('requirement guards', () => {
  it('a missing command skips the group, prints why, and names what is missing', () => {
    const printed: string[] = [];
    const r = requirement('demo group', [MISSING], {}, (l) => printed.push(l));
    expect(printed).toEqual(['murmur-gc tests: skipped demo group: needs `murmur-gc-no-such-command` on PATH\n']);
    expect(r).toMatchObject({ ok: false, run: false });
    expect(r.reason).toBe('demo group: needs `murmur-gc-no-such-command` on PATH');
    expect(() => r.check()).toThrow(/demo group: needs `murmur-gc-no-such-command` on PATH/);
  });

  it('under MURMUR_GC_REQUIRE_ALL=1 the group runs and its check fails', () => {
    const printed: string[] = [];
    const r = requirement('demo group', [MISSING], { MURMUR_GC_REQUIRE_ALL: '1' }, (l) => printed.push(l));
    expect(printed).toEqual([]);
    expect(r).toMatchObject({ ok: false, run: true });
    expect(() => r.check()).toThrow(/MURMUR_GC_REQUIRE_ALL=1/);
    expect(requireAll({ MURMUR_GC_REQUIRE_ALL: '0' })).toBe(false);
    expect(requireAll({})).toBe(false);
  });

  it('a present command runs the group and checks clean', () => {
    expect(onPath('sh')).toMatch(/\/sh$/);
    const r = requirement('demo group', ['cmd:sh'], {});
    expect(r).toMatchObject({ ok: true, run: true, reason: '' });
    expect(() => r.check()).not.toThrow();
  });

  it('root is required of a non-root run', () => {
    const r = requirement('demo group', ['root'], {}, () => undefined);
    expect(r.ok).toBe(process.getuid?.() === 0);
  });
});
