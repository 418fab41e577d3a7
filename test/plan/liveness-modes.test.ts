// Liveness verdicts (docs/design.md §2) and mode targets (docs/design.md §1), pure.
import { describe, expect, it } from 'vitest';
import { judgeLiveness } from '../../src/plan/liveness.js';
import { planMode, targetMode } from '../../src/plan/modes.js';

const NOW = 1_800_000_000_000;
const GRACE = 3_600_000;

describe('judgeLiveness', () => {
  it('a live running record wins over everything', () => {
    expect(judgeLiveness({ running: 'alive', lastWriteMs: 0, hasSessionEnd: true }, NOW, GRACE).state).toBe('live');
  });
  it('a trace written in the last 60 s is live even after session_end', () => {
    expect(judgeLiveness({ running: 'none', lastWriteMs: NOW - 59_000, hasSessionEnd: true }, NOW, GRACE).state).toBe('live');
    expect(judgeLiveness({ running: 'none', lastWriteMs: NOW - 61_000, hasSessionEnd: true }, NOW, GRACE).state).toBe('finished');
  });
  it('no session_end: live within live_grace, dead after', () => {
    expect(judgeLiveness({ running: 'dead', lastWriteMs: NOW - GRACE + 1000, hasSessionEnd: false }, NOW, GRACE).state).toBe('live');
    expect(judgeLiveness({ running: 'dead', lastWriteMs: NOW - GRACE - 1000, hasSessionEnd: false }, NOW, GRACE).state).toBe('dead');
  });
  it('an unreadable trace is never "finished"; a write from the future counts as just written', () => {
    expect(judgeLiveness({ running: 'none', lastWriteMs: NOW - 2 * GRACE, hasSessionEnd: undefined }, NOW, GRACE).state).toBe('dead');
    expect(judgeLiveness({ running: 'none', lastWriteMs: NOW + 10 * GRACE, hasSessionEnd: true }, NOW, GRACE).state).toBe('live');
  });
});

describe('planMode', () => {
  const base = { path: '/h', uid: 1000, nlink: 1 };
  it('home keeps owner bits and loses group/other; private dirs 0700; files 0600', () => {
    expect(targetMode('home', 0o755)).toBe(0o700);
    expect(targetMode('home', 0o555)).toBe(0o500);
    expect(planMode({ ...base, role: 'home', kind: 'dir', mode: 0o755 }, 1000)).toEqual({ path: '/h', from: 0o755, to: 0o700 });
    expect(planMode({ ...base, role: 'private_dir', kind: 'dir', mode: 0o500 }, 1000)).toEqual({ path: '/h', from: 0o500, to: 0o700 });
    expect(planMode({ ...base, role: 'private_file', kind: 'file', mode: 0o644 }, 1000)).toEqual({ path: '/h', from: 0o644, to: 0o600 });
    expect(planMode({ ...base, role: 'private_file', kind: 'file', mode: 0o600 }, 1000)).toBeUndefined();
  });
  it('never through a link, never another user\'s path, never a hard-linked file', () => {
    expect(planMode({ ...base, role: 'private_dir', kind: 'symlink', mode: 0o777 }, 1000)).toMatchObject({ code: 'symlink' });
    expect(planMode({ ...base, role: 'private_dir', kind: 'dir', mode: 0o755, uid: 0 }, 1000)).toMatchObject({ code: 'foreign_owner' });
    expect(planMode({ ...base, role: 'private_file', kind: 'file', mode: 0o644, nlink: 2 }, 1000)).toMatchObject({ code: 'hard_link' });
    expect(planMode({ ...base, role: 'private_file', kind: 'other', mode: 0o644 }, 1000)).toMatchObject({ code: 'not_regular' });
  });
});
