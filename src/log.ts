// Logging: pino JSON lines on stderr (journald-friendly), pretty on a TTY.
// Guarantees: logs never go to stdout (stdout is reserved for reports and --json documents);
// every warning/error carries a stable `code`; callers pass ids, counts, sizes and paths only —
// never conversation content (no helper here accepts message text).
import { pino, type Logger, type LevelWithSilent } from 'pino';

export type { Logger } from 'pino';

export interface LogOptions {
  level: LevelWithSilent;
  /** Pretty-print (only when stderr is a TTY and not in tests). */
  pretty?: boolean;
}

export function createLogger(opts: LogOptions): Logger {
  const base = { name: 'murmur-gc' };
  if (opts.pretty) {
    return pino({
      ...base,
      level: opts.level,
      transport: { target: 'pino-pretty', options: { destination: 2, colorize: true, ignore: 'pid,hostname,name' } },
    });
  }
  return pino({ ...base, level: opts.level }, pino.destination({ dest: 2, sync: true }));
}
