// Parity: traces as the runtime's reconciliation reads them. Duplicate `event_type`: the last
// wins; a trace that is not valid UTF-8 is not reconciled; a `shell_detached` line holding a lone
// surrogate escape is unreadable; the last `session_start` is the parent, even one without a
// string `event_id` (then `shell_lost` carries no `parent_id`); lost work in byte order;
// `shell_lost.detached_at_ms` is the detached line's timestamp when it is a u64, else 0.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as f from '../helpers/fixtures.js';
import { makeEnv, type Env } from './helpers.js';

let E: Env;
const now = Date.now();
beforeEach(() => {
  E = makeEnv('parity-trace');
});
afterEach(() => f.rmrf(E.T));

const t0 = now - 2 * f.DAY;

/** A dead session (old, no session_end) whose trace is `lines` (raw text, one per entry). */
function deadSession(lines: string[], raw?: Buffer): { id: string; trace: string } {
  const id = f.idAt('ses_', t0);
  const dir = path.join(E.root, id);
  fs.mkdirSync(dir, { recursive: true });
  const trace = path.join(dir, 'trace.jsonl');
  fs.writeFileSync(trace, raw ?? lines.join('\n') + '\n');
  const m = t0 / 1000;
  fs.utimesSync(trace, m, m);
  fs.utimesSync(dir, m, m);
  return { id, trace };
}

const start = (id: string, evt: string) =>
  `{"event_type":"session_start","event_id":"${evt}","parent_id":null,"session_id":"${id}","timestamp":${t0}}`;
const detached = (work: string, ts: string) =>
  `{"event_type":"shell_detached","event_id":"evt_d","session_id":"s","timestamp":${ts},"turn":0,"task_id":null,"work_id":"${work}","binary":"/bin/sleep","command":"600","grace_ms":10000}`;

function lost(trace: string): Record<string, unknown>[] {
  return fs
    .readFileSync(trace, 'utf8')
    .split('\n')
    .filter((l) => l.includes('"shell_lost"'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

function sweep(): void {
  const r = E.sweep(E.config(`sessions:\n  - root: ${E.root}\n`));
  expect(r.status, r.stderr).toBe(0);
}

describe('parity: traces read for reconciliation', () => {
  it('a completed command whose line carries two event_type keys (last: shell_completed) is not lost', () => {
    const { trace } = deadSession([
      start('s', 'evt_s'),
      detached('wrk_a', '5'),
      '{"event_type":"tool_output","work_id":"wrk_a","event_type":"shell_completed","status":"ok"}',
      detached('wrk_b', '6'),
      '{"event_type":"shell_completed","work_id":"wrk_b","event_type":"tool_output"}',
    ]);
    sweep();
    expect(lost(trace).map((l) => l['work_id'])).toEqual(['wrk_b']);
  });

  it('detached_at_ms is the timestamp when it is a u64, else 0', () => {
    const stamps = ['-5', '1.5', '1e+30', '18446744073709551615', '18446744073709551616', '"7"', '42'];
    const { trace } = deadSession([start('s', 'evt_s'), ...stamps.map((ts, i) => detached(`wrk_${i}`, ts))]);
    sweep();
    const text = fs.readFileSync(trace, 'utf8');
    const byWork = Object.fromEntries(
      text
        .split('\n')
        .filter((l) => l.includes('"shell_lost"'))
        .map((l) => [/"work_id":"(wrk_\d)"/.exec(l)![1], /"detached_at_ms":([^,]+),/.exec(l)![1]]),
    );
    expect(byWork).toEqual({
      wrk_0: '0',
      wrk_1: '0',
      wrk_2: '0',
      wrk_3: '18446744073709551615',
      wrk_4: '0',
      wrk_5: '0',
      wrk_6: '42',
    });
  });

  it('a trace that is not valid UTF-8 is not reconciled', () => {
    const text =
      [start('s', 'evt_s'), detached('wrk_a', '5'), '{"event_type":"note","text":"caf\u00e9"}'].join('\n') + '\n';
    const { trace } = deadSession([], Buffer.from(text, 'latin1')); // é as a lone 0xE9 byte
    const before = fs.readFileSync(trace);
    sweep();
    expect(fs.readFileSync(trace)).toEqual(before);
  });

  it('a shell_detached line holding a lone surrogate escape is unreadable', () => {
    const { trace } = deadSession([
      start('s', 'evt_s'),
      detached('wrk_a', '5').replace('"command":"600"', '"command":"\\ud800"'),
      detached('wrk_b', '6'),
    ]);
    sweep();
    expect(lost(trace).map((l) => l['work_id'])).toEqual(['wrk_b']);
  });

  it('with two session_start lines the last one is the parent', () => {
    const { trace } = deadSession([start('s', 'evt_first'), detached('wrk_a', '5'), start('s', 'evt_second')]);
    sweep();
    expect(lost(trace).map((l) => l['parent_id'])).toEqual(['evt_second']);
  });

  it.each([
    ['no event_id', '{"event_type":"session_start","parent_id":null,"session_id":"s","timestamp":1}'],
    ['event_id null', '{"event_type":"session_start","event_id":null,"parent_id":null,"session_id":"s","timestamp":1}'],
    [
      'event_id a number',
      '{"event_type":"session_start","event_id":7,"parent_id":null,"session_id":"s","timestamp":1}',
    ],
  ])('the last session_start decides even with %s: shell_lost then omits parent_id', (_name, last) => {
    const { trace } = deadSession([start('s', 'evt_first'), detached('wrk_a', '5'), last, detached('wrk_b', '6')]);
    sweep();
    const lines = lost(trace);
    expect(lines.map((l) => l['work_id'])).toEqual(['wrk_a', 'wrk_b']);
    for (const l of lines)
      expect(Object.keys(l)).toEqual([
        'event_type',
        'event_id',
        'session_id',
        'timestamp',
        'work_id',
        'binary',
        'command',
        'detached_at_ms',
        'reconciled_by_session',
        'reconciled_task_id',
      ]);
  });

  it('a session_start without an event_id followed by one with it: the later one is the parent', () => {
    const { trace } = deadSession([
      '{"event_type":"session_start","session_id":"s","timestamp":1}',
      detached('wrk_a', '5'),
      start('s', 'evt_later'),
    ]);
    sweep();
    expect(lost(trace).map((l) => l['parent_id'])).toEqual(['evt_later']);
  });

  it('lost work ids are processed in byte order', () => {
    const ids = ['wrk_\uFF5E', 'wrk_\u{1F600}', 'wrk_z', 'wrk_A'];
    const { trace } = deadSession([start('s', 'evt_s'), ...ids.map((w, i) => detached(w, String(i)))]);
    sweep();
    const want = [...ids].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    expect(lost(trace).map((l) => l['work_id'])).toEqual(want);
  });
});
