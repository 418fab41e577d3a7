// `murmur-gc protect TARGET`, `murmur-gc release TARGET`, `murmur-gc protection ls`: commander
// wiring and output of the protection list (src/commands/protect.ts; docs/protect.md).
// Guarantees: protect/release exit 0 when the item is (or already was) protected / was released,
// 1 on a refusal (`error[CODE]: …` + hint; protect_not_found, protect_ambiguous,
// release_not_protected, protect_full, protected_unreadable), 75 when a sweep holds the lock;
// `protection ls` exits 0, or 1 when the list cannot be read. With --json exactly one JSON
// document goes to stdout. Ids, paths, times and the operator's note only — never record content.
import type { Command } from 'commander';
import { formatTable, formatWhen } from '../sweep/report.js';
import type { ProtectionListing, ReleaseOutcome } from '../commands/protect.js';
import { ExitCodes } from '../errors.js';
import { loadForCommand, oneShotLogger } from './context.js';
import { jsonLine, protectedItemJson } from './json-contract.js';
import { ExitWith, FORCE_HOME_HELP } from './types.js';
import { definedOnly } from '../defined.js';

interface CommonOpts {
  config?: string;
  home?: string;
  json: boolean;
}
type RefOpts = CommonOpts & { record?: string; root?: string };

function addCommon(cmd: Command): Command {
  return cmd
    .option('--config <file>', 'configuration file (default $XDG_CONFIG_HOME/murmur-gc/config.yaml)')
    .option('--home <dir>', 'the murmur home (default from the config, else $HOME/.murmur)')
    .option('--force-home', FORCE_HOME_HELP, false)
    .option('--json', 'print one JSON document on stdout', false);
}

function addRef(cmd: Command): Command {
  return cmd
    .argument('<target>', 'a ses_ id or a context id')
    .option(
      '--record <name>',
      'the record store of a context (needed when several hold it, or to protect it before it exists)',
    )
    .option(
      '--root <dir>',
      'the sessions root of a session (needed when several hold it, or to protect it before it exists)',
    );
}

export function renderProtection(l: ProtectionListing, nowMs = Date.now()): string {
  const out: string[] = [];
  if (l.unreadable !== null) {
    out.push(`unreadable: ${l.unreadable}`);
    out.push(
      'Until it is fixed every sweep counts every session and record as protected (nothing is removed or truncated). Check it, then move it away.',
    );
    return out.join('\n') + '\n';
  }
  if (l.items.length === 0) return `Nothing is protected (${l.file}).\n`;
  const rows = [['KIND', 'TARGET', 'WHERE', 'SINCE', 'BY', 'NOTE']];
  for (const i of l.items)
    rows.push([
      i.kind,
      i.target,
      (i.kind === 'session' ? i.where : `record store ${i.where}`) + (i.present ? '' : ' (not there now)'),
      formatWhen(i.since_ms, nowMs),
      i.by,
      i.note ?? '',
    ]);
  out.push(...formatTable(rows, new Set(), ''));
  out.push(
    `${l.items.length} protected: no sweep removes or truncates them; murmur-gc release TARGET lets the policy act on one again.`,
  );
  return out.join('\n') + '\n';
}

function renderRelease(
  r: ReleaseOutcome,
  judgementWords: typeof import('../commands/protect.js').judgementWords,
): string {
  const out = [
    `released ${r.item.kind} ${r.item.target} (${r.item.kind === 'session' ? 'sessions root' : 'record store'} ${r.item.where}): sweeps act on it again by the policy`,
  ];
  const j = judgementWords(r.judgement, r.item);
  out.push(
    r.judgement.condemned !== null
      ? `${j}: the next sweep ${r.judgement.condemned === 'max_messages' ? 'truncates' : 'removes'} it`
      : j,
  );
  out.push(`audit trace: ${r.audit} (murmur-gc history --target ${r.item.target})`);
  return out.join('\n') + '\n';
}

function refOf(target: string, opts: RefOpts) {
  return { target, ...definedOnly({ record: opts.record, root: opts.root }) };
}

async function runProtect(target: string, opts: RefOpts & { note?: string }): Promise<number> {
  const { protectTarget, renderProtectOutcome } = await import('../commands/protect.js');
  const config = await loadForCommand(opts);
  const log = await oneShotLogger(config, false, opts.json);
  const p = await protectTarget(config, log, { ...refOf(target, opts), ...definedOnly({ note: opts.note }) });
  const text = [
    ...renderProtectOutcome(p),
    ...(p.audit ? [`audit trace: ${p.audit} (murmur-gc history --target ${target})`] : []),
  ];
  process.stdout.write(
    opts.json ? jsonLine('protect', { ...p, item: protectedItemJson(p.item) }) : text.join('\n') + '\n',
  );
  return ExitCodes.ok;
}

async function runRelease(target: string, opts: RefOpts): Promise<number> {
  const { judgementWords, releaseTarget } = await import('../commands/protect.js');
  const config = await loadForCommand(opts);
  const log = await oneShotLogger(config, false, opts.json);
  const r = await releaseTarget(config, log, refOf(target, opts));
  process.stdout.write(
    opts.json ? jsonLine('release', { ...r, item: protectedItemJson(r.item) }) : renderRelease(r, judgementWords),
  );
  return ExitCodes.ok;
}

async function runLs(opts: CommonOpts): Promise<number> {
  const { listProtection } = await import('../commands/protect-listing.js');
  const config = await loadForCommand(opts);
  const l = await listProtection(config);
  if (l.unreadable !== null)
    (await oneShotLogger(config, false, opts.json)).error(
      { code: 'protected_unreadable', target: l.file },
      l.unreadable,
    );
  process.stdout.write(
    opts.json ? jsonLine('protection ls', { ...l, items: l.items.map(protectedItemJson) }) : renderProtection(l),
  );
  return l.unreadable !== null ? ExitCodes.failed : ExitCodes.ok;
}

async function exitWith(code: Promise<number>): Promise<void> {
  const c = await code;
  if (c !== ExitCodes.ok) throw new ExitWith(c);
}

export function registerProtectCommands(program: Command): void {
  addCommon(
    addRef(
      program
        .command('protect')
        .description('keep a session or context from every sweep (every reason, budgets too) until it is released'),
    ).option('--note <text>', 'why it is kept (shown by protection ls)'),
  ).action((target: string, opts: RefOpts & { note?: string }) => exitWith(runProtect(target, opts)));
  addCommon(
    addRef(
      program
        .command('release')
        .description('take a session or context off the protection list: sweeps act on it again by the policy'),
    ),
  ).action((target: string, opts: RefOpts) => exitWith(runRelease(target, opts)));
  const protection = program
    .command('protection')
    .description('the protection list (murmur-gc protect, and what restore put back)');
  addCommon(
    protection
      .command('ls')
      .description('protected sessions and contexts: where, since when, by whom, and whether each is there now'),
  ).action((opts: CommonOpts) => exitWith(runLs(opts)));
}
