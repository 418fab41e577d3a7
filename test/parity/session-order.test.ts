// Parity: session names are ranked by their bytes (Rust `String` order), not by UTF-16 code units.
import { describe, expect, it } from 'vitest';
import { planSessions } from '../../src/plan/sessions.js';

describe('parity: session names ranked by their bytes', () => {
  // Same 12-hex mint time; the names differ after it. UTF-16 puts U+1F600 (a surrogate pair,
  // 0xD83D…) before U+FF5E; UTF-8 puts it after (F0 9F… > EF BD…).
  const t = '0190000000007';
  const emoji = `ses_${t}\u{1F600}`;
  const fullwidth = `ses_${t}\uFF5E`;
  const ascii = `ses_${t}a`;

  it('max_sessions keeps the name whose bytes sort highest', () => {
    const input = [fullwidth, emoji, ascii].map((name) => ({ name, liveness: 'dead' as const, livenessWhy: '' }));
    const plan = planSessions(input, { maxSessions: 1 }, Date.now());
    expect(plan.remove.map((r) => r.name).sort()).toEqual([ascii, fullwidth].sort());
  });

  it('the floor (names at or after it are never candidates) compares bytes too', () => {
    const input = [fullwidth, emoji].map((name) => ({ name, liveness: 'dead' as const, livenessWhy: '' }));
    // floor = the fullwidth name: the emoji name sorts after it in bytes, so it is protected.
    const plan = planSessions(input, { maxAgeSecs: 1 }, Date.UTC(2030, 0, 1), fullwidth);
    expect(plan.remove.map((r) => r.name)).toEqual([]);
  });
});
