// `murmur-gc [sweep]`: load the config, run one sweep, print the report.
// Guarantees: exit 0 when the sweep finished without errors, 1 with errors, 2 on invalid
// configuration (nothing touched), 75 when another sweep holds the lock.
// - A real run records its outcome in <home>/gc/state.json (what `status` shows as the last
//   sweep; trigger "manual", or "unattended" under --unattended: the timer's route). A clean run
//   writes nothing on stderr (cron mails every line); its one-line `sweep_summary` (the daemon's)
//   is logged when stderr is the journal (the timer route, murmur-gc-sweep.service, is as visible
//   as the daemon) or when the sweep did not end ok. A dry run records nothing.
// - With metrics.textfile configured, a real run then writes the metrics file from that same
//   summary (src/sweep/metrics.ts); a failed write is an error of the run (exit 1), reported with
//   the sweep's own errors when the sweep itself finished.
// - SIGTERM/SIGINT stop the sweep at its next safe point (as in the daemon): exit 1, outcome
//   "stopped early" in status and history alike.
// - Human output is grouped (-v lists every item, -q prints only errors) and fits the terminal's
//   width (80 columns when stdout is not a terminal; src/layout.ts); --json prints the one
//   report document. On a TTY (not --json, not -q) a progress line runs on stderr.
// - `--dry-run --at TIME` (a forecast, docs/forecast.md) is that dry run with the sweep's clock
//   injected at TIME (src/cli/at-time.ts forecastClock) and nothing else changed; its report
//   says so (`forecast_ms`, and its first line).
import { homedir } from 'node:os';
import { layoutFor } from '../layout.js';
import { renderHuman, type SweepReport, type Verbosity } from '../sweep/report.js';
import { forecastClock } from './at-time.js';
import { recordOneShotSweep, type SweepSummary, type SweepTrigger } from '../gchome/state.js';
import { busySummary, failedSummary, logSweepSummary, summarizeReport } from '../sweep/summary.js';
import { BusyError, Codes, ConfigError, ExitCodes, GcError, describeError } from '../errors.js';
import type { GcConfig } from '../config/types.js';
import { logConfigWarnings, sweepConfigWarnings } from '../config/load.js';
import type { Logger } from '../log.js';
import { underJournal } from '../journal.js';
import { loadForCommand, oneShotLogger } from './context.js';
import { jsonLine } from './json-contract.js';
import { ProgressLine } from './progress.js';
import { dryRunIfNothing } from '../sweep/nothing.js';

export interface SweepFlags {
  dryRun: boolean;
  json: boolean;
  config?: string;
  home?: string;
  verbose: boolean;
  quiet?: boolean;
  /** The shipped timer's sweep: the unattended blast-radius default applies. */
  unattended?: boolean;
  /** Lift the blast-radius limit for this one sweep. */
  confirmLarge?: boolean;
  /** `--at`: a dry run judged at this instant (ms), a forecast (src/cli/at-time.ts). */
  at?: number;
}

export async function runSweepCommand(opts: SweepFlags): Promise<number> {
  const config = await loadForCommand(opts);
  const quiet = opts.quiet === true && !opts.verbose;
  const verbosity: Verbosity = quiet ? 'quiet' : opts.verbose ? 'verbose' : 'normal';
  // A dry run with nothing to sweep, no configuration warning and no debug lines asked for logs
  // nothing: it is answered before the logger and the pipeline are loaded (docs/benchmarks.md,
  // "Start-up"), with the report the pipeline would make.
  if (
    opts.dryRun &&
    sweepConfigWarnings(config).length === 0 &&
    config.log.level !== 'debug' &&
    config.log.level !== 'trace'
  ) {
    const empty = await dryRunIfNothing(config, clockOf(opts));
    if (empty) {
      const report = forecast(empty, opts);
      // the same document and rendering as the pipeline's report below
      if (opts.json) process.stdout.write(jsonLine('sweep', report));
      else process.stdout.write(renderHuman(report, verbosity, layoutFor(process.stdout, homedir())));
      return ExitCodes.ok;
    }
  }
  const log = await oneShotLogger(config, opts.verbose, opts.json);
  logConfigWarnings(log, config);
  const line = ProgressLine.wanted(process.stderr, { json: opts.json, quiet })
    ? new ProgressLine(process.stderr, opts.dryRun)
    : undefined;
  const started = Date.now();
  // Loaded before the signal handlers below: the pipeline's lock (proper-lockfile) loads signal-exit,
  // which re-raises SIGTERM/SIGINT when its listener is the only one left, so ours (a `once`
  // listener, gone once it has run) must be registered after it.
  const { runSweep } = await import('../sweep/pipeline.js');
  // The shipped timer (and any scheduler) passes --unattended: its sweeps are recorded as such.
  const trigger: SweepTrigger = opts.unattended === true ? 'unattended' : 'manual';
  // SIGTERM (systemctl stop of murmur-gc-sweep.service) / SIGINT (Ctrl-C): stop at the next safe
  // point, finish the audit with what was done, record the outcome ("stopped early").
  const stop = new AbortController();
  const onSignal = (sig: NodeJS.Signals) => stop.abort(new GcError(Codes.aborted, `received ${sig}`));
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  try {
    const clock = clockOf(opts);
    const report = forecast(
      await runSweep({
        config,
        dryRun: opts.dryRun,
        log,
        ...(clock ? { now: clock } : {}),
        signal: stop.signal,
        unattended: opts.unattended === true,
        confirmLarge: opts.confirmLarge === true,
        ...(line ? { progress: (p) => line.update(p), beforeLogs: () => line.end() } : {}),
      }),
      opts,
    );
    line?.end();
    const failed = await recordOutcome(opts, config, log, () => summarizeReport(report, trigger, started, Date.now()));
    if (failed) report.errors.push(failed);
    if (opts.json) process.stdout.write(jsonLine('sweep', report));
    else process.stdout.write(renderHuman(report, verbosity, layoutFor(process.stdout, homedir())));
    log.flush?.();
    return report.errors.length > 0 ? ExitCodes.failed : ExitCodes.ok;
  } catch (err) {
    line?.end();
    if (!(err instanceof ConfigError)) {
      const ended = Date.now();
      await recordOutcome(opts, config, log, () =>
        err instanceof BusyError
          ? busySummary(trigger, started, ended, err.message)
          : failedSummary(
              trigger,
              started,
              ended,
              err instanceof GcError ? err.code : Codes.ioError,
              describeError(err),
            ),
      );
    }
    throw err;
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}

/**
 * `--at`: the sweep's clock reads that instant when the sweep starts (and runs on from there at the
 * real pace): a forecast is exactly a dry run with that clock injected. undefined: the real clock.
 */
function clockOf(opts: SweepFlags): (() => number) | undefined {
  return opts.at === undefined ? undefined : forecastClock(opts.at);
}

/** The report of a forecast says so (`forecast_ms`, right after `dry_run`); any other is as it is. */
function forecast(report: SweepReport, opts: SweepFlags): SweepReport {
  if (opts.at === undefined) return report;
  const { dry_run, ...rest } = report;
  return { dry_run, forecast_ms: opts.at, ...rest };
}

/**
 * A real sweep's outcome, recorded for `status` and written to the metrics file (a dry run
 * records nothing: the one place the command asks which it ran); the metrics error, if any.
 */
async function recordOutcome(
  opts: SweepFlags,
  config: GcConfig,
  log: Logger,
  summary: () => SweepSummary,
): Promise<{ target: string; code: string; detail: string } | undefined> {
  if (opts.dryRun) return undefined;
  const s = summary();
  await record(config.home, log, s, opts.quiet === true && !opts.verbose);
  return metrics(config, log, s);
}

/**
 * Log the summary line and record it for `status`. The report on stdout already says how the
 * sweep went, so an ok sweep's line goes only to the journal (docs/daemon.md "Reading the
 * journal"); on a terminal, a pipe or a file (cron) it is logged only when something went wrong.
 * -q keeps only the lines that are not ok.
 */
async function record(home: string, log: Logger, s: SweepSummary, quiet: boolean): Promise<void> {
  const notOk = s.outcome !== 'ok';
  if (notOk || (!quiet && underJournal())) logSweepSummary(log, s);
  await recordOneShotSweep(home, s, Date.now()).catch((err: unknown) => {
    log.warn({ code: Codes.ioError, home }, `could not record the sweep in the state file: ${describeError(err)}`);
  });
}

/** Write the metrics file (when configured) from the summary just recorded; the error, if any. */
async function metrics(
  config: GcConfig,
  log: Logger,
  s: SweepSummary,
): Promise<{ target: string; code: string; detail: string } | undefined> {
  if (!config.metrics) return undefined;
  try {
    const { lastSuccessAfter, writeMetrics } = await import('../sweep/metrics.js');
    await writeMetrics(config, s, await lastSuccessAfter(config.home, s));
    return undefined;
  } catch (err) {
    const e = {
      target: config.metrics.textfile,
      code: Codes.ioError,
      detail: `the metrics file could not be written: ${describeError(err)}`,
    };
    log.error({ code: e.code, target: e.target }, e.detail);
    return e;
  }
}
