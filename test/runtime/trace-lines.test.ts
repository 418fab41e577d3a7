// A trace summarized from one buffer (`addLines`: one UTF-8 check, needles found once per buffer,
// no view per line — how a sweep reads small traces) equals the same trace fed line by line
// (`addLine`: how a streamed trace is read), on generated traces full of the cases that decide a
// line: event types spelled with escapes or twice (the last one wins), `\u` anywhere, garbage,
// bytes that are not UTF-8, blank lines, a torn last line; several traces one after the other in
// one reused buffer, as the sweep reuses its read buffer.
import { describe, expect, it, vi } from 'vitest';
import { TraceAccumulator, sessionStartEventId, type TraceSummary, type WantedTypes } from '../../src/runtime/trace.js';
import { prng } from '../helpers/fixtures.js';

const POOL: string[] = [
  '{"event_type":"session_start","event_id":"evt_s1","context_id":"ctx_a","timestamp":1}',
  '{"event_type":"inference","event_id":"evt_i","timestamp":2,"text":"plain words"}',
  '{"event_type":"inference","text":"an escape \\u00e9 late in the line"}',
  '{"event_type":"tool_call","tool":"x","event_type":"shell_completed","work_id":"w1"}',
  '{"event_type":"shell_detached","work_id":"w1","binary":"sh","command":"sleep 1","timestamp":5,"task_id":"t1"}',
  '{"event_type":"shell_detached","work_id":"w2","binary":"sh","command":"x","timestamp":6,"task_id":"t2"}',
  '{"event_type":"inference","\\u0065vent_type":"shell_abandoned","work_id":"w2"}',
  '{"event_type":"task_start","task_id":"t1","trust":"trusted","context_id":"ctx_b"}',
  '{"event_type":"task_start","task_id":"t2","trust":"untrusted"}',
  '{"\\u0065vent_type":"session_end"}',
  '{"event_type":"session_end"}',
  '{"event_type":"shell_lost","work_id":"w1"}',
  '{"kind":"no event type here","event_type_hint":"shell_completed"}',
  '{"event_type":"inference","note":"the word event_type again: \\"event_type\\""}',
  '{"event_type":"inference"',
  'not json at all',
  '',
  '   ',
  '{"event_type":"tool_call","event_type":"tool_call","x":"\\u0041"}',
  '{"pad":"' + 'x'.repeat(80) + '","event_type":"shell_completed","work_id":"w2"}',
];

function randomTrace(rnd: () => number): Buffer {
  const parts: Buffer[] = [];
  const n = 1 + Math.floor(rnd() * 14);
  for (let i = 0; i < n; i++) {
    let line = Buffer.from(POOL[Math.floor(rnd() * POOL.length)] as string);
    if (rnd() < 0.04) line = Buffer.concat([line, Buffer.from([0xff])]); // not UTF-8
    parts.push(line);
    if (i < n - 1 || rnd() < 0.7) parts.push(Buffer.from('\n')); // else a torn last line
  }
  return Buffer.concat(parts);
}

function lineByLine(trace: Buffer): TraceSummary {
  const acc = new TraceAccumulator();
  let from = 0;
  let terminated = true;
  while (from < trace.length) {
    const nl = trace.indexOf(10, from);
    const end = nl < 0 ? trace.length : nl;
    acc.addLine(Buffer.from(trace.subarray(from, end)), 0, end - from, from); // a fresh copy per line, at its offset
    terminated = nl >= 0;
    from = end + 1;
  }
  return acc.finish(trace.length === 0 || terminated);
}

describe('TraceAccumulator.addLines (a whole trace from one buffer)', () => {
  it('summarizes exactly as line-by-line feeding does, on 3 000 generated traces read through one reused buffer', () => {
    const rnd = prng(20261201);
    const shared = Buffer.alloc(64 << 10);
    let respelled = 0;
    for (let t = 0; t < 3000; t++) {
      const trace = randomTrace(rnd);
      trace.copy(shared);
      const acc = new TraceAccumulator();
      const terminated = acc.addLines(shared.subarray(0, trace.length));
      const whole = acc.finish(trace.length === 0 || terminated);
      const ref = lineByLine(trace);
      expect(whole, `trace ${t}:\n${trace.toString('latin1')}`).toEqual(ref);
      if (ref.hasSessionEnd || ref.unaccounted.length > 0) respelled++;
    }
    expect(respelled).toBeGreaterThan(100); // the generated traces do exercise the parsed lines
  });

  it('judges lines over 1 MiB fed alone (from their head and bytes) as the whole buffer does', () => {
    // Each line of the pool made longer than 1 MiB by a padding key before its closing brace (or
    // after it, for a line that is not an object), as a streamed trace holds them: fed line by
    // line, each is judged from its head and its bytes; the whole buffer, as one text.
    const pad = 'p'.repeat((1 << 20) + 16);
    const long = POOL.map((l) => (l.endsWith('}') ? `${l.slice(0, -1)},"pad":"${pad}"}` : `${l}${pad}`));
    const rnd = prng(20261203);
    for (let t = 0; t < 12; t++) {
      const lines = Array.from({ length: 3 + Math.floor(rnd() * 4) }, () => long[Math.floor(rnd() * long.length)]);
      const trace = Buffer.from(lines.join('\n') + '\n');
      const acc = new TraceAccumulator();
      acc.addLines(trace);
      expect(acc.finish(true), `trace ${t}`).toEqual(lineByLine(trace));
    }
    // and a long line names its event type by its last key, or by one spelled with escapes
    const detached = `{"event_type":"shell_detached","work_id":"w7","binary":"b","command":"c","timestamp":1}`;
    for (const ender of [
      '{"event_type":"inference","event_type":"shell_completed","work_id":"w7"',
      '{"event_type":"inference","\\u0065vent_type":"shell_lost","work_id":"w7"',
    ]) {
      const trace = Buffer.from(`${detached}\n${ender},"pad":"${pad}"}\n`);
      expect(lineByLine(trace).unaccounted).toEqual([]);
    }
    expect(
      lineByLine(
        Buffer.from(`${detached}\n{"event_type":"inference","work_id":"w7","pad":"${pad}"}\n`),
      ).unaccounted.map((w) => w.workId),
    ).toEqual(['w7']);
  });

  it('finds a second event_type or a \\u escape on the line it is on, not on a neighbour', () => {
    const trace = Buffer.from(
      [
        '{"event_type":"shell_detached","work_id":"w9","binary":"b","command":"c","timestamp":1}',
        '{"event_type":"inference","text":"x"}',
        '{"event_type":"inference","event_type":"shell_completed","work_id":"w9"}',
        '{"event_type":"inference","text":"\\u0041"}',
        '',
      ].join('\n'),
    );
    const acc = new TraceAccumulator();
    acc.addLines(trace);
    expect(acc.finish(true).unaccounted).toEqual([]);
    const kept = new TraceAccumulator();
    kept.addLines(
      Buffer.from(
        trace
          .toString()
          .replace(
            '"event_type":"inference","event_type":"shell_completed"',
            '"event_type":"inference","kind":"shell_completed"',
          ),
      ),
    );
    expect(kept.finish(true).unaccounted.map((w) => w.workId)).toEqual(['w9']);
  });
});

describe('TraceAccumulator: the lines it skips unparsed', () => {
  // Spellings of a line's event type the filter must not misread: whitespace around the colon,
  // the key as a value or inside one, a key with a suffix, an empty or unterminated type, a type
  // past the head, and the pool's escapes and repeated keys.
  const SPELLED: string[] = [
    ...POOL,
    '{"event_type" :"session_end"}',
    '{"event_type": "session_end"}',
    '{ "event_type"\t:\t"shell_completed", "work_id":"w1"}',
    '{"event_type":\n"x"}',
    '{"a":"event_type","event_type":"session_end"}',
    '{"a":"\\"event_type\\":\\"inference\\"","event_type":"session_end"}',
    '{"event_types":"inference","event_type":"shell_lost","work_id":"w2"}',
    '{"event_type":"","work_id":"w1"}',
    '{"event_type":"inference',
    '{"event_type":"' + 'i'.repeat(70) + '","event_type":"shell_completed","work_id":"w1"}',
    '{"event_type":"inference","event_type" : "shell_completed","work_id":"w1"}',
    '{"event_type":"shell_completed","event_type":"inference","work_id":"w2"}',
    '["event_type","session_end"]',
    '"event_type":"session_end"',
    // every wanted type, and unwanted ones of a wanted type's length or nearly its spelling
    '{"event_type":"shell_abandoned","work_id":"w1"}',
    '{"event_type":"delegation_start","delegation_id":"d1","child_workdir":"/w/d1"}',
    '{"event_type":"delegation","delegation_id":"d1"}',
    '{"event_type":"delegation_late","delegation_id":"d1"}',
    '{"event_type":"task_close","task_id":"t9","trust":"trusted","context_id":"ctx_z"}',
    '{"event_type":"shell_lose","work_id":"w1"}',
    '{"event_type":"session_ends"}',
    '{"event_type":"Session_end"}',
    // the key's tail (`vent_type"`, what the filter searches for) without its head
    '{"prevent_type":"inference","event_type":"session_end"}',
    '{"event_type":"inference","xevent_type":"session_end"}',
    '{"prevent_type":"session_end"}',
  ];

  it('summarizes 3 000 generated traces exactly as parsing every line does, whole or line by line', () => {
    const rnd = prng(20261206);
    let decided = 0;
    for (let t = 0; t < 3000; t++) {
      const lines = Array.from(
        { length: 1 + Math.floor(rnd() * 10) },
        () => SPELLED[Math.floor(rnd() * SPELLED.length)],
      );
      const trace = Buffer.from(lines.join('\n') + '\n');
      const whole = new TraceAccumulator();
      whole.addLines(trace);
      const filtered = [whole.finish(true), lineByLine(trace)];
      // the reference: no event type is one the accumulator may skip, so every line is parsed
      const spy = vi
        .spyOn(TraceAccumulator.prototype as unknown as { wantedTypes(): WantedTypes }, 'wantedTypes')
        .mockReturnValue({ hasAt: () => true });
      let everyLine: TraceSummary;
      try {
        const ref = new TraceAccumulator();
        ref.addLines(trace);
        everyLine = ref.finish(true);
      } finally {
        spy.mockRestore();
      }
      // (invalidLines counts the lines parsed that did not parse: a skipped line is not counted)
      const judged = ({ invalidLines: _, ...rest }: TraceSummary) => rest;
      expect(filtered.map(judged), `trace ${t}:\n${trace.toString('latin1')}`).toEqual([
        judged(everyLine),
        judged(everyLine),
      ]);
      for (const f of filtered) expect(f.invalidLines).toBeLessThanOrEqual(everyLine.invalidLines);
      if (everyLine.hasSessionEnd || everyLine.unaccounted.length > 0) decided++;
    }
    expect(decided).toBeGreaterThan(1000);
  });
});

describe('TraceAccumulator: the parent of shell_lost', () => {
  /** The parent a `shell_lost` gets: the event id of the session_start line the summary locates, read again. */
  const parentOf = (...lines: string[]): string | undefined | false => {
    const buf = Buffer.from(lines.join('\n') + '\n');
    const acc = new TraceAccumulator();
    acc.addLines(buf);
    const at = acc.finish(true).sessionStart;
    return at && sessionStartEventId(buf.subarray(at.at, at.at + at.length));
  };
  const summary = (...lines: string[]) => ({ sessionStartEventId: parentOf(...lines) });
  const started = (evt: string) => `{"event_type":"session_start","event_id":"${evt}","timestamp":1}`;

  it('is the last session_start event_id', () => {
    expect(summary(started('evt_a'), started('evt_b')).sessionStartEventId).toBe('evt_b');
  });

  it('is located by its line, fed whole or line by line: the same line', () => {
    const text = ['garbage', started('evt_a'), '{"event_type":"inference"}', started('evt_b'), 'x'].join('\n') + '\n';
    const whole = new TraceAccumulator();
    whole.addLines(Buffer.from(text));
    expect(whole.finish(true).sessionStart).toEqual({
      at: text.indexOf(started('evt_b')),
      length: started('evt_b').length,
    });
    expect(lineByLine(Buffer.from(text)).sessionStart).toEqual(whole.finish(true).sessionStart);
  });

  it.each([
    ['no event_id', '{"event_type":"session_start","timestamp":1}'],
    ['event_id null', '{"event_type":"session_start","event_id":null}'],
    ['event_id a number', '{"event_type":"session_start","event_id":7}'],
    ['event_id an object', '{"event_type":"session_start","event_id":{"id":"evt_x"}}'],
  ])('is none when the last session_start has %s, whatever came before', (_name, last) => {
    expect(summary(started('evt_a'), last).sessionStartEventId).toBeUndefined();
  });

  it('is not changed by a line that does not parse', () => {
    expect(summary(started('evt_a'), '{"event_type":"session_start","event_id":"evt_torn"').sessionStartEventId).toBe(
      'evt_a',
    );
  });
});
