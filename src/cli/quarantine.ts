// `murmur-gc quarantine ls` and `murmur-gc restore TARGET` — commander wiring and output.
// Guarantees: `ls` exits 0 (1 when something held could not be read — an entry that only looks
// like a hold, not murmur-gc's, is listed and is no failure; 2 when the configuration is
// invalid — it still lists what the home holds and says so on stderr); `restore` exits 0 when it
// put something back (or, with --dry-run, would), 1 on a refusal (`error[CODE]: …` + hint, stable
// codes restore_not_held, restore_exists, restore_ambiguous, restore_conflict), 75 when a sweep
// holds the lock. A real restore also protects what it put back and says whether the current
// policy still condemns it (src/commands/protect.ts). With --json exactly one JSON document goes to stdout. Ids, paths, counts and
// sizes only — never record content.
import type { Command } from 'commander';
import { formatBytes, formatTable, formatWhen, formatWindow } from '../sweep/report.js';
import type { RestoreResult } from '../commands/quarantine.js';
import type { HeldListing } from '../gchome/held-listing.js';
import type { GcConfig } from '../config/types.js';
import { Codes, ExitCodes } from '../errors.js';
import { isSessionName, notASessionId } from '../runtime/ids.js';
import { invalidConfigNotice, loadForCommand, loadForView, oneShotLogger } from './context.js';
import { jsonLine, protectedItemJson } from './json-contract.js';
import { ExitWith, FORCE_HOME_HELP } from './types.js';
import { definedOnly } from '../defined.js';

interface CommonOpts {
  config?: string;
  home?: string;
  json: boolean;
}

function addCommon(cmd: Command): Command {
  return cmd
    .option('--config <file>', 'configuration file (default $XDG_CONFIG_HOME/murmur-gc/config.yaml)')
    .option('--home <dir>', 'the murmur home (default from the config, else $HOME/.murmur)')
    .option('--force-home', FORCE_HOME_HELP, false)
    .option('--json', 'print one JSON document on stdout', false);
}

/** `config` undefined: the configuration is invalid, the window unknown. */
export function heldJson(l: HeldListing, config: GcConfig | undefined): Record<string, unknown> {
  return {
    home: l.home,
    window_secs: config?.quarantine?.windowSecs ?? null,
    items: l.items.map((i) => ({
      held_kind: i.kind,
      target: i.target,
      origin: i.origin,
      until_ms: i.untilMs,
      removed_ms: i.removedMs ?? null,
      bytes: i.bytes,
      path: i.path,
      reason: i.reason ?? null,
      messages_dropped: i.messages ?? null,
      ...(i.incomplete ? { incomplete: true } : {}),
    })),
    totals: l.totals,
    problems: l.problems,
  };
}

export function renderHeld(l: HeldListing, config: GcConfig | undefined, nowMs = Date.now()): string {
  const window = !config ? 'the configuration is invalid: its window is unknown' : config.quarantine ? `quarantine: ${formatWindow(config.quarantine.windowSecs)}` : 'quarantine is off in this configuration';
  const out: string[] = [];
  if (l.items.length === 0) {
    out.push(`Nothing is held (${window}).`);
  } else {
    const rows = [['KIND', 'TARGET', 'FROM', 'HELD UNTIL', 'SIZE']];
    for (const i of l.items) {
      const what = i.kind === 'truncation' ? `truncation (${i.messages ?? 0} messages)` : i.kind;
      rows.push([what + (i.incomplete ? ' (incomplete)' : ''), i.target, i.kind === 'session' ? i.origin : `record store ${i.origin}`, formatWhen(i.untilMs, nowMs), formatBytes(i.bytes)]);
    }
    out.push(...formatTable(rows, new Set([4]), ''));
    out.push(`${l.totals.items} held, ${formatBytes(l.totals.bytes)} (${window}); murmur-gc restore TARGET puts one back.`);
  }
  for (const p of l.problems) out.push(`${p.code === Codes.unverifiedGcEntry ? "not murmur-gc's" : 'unreadable'}: ${p.target} [${p.code}] ${p.detail}`);
  return out.join('\n') + '\n';
}

function renderRestore(r: RestoreResult, renderProtectOutcome: typeof import('../commands/protect.js').renderProtectOutcome): string {
  const out: string[] = [];
  for (const s of r.restored) {
    const what =
      s.held_kind === 'truncation'
        ? `${s.messages_restored ?? 0} dropped messages of ${r.target}`
        : s.held_kind === 'child_workdir' || s.held_kind === 'work_log'
          ? `${s.held_kind === 'child_workdir' ? 'child workdir' : 'work log'} of ${r.target}`
          : `${s.held_kind} ${r.target}`;
    out.push(`${r.dry_run ? 'would restore' : 'restored'} ${what}: ${s.from} -> ${s.to}`);
  }
  if (r.audit) out.push(`audit trace: ${r.audit} (murmur-gc history --target ${r.target})`);
  if (r.dry_run) out.push(`(a real restore also protects ${r.target} from every sweep until murmur-gc release ${r.target})`);
  if (r.protection) out.push(...renderProtectOutcome(r.protection));
  if (r.protection_error) out.push(`NOT protected [${r.protection_error.code}]: ${r.protection_error.message}`);
  return out.join('\n') + '\n';
}

async function runLs(opts: CommonOpts): Promise<number> {
  const { listHeld } = await import('../gchome/held-listing.js');
  const { config, invalid } = await loadForView(opts);
  const l = await listHeld(config);
  const log = await oneShotLogger(config, false, opts.json);
  for (const p of l.problems) log.warn({ code: p.code, target: p.target }, p.detail);
  process.stdout.write(opts.json ? jsonLine('quarantine ls', { ...heldJson(l, invalid ? undefined : config), config_invalid: invalid ?? null }) : renderHeld(l, invalid ? undefined : config));
  if (invalid) {
    process.stderr.write(invalidConfigNotice(invalid, config.home));
    return ExitCodes.usage;
  }
  // an entry that only looks like a hold is reported, never a failure of the listing
  return l.problems.some((p) => p.code !== Codes.unverifiedGcEntry) ? ExitCodes.failed : ExitCodes.ok;
}

async function runRestore(target: string, opts: CommonOpts & { record?: string; root?: string; dryRun: boolean }): Promise<number> {
  const { restoreTarget } = await import('../commands/quarantine.js');
  const { renderProtectOutcome } = await import('../commands/protect.js');
  const config = await loadForCommand(opts);
  const log = await oneShotLogger(config, false, opts.json);
  const r = await restoreTarget(config, log, { target, dryRun: opts.dryRun, ...definedOnly({ record: opts.record, root: opts.root }) });
  process.stdout.write(opts.json ? jsonLine('restore', r.protection ? { ...r, protection: { ...r.protection, item: protectedItemJson(r.protection.item) } } : r) : renderRestore(r, renderProtectOutcome));
  return ExitCodes.ok;
}

async function exitWith(code: Promise<number>): Promise<void> {
  const c = await code;
  if (c !== ExitCodes.ok) throw new ExitWith(c);
}

export function registerQuarantineCommands(program: Command): void {
  const quarantine = program.command('quarantine').description('what the undo window (quarantine: in the config) holds');
  addCommon(quarantine.command('ls').description('held sessions, contexts and dropped lines: where from, until when, bytes')).action((opts: CommonOpts) => exitWith(runLs(opts)));

  addCommon(
    program
      .command('restore')
      .description('put a held session (ses_ id) or context (its dropped lines too) back, if nothing of that name exists now, and protect it from every sweep')
      .argument('<target>', 'a ses_ id or a context id')
      .option('--record <name>', 'the record store it came from (needed when held from several)')
      .option('--root <dir>', 'the sessions root it came from (needed when held in several)')
      .option('--dry-run', 'check everything and say what would be put back; change nothing', false),
  ).action((target: string, opts: CommonOpts & { record?: string; root?: string; dryRun: boolean }, cmd: Command) => {
    // Each option applies to one kind of target; one that does not apply is refused, not ignored.
    const session = isSessionName(target);
    if (!session && opts.root !== undefined) {
      const taken = notASessionId(target);
      cmd.error(`error: ${taken !== undefined ? `${taken}; ` : ''}--root applies to a session (ses_ id) only; a context is held in the murmur home`, { exitCode: ExitCodes.usage, code: 'murmur-gc.optionNotApplicable' });
    }
    if (session && opts.record !== undefined) cmd.error('error: --record applies to a context only; a session is held in its sessions root (--root)', { exitCode: ExitCodes.usage, code: 'murmur-gc.optionNotApplicable' });
    return exitWith(runRestore(target, opts));
  });
}
