// The daemon's keep_free watch: between scheduled sweeps, is the filesystem under the home short
// of `keep_free`? If so, sweep now.
// Guarantees:
// - Cheap: one statfs(2) of the home per check (once a minute by default), nothing else; no
//   check at all while keep_free is not configured (a reload that adds or removes it is honoured
//   at the next check).
// - Once per crossing: a sweep is triggered when free space — bytes, or inodes where the
//   filesystem has a fixed number of them — is found below keep_free while the watch is armed; it
//   then disarms until a check finds both at or above keep_free again.
//   A home that stays short (what is left is live or not ours) is not swept every minute; the
//   scheduled sweeps go on as usual.
// - A failed statfs (home missing, unreadable) is logged at debug and changes nothing.
import { keepFreeBytes, keepFreeInodes } from '../config/size.js';
import type { GcConfig } from '../config/types.js';
import { describeError } from '../errors.js';
import { countsInodes, statFs, type StatFs } from '../fsx/statfs.js';
import type { Logger } from '../log.js';
import { formatBytes } from '../sweep/report.js';

export const KEEP_FREE_CHECK_MS = 60_000;

export interface KeepFreeWatchOptions {
  config: () => GcConfig;
  log: Logger;
  intervalMs: number;
  statfs?: StatFs;
  /** Starts a sweep (the daemon's tick: skipped when one is already running). */
  trigger: () => Promise<void>;
}

export class KeepFreeWatch {
  private timer: NodeJS.Timeout | undefined;
  private armed = true;
  private checking = false;

  constructor(private readonly opts: KeepFreeWatchOptions) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.check(), this.opts.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One check; resolves once the sweep it started (if any) has finished. Never rejects. */
  async check(): Promise<void> {
    const config = this.opts.config();
    if (!config.keepFree || this.checking) return;
    this.checking = true;
    try {
      let space;
      try {
        space = await (this.opts.statfs ?? statFs)(config.home);
      } catch (err) {
        this.opts.log.debug({ home: config.home }, `keep_free check: free space not readable: ${describeError(err)}`);
        return;
      }
      const required = keepFreeBytes(config.keepFree, space.totalBytes);
      const inodes = countsInodes(space)
        ? { free: space.freeInodes, required: keepFreeInodes(config.keepFree, space.totalBytes, space.totalInodes) }
        : undefined;
      const inodesShort = inodes !== undefined && inodes.free < inodes.required;
      if (space.freeBytes >= required && !inodesShort) {
        this.armed = true;
        return;
      }
      if (!this.armed) return;
      this.armed = false;
      this.opts.log.info(
        {
          home: config.home,
          free_bytes: space.freeBytes,
          required_bytes: required,
          ...(inodes ? { free_inodes: inodes.free, required_inodes: inodes.required } : {}),
        },
        space.freeBytes < required
          ? `free space under the home (${formatBytes(space.freeBytes)}) is below keep_free (${formatBytes(required)}): sweeping now`
          : `free inodes under the home (${inodes!.free}) are below keep_free's share of them (${inodes!.required}): sweeping now`,
      );
      await this.opts.trigger();
    } finally {
      this.checking = false;
    }
  }
}
