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
    expect(judgeLiveness({ running: 'none', lastWriteMs: NOW - 59_000, hasSessionEnd: true }, NOW, GRACE).state).toBe(
      'live',
    );
    expect(judgeLiveness({ running: 'none', lastWriteMs: NOW - 61_000, hasSessionEnd: true }, NOW, GRACE).state).toBe(
      'finished',
    );
  });
  it('no session_end: live within live_grace, dead after', () => {
    expect(
      judgeLiveness({ running: 'dead', lastWriteMs: NOW - GRACE + 1000, hasSessionEnd: false }, NOW, GRACE).state,
    ).toBe('live');
    expect(
      judgeLiveness({ running: 'dead', lastWriteMs: NOW - GRACE - 1000, hasSessionEnd: false }, NOW, GRACE).state,
    ).toBe('dead');
  });
  it('the 60 s teardown window and live_grace are exact: at the boundary the write no longer counts', () => {
    const at = (sinceWriteMs: number, hasSessionEnd: boolean) =>
      judgeLiveness({ running: 'none', lastWriteMs: NOW - sinceWriteMs, hasSessionEnd }, NOW, GRACE).state;
    expect(at(59_999, true)).toBe('live');
    expect(at(60_000, true)).toBe('finished');
    expect(at(GRACE - 1, false)).toBe('live');
    expect(at(GRACE, false)).toBe('dead');
    // a live_grace shorter than the teardown window: the 60 s window still holds
    expect(judgeLiveness({ running: 'dead', lastWriteMs: NOW - 30_000, hasSessionEnd: false }, NOW, 10_000).state).toBe(
      'live',
    );
  });
  it('each verdict says why, in its own words', () => {
    const v = (running: 'alive' | 'none', sinceWriteMs: number, hasSessionEnd: boolean | undefined) =>
      judgeLiveness({ running, lastWriteMs: NOW - sinceWriteMs, hasSessionEnd }, NOW, GRACE);
    expect(v('alive', GRACE * 2, true)).toEqual({
      state: 'live',
      why: 'its running record names a live process',
      test: 'running_record',
    });
    expect(v('none', 1_000, true)).toEqual({
      state: 'live',
      why: 'its trace was written in the last 60 s',
      test: 'recent_write',
    });
    expect(v('none', GRACE * 2, true)).toEqual({ state: 'finished', why: 'its trace has session_end' });
    expect(v('none', GRACE / 2, false)).toEqual({
      state: 'live',
      why: 'its trace has no session_end and was written within live_grace',
      test: 'live_grace',
    });
    expect(v('none', GRACE * 2, undefined)).toEqual({
      state: 'dead',
      why: 'no session_end and no write within live_grace',
    });
  });
  it('an unreadable trace is never "finished"; a write from the future counts as just written', () => {
    expect(
      judgeLiveness({ running: 'none', lastWriteMs: NOW - 2 * GRACE, hasSessionEnd: undefined }, NOW, GRACE).state,
    ).toBe('dead');
    expect(
      judgeLiveness({ running: 'none', lastWriteMs: NOW + 10 * GRACE, hasSessionEnd: true }, NOW, GRACE).state,
    ).toBe('live');
  });
});

describe('planMode', () => {
  const base = { path: '/h', uid: 1000, nlink: 1 };
  it('home keeps owner bits and loses group/other; private dirs 0700; files 0600', () => {
    expect(targetMode('home', 0o755)).toBe(0o700);
    expect(targetMode('home', 0o555)).toBe(0o500);
    expect(planMode({ ...base, role: 'home', kind: 'dir', mode: 0o755 }, 1000)).toEqual({
      path: '/h',
      from: 0o755,
      to: 0o700,
    });
    expect(planMode({ ...base, role: 'private_dir', kind: 'dir', mode: 0o500 }, 1000)).toEqual({
      path: '/h',
      from: 0o500,
      to: 0o700,
    });
    expect(planMode({ ...base, role: 'private_file', kind: 'file', mode: 0o644 }, 1000)).toEqual({
      path: '/h',
      from: 0o644,
      to: 0o600,
    });
    expect(planMode({ ...base, role: 'private_file', kind: 'file', mode: 0o600 }, 1000)).toBeUndefined();
  });
  it("never through a link, never another user's path, never a hard-linked file", () => {
    expect(planMode({ ...base, role: 'private_dir', kind: 'symlink', mode: 0o777 }, 1000)).toMatchObject({
      code: 'symlink',
    });
    expect(planMode({ ...base, role: 'private_dir', kind: 'dir', mode: 0o755, uid: 0 }, 1000)).toMatchObject({
      code: 'foreign_owner',
    });
    expect(planMode({ ...base, role: 'private_file', kind: 'file', mode: 0o644, nlink: 2 }, 1000)).toMatchObject({
      code: 'hard_link',
    });
    expect(planMode({ ...base, role: 'private_file', kind: 'other', mode: 0o644 }, 1000)).toMatchObject({
      code: 'not_regular',
    });
  });
  it("a directory has more than one link (its subdirectories' `..`): its mode is still reasserted", () => {
    expect(planMode({ ...base, role: 'private_dir', kind: 'dir', mode: 0o755, nlink: 5 }, 1000)).toEqual({
      path: '/h',
      from: 0o755,
      to: 0o700,
    });
    expect(planMode({ ...base, role: 'home', kind: 'dir', mode: 0o775, nlink: 3 }, 1000)).toEqual({
      path: '/h',
      from: 0o775,
      to: 0o700,
    });
  });
});

describe('what a mode skip says (the report, -v and the JSON show these words)', () => {
  const base = { path: '/h/x', uid: 1000, nlink: 1 };
  it('names the path and why its mode is left alone', () => {
    expect(planMode({ ...base, role: 'private_dir', kind: 'symlink', mode: 0o777 }, 1000)).toEqual({
      path: '/h/x',
      code: 'symlink',
      detail: '/h/x is a symbolic link; its mode is not reasserted through it',
    });
    expect(planMode({ ...base, role: 'private_dir', kind: 'file', mode: 0o755 }, 1000)).toEqual({
      path: '/h/x',
      code: 'not_regular',
      detail: '/h/x is not a directory; left alone',
    });
    expect(planMode({ ...base, role: 'home', kind: 'other', mode: 0o755 }, 1000)).toEqual({
      path: '/h/x',
      code: 'not_regular',
      detail: '/h/x is not a directory; left alone',
    });
    expect(planMode({ ...base, role: 'private_file', kind: 'dir', mode: 0o644 }, 1000)).toEqual({
      path: '/h/x',
      code: 'not_regular',
      detail: '/h/x is not a regular file; left alone',
    });
    expect(planMode({ ...base, role: 'private_file', kind: 'file', mode: 0o644, uid: 0 }, 1000)).toEqual({
      path: '/h/x',
      code: 'foreign_owner',
      detail: '/h/x belongs to uid 0, not 1000; its mode is left alone',
    });
    expect(planMode({ ...base, role: 'private_file', kind: 'file', mode: 0o644, nlink: 3 }, 1000)).toEqual({
      path: '/h/x',
      code: 'hard_link',
      detail: '/h/x has 3 hard links; its mode is left alone',
    });
  });

  it("a path already at its mode is left alone even when it is another user's or hard-linked (nothing to say)", () => {
    expect(
      planMode({ ...base, role: 'private_file', kind: 'file', mode: 0o600, uid: 0, nlink: 2 }, 1000),
    ).toBeUndefined();
    expect(planMode({ ...base, role: 'private_dir', kind: 'dir', mode: 0o700, uid: 0 }, 1000)).toBeUndefined();
  });

  it('compares the permission bits only (the file type bits of st_mode are ignored); setuid/sticky bits are cleared', () => {
    expect(planMode({ ...base, role: 'private_file', kind: 'file', mode: 0o100600 }, 1000)).toBeUndefined();
    expect(planMode({ ...base, role: 'private_dir', kind: 'dir', mode: 0o40700 }, 1000)).toBeUndefined();
    expect(planMode({ ...base, role: 'private_dir', kind: 'dir', mode: 0o41700 }, 1000)).toEqual({
      path: '/h/x',
      from: 0o1700,
      to: 0o700,
    });
    expect(planMode({ ...base, role: 'private_file', kind: 'file', mode: 0o104600 }, 1000)).toEqual({
      path: '/h/x',
      from: 0o4600,
      to: 0o600,
    });
  });
});
