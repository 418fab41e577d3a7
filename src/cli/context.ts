// Shared CLI plumbing: loading the configuration and building the logger for a command.
// Guarantees: configuration errors surface as ConfigError (exit 2) before anything is touched;
// logs go to stderr only. The configuration loader (yaml, zod) and the logger (pino) are imported
// when a command first asks for them, so `--help` and the commands that never log load neither.
import type { GcConfig } from '../config/types.js';
import type { Logger } from '../log.js';
import type { CommonFlags } from './types.js';

export async function loadForCommand(flags: CommonFlags): Promise<GcConfig> {
  const { loadConfig } = await import('../config/load.js');
  return loadConfig({
    ...(flags.config !== undefined ? { configPath: flags.config } : {}),
    ...(flags.home !== undefined ? { home: flags.home } : {}),
    env: process.env,
    cwd: process.cwd(),
  });
}

/**
 * Logger for one-shot commands: warnings and errors, unless verbose (info) or the configuration
 * asks for more (debug, trace: per-item lines) or less (error, fatal, silent).
 */
export async function oneShotLogger(config: GcConfig | undefined, verbose: boolean, json: boolean): Promise<Logger> {
  const { createLogger } = await import('../log.js');
  const configured = config?.log.level ?? 'info';
  const level = ['trace', 'debug', 'error', 'fatal', 'silent'].includes(configured) ? configured : verbose ? 'info' : 'warn';
  return createLogger({ level, pretty: !json && process.stderr.isTTY === true && process.env['CI'] === undefined });
}
