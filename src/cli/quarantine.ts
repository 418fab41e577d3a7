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
import type { SweepRestoreResult } from '../commands/restore-sweep.js';
import type { HeldFilter, HeldListing } from '../gchome/held-listing.js';
import type { HeldFilterJson, HeldListingJson, ProtectOutcome } from '../schema/json-schemas.js';
import type { GcConfig } from '../config/types.js';
import { Codes, ExitCodes, GcError } from '../errors.js';
import { resolve } from 'node:path';
import { humanTime } from '../runtime/conversation-format.js';
import { isSessionName, notASessionId } from '../runtime/ids.js';
import { invalidConfigNotice, loadForCommand, loadForView, oneShotLogger } from './context.js';
import { jsonLine, protectedItemJson } from './json-contract.js';
import { ExitWith, FORCE_HOME_HELP } from './types.js';
import { definedOnly } from '../defined.js';
import { AT_FORMS, AtTimeError, parseAtTime } from './at-time.js';
import { InvalidArgumentError } from 'commander';

interface CommonOpts {
  config?: string;
  home?: string;
  json: boolean;
}

/** `quarantine ls`'s filters (src/gchome/held-listing.ts filterHeld). */
interface LsOpts extends CommonOpts {
  root?: string;
  record?: string;
  reason?: string;
  before?: number;
}

/** The rules an item is held for: what a sweep holds by, and an operator's `conversation rm|truncate`. */
export const HOLD_REASONS = [
  'max_age',
  'max_sessions',
  'max_bytes',
  'max_messages',
  'conversation_rm',
  'conversation_truncate',
] as const;

/**
 * --before TIME: the grammar of `--at` (src/cli/at-time.ts). An ISO time may be past (items whose
 * window has ended and that the next sweep purges); `+<duration>` counts from now.
 */
function parseBefore(value: string): number {
  try {
    return parseAtTime(value, value.startsWith('+') ? Date.now() : -8.64e15);
  } catch (err) {
    if (err instanceof AtTimeError) throw new InvalidArgumentError(err.message);
    throw err;
  }
}

function parseReason(value: string): string {
  if ((HOLD_REASONS as readonly string[]).includes(value)) return value;
  throw new InvalidArgumentError(
    `'${value}' is no rule the undo window holds by; one of ${HOLD_REASONS.join(', ')} (keep_free never holds)`,
  );
}

function addCommon(cmd: Command): Command {
  return cmd
    .option('--config <file>', 'configuration file (default $XDG_CONFIG_HOME/murmur-gc/config.yaml)')
    .option('--home <dir>', 'the murmur home (default from the config, else $HOME/.murmur)')
    .option('--force-home', FORCE_HOME_HELP, false)
    .option('--json', 'print one JSON document on stdout', false);
}

/** `config` undefined: the configuration is invalid, the window unknown. */
export function heldJson(l: HeldListing, config: GcConfig | undefined): HeldListingJson {
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
      audit: i.run ?? null,
      ...(i.incomplete ? { incomplete: true } : {}),
    })),
    totals: l.totals,
    problems: l.problems,
  };
}

/** The filter as `quarantine ls --json` echoes it (null: none given). */
function filterJson(f: HeldFilter | undefined): HeldFilterJson {
  if (!f) return null;
  return {
    root: f.roots?.[0] ?? null,
    record: f.records?.[0] ?? null,
    reason: f.reason ?? null,
    before_ms: f.beforeMs ?? null,
  };
}

/** The filter in words, for the listing's last line: the places (either one), then what narrows them. */
function filterWords(f: HeldFilter): string {
  const places = [...(f.roots ?? []).map((r) => `root ${r}`), ...(f.records ?? []).map((r) => `record store ${r}`)];
  const w = places.length > 0 ? [places.join(' or ')] : [];
  if (f.reason !== undefined) w.push(`reason ${f.reason}`);
  if (f.beforeMs !== undefined) w.push(`window ending before ${humanTime(f.beforeMs)}`);
  return w.join(', ');
}

export function renderHeld(
  l: HeldListing,
  config: GcConfig | undefined,
  nowMs = Date.now(),
  filtered?: { filter: HeldFilter; all: HeldListing['totals'] },
): string {
  const window = !config
    ? 'the configuration is invalid: its window is unknown'
    : config.quarantine
      ? `quarantine: ${formatWindow(config.quarantine.windowSecs)}`
      : 'quarantine is off in this configuration';
  const out: string[] = [];
  const which = filtered ? filterWords(filtered.filter) : '';
  if (l.items.length === 0) {
    out.push(
      filtered
        ? `Nothing held matches (${which}); ${filtered.all.items} held in all (${window}).`
        : `Nothing is held (${window}).`,
    );
  } else {
    const rows = [['KIND', 'TARGET', 'FROM', 'HELD UNTIL', 'SIZE']];
    for (const i of l.items) {
      const what = i.kind === 'truncation' ? `truncation (${i.messages ?? 0} messages)` : i.kind;
      rows.push([
        what + (i.incomplete ? ' (incomplete)' : ''),
        i.target,
        i.kind === 'session' ? i.origin : `record store ${i.origin}`,
        formatWhen(i.untilMs, nowMs),
        formatBytes(i.bytes),
      ]);
    }
    out.push(...formatTable(rows, new Set([4]), ''));
    out.push(
      filtered
        ? `${l.totals.items} of ${filtered.all.items} held match (${which}), ${formatBytes(l.totals.bytes)} (${window}); murmur-gc restore TARGET puts one back.`
        : `${l.totals.items} held, ${formatBytes(l.totals.bytes)} (${window}); murmur-gc restore TARGET puts one back.`,
    );
  }
  for (const p of l.problems)
    out.push(
      `${p.code === Codes.unverifiedGcEntry ? "not murmur-gc's" : 'unreadable'}: ${p.target} [${p.code}] ${p.detail}`,
    );
  return out.join('\n') + '\n';
}

function renderRestore(
  r: RestoreResult,
  renderProtectOutcome: typeof import('../commands/protect.js').renderProtectOutcome,
): string {
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
  if (r.dry_run)
    out.push(`(a real restore also protects ${r.target} from every sweep until murmur-gc release ${r.target})`);
  if (r.protection) out.push(...renderProtectOutcome(r.protection));
  if (r.protection_error) out.push(`NOT protected [${r.protection_error.code}]: ${r.protection_error.message}`);
  return out.join('\n') + '\n';
}

/**
 * The filter the options give, checked against what can match: a --root that is no configured
 * sessions root and no origin of a held item (a typo) is a usage error, and so is such a --record.
 */
function lsFilter(opts: LsOpts, config: GcConfig, l: HeldListing): HeldFilter | undefined {
  if (opts.root === undefined && opts.record === undefined && opts.reason === undefined && opts.before === undefined)
    return undefined;
  if (opts.root !== undefined) {
    const root = resolve(opts.root);
    const known = new Set([
      ...config.sessions.map((s) => resolve(s.root)),
      ...l.items.filter((i) => i.kind === 'session').map((i) => resolve(i.origin)),
    ]);
    if (!known.has(root))
      throw new GcError(
        Codes.unknownPlace,
        `--root ${opts.root} is no configured sessions root and nothing held comes from it`,
        {
          exitCode: ExitCodes.usage,
          hint: `configured: ${[...new Set(config.sessions.map((s) => s.root))].join(', ') || 'none'}`,
        },
      );
  }
  if (opts.record !== undefined) {
    const known = new Set([
      ...config.records.map((r) => r.store),
      ...l.items.filter((i) => i.kind !== 'session').map((i) => i.origin),
    ]);
    if (!known.has(opts.record))
      throw new GcError(
        Codes.unknownPlace,
        `--record ${opts.record} is no configured record store and nothing held comes from it`,
        {
          exitCode: ExitCodes.usage,
          hint: `configured: ${[...new Set(config.records.map((r) => r.store))].join(', ') || 'none'}`,
        },
      );
  }
  return definedOnly({
    roots: opts.root === undefined ? undefined : [resolve(opts.root)],
    records: opts.record === undefined ? undefined : [opts.record],
    reason: opts.reason,
    beforeMs: opts.before,
  });
}

async function runLs(opts: LsOpts): Promise<number> {
  const { listHeld, filterHeld } = await import('../gchome/held-listing.js');
  const { config, invalid } = await loadForView(opts);
  const all = await listHeld(config);
  const filter = lsFilter(opts, config, all);
  const l = filter ? filterHeld(all, filter) : all;
  const log = await oneShotLogger(config, false, opts.json);
  for (const p of l.problems) log.warn({ code: p.code, target: p.target }, p.detail);
  process.stdout.write(
    opts.json
      ? jsonLine('quarantine ls', {
          ...heldJson(l, invalid ? undefined : config),
          filter: filterJson(filter),
          config_invalid: invalid ?? null,
        })
      : renderHeld(l, invalid ? undefined : config, Date.now(), filter ? { filter, all: all.totals } : undefined),
  );
  if (invalid) {
    process.stderr.write(invalidConfigNotice(invalid, config.home));
    return ExitCodes.usage;
  }
  // an entry that only looks like a hold is reported, never a failure of the listing
  return l.problems.some((p) => p.code !== Codes.unverifiedGcEntry) ? ExitCodes.failed : ExitCodes.ok;
}

async function runRestore(
  target: string,
  opts: CommonOpts & { record?: string; root?: string; dryRun: boolean },
): Promise<number> {
  const { restoreTarget } = await import('../commands/quarantine.js');
  const { renderProtectOutcome } = await import('../commands/protect.js');
  const config = await loadForCommand(opts);
  const log = await oneShotLogger(config, false, opts.json);
  const r = await restoreTarget(config, log, {
    target,
    dryRun: opts.dryRun,
    ...definedOnly({ record: opts.record, root: opts.root }),
  });
  process.stdout.write(opts.json ? jsonLine('restore', restoreJson(r)) : renderRestore(r, renderProtectOutcome));
  return ExitCodes.ok;
}

/** A restore as the contract names it: its protection's item under `origin` (protectedItemJson). */
function restoreJson<T extends { protection?: ProtectOutcome }>(r: T) {
  const rest: Omit<T, 'protection'> = r; // the protection keeps its place, its item renamed over it
  return r.protection ? { ...rest, protection: { ...r.protection, item: protectedItemJson(r.protection.item) } } : rest;
}

/** How many items, in words: `3 sessions`, `1 context`. */
function count(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** At most this many targets are named in a cause's line (--json has them all). */
const CAUSE_TARGETS_SHOWN = 3;

export function renderSweepRestore(r: SweepRestoreResult): string {
  const out: string[] = [];
  const verb = r.dry_run ? 'would restore' : 'restored';
  const n = (k: string) => r.restored.filter((x) => x.held_kind === k).length;
  const beside = r.restored.reduce(
    (m, x) => m + x.restored.filter((s) => s.held_kind === 'child_workdir' || s.held_kind === 'work_log').length,
    0,
  );
  const parts = [
    ...(n('session') > 0
      ? [
          `${count(n('session'), 'session')}${beside > 0 ? ` (with ${count(beside, 'child workdir or work log', 'child workdirs and work logs')})` : ''}`,
        ]
      : []),
    ...(n('context') > 0 ? [count(n('context'), 'context')] : []),
    ...(n('truncation') > 0 ? [`the dropped lines of ${count(n('truncation'), 'record')}`] : []),
  ];
  const of = `of the ${count(r.held, 'item')} sweep ${r.sweep} held`;
  out.push(
    parts.length > 0
      ? `${verb} ${parts.join(', ')} ${of}`
      : `${r.dry_run ? 'would restore' : 'restored'} nothing ${of}`,
  );
  if (r.restored.length > 0) {
    if (r.dry_run) out.push(`(a real restore also protects each from every sweep until murmur-gc release TARGET)`);
    else {
      const condemned = r.restored.filter((x) => x.protection?.judgement.condemned != null).length;
      out.push(
        `each is protected from every sweep until murmur-gc release TARGET${condemned > 0 ? `; ${condemned} STILL CONDEMNED by the current policy: without the protection the next sweep would take ${condemned === 1 ? 'it' : 'them'} again` : ''}`,
      );
      const unprotected = r.restored.filter((x) => x.protection_error);
      if (unprotected.length > 0)
        out.push(
          `NOT protected [${unprotected[0]!.protection_error!.code}]: ${count(unprotected.length, 'item')}: ${unprotected[0]!.protection_error!.message}`,
        );
      out.push('audit traces: one per item put back (murmur-gc history --target TARGET)');
    }
  }
  for (const c of r.not_restored) {
    const shown = c.items
      .slice(0, CAUSE_TARGETS_SHOWN)
      .map((i) => i.target)
      .join(', ');
    const more = c.items.length > CAUSE_TARGETS_SHOWN ? `, and ${c.items.length - CAUSE_TARGETS_SHOWN} more` : '';
    out.push(`not restored [${c.code}]: ${count(c.items.length, 'item')}: ${c.detail} (${shown}${more})`);
  }
  return out.join('\n') + '\n';
}

async function runSweepRestore(sweep: string, opts: CommonOpts & { dryRun: boolean }): Promise<number> {
  const { restoreSweep, sweepRestoreExit } = await import('../commands/restore-sweep.js');
  const config = await loadForCommand(opts);
  const log = await oneShotLogger(config, false, opts.json);
  const r = await restoreSweep(config, log, { sweep, dryRun: opts.dryRun });
  const json = {
    ...r,
    restored: r.restored.map(restoreJson),
  };
  process.stdout.write(opts.json ? jsonLine('restore', json) : renderSweepRestore(r));
  return sweepRestoreExit(r);
}

async function exitWith(code: Promise<number>): Promise<void> {
  const c = await code;
  if (c !== ExitCodes.ok) throw new ExitWith(c);
}

export function registerQuarantineCommands(program: Command): void {
  const quarantine = program
    .command('quarantine')
    .description('what the undo window (quarantine: in the config) holds');
  addCommon(
    quarantine
      .command('ls')
      .description(
        'held sessions, contexts and dropped lines: where from, until when, bytes (the filters combine: --root and --record select places, either one; --reason and --before narrow)',
      )
      .option('--root <dir>', 'only sessions held from this sessions root')
      .option('--record <name>', 'only contexts and dropped lines held from this record store')
      .option('--reason <rule>', `only items held for this rule (${HOLD_REASONS.join(', ')})`, parseReason)
      .option('--before <time>', `only items whose window ends before TIME: ${AT_FORMS}`, parseBefore),
  ).action((opts: LsOpts) => exitWith(runLs(opts)));

  addCommon(
    program
      .command('restore')
      .description(
        'put a held session (ses_ id) or context (its dropped lines too) back, if nothing of that name exists now, and protect it from every sweep; --sweep AUDIT puts back everything one sweep held',
      )
      .argument('[target]', 'a ses_ id or a context id')
      .option(
        '--sweep <audit>',
        'every item the sweep with this audit id (its report, murmur-gc history) held, each as restore TARGET would',
      )
      .option('--record <name>', 'the record store it came from (needed when held from several)')
      .option('--root <dir>', 'the sessions root it came from (needed when held in several)')
      .option('--dry-run', 'check everything and say what would be put back; change nothing', false),
  ).action(
    (
      target: string | undefined,
      opts: CommonOpts & { sweep?: string; record?: string; root?: string; dryRun: boolean },
      cmd: Command,
    ) => {
      if (opts.sweep !== undefined) {
        if (target !== undefined)
          cmd.error('error: give a TARGET or --sweep AUDIT, not both', {
            exitCode: ExitCodes.usage,
            code: 'murmur-gc.optionNotApplicable',
          });
        if (opts.root !== undefined || opts.record !== undefined)
          cmd.error(
            'error: --root and --record apply to a TARGET; --sweep puts each item back where that sweep took it from',
            { exitCode: ExitCodes.usage, code: 'murmur-gc.optionNotApplicable' },
          );
        return exitWith(runSweepRestore(opts.sweep, opts));
      }
      if (target === undefined)
        cmd.error("error: missing required argument 'target' (or --sweep AUDIT)", {
          exitCode: ExitCodes.usage,
          code: 'commander.missingArgument',
        });
      // Each option applies to one kind of target; one that does not apply is refused, not ignored.
      const session = isSessionName(target);
      if (!session && opts.root !== undefined) {
        const taken = notASessionId(target);
        cmd.error(
          `error: ${taken !== undefined ? `${taken}; ` : ''}--root applies to a session (ses_ id) only; a context is held in the murmur home`,
          { exitCode: ExitCodes.usage, code: 'murmur-gc.optionNotApplicable' },
        );
      }
      if (session && opts.record !== undefined)
        cmd.error('error: --record applies to a context only; a session is held in its sessions root (--root)', {
          exitCode: ExitCodes.usage,
          code: 'murmur-gc.optionNotApplicable',
        });
      return exitWith(runRestore(target, opts));
    },
  );
}
