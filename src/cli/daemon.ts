// `murmur-gc daemon|status|history` (commander wiring).
// Guarantees: `daemon` exits 0 after SIGTERM/SIGINT (within 10 s), 2 on an invalid configuration
// at start (nothing touched), 75 when another daemon already runs for the home; under systemd
// (NOTIFY_SOCKET) it reports READY=1 once its signal handlers are installed, before reading the
// configuration (src/daemon/sd-notify.ts); `status` and
// `history` are read-only and exit 0 (2 on a bad --since; history --target exits 1 when nothing
// in the trail names the target, 2 when it is a prefix of more than one name). On an invalid
// configuration they still show what the home holds, say so on stderr and exit 2
// (src/cli/context.ts loadForView); with --json
// exactly one JSON document goes to stdout and logs go to stderr only.
// The daemon, the status/history readers (and through them `cron`) and the logger are imported
// when their command runs, so other commands do not load them at start-up.
import { InvalidArgumentError, type Command } from 'commander';
import { parseDurationSecs } from '../config/retain.js';
import { Codes, ExitCodes, describeError } from '../errors.js';
import type { GcConfig } from '../config/types.js';
import { invalidConfigNotice, loadForCommand, loadForView } from './context.js';
import { recordEarlySignals, releaseEarlySignals, stopRequested } from './early-signals.js';
import { historyJson, jsonLine } from './json-contract.js';
import { ExitWith, type CommonFlags, FORCE_HOME_HELP } from './types.js';
import { definedOnly } from '../defined.js';

/** Once the daemon has stopped, do not let a lingering handle keep the process alive. */
const EXIT_GRACE_MS = 1_000;

function parseSince(value: string): number {
  try {
    return parseDurationSecs(value);
  } catch (err) {
    throw new InvalidArgumentError(`${describeError(err)} (e.g. 90, 30m, 12h, 7d)`);
  }
}

export async function runDaemonCommand(
  flags: CommonFlags,
  deps: { load?: (flags: CommonFlags) => Promise<GcConfig> } = {},
): Promise<number> {
  // Handlers before the configuration is loaded: a stop or reload during start-up is kept and
  // handed to the daemon (bin.ts starts recording even earlier, before the CLI is loaded).
  recordEarlySignals();
  // Under systemd (Type=notify) the unit is ready from here: every signal is handled, and a reload
  // that systemd held until now is a SIGHUP recorded above. Ready before the configuration is
  // read, so a reload requested while the daemon was starting is never lost: the file is read
  // after it (docs/daemon.md).
  const notified = (await import('../daemon/sd-notify.js')).notifyReady();
  const load = deps.load ?? loadForCommand;
  let config: GcConfig;
  let Daemon: typeof import('../daemon/daemon.js').Daemon;
  let createLogger: typeof import('../log.js').createLogger;
  try {
    config = await load(flags);
    ({ Daemon } = await import('../daemon/daemon.js'));
    ({ createLogger } = await import('../log.js'));
  } catch (err) {
    releaseEarlySignals();
    throw err;
  }
  const log = createLogger({
    level: config.log.level,
    pretty: process.stderr.isTTY === true && process.env['CI'] === undefined,
  });
  void notified?.then((r) => {
    if (!r.sent)
      log.warn(
        { code: Codes.ioError },
        `could not tell systemd the daemon is ready (${r.detail ?? 'unknown'}); systemd stops a Type=notify unit that never reports ready when TimeoutStartSec= runs out`,
      );
  });
  if (stopRequested()) {
    const got = releaseEarlySignals();
    log.info({ signals: got }, 'stopped during start-up, before anything was done');
    log.flush?.();
    return 0;
  }
  const daemon = new Daemon(config, { load: () => load(flags), log });
  const running = daemon.run(); // installs the daemon's own handlers before its first await
  for (const sig of releaseEarlySignals()) process.emit(sig, sig);
  const code = await running;
  log.flush?.();
  setTimeout(() => process.exit(code), EXIT_GRACE_MS).unref();
  return code;
}

export async function runStatusCommand(opts: CommonFlags & { json: boolean }): Promise<number> {
  const { config, invalid } = await loadForView(opts);
  const { gatherStatus, renderStatus } = await import('../commands/status.js');
  const doc = await gatherStatus(config);
  if (opts.json) process.stdout.write(jsonLine('status', { ...doc, config_invalid: invalid ?? null }));
  else {
    const { layoutFor } = await import('../layout.js');
    const { homedir } = await import('node:os');
    process.stdout.write(renderStatus(doc, Date.now(), layoutFor(process.stdout, homedir())));
  }
  if (invalid) process.stderr.write(invalidConfigNotice(invalid, config.home));
  return invalid ? ExitCodes.usage : ExitCodes.ok;
}

export async function runHistoryCommand(
  opts: CommonFlags & { json: boolean; target?: string; since?: number },
  nowMs = Date.now(),
): Promise<number> {
  const { config, invalid } = await loadForView(opts);
  const sinceMs = opts.since === undefined ? undefined : nowMs - opts.since * 1000;
  const { readAuditHistory } = await import('../commands/audit-read.js');
  const { buildHistory, renderHistory, heldNowKey } = await import('../commands/history.js');
  const { listHeld } = await import('../gchome/held-listing.js');
  const read = await readAuditHistory(config.home, definedOnly({ sinceMs, target: opts.target }));
  // What the undo window holds now: a removal it holds is "held", not "removed".
  const held = new Map<string, number>();
  for (const i of (await listHeld(config, false)).items)
    held.set(heldNowKey(i.kind === 'session' ? 'sessions' : 'records', i.target), i.untilMs);
  const doc = buildHistory(
    {
      home: config.home,
      auditRoot: read.auditRoot,
      exists: read.exists,
      problems: read.problems,
      where: read.where,
      held,
    },
    read.sweeps,
    definedOnly({ sinceMs, target: opts.target }),
  );
  process.stdout.write(
    opts.json ? jsonLine('history', { ...historyJson(doc), config_invalid: invalid ?? null }) : renderHistory(doc),
  );
  if (invalid) {
    process.stderr.write(invalidConfigNotice(invalid, config.home));
    return ExitCodes.usage;
  }
  // --target names something no sweep in the trail removed or truncated: say so with exit 1.
  return opts.target !== undefined && (doc.matches ?? []).length === 0 ? 1 : 0;
}

export function registerDaemonCommands(program: Command): void {
  program
    .command('daemon')
    .description('run sweeps on the configured schedule until SIGTERM/SIGINT (SIGHUP reloads the configuration)')
    .option('--config <file>', 'configuration file (default $XDG_CONFIG_HOME/murmur-gc/config.yaml)')
    .option('--home <dir>', 'the murmur home (default from the config, else $HOME/.murmur)')
    .option('--force-home', FORCE_HOME_HELP, false)
    .action(async (opts: { config?: string; home?: string }) => {
      const code = await runDaemonCommand(opts);
      if (code !== 0) throw new ExitWith(code);
    });

  program
    .command('status')
    .description(
      'is the daemon running, what did the last sweep do, when is the next one, how big are the stores, what expires next',
    )
    .option('--json', 'print one JSON document on stdout', false)
    .option('--config <file>', 'configuration file (default $XDG_CONFIG_HOME/murmur-gc/config.yaml)')
    .option('--home <dir>', 'the murmur home (default from the config, else $HOME/.murmur)')
    .option('--force-home', FORCE_HOME_HELP, false)
    .action(async (opts: { json: boolean; config?: string; home?: string }) => {
      const code = await runStatusCommand(opts);
      if (code !== 0) throw new ExitWith(code);
    });

  program
    .command('history')
    .description("past sweeps from murmur-gc's audit traces in <home>/gc: what each removed or truncated, and why")
    .option('--json', 'print one JSON document on stdout', false)
    .option(
      '--target <name>',
      'what happened to this session (ses_…) or conversation context: removed, held, truncated, purged, restored, reconciled; a unique prefix of the id will do',
    )
    .option('--since <duration>', 'only sweeps started within this duration (90, 30m, 12h, 7d)', parseSince)
    .option('--config <file>', 'configuration file (default $XDG_CONFIG_HOME/murmur-gc/config.yaml)')
    .option('--home <dir>', 'the murmur home (default from the config, else $HOME/.murmur)')
    .option('--force-home', FORCE_HOME_HELP, false)
    .action(async (opts: { json: boolean; target?: string; since?: number; config?: string; home?: string }) => {
      const code = await runHistoryCommand(opts);
      if (code !== 0) throw new ExitWith(code);
    });
}
