// `murmur-gc conversation ls|rm|truncate` — commander wiring and output (docs/design.md §R6).
// Guarantees: refusal order is the runtime's — usage errors (exit 2: a missing, negative or non-integer
// `--keep`, a missing CONTEXT-ID) are commander's; then `--keep 0` (E-CNV-003) before the
// configuration is even loaded, so before anything is read; then resolution (E-CNV-001/002) before
// anything beyond the listing is read or written. Refusals print `error[CODE]: …` + `  hint: …`
// and exit 1; a record lock still held after ~3 s exits 75 (`storage_busy`). `ls` exits 0, or 1
// when an I/O failure left the listing incomplete. With --json exactly one JSON document goes to
// stdout; warnings go to stderr as log lines carrying a stable code. `ls` on a terminal (not
// --json) shows a progress line on stderr once it has run ~1 s (src/cli/progress.ts).
import { InvalidArgumentError, type Command } from 'commander';
import type { ConversationContext } from '../commands/conversation.js';
import { ExitCodes, RefusalError } from '../errors.js';
import type { Problem } from '../runtime/inventory.js';
import {
  badKeepRefusal,
  renderLocateJson,
  renderLocateText,
  renderLsJson,
  renderLsText,
  renderRemoveText,
  renderResultJson,
  renderTruncateText,
} from '../runtime/conversation-format.js';
import { loadForCommand, oneShotLogger } from './context.js';
import { echoArg } from './echo.js';
import { ProgressLine } from './progress.js';
import { ExitWith, FORCE_HOME_HELP } from './types.js';

interface CommonOpts {
  config?: string;
  home?: string;
  json: boolean;
}

interface LsOpts extends CommonOpts {
  record?: string;
  message?: string;
}

interface ActOpts extends CommonOpts {
  record?: string;
  dryRun: boolean;
  force: boolean;
}

const U32_MAX = 4_294_967_295;

/**
 * `--keep`: the runtime's u32 — a whole number from 0 to 4294967295 (a sign, a fraction, hex or a
 * negative number is a usage error, exit 2, as mur's argument parser makes it); 0 is E-CNV-003,
 * checked in the action.
 */
export function parseKeep(value: string): number {
  const v = value.trim();
  if (!/^\+?\d+$/.test(v)) throw new InvalidArgumentError('--keep takes a whole number of messages.');
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n > U32_MAX)
    throw new InvalidArgumentError(`--keep takes a whole number of messages, at most ${U32_MAX}.`);
  return n;
}

async function setup(opts: CommonOpts): Promise<ConversationContext> {
  const config = await loadForCommand(opts);
  return { config, log: await oneShotLogger(config, false, opts.json) };
}

function warnAll(ctx: ConversationContext, problems: Problem[], isHardProblem: (p: Problem) => boolean): number {
  for (const p of problems) ctx.log.warn({ code: p.code, target: p.target }, p.detail);
  return problems.some(isHardProblem) ? ExitCodes.failed : ExitCodes.ok;
}

function addCommon(cmd: Command): Command {
  return cmd
    .option('--config <file>', 'configuration file (default $XDG_CONFIG_HOME/murmur-gc/config.yaml)')
    .option('--home <dir>', 'the murmur home (default from the config, else $HOME/.murmur)')
    .option('--force-home', FORCE_HOME_HELP, false);
}

async function runLs(opts: LsOpts): Promise<number> {
  const { isHardProblem, listRecords, locateMessage } = await import('../commands/conversation.js');
  const ctx = await setup(opts);
  // On a terminal (not --json) a status line while a large record is read; erased before output.
  const line = ProgressLine.wanted(process.stderr, { json: opts.json, quiet: false })
    ? new ProgressLine(process.stderr, false)
    : undefined;
  if (line) ctx.progress = (p) => line.update(p);
  // --message short-circuits before --record (the runtime ignores --record with --message).
  if (opts.message !== undefined) {
    const { locations, problems } = await locateMessage(ctx, opts.message).finally(() => line?.end());
    const code = warnAll(ctx, problems, isHardProblem);
    process.stdout.write(
      opts.json ? renderLocateJson(opts.message, locations) : renderLocateText(echoArg(opts.message), locations),
    );
    return code;
  }
  const { rows, problems } = await listRecords(ctx, opts.record).finally(() => line?.end());
  const code = warnAll(ctx, problems, isHardProblem);
  process.stdout.write(opts.json ? renderLsJson(rows) : renderLsText(rows, opts.record));
  return code;
}

async function runRm(contextId: string, opts: ActOpts): Promise<number> {
  const { removeContext } = await import('../commands/conversation.js');
  const ctx = await setup(opts);
  const r = await removeContext(ctx, {
    context: contextId,
    record: opts.record,
    dryRun: opts.dryRun,
    force: opts.force,
  });
  process.stdout.write(opts.json ? renderResultJson(r) : renderRemoveText(r));
  return ExitCodes.ok;
}

async function runTruncate(contextId: string, opts: ActOpts & { keep: number }): Promise<number> {
  // E-CNV-003 first: before the configuration is loaded and before resolution, even for a
  // context that does not exist.
  if (opts.keep < 1) {
    const r = badKeepRefusal(contextId);
    throw new RefusalError(r.code, r.message, r.hint);
  }
  const { truncateContext } = await import('../commands/conversation.js');
  const ctx = await setup(opts);
  const r = await truncateContext(ctx, {
    context: contextId,
    record: opts.record,
    dryRun: opts.dryRun,
    force: opts.force,
    keep: opts.keep,
  });
  process.stdout.write(opts.json ? renderResultJson(r) : renderTruncateText(r));
  // Lines a process may still write to the replaced file are not in the record: not a clean run.
  return r.held_open_by && r.held_open_by.length > 0 ? ExitCodes.failed : ExitCodes.ok;
}

async function exitWith(code: Promise<number>): Promise<void> {
  const c = await code;
  if (c !== ExitCodes.ok) throw new ExitWith(c);
}

export function registerConversationCommands(program: Command): void {
  const conversation = program
    .command('conversation')
    .description("list, remove or truncate conversation records by hand (like the runtime's `mur conversation`)");

  addCommon(
    conversation
      .command('ls')
      .description('one row per conversation record: messages, size, last write, cumulative truncation')
      .option('--record <name>', 'only the records of this record store')
      .option('--message <msg-id>', 'say where this message id is: present, truncated away, or unknown')
      .option('--json', 'print one JSON document on stdout', false),
  ).action((opts: LsOpts) => exitWith(runLs(opts)));

  addCommon(
    conversation
      .command('rm')
      .description('remove a whole context directory (the only way to reclaim a headerless record)')
      .argument('<context-id>', 'the context to remove')
      .option('--record <name>', 'the record store holding it (needed when several stores have the context)')
      .option('--dry-run', 'check everything and say what would be removed; change nothing', false)
      .option('--json', 'print one JSON document on stdout', false)
      .option('--force', 'remove it even while a live session uses the context', false),
  ).action((contextId: string, opts: ActOpts) => exitWith(runRm(contextId, opts)));

  addCommon(
    conversation
      .command('truncate')
      .description('keep only the newest N messages of a record (atomic, append-safe rewrite)')
      .argument('<context-id>', 'the context whose record to truncate')
      .requiredOption(
        '--keep <n>',
        'how many of the newest messages to keep: a whole number; 0 is refused (E-CNV-003, exit 1); anything else, a negative number included, is a usage error (exit 2)',
        parseKeep,
      )
      .option('--record <name>', 'the record store holding it (needed when several stores have the context)')
      .option('--dry-run', 'check everything and say what would be dropped; change nothing', false)
      .option('--json', 'print one JSON document on stdout', false)
      .option('--force', 'truncate it even while a live session uses the context', false),
  ).action((contextId: string, opts: ActOpts & { keep: number }) => exitWith(runTruncate(contextId, opts)));
}
