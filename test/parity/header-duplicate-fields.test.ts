// Parity: the runtime reads a record's header into a typed serde struct, which refuses a first line
// repeating one of the header's own fields (`"capsule":"a","capsule":"cap"`: "duplicate field").
// Such a record has no header: no owner (`ls` shows no capsule), never taken by age pruning nor
// truncated by a sweep, and `conversation truncate` writes a fresh header with the store's name,
// as for a header-less record. docs/design.md §R5 states the rule.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as f from '../helpers/fixtures.js';
import { makeEnv, type Env } from './helpers.js';

let E: Env;
beforeEach(() => {
  E = makeEnv('parity-header-dup');
});
afterEach(() => f.rmrf(E.T));

const DUPLICATED = '{"type":"murmur.record","capsule":"a","capsule":"shey","created_ms":5}';
const OLD = Date.now() - 100 * f.DAY;

function recordWithFirstLine(
  context: string,
  first: string,
  messages: number,
  mtimeMs?: number,
): { file: string; ids: string[] } {
  const r = f.writeRecord(E.home, 'shey', context, { messages });
  fs.writeFileSync(r.file, first + '\n' + fs.readFileSync(r.file, 'utf8'));
  if (mtimeMs !== undefined) fs.utimesSync(r.file, mtimeMs / 1000, mtimeMs / 1000);
  return r;
}

describe('parity: a header repeating one of its fields is no header', () => {
  it('age pruning never takes it (the same record with a well-formed header goes)', () => {
    const dup = recordWithFirstLine('ctx_dup', DUPLICATED, 2, OLD);
    const owned = recordWithFirstLine('ctx_owned', '{"type":"murmur.record","capsule":"shey","created_ms":5}', 2, OLD);
    const r = E.sweep(E.config(`records:\n  - capsule: shey\n    retain: { max_age: 30d }\n`));
    expect(r.status, r.stderr).toBe(0);
    expect(fs.existsSync(dup.file)).toBe(true);
    expect(fs.existsSync(path.dirname(owned.file))).toBe(false);
    expect(r.report.actions.map((a) => a['target'])).toEqual(['ctx_owned']);
  });

  it('a sweep never truncates it', () => {
    const dup = recordWithFirstLine('ctx_dup', DUPLICATED, 6);
    const before = fs.readFileSync(dup.file);
    const r = E.sweep(E.config(`records:\n  - capsule: shey\n    retain: { max_messages: 2 }\n`));
    expect(r.status, r.stderr).toBe(0);
    expect(r.report.actions).toEqual([]);
    expect(fs.readFileSync(dup.file).equals(before)).toBe(true);
  });

  it('conversation ls shows no owner, and truncate writes a fresh header with the store name', () => {
    const dup = recordWithFirstLine('ctx_dup', DUPLICATED, 4);
    const ls = JSON.parse(f.runCli(['conversation', 'ls', '--json'], E.T).stdout) as {
      context_id: string;
      capsule: unknown;
      messages: number;
    }[];
    expect(ls).toEqual([expect.objectContaining({ context_id: 'ctx_dup', capsule: null, messages: 4 })]);
    const t0 = Date.now();
    const t = f.runCli(['conversation', 'truncate', 'ctx_dup', '--keep', '1'], E.T);
    expect(t.status, t.stderr).toBe(0);
    const lines = fs.readFileSync(dup.file, 'utf8').split('\n');
    const h = JSON.parse(lines[0]!) as {
      capsule: string;
      created_ms: number;
      truncated: { dropped: number; oldest_surviving_id: string };
    };
    expect(h.capsule).toBe('shey');
    expect(h.created_ms).toBeGreaterThanOrEqual(t0);
    expect(h.truncated).toMatchObject({ dropped: 3, oldest_surviving_id: dup.ids[3] });
    expect(lines.filter((l) => l !== '')).toHaveLength(2);
  });
});
