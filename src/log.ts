// Logging: pino JSON lines on stderr (journald-friendly), pretty on a TTY.
// pino-pretty is required on first pretty use only, in-process (no transport worker thread): a
// headless run (the daemon, cron, pipes) never loads it, and if it is not installed a TTY gets
// the JSON lines instead.
// Guarantees: logs never go to stdout (stdout is reserved for reports and --json documents);
// every warning/error carries a stable `code`; callers pass ids, counts, sizes and paths only —
// never conversation content (no helper here accepts message text).
// - Under systemd (JOURNAL_STREAM names stderr's dev:ino: stderr is the journal) each JSON line starts
//   with its syslog priority `<N>` (debug 7, info 6, warn 4, error 3, fatal 2), which journald
//   reads and strips (SyslogLevelPrefix=, on by default), so `journalctl -p warning` filters.
// - NO_COLOR (any non-empty value) turns colour off in the pretty output.
// - Per-item lines are at debug; the per-sweep summary (src/sweep/summary.ts) logs at info even
//   when the configured level is warn or error (a summary is not noise). One-shot commands log at
//   warn (src/cli/context.ts), and a one-shot sweep that ended ok logs its summary only to the
//   journal (src/cli/sweep.ts): a clean run from cron writes nothing.
import { writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pino, type Logger, type LevelWithSilent } from 'pino';
import type PinoPretty from 'pino-pretty';
import { underJournal } from './journal.js';

export type { Logger } from 'pino';

export interface LogOptions {
  level: LevelWithSilent;
  /** Pretty-print (only when stderr is a TTY and not in tests). */
  pretty?: boolean;
  env?: NodeJS.ProcessEnv;
}

/** pino level number → syslog priority (sd-daemon(3) `<N>` prefixes). */
export function syslogPriority(level: number): number {
  if (level >= 60) return 2;
  if (level >= 50) return 3;
  if (level >= 40) return 4;
  if (level >= 30) return 6;
  return 7;
}

export function colorWanted(env: NodeJS.ProcessEnv = process.env): boolean {
  return (env['NO_COLOR'] ?? '') === '';
}

/** A synchronous stderr destination that prefixes each line with `<N>`. */
function journalDestination(): { write: (line: string) => void } {
  return {
    write(line: string): void {
      const m = /"level":(\d+)/.exec(line);
      writeSync(2, `<${syslogPriority(Number(m?.[1] ?? 30))}>${line}`);
    },
  };
}

export function createLogger(opts: LogOptions): Logger {
  const env = opts.env ?? process.env;
  const base = { name: 'murmur-gc' };
  const underJ = underJournal(env);
  const pretty = opts.pretty && !underJ ? loadPretty() : undefined;
  if (pretty) {
    return pino(
      { ...base, level: opts.level },
      pretty({ destination: 2, sync: true, colorize: colorWanted(env), ignore: 'pid,hostname,name' }),
    );
  }
  if (underJ) return pino({ ...base, level: opts.level }, journalDestination());
  return pino({ ...base, level: opts.level }, pino.destination({ dest: 2, sync: true }));
}

/** pino-pretty, loaded lazily (in-process, TTY only); undefined when it is not installed. */
function loadPretty(): typeof PinoPretty | undefined {
  try {
    return createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;
  } catch {
    return undefined;
  }
}
