// Parity: `conversation rm` of a context directory that holds no conversation.jsonl removes it,
// as `mur conversation rm` does.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as f from '../helpers/fixtures.js';
import { makeEnv, type Env } from './helpers.js';

let E: Env;
beforeEach(() => {
  E = makeEnv('parity-rm');
});
afterEach(() => f.rmrf(E.T));

describe('parity: conversation rm', () => {
  it('removes a context directory without a record file (0 messages), and ls still does not list it', () => {
    const dir = path.join(E.home, 'conversations', 'shey', 'ctx_empty');
    fs.mkdirSync(path.join(dir, 'leftover'), { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(dir, 'leftover', 'x'), 'x');
    const ls = f.json<unknown[]>(f.runCli(['conversation', 'ls', '--json'], E.T));
    expect(ls).toEqual([]);
    const r = f.runCli(['conversation', 'rm', 'ctx_empty'], E.T);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe(`removed ${dir} (0 messages)\n`);
    expect(fs.existsSync(dir)).toBe(false);
  });

  it('an unknown context is still E-CNV-001', () => {
    const r = f.runCli(['conversation', 'rm', 'ctx_none'], E.T);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('E-CNV-001');
  });
});
