// `murmur-gc status`: is the daemon running, what did the last sweep do, when is the next one,
// how big are the stores.
// Guarantees: read-only. "Running" is decided by probing the recorded pid AND its start time
// token (field 22 of /proc/<pid>/stat) — never by the state file alone: a stale file naming a
// dead or reused pid says "not running". A corrupt state file is reported, not trusted. The
// number of protected items (and an unreadable protection list) is shown. Its memory is bounded
// whatever the traces it measures hold (src/sweep/stores.ts, docs/limits.md): counts and sizes
// only, no command a trace names. The next expiries (when the undo window next purges, when a
// max_age policy next condemns something; src/plan/expiries.ts) come from the same walk and read
// no trace (docs/forecast.md "Next expiries").
import type { GcConfig } from '../config/types.js';
import { formatBytes, formatWhen } from '../sweep/report.js';
import { PLAIN, elidePath, tilde, wrap, type Layout } from '../layout.js';
import { probeProcess } from '../runtime/running.js';
import { listProtection } from './protect-listing.js';
import { readStateFile, statePath, type DaemonInfo } from '../gchome/state.js';
import { surveyStores } from '../sweep/stores.js';
import { outcomeWords, summaryText } from '../sweep/summary.js';
import { probeTimer, TIMER_UNIT, type TimerInfo } from './timer.js';
import { fleetView } from '../sweep/fleet.js';
import { sweepIntervalSecs } from '../sweep/interval.js';
import { VERSION } from '../version.js';
import type { StatusDoc } from '../schema/json-schemas.js';

/** What `status` gathers: its schema's (src/schema/json-schemas.ts). */
export type { StatusDoc };

export async function judgeDaemon(
  d: DaemonInfo | null,
  nowMs = Date.now(),
): Promise<{ running: boolean; why: string }> {
  if (!d) return { running: false, why: 'no daemon has recorded itself in the state file' };
  if (d.stopped_ms !== null)
    return { running: false, why: `the daemon (pid ${d.pid}) stopped at ${formatWhen(d.stopped_ms, nowMs)}` };
  if (d.start_time === null) {
    const alive = (await probeProcess(d.pid, undefined)) === 'alive';
    return alive
      ? {
          running: true,
          why: `pid ${d.pid} is alive (its start time was not recorded, so a reused pid cannot be ruled out)`,
        }
      : { running: false, why: `pid ${d.pid} is gone` };
  }
  const alive = (await probeProcess(d.pid, d.start_time)) === 'alive';
  return alive
    ? { running: true, why: `pid ${d.pid} is alive with the recorded start time` }
    : {
        running: false,
        why: `pid ${d.pid} is gone or now belongs to another process (start time differs): the daemon was killed`,
      };
}

export async function gatherStatus(
  config: GcConfig,
  timer: () => Promise<TimerInfo> = probeTimer,
  nowMs = Date.now(),
): Promise<StatusDoc> {
  const read = await readStateFile(config.home);
  const state = read.status === 'ok' ? read.state : undefined;
  const d = state?.daemon ?? null;
  const verdict = await judgeDaemon(d, nowMs);
  const { sizes: stores, expiries } = await surveyStores(config, nowMs);
  const lastSweep = state?.last_sweep ?? null;
  const doc: StatusDoc = {
    home: config.home,
    home_exists: read.status !== 'no_home',
    state_file: statePath(config.home),
    state: read.status,
    daemon: {
      running: verdict.running,
      why: verdict.why,
      pid: d?.pid ?? null,
      start_time: d?.start_time ?? null,
      started_ms: d?.started_ms ?? null,
      stopped_ms: d?.stopped_ms ?? null,
      config: d?.config ?? null,
      schedule: d?.schedule ?? null,
    },
    current_sweep: verdict.running ? (state?.current_sweep ?? null) : null,
    last_sweep: lastSweep,
    next_run_ms: verdict.running ? (state?.next_run_ms ?? null) : null,
    timer: verdict.running ? null : await timer(),
    stores,
    next_expiries: expiries,
    metrics: fleetView(VERSION, lastSweep, state?.last_success_ms ?? null, stores, {
      totals: state?.totals,
      intervalSecs: await sweepIntervalSecs(config, nowMs),
      expiries,
    }),
    protection: await protectionSummary(config),
    config: config.source ?? null,
  };
  if (read.status === 'corrupt') doc.state_detail = read.detail;
  return doc;
}

async function protectionSummary(config: GcConfig): Promise<StatusDoc['protection']> {
  const l = await listProtection(config);
  return { file: l.file, items: l.items.length, unreadable: l.unreadable };
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

function nextRun(s: StatusDoc, nowMs: number): string {
  if (s.daemon.running) return s.next_run_ms === null ? 'unknown' : `${formatWhen(s.next_run_ms, nowMs)} (daemon)`;
  const t = s.timer;
  if (!t || t.state === 'unknown')
    return `unknown: the daemon is not running, and ${t?.state === 'unknown' ? t.why : `${TIMER_UNIT} was not asked`}`;
  if (t.state === 'not_installed') return `none (the daemon is not running and ${TIMER_UNIT} is not installed)`;
  if (t.state === 'inactive') return `none (the daemon is not running and ${TIMER_UNIT} is not active)`;
  const next = t.state === 'active' ? t.next_run_ms : null;
  return next === null ? `unknown (${TIMER_UNIT} is active)` : `${formatWhen(next, nowMs)} (${TIMER_UNIT})`;
}

export function renderStatus(s: StatusDoc, nowMs = Date.now(), L: Layout = PLAIN): string {
  const when = (ms: number | null | undefined) => (ms === null || ms === undefined ? '-' : formatWhen(ms, nowMs));
  const lines: string[] = [];
  // every line fits the layout's width: prose wraps under its label, paths shown from `~`
  const out = {
    push: (...ls: string[]) => {
      for (const x of ls) lines.push(...fitProse(tildeWords(x, L), L));
    },
  };
  out.push(`murmur-gc status — home ${s.home}${s.home_exists ? '' : ' (does not exist)'}`);
  out.push(`config:     ${s.config ?? 'built-in defaults (no configuration file; --config FILE names one)'}`);
  const d = s.daemon;
  if (d.running) {
    out.push(
      `daemon:     running, pid ${d.pid}, since ${when(d.started_ms)}; schedule "${d.schedule ?? ''}"${d.config ? `, config ${d.config}` : ', built-in config'}`,
    );
  } else {
    out.push(`daemon:     not running (${d.why})`);
  }
  if (s.state === 'corrupt')
    out.push(`state file: ${s.state_file} is unreadable (${s.state_detail ?? 'corrupt'}); the daemon rewrites it`);
  if (s.state === 'missing') out.push(`state file: none yet (${s.state_file})`);
  if (s.current_sweep) out.push(`sweeping:   since ${when(s.current_sweep.started_ms)} (${s.current_sweep.trigger})`);
  const l = s.last_sweep;
  if (l) {
    out.push(
      `last sweep: ${when(l.started_ms)}, ${outcomeWords(l.outcome)} (${l.trigger})${l.audit ? `, audit ${l.audit}` : ''}`,
    );
    out.push(`            ${summaryText(l)}`);
    const skipped = Object.entries(l.skipped_by_code).map(([c, n]) => `${c} ${n}`);
    if (skipped.length) out.push(`            skipped by code: ${skipped.join(', ')}`);
    const errors = Object.entries(l.errors_by_code).map(([c, n]) => `${c} ${n}`);
    if (errors.length) out.push(`            errors by code: ${errors.join(', ')}`);
    if (l.message) out.push(`            ${l.message}`);
    if (d.config !== null && d.config !== s.config)
      out.push(
        `            (the daemon sweeps with ${d.config}; the store sizes below follow ${s.config ?? 'the built-in defaults'})`,
      );
  } else {
    out.push('last sweep: none recorded');
  }
  out.push(`next run:   ${nextRun(s, nowMs)}`);
  const p = s.next_expiries.purge;
  if (p) {
    const what = `${plural(p.items, 'held item')}, ${formatBytes(p.bytes)}`;
    out.push(
      p.at_ms <= nowMs
        ? `next purge: ${what}, due since ${when(p.at_ms)}: the next sweep deletes ${p.items === 1 ? 'it' : 'them'}`
        : `next purge: ${what}, ${when(p.at_ms)}`,
    );
  }
  const a = s.next_expiries.max_age;
  if (a) {
    const what =
      a.store === 'records'
        ? `context ${a.target} of record store ${a.origin}`
        : a.origin === `${s.home}/gc`
          ? `audit trace ${a.target}`
          : `${a.target} in ${a.origin}`;
    out.push(`max_age:    ${what} is due ${when(a.at_ms)}`);
  }
  const st = s.stores;
  out.push('stores:');
  const rows: string[][] = [
    [
      'sessions',
      `${plural(st.sessions.roots.length, 'configured root')}`,
      plural(st.sessions.sessions, 'session'),
      formatBytes(st.sessions.bytes),
      '',
    ],
  ];
  for (const r of st.sessions.roots) {
    rows.push(
      r.exists
        ? [
            `  ${r.root}`,
            '',
            plural(r.sessions, 'session'),
            formatBytes(r.bytes),
            r.unreadable ? `${r.unreadable} unreadable` : '',
          ]
        : [`  ${r.root}`, '', 'does not exist', '', ''],
    );
    const b = r.beside;
    if (!b) continue;
    // what lives beside the sessions (docs/design.md §9a), each kind only when the root has some
    if (b.tied.count)
      rows.push([
        '    children',
        'tied',
        plural(b.tied.count, 'child workdir'),
        formatBytes(b.tied.bytes),
        'go with their sessions',
      ]);
    if (b.orphaned.count)
      rows.push([
        '    children',
        'orphaned',
        plural(b.orphaned.count, 'child workdir'),
        formatBytes(b.orphaned.bytes),
        b.orphaned.oldest_ms === null ? '' : `oldest last written ${when(b.orphaned.oldest_ms)}`,
      ]);
    if (b.work_logs.count)
      rows.push([
        '    logs',
        'wrk_',
        plural(b.work_logs.count, 'work log'),
        formatBytes(b.work_logs.bytes),
        'go with their sessions',
      ]);
    if (b.other_logs.count)
      rows.push([
        '    logs',
        'other',
        plural(b.other_logs.count, 'file'),
        formatBytes(b.other_logs.bytes),
        'not managed',
      ]);
    if (b.capsule.length)
      rows.push([
        '    capsule',
        b.capsule.map((c) => c.name).join(' '),
        '',
        formatBytes(b.capsule.reduce((n, c) => n + c.bytes, 0)),
        'not managed',
      ]);
    if (b.unreadable) rows.push(['    beside', '', `${b.unreadable} unreadable`, '', 'symlinks are never followed']);
  }
  rows.push([
    'records',
    plural(st.records.stores, 'store'),
    plural(st.records.records, 'record'),
    formatBytes(st.records.bytes),
    st.records.unreadable ? `${st.records.unreadable} unreadable` : '',
  ]);
  rows.push(['audit', '', plural(st.audit.sessions, 'sweep trace'), formatBytes(st.audit.bytes), '']);
  if (st.quarantine)
    rows.push([
      'quarantine',
      '',
      plural(st.quarantine.items, 'held item'),
      formatBytes(st.quarantine.bytes),
      st.quarantine.unreadable || st.quarantine.unverified
        ? [
            st.quarantine.unreadable ? `${st.quarantine.unreadable} unreadable` : '',
            st.quarantine.unverified ? `${st.quarantine.unverified} not murmur-gc's` : '',
          ]
            .filter((x) => x)
            .join(', ')
        : 'murmur-gc quarantine ls',
    ]);
  const pr = s.protection;
  if (pr.unreadable !== null)
    rows.push(['protected', '', 'unreadable', '', `${pr.file}: every item counts as protected until it is fixed`]);
  else if (pr.items > 0) rows.push(['protected', '', plural(pr.items, 'item'), '', 'murmur-gc protection ls']);
  const k = st.kept ?? { items: 0, bytes: 0, oldest_ms: null, paths: [] };
  if (k.items > 0)
    rows.push([
      'kept aside',
      '',
      plural(k.items, 'directory', 'directories'),
      formatBytes(k.bytes),
      `could not be removed whole, since ${when(k.oldest_ms)}`,
    ]);
  lines.push(...fitTable(rows, L));
  if (k.items > 0) {
    out.push(
      "kept aside (another user's files or a mount inside; each sweep tries again, remove what blocks it by hand):",
    );
    for (const path of [...k.paths].sort()) lines.push(`  ${tilde(path, L.homeDir)}`);
  }
  return lines.join('\n') + '\n';
}

/** A line of prose in the layout's width: wrapped at spaces under its label (`config:     …`). */
function fitProse(line: string, L: Layout): string[] {
  if (line.length <= L.width) return [line];
  const m = /^(\S[^:]*:\s+|\s+)(.*)$/.exec(line);
  const label = m?.[1] ?? '';
  return wrap(m?.[2] ?? line, L.width, label, ' '.repeat(Math.min(12, label.length)));
}

/** Every word of `text` that is a path under the operator's home shown from `~`. */
function tildeWords(text: string, L: Layout): string {
  const h = L.homeDir;
  if (h === undefined || h === '' || h === '/') return text;
  return text
    .split(' ')
    .map((w) => tilde(w, h))
    .join(' ');
}

/**
 * The stores table in the layout's width: the counts and sizes right-aligned at the end of the
 * line, the name (with its kind, when it has one) before them; a path too long for what is left
 * is shown from `~` and elided in the middle; a row's note goes to a line of its own under it
 * when it would pass the width.
 */
function fitTable(rows: string[][], L: Layout): string[] {
  const shown = rows.map((r) => [tildeWords(r[0] ?? '', L), ...r.slice(1)]);
  const col = (c: number) => Math.max(...shown.map((r) => (r[c] ?? '').length));
  const named = shown.filter((r) => (r[1] ?? '') !== '');
  const w0 = named.length > 0 ? Math.max(...named.map((r) => (r[0] ?? '').length)) : 0;
  const [w2, w3] = [col(2), col(3)];
  const rightLen = 2 + w2 + 2 + w3;
  const lefts = shown.map((r) => ((r[1] ?? '') !== '' ? `${(r[0] ?? '').padEnd(w0)}  ${r[1] ?? ''}` : (r[0] ?? '')));
  const leftWidth = Math.min(Math.max(...lefts.map((x) => x.length)), Math.max(16, L.width - 2 - rightLen));
  const out: string[] = [];
  shown.forEach((r, i) => {
    let left = lefts[i] ?? '';
    if (left.length > leftWidth) {
      const lead = /^ */.exec(left)?.[0] ?? '';
      left = lead + elidePath(left.slice(lead.length), Math.max(8, leftWidth - lead.length));
    }
    const line = `  ${left.padEnd(leftWidth)}  ${(r[2] ?? '').padStart(w2)}  ${(r[3] ?? '').padStart(w3)}`.trimEnd();
    const note = r[4] ?? '';
    if (note === '') out.push(line);
    else if (line.length + 2 + note.length <= L.width) out.push(`${line}  ${note}`);
    else out.push(line, ...wrap(note, L.width, '      ', '      '));
  });
  return out;
}
