// The shipped Prometheus alert rules (contrib/prometheus/murmur-gc.rules.yml): promtool accepts
// them and their unit tests pass (murmur-gc.rules.test.yml beside this file: every alert firing
// and not firing); every alert carries summary, description and a runbook entry that exists in
// docs/metrics.md; every murmur-gc series an alert reads is one murmur-gc writes; docs/metrics.md
// lists every series and every alert.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { fleetView, renderMetrics } from '../../src/sweep/fleet.js';
import * as f from '../helpers/fixtures.js';
import { parseProm } from '../helpers/prom.js';
import { requirement } from '../helpers/requirements.js';

const RULES = path.join(f.REPO, 'contrib', 'prometheus', 'murmur-gc.rules.yml');
const RULE_TESTS = path.join(f.REPO, 'test', 'prometheus', 'murmur-gc.rules.test.yml');
const DOC = fs.readFileSync(path.join(f.REPO, 'docs', 'metrics.md'), 'utf8');

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface RuleTest {
  name: string;
  alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[];
}

const rules = (parse(fs.readFileSync(RULES, 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules);
const ruleTests = (parse(fs.readFileSync(RULE_TESTS, 'utf8')) as { tests: RuleTest[] }).tests;

/** Every family murmur-gc can write: a view with every part present. */
function allFamilies(): string[] {
  const view = fleetView(
    '0.0.0',
    {
      trigger: 'schedule',
      started_ms: 1,
      ended_ms: 2,
      duration_ms: 1,
      outcome: 'errors',
      counts: {},
      bytes_freed: 1,
      skipped: 1,
      skipped_by_code: { live_session: 1 },
      errors: 1,
      errors_by_code: { io_error: 1 },
      audit: null,
      actions_by_store: { remove_session: { '/r': 1 } },
      messages_dropped: 0,
    },
    1,
    {
      sessions: { roots: [], sessions: 1, bytes: 1 },
      records: { stores: 1, records: 1, bytes: 1, unreadable: 0, by_store: [{ record: 's', records: 1, bytes: 1 }] },
      audit: { sessions: 1, bytes: 1, unreadable: 0 },
      quarantine: { items: 1, bytes: 1, unreadable: 0 },
    },
    { totals: { sweeps: { ok: 1, errors: 0, busy: 0, failed: 0, aborted: 0 }, bytes_freed: 1 }, intervalSecs: 1800 },
  );
  return [...parseProm(renderMetrics(view)).keys()];
}

describe('the shipped alert rules, read as data', () => {
  it('every alert has a severity, summary, description and a runbook_url naming its entry in docs/metrics.md', () => {
    expect(rules.length).toBeGreaterThanOrEqual(8);
    for (const r of rules) {
      expect(r.alert, JSON.stringify(r)).toMatch(/^MurmurGc[A-Za-z]+$/);
      expect(r.labels?.['severity'], r.alert).toBe('warning');
      expect(r.annotations?.['summary'], r.alert).toMatch(/\{\{ \$labels\.instance \}\}/);
      expect(r.annotations?.['description'], r.alert).toBeTruthy();
      const anchor = r.alert.toLowerCase();
      expect(r.annotations?.['runbook_url'], r.alert).toBe(
        `https://github.com/murmur-gc/murmur-gc/blob/main/docs/metrics.md#${anchor}`,
      );
      // GitHub's anchor of a "### MurmurGcX" heading is its lower-cased text
      expect(DOC, `docs/metrics.md has a "### ${r.alert}" runbook entry`).toMatch(new RegExp(`^### ${r.alert}$`, 'm'));
    }
  });

  it("reads only series murmur-gc writes (plus node_exporter's up), and keys on codes, never on message text", () => {
    const written = new Set(allFamilies());
    for (const r of rules) {
      for (const name of r.expr.match(/\bmurmur_gc_[a-z_]+/g) ?? [])
        expect(written.has(name), `${r.alert} reads ${name}`).toBe(true);
      expect(r.expr, r.alert).not.toMatch(/message|detail|msg/);
    }
  });

  it('docs/metrics.md lists every series murmur-gc writes and every alert', () => {
    for (const name of allFamilies()) expect(DOC, name).toContain(`\`${name}\``);
    for (const r of rules) expect(DOC, r.alert).toContain(`\`${r.alert}\``);
  });

  it('every alert is unit-tested both firing and not firing', () => {
    for (const r of rules) {
      const cases = ruleTests.flatMap((t) => t.alert_rule_test ?? []).filter((c) => c.alertname === r.alert);
      expect(
        cases.some((c) => c.exp_alerts.length > 0),
        `${r.alert} firing`,
      ).toBe(true);
      expect(
        cases.some((c) => c.exp_alerts.length === 0),
        `${r.alert} not firing`,
      ).toBe(true);
    }
  });
});

const req = requirement('Prometheus alert rules (promtool check/test rules)', ['cmd:promtool']);

describe.runIf(req.run)('the shipped alert rules, run by promtool', () => {
  beforeAll(() => req.check());

  it('promtool check rules accepts them', () => {
    const r = spawnSync('promtool', ['check', 'rules', RULES], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain(`SUCCESS: ${rules.length} rules found`);
  });

  it('promtool test rules: every unit test passes', () => {
    const r = spawnSync('promtool', ['test', 'rules', path.basename(RULE_TESTS)], {
      cwd: path.dirname(RULE_TESTS),
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('SUCCESS');
  });
});
