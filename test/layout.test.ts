// Fitting human output to a width: `~` for the operator's home, paths elided in the middle (the
// last component whole), prose wrapped with a hanging indent, the terminal's width on a TTY.
import { describe, expect, it } from 'vitest';
import { elidePath, fitLine, layoutFor, tilde, wrap } from '../src/layout.js';

describe('layout', () => {
  it('shows the home directory as ~ only at a component boundary', () => {
    expect(tilde('/home/op/.murmur/sessions', '/home/op')).toBe('~/.murmur/sessions');
    expect(tilde('/home/op', '/home/op/')).toBe('~');
    expect(tilde('/home/operator/x', '/home/op')).toBe('/home/operator/x');
    expect(tilde('/srv/x', undefined)).toBe('/srv/x');
    expect(tilde('/srv/x', '/')).toBe('/srv/x');
  });

  it('elides a long path in the middle at / boundaries, keeping its first and last components', () => {
    const p = '/srv/agents/build-farm/workspaces/nightly-integration-suite/.murmur/sessions';
    expect(elidePath(p, 200)).toBe(p);
    const e = elidePath(p, 40);
    expect(e.length).toBeLessThanOrEqual(40);
    expect(e.startsWith('/srv/')).toBe(true);
    expect(e.endsWith('/sessions')).toBe(true);
    expect(e).toContain('/…/');
    // the last component is never cut, even when it alone is wider
    expect(elidePath('/a/b/ses_0123456789abcdef0123456789abcdef', 10)).toBe('/…/ses_0123456789abcdef0123456789abcdef');
  });

  it('wraps prose at spaces with a hanging indent, never breaking a word', () => {
    expect(wrap('aaa bbb ccc ddd', 8, '', '  ')).toEqual(['aaa bbb', '  ccc', '  ddd']);
    expect(wrap('x '.repeat(3) + 'y'.repeat(20), 10)).toEqual(['x x x', '    ' + 'y'.repeat(20)]);
  });

  it('puts the details below an item that does not fit, and never drops the item id', () => {
    const id = 'ses_01a1600baba07aaaaaaaaaaaaaaaaaa1';
    const L = { width: 80, homeDir: '/home/op' };
    expect(fitLine('  remove session ', `/home/op/s/${id}`, '  (max_age, 1 B)', L)).toEqual([
      `  remove session ~/s/${id}  (max_age, 1 B)`,
    ]);
    const two = fitLine(
      '  remove session ',
      `/srv/agents/build-farm/workspaces/nightly/.murmur/sessions/${id}`,
      '  (max_sessions, 2.2 MiB; held until 2026-12-01 19:58:00 UTC)',
      L,
    );
    expect(two).toHaveLength(2);
    expect(two[0]).toContain(id);
    for (const l of two) expect([...l].length).toBeLessThanOrEqual(80);
  });

  it('is as wide as the terminal on a TTY, 80 otherwise', () => {
    expect(layoutFor({ isTTY: true, columns: 132 }, '/h').width).toBe(132);
    expect(layoutFor({ isTTY: false, columns: 132 }, '/h').width).toBe(80);
    expect(layoutFor({}, undefined).width).toBe(80);
    expect(layoutFor({ isTTY: true, columns: 10 }, undefined).width).toBe(40);
  });
});
