// A single updating status line on stderr for long runs (phase, items done/total, bytes, elapsed).
// Guarantees: only when stderr is a TTY and the caller did not ask for --json or --quiet (the
// daemon never builds one); nothing is drawn before the run is ~1 s old; the line is erased
// before the report is printed, so stdout and the logs never contain it. Used by the sweep and by
// `conversation ls` (counting a large record can take seconds).
import type { Progress } from '../sweep/steps/context.js';
import { formatBytes, formatDuration } from '../sweep/report.js';

/**
 * How old a run must be before the line is drawn (~1 s). MURMUR_GC_PROGRESS_AFTER_MS overrides it
 * (a whole number of ms), so tests can show the line on a machine fast enough to finish sooner.
 */
const SHOW_AFTER_MS = ((): number => {
  const v = process.env['MURMUR_GC_PROGRESS_AFTER_MS'];
  return v !== undefined && /^\d{1,7}$/.test(v) ? Number(v) : 1000;
})();
const REDRAW_MS = 100;

export class ProgressLine {
  private last: Progress | undefined;
  private drawnAt = 0;
  private shown = false;
  private ended = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly out: NodeJS.WriteStream,
    private readonly dryRun: boolean,
    private readonly startMs = Date.now(),
  ) {
    this.timer = setInterval(() => this.draw(true), 250);
    this.timer.unref();
  }

  /** A progress line only where a person watches: a TTY, not --json, not --quiet. */
  static wanted(stream: NodeJS.WriteStream, opts: { json: boolean; quiet: boolean }): boolean {
    return stream.isTTY === true && !opts.json && !opts.quiet;
  }

  update(p: Progress): void {
    this.last = p;
    this.draw(false);
  }

  text(now = Date.now()): string {
    const p = this.last;
    const phase = p ? p.label : 'starting';
    const parts = [`murmur-gc${this.dryRun ? ' (dry run)' : ''}: ${phase}`];
    if (p && p.total !== undefined && p.total > 0) parts.push(`${p.done}/${p.total}`);
    else if (p?.unit !== undefined && p.done > 0) parts.push(`${p.done} ${p.unit}`);
    if (p && p.bytes > 0) parts.push(formatBytes(p.bytes));
    parts.push(formatDuration(now - this.startMs));
    return parts.join(' · ');
  }

  private draw(force: boolean): void {
    if (this.ended) return;
    const now = Date.now();
    if (now - this.startMs < SHOW_AFTER_MS) return;
    if (!force && now - this.drawnAt < REDRAW_MS) return;
    this.drawnAt = now;
    const cols = this.out.columns > 10 ? this.out.columns - 1 : 79;
    this.out.write(`\r\x1b[2K${this.text(now).slice(0, cols)}`);
    this.shown = true;
  }

  /** Stop redrawing and erase the line (once: later calls and updates do nothing). */
  end(): void {
    clearInterval(this.timer);
    if (this.shown) this.out.write('\r\x1b[2K');
    this.shown = false;
    this.ended = true;
  }
}
