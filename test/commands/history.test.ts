// History aggregation from audit trace lines (pure), the --target answer, --since filtering,
// rendering; and the streaming reader's tolerance of torn lines.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { peekType, readAuditHistory } from '../../src/commands/audit-read.js';
import {
  applyDetails,
  buildHistory,
  findTarget,
  heldNowKey,
  renderHistory,
  summarizeAuditTrace,
  type SweepHistory,
} from '../../src/commands/history.js';
import * as f from '../helpers/fixtures.js';

const T0 = 1_750_000_000_000;
const meta = { invalidLines: 0, intentPending: false, truncatedRead: false };

function sid(ms: number): string {
  return f.idAt('ses_', ms);
}

function trace(id: string, at: number, extra: unknown[], end: 'ok' | 'failed' | 'canceled' | null = 'ok'): unknown[] {
  const lines: unknown[] = [
    {
      event_type: 'session_start',
      event_id: 'evt_s',
      parent_id: null,
      session_id: id,
      timestamp: at,
      capsule_name: 'murmur-gc',
      capsule_version: '0.1.0',
    },
    ...extra,
  ];
  if (end)
    lines.push({
      event_type: 'session_end',
      event_id: 'evt_e',
      parent_id: 'evt_s',
      session_id: id,
      timestamp: at + 900,
      duration_ms: 900,
      exit_status: end,
    });
  return lines;
}

const ret = (store: string, reason: string, targets: string[], dropped?: number) => ({
  event_type: 'retention',
  store,
  reason,
  removed: targets.length,
  targets,
  ...(dropped !== undefined ? { messages_dropped: dropped } : {}),
});

describe('summarizeAuditTrace', () => {
  it('aggregates retention lines per (store, reason), truncations with messages dropped, reconciled tasks', () => {
    const id = sid(T0);
    const h = summarizeAuditTrace(
      id,
      trace(id, T0, [
        ret('sessions', 'max_sessions', ['ses_b', 'ses_a']),
        ret('sessions', 'max_age', ['ses_c']),
        ret('records', 'max_age', ['ctx_1']),
        ret('records', 'max_messages', ['ctx_2', 'ctx_3'], 120),
        { event_type: 'task_start', task_id: 'tsk_1', source: 'detached_lost' },
        { event_type: 'task_end', task_id: 'tsk_1' },
        { event_type: 'task_start', task_id: 'tsk_2', source: 'detached_lost' },
        { event_type: 'task_start', task_id: 'tsk_x', source: 'task_md' },
        'garbage',
      ]),
      meta,
    )!;
    expect(h).toMatchObject({
      session_id: id,
      started_ms: T0,
      ended_ms: T0 + 900,
      duration_ms: 900,
      exit_status: 'ok',
      complete: true,
      capsule_version: '0.1.0',
      reconciled: { tasks: 2, task_ids: ['tsk_1', 'tsk_2'] },
      totals: { sessions_removed: 3, records_removed: 1, records_truncated: 2, messages_dropped: 120 },
      invalid_lines: 1,
    });
    expect(h.retention).toEqual([
      { store: 'sessions', reason: 'max_sessions', removed: 2, targets: ['ses_b', 'ses_a'] },
      { store: 'sessions', reason: 'max_age', removed: 1, targets: ['ses_c'] },
      { store: 'records', reason: 'max_age', removed: 1, targets: ['ctx_1'] },
      { store: 'records', reason: 'max_messages', removed: 2, targets: ['ctx_2', 'ctx_3'], messages_dropped: 120 },
    ]);
  });

  it('reports an unfinished trace (no session_end) and takes its time from the id when session_start is unreadable', () => {
    const id = sid(T0 + 5);
    const h = summarizeAuditTrace(id, [ret('sessions', 'max_age', ['ses_z'])], {
      ...meta,
      intentPending: true,
      invalidLines: 1,
    })!;
    expect(h).toMatchObject({
      started_ms: T0 + 5,
      complete: false,
      exit_status: null,
      intent_pending: true,
      invalid_lines: 1,
    });
    expect(
      renderHistory(buildHistory({ home: '/h', auditRoot: '/h/gc', exists: true, problems: [] }, [h], {})),
    ).toContain('unfinished (running, or killed and not yet recovered)');
  });

  it('ignores traces that are not murmur-gc sweeps', () => {
    const id = sid(T0);
    expect(
      summarizeAuditTrace(id, [{ event_type: 'session_start', capsule_name: 'demo', timestamp: T0 }], meta),
    ).toBeUndefined();
  });
});

describe('buildHistory / findTarget', () => {
  const a = summarizeAuditTrace(
    sid(T0),
    trace(sid(T0), T0, [ret('sessions', 'max_age', ['ses_old1', 'ses_old2'])]),
    meta,
  )!;
  const b = summarizeAuditTrace(
    sid(T0 + 86_400_000),
    trace(sid(T0 + 86_400_000), T0 + 86_400_000, [ret('records', 'max_messages', ['ctx_9'], 40)], 'failed'),
    meta,
  )!;
  const c = summarizeAuditTrace(
    sid(T0 + 2 * 86_400_000),
    trace(sid(T0 + 2 * 86_400_000), T0 + 2 * 86_400_000, [ret('records', 'max_messages', ['ctx_9', 'ctx_8'], 10)]),
    meta,
  )!;
  const base = { home: '/h', auditRoot: '/h/gc', exists: true, problems: [] };

  it('orders sweeps oldest first and totals them', () => {
    const doc = buildHistory(base, [c, a, b], {});
    expect(doc.sweeps.map((s) => s.session_id)).toEqual([a, b, c].map((s) => s.session_id));
    expect(doc.totals).toEqual({
      sweeps: 3,
      sessions_removed: 2,
      sessions_held: 0,
      records_removed: 0,
      records_held: 0,
      beside_removed: 0,
      beside_held: 0,
      records_truncated: 3,
      messages_dropped: 50,
      reconciled_tasks: 0,
      held: 0,
    });
    expect(doc.matches).toBeUndefined();
  });

  it('--since keeps sweeps started at or after the bound', () => {
    const doc = buildHistory(base, [a, b, c], { sinceMs: T0 + 86_400_000 });
    expect(doc.sweeps.map((s) => s.session_id)).toEqual([b, c].map((s) => s.session_id));
    expect(doc.since_ms).toBe(T0 + 86_400_000);
  });

  it('--target names every sweep that removed or truncated it, and why', () => {
    const m = findTarget([a, b, c], 'ctx_9');
    expect(m).toEqual([
      {
        sweep: b.session_id,
        started_ms: T0 + 86_400_000,
        store: 'records',
        reason: 'max_messages',
        action: 'truncated',
        exit_status: 'failed',
        outcome: 'finished with errors',
        where: null,
        line_removed: 1,
        manual: false,
        line_messages_dropped: 40,
        state: 'removed',
      },
      {
        sweep: c.session_id,
        started_ms: T0 + 2 * 86_400_000,
        store: 'records',
        reason: 'max_messages',
        action: 'truncated',
        exit_status: 'ok',
        outcome: 'ok',
        where: null,
        line_removed: 2,
        manual: false,
        line_messages_dropped: 10,
        state: 'removed',
      },
    ]);
    const doc = buildHistory(base, [a, b, c], { target: 'ses_old2' });
    expect(doc.sweeps).toEqual([a]);
    expect(doc.matches).toEqual([
      expect.objectContaining({ sweep: a.session_id, action: 'removed', reason: 'max_age', line_removed: 2 }),
    ]);
    const text = renderHistory(doc, T0 + 3 * 60_000);
    expect(text).toContain(
      `ses_old2:\n  removed by sweep ${a.session_id} at ${new Date(T0).toISOString().slice(0, 19).replace('T', ' ')} UTC (3 min ago): sessions/max_age (with 1 other); that sweep: ok`,
    );
    expect(renderHistory(buildHistory(base, [a], { target: 'ses_none' }))).toContain(
      'ses_none: no sweep in the audit trail',
    );
  });

  it('renders a readable listing', () => {
    const text = renderHistory(buildHistory(base, [a, b], {}));
    expect(text).toContain('2 sweeps with changes');
    expect(text).toContain('sessions/max_age: 2 sessions removed');
    expect(text).toContain('records/max_messages: 1 record truncated, 40 messages dropped');
    expect(text).toContain(
      'Total: 2 sessions removed, 0 records removed, 1 record truncation (40 messages dropped), 0 reconciliations.',
    );
    expect(renderHistory(buildHistory({ ...base, exists: false }, [], {}))).toContain('no audit trail at /h/gc');
  });

  it('does not call what is still held "removed" in the total', () => {
    const held = new Map([[heldNowKey('sessions', 'ses_old1'), T0 + 86_400_000]]);
    const text = renderHistory(buildHistory({ ...base, held }, [a, b], {}));
    expect(text).toContain('sessions/max_age: 2 sessions taken — 1 removed, 1 held now (restorable)');
    expect(text).toContain(
      'Total: 1 session removed, 1 held, 0 records removed, 1 record truncation (40 messages dropped), 0 reconciliations; of what they held, 1 still held (murmur-gc quarantine ls).',
    );
  });

  it("counts sessions apart from the child workdirs and work logs that went with them, and holds as held (the sweep's details say which)", () => {
    const lines = [
      ret('sessions', 'max_age', [
        'ses_a',
        'ses_b',
        'ses_c',
        '.murmur/children/x-1',
        'logs/wrk_1.log',
        'logs/wrk_2.log',
      ]),
      ret('records', 'max_age', ['ctx_1', 'ctx_2']),
    ];
    const s = summarizeAuditTrace(sid(T0), trace(sid(T0), T0, lines), meta)!;
    applyDetails(s, {
      held: { ses_a: T0 + 7 * 86_400_000, '.murmur/children/x-1': T0 + 7 * 86_400_000, ctx_2: T0 + 86_400_000 },
      beside: { '.murmur/children/x-1': 'ses_a', 'logs/wrk_1.log': 'ses_b', 'logs/wrk_2.log': 'ses_b' },
    });
    expect(s.totals).toEqual({
      sessions_removed: 2,
      sessions_held: 1,
      records_removed: 1,
      records_held: 1,
      beside_removed: 2,
      beside_held: 1,
      records_truncated: 0,
      messages_dropped: 0,
    });
    // one held since purged, the other still held: held they were, whatever came after
    const purge = summarizeAuditTrace(
      sid(T0 + 86_400_000),
      trace(sid(T0 + 86_400_000), T0 + 86_400_000, [
        { event_type: 'quarantine_purge', store: 'records', reason: 'expired', targets: ['ctx_2'] },
      ]),
      meta,
    )!;
    const doc = buildHistory(
      { ...base, held: new Map([[heldNowKey('sessions', 'ses_a'), T0 + 7 * 86_400_000]]) },
      [s, purge],
      {},
    );
    expect(doc.totals).toMatchObject({
      sessions_removed: 2,
      sessions_held: 1,
      records_removed: 1,
      records_held: 1,
      beside_removed: 2,
      beside_held: 1,
      held: 1,
    });
    const text = renderHistory(doc);
    expect(text).toContain('sessions/max_age: 3 sessions taken (and 3 child workdirs and work logs with them)');
    expect(text).toContain(
      'Total: 2 sessions removed, 1 held, 1 record removed, 1 held, 2 child workdirs and work logs removed, 1 held,',
    );
  });
});

describe('readAuditHistory (streaming, read-only, tolerant)', () => {
  it('reads every sweep trace, skipping torn and garbage lines and foreign files', async () => {
    const T = f.tempDir('hist');
    try {
      const home = path.join(T, '.murmur');
      const gc = path.join(home, 'gc');
      const id1 = sid(Date.now() - 3 * f.DAY);
      const id2 = sid(Date.now() - f.DAY);
      fs.mkdirSync(path.join(gc, id1), { recursive: true });
      fs.mkdirSync(path.join(gc, id2), { recursive: true });
      const text = (lines: unknown[]) => lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
      fs.writeFileSync(
        path.join(gc, id1, 'trace.jsonl'),
        text(trace(id1, Date.now() - 3 * f.DAY, [ret('sessions', 'max_age', ['ses_q'])])) +
          'not json\n{"event_type":"retention","ev',
      );
      fs.writeFileSync(
        path.join(gc, id2, 'trace.jsonl'),
        text(trace(id2, Date.now() - f.DAY, [ret('records', 'max_age', ['ctx_q'])], null)),
      );
      fs.writeFileSync(path.join(gc, id2, 'intent.jsonl'), '{"op":"intent","seq":1}\n');
      fs.writeFileSync(path.join(gc, 'state.json'), '{}');
      fs.mkdirSync(path.join(gc, 'locks'));
      fs.symlinkSync(path.join(gc, id1), path.join(gc, sid(Date.now())));
      const before = f.snapshotTree(home);
      const r = await readAuditHistory(home);
      expect(f.snapshotTree(home)).toEqual(before);
      expect(r.exists).toBe(true);
      expect(r.problems).toEqual([]);
      const byId = Object.fromEntries(r.sweeps.map((s) => [s.session_id, s])) as Record<string, SweepHistory>;
      expect(Object.keys(byId).sort()).toEqual([id1, id2].sort());
      expect(byId[id1]).toMatchObject({ complete: true, invalid_lines: 2, totals: { sessions_removed: 1 } });
      expect(byId[id2]).toMatchObject({ complete: false, intent_pending: true, totals: { records_removed: 1 } });
      // --since prunes by the id's mint time before opening anything
      const recent = await readAuditHistory(home, { sinceMs: Date.now() - 2 * f.DAY });
      expect(recent.sweeps.length).toBeGreaterThanOrEqual(1);
      expect(await readAuditHistory(path.join(T, 'missing'))).toMatchObject({ exists: false, sweeps: [] });
    } finally {
      f.rmrf(T);
    }
  });

  it('peeks the event type without parsing', () => {
    expect(peekType(Buffer.from('{"event_type":"retention","x":1}'))).toBe('retention');
    expect(peekType(Buffer.from('{"x":1,"event_type":"retention"}'))).toBeUndefined();
    expect(peekType(Buffer.from('garbage'))).toBeUndefined();
  });
});

describe('status and history speak the same outcome words', () => {
  it('exit_status failed is "finished with errors", canceled (a signal, or killed and completed) is "stopped early", as status says', async () => {
    const { outcomeWords } = await import('../../src/sweep/summary.js');
    const mk = (ms: number, end: 'failed' | 'canceled') =>
      summarizeAuditTrace(sid(ms), trace(sid(ms), ms, [ret('sessions', 'max_age', ['ses_a'])], end), meta)!;
    const canceled = mk(T0, 'canceled');
    const failed = mk(T0 + 1000, 'failed');
    expect(canceled.outcome).toBe('aborted');
    expect(failed.outcome).toBe('errors');
    const text = renderHistory(
      buildHistory({ home: '/h', auditRoot: '/h/gc', exists: true, problems: [] }, [canceled, failed], {}),
      T0 + 7200_000,
    );
    expect(text).toContain(`  ${outcomeWords('aborted')}, 900 ms`);
    expect(text).toContain(`  ${outcomeWords('errors')}, 900 ms`);
    expect(outcomeWords('aborted')).toBe('stopped early');
    expect(text).toMatch(/ UTC \(2 h ago\)/);
  });
});
