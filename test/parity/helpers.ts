// Shared scaffolding for the parity suite: a fixture HOME in a temp dir and the built
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

/**
 * `line` with `edits` random edits (insert, delete 1–3 characters, or overwrite) of pieces drawn
 * from `alphabet`; `rnd(n)` gives an integer in [0, n). For the differential scanner tests.
 */
export function mutate(line: string, edits: number, rnd: (n: number) => number, alphabet: readonly string[]): string {
  let s = line;
  for (let e = 0; e < edits; e++) {
    const at = rnd(s.length + 1);
    const op = rnd(3);
    const piece = alphabet[rnd(alphabet.length)] as string;
    if (op === 0) s = s.slice(0, at) + piece + s.slice(at);
    else if (op === 1) s = s.slice(0, at) + s.slice(at + 1 + rnd(3));
    else s = s.slice(0, at) + piece + s.slice(at + piece.length);
  }
  return s;
}
