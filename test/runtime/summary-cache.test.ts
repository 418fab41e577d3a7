// The trace/record cache answers a lookup from the file's bytes in place when the line is the one
// looked up and its entry has the common form; every other line and entry takes the general JSON
// parse. The two must never disagree: on thousands of generated entries — valid ones of every
// shape, and the same entries corrupted, truncated, respelled, of the wrong kind, looked up with a
// changed file state — a directory whose lines are matched in place answers exactly as one whose
// path JSON escapes (whose lines always take the general parse). Also: storing back what a lookup
// returned re-encodes nothing, and a changed value still changes the cache.
import { describe, expect, it } from 'vitest';
import {
  CompactTrace,
  MemoryTraceCache,
  type CachedRecord,
  type TraceFileState,
} from '../../src/runtime/summary-cache.js';
import { parseHeaderLine, type RecordHeader } from '../../src/runtime/record.js';
import type { DetachedWork, TraceSummary } from '../../src/runtime/trace.js';
import { hex, idAt, prng } from '../helpers/fixtures.js';

/** Matched in place: JSON writes it as it is. */
const FAST = '/r/app/.murmur';
/** Its key is JSON-escaped (a quote): every line of it takes the general parse. */
const SLOW = '/r/a "q"/.murmur';

/** A cache loaded from these lines, as loadTraceCache indexes and reads a file. */
function cacheOf(lines: string[]): MemoryTraceCache {
  const buf = Buffer.from(lines.join('\n'));
  const c = new MemoryTraceCache();
  c.indexLines(buf, 0, buf.length, 0);
  c.indexed(
    (start, end, into, at) => buf.copy(into, at, start, end),
    () => undefined,
  );
  return c;
}

function line(kind: 'T' | 'R', dir: string, name: string, entry: string): string {
  return `${kind}\t${JSON.stringify(`${dir}/${name}/${kind === 'T' ? 'trace' : 'conversation'}.jsonl`)}\t${entry}`;
}

/** The entry text the cache writes for a trace / a record (the third field of its line). */
function traceEntry(st: TraceFileState, s: TraceSummary): string {
  const c = new MemoryTraceCache();
  c.set(FAST, 'ses_x', st, s);
  return [...c.lines()][0]!.split('\t')[2]!;
}
function recordEntry(st: TraceFileState, r: CachedRecord): string {
  const c = new MemoryTraceCache();
  c.setRecord(FAST, 'ctx_x', st, r);
  return [...c.lines()][0]!.split('\t')[2]!;
}

/** Everything a caller can read of a summary (a CompactTrace's getters included). */
function plain(s: TraceSummary | undefined): unknown {
  if (!s) return s;
  const out: Record<string, unknown> = {
    compact: s instanceof CompactTrace,
    sessionStart: s.sessionStart,
    unaccountedMore: s.unaccountedMore,
    contextIds: [...s.contextIds],
    hasSessionEnd: s.hasSessionEnd,
    taskTrust: { ...s.taskTrust },
    unaccounted: s.unaccounted.map((w) => ({ ...w })),
    endsWithNewline: s.endsWithNewline,
    invalidLines: s.invalidLines,
    utf8: s.utf8,
    workIds: [...(s.workIds ?? [])],
    delegations: (s.delegations ?? []).map((d) => ({ ...d })),
  };
  if (s instanceof CompactTrace)
    Object.assign(out, { identity: s.identity, size: s.size, mtimeMs: s.mtimeMs, fromCache: s.fromCache, ok: s.ok });
  return out;
}

const pick = <T>(rnd: () => number, xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;

function randomState(rnd: () => number): TraceFileState {
  const mtime = 1_700_000_000_000 + Math.floor(rnd() * 1e11);
  return {
    dev: String(pick(rnd, [2049, 65024, 0, 4_294_967_295])),
    ino: String(pick(rnd, [1, 2_476_188, 9_007_199_254_740_993, Math.floor(rnd() * 1e9)])),
    size: pick(rnd, [0, 1, 6617, Math.floor(rnd() * 1e7), 999_999_999_999_999]),
    // (an integral mtime as a sweep's bigint stat gives; now and then a fractional one)
    mtimeMs: rnd() < 0.1 ? mtime + 0.5 : mtime,
  };
}

const CONTEXTS = [
  'ctx_e5b58340a5f43c8161e690d19dd28604',
  'ctx_a',
  '',
  'ctx "quoted"',
  'ctx_é',
  'ctx\\back',
  'ctx\ttab',
  'ctx_\u{1F600}',
];

function randomSummary(rnd: () => number): TraceSummary {
  const work: DetachedWork[] =
    rnd() < 0.15
      ? [
          {
            workId: `wrk_${hex(7).padStart(32, '0')}`,
            detachedAtMs: 5,
            detachedAtText: '5',
            taskId: rnd() < 0.5 ? 't1' : null,
            at: pick(rnd, [0, 17, 123_456_789_012]),
            length: pick(rnd, [1, 330, 33_554_432]),
          },
        ]
      : [];
  const more = rnd() < 0.05;
  const s: TraceSummary = {
    sessionStart:
      (work.length || more) && rnd() < 0.7
        ? { at: pick(rnd, [0, 401]), length: pick(rnd, [90, 1_000_000]) }
        : undefined,
    contextIds: Array.from({ length: Math.floor(rnd() * 4) }, () =>
      rnd() < 0.8 ? `ctx_${Math.floor(rnd() * 1e6).toString(16)}` : pick(rnd, CONTEXTS),
    ),
    hasSessionEnd: rnd() < 0.5,
    taskTrust: work.length && work[0]!.taskId ? { t1: pick(rnd, ['trusted', 'untrusted'] as const) } : {},
    unaccounted: work,
    ...(more ? { unaccountedMore: true } : {}),
    endsWithNewline: rnd() < 0.8,
    invalidLines: pick(rnd, [0, 0, 0, 1, 7, 123_456_789_012_345]),
    utf8: rnd() < 0.9,
  };
  if (rnd() < 0.5)
    s.workIds = Array.from({ length: 1 + Math.floor(rnd() * 3) }, () =>
      idAt('wrk_', 1_750_000_000_000 + Math.floor(rnd() * 1e9)),
    ).sort();
  if (rnd() < 0.1)
    s.delegations = [
      { delegationId: 'del_1', childWorkdir: pick(rnd, ['.murmur/children/w-1', '../x "y"']), ended: rnd() < 0.5 },
    ];
  return s;
}

const HEADERS = [
  '{"type":"murmur.record","capsule":"ops","created_ms":1775295295378}',
  '{"type":"murmur.record","capsule":"café \\"q\\"","created_ms":18446744073709551615}',
  '{"type":"murmur.record","capsule":"shey","created_ms":5,"truncated":{"dropped":3,"oldest_surviving_id":"msg_a","last_dropped_id":"msg_b","at_ms":9}}',
];

function randomRecord(rnd: () => number): CachedRecord {
  const r: CachedRecord = {
    header: rnd() < 0.2 ? null : (parseHeaderLine(pick(rnd, HEADERS)) as RecordHeader),
    unreadable: rnd() < 0.1,
  };
  if (rnd() < 0.7) r.messages = pick(rnd, [0, 1, 261, 999_999]);
  if (rnd() < 0.7) r.terminated = rnd() < 0.5;
  return r;
}

/** One change to an entry's text: a character replaced, inserted or dropped, or the text cut short. */
function corrupt(rnd: () => number, text: string): string {
  const at = Math.floor(rnd() * (text.length + 1));
  const ch = pick(rnd, ['0', '1', '9', '-', '.', 'e', '"', ',', '[', ']', '{', '\\', ' ', 'n', 'é', '\u0000']);
  switch (Math.floor(rnd() * 4)) {
    case 0:
      return text.slice(0, at) + ch + text.slice(at + 1);
    case 1:
      return text.slice(0, at) + ch + text.slice(at);
    case 2:
      return text.slice(0, at) + text.slice(at + 1);
    default:
      return text.slice(0, at);
  }
}

/** The state a lookup asks with: the entry's own, or one field of it different. */
function askedState(rnd: () => number, st: TraceFileState): TraceFileState {
  switch (Math.floor(rnd() * 8)) {
    case 0:
      return { ...st, dev: String(Number(st.dev) + 1) };
    case 1:
      return { ...st, ino: `${st.ino}0` };
    case 2:
      return { ...st, size: st.size + 1 };
    case 3:
      return { ...st, mtimeMs: st.mtimeMs + 1 };
    default:
      return st;
  }
}

interface Case {
  kind: 'T' | 'R';
  name: string;
  entry: string;
  asked: TraceFileState;
  /** also ask has() first (the scan does, for traces) */
  has: boolean;
}

function cases(seed: number, n: number): Case[] {
  const rnd = prng(seed);
  const out: Case[] = [];
  for (let i = 0; i < n; i++) {
    const kind = rnd() < 0.7 ? 'T' : 'R';
    const st = randomState(rnd);
    let entry = kind === 'T' ? traceEntry(st, randomSummary(rnd)) : recordEntry(st, randomRecord(rnd));
    const r = rnd();
    if (r < 0.35) entry = corrupt(rnd, entry);
    else if (r < 0.4)
      entry = kind === 'T' ? recordEntry(st, randomRecord(rnd)) : traceEntry(st, randomSummary(rnd)); // the other kind's entry
    else if (r < 0.45)
      entry = entry.replace(/^\["(\d+)"/, '[$1'); // dev as a number
    else if (r < 0.47)
      entry = entry.replace(/,(\d+),(\d+),/, ',$1.0,$2,'); // size respelled
    else if (r < 0.5) entry = entry.replace(/,(\d+),(\d+),/, pick(rnd, [',0$1,$2,', ',$1,0$2,'])); // a leading zero
    // a name of its own per case; now and then one that is not plain ASCII
    const name = rnd() < 0.05 ? `ses_é${i}` : idAt(kind === 'T' ? 'ses_' : 'ctx_', 1_750_000_000_000 + i);
    out.push({ kind, name, entry, asked: askedState(rnd, st), has: rnd() < 0.6 });
  }
  return out;
}

function lookUp(c: MemoryTraceCache, dir: string, k: Case): unknown {
  if (k.kind === 'R') return c.getRecord(dir, k.name, k.asked);
  const had = k.has ? c.has(dir, k.name) : undefined;
  return { had, got: plain(c.get(dir, k.name, k.asked)) };
}

describe('an entry read in place answers as the general parse does', () => {
  for (const seed of [1, 2, 3, 4]) {
    it(`seed ${seed}: 1 500 entries, valid and corrupted, looked up in order`, () => {
      const all = cases(seed, 1500);
      const fast = cacheOf(all.map((k) => line(k.kind, FAST, k.name, k.entry)));
      const slow = cacheOf(all.map((k) => line(k.kind, SLOW, k.name, k.entry)));
      let hits = 0;
      for (const k of all) {
        const want = lookUp(slow, SLOW, k);
        expect(lookUp(fast, FAST, k), `${k.kind} ${k.entry} asked ${JSON.stringify(k.asked)}`).toEqual(want);
        if (k.kind === 'R' ? want : (want as { got: unknown }).got) hits++;
      }
      // (both answers are often hits, so the comparison means something)
      expect(hits).toBeGreaterThan(300);
      expect(fast.changed).toBe(slow.changed);
      expect([...fast.lines()].map((l) => l.split('\t')[2])).toEqual([...slow.lines()].map((l) => l.split('\t')[2]));
    });
  }

  it('a valid entry comes back as it was stored, whichever way it is read', () => {
    const rnd = prng(9);
    for (let i = 0; i < 300; i++) {
      const st = randomState(rnd);
      const s = randomSummary(rnd);
      const r = randomRecord(rnd);
      const lines = [line('T', FAST, 'ses_1', traceEntry(st, s)), line('R', FAST, 'ctx_1', recordEntry(st, r))];
      const c = cacheOf(lines);
      const got = c.get(FAST, 'ses_1', st);
      expect(
        got && {
          ...(plain(got) as object),
          compact: undefined,
          identity: undefined,
          size: undefined,
          mtimeMs: undefined,
          fromCache: undefined,
          ok: undefined,
        },
      ).toEqual({
        ...(plain(s) as object),
        compact: undefined,
        // what a cached summary keeps of session_start's line: only with unaccounted work
        sessionStart: s.unaccounted.length || s.unaccountedMore ? s.sessionStart : undefined,
        utf8: s.utf8 !== false,
      });
      expect(got instanceof CompactTrace).toBe(
        s.unaccounted.length === 0 && !s.unaccountedMore && !s.delegations?.length,
      );
      expect(c.getRecord(FAST, 'ctx_1', st)).toEqual({ ...r, unreadable: r.unreadable === true });
    }
  });

  it('a corrupt line, a truncated entry, an entry of the wrong kind: a miss, and the next line still serves', () => {
    const st: TraceFileState = { dev: '2049', ino: '77', size: 10, mtimeMs: 1_775_285_433_015 };
    const s: TraceSummary = {
      sessionStart: undefined,
      contextIds: ['ctx_a'],
      hasSessionEnd: true,
      taskTrust: {},
      unaccounted: [],
      endsWithNewline: true,
      invalidLines: 0,
      utf8: true,
    };
    const good = traceEntry(st, s);
    const rec = recordEntry(st, { header: null, messages: 3, terminated: true });
    const c = cacheOf([
      line('T', FAST, 'ses_a', good),
      'T\t"/r/app/.murmur/ses_b/trace.jsonl\t' + good, // key never closed
      `\u0000garbage\t${good}`,
      line('T', FAST, 'ses_c', good.slice(0, -3)), // truncated entry
      line('T', FAST, 'ses_d', rec), // a record's entry under a trace's key
      line('R', FAST, 'ses_e', good), // a trace's entry under a record's key
      line('T', FAST, 'ses_f', good.replace('"ctx_a"', '"ctx_a",7')), // a context id that is not a string
      line('T', FAST, 'ses_g', good),
      line('T', FAST, 'ses_i', `${good}x`), // bytes after the entry
      line('T', FAST, 'ses_j', good),
      line('T', FAST, 'ses_hh', good), // a name the one looked up (ses_h) begins
    ]);
    expect(c.get(FAST, 'ses_a', st)?.contextIds).toEqual(['ctx_a']);
    expect(c.get(FAST, 'ses_c', st)).toBeUndefined();
    expect(c.get(FAST, 'ses_d', st)).toBeUndefined();
    expect(c.get(FAST, 'ses_f', st)).toBeUndefined();
    expect(c.get(FAST, 'ses_g', st)?.contextIds).toEqual(['ctx_a']);
    expect(c.get(FAST, 'ses_i', st)).toBeUndefined();
    expect(c.get(FAST, 'ses_j', st)?.contextIds).toEqual(['ctx_a']);
    expect(c.has(FAST, 'ses_h')).toBe(false);
    expect(c.get(FAST, 'ses_hh', st)?.contextIds).toEqual(['ctx_a']);
    expect(c.get(FAST, 'ses_e', st)).toBeUndefined();
    expect(c.getRecord(FAST, 'ses_e', st)).toBeUndefined();
    expect(c.has(FAST, 'ses_b')).toBe(false);
  });

  it('has() then get() of the same line; a line consumed by a miss is not found again', () => {
    const st: TraceFileState = { dev: '2049', ino: '77', size: 10, mtimeMs: 5 };
    const s: TraceSummary = {
      sessionStart: undefined,
      contextIds: [],
      hasSessionEnd: false,
      taskTrust: {},
      unaccounted: [],
      endsWithNewline: true,
      invalidLines: 2,
      utf8: true,
    };
    const c = cacheOf([line('T', FAST, 'ses_a', traceEntry(st, s)), line('T', FAST, 'ses_b', traceEntry(st, s))]);
    expect(c.has(FAST, 'ses_a')).toBe(true);
    expect(c.has(FAST, 'ses_a')).toBe(true);
    expect(c.get(FAST, 'ses_a', { ...st, size: 11 })).toBeUndefined();
    expect(c.has(FAST, 'ses_a')).toBe(false);
    expect(c.get(FAST, 'ses_a', st)).toBeUndefined();
    expect(c.has(FAST, 'ses_b')).toBe(true);
    c.forget(FAST);
    expect(c.has(FAST, 'ses_b')).toBe(false);
    expect(c.get(FAST, 'ses_b', st)).toBeUndefined();
  });
});

describe('knowsDir: whether a scan should prepare for hits under a directory', () => {
  const st: TraceFileState = { dev: '2049', ino: '77', size: 10, mtimeMs: 5 };
  const s: TraceSummary = {
    sessionStart: undefined,
    contextIds: [],
    hasSessionEnd: true,
    taskTrust: {},
    unaccounted: [],
    endsWithNewline: true,
    invalidLines: 0,
    utf8: true,
  };
  const rec: CachedRecord = { header: null, unreadable: false, messages: 3, terminated: true };

  it('knows a directory by kind, from the loaded file and from what this sweep stored', () => {
    expect(new MemoryTraceCache().knowsDir('T', FAST)).toBe(false);
    const c = cacheOf([line('T', FAST, 'ses_a', traceEntry(st, s)), line('R', SLOW, 'ctx_a', recordEntry(st, rec))]);
    expect([
      c.knowsDir('T', FAST),
      c.knowsDir('T', `${FAST}/`),
      c.knowsDir('R', FAST),
      c.knowsDir('R', SLOW),
      c.knowsDir('T', SLOW),
      c.knowsDir('T', '/r/other'),
    ]).toEqual([true, true, false, true, false, false]);
    // still known while its lines are read (looked up in place, or parsed past) and once kept
    expect(c.has(FAST, 'ses_a')).toBe(true);
    expect(c.knowsDir('T', FAST)).toBe(true);
    expect(c.get(FAST, 'ses_a', st)).toBeDefined();
    expect(c.knowsDir('T', FAST)).toBe(true);
    const fresh = new MemoryTraceCache();
    fresh.setRecord('/h/conversations/ops', 'ctx_b', st, rec);
    expect([fresh.knowsDir('R', '/h/conversations/ops'), fresh.knowsDir('T', '/h/conversations/ops')]).toEqual([
      true,
      false,
    ]);
  });

  it('forgets a directory whose entries were loaded but not used', () => {
    const c = cacheOf([line('T', FAST, 'ses_a', traceEntry(st, s))]);
    c.forget(FAST);
    expect(c.knowsDir('T', FAST)).toBe(false);
  });
});

describe('storing back what a lookup returned', () => {
  const st: TraceFileState = { dev: '2049', ino: '77', size: 10, mtimeMs: 5 };
  // a header the runtime accepts, spelled with spaces (not how murmur-gc writes it)
  const spaced = `[${JSON.stringify(st.dev)},${JSON.stringify(st.ino)},10,5,${JSON.stringify('{"type": "murmur.record", "capsule": "ops", "created_ms": 7}')},4,0,1]`;

  it('the same value re-encodes nothing: the entry is kept as loaded and the cache is unchanged', () => {
    const c = cacheOf([line('R', FAST, 'ctx_a', spaced)]);
    const v = c.getRecord(FAST, 'ctx_a', st);
    expect(v).toMatchObject({ messages: 4, terminated: true, header: { capsule: 'ops', created_ms: 7n } });
    c.setRecord(FAST, 'ctx_a', st, { header: v!.header, unreadable: false, messages: 4, terminated: true });
    expect(c.changed).toBe(false);
    expect([...c.lines()]).toEqual([line('R', FAST, 'ctx_a', spaced)]);
  });

  it('a different value (or state) changes the cache', () => {
    for (const change of [
      (v: CachedRecord) => ({ ...v, messages: 5 }),
      (v: CachedRecord) => ({ ...v, terminated: false }),
      (v: CachedRecord) => ({ ...v, unreadable: true }),
      (v: CachedRecord) => ({ header: v.header, unreadable: false, terminated: true }),
      (v: CachedRecord) => ({ ...v, header: null }),
      (v: CachedRecord) => ({ ...v, header: { ...v.header!, capsule: 'shey' } }),
    ]) {
      const c = cacheOf([line('R', FAST, 'ctx_a', spaced)]);
      const v = c.getRecord(FAST, 'ctx_a', st)!;
      c.setRecord(FAST, 'ctx_a', st, change(v));
      expect(c.changed).toBe(true);
    }
    const c = cacheOf([line('R', FAST, 'ctx_a', spaced)]);
    const v = c.getRecord(FAST, 'ctx_a', st)!;
    c.setRecord(FAST, 'ctx_a', { ...st, size: 11 }, v);
    expect(c.changed).toBe(true);
  });
});
