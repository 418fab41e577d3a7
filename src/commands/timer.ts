// The systemd timer route: when `murmur-gc.timer` is installed (and the daemon is not running),
// `status` shows the timer's next run. Asks `systemctl --user show murmur-gc.timer`.
// Guarantees: read-only; never throws; a missing systemctl, no user manager, a timeout (2 s) or
// an unreadable answer is "unknown", never a guess.
import { execFile } from 'node:child_process';
import type { TimerInfo } from '../schema/json-schemas.js';

export const TIMER_UNIT = 'murmur-gc.timer';

/** What `status` says of the timer: its schema's (src/schema/json-schemas.ts). */
export type { TimerInfo };

/** Parse `systemctl show --timestamp=unix -p LoadState -p ActiveState -p NextElapseUSecRealtime`. */
export function parseTimerShow(text: string): TimerInfo {
  const props = new Map<string, string>();
  for (const line of text.split('\n')) {
    const i = line.indexOf('=');
    if (i > 0) props.set(line.slice(0, i), line.slice(i + 1).trim());
  }
  const load = props.get('LoadState');
  if (load === undefined) return { state: 'unknown', why: 'systemctl gave no LoadState' };
  if (load === 'not-found' || load === 'masked') return { state: 'not_installed' };
  if (props.get('ActiveState') !== 'active') return { state: 'inactive' };
  const next = /^@(\d+)$/.exec(props.get('NextElapseUSecRealtime') ?? '');
  return { state: 'active', next_run_ms: next ? Number(next[1]) * 1000 : null };
}

export function probeTimer(env: NodeJS.ProcessEnv = process.env): Promise<TimerInfo> {
  return new Promise((resolve) => {
    execFile(
      'systemctl',
      [
        '--user',
        'show',
        '--timestamp=unix',
        '-p',
        'LoadState',
        '-p',
        'ActiveState',
        '-p',
        'NextElapseUSecRealtime',
        TIMER_UNIT,
      ],
      { timeout: 2000, env },
      (err, stdout) => {
        if (err) resolve({ state: 'unknown', why: timerFailureWords(err) });
        else resolve(parseTimerShow(stdout));
      },
    );
  });
}

/** Why systemd could not be asked, in words (`status`'s next run). */
export function timerFailureWords(err: {
  killed?: boolean | undefined;
  code?: string | number | null | undefined;
}): string {
  if (err.code === 'ENOENT') return `systemctl is not installed, so whether ${TIMER_UNIT} runs is not known`;
  if (err.killed === true) return `systemctl did not answer within 2 s about ${TIMER_UNIT}`;
  return `no systemd user manager answered about ${TIMER_UNIT} (systemctl --user failed: no user session, or systemd is not running)`;
}
