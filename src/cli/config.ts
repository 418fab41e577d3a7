// `murmur-gc config check` (also `murmur-gc --check-config`): load the configuration the way every
// command does and report EVERY problem at once, then the effective policy.
// Guarantees: reads only (the config, the manifests it names, and whether configured paths exist);
// each error and warning names its file, line:column and key path and carries a stable code
// (`config_invalid` errors, `config_path_missing` warnings); exit 2 when there is an error, 0 with
// warnings only. The effective policy is printed only for a configuration that loads: per sessions
// root and per record store, its retain keys, its budget and where the policy came from (this
// config, a manifest, or nowhere — nothing is deleted there). --json prints one document
// (the envelope of src/cli/json-contract.ts); no conversation content is ever read.
// `--plan` (opt-in: it reads the whole home) adds, for a configuration that loads, what the values
// would remove now per entry — the dry run's planning (src/commands/config-plan.ts), which writes
// nothing — and a `config_destructive` warning for a `max_bytes` that cannot be met; it changes
// neither the exit code's meaning nor the envelope (`plan` is null without it).
import type { Command } from 'commander';
import { formatBytes, formatTable } from '../sweep/report.js';
import type { ConfigCheck, ConfigWarning, PolicySource } from '../config/load.js';
import type { ConfigPlan, EntryStop } from '../commands/config-plan.js';
import type { ConfigPolicy, ConfigProblem, KeepFreeJson, RetainJson } from '../schema/json-schemas.js';
import type { GcConfig, KeepFree, RecordRetain, SessionRetain } from '../config/types.js';
import type { ConfigError } from '../errors.js';
import { ExitCodes } from '../errors.js';
import { jsonLine } from './json-contract.js';
import { ExitWith, FORCE_HOME_HELP } from './types.js';
import { definedOnly } from '../defined.js';

export interface ConfigCheckFlags {
  config?: string;
  home?: string;
  forceHome?: boolean;
  json: boolean;
  /** also say what the values would remove now (the dry run's planning) */
  plan?: boolean;
}

/** `30d`, `12h`, `90m`, `45s`: the largest whole unit, as a config would write it. */
export function durationText(secs: number): string {
  for (const [unit, n] of [
    ['d', 86_400],
    ['h', 3600],
    ['m', 60],
  ] as const)
    if (secs % n === 0 && secs >= n) return `${secs / n}${unit}`;
  return `${secs}s`;
}

/**
 * An entry's retain column. Without a retain block an entry still deletes when it has a
 * `max_bytes` (its oldest removable items go to fit): only with neither is nothing deleted.
 */
function retainText(r: SessionRetain | RecordRetain | undefined, maxBytes?: number): string {
  if (!r) return maxBytes !== undefined ? 'none (max_bytes removes the oldest to fit)' : 'none (nothing deleted)';
  const parts: string[] = [];
  if ('maxSessions' in r && r.maxSessions !== undefined) parts.push(`max_sessions ${r.maxSessions}`);
  if ('maxMessages' in r && r.maxMessages !== undefined) parts.push(`max_messages ${r.maxMessages}`);
  if (r.maxAgeSecs !== undefined) parts.push(`max_age ${durationText(r.maxAgeSecs)}`);
  return parts.join(', ');
}

/** A sessions entry's retain column: its retain keys and its `children: { max_age }` policy. */
function sessionRetainText(s: {
  retain?: SessionRetain | undefined;
  maxBytes?: number | undefined;
  childrenMaxAgeSecs?: number | undefined;
}): string {
  if (s.childrenMaxAgeSecs === undefined) return retainText(s.retain, s.maxBytes);
  const children = `children max_age ${durationText(s.childrenMaxAgeSecs)}`;
  if (!s.retain && s.maxBytes === undefined) return `${children} (orphaned child workdirs only)`;
  return `${retainText(s.retain, s.maxBytes)}; ${children}`;
}

function retainJson(r: SessionRetain | RecordRetain | undefined): RetainJson {
  if (!r) return null;
  const o: NonNullable<RetainJson> = {};
  if ('maxSessions' in r && r.maxSessions !== undefined) o.max_sessions = r.maxSessions;
  if ('maxMessages' in r && r.maxMessages !== undefined) o.max_messages = r.maxMessages;
  if (r.maxAgeSecs !== undefined) o.max_age_secs = r.maxAgeSecs;
  return o;
}

function fromText(s: PolicySource | undefined, hasRetain: boolean): string {
  if (!s) return hasRetain ? 'config' : '-';
  if (s.from === 'config') return 'config';
  if (s.from === 'manifest') return `manifest ${s.manifest ?? ''}`;
  return s.note ? `${s.note}${s.manifest ? ` (${s.manifest})` : ''}` : 'no retain block';
}

function keepFreeText(k: KeepFree, c: GcConfig): string {
  const out = [
    ...c.sessions.filter((s) => s.keepFree === false).map((s) => s.root),
    ...new Set(c.records.filter((r) => r.keepFree === false).map((r) => `record store ${r.store}`)),
  ];
  const free = k.kind === 'percent' ? `${k.percent}%` : formatBytes(k.bytes);
  return `${free} (at most ${k.perSweepPercent}% of one store's items a sweep${out.length > 0 ? `; never from ${out.join(', ')}` : ''})`;
}

function keepFreeJson(k: KeepFree): KeepFreeJson {
  return k.kind === 'percent'
    ? { kind: 'percent', percent: k.percent, per_sweep_percent: k.perSweepPercent }
    : { kind: 'bytes', bytes: k.bytes, per_sweep_percent: k.perSweepPercent };
}

function where(
  file: string | undefined,
  line: number | undefined,
  column: number | undefined,
  keyPath: string,
): string {
  if (file === undefined) return keyPath.startsWith('--') ? '(command line)' : '(built-in default)';
  return line !== undefined ? `${file}:${line}:${column ?? 1}` : file;
}

function problemJson(e: ConfigError | ConfigWarning, severity: 'error' | 'warning'): ConfigProblem {
  const message = 'detail' in e ? e.detail : e.message;
  return {
    severity,
    code: e.code,
    file: e.file ?? null,
    line: e.line ?? null,
    column: e.column ?? null,
    key: e.keyPath,
    message,
  };
}

/** The effective policy as plain data (the --json `policy` member). */
export function policyJson(c: GcConfig, sources: Map<string, PolicySource>): ConfigPolicy {
  const src = (origin: string) => {
    const s = sources.get(origin);
    return { from: s?.from ?? 'none', manifest: s?.manifest ?? null, note: s?.note ?? null };
  };
  return {
    home: c.home,
    schedule: c.schedule,
    run_on_start: c.runOnStart,
    random_delay_secs: c.randomDelaySecs,
    live_grace_secs: c.liveGraceSecs,
    max_delete: c.maxDelete ?? null,
    keep_free: c.keepFree ? keepFreeJson(c.keepFree) : null,
    quarantine_secs: c.quarantine?.windowSecs ?? null,
    sessions: c.sessions.map((s) => ({
      root: s.root,
      origin: s.origin,
      retain: retainJson(s.retain),
      source: src(s.origin),
      max_bytes: s.maxBytes ?? null,
      keep_free: s.keepFree !== false,
      children: s.childrenMaxAgeSecs !== undefined ? { max_age_secs: s.childrenMaxAgeSecs } : null,
      problem: s.problem ?? null,
    })),
    records: c.records.map((r) => ({
      store: r.store,
      capsule: r.capsule,
      origin: r.origin,
      retain: retainJson(r.retain),
      source: src(r.origin),
      max_bytes: r.maxBytes ?? null,
      keep_free: r.keepFree !== false,
    })),
    audit: { retain: retainJson(c.audit.retain) },
    log_level: c.log.level,
    metrics_textfile: c.metrics?.textfile ?? null,
    metrics_interval_secs: c.metrics?.intervalSecs ?? null,
  };
}

export function renderCheckJson(check: ConfigCheck, plan?: ConfigPlan): string {
  return jsonLine('config check', {
    config: check.source ?? null,
    ok: check.errors.length === 0,
    errors: check.errors.map((e) => problemJson(e, 'error')),
    warnings: check.warnings.map((w) => problemJson(w, 'warning')),
    policy: check.config ? policyJson(check.config, check.sources) : null,
    plan: plan ?? null,
  });
}

/** `would remove now: …` of one entry, and where the guard would stop it. */
function planEntryText(e: ConfigPlan['entries'][number]): string[] {
  const what = e.kind === 'sessions' ? 'sessions' : 'records';
  const stop = (st: EntryStop | null, who: string) =>
    st
      ? [
          `    ${who} the blast-radius guard would stop it: ${st.would_take} of ${st.present} ${what} by every rule together; ${st.limit}; nothing would be taken there`,
        ]
      : [];
  const stops = [
    ...stop(e.stopped, 'by hand'),
    ...(e.stopped ? [] : stop(e.stopped_unattended, 'unattended (the daemon, the timer),')),
  ];
  const head = `${e.origin} ${e.kind === 'sessions' ? e.root : e.store}`;
  if (e.stopped) return [`${head}: would remove now: nothing (stopped by the blast-radius guard)`, ...stops];
  const held = e.held > 0 ? [`would hold ${plural(e.held, e.kind === 'sessions' ? 'session' : 'record')}`] : [];
  if (e.kind === 'sessions') {
    if (e.sessions + e.held === 0)
      return [`${head}: would remove now: nothing${e.root_exists ? '' : ' (the root does not exist)'}`, ...stops];
    const removed = e.sessions > 0 ? [`would remove ${plural(e.sessions, 'session')}`] : [];
    return [`${head}: ${[...removed, ...held].join(', ')} now (${formatBytes(e.bytes)})`, ...stops];
  }
  if (e.records + e.held + e.truncated === 0) return [`${head}: would remove now: nothing`, ...stops];
  const parts = [
    ...(e.records > 0 ? [`would remove ${plural(e.records, 'record')}`] : []),
    ...held,
    ...(e.truncated > 0
      ? [`would drop ${plural(e.messages_dropped, 'message')} from ${plural(e.truncated, 'truncated record')}`]
      : []),
  ];
  return [`${head}: ${parts.join(', ')} now (${formatBytes(e.bytes)})`, ...stops];
}

function planText(plan: ConfigPlan): string[] {
  const out = [
    '',
    "What these values would remove or hold now (the dry run's planning; murmur-gc --dry-run -v lists each item):",
  ];
  if (plan.not_planned !== null) return [...out, `  not planned: ${plan.not_planned}`];
  if (!plan.home_exists) out.push(`  no murmur home at ${plan.home}: no record store or audit trail to plan`);
  if (plan.entries.length === 0) out.push('  no entry with a policy: nothing');
  for (const e of plan.entries) out.push(...planEntryText(e).map((l) => `  ${l}`));
  return out;
}

function plural(n: number, one: string): string {
  return `${n} ${one}${n === 1 ? '' : 's'}`;
}

export function renderCheckText(check: ConfigCheck, plan?: ConfigPlan): string {
  const out: string[] = [
    `murmur-gc config check: ${check.source ?? 'no configuration file (built-in defaults: nothing is deleted)'}`,
  ];
  if (check.errors.length + check.warnings.length > 0) out.push('');
  for (const e of check.errors)
    out.push(
      `error[${e.code}] ${where(e.file, e.line, e.column, e.keyPath)}: ${e.keyPath ? `${e.keyPath}: ` : ''}${e.detail}`,
    );
  for (const w of check.warnings)
    out.push(
      `warning[${w.code}] ${where(w.file, w.line, w.column, w.keyPath)}: ${w.keyPath ? `${w.keyPath}: ` : ''}${w.message}`,
    );
  const c = check.config;
  if (c) {
    out.push('', `Effective policy (home ${c.home}):`);
    if (c.sessions.length === 0) out.push('  sessions roots: none configured');
    else {
      out.push(
        ...formatTable([
          ['sessions root', 'entry', 'retain', 'budget', 'policy from'],
          ...c.sessions.map((s) => [
            s.root,
            s.origin,
            s.problem ? 'none (invalid manifest)' : sessionRetainText(s),
            s.maxBytes !== undefined ? `max_bytes ${formatBytes(s.maxBytes)}` : '-',
            fromText(check.sources.get(s.origin), s.retain !== undefined),
          ]),
        ]),
      );
    }
    out.push('');
    if (c.records.length === 0) out.push('  record stores: none configured (no record is deleted or truncated)');
    else {
      out.push(
        ...formatTable([
          ['record store', 'capsule', 'entry', 'retain', 'budget', 'policy from'],
          ...c.records.map((r) => [
            r.store,
            r.capsule,
            r.origin,
            retainText(r.retain, r.maxBytes),
            r.maxBytes !== undefined ? `max_bytes ${formatBytes(r.maxBytes)}` : '-',
            fromText(check.sources.get(r.origin), r.retain !== undefined),
          ]),
        ]),
      );
    }
    out.push('');
    out.push(`  audit trail ${c.home}/gc: ${retainText(c.audit.retain)}`);
    const md = c.maxDelete
      ? [
          c.maxDelete.count !== undefined ? `count ${c.maxDelete.count}` : '',
          c.maxDelete.fraction !== undefined ? `fraction ${c.maxDelete.fraction}` : '',
        ]
          .filter(Boolean)
          .join(', ')
      : 'default (unattended: half and more than 20)';
    out.push(
      `  max_delete: ${md}; keep_free: ${c.keepFree ? keepFreeText(c.keepFree, c) : 'none'}; live_grace: ${durationText(c.liveGraceSecs)}; quarantine: ${c.quarantine ? `${durationText(c.quarantine.windowSecs)} (removals held, murmur-gc restore undoes them)` : 'off (removals are final)'}`,
    );
    out.push(
      `  daemon: schedule "${c.schedule}", run_on_start ${c.runOnStart ? 'yes' : 'no'}, random_delay ${durationText(c.randomDelaySecs)}; log level ${c.log.level}; metrics: ${c.metrics ? `${c.metrics.textfile}${c.metrics.intervalSecs !== undefined ? ` (interval ${durationText(c.metrics.intervalSecs)})` : ''}` : 'none'}`,
    );
    if (plan) out.push(...planText(plan));
  }
  out.push('');
  out.push(
    check.errors.length > 0
      ? `${plural(check.errors.length, 'error')}, ${plural(check.warnings.length, 'warning')}: the configuration is not valid${check.fatal > 0 ? ' (every command refuses it, exit 2)' : ''}.`
      : `${plural(0, 'error')}, ${plural(check.warnings.length, 'warning')}: the configuration is valid.`,
  );
  return out.join('\n') + '\n';
}

/** Warnings as a reader meets them: by file (in the order first named), then line and column. */
function inLineOrder(ws: ConfigWarning[]): ConfigWarning[] {
  const rank = new Map<string | undefined, number>();
  for (const w of ws) if (!rank.has(w.file)) rank.set(w.file, rank.size);
  return ws
    .map((w, n) => ({ w, n }))
    .sort(
      (a, b) =>
        (rank.get(a.w.file) ?? 0) - (rank.get(b.w.file) ?? 0) ||
        (a.w.line ?? 0) - (b.w.line ?? 0) ||
        (a.w.column ?? 0) - (b.w.column ?? 0) ||
        a.n - b.n,
    )
    .map(({ w }) => w);
}

export async function runConfigCheck(flags: ConfigCheckFlags): Promise<number> {
  const { checkConfig } = await import('../config/load.js');
  const check = await checkConfig({
    ...definedOnly({ configPath: flags.config, home: flags.home }),
    ...(flags.forceHome === true ? { forceHome: true } : {}),
    env: process.env,
    cwd: process.cwd(),
  });
  let plan: ConfigPlan | undefined;
  if (flags.plan === true && check.config) {
    const { planConfig } = await import('../commands/config-plan.js');
    const planned = await planConfig(check.config, check.source, check.locate ?? (() => undefined));
    plan = planned.plan;
    check.warnings = inLineOrder([...check.warnings, ...planned.warnings]);
  }
  process.stdout.write(flags.json ? renderCheckJson(check, plan) : renderCheckText(check, plan));
  return check.errors.length > 0 ? ExitCodes.usage : ExitCodes.ok;
}

export function registerConfigCommands(program: Command): void {
  const config = program.command('config').description('check the configuration');
  config
    .command('check')
    .description(
      'report every configuration error and warning at once (file, line:column, key), then the effective policy per sessions root and record store',
    )
    .option('--config <file>', 'configuration file (default $XDG_CONFIG_HOME/murmur-gc/config.yaml)')
    .option('--home <dir>', 'the murmur home (default from the config, else $HOME/.murmur)')
    .option('--force-home', FORCE_HOME_HELP, false)
    .option('--json', 'print one JSON document on stdout', false)
    .option(
      '--plan',
      "also say, per entry, what the values would remove now (the dry run's planning over the whole home: writes nothing), and warn about a max_bytes that cannot be met",
    )
    .action(async (opts: ConfigCheckFlags) => {
      const code = await runConfigCheck(opts);
      if (code !== ExitCodes.ok) throw new ExitWith(code);
    });
}
