// What a summary keeps of a trace is bounded whatever the trace holds (src/runtime/trace.ts,
// docs/limits.md), and the caps never change a verdict the wrong way:
// - on generated traces and small caps, the unaccounted work kept is always truly unaccounted (the
//   runtime's verdict, computed here without caps), with the values of its last `shell_detached`
//   line and that line's place; as much of it as the cap allows unless more accounted ids were
//   named than remembered; `unaccountedMore` whenever some is left out; a task's trust only ever
//   missing (untrusted), never another; and marking what is kept lost, sweep after sweep, reaches
//   every unaccounted work exactly once;
// - a summary holds no command or binary, and ids over MAX_ID_BYTES are never kept;
// - a `shell_lost` built from the bytes of its `shell_detached` line is byte for byte the line
//   built from the decoded strings; `message_parts_bytes` from lengths is the text's length; what
//   is shown of a command is bounded, the same however the command is spelled.
import { describe, expect, it } from 'vitest';
import {
  LineString,
  LostQuota,
  MAX_ID_BYTES,
  MAX_LOST_PER_TRACE,
  TraceAccumulator,
  detachedLine,
  lostReportBytes,
  lostReportText,
  lowestTrust,
  shellLostLine,
  shellLostLineBytes,
  type TraceLimits,
  type TraceSummary,
  type Trust,
} from '../../src/runtime/trace.js';
import { MemoryTraceCache } from '../../src/runtime/summary-cache.js';
import { T_STRING } from '../../src/json/scan.js';
import { prng } from '../helpers/fixtures.js';

const OUTCOMES = ['shell_completed', 'shell_abandoned', 'shell_lost'] as const;

interface Generated {
  lines: string[];
  /** the runtime's verdict, without caps: work id → its last detached line's index, stamp, task */
  exact: Map<string, { line: number; stamp: string; task: string | null }>;
  trust: Map<string, Trust>;
  accountedIds: number;
  taskIds: number;
}

function generate(rnd: () => number, pool: number, tasks: number, n: number): Generated {
  const lines: string[] = [];
  const detached = new Map<string, { line: number; stamp: string; task: string | null }>();
  const accounted = new Set<string>();
  const trust = new Map<string, Trust>();
  const taskSeen = new Set<string>();
  for (let i = 0; i < n; i++) {
    const id = `w${Math.floor(rnd() * pool)}`;
    const r = rnd();
    if (r < 0.45) {
      const stamp = String(Math.floor(rnd() * 1000));
      const task = rnd() < 0.8 ? `t${Math.floor(rnd() * tasks)}` : null;
      lines.push(
        JSON.stringify({
          event_type: 'shell_detached',
          event_id: `e${i}`,
          timestamp: Number(stamp),
          task_id: task,
          work_id: id,
          binary: '/bin/sh',
          command: `run ${i}`,
        }),
      );
      detached.set(id, { line: lines.length - 1, stamp, task });
    } else if (r < 0.75) {
      lines.push(JSON.stringify({ event_type: OUTCOMES[Math.floor(rnd() * 3)], work_id: id }));
      accounted.add(id);
    } else if (r < 0.9) {
      const task = `t${Math.floor(rnd() * tasks)}`;
      const t: Trust = rnd() < 0.5 ? 'trusted' : 'untrusted';
      lines.push(JSON.stringify({ event_type: 'task_start', task_id: task, trust: t }));
      trust.set(task, t);
      taskSeen.add(task);
    } else lines.push(JSON.stringify({ event_type: 'inference', text: 'x' }));
  }
  const exact = new Map([...detached].filter(([id]) => !accounted.has(id)));
  return { lines, exact, trust, accountedIds: accounted.size, taskIds: taskSeen.size };
}

/** The summary as readTraceSummary makes it: a first pass, and the second one it asks for. */
function summarize(buf: Buffer, limits?: TraceLimits): TraceSummary {
  const acc = new TraceAccumulator(limits);
  acc.addLines(buf);
  const again = acc.secondPass();
  again?.addLines(buf);
  return acc.finish(true, again);
}

const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

describe('the caps on unaccounted work (generated traces, small caps)', () => {
  it('keeps only truly unaccounted work, as much as the cap allows, and says when some is left', () => {
    const rnd = prng(41);
    let capped = 0;
    let secondPasses = 0;
    for (let t = 0; t < 3000; t++) {
      const limits: TraceLimits = {
        lost: [1, 2, 3, 5][Math.floor(rnd() * 4)]!,
        accounted: [1, 2, 3, 50][Math.floor(rnd() * 4)]!,
        trust: [1, 2, 50][Math.floor(rnd() * 3)]!,
        named: 1000,
      };
      const g = generate(rnd, 1 + Math.floor(rnd() * 10), 4, Math.floor(rnd() * 40));
      const text = g.lines.join('\n') + '\n';
      const buf = Buffer.from(text);
      const acc = new TraceAccumulator(limits);
      acc.addLines(buf);
      if (acc.secondPass()) secondPasses++;
      const s = summarize(buf, limits);
      const what = `${JSON.stringify(limits)}\n${text}`;
      const kept = s.unaccounted.map((w) => w.workId);
      expect(kept, what).toEqual([...kept].sort(byteOrder));
      expect(kept.length, what).toBeLessThanOrEqual(limits.lost);
      for (const w of s.unaccounted) {
        const e = g.exact.get(w.workId);
        expect(e, `${w.workId} is accounted for:\n${what}`).toBeDefined();
        expect([w.detachedAtText, w.taskId], what).toEqual([e!.stamp, e!.task]);
        // the place of its last shell_detached line
        expect(buf.subarray(w.at, w.at + w.length).toString(), what).toBe(g.lines[e!.line]);
        if (w.taskId !== null) expect([g.trust.get(w.taskId), undefined], what).toContain(s.taskTrust[w.taskId]);
        if (w.taskId !== null && g.taskIds <= limits.trust)
          expect(s.taskTrust[w.taskId], what).toBe(g.trust.get(w.taskId));
      }
      if (g.accountedIds <= limits.accounted) expect(kept.length, what).toBe(Math.min(limits.lost, g.exact.size));
      if (g.exact.size > kept.length) {
        capped++;
        expect(s.unaccountedMore, what).toBe(true);
      }
      if (g.exact.size === 0) expect(kept, what).toEqual([]);
    }
    expect(capped).toBeGreaterThan(300);
    expect(secondPasses).toBeGreaterThan(300);
  });

  it('marked lost as they are kept, sweep after sweep, every unaccounted work is marked exactly once', () => {
    const rnd = prng(43);
    for (let t = 0; t < 500; t++) {
      const limits: TraceLimits = { lost: 1 + Math.floor(rnd() * 3), accounted: 1000, trust: 1000, named: 1000 };
      const g = generate(rnd, 1 + Math.floor(rnd() * 12), 3, Math.floor(rnd() * 60));
      const lines = [...g.lines];
      const marked: string[] = [];
      for (let sweep = 0; ; sweep++) {
        expect(sweep).toBeLessThanOrEqual(Math.ceil(g.exact.size / limits.lost) + 1);
        const s = summarize(Buffer.from(lines.join('\n') + '\n'), limits);
        if (s.unaccounted.length === 0) {
          expect(s.unaccountedMore).toBeUndefined();
          break;
        }
        for (const w of s.unaccounted) {
          marked.push(w.workId);
          lines.push(JSON.stringify({ event_type: 'shell_lost', work_id: w.workId }));
        }
      }
      expect([...marked].sort()).toEqual([...g.exact.keys()].sort());
    }
  });

  it('a detached id left out while the cap was full is kept once the others are accounted for (a second pass)', () => {
    const lines = ['a', 'b', 'c'].map((w) =>
      JSON.stringify({ event_type: 'shell_detached', work_id: w, timestamp: 1 }),
    );
    lines.push(...['a', 'b'].map((w) => JSON.stringify({ event_type: 'shell_completed', work_id: w })));
    const s = summarize(Buffer.from(lines.join('\n')), { lost: 2, accounted: 10, trust: 10, named: 10 });
    expect(s.unaccounted.map((w) => w.workId)).toEqual(['c']);
    expect(s.unaccountedMore).toBeUndefined();
  });

  it('past the accounted ids it remembers, an id accounted for before its detached line is still not kept (a second pass)', () => {
    const lines = [
      JSON.stringify({ event_type: 'shell_completed', work_id: 'x' }),
      JSON.stringify({ event_type: 'shell_abandoned', work_id: 'y' }),
      JSON.stringify({ event_type: 'shell_detached', work_id: 'y', timestamp: 1 }),
      JSON.stringify({ event_type: 'shell_detached', work_id: 'z', timestamp: 2 }),
    ];
    const s = summarize(Buffer.from(lines.join('\n')), { lost: 5, accounted: 1, trust: 10, named: 10 });
    expect(s.unaccounted.map((w) => w.workId)).toEqual(['z']);
  });

  it('at the real cap: 4 097 unaccounted keep 4 096, the first in byte order, and say more wait', () => {
    const ids = Array.from({ length: MAX_LOST_PER_TRACE + 1 }, (_, i) => `wrk_${String(i).padStart(32, '0')}`);
    const s = summarize(
      Buffer.from(
        ids.map((w) => JSON.stringify({ event_type: 'shell_detached', work_id: w, timestamp: 1 })).join('\n'),
      ),
    );
    expect(s.unaccounted.map((w) => w.workId)).toEqual(ids.slice(0, MAX_LOST_PER_TRACE));
    expect(s.unaccountedMore).toBe(true);
  });

  it('a sweep holds what its quota allows across traces; the rest is said to wait', () => {
    const s = summarize(
      Buffer.from(['a', 'b', 'c'].map((w) => JSON.stringify({ event_type: 'shell_detached', work_id: w })).join('\n')),
    );
    const q = new LostQuota(4);
    expect(q.take(s)).toBe(s);
    const cut = q.take(s);
    expect([cut.unaccounted.map((w) => w.workId), cut.unaccountedMore]).toEqual([['a'], true]);
    expect(q.take(s).unaccounted).toEqual([]);
    expect(s.unaccounted).toHaveLength(3); // the summary itself (as cached) is whole
  });
});

describe('what a summary holds', () => {
  it('a trace naming more distinct context ids, work ids or child workdirs than the cap says so (it is then not judged)', () => {
    const limits: TraceLimits = { lost: 10, accounted: 10, trust: 10, named: 3 };
    const named = (lines: string[]) => {
      const acc = new TraceAccumulator(limits);
      acc.addLines(Buffer.from(lines.join('\n')));
      return acc.tooMany;
    };
    const ctx = (n: number) =>
      Array.from({ length: n }, (_, i) =>
        JSON.stringify({ event_type: 'task_start', task_id: 't', context_id: `ctx_${i % 4 === 3 ? 0 : i}` }),
      );
    expect(named(ctx(4))).toBeUndefined(); // three distinct, one repeated
    expect(named(ctx(5))).toBe('context ids');
    const wrk = (i: number) => `wrk_${String(i).padStart(32, '0')}`;
    expect(
      named(
        [0, 1, 2, 3].map((i) =>
          JSON.stringify({ event_type: i % 2 ? 'shell_completed' : 'shell_detached', work_id: wrk(i) }),
        ),
      ),
    ).toBe('work ids');
    expect(
      named(
        [0, 1, 2, 3].map((i) =>
          JSON.stringify({ event_type: 'delegation_start', delegation_id: `d${i}`, child_workdir: 'x' }),
        ),
      ),
    ).toBe('child workdirs');
  });

  it('no command or binary, in the summary nor in its cache entry', () => {
    const lines = [
      JSON.stringify({ event_type: 'session_start', event_id: 'evt_s', context_id: 'ctx_a' }),
      JSON.stringify({
        event_type: 'shell_detached',
        work_id: 'wrk_1',
        task_id: 't1',
        binary: '/opt/SECRET-BINARY',
        command: `SECRET-COMMAND ${'x'.repeat(5000)}`,
        timestamp: 5,
      }),
    ];
    const s = summarize(Buffer.from(lines.join('\n') + '\n'));
    expect(s.unaccounted).toHaveLength(1);
    const cache = new MemoryTraceCache();
    cache.set('/r', 'ses_1', { dev: '1', ino: '2', size: 3, mtimeMs: 4 }, s);
    for (const text of [JSON.stringify(s), [...cache.lines()].join('\n')]) {
      expect(text).not.toContain('SECRET');
      expect(text.length).toBeLessThan(400);
    }
  });

  it('ids over MAX_ID_BYTES are not kept: such work is not reconciled, such a task joins nothing, such a context names no record', () => {
    const long = 'w'.repeat(MAX_ID_BYTES + 1);
    const longTask = 't'.repeat(MAX_ID_BYTES + 1);
    const max = `ctx_${'c'.repeat(MAX_ID_BYTES - 4)}`;
    const lines = [
      JSON.stringify({ event_type: 'session_start', event_id: 'e', context_id: `ctx_${'c'.repeat(MAX_ID_BYTES)}` }),
      JSON.stringify({ event_type: 'task_start', task_id: longTask, trust: 'trusted', context_id: max }),
      JSON.stringify({ event_type: 'shell_detached', work_id: long, timestamp: 1 }),
      JSON.stringify({ event_type: 'shell_detached', work_id: 'wrk_short', task_id: longTask, timestamp: 2 }),
      // an id spelled with escapes is judged by its value: this one is short
      `{"event_type":"shell_detached","work_id":"${'\\u0061'.repeat(100)}","timestamp":3}`,
      JSON.stringify({
        event_type: 'delegation_start',
        delegation_id: 'd'.repeat(MAX_ID_BYTES + 1),
        child_workdir: '.murmur/children/c-1',
      }),
      JSON.stringify({
        event_type: 'delegation_start',
        delegation_id: 'd2',
        child_workdir: `.murmur/children/${'x'.repeat(5000)}`,
      }),
      JSON.stringify({ event_type: 'delegation', delegation_id: 'd'.repeat(MAX_ID_BYTES + 1) }),
    ];
    const s = summarize(Buffer.from(lines.join('\n') + '\n'));
    expect(s.unaccounted.map((w) => [w.workId, w.taskId])).toEqual([
      ['a'.repeat(100), null],
      ['wrk_short', null],
    ]);
    expect(lowestTrust(s, s.unaccounted)).toBe('untrusted');
    expect(s.contextIds).toEqual([max]);
    expect(s.delegations).toEqual([
      { delegationId: '', childWorkdir: '.murmur/children/c-1', ended: false },
      { delegationId: 'd2', childWorkdir: '', ended: false },
    ]);
  });
});

/** `s` spelled as a JSON string, each character as it is or as `\uXXXX`, at random. */
function spell(rnd: () => number, s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0) as number;
    if (rnd() < 0.7 || cp > 0xffff) out += JSON.stringify(ch).slice(1, -1);
    else out += `\\u${cp.toString(16).padStart(4, '0')}`;
  }
  return out + '"';
}

const PIECES = ['a', 'run ', '"', '\\', '\n', '\t', '\u0001', '/', 'é', '😀', '\u2028', 'x'.repeat(300)];

describe('a shell_lost line from the bytes of its shell_detached line', () => {
  it('is byte for byte the line built from the decoded strings, on 2 000 generated lines', () => {
    const rnd = prng(5);
    for (let t = 0; t < 2000; t++) {
      const str = () =>
        Array.from({ length: Math.floor(rnd() * 6) }, () => PIECES[Math.floor(rnd() * PIECES.length)]).join('');
      const [binary, command, parent] = [str(), str(), str()];
      const fields = [`"event_type":"shell_detached"`, `"work_id":"wrk_${t}"`, `"timestamp":${t}`];
      if (rnd() < 0.9) fields.push(`"binary":${spell(rnd, binary)}`);
      if (rnd() < 0.9) fields.push(`"command":${spell(rnd, command)}`);
      if (rnd() < 0.1) fields.push('"command":7');
      const line = Buffer.from(`{${fields.join(',')}}`);
      const d = detachedLine(line);
      expect(d, line.toString()).toBeDefined();
      const o = JSON.parse(line.toString()) as { binary?: unknown; command?: unknown };
      const b = typeof o.binary === 'string' ? o.binary : '';
      const c = typeof o.command === 'string' ? o.command : '';
      const withParent = rnd() < 0.8;
      const parentJson = withParent ? Buffer.from(JSON.stringify(parent)) : undefined;
      const common = { eventId: 'evt_x', sessionId: 'ses_y', timestamp: 9 };
      const want = shellLostLine(
        { ...common, parentId: withParent ? parent : undefined },
        { workId: d!.workId, binary: b, command: c, detachedAtMs: d!.detachedAtMs, detachedAtText: d!.detachedAtText },
        'ses_by',
        'tsk_z',
      );
      const scratch = { buf: Buffer.alloc(rnd() < 0.5 ? 0 : 1 << 16) };
      const got = shellLostLineBytes({ ...common, parentJson }, d!, 'ses_by', 'tsk_z', scratch);
      expect(got.toString(), line.toString()).toBe(want);
      expect([d!.binary.bytes, d!.command.bytes]).toEqual([Buffer.byteLength(b), Buffer.byteLength(c)]);
    }
  });

  it("message_parts_bytes from the lengths is the report text's length", () => {
    const rnd = prng(6);
    for (let t = 0; t < 300; t++) {
      const works = Array.from({ length: Math.floor(rnd() * 4) }, (_, i) => ({
        workId: `wrk_${i}é`,
        binary: PIECES[Math.floor(rnd() * PIECES.length)]!,
        command: PIECES[Math.floor(rnd() * PIECES.length)]!.repeat(3),
        detachedAtMs: Math.floor(rnd() * 1e13),
        ...(rnd() < 0.3 ? { detachedAtText: '18446744073709551615' } : {}),
      }));
      const sizes = works.map((w) => ({
        ...w,
        binaryBytes: Buffer.byteLength(w.binary),
        commandBytes: Buffer.byteLength(w.command),
      }));
      expect(lostReportBytes('ses_a', sizes)).toBe(Buffer.byteLength(lostReportText('ses_a', works)));
    }
  });
});

describe('what is shown of a binary or command', () => {
  const shown = (json: string) =>
    new LineString(Buffer.from(json), {
      type: T_STRING,
      start: 0,
      end: Buffer.byteLength(json),
      escaped: json.includes('\\'),
    }).shown();

  it('up to 100 characters as it is; a longer one by its first 60 and last 30 characters and its length', () => {
    expect(shown(JSON.stringify('sleep 600'))).toBe('sleep 600');
    expect(shown(JSON.stringify('😀'.repeat(100)))).toBe('😀'.repeat(100));
    const long = `${'a'.repeat(60)}${'m'.repeat(1000)}${'z'.repeat(30)}`;
    expect(shown(JSON.stringify(long))).toBe(`${'a'.repeat(60)}…[1090 bytes]…${'z'.repeat(30)}`);
    const emoji = '😀'.repeat(101);
    expect(shown(JSON.stringify(emoji))).toBe(`${'😀'.repeat(60)}…[404 bytes]…${'😀'.repeat(30)}`);
  });

  it('is the same however the string is spelled, and never long, whatever its length', () => {
    const rnd = prng(8);
    for (let t = 0; t < 300; t++) {
      const v = Array.from(
        { length: Math.floor(rnd() * 400) },
        () => PIECES[Math.floor(rnd() * (PIECES.length - 1))],
      ).join('');
      const a = shown(JSON.stringify(v));
      expect(shown(spell(rnd, v))).toBe(a);
      expect(Array.from(a).length).toBeLessThanOrEqual(120);
      if (Array.from(v).length <= 100) expect(a).toBe(v);
    }
  });
});
