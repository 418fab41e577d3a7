// `murmur-gc du`: commander wiring and output of src/commands/du.ts (docs/du.md).
// Guarantees: read-only (writes nothing, `<home>/gc` included); exit 0, 2 for an invalid
// configuration (what it found is still shown, as status does); the text fits the layout's width
// (80 columns off a terminal): one bar per place, kind, age bucket; --json is one enveloped
// document (DuSchema). Sizes and paths only.
import type { Command } from 'commander';
import type { DuReport } from '../commands/du.js';
import { ExitCodes } from '../errors.js';
import { formatBytes } from '../sweep/report.js';
import { elidePath, tilde, type Layout } from '../layout.js';
import { invalidConfigNotice, loadForView } from './context.js';
import { jsonLine } from './json-contract.js';
import { ExitWith, FORCE_HOME_HELP } from './types.js';

interface DuOpts {
  config?: string;
  home?: string;
  forceHome: boolean;
  json: boolean;
}

const KIND_WORDS: Record<string, string> = {
  traces: 'traces',
  blobs: 'blobs',
  logs: 'session logs',
  child_workdirs: 'child workdirs',
  held: 'held (undo window)',
  protected: 'protected sessions',
  other: 'other',
};
const AGE_WORDS: Record<string, string> = {
  lt_1d: '< 1 day',
  lt_7d: '< 7 days',
  lt_30d: '< 30 days',
  lt_90d: '< 90 days',
  older: 'older',
};

/** `label  size  ####` in `width` columns; the bar is the share of `of`. */
function barLine(label: string, bytes: number, of: number, width: number, indent = ''): string {
  const size = formatBytes(bytes).padStart(10);
  const labelWidth = Math.min(36, Math.max(12, width - 10 - 2 - 20));
  const l =
    (indent + label).length > labelWidth
      ? (indent + label).slice(0, labelWidth - 1) + '…'
      : (indent + label).padEnd(labelWidth);
  const room = Math.max(0, width - labelWidth - size.length - 2);
  const n = of > 0 ? Math.round((bytes / of) * room) : 0;
  return `${l}${size}  ${'#'.repeat(Math.min(room, n))}`.trimEnd();
}

function reclaimPart(x: DuReport['totals']['reclaimable']['now']): string {
  return `${formatBytes(x.bytes)}${x.held_bytes > 0 ? ` (and ${formatBytes(x.held_bytes)} it would hold)` : ''}`;
}

export function renderDu(r: DuReport, layout: Layout): string {
  const w = Math.min(layout.width, 80);
  const path = (p: string, room: number) => elidePath(tilde(p, layout.homeDir), room);
  const out: string[] = [];
  if (!r.home_exists) out.push(`No murmur home at ${path(r.home, w - 20)}.`);
  const biggest = Math.max(r.home_bytes, ...r.roots.map((x) => x.bytes), 1);
  out.push(`${barLine(`home ${path(r.home, 30)}`, r.home_bytes, biggest, w)}`);
  for (const s of r.stores) out.push(barLine(`record store ${s.store}`, s.bytes, biggest, w, '  '));
  out.push(barLine('murmur-gc (gc/)', r.gc.bytes, biggest, w, '  '));
  if (r.gc.held > 0) out.push(barLine('of it held', r.gc.held, biggest, w, '    '));
  for (const x of r.roots) {
    out.push(barLine(`root ${path(x.root, 31)}`, x.bytes, biggest, w));
    for (const [k, b] of Object.entries(x.by_kind))
      if (b > 0) out.push(barLine(KIND_WORDS[k] ?? k, b, biggest, w, '  '));
    if (x.beside && x.beside.wrk_logs + x.beside.out > 0)
      out.push(`  beside it: wrk_ logs ${formatBytes(x.beside.wrk_logs)}, out/ ${formatBytes(x.beside.out)}`);
  }
  const ages: Record<string, number> = {};
  for (const p of [...r.roots, ...r.stores])
    for (const [k, b] of Object.entries(p.by_age)) ages[k] = (ages[k] ?? 0) + b;
  const ageMax = Math.max(1, ...Object.values(ages));
  out.push('sessions and records by age:');
  for (const [k, b] of Object.entries(ages)) out.push(barLine(AGE_WORDS[k] ?? k, b, ageMax, w, '  '));
  const capsules: Record<string, number> = {};
  for (const s of r.stores) for (const [c, b] of Object.entries(s.by_capsule)) capsules[c] = (capsules[c] ?? 0) + b;
  if (Object.keys(capsules).length > 0) {
    out.push('records by capsule:');
    const capMax = Math.max(1, ...Object.values(capsules));
    for (const [c, b] of Object.entries(capsules).sort((a, b) => b[1] - a[1])) out.push(barLine(c, b, capMax, w, '  '));
  }
  const t = r.totals;
  out.push('a sweep would free (the fate planner, as its dry run):');
  out.push(`  now ${reclaimPart(t.reclaimable.now)}`);
  out.push(`  within 7 days ${reclaimPart(t.reclaimable.within_7d)}`);
  out.push(`  within 30 days ${reclaimPart(t.reclaimable.within_30d)}`);
  out.push(`  never (no rule will take it) ${formatBytes(t.never)}`);
  const unmeasured = t.reclaimable.within_30d.truncations_unmeasured;
  if (unmeasured > 0)
    out.push(
      `  (and ${unmeasured} record truncation${unmeasured === 1 ? '' : 's'} whose size is measured only with a disk budget)`,
    );
  for (const p of r.problems.slice(0, 5)) out.push(`unreadable: ${p.path}: ${p.detail}`);
  if (r.problems.length > 5) out.push(`(and ${r.problems.length - 5} more unreadable: --json lists them)`);
  return out.map((l) => (l.length > w ? wrap(l, w) : l)).join('\n') + '\n';
}

/** A prose line in `w` columns, continued with a two-space indent. */
function wrap(line: string, w: number): string {
  const words = line.split(' ');
  const lines: string[] = [];
  let cur = '';
  for (const word of words) {
    if (cur !== '' && (cur + ' ' + word).length > w) {
      lines.push(cur);
      cur = '  ' + word;
    } else cur = cur === '' ? word : `${cur} ${word}`;
  }
  if (cur !== '') lines.push(cur);
  return lines.join('\n');
}

async function runDu(opts: DuOpts): Promise<number> {
  const { config, invalid } = await loadForView(opts);
  const { diskUsage } = await import('../commands/du.js');
  const { createLogger } = await import('../log.js');
  const r = await diskUsage(config, createLogger({ level: 'silent' }));
  if (opts.json) process.stdout.write(jsonLine('du', { ...r, config_invalid: invalid ?? null }));
  else {
    const { layoutFor } = await import('../layout.js');
    const { homedir } = await import('node:os');
    process.stdout.write(renderDu(r, layoutFor(process.stdout, homedir())));
  }
  if (invalid) process.stderr.write(invalidConfigNotice(invalid, config.home));
  return invalid ? ExitCodes.usage : ExitCodes.ok;
}

export function registerDuCommand(program: Command): void {
  program
    .command('du')
    .description(
      'what the home and every sessions root hold (by store, kind, age) and what a sweep would free now, within 7 and 30 days; writes nothing',
    )
    .option('--config <file>', 'configuration file (default $XDG_CONFIG_HOME/murmur-gc/config.yaml)')
    .option('--home <dir>', 'the murmur home (default from the config, else $HOME/.murmur)')
    .option('--force-home', FORCE_HOME_HELP, false)
    .option('--json', 'print one JSON document on stdout', false)
    .action(async (opts: DuOpts) => {
      const c = await runDu(opts);
      if (c !== ExitCodes.ok) throw new ExitWith(c);
    });
}
