// `murmur-gc explain TARGET`: commander wiring and output of one item's explanation
// (src/commands/explain.ts; docs/explain.md).
// Guarantees: exit 0 when the item was found and explained; 1 when nothing of that name is found
// (`explain_not_found`) or the dry run failed; 2 for a prefix or name of several items
// (`target_ambiguous`, naming them), an option that does not apply to the item, or an invalid
// configuration; 75 when a sweep holds the lock. Writes nothing anywhere (it is a dry run).
// With --json exactly one JSON document goes to stdout; the human output fits the terminal.
import type { Command } from 'commander';
import { homedir } from 'node:os';
import { ExitCodes } from '../errors.js';
import { layoutFor } from '../layout.js';
import { loadForCommand, oneShotLogger } from './context.js';
import { jsonLine } from './json-contract.js';
import { ExitWith, FORCE_HOME_HELP } from './types.js';
import { definedOnly } from '../defined.js';

interface ExplainFlags {
  config?: string;
  home?: string;
  forceHome: boolean;
  json: boolean;
  root?: string;
  record?: string;
}

async function runExplain(target: string, opts: ExplainFlags): Promise<number> {
  const { explainTarget } = await import('../commands/explain.js');
  const config = await loadForCommand(opts);
  const log = await oneShotLogger(config, false, opts.json);
  const doc = await explainTarget(config, log, { target, ...definedOnly({ root: opts.root, record: opts.record }) });
  if (opts.json) process.stdout.write(jsonLine('explain', doc));
  else {
    const { renderExplain } = await import('./explain-render.js');
    process.stdout.write(renderExplain(doc, layoutFor(process.stdout, homedir())));
  }
  return ExitCodes.ok;
}

export function registerExplainCommand(program: Command): void {
  program
    .command('explain')
    .description(
      "why a session, context, child workdir, work log or hold is kept or taken, by the dry run's own plan, and when that changes",
    )
    .argument(
      '<target>',
      'a ses_ id, a context id, a child workdir, a wrk_ log, a path to one of them or to a hold, or a unique prefix of an id',
    )
    .option('--root <dir>', 'the sessions root of a session (when several hold it)')
    .option('--record <name>', 'the record store of a context (when several hold it)')
    .option('--json', 'print one JSON document on stdout', false)
    .option('--config <file>', 'configuration file (default $XDG_CONFIG_HOME/murmur-gc/config.yaml)')
    .option('--home <dir>', 'the murmur home (default from the config, else $HOME/.murmur)')
    .option('--force-home', FORCE_HOME_HELP, false)
    .action(async (target: string, opts: ExplainFlags) => {
      const code = await runExplain(target, opts);
      if (code !== ExitCodes.ok) throw new ExitWith(code);
    });
}
