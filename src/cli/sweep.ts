// `murmur-gc [sweep]`: load the config, run one sweep, print the report.
// Guarantees: exit 0 when the sweep finished without errors, 1 with errors, 2 on invalid
// configuration (nothing touched), 75 when another sweep holds the lock.
import { runSweep } from '../apply/sweep.js';
import { renderHuman } from '../apply/report.js';
import { ExitCodes } from '../errors.js';
import { loadForCommand, oneShotLogger } from './context.js';

export async function runSweepCommand(opts: { dryRun: boolean; json: boolean; config?: string; home?: string; verbose: boolean }): Promise<number> {
  const config = await loadForCommand(opts);
  const log = oneShotLogger(config, opts.verbose, opts.json);
  const report = await runSweep({ config, dryRun: opts.dryRun, log });
  if (opts.json) process.stdout.write(JSON.stringify(report) + '\n');
  else process.stdout.write(renderHuman(report));
  log.flush?.();
  return report.errors.length > 0 ? ExitCodes.failed : ExitCodes.ok;
}
