// Shared CLI plumbing: loading the configuration and building the logger for a command.
// Guarantees: configuration errors surface as ConfigError (exit 2) before anything is touched;
// logs go to stderr only. The configuration loader (and yaml) and the logger (pino) are imported
// when a command first asks for them, so `--help` and the commands that never log load neither.
import type { GcConfig } from '../config/types.js';
import type { Logger } from '../log.js';
import { boundEchoes } from './echo.js';
import type { CommonFlags } from './types.js';
import { definedOnly } from '../defined.js';
import type { InvalidConfig } from '../schema/json-schemas.js';

export async function loadForCommand(flags: CommonFlags): Promise<GcConfig> {
  const { loadConfig } = await import('../config/load.js');
  return loadConfig({
    ...definedOnly({ configPath: flags.config, home: flags.home }),
    ...(flags.forceHome === true ? { forceHome: true } : {}),
    env: process.env,
    cwd: process.cwd(),
  });
}

/** Why a read-only view runs on a fallback configuration (the real one is invalid): its documents' `config_invalid` (src/schema/json-schemas.ts). */
export type { InvalidConfig };

/**
 * The configuration for a read-only view (`status`, `history`, `quarantine ls`). An invalid
 * configuration does not blind it: it gets a fallback holding the home (the one the file names
 * when that key resolved, else `--home`, else `$HOME/.murmur`) and the entries that resolved, and
 * `invalid` says what is wrong; the caller shows what it finds, says so, and exits 2 (docs/config.md).
 */
export async function loadForView(
  flags: CommonFlags,
): Promise<{ config: GcConfig; invalid: InvalidConfig | undefined }> {
  const { checkConfig, viewFallbackConfig } = await import('../config/load.js');
  const opts = {
    ...definedOnly({ configPath: flags.config, home: flags.home }),
    ...(flags.forceHome === true ? { forceHome: true } : {}),
    env: process.env,
    cwd: process.cwd(),
  };
  const check = await checkConfig(opts);
  const first = check.errors[0];
  if (check.fatal === 0 && check.config) return { config: check.config, invalid: undefined };
  const config = viewFallbackConfig(check, opts);
  const at =
    first?.file !== undefined
      ? `${first.file}${first.line !== undefined ? `:${first.line}:${first.column ?? 1}` : ''}: `
      : '';
  return {
    config,
    invalid: {
      file: check.source ?? null,
      errors: check.fatal,
      first: first ? `${at}${first.keyPath ? `${first.keyPath}: ` : ''}${first.detail}` : 'invalid configuration',
      hint: `\`murmur-gc config check${flags.config !== undefined ? ' --config FILE' : ''}\` lists every error`,
    },
  };
}

/** The one stderr line a view prints when it runs on the fallback configuration. */
export function invalidConfigNotice(invalid: InvalidConfig, home: string): string {
  const more = invalid.errors > 1 ? ` (and ${invalid.errors - 1} more)` : '';
  return boundEchoes(
    `murmur-gc: invalid configuration [config_invalid]: ${invalid.first}${more}\n  showing what ${home} holds without it (exit 2); ${invalid.hint}\n`,
    process.argv.slice(2),
  );
}

/**
 * Logger for one-shot commands: warnings and errors, unless verbose (info) or the configuration
 * asks for more (debug, trace: per-item lines) or less (error, fatal, silent).
 */
export async function oneShotLogger(config: GcConfig | undefined, verbose: boolean, json: boolean): Promise<Logger> {
  const { createLogger } = await import('../log.js');
  const configured = config?.log.level ?? 'info';
  const level = ['trace', 'debug', 'error', 'fatal', 'silent'].includes(configured)
    ? configured
    : verbose
      ? 'info'
      : 'warn';
  return createLogger({ level, pretty: !json && process.stderr.isTTY === true && process.env['CI'] === undefined });
}
