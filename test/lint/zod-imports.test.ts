// No shipped module loads zod (eslint.config.js, docs/benchmarks.md "Start-up"): outside
// src/schema/, the schemas and zod itself may be taken with `import type` only. The rule fails on
// every other form — a value import, `import { type X }` (which still loads the module under
// verbatimModuleSyntax), a value re-export, a dynamic import — in an ordinary module and in a pure
// one (whose own no-restricted-syntax options replace the general ones), and lets src/schema/ and
// a type-only import through. Each form is linted as the text of an existing file, as the project
// service needs.
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { REPO } from '../helpers/fixtures.js';

const eslint = new ESLint({ cwd: REPO });

/** The messages of the zod rule for `code` linted as `file`. */
async function zodErrors(file: string, code: string): Promise<string[]> {
  const [r] = await eslint.lintText(code, { filePath: `${REPO}/${file}` });
  expect(r!.messages.filter((m) => m.fatal)).toEqual([]);
  return r!.messages
    .filter((m) => m.ruleId === 'no-restricted-syntax' && /load zod/u.test(m.message))
    .map((m) => m.message);
}

const REFUSED: [string, string][] = [
  ['a value import of zod', "import { z } from 'zod';\nexport const a = z;\n"],
  [
    'import { type X } of the schemas',
    "import { type SweepReport } from '../schema/json-schemas.js';\nexport type A = SweepReport;\n",
  ],
  ['a value re-export of the schemas', "export { SCHEMAS } from '../schema/json-schemas.js';\n"],
  [
    'a dynamic import of the schemas',
    "export async function f() {\n  return import('../schema/json-schemas.js');\n}\n",
  ],
];

describe('zod stays out of shipped code', () => {
  for (const file of ['src/cli/sweep.ts', 'src/plan/fates.ts'])
    for (const [what, code] of REFUSED)
      it(`refuses ${what} in ${file}`, { timeout: 60_000 }, async () => {
        expect(await zodErrors(file, code)).toHaveLength(1);
      });

  it('allows a type-only import outside src/schema/, and anything inside it', { timeout: 60_000 }, async () => {
    expect(
      await zodErrors(
        'src/cli/sweep.ts',
        "import type { SweepReport } from '../schema/json-schemas.js';\nexport type A = SweepReport;\n",
      ),
    ).toEqual([]);
    expect(await zodErrors('src/schema/contract.ts', "import { z } from 'zod';\nexport const a = z;\n")).toEqual([]);
  });
});
