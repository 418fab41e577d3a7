// The sweep interval the fleet's alert rules compare against (`murmur_gc_schedule_interval_seconds`,
// docs/metrics.md): `metrics.interval` when configured, else the gap between the next two runs of
// `schedule` (the daemon's cron schedule; its default, every 30 minutes, is also the shipped
// timer's cadence).
// Guarantees: the default schedule is answered without loading `cron` (a one-shot sweep on a
// configuration without a schedule does not pay for it); a schedule cron cannot step through gives
// null (the series is then left out), never a guess.
import type { GcConfig } from '../config/types.js';
import { DEFAULT_SCHEDULE } from '../config/load.js';

/** The gap of DEFAULT_SCHEDULE (`*\/30 * * * *`), seconds. */
export const DEFAULT_INTERVAL_SECS = 1800;

/** Seconds between the next two runs of `schedule` after `fromMs`, or null when cron cannot say. */
export async function scheduleGapSecs(schedule: string, fromMs: number): Promise<number | null> {
  if (schedule === DEFAULT_SCHEDULE) return DEFAULT_INTERVAL_SECS;
  try {
    const { CronTime } = await import('cron');
    const t = new CronTime(schedule);
    const first = t.getNextDateFrom(new Date(fromMs));
    const second = t.getNextDateFrom(first);
    const gap = (second.toMillis() - first.toMillis()) / 1000;
    return Number.isFinite(gap) && gap > 0 ? gap : null;
  } catch {
    return null;
  }
}

/** The interval of `config` for the metrics: `metrics.interval`, else the schedule's gap. */
export async function sweepIntervalSecs(
  config: Pick<GcConfig, 'schedule' | 'metrics'>,
  nowMs: number,
): Promise<number | null> {
  return config.metrics?.intervalSecs ?? (await scheduleGapSecs(config.schedule, nowMs));
}
