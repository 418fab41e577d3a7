// The murmur-gc command line (commander wiring). Only src/cli/ sets exit codes or exits.
// Guarantees: exit 0 done; 1 finished with errors or a refusal; 2 usage or invalid
// configuration (nothing touched); 75 another sweep or writer holds the lock. With --json exactly
// one JSON document is printed on stdout and logs go to stderr only.
// Start-up: this module and the command modules it wires define the commands and options only;
// what a command runs (the sweep, the configuration loader, the logger, the record scanner) is
// imported by its action, so `--help` or `status` loads no more than it uses (docs/benchmarks.md).
import { Command, CommanderError, Help, Option } from 'commander';
import { ConfigError, ExitCodes, GcError, RefusalError, describeError } from '../errors.js';
import { versionText } from '../version.js';
import { registerCompletionCommand } from './completion.js';
import { registerConfigCommands, runConfigCheck } from './config.js';
import { registerConversationCommands } from './conversation.js';
import { registerDaemonCommands } from './daemon.js';
import { registerExplainCommand } from './explain.js';
import { registerDuCommand } from './du.js';
import { registerProtectCommands } from './protect.js';
import { registerQuarantineCommands } from './quarantine.js';
import { atOption } from './at-time.js';
import { boundEchoes } from './echo.js';
import { EXAMPLES, EXIT_CODES } from './help-text.js';
import { commandOf, envelope } from './json-contract.js';
import { unknownCommand } from './suggest.js';
import { ExitWith, FORCE_HOME_HELP } from './types.js';
import { definedOnly } from '../defined.js';

export function buildProgram(): Command {
  const program = new Command();
  program
    .name('murmur-gc')
    .description('Keeps the on-disk state of the Murmur agent runtime bounded, private and honest.')
    .version(versionText(), '-V, --version', 'print the version, the Node version and the runtime formats understood')
    .exitOverride()
    .showHelpAfterError('(run murmur-gc --help for usage)');
  // A flag that is off unless given says so by being a flag: no "(default: false)". Set before
  // the commands are added, so every command inherits it.
  const base = new Help();
  program.configureHelp({
    optionDescription: (o) => (o.isBoolean() && o.defaultValue === false ? o.description : base.optionDescription(o)),
  });

  const sweep = program
    .command('sweep', { isDefault: true })
    .description('run one retention sweep over the murmur home and the configured sessions roots (the default command)')
    .option('--dry-run', 'plan and report exactly what a sweep would do; change nothing', false)
    .option('--json', 'print one JSON document on stdout', false)
    .option('--config <file>', 'configuration file (default $XDG_CONFIG_HOME/murmur-gc/config.yaml)')
    .option('--home <dir>', 'the murmur home (default from the config, else $HOME/.murmur)')
    .option('--force-home', FORCE_HOME_HELP, false)
    .addOption(new Option('-v, --verbose', 'list every item in the report, and log at info').default(false))
    .addOption(new Option('-q, --quiet', 'print only errors').default(false).conflicts('verbose'))
    .option(
      '--unattended',
      'run as a scheduled sweep (the shipped timer passes it): a store stops when one sweep would remove more than half of it and more than 20 entries',
      false,
    )
    .option('--confirm-large', 'lift the blast-radius limit (max_delete, --unattended) for this one sweep', false)
    .option(
      '--check-config',
      'sweep nothing: check the configuration instead (the same as `murmur-gc config check`)',
      false,
    )
    .option(
      '--at <time>',
      'with --dry-run: the sweep as it would run at that instant on the tree as it is now (a forecast): +36h, +7d, 2026-12-09, 2026-12-09T07:53:00Z (local time without an offset)',
      atOption,
    )
    .action(
      async (
        opts: {
          dryRun: boolean;
          json: boolean;
          config?: string;
          home?: string;
          forceHome: boolean;
          verbose: boolean;
          quiet: boolean;
          unattended: boolean;
          confirmLarge: boolean;
          checkConfig: boolean;
          at?: number;
        },
        cmd: Command,
      ) => {
        if (opts.at !== undefined && (!opts.dryRun || opts.checkConfig))
          cmd.error(
            `error: --at forecasts a dry run${opts.checkConfig ? ', not --check-config' : ': give --dry-run with it (murmur-gc --dry-run --at +7d)'}`,
            { exitCode: ExitCodes.usage, code: 'murmur-gc.optionNotApplicable' },
          );
        const code = opts.checkConfig
          ? await runConfigCheck({
              json: opts.json,
              forceHome: opts.forceHome,
              ...definedOnly({ config: opts.config, home: opts.home }),
            })
          : await (await import('./sweep.js')).runSweepCommand(opts);
        if (code !== 0) throw new ExitWith(code);
      },
    );
  program.addHelpText('after', () => topLevelHelp(sweep));

  registerConversationCommands(program);
  registerDaemonCommands(program);
  registerConfigCommands(program);
  registerQuarantineCommands(program);
  registerProtectCommands(program);
  registerExplainCommand(program);
  registerDuCommand(program);
  registerCompletionCommand(program);
  return program;
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  const unknown = unknownCommand(argv, [...program.commands.flatMap((c) => [c.name(), ...c.aliases()]), 'help']);
  if (unknown !== undefined) {
    process.stderr.write(boundEchoes(unknown, argv));
    return ExitCodes.usage;
  }
  // Commander's own errors quote arguments (an invalid option value, an unknown option).
  const bound = (c: Command): void => {
    c.configureOutput({ outputError: (s, write) => write(boundEchoes(s, argv)) });
    c.commands.forEach(bound);
  };
  bound(program);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return ExitCodes.ok;
  } catch (err) {
    return reportError(err, argv.includes('--json'), argv);
  }
}

/** Prints `err` (arguments of `argv` echoed bounded, src/cli/echo.ts) and returns the exit code. */
export function reportError(err: unknown, json: boolean, argv: readonly string[] = []): number {
  if (err instanceof ExitWith) return err.exitCode;
  if (err instanceof CommanderError) {
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return ExitCodes.ok;
    // A command group without its subcommand prints the group's help on stderr (exit code 1 from
    // commander): that is a usage error. `murmur-gc help …` exits 0.
    if (err.code === 'commander.help') return err.exitCode === 0 ? ExitCodes.ok : ExitCodes.usage;
    return ExitCodes.usage;
  }
  const b = (s: string) => boundEchoes(s, argv);
  // The error document: in the envelope of src/cli/json-contract.ts, except `conversation`'s,
  // which keeps mur conversation's shape.
  const command = commandOf(argv);
  const errorDoc = (error: { code: string; message: string; hint?: string | null }) =>
    JSON.stringify(command === 'conversation' ? { error } : envelope(command, { error })) + '\n';
  if (err instanceof RefusalError) {
    if (json)
      process.stdout.write(
        errorDoc({ code: err.code, message: b(err.message), hint: err.hint === undefined ? null : b(err.hint) }),
      );
    process.stderr.write(b(`error[${err.code}]: ${err.message}\n  hint: ${err.hint ?? ''}\n`));
    return err.exitCode;
  }
  if (err instanceof GcError) {
    if (json)
      process.stdout.write(
        errorDoc({ code: err.code, message: b(err.message), ...(err.hint !== undefined ? { hint: b(err.hint) } : {}) }),
      );
    const prefix = err instanceof ConfigError ? 'invalid configuration' : 'error';
    process.stderr.write(
      b(`murmur-gc: ${prefix} [${err.code}]: ${err.message}\n${err.hint ? `  hint: ${err.hint}\n` : ''}`),
    );
    return err.exitCode;
  }
  if (json) process.stdout.write(errorDoc({ code: 'io_error', message: b(describeError(err)) }));
  process.stderr.write(b(`murmur-gc: unexpected failure [io_error]: ${describeError(err)}\n`));
  return ExitCodes.failed;
}

/** What `murmur-gc --help` adds: the default sweep's options, the exit codes, one example each. */
function topLevelHelp(sweep: Command): string {
  const opts = sweep.options.map((o) => [o.flags, o.description] as const);
  const w = Math.max(...opts.map(([f]) => f.length));
  return [
    '',
    'Without a command, murmur-gc runs one sweep (`murmur-gc sweep`). Its options:',
    ...opts.map(([f, d]) => `  ${f.padEnd(w)}  ${d}`),
    '',
    'Exit codes:',
    ...EXIT_CODES.map(([code, what]) => `  ${String(code).padEnd(3)} ${what}`),
    '',
    'Examples:',
    ...EXAMPLES.map(([cmd, what]) => `  ${cmd.padEnd(43)} ${what}`),
    '',
  ].join('\n');
}
