// One log line per cause: the grouping of a sweep's skips and errors by (level, code, place).
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { Logger } from '../../src/log.js';
import { GroupedLog, placeOf } from '../../src/sweep/log-groups.js';

function capture(level = 'info'): { log: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const log: Logger = pino(
    { level },
    { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) },
  );
  return { log, lines };
}

const roots = ['/h/app/.murmur', '/h/app/.murmur/nested', '/h/.murmur/gc'];
const place = (t: string) => placeOf(t, roots, '/h/.murmur');

describe('placeOf', () => {
  it('a target belongs to the longest sessions root holding it, a record store, or its directory', () => {
    expect(place('/h/app/.murmur/ses_1')).toEqual({ kind: 'root', name: '/h/app/.murmur' });
    expect(place('/h/app/.murmur/nested/ses_1')).toEqual({ kind: 'root', name: '/h/app/.murmur/nested' });
    expect(place('/h/app/.murmur')).toEqual({ kind: 'root', name: '/h/app/.murmur' });
    expect(place('shey/ctx_1')).toEqual({ kind: 'record', name: 'shey' });
    expect(place('shey')).toEqual({ kind: 'record', name: 'shey' });
    expect(place('/h/.murmur/conversations/ops/ctx_2/conversation.jsonl')).toEqual({ kind: 'record', name: 'ops' });
    expect(place('/h/.murmur')).toEqual({ kind: 'path', name: '/h/.murmur' });
    expect(place('/h/.murmur/running/x.json')).toEqual({ kind: 'path', name: '/h/.murmur/running' });
  });
});

describe('GroupedLog', () => {
  it('logs each item at debug at once, and one line per (level, code, place) at flush, in first-seen order', () => {
    const { log, lines } = capture('debug');
    const g = new GroupedLog(log);
    for (let i = 0; i < 150; i++)
      g.note({ level: 'warn', code: 'live_session', target: `/h/app/.murmur/ses_${i}`, detail: `ses_${i} is live` });
    g.note({ level: 'error', code: 'io_error', target: 'shey/ctx_a', detail: 'EIO a' });
    g.note({ level: 'error', code: 'io_error', target: 'shey/ctx_b', detail: 'EIO b' });
    g.note({
      level: 'warn',
      code: 'process_interrupted',
      target: '/h/.murmur/gc/x.tmp',
      detail: 'leftover removed',
      fields: { path: '/h/.murmur/gc/x.tmp', bytes: 3 },
    });
    expect(lines.filter((l) => l['level'] === 20)).toHaveLength(153);
    lines.length = 0;
    g.flush(place);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatchObject({
      level: 40,
      code: 'live_session',
      count: 150,
      root: '/h/app/.murmur',
      targets: ['/h/app/.murmur/ses_0', '/h/app/.murmur/ses_1', '/h/app/.murmur/ses_2'],
    });
    expect(lines[0]!['msg']).toBe(
      '150 items in /h/app/.murmur [live_session]: ses_0, ses_1, ses_2 and 147 more; the first: ses_0 is live',
    );
    expect(lines[1]).toMatchObject({ level: 50, code: 'io_error', count: 2, record: 'shey' });
    expect(lines[1]!['msg']).toBe('2 items in record store shey [io_error]: ctx_a, ctx_b; the first: EIO a');
    // a cause with one item is that item's own line, fields and all
    expect(lines[2]).toMatchObject({
      level: 40,
      code: 'process_interrupted',
      target: '/h/.murmur/gc/x.tmp',
      path: '/h/.murmur/gc/x.tmp',
      bytes: 3,
      msg: 'leftover removed',
    });
    expect(lines[2]!['count']).toBeUndefined();
    // flushed: a second flush says nothing
    lines.length = 0;
    g.flush(place);
    expect(lines).toEqual([]);
  });
});
