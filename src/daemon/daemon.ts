// `murmur-gc daemon`: the long-running side. Runs the sweep on the configured cron schedule.
//
// Invariants and decisions:
// - Never two sweeps at once. In this process: one in-flight sweep promise; a tick (cron, the
//   start-up run) that finds one running is skipped and logged; cron's own `waitForCompletion`
//   also skips its ticks while its previous callback runs. Across processes: the sweep lock
//   (`<home>/gc/sweep.lock`) — a tick that finds it held (a manual `murmur-gc sweep`) is logged
//   with `storage_busy` and skipped.
// - One summary log line per sweep (`event: "sweep_summary"`: outcome, counts per action kind,
//   bytes freed, skipped by code, errors by code, duration, audit id), and the same summary in
//   `<home>/gc/state.json`, with the next scheduled run and this daemon's pid + start time token.
// - SIGTERM/SIGINT: stop scheduling, abort the in-flight sweep through its AbortSignal (the sweep
//   stops at its next safe point between items — a directory removal or a staged rewrite that has
//   started is finished or left recoverable), wait for it, write the state and resolve 0. If the
//   sweep has not stopped after STOP_DEADLINE_MS the daemon resolves anyway (what is left is the
//   kind of debris the next run recovers), so the process exits within 10 s.
// - SIGHUP: reload the configuration with the same flags. An invalid one is logged with
//   `config_invalid` and the old configuration and schedule stay in force; a valid one replaces
//   the config (log level included) and reschedules when the schedule changed. A sweep in flight
//   finishes on the configuration it started with.
// - Start-up: the random delay applies to scheduled sweeps, not to the start-up run. Temp files of
//   a killed predecessor in `<home>/gc` are removed and logged with `process_interrupted`; the
//   sweep itself breaks a dead holder's lock, removes record temp files / trash directories and
//   completes interrupted audit traces (also reported with `process_interrupted`).
// - A missing home is not an error: the daemon runs, sweeps report "nothing to sweep", and no
//   state file is written until the runtime has created the home.
// - A state-file write failure is logged (io_error) and never stops the daemon. Before each write
//   the file is re-read and the newer `last_sweep` wins (a one-shot sweep may have recorded one).
// - Logs: ids, counts, codes, paths and durations — never record content.
// - Memory: a sweep that leaves a heap of 48 MiB or more is collected before its summary is
//   logged (src/daemon/release-memory.ts), so the next sweep does not build its working set beside
//   this one's garbage; a smaller heap is left to V8.
// - metrics.textfile: written after every sweep from the same summary as the state file (a write
//   failure is logged with io_error and never stops the daemon).
// - keep_free (src/daemon/keep-free.ts): between scheduled sweeps, one statfs of the home a minute;
//   when free space falls below keep_free a sweep starts at once (trigger `keep_free`), once per
//   crossing: the watch re-arms only after free space is back at or above keep_free, so a home
//   that stays short (live data) is not swept every minute.
import { setTimeout as sleep } from 'node:timers/promises';
import { CronJob } from 'cron';
import { runSweep } from '../sweep/pipeline.js';
import { collectSweepGarbage } from './release-memory.js';
import type { GcConfig } from '../config/types.js';
import { logConfigWarnings } from '../config/load.js';
import { BusyError, Codes, ConfigError, GcError, describeError } from '../errors.js';
import { probeProcess, startTimeOf } from '../runtime/running.js';
import type { Logger } from '../log.js';
import { writeMetrics } from '../sweep/metrics.js';
import { KEEP_FREE_CHECK_MS, KeepFreeWatch } from './keep-free.js';
import type { StatFs } from '../fsx/statfs.js';
import {
  newerSweeps,
  readStateFile,
  writeStateFile,
  STATE_VERSION,
  type DaemonState,
  type SweepSummary,
  type SweepTrigger,
} from '../gchome/state.js';
import { busySummary, failedSummary, logSweepSummary, summarizeReport } from '../sweep/summary.js';

/** After a stop signal, give the in-flight sweep this long to reach a safe point. */
export const STOP_DEADLINE_MS = 8_000;

const STOP_SIGNALS = ['SIGTERM', 'SIGINT'] as const;

export interface DaemonDeps {
  /** Loads (or reloads) the configuration with the command's flags; throws ConfigError. */
  load: () => Promise<GcConfig>;
  log: Logger;
  now?: () => number;
  /** The sweep to run (tests substitute a fake); default `runSweep`. */
  sweep?: typeof runSweep;
  /** How long a stop waits for the in-flight sweep; default STOP_DEADLINE_MS. */
  stopDeadlineMs?: number;
  /** Free space of the home's filesystem (tests inject one); default statfs(2). */
  statfs?: StatFs;
  /** How often keep_free is checked between sweeps; default KEEP_FREE_CHECK_MS. */
  keepFreeCheckMs?: number;
}

/** Build (and so validate) the cron job of a schedule; a bad expression is a ConfigError. */
export function makeCronJob(
  schedule: string,
  onTick: () => Promise<void>,
  onError: (err: unknown) => void,
  source?: string,
): CronJob {
  try {
    return CronJob.from({
      cronTime: schedule,
      onTick,
      start: false,
      waitForCompletion: true,
      errorHandler: onError,
      name: 'murmur-gc sweep',
    });
  } catch (err) {
    throw new ConfigError('schedule', `'${schedule}' is not a usable cron schedule (${describeError(err)})`, source);
  }
}

export class Daemon {
  private config: GcConfig;
  private readonly log: Logger;
  private readonly load: () => Promise<GcConfig>;
  private readonly now: () => number;
  private readonly sweep: typeof runSweep;
  private readonly stopDeadlineMs: number;
  private job: CronJob | undefined;
  private readonly keepFree: KeepFreeWatch;
  private readonly stopController = new AbortController();
  private stopping = false;
  private inflight: Promise<void> | undefined;
  private state: DaemonState;
  private stateWrites: Promise<void> = Promise.resolve();
  private reloads: Promise<void> = Promise.resolve();
  private readonly handlers = new Map<NodeJS.Signals, () => void>();
  private resolveDone: (code: number) => void = () => undefined;
  private readonly done: Promise<number>;

  constructor(config: GcConfig, deps: DaemonDeps) {
    this.config = config;
    this.log = deps.log;
    this.load = deps.load;
    this.now = deps.now ?? Date.now;
    this.sweep = deps.sweep ?? runSweep;
    this.stopDeadlineMs = deps.stopDeadlineMs ?? STOP_DEADLINE_MS;
    this.keepFree = new KeepFreeWatch({
      config: () => this.config,
      log: this.log,
      intervalMs: deps.keepFreeCheckMs ?? KEEP_FREE_CHECK_MS,
      ...(deps.statfs ? { statfs: deps.statfs } : {}),
      trigger: () => this.tick('keep_free'),
    });
    this.state = {
      version: STATE_VERSION,
      updated_ms: this.now(),
      daemon: null,
      next_run_ms: null,
      current_sweep: null,
      last_sweep: null,
    };
    this.done = new Promise<number>((resolve) => {
      this.resolveDone = resolve;
    });
  }

  /** Start scheduling; resolves with the exit code once the daemon has stopped. */
  async run(): Promise<number> {
    // Signals first: a SIGTERM during start-up must already mean "stop cleanly".
    for (const sig of STOP_SIGNALS) this.on(sig, () => void this.shutdown(sig));
    this.on('SIGHUP', () => {
      this.reloads = this.reloads.then(() => this.reload());
    });
    try {
      await this.startUp();
    } catch (err) {
      this.removeHandlers();
      throw err;
    }
    return this.done;
  }

  private on(sig: NodeJS.Signals, fn: () => void): void {
    this.handlers.set(sig, fn);
    process.on(sig, fn);
  }

  private removeHandlers(): void {
    for (const [sig, fn] of this.handlers) process.off(sig, fn);
    this.handlers.clear();
  }

  private async startUp(): Promise<void> {
    const config = this.config;
    logConfigWarnings(this.log, config);
    const job = makeCronJob(
      config.schedule,
      () => this.tick('schedule'),
      (err) => this.onCronError(err),
      config.source,
    );
    const token = (await startTimeOf(process.pid)) ?? null;

    const prior = await readStateFile(config.home);
    if (prior.status === 'ok') {
      const d = prior.state.daemon;
      if (
        d &&
        d.stopped_ms === null &&
        d.pid !== process.pid &&
        d.start_time !== null &&
        (await probeProcess(d.pid, d.start_time)) === 'alive'
      ) {
        throw new BusyError(`another murmur-gc daemon (pid ${d.pid}) is running for ${config.home}; stop it first`);
      }
      this.state.last_sweep = prior.state.last_sweep;
      if (prior.state.last_success_ms !== undefined) this.state.last_success_ms = prior.state.last_success_ms;
    } else if (prior.status === 'corrupt') {
      this.log.warn(
        { code: Codes.invalidLine, path: `${config.home}/gc/state.json` },
        `the state file is unreadable and will be rewritten: ${prior.detail}`,
      );
    }

    // Temp files a killed murmur-gc left under <home>/gc are removed by every real sweep (its
    // recover step), under the sweep lock: not here as well.

    if (this.stopping) return;
    this.job = job;
    this.state.daemon = {
      pid: process.pid,
      start_time: token,
      started_ms: this.now(),
      stopped_ms: null,
      config: config.source ?? null,
      schedule: config.schedule,
    };
    this.state.next_run_ms = this.nextRunMs();
    this.log.info(
      {
        home: config.home,
        config: config.source ?? null,
        schedule: config.schedule,
        run_on_start: config.runOnStart,
        random_delay_secs: config.randomDelaySecs,
        next_run: isoOrNull(this.state.next_run_ms),
      },
      'murmur-gc daemon started',
    );
    // The start-up sweep claims the in-flight slot before the schedule can fire, so a cron tick
    // in the same second is skipped rather than taking its place.
    if (config.runOnStart) void this.tick('start');
    job.start();
    this.keepFree.start();
    await this.saveState();
  }

  private nextRunMs(): number | null {
    if (!this.job || this.stopping) return null;
    try {
      return this.job.nextDate().toMillis();
    } catch {
      return null;
    }
  }

  private onCronError(err: unknown): void {
    this.log.error(
      { code: err instanceof GcError ? err.code : Codes.ioError },
      `scheduled sweep failed: ${describeError(err)}`,
    );
  }

  /** One scheduled or start-up sweep, unless one is already running. Never rejects. */
  tick(trigger: SweepTrigger): Promise<void> {
    if (this.stopping) return Promise.resolve();
    if (this.inflight) {
      this.log.info(
        { trigger, running_since: isoOrNull(this.state.current_sweep?.started_ms ?? null) },
        'sweep skipped: the previous sweep is still running',
      );
      return Promise.resolve();
    }
    const p = this.sweepOnce(trigger).catch((err: unknown) => {
      this.log.error({ code: Codes.ioError }, `daemon sweep bookkeeping failed: ${describeError(err)}`);
    });
    const guarded = p.finally(() => {
      if (this.inflight === guarded) this.inflight = undefined;
    });
    this.inflight = guarded;
    return guarded;
  }

  private async sweepOnce(trigger: SweepTrigger): Promise<void> {
    const delaySecs = trigger === 'schedule' ? this.config.randomDelaySecs : 0;
    if (delaySecs > 0) {
      const ms = Math.floor(Math.random() * delaySecs * 1000);
      this.log.debug({ delay_ms: ms }, 'random delay before the sweep');
      try {
        await sleep(ms, undefined, { signal: this.stopController.signal });
      } catch {
        return; // stopping
      }
    }
    if (this.stopping) return;
    const config = this.config; // a reload during the sweep applies to the next one
    const started = this.now();
    this.state.current_sweep = { started_ms: started, trigger };
    await this.saveState();
    const summary = await this.sweepSummary(config, trigger, started);
    // (the sweep's report and working set are unreachable now that sweepSummary has returned)
    collectSweepGarbage();
    logSweepSummary(this.log, summary);
    this.state.last_sweep = summary;
    if (summary.outcome === 'ok') this.state.last_success_ms = summary.ended_ms;
    this.state.current_sweep = null;
    this.state.next_run_ms = this.nextRunMs();
    await this.saveState();
    if (config.metrics) {
      try {
        await writeMetrics(config, summary, this.state.last_success_ms ?? null);
      } catch (err) {
        this.log.error(
          { code: Codes.ioError, path: config.metrics.textfile },
          `could not write the metrics file: ${describeError(err)}`,
        );
      }
    }
  }

  /** Run one sweep; its summary, whatever the outcome. */
  private async sweepSummary(config: GcConfig, trigger: SweepTrigger, started: number): Promise<SweepSummary> {
    try {
      const report = await this.sweep({
        config,
        dryRun: false,
        log: this.log,
        signal: this.stopController.signal,
        unattended: true,
      });
      return summarizeReport(report, trigger, started, this.now());
    } catch (err) {
      const ended = this.now();
      if (err instanceof BusyError) return busySummary(trigger, started, ended, err.message);
      return failedSummary(
        trigger,
        started,
        ended,
        err instanceof GcError ? err.code : Codes.ioError,
        describeError(err),
      );
    }
  }

  private async reload(): Promise<void> {
    if (this.stopping) return;
    this.log.info({ config: this.config.source ?? null }, 'SIGHUP: reloading the configuration');
    let next: GcConfig;
    let job: CronJob | undefined;
    try {
      next = await this.load();
      if (next.schedule !== this.config.schedule) {
        job = makeCronJob(
          next.schedule,
          () => this.tick('schedule'),
          (err) => this.onCronError(err),
          next.source,
        );
      }
    } catch (err) {
      this.log.error(
        { code: Codes.configInvalid },
        `configuration reload failed; the previous configuration stays in force: ${describeError(err)}`,
      );
      return;
    }
    if (this.stopping) return;
    const old = this.config;
    this.config = next;
    this.log.level = next.log.level;
    if (job) {
      void this.job?.stop();
      this.job = job;
      job.start();
    }
    if (this.state.daemon) {
      this.state.daemon.config = next.source ?? null;
      this.state.daemon.schedule = next.schedule;
    }
    this.state.next_run_ms = this.nextRunMs();
    if (old.home !== next.home) {
      // The old home's state must not keep naming a running daemon.
      const stale: DaemonState = {
        ...this.state,
        daemon: this.state.daemon ? { ...this.state.daemon, stopped_ms: this.now() } : null,
        next_run_ms: null,
      };
      await writeStateFile(old.home, { ...stale, updated_ms: this.now() }).catch(() => false);
    }
    this.log.info(
      {
        schedule: next.schedule,
        home: next.home,
        next_run: isoOrNull(this.state.next_run_ms),
        rescheduled: job !== undefined,
      },
      'configuration reloaded',
    );
    logConfigWarnings(this.log, next);
    await this.saveState();
  }

  /** SIGTERM/SIGINT: stop scheduling, abort and await the running sweep, write state, resolve 0. */
  async shutdown(signal: NodeJS.Signals): Promise<void> {
    if (this.stopping) {
      this.log.info({ signal }, 'already stopping');
      return;
    }
    this.stopping = true;
    const t0 = this.now();
    const running = this.inflight !== undefined;
    this.log.info(
      { signal, sweep_running: running },
      running ? 'stopping: the running sweep stops at its next safe point' : 'stopping',
    );
    void this.job?.stop();
    this.keepFree.stop();
    this.stopController.abort(new GcError(Codes.aborted, `received ${signal}`));
    if (this.inflight) {
      let timer: NodeJS.Timeout | undefined;
      const finished = await Promise.race([
        this.inflight.then(() => true),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(false), this.stopDeadlineMs);
        }),
      ]);
      clearTimeout(timer);
      if (!finished) {
        this.log.error(
          { code: Codes.aborted, waited_ms: this.now() - t0 },
          'the running sweep did not reach a safe point in time; exiting anyway — the next run finishes its audit trace and removes its leftovers',
        );
      }
    }
    if (this.state.daemon) this.state.daemon.stopped_ms = this.now();
    this.state.next_run_ms = null;
    await this.saveState();
    this.log.info({ signal, stop_ms: this.now() - t0 }, 'murmur-gc daemon stopped');
    this.removeHandlers();
    this.resolveDone(0);
  }

  private saveState(): Promise<void> {
    const home = this.config.home;
    this.state.updated_ms = this.now();
    const snapshot = structuredClone(this.state);
    this.stateWrites = this.stateWrites.then(async () => {
      try {
        // A one-shot sweep (the timer's route, or by hand) may have recorded a newer summary
        // since this daemon last read the file: the newer one wins, here and in memory.
        const disk = await readStateFile(home);
        if (disk.status === 'ok') {
          const merged = newerSweeps(snapshot, disk.state);
          snapshot.last_sweep = merged.last_sweep;
          if (merged.last_success_ms !== undefined) snapshot.last_success_ms = merged.last_success_ms;
          if (this.config.home === home) {
            const mem = newerSweeps(this.state, disk.state);
            this.state.last_sweep = mem.last_sweep;
            if (mem.last_success_ms !== undefined) this.state.last_success_ms = mem.last_success_ms;
          }
        }
        const written = await writeStateFile(home, snapshot);
        if (!written) this.log.debug({ home }, 'no state file written: the murmur home does not exist (yet)');
      } catch (err) {
        this.log.warn({ code: Codes.ioError, home }, `could not write the state file: ${describeError(err)}`);
      }
    });
    return this.stateWrites;
  }
}

function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}
