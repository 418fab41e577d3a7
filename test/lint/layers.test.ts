// The layering rule (.dependency-cruiser.cjs, docs/design.md §10) is what keeps src/ in one
// order: it passes on the tree as it is, and fails — naming the rule — on an import that goes up
// a layer, on an import between sibling folders, and on a file circle. Run on a copy of src/.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO, rmrf, tempDir } from '../helpers/fixtures.js';

const T = 120_000;
let dir: string;

beforeAll(() => {
  dir = tempDir('layers');
  fs.cpSync(path.join(REPO, 'src'), path.join(dir, 'src'), { recursive: true });
  for (const f of ['.dependency-cruiser.cjs', 'package.json']) fs.copyFileSync(path.join(REPO, f), path.join(dir, f));
  const ts = JSON.parse(fs.readFileSync(path.join(REPO, 'tsconfig.json'), 'utf8')) as { include: string[] };
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ ...ts, include: ['src'] }));
  fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(dir, 'node_modules'));
});
afterAll(() => rmrf(dir));

interface Violation {
  rule: string;
  from: string;
  to: string;
}

/** Runs the rule over the copy as `npm run lint` does; returns its exit status and the violations it names. */
function cruise(): { status: number | null; violations: Violation[]; cycles: string[][]; output: string } {
  const bin = path.join(REPO, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');
  const r = spawnSync(process.execPath, [bin, 'src', '--config', '.dependency-cruiser.cjs', '--output-type', 'err'], {
    cwd: dir,
    encoding: 'utf8',
    timeout: T,
  });
  const violations = [...r.stdout.matchAll(/^\s*error (\S+): (\S+) → (\S*)/gmu)].map((m) => ({
    rule: m[1]!,
    from: m[2]!,
    to: m[3]!,
  }));
  // a no-circular violation names its circle on the lines after it: `a → `, `b →`, …, `a`
  const cycles = [...r.stdout.matchAll(/^\s*error no-circular: (\S+) → \n((?:\s+\S+(?: →)?\n)+)/gmu)].map((m) => [
    m[1]!,
    ...m[2]!
      .split('\n')
      .map((l) => l.trim().replace(/ →$/u, ''))
      .filter((l) => l),
  ]);
  return { status: r.status, violations, cycles, output: r.stdout + r.stderr };
}

/** Adds `line` at the top of a module of the copy; returns a function that takes it out again. */
function inject(file: string, line: string): () => void {
  const p = path.join(dir, 'src', file);
  const before = fs.readFileSync(p, 'utf8');
  fs.writeFileSync(p, `${line}\n${before}`);
  return () => fs.writeFileSync(p, before);
}

describe('the layering rule', () => {
  it(
    'passes on src/ as it is',
    () => {
      const r = cruise();
      expect(r.violations, r.output).toEqual([]);
      expect(r.status, r.output).toBe(0);
    },
    T,
  );

  it(
    'fails on an upward import, an import between siblings, a file circle and a root module importing a folder',
    () => {
      const undo = [
        inject('fsx/statfs.ts', "import '../cli/main.js';"),
        inject('daemon/sd-notify.ts', "import type { SweepHistory } from '../commands/history.js';"),
        inject('config/retain.ts', "import type { GcConfig } from './load.js';"),
        inject('errors.ts', "import './fsx/statfs.js';"),
      ];
      try {
        const r = cruise();
        expect(r.status, r.output).not.toBe(0);
        expect(r.violations).toContainEqual({ rule: 'layer-fsx', from: 'src/fsx/statfs.ts', to: 'src/cli/main.ts' });
        expect(r.violations).toContainEqual({
          rule: 'layer-daemon',
          from: 'src/daemon/sd-notify.ts',
          to: 'src/commands/history.ts',
        });
        // the circle retain.ts ↔ load.ts, whichever of the two the cruiser starts it from (the
        // injection into fsx/statfs.ts makes other circles through config/ too)
        const circle = (a: string, b: string) => [`src/config/${a}`, `src/config/${b}`, `src/config/${a}`];
        expect(r.cycles, r.output).toContainEqual(
          expect.toSatisfy((c: string[]) =>
            [circle('retain.ts', 'load.ts'), circle('load.ts', 'retain.ts')].some(
              (x) => JSON.stringify(x) === JSON.stringify(c),
            ),
          ),
        );
        expect(r.violations).toContainEqual({
          rule: 'root-imports-no-folder',
          from: 'src/errors.ts',
          to: 'src/fsx/statfs.ts',
        });
      } finally {
        for (const u of undo.reverse()) u();
      }
    },
    T,
  );
});
