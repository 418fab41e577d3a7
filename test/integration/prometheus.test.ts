// The fleet path end to end, against the real servers (Debian's prometheus-node-exporter and
// prometheus): a real sweep that fails (its sessions root is a read-only tmpfs: root_not_writable) writes the
// textfile; node_exporter's textfile collector reads it with no scrape error and serves every
// sample of it; Prometheus scraping node_exporter with the shipped rules loaded evaluates every
// rule without error and shows MurmurGcSweepsFailing pending for that sweep's error code; a
// following sweep that succeeds makes it go away. Every panel query of the shipped Grafana
// dashboard (contrib/grafana/murmur-gc.json), its variables put in as Grafana would, is evaluated
// as Grafana does (a range query over the test's time) and returns data, without error or
// warning; so does its host variable's metric. Both servers bind 127.0.0.1 on free ports,
// keep their data in the test's temp dir, and are stopped afterwards (test/helpers/servers.ts).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import * as f from '../helpers/fixtures.js';
import { parseProm, promValue } from '../helpers/prom.js';
import { requirement } from '../helpers/requirements.js';
import { startServer, waitFor, type Server } from '../helpers/servers.js';

const NODE_EXPORTER = 'prometheus-node-exporter';
const req = requirement('Prometheus integration (real node_exporter and Prometheus)', [
  'root',
  'tmpfs',
  'cmd:setpriv',
  `cmd:${NODE_EXPORTER}`,
  'cmd:prometheus',
]);
const RULES = path.join(f.REPO, 'contrib', 'prometheus', 'murmur-gc.rules.yml');
const DASHBOARD = path.join(f.REPO, 'contrib', 'grafana', 'murmur-gc.json');

interface Panel {
  type: string;
  title: string;
  datasource?: { uid: string };
  targets?: { expr: string; datasource?: { uid: string } }[];
  panels?: Panel[];
}

interface Alert {
  labels: Record<string, string>;
  state: 'pending' | 'firing' | 'inactive';
}

describe.runIf(req.run)('the shipped rules against a real node_exporter and Prometheus', () => {
  let tmp = '';
  let home = '';
  let root = '';
  let textDir = '';
  let textfile = '';
  let cfg = '';
  let mounted = false;
  let nodeExporter: Server | undefined;
  let prometheus: Server | undefined;
  let failedSweep: { status: number | null; errors: Record<string, number> } | undefined;
  let startedS = 0;

  const api = async <T>(p: string, warned = false): Promise<T> => {
    const r = await fetch(prometheus!.url + p, { signal: AbortSignal.timeout(5_000) });
    const body = (await r.json()) as { status: string; data: T; warnings?: string[] };
    if (body.status !== 'success') throw new Error(`${p}: ${JSON.stringify(body)}`);
    if (warned && body.warnings?.length) throw new Error(`${p}: warnings ${JSON.stringify(body.warnings)}`);
    return body.data;
  };
  const alerts = async (): Promise<Alert[]> =>
    (await api<{ alerts: Alert[] }>('/api/v1/alerts')).alerts.filter((a) =>
      a.labels['alertname']?.startsWith('MurmurGc'),
    );

  beforeAll(async () => {
    req.check();
    tmp = fs.realpathSync(f.tempDir('mgc-prom'));
    home = path.join(tmp, 'home');
    root = path.join(tmp, 'app', '.murmur');
    textDir = path.join(tmp, 'textfile');
    textfile = path.join(textDir, 'murmur-gc.prom');
    fs.mkdirSync(home, { mode: 0o700 });
    fs.mkdirSync(root, { recursive: true });
    fs.mkdirSync(textDir);
    // The sessions root: a tmpfs with three finished sessions, then made read-only, so the
    // sweep's removals fail as they would on a filesystem remounted read-only.
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m,mode=0755', 'tmpfs', root]);
    mounted = true;
    for (const d of [5, 4, 3]) {
      const startMs = Date.now() - d * f.DAY;
      f.writeSession(root, {
        sessionId: f.idAt('ses_', startMs),
        startMs,
        end: true,
        files: { blob: 'x'.repeat(1000) },
      });
    }
    execFileSync('mount', ['-o', 'remount,ro', root]);
    // a record store whose record the sweep truncates (the dropped lines held for a day), and whose
    // max_age comes later: every series the dashboard reads has a value
    f.writeRecord(home, 'shey', 'ctx-a', { capsule: 'shey', messages: 30 });
    cfg = f.writeConfig(
      tmp,
      `home: ${home}\nquarantine: 24h\nsessions:\n  - root: ${root}\n    retain: { max_sessions: 1 }\nrecords:\n  - capsule: shey\n    retain: { max_messages: 10, max_age: 30d }\nmetrics:\n  textfile: ${textfile}\n`,
    );
    startedS = Math.floor(Date.now() / 1000);
    const r = f.runCli(['--config', cfg, '--json'], tmp);
    const report = JSON.parse(r.stdout) as { errors: { code: string }[] };
    const errors: Record<string, number> = {};
    for (const e of report.errors) errors[e.code] = (errors[e.code] ?? 0) + 1;
    failedSweep = { status: r.status, errors };

    nodeExporter = await startServer(
      NODE_EXPORTER,
      (port) => [
        `--web.listen-address=127.0.0.1:${port}`,
        '--collector.disable-defaults',
        '--collector.textfile',
        `--collector.textfile.directory=${textDir}`,
      ],
      '/metrics',
    );
    const promYml = path.join(tmp, 'prometheus.yml');
    fs.writeFileSync(
      promYml,
      [
        'global:',
        '  scrape_interval: 1s',
        '  evaluation_interval: 1s',
        'rule_files:',
        `  - ${RULES}`,
        'scrape_configs:',
        '  - job_name: node',
        '    static_configs:',
        `      - targets: ['127.0.0.1:${nodeExporter.port}']`,
        '',
      ].join('\n'),
    );
    prometheus = await startServer(
      'prometheus',
      (port) => [
        `--config.file=${promYml}`,
        `--storage.tsdb.path=${path.join(tmp, 'tsdb')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      '/-/ready',
    );
  });

  afterAll(async () => {
    await prometheus?.stop();
    await nodeExporter?.stop();
    if (mounted) spawnSync('umount', [root]);
    if (tmp) f.rmrf(tmp);
  });

  it('the sweep failed on the read-only root: exit 1, root_not_writable once, and said so in the textfile', () => {
    expect(failedSweep?.status).toBe(1);
    expect(failedSweep!.errors).toEqual({ root_not_writable: 1 });
    const m = parseProm(fs.readFileSync(textfile, 'utf8'));
    expect(promValue(m, 'murmur_gc_last_sweep_outcome', { outcome: 'errors' })).toBe(1);
    expect(promValue(m, 'murmur_gc_last_sweep_errors', { code: 'root_not_writable' })).toBe(1);
    expect(promValue(m, 'murmur_gc_sweeps_total', { outcome: 'errors' })).toBe(1);
  });

  it('node_exporter reads the textfile with no scrape error and serves every sample of it', async () => {
    const r = await fetch(`${nodeExporter!.url}/metrics`, { signal: AbortSignal.timeout(5_000) });
    expect(r.status).toBe(200);
    // node_exporter's own families (summaries among them) aside: murmur-gc's and the collector's
    const ours = /^(# (HELP|TYPE) )?(murmur_gc_|node_textfile_)/;
    const served = parseProm(
      (await r.text())
        .split('\n')
        .filter((l) => ours.test(l))
        .join('\n') + '\n',
    );
    expect(promValue(served, 'node_textfile_scrape_error'), nodeExporter!.output()).toBe(0);
    // whole seconds: what MurmurGcNotRunning's docs compare it with
    expect(promValue(served, 'node_textfile_mtime_seconds', { file: textfile })).toBe(
      Math.floor(fs.statSync(textfile).mtimeMs / 1000),
    );
    const written = parseProm(fs.readFileSync(textfile, 'utf8'));
    expect(written.size).toBeGreaterThan(10);
    for (const [name, fam] of written) {
      expect(served.get(name)?.type, name).toBe(fam.type);
      for (const s of fam.samples)
        expect(promValue(served, name, s.labels), `${name}${JSON.stringify(s.labels)}`).toBe(s.value);
    }
  });

  it('Prometheus evaluates every shipped rule without error and shows MurmurGcSweepsFailing pending for root_not_writable', async () => {
    const pending = await waitFor(
      'MurmurGcSweepsFailing pending',
      async () =>
        (await alerts()).find((a) => a.labels['alertname'] === 'MurmurGcSweepsFailing' && a.state === 'pending'),
      20_000,
    );
    expect(pending.labels).toMatchObject({
      code: 'root_not_writable',
      job: 'node',
      instance: `127.0.0.1:${nodeExporter!.port}`,
      severity: 'warning',
    });
    // nothing else: the sweep ran just now, murmur_gc_info is there, no budget/clock/blast problem
    expect((await alerts()).map((a) => a.labels['alertname'])).toEqual(['MurmurGcSweepsFailing']);
    const groups = (
      await api<{ groups: { rules: { name: string; health: string; lastError?: string }[] }[] }>('/api/v1/rules')
    ).groups;
    const rules = groups.flatMap((g) => g.rules);
    const shipped = (parse(fs.readFileSync(RULES, 'utf8')) as { groups: { rules: unknown[] }[] }).groups.flatMap(
      (g) => g.rules,
    );
    expect(rules).toHaveLength(shipped.length);
    for (const rule of rules) expect(rule.health, `${rule.name}: ${rule.lastError ?? ''}`).toBe('ok');
  });

  it('every query of docs/metrics.md "Fleet" is valid PromQL that Prometheus evaluates over these series', async () => {
    const doc = fs.readFileSync(path.join(f.REPO, 'docs', 'metrics.md'), 'utf8');
    const section = doc.slice(doc.indexOf('## Fleet: alerts and dashboards'));
    const table = section
      .slice(0, section.indexOf('\n## '))
      .split('\n')
      .filter((l) => l.startsWith('| ') && !l.startsWith('| question') && !l.startsWith('|---'));
    const queries = table.flatMap((row) =>
      [...row.split(/ \| /)[1]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!.replace(/\\\|/g, '|')),
    );
    expect(queries.length).toBeGreaterThanOrEqual(5);
    for (const q of queries) {
      const data = await api<{ resultType: string; result: unknown[] }>(`/api/v1/query?query=${encodeURIComponent(q)}`);
      expect(data.resultType, q).toBe('vector');
    }
    // the failing sweep is visible in the "where are sweeps failing" query
    const failing = await api<{ result: { metric: Record<string, string> }[] }>(
      `/api/v1/query?query=${encodeURIComponent(queries[1]!)}`,
    );
    expect(failing.result.map((r) => r.metric['code'])).toEqual(['root_not_writable']);
  });

  it('a sweep that succeeds (the root writable again) makes the alert go away', async () => {
    execFileSync('mount', ['-o', 'remount,rw', root]);
    const r = f.runCli(['--config', cfg], tmp);
    expect(r.status, r.stderr).toBe(0);
    const m = parseProm(fs.readFileSync(textfile, 'utf8'));
    expect(promValue(m, 'murmur_gc_sweeps_total', { outcome: 'ok' })).toBe(1);
    expect(promValue(m, 'murmur_gc_sweeps_total', { outcome: 'errors' })).toBe(1);
    await waitFor('no murmur-gc alert', async () => ((await alerts()).length === 0 ? true : undefined), 20_000);
    const q = await api<{ result: { value: [number, string] }[] }>(
      `/api/v1/query?query=${encodeURIComponent('murmur_gc_sweeps_total{outcome="ok"}')}`,
    );
    expect(q.result.map((x) => x.value[1])).toEqual(['1']);
  });

  it('every panel query of the Grafana dashboard returns data from these series, without error or warning', async () => {
    const dash = JSON.parse(fs.readFileSync(DASHBOARD, 'utf8')) as {
      uid: string;
      panels: Panel[];
      templating: { list: { name: string; type: string; query: string | { query: string } }[] };
    };
    expect(dash.uid).toBe('murmur-gc');
    // the host variable: label_values(METRIC, instance) is Grafana's; its metric must carry instance here
    const vars = dash.templating.list;
    expect(vars.map((v) => v.name)).toEqual(['datasource', 'instance']);
    const hostQuery = vars[1]!.query as { query: string };
    const [, metric, label] = /^label_values\((\w+), (\w+)\)$/.exec(hostQuery.query) ?? [];
    expect(await api<string[]>(`/api/v1/label/${label}/values?match[]=${metric}`)).toEqual([
      `127.0.0.1:${nodeExporter!.port}`,
    ]);
    // Grafana's substitutions: every host selected; $__range the dashboard's range; $__rate_interval
    const end = Math.ceil(Date.now() / 1000);
    const fill = (expr: string) =>
      expr
        .replaceAll('$instance', '.*')
        .replaceAll('$__rate_interval', '1m')
        .replaceAll('$__range', `${end - startedS + 60}s`);
    const panels = dash.panels.flatMap((p) => [p, ...(p.panels ?? [])]).filter((p) => p.type !== 'row');
    expect(panels.length).toBeGreaterThanOrEqual(10);
    const read = new Set<string>();
    for (const p of panels) {
      expect(p.datasource?.uid, p.title).toBe('${datasource}');
      expect(p.targets?.length, p.title).toBeGreaterThan(0);
      for (const t of p.targets!) {
        expect(t.datasource?.uid ?? '${datasource}', p.title).toBe('${datasource}');
        const q = fill(t.expr);
        expect(q, `${p.title}: a variable left that the test does not fill`).not.toContain('$');
        for (const name of q.match(/\bmurmur_gc_[a-z_]+/g) ?? []) read.add(name);
        // a range query over the sweeps of this test, as a Grafana panel asks; a series appears once scraped twice
        const data = await waitFor(
          `${p.title}: ${q}`,
          async () => {
            const d = await api<{ resultType: string; result: unknown[] }>(
              `/api/v1/query_range?query=${encodeURIComponent(q)}&start=${startedS}&end=${Math.ceil(Date.now() / 1000)}&step=1`,
              true,
            );
            return d.result.length > 0 ? d : undefined;
          },
          10_000,
        );
        expect(data.resultType, q).toBe('matrix');
      }
    }
    // the per-root, per-store and next-expiry series are on the dashboard
    for (const name of [
      'murmur_gc_root_bytes',
      'murmur_gc_record_store_bytes',
      'murmur_gc_next_purge_timestamp_seconds',
      'murmur_gc_next_purge_bytes',
      'murmur_gc_next_max_age_timestamp_seconds',
    ])
      expect(read, name).toContain(name);
  });
});
