// nestingBeyond: the raw-text nesting bound the loader checks before parsing.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_NESTING, nestingBeyond } from '../../src/config/nesting.js';
import * as f from '../helpers/fixtures.js';

describe('nestingBeyond', () => {
  it("accepts the example configuration and the docs' snippets", () => {
    expect(nestingBeyond(fs.readFileSync(path.join(f.REPO, 'config.example.yaml'), 'utf8'))).toBeUndefined();
  });

  it.each([
    ['flow sequences', (d: number) => '['.repeat(d) + ']'.repeat(d)],
    ['flow maps', (d: number) => '{a: '.repeat(d) + '1' + '}'.repeat(d)],
    ['compact block sequences', (d: number) => '- '.repeat(d) + 'x'],
    [
      'indented block maps',
      (d: number) => Array.from({ length: d }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n') + ' x',
    ],
  ])('%s: just under the limit passes, past it is refused', (_k, make) => {
    // An upper bound: a top-level flow collection or block line may count one level more.
    expect(nestingBeyond(make(MAX_NESTING - 1))).toBeUndefined();
    expect(nestingBeyond(make(MAX_NESTING + 1))?.line).toBeGreaterThanOrEqual(1);
  });

  it('brackets in quoted scalars and comments do not count, and closed levels are released', () => {
    const deep = '['.repeat(MAX_NESTING + 1);
    expect(nestingBeyond(`a: "${deep}"\nb: '${deep}'\nc: 1 # ${deep}\n`)).toBeUndefined();
    expect(nestingBeyond(`a: 'it''s ${deep}'\n`)).toBeUndefined();
    const wide = Array.from({ length: 1000 }, (_, i) => `k${i}:\n  - [1, {a: 2}]`).join('\n');
    expect(nestingBeyond(wide)).toBeUndefined();
  });

  it('names where the limit is passed', () => {
    expect(nestingBeyond(`a: 1\nb: ${'['.repeat(MAX_NESTING + 1)}`)).toEqual({ line: 2, column: 3 + MAX_NESTING });
  });
});
