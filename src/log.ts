// Logging: pino JSON lines on stderr (journald-friendly), pretty on a TTY.
// pino-pretty is required on first pretty use only, in-process (no transport worker thread): a
// headless run (the daemon, cron, pipes) never loads it, and if it is not installed a TTY gets
// the JSON lines instead.
// Guarantees: logs never go to stdout (stdout is reserved for reports and --json documents);
// every warning/error carries a stable `code`; callers pass ids, counts, sizes and paths only —
// never conversation content (no helper here accepts message text).
import { createRequire } from 'node:module';
import { pino, type Logger, type LevelWithSilent } from 'pino';
import type PinoPretty from 'pino-pretty';

export type { Logger } from 'pino';

export interface LogOptions {
  level: LevelWithSilent;
  /** Pretty-print (only when stderr is a TTY and not in tests). */
  pretty?: boolean;
}

export function createLogger(opts: LogOptions): Logger {
  const base = { name: 'murmur-gc' };
  const pretty = opts.pretty ? loadPretty() : undefined;
  if (pretty) return pino({ ...base, level: opts.level }, pretty({ destination: 2, sync: true, colorize: true, ignore: 'pid,hostname,name' }));
  return pino({ ...base, level: opts.level }, pino.destination({ dest: 2, sync: true }));
}

/** pino-pretty, loaded lazily; undefined when it is not installed. */
function loadPretty(): typeof PinoPretty | undefined {
  try {
    return createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;
  } catch {
    return undefined;
  }
}
