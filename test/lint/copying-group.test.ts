// No module groups by copying (eslint.config.js): `m.set(k, [...(m.get(k) ?? []), v])` copies the
// whole group to append one item, quadratic in its size — grouping the sessions of one root of
// 30 000 sessions that way cost a sweep 9 s of CPU. The rule refuses it (with `??` or `||`) in an
// ordinary module, in a pure one (whose own no-restricted-syntax options replace the general
// ones) and in src/schema/, and lets groupBy and a push onto the group through.
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { REPO } from '../helpers/fixtures.js';

const eslint = new ESLint({ cwd: REPO });

async function copyingErrors(file: string, code: string): Promise<number> {
  const [r] = await eslint.lintText(code, { filePath: `${REPO}/${file}` });
  expect(r!.messages.filter((m) => m.fatal)).toEqual([]);
  return r!.messages.filter((m) => m.ruleId === 'no-restricted-syntax' && /copies the group/u.test(m.message)).length;
}

const FILES = ['src/sweep/steps/scan-sessions.ts', 'src/plan/fates.ts', 'src/schema/contract.ts'];

describe('grouping never copies a group to append to it', () => {
  for (const file of FILES) {
    it(`refuses the copying form in ${file}`, { timeout: 60_000 }, async () => {
      const code = (op: string) =>
        `export function g(xs: { k: string }[]): Map<string, { k: string }[]> {\n  const m = new Map<string, { k: string }[]>();\n  for (const x of xs) m.set(x.k, [...(m.get(x.k) ${op} []), x]);\n  return m;\n}\n`;
      expect(await copyingErrors(file, code('??'))).toBe(1);
      expect(await copyingErrors(file, code('||'))).toBe(1);
    });
  }

  it('lets a push onto the group through', { timeout: 60_000 }, async () => {
    const code = `export function g(xs: { k: string }[]): Map<string, { k: string }[]> {\n  const m = new Map<string, { k: string }[]>();\n  for (const x of xs) {\n    const l = m.get(x.k);\n    if (l) l.push(x);\n    else m.set(x.k, [x]);\n  }\n  return m;\n}\n`;
    expect(await copyingErrors('src/sweep/steps/scan-sessions.ts', code)).toBe(0);
  });
});
