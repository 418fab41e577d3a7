// The pure choice of what goes with a removed session from beside its sessions root.
import { describe, expect, it } from 'vitest';
import { childEntryName, planBeside, planOrphans, type BesideFacts, type BesideJudge } from '../../src/plan/workdir.js';
import type { ChildEntry, LogEntry } from '../../src/runtime/workdir-scan.js';

const NOW = 1_800_000_000_000;
const DAY = 86_400_000;
const W = '/srv/app';
const id = { dev: 1n, ino: 2n };
const judge = (running: Record<string, 'alive' | 'dead'> = {}): BesideJudge => ({ uid: 1000, nowMs: NOW, liveGraceMs: 3_600_000, running: (s) => running[s] ?? 'none' });

function child(name: string, o: Partial<ChildEntry> = {}): ChildEntry {
  return { name, kind: 'dir', identity: id, uid: 1000, mtimeMs: NOW - 5 * DAY, sessions: [{ name: 'ses_c', lastWriteMs: NOW - 5 * DAY, hasSessionEnd: true }], ...o };
}
function wlog(workId: string, o: Partial<LogEntry> = {}): LogEntry {
  return { name: `${workId}.log`, workId, kind: 'file', identity: id, uid: 1000, bytes: 4096, ...o };
}
function facts(children: ChildEntry[], logs: LogEntry[] = [], claimed: { c?: string[]; w?: string[] } = {}): BesideFacts {
  return { workdir: W, children, logs, claimedChildren: new Set(claimed.c ?? []), claimedWorkIds: new Set(claimed.w ?? []) };
}
const del = (child: string, ended = true) => ({ delegationId: `del_${child}`, childWorkdir: child, ended });
const WRK = 'wrk_0190f0f0f0f07000800000000000000a';

describe('childEntryName', () => {
  it('accepts only a direct entry of W/.murmur/children', () => {
    expect(childEntryName('.murmur/children/worker-0123456789abcdef', W)).toBe('worker-0123456789abcdef');
    expect(childEntryName('.murmur/children/worker-0123456789abcdef/', W)).toBe('worker-0123456789abcdef');
    expect(childEntryName(`${W}/.murmur/children/worker-01`, W)).toBe('worker-01');
    for (const bad of ['../../x', '.murmur/children/..', '.murmur/children/../x', '.murmur/children/a/b', '/etc', '/srv/other/.murmur/children/a', './.murmur/children/a', 'children/a', '.murmur/children/.hidden', '.murmur/children/', '']) {
      expect(childEntryName(bad, W), bad).toBeUndefined();
    }
  });
});

describe('planBeside', () => {
  it('takes finished children (terminal line or final completion.json) and the named logs', () => {
    const p = planBeside(
      [{ session: 'ses_p', delegations: [del('.murmur/children/a'), del('.murmur/children/b', false)], workIds: [WRK] }],
      facts([child('a'), child('b', { completion: 'terminated' })], [wlog(WRK), wlog('wrk_0190f0f0f0f07000800000000000000b')]),
      judge(),
    );
    expect(p.remove).toEqual([
      { kind: 'child_workdir', name: 'a', session: 'ses_p' },
      { kind: 'child_workdir', name: 'b', session: 'ses_p' },
      { kind: 'work_log', name: `${WRK}.log`, session: 'ses_p' },
    ]);
    expect(p.skip).toEqual([]);
  });

  it('keeps an unfinished child, a live one, an unjudgeable one, and one a staying session names', () => {
    const p = planBeside(
      [{ session: 'ses_p', delegations: ['u', 'live', 'run', 'deep', 'claimed'].map((n) => del(`.murmur/children/${n}`, n !== 'u')), workIds: [WRK] }],
      facts(
        [
          child('u'),
          child('live', { sessions: [{ name: 'ses_l', lastWriteMs: NOW - 10_000, hasSessionEnd: true }] }),
          child('run', { sessions: [{ name: 'ses_r', lastWriteMs: NOW - 5 * DAY, hasSessionEnd: false }] }),
          child('deep', { unjudged: 'too deep' }),
          child('claimed'),
        ],
        [wlog(WRK)],
        { c: ['claimed'], w: [WRK] },
      ),
      judge({ ses_r: 'alive' }),
    );
    expect(p.remove).toEqual([]);
    expect(p.skip.map((s) => [s.target, s.code])).toEqual([
      [`${W}/.murmur/children/u`, 'child_kept'],
      [`${W}/.murmur/children/live`, 'child_kept'],
      [`${W}/.murmur/children/run`, 'child_kept'],
      [`${W}/.murmur/children/deep`, 'child_kept'],
      [`${W}/.murmur/children/claimed`, 'child_kept'],
      [`${W}/logs/${WRK}.log`, 'child_kept'],
    ]);
  });

  it('refuses a path outside children/, links, other kinds and other users', () => {
    const p = planBeside(
      [{ session: 'ses_p', delegations: [del('../../x'), del('.murmur/children/l'), del('.murmur/children/f'), del('.murmur/children/o')], workIds: [WRK] }],
      facts([child('l', { kind: 'symlink' }), child('f', { kind: 'other' }), child('o', { uid: 0 })], [wlog(WRK, { kind: 'symlink' })]),
      judge(),
    );
    expect(p.remove).toEqual([]);
    expect(p.skip.map((s) => s.code)).toEqual(['child_workdir_outside', 'symlink', 'not_regular', 'foreign_owner', 'symlink']);
  });

  it('a child two removed sessions name goes once', () => {
    const p = planBeside(
      [
        { session: 'ses_1', delegations: [del('.murmur/children/a')], workIds: [] },
        { session: 'ses_2', delegations: [del('.murmur/children/a')], workIds: [] },
      ],
      facts([child('a')]),
      judge(),
    );
    expect(p.remove).toEqual([{ kind: 'child_workdir', name: 'a', session: 'ses_1' }]);
  });
});

describe('planOrphans', () => {
  const old = (name: string, o: Partial<ChildEntry> = {}) => child(name, { mtimeMs: NOW - 40 * DAY, sessions: [{ name: `ses_${name}`, lastWriteMs: NOW - 40 * DAY, hasSessionEnd: true }], ...o });
  it('tied children are not orphans; without a policy every orphan stays', () => {
    const v = planOrphans([old('a'), old('b')], new Set(['a']), undefined, false, judge());
    expect(v.map((x) => [x.name, x.remove])).toEqual([['b', false]]);
    expect(v[0]?.lastWriteMs).toBe(NOW - 40 * DAY);
  });
  it('under a policy: only old, finished, judgeable directories of ours go, and none while a trace is unreadable', () => {
    const kids = [
      old('go'),
      old('young', { sessions: [{ name: 'ses_y', lastWriteMs: NOW - DAY, hasSessionEnd: true }] }),
      old('dead', { sessions: [{ name: 'ses_d', lastWriteMs: NOW - 40 * DAY, hasSessionEnd: false }] }),
      old('running', { sessions: [{ name: 'ses_r', lastWriteMs: NOW - 40 * DAY, hasSessionEnd: true }] }),
      old('deep', { unjudged: 'too deep' }),
      old('link', { kind: 'symlink' }),
      old('theirs', { uid: 0 }),
      old('empty', { sessions: [] }),
    ];
    const v = planOrphans(kids, new Set(), 30 * DAY, false, judge({ ses_r: 'alive' }));
    expect(v.filter((x) => x.remove).map((x) => x.name)).toEqual(['go', 'empty']);
    expect(planOrphans(kids, new Set(), 30 * DAY, true, judge()).some((x) => x.remove)).toBe(false);
  });
});
