// Parity: header integers are exact u64s. `created_ms` and `truncated.dropped` above 2^53 are
// written back digit for digit, and created_ms = u64::MAX does not make a record impossible to
// truncate.
import * as fs from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as f from '../helpers/fixtures.js';
import { makeEnv, type Env } from './helpers.js';

let E: Env;
beforeEach(() => {
  E = makeEnv('parity-header');
});
afterEach(() => f.rmrf(E.T));

function recordWithHeader(context: string, headerLine: string, messages: number): string {
  const { file } = f.writeRecord(E.home, 'shey', context, { messages });
  fs.writeFileSync(file, headerLine + '\n' + fs.readFileSync(file, 'utf8'));
  return file;
}

describe('parity: exact header integers', () => {
  it.each([
    ['2^53 + 1', '9007199254740993', '9007199254740995'],
    ['u64::MAX created_ms', '18446744073709551615', '12345678901234567890'],
    ['ordinary', '1756400000000', '3'],
  ])('a sweep truncation keeps created_ms and accumulates dropped digit for digit (%s)', (_n, created, dropped) => {
    const file = recordWithHeader(
      'ctx_1',
      `{"type":"murmur.record","capsule":"shey","created_ms":${created},"truncated":{"dropped":${dropped},"oldest_surviving_id":"","last_dropped_id":"","at_ms":1}}`,
      5,
    );
    const r = E.sweep(E.config(`records:\n  - capsule: shey\n    retain: { max_messages: 2 }\n`));
    expect(r.status, r.stderr).toBe(0);
    expect(r.report.errors).toEqual([]);
    const head = fs.readFileSync(file, 'utf8').split('\n')[0]!;
    expect(head).toContain(`"created_ms":${created},`);
    expect(head).toContain(`"dropped":${(BigInt(dropped) + 3n).toString()},`);
  });

  it('conversation ls --json prints the exact integers', () => {
    recordWithHeader(
      'ctx_1',
      '{"type":"murmur.record","capsule":"shey","created_ms":1,"truncated":{"dropped":9007199254740993,"oldest_surviving_id":"","last_dropped_id":"","at_ms":18446744073709551615}}',
      1,
    );
    const out = f.runCli(['conversation', 'ls', '--json'], E.T).stdout;
    expect(out).toContain('"dropped":9007199254740993,');
    expect(out).toContain('"at_ms":18446744073709551615}');
  });
});
