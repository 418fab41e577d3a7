// The cadence the alert rules compare against: metrics.interval, else the schedule's gap.
import { CronTime } from 'cron';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SCHEDULE } from '../../src/config/load.js';
import { DEFAULT_INTERVAL_SECS, scheduleGapSecs, sweepIntervalSecs } from '../../src/sweep/interval.js';

const NOW = Date.UTC(2026, 11, 1, 16, 40, 0);

describe('sweep interval', () => {
  it('the default schedule is answered without cron, and cron agrees with the constant', async () => {
    const t = new CronTime(DEFAULT_SCHEDULE);
    const a = t.getNextDateFrom(new Date(NOW));
    expect((t.getNextDateFrom(a).toMillis() - a.toMillis()) / 1000).toBe(DEFAULT_INTERVAL_SECS);
    expect(await scheduleGapSecs(DEFAULT_SCHEDULE, NOW)).toBe(1800);
  });

  it('another schedule: the gap between its next two runs; one cron cannot read: null', async () => {
    expect(await scheduleGapSecs('0 3 * * *', NOW)).toBe(86_400);
    expect(await scheduleGapSecs('*/5 * * * *', NOW)).toBe(300);
    expect(await scheduleGapSecs('0 */6 * * *', NOW)).toBe(6 * 3600);
    expect(await scheduleGapSecs('not a schedule', NOW)).toBeNull();
  });

  it('metrics.interval wins over the schedule', async () => {
    expect(
      await sweepIntervalSecs({ schedule: '0 3 * * *', metrics: { textfile: '/x.prom', intervalSecs: 3600 } }, NOW),
    ).toBe(3600);
    expect(await sweepIntervalSecs({ schedule: '0 3 * * *', metrics: { textfile: '/x.prom' } }, NOW)).toBe(86_400);
  });
});
