// Shared scaffolding for the parity suite (issue 8): a fixture HOME in a temp dir and the built
// CLI's JSON report. Each parity test states the runtime's behaviour for one category of input.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as f from '../helpers/fixtures.js';

export interface Report {
  actions: Record<string, unknown>[];
  skipped: { target: string; code: string; detail: string }[];
  errors: { target: string; code: string; detail: string }[];
}

export interface Env {
  T: string;
  home: string;
  root: string;
  config(yaml: string): string;
  sweep(cfg: string, extra?: string[]): { status: number | null; report: Report; stderr: string };
}

export function makeEnv(label: string): Env {
  const T = f.tempDir(label);
  const home = path.join(T, '.murmur');
  const root = path.join(T, 'app', '.murmur');
  fs.mkdirSync(home, { mode: 0o700 });
  return {
    T,
    home,
    root,
    config: (yaml) => f.writeConfig(T, yaml),
    sweep: (cfg, extra = []) => {
      const r = f.runCli(['--json', '--config', cfg, ...extra], T);
      let report: Report = { actions: [], skipped: [], errors: [] };
      try {
        report = JSON.parse(r.stdout) as Report;
      } catch {
        // leave the empty report: the status and stderr tell what happened
      }
      return { status: r.status, report, stderr: r.stderr };
    },
  };
}
