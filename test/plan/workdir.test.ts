// The pure choice of what goes with a removed session from beside its sessions root.
import { describe, expect, it } from 'vitest';
import { childEntryName, planBeside, planOrphans, type BesideFacts, type BesideJudge } from '../../src/plan/workdir.js';
import type { ChildEntry, LogEntry } from '../../src/runtime/workdir-scan.js';

const NOW = 1_800_000_000_000;
const DAY = 86_400_000;
const W = '/srv/app';
const id = { dev: 1n, ino: 2n };
const judge = (running: Record<string, 'alive' | 'dead'> = {}): BesideJudge => ({
  uid: 1000,
  nowMs: NOW,
  liveGraceMs: 3_600_000,
  running: (s) => running[s] ?? 'none',
});

function child(name: string, o: Partial<ChildEntry> = {}): ChildEntry {
  return {
    name,
    kind: 'dir',
    identity: id,
    uid: 1000,
    mtimeMs: NOW - 5 * DAY,
    sessions: [{ name: 'ses_c', lastWriteMs: NOW - 5 * DAY, hasSessionEnd: true }],
    ...o,
  };
}
function wlog(workId: string, o: Partial<LogEntry> = {}): LogEntry {
  return { name: `${workId}.log`, workId, kind: 'file', identity: id, uid: 1000, bytes: 4096, ...o };
}
function facts(
  children: ChildEntry[],
  logs: LogEntry[] = [],
  claimed: { c?: string[]; w?: string[] } = {},
): BesideFacts {
  return {
    workdir: W,
    children,
    logs,
    claimedChildren: new Set(claimed.c ?? []),
    claimedWorkIds: new Set(claimed.w ?? []),
  };
}
const del = (child: string, ended = true) => ({ delegationId: `del_${child}`, childWorkdir: child, ended });
const WRK = 'wrk_0190f0f0f0f07000800000000000000a';

describe('childEntryName', () => {
  it('accepts only a direct entry of W/.murmur/children', () => {
    expect(childEntryName('.murmur/children/worker-0123456789abcdef', W)).toBe('worker-0123456789abcdef');
    expect(childEntryName('.murmur/children/worker-0123456789abcdef/', W)).toBe('worker-0123456789abcdef');
    expect(childEntryName(`${W}/.murmur/children/worker-01`, W)).toBe('worker-01');
    for (const bad of [
      '../../x',
      '.murmur/children/..',
      '.murmur/children/../x',
      '.murmur/children/a/b',
      '/etc',
      '/srv/other/.murmur/children/a',
      './.murmur/children/a',
      'children/a',
      '.murmur/children/.hidden',
      '.murmur/children/',
      '',
    ]) {
      expect(childEntryName(bad, W), bad).toBeUndefined();
    }
  });
});

describe('planBeside', () => {
  it('takes finished children (terminal line or final completion.json) and the named logs', () => {
    const p = planBeside(
      [
        {
          session: 'ses_p',
          delegations: [del('.murmur/children/a'), del('.murmur/children/b', false)],
          workIds: [WRK],
        },
      ],
      facts(
        [child('a'), child('b', { completion: 'terminated' })],
        [wlog(WRK), wlog('wrk_0190f0f0f0f07000800000000000000b')],
      ),
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
      [
        {
          session: 'ses_p',
          delegations: ['u', 'live', 'run', 'deep', 'claimed'].map((n) => del(`.murmur/children/${n}`, n !== 'u')),
          workIds: [WRK],
        },
      ],
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
      [
        {
          session: 'ses_p',
          delegations: [
            del('../../x'),
            del('.murmur/children/l'),
            del('.murmur/children/f'),
            del('.murmur/children/o'),
          ],
          workIds: [WRK],
        },
      ],
      facts(
        [child('l', { kind: 'symlink' }), child('f', { kind: 'other' }), child('o', { uid: 0 })],
        [wlog(WRK, { kind: 'symlink' })],
      ),
      judge(),
    );
    expect(p.remove).toEqual([]);
    expect(p.skip.map((s) => s.code)).toEqual([
      'child_workdir_outside',
      'symlink',
      'not_regular',
      'foreign_owner',
      'symlink',
    ]);
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
  const old = (name: string, o: Partial<ChildEntry> = {}) =>
    child(name, {
      mtimeMs: NOW - 40 * DAY,
      sessions: [{ name: `ses_${name}`, lastWriteMs: NOW - 40 * DAY, hasSessionEnd: true }],
      ...o,
    });
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

describe('childEntryName, the exact shape', () => {
  it('W may be configured with trailing slashes; a sibling of W of the same length is outside', () => {
    expect(childEntryName(`${W}/.murmur/children/a`, `${W}/`)).toBe('a');
    expect(childEntryName(`${W}/.murmur/children/a`, `${W}//`)).toBe('a');
    expect(childEntryName('/srv/apq/.murmur/children/a', W)).toBeUndefined();
    expect(childEntryName('/srv/apq/.murmur/children/a', `${W}/`)).toBeUndefined();
  });

  it('both directory names must be exactly .murmur/children', () => {
    for (const bad of [
      'x/children/a',
      '.murmur/kids/a',
      '.Murmur/children/a',
      `${W}/x/children/a`,
      `${W}/.murmur/kids/a`,
    ]) {
      expect(childEntryName(bad, W), bad).toBeUndefined();
    }
  });
});

describe('what planBeside says when it keeps something (the report, -v and the JSON show these words)', () => {
  it('children: outside, link, not a directory, another user, claimed, unfinished, live, unjudgeable', () => {
    const names = ['l', 'f', 'o', 'claimed', 'u', 'live', 'deep'];
    const p = planBeside(
      [
        {
          session: 'ses_p',
          delegations: [del('../../x'), ...names.map((n) => del(`.murmur/children/${n}`, n !== 'u'))],
          workIds: [],
        },
      ],
      facts(
        [
          child('l', { kind: 'symlink' }),
          child('f', { kind: 'other' }),
          child('o', { uid: 0 }),
          child('claimed'),
          child('u'),
          child('live', { sessions: [{ name: 'ses_l', lastWriteMs: NOW - 10_000, hasSessionEnd: true }] }),
          child('deep', { unjudged: 'nested deeper than 8 levels' }),
        ],
        [],
        { c: ['claimed'] },
      ),
      judge(),
    );
    const C = `${W}/.murmur/children`;
    expect(p.remove).toEqual([]);
    expect(p.skip).toEqual([
      {
        session: 'ses_p',
        target: `${W}/.murmur/ses_p`,
        code: 'child_workdir_outside',
        detail: `ses_p's trace names a child workdir outside ${W}/.murmur/children (delegation del_../../x); nothing there is touched`,
      },
      {
        session: 'ses_p',
        target: `${C}/l`,
        code: 'symlink',
        detail: `${C}/l (child of ses_p): a symbolic link; never followed, kept`,
      },
      {
        session: 'ses_p',
        target: `${C}/f`,
        code: 'not_regular',
        detail: `${C}/f (child of ses_p): not a directory; kept`,
      },
      {
        session: 'ses_p',
        target: `${C}/o`,
        code: 'foreign_owner',
        detail: `${C}/o (child of ses_p): belongs to uid 0; kept`,
      },
      {
        session: 'ses_p',
        target: `${C}/claimed`,
        code: 'child_kept',
        detail: `${C}/claimed (child of ses_p): a session that stays names it too; kept`,
      },
      {
        session: 'ses_p',
        target: `${C}/u`,
        code: 'child_kept',
        detail: `${C}/u (child of ses_p): not finished (no terminal delegation line, no final completion.json); kept`,
      },
      {
        session: 'ses_p',
        target: `${C}/live`,
        code: 'child_kept',
        detail: `${C}/live (child of ses_p): its session ses_l is live (its trace was written in the last 60 s); kept`,
      },
      {
        session: 'ses_p',
        target: `${C}/deep`,
        code: 'child_kept',
        detail: `${C}/deep (child of ses_p): nothing inside can be judged (nested deeper than 8 levels); kept`,
      },
    ]);
  });

  it('logs: link, not a regular file, another user, claimed', () => {
    const ids = ['a', 'b', 'c', 'd'].map((x) => `wrk_0190f0f0f0f07000800000000000000${x}`);
    const p = planBeside(
      [{ session: 'ses_p', delegations: [], workIds: ids }],
      facts(
        [],
        [
          wlog(ids[0]!, { kind: 'symlink' }),
          wlog(ids[1]!, { kind: 'other' }),
          wlog(ids[2]!, { uid: 0 }),
          wlog(ids[3]!),
        ],
        { w: [ids[3]!] },
      ),
      judge(),
    );
    const L = `${W}/logs`;
    expect(p.remove).toEqual([]);
    expect(p.skip).toEqual([
      {
        session: 'ses_p',
        target: `${L}/${ids[0]}.log`,
        code: 'symlink',
        detail: `${L}/${ids[0]}.log (log of ses_p): a symbolic link; never followed, kept`,
      },
      {
        session: 'ses_p',
        target: `${L}/${ids[1]}.log`,
        code: 'not_regular',
        detail: `${L}/${ids[1]}.log (log of ses_p): not a regular file; kept`,
      },
      {
        session: 'ses_p',
        target: `${L}/${ids[2]}.log`,
        code: 'foreign_owner',
        detail: `${L}/${ids[2]}.log (log of ses_p): belongs to uid 0; kept`,
      },
      {
        session: 'ses_p',
        target: `${L}/${ids[3]}.log`,
        code: 'child_kept',
        detail: `${L}/${ids[3]}.log (log of ses_p): a session that stays names it too; kept`,
      },
    ]);
  });

  it('a log two removed sessions name goes once', () => {
    const p = planBeside(
      [
        { session: 'ses_1', delegations: [], workIds: [WRK] },
        { session: 'ses_2', delegations: [], workIds: [WRK] },
      ],
      facts([], [wlog(WRK)]),
      judge(),
    );
    expect(p).toEqual({ remove: [{ kind: 'work_log', name: `${WRK}.log`, session: 'ses_1' }], skip: [] });
  });
});

describe('why planOrphans keeps an orphan (status and the report show these words)', () => {
  const old = (name: string, o: Partial<ChildEntry> = {}) =>
    child(name, {
      mtimeMs: NOW - 40 * DAY,
      sessions: [{ name: `ses_${name}`, lastWriteMs: NOW - 40 * DAY, hasSessionEnd: true }],
      ...o,
    });

  it('each reason in its own words', () => {
    expect(planOrphans([old('a')], new Set(), undefined, false, judge())).toEqual([
      { name: 'a', lastWriteMs: NOW - 40 * DAY, remove: false, why: 'no children.max_age policy for this root' },
    ]);
    const kids = [
      old('link', { kind: 'symlink' }),
      old('other', { kind: 'other' }),
      old('theirs', { uid: 0 }),
      old('young', { sessions: [{ name: 'ses_y', lastWriteMs: NOW - DAY, hasSessionEnd: true }] }),
      old('live', { sessions: [{ name: 'ses_r', lastWriteMs: NOW - 40 * DAY, hasSessionEnd: true }] }),
      old('dead', { sessions: [{ name: 'ses_d', lastWriteMs: NOW - 40 * DAY, hasSessionEnd: false }] }),
    ];
    expect(
      planOrphans(kids, new Set(), 30 * DAY, false, judge({ ses_r: 'alive' })).map((v) => [v.name, v.remove, v.why]),
    ).toEqual([
      ['link', false, 'a symbolic link'],
      ['other', false, 'not a directory'],
      ['theirs', false, 'belongs to uid 0'],
      ['young', false, 'younger than children.max_age'],
      ['live', false, 'its session ses_r is live (its running record names a live process)'],
      ['dead', false, 'its session ses_d never finished (no session_end)'],
    ]);
    expect(planOrphans([old('a')], new Set(), 30 * DAY, true, judge())).toEqual([
      {
        name: 'a',
        lastWriteMs: NOW - 40 * DAY,
        remove: false,
        why: 'a session of this root has no readable trace: it may name this child',
      },
    ]);
  });

  it('the age is exact: written exactly children.max_age ago stays, a millisecond earlier goes', () => {
    const at = (ms: number) =>
      old('a', { mtimeMs: NOW - ms, sessions: [{ name: 'ses_a', lastWriteMs: NOW - ms, hasSessionEnd: true }] });
    expect(planOrphans([at(30 * DAY)], new Set(), 30 * DAY, false, judge())[0]).toMatchObject({
      remove: false,
      why: 'younger than children.max_age',
    });
    expect(planOrphans([at(30 * DAY + 1)], new Set(), 30 * DAY, false, judge())[0]).toEqual({
      name: 'a',
      lastWriteMs: NOW - 30 * DAY - 1,
      remove: true,
    });
  });
});
