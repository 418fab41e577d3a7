// The per-sweep summary (log line + state), pure.
import { describe, expect, it } from 'vitest';
import type { SweepReport } from '../../src/sweep/report.js';
import {
  busySummary,
  failedSummary,
  outcomeOf,
  summarizeReport,
  summaryCode,
  summaryText,
} from '../../src/sweep/summary.js';

function report(over: Partial<SweepReport> = {}): SweepReport {
  return {
    dry_run: false,
    home: '/h',
    home_exists: true,
    started_ms: 1,
    duration_ms: 5,
    actions: [],
    skipped: [],
    errors: [],
    audit: null,
    bytes_freed: 0,
    inventory: {} as SweepReport['inventory'], // not summarized
    ...over,
  };
}

describe('sweep summaries', () => {
  it('counts actions per kind, skipped and errors per code', () => {
    const r = report({
      actions: [
        { kind: 'remove_session', root: '/r', target: 'ses_1', reason: 'max_age', bytes: 10 },
        { kind: 'remove_session', root: '/r', target: 'ses_2', reason: 'max_sessions', bytes: 10 },
        {
          kind: 'truncate_record',
          record: 's',
          target: 'ctx_1',
          reason: 'max_messages',
          messages_dropped: 4,
          kept: 2,
          path: '/p',
          bytes: 3,
        },
        { kind: 'remove_debris', path: '/t', code: 'process_interrupted', detail: 'd', bytes: 1 },
      ],
      skipped: [
        { target: 'a', code: 'live_session', detail: '' },
        { target: 'b', code: 'live_session', detail: '' },
        { target: 'c', code: 'process_interrupted', detail: '' },
      ],
      errors: [{ target: 'x', code: 'io_error', detail: '' }],
      bytes_freed: 24,
      audit: 'ses_abc',
    });
    const s = summarizeReport(r, 'schedule', 100, 350);
    expect(s).toEqual({
      trigger: 'schedule',
      started_ms: 100,
      ended_ms: 350,
      duration_ms: 250,
      outcome: 'errors',
      counts: { remove_session: 2, truncate_record: 1, remove_debris: 1 },
      bytes_freed: 24,
      skipped: 3,
      skipped_by_code: { live_session: 2, process_interrupted: 1 },
      errors: 1,
      errors_by_code: { io_error: 1 },
      audit: 'ses_abc',
      actions_by_store: { remove_session: { '/r': 2 }, truncate_record: { s: 1 }, remove_debris: { home: 1 } },
      messages_dropped: 4,
    });
    expect(summaryCode(s)).toBe('io_error');
    // the live sessions a rule condemns are kept, the normal state: counted apart from the skips
    expect(summaryText(s)).toBe(
      'sweep errors: 2 sessions removed, 1 record truncated, 1 leftover cleaned; 24 B freed; 1 skipped; 2 kept live or protected; 1 errors (250 ms)',
    );
  });

  it('derives the outcome from codes: aborted beats errors; none is ok', () => {
    expect(outcomeOf(report())).toBe('ok');
    expect(outcomeOf(report({ errors: [{ target: 'h', code: 'io_error', detail: '' }] }))).toBe('errors');
    expect(
      outcomeOf(
        report({
          errors: [
            { target: 'h', code: 'io_error', detail: '' },
            { target: 'h', code: 'aborted', detail: '' },
          ],
        }),
      ),
    ).toBe('aborted');
    expect(outcomeOf(report({ skipped: [{ target: '/c', code: 'aborted', detail: '' }] }))).toBe('aborted');
    const ok = summarizeReport(report({ message: 'nothing to sweep' }), 'start', 0, 3);
    expect(ok).toMatchObject({ outcome: 'ok', message: 'nothing to sweep' });
    expect(summaryCode(ok)).toBeUndefined();
    expect(summaryText(ok)).toBe('sweep ok: nothing to do; 0 B freed; 0 skipped; 0 errors (3 ms)');
    const ab = summarizeReport(report({ errors: [{ target: 'h', code: 'aborted', detail: '' }] }), 'schedule', 0, 3);
    expect(summaryCode(ab)).toBe('aborted');
    expect(summaryText(ab)).toMatch(/^sweep stopped early: /);
  });

  it('busy and failed sweeps carry storage_busy and the failure code', () => {
    const b = busySummary('schedule', 0, 2, 'another murmur-gc sweep holds /h/gc/sweep.lock');
    expect(b).toMatchObject({ outcome: 'busy', errors: 0, counts: {} });
    expect(summaryCode(b)).toBe('storage_busy');
    expect(summaryText(b)).toBe('sweep skipped: another murmur-gc sweep holds /h/gc/sweep.lock');
    const f = failedSummary('start', 0, 2, 'foreign_owner', '/h belongs to uid 0');
    expect(f).toMatchObject({ outcome: 'failed', errors: 1, errors_by_code: { foreign_owner: 1 } });
    expect(summaryCode(f)).toBe('foreign_owner');
  });
});
