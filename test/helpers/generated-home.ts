// Pieces the property tests over generated homes share (test/sweep/fates-property.test.ts,
// test/sweep/forecast.test.ts): what the disk holds under a path, the retain and max_bytes lines
// of a generated configuration, and an action in the form two runs are compared in.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import fc from 'fast-check';
import type { SweepReport } from '../../src/sweep/report.js';

/** Allocated bytes under `p`, as `du -s -B1` says (0 when it does not exist). */
export const du = (p: string): number =>
  fs.existsSync(p) ? Number(execFileSync('du', ['-s', '-B1', p], { encoding: 'utf8' }).split('\t')[0]) : 0;

/** A generated retain policy: each key absent when null. */
export interface Retain {
  maxAgeDays: number | null;
  maxCount: number | null;
}

/** A generated retain policy or none (never one with neither key): `max_age` 3, 20 or 45 days, a count up to `maxCount`. */
export function retainPolicyArb(maxCount: number): fc.Arbitrary<Retain | null> {
  return fc
    .option(
      fc.record({
        maxAgeDays: fc.option(fc.constantFrom(3, 20, 45), { nil: null }),
        maxCount: fc.option(fc.integer({ min: 1, max: maxCount }), { nil: null }),
      }),
      { nil: null },
    )
    .map((r) => (r && r.maxAgeDays === null && r.maxCount === null ? null : r));
}

/** The `retain:` line of an entry (`count` names the count key: max_sessions or max_messages), or nothing. */
export function retainYaml(r: Retain | null, count: string): string {
  if (!r) return '';
  const keys = [
    ...(r.maxAgeDays !== null ? [`max_age: ${r.maxAgeDays}d`] : []),
    ...(r.maxCount !== null ? [`${count}: ${r.maxCount}`] : []),
  ];
  return `    retain: { ${keys.join(', ')} }\n`;
}

/** The `max_bytes:` line of an entry: `frac` of what `p` holds now (at least 1), or nothing. */
export function budgetYaml(frac: number | null, p: string): string {
  return frac === null ? '' : `    max_bytes: ${Math.max(1, Math.floor(du(p) * frac))}\n`;
}

/** An action as two runs must report it alike: a hold's path names the undo window, not its entry there. */
export function comparable(a: SweepReport['actions'][number]): string {
  const x = { ...a } as Record<string, unknown>;
  const held = x['held'] as { until_ms: number; path: string } | undefined;
  if (held)
    x['held'] = { until_ms: held.until_ms, path: held.path.replace(/\/gc\/quarantine(\/.*)?$/, '/gc/quarantine') };
  return JSON.stringify(x);
}
