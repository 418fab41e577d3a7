// Murmur's ids: the format murmur-gc mints (the runtime's own, `<prefix>` + a uuid v7 in simple
// form) and the mint time read back by the runtime's rule.
import { describe, expect, it } from 'vitest';
import { idTimestampMs, isSessionName, mintId } from '../../src/runtime/ids.js';

describe('mintId', () => {
  it('is the prefix and a uuid v7 as 32 lowercase hex digits, no dashes', () => {
    for (const prefix of ['ses_', 'evt_', 'ctx_'] as const) {
      const id = mintId(prefix);
      // 12 hex of time, the version nibble 7, 3 hex, the variant (10xx), 15 hex
      expect(id).toMatch(new RegExp(`^${prefix}[0-9a-f]{12}7[0-9a-f]{3}[89ab][0-9a-f]{15}$`));
    }
  });

  it('carries the mint time in ms, and ids minted later sort after', () => {
    const before = Date.now();
    const ids = Array.from({ length: 50 }, () => mintId('ses_'));
    const after = Date.now();
    for (const id of ids) {
      const ms = idTimestampMs(id, 'ses_')!;
      expect(ms).toBeGreaterThanOrEqual(before);
      expect(ms).toBeLessThanOrEqual(after);
    }
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('idTimestampMs', () => {
  it('reads the first 12 hex digits after the prefix, in either case; the rest may be anything', () => {
    expect(idTimestampMs('ses_0190000000ff', 'ses_')).toBe(0x0190000000ff);
    expect(idTimestampMs('ses_0190000000FFnot-hex-at-all', 'ses_')).toBe(0x0190000000ff);
  });

  it('is undefined for another prefix, fewer than 12 hex digits, or a non-hex digit among them', () => {
    expect(idTimestampMs('evt_0190000000ff', 'ses_')).toBeUndefined();
    expect(idTimestampMs('ses_0190000000f', 'ses_')).toBeUndefined();
    expect(idTimestampMs('ses_', 'ses_')).toBeUndefined();
    expect(idTimestampMs('ses_0190000000fg', 'ses_')).toBeUndefined();
    expect(idTimestampMs('ses_g190000000ff', 'ses_')).toBeUndefined();
    expect(idTimestampMs('ses_-190000000ff', 'ses_')).toBeUndefined();
  });

  it("agrees with the rule read as a pattern on 20 000 generated names, the digits' neighbours included", () => {
    // each character a hex digit, or now and then one just outside their ranges
    const hexChars = '0123456789abcdefABCDEF';
    const near = '/:@G`g \u0660\uff10';
    let seed = 20261204;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    let dated = 0;
    for (let t = 0; t < 20_000; t++) {
      const pick = (cs: string) => cs[Math.floor(rnd() * cs.length)];
      const body = Array.from({ length: Math.floor(rnd() * 16) }, () => pick(rnd() < 0.97 ? hexChars : near)).join('');
      const name = `ses_${body}`;
      const head = body.slice(0, 12);
      const want = /^[0-9a-fA-F]{12}$/.test(head) ? Number.parseInt(head, 16) : undefined;
      expect(idTimestampMs(name, 'ses_'), name).toBe(want);
      if (want !== undefined) dated++;
    }
    expect(dated).toBeGreaterThan(2000); // both answers are common
  });

  it('isSessionName is exactly "a ses_ id the runtime can date"', () => {
    expect(isSessionName('ses_0190000000ff')).toBe(true);
    expect(isSessionName('ses_zz')).toBe(false);
    expect(isSessionName('evt_0190000000ff')).toBe(false);
  });
});
