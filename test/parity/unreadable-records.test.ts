// Parity: a conversation record holding invalid UTF-8 anywhere cannot be read by the runtime
// (0 messages, no owner, truncation fails): a sweep never prunes or truncates it and reports it
// with `record_unreadable`; `conversation ls` shows it as the runtime does; `rm` still works.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as f from '../helpers/fixtures.js';
import { makeEnv, type Env } from './helpers.js';

let E: Env;
const now = Date.now();
beforeEach(() => {
  E = makeEnv('parity-utf8');
});
afterEach(() => f.rmrf(E.T));

/** An owned record whose message number `at` carries a byte that is not UTF-8. */
function badRecord(context: string, o: { messages: number; mtimeMs?: number; at: number }): string {
  const { file } = f.writeRecord(E.home, 'shey', context, {
    capsule: 'shey',
    messages: o.messages,
    ...(o.mtimeMs !== undefined ? { mtimeMs: o.mtimeMs } : {}),
  });
  const lines = fs.readFileSync(file).toString('latin1').split('\n');
  lines[o.at] = (lines[o.at] ?? '').replace('message', 'mess\u00ffge'); // latin1 0xFF: never valid UTF-8
  fs.writeFileSync(file, Buffer.from(lines.join('\n'), 'latin1'));
  if (o.mtimeMs !== undefined) fs.utimesSync(file, o.mtimeMs / 1000, o.mtimeMs / 1000);
  return file;
}

describe('parity: records that are not valid UTF-8', () => {
  it('are never pruned on age, whichever line holds the bad byte', () => {
    const first = badRecord('ctx_bad_first', { messages: 3, mtimeMs: now - 100 * f.DAY, at: 1 });
    const last = badRecord('ctx_bad_last', { messages: 3, mtimeMs: now - 100 * f.DAY, at: 3 });
    const good = f.writeRecord(E.home, 'shey', 'ctx_good', {
      capsule: 'shey',
      messages: 3,
      mtimeMs: now - 100 * f.DAY,
    });
    const r = E.sweep(E.config(`records:\n  - capsule: shey\n    retain: { max_age: 90d }\n`));
    expect(r.status, r.stderr).toBe(0);
    expect(fs.existsSync(first)).toBe(true);
    expect(fs.existsSync(last)).toBe(true);
    expect(fs.existsSync(good.file)).toBe(false);
    const codes = r.report.skipped
      .filter((k) => k.code === 'record_unreadable')
      .map((k) => path.basename(path.dirname(k.target)));
    expect(codes.sort()).toEqual(['ctx_bad_first', 'ctx_bad_last']); // once each
  });

  it('are never truncated', () => {
    const file = badRecord('ctx_bad', { messages: 10, at: 10 });
    const before = fs.readFileSync(file);
    const r = E.sweep(E.config(`records:\n  - capsule: shey\n    retain: { max_messages: 3 }\n`));
    expect(r.status, r.stderr).toBe(0);
    expect(fs.readFileSync(file)).toEqual(before);
    expect(r.report.actions.filter((a) => a['kind'] === 'truncate_record')).toEqual([]);
  });

  it('conversation truncate refuses one; ls shows it as the runtime does (0 messages, no owner); rm removes it', () => {
    const file = badRecord('ctx_bad', { messages: 4, at: 2 });
    const before = fs.readFileSync(file);
    const t = f.runCli(['conversation', 'truncate', 'ctx_bad', '--keep', '1'], E.T);
    expect(t.status).not.toBe(0);
    expect(fs.readFileSync(file)).toEqual(before);
    const ls = f.json<Record<string, unknown>[]>(f.runCli(['conversation', 'ls', '--json'], E.T));
    expect(ls).toHaveLength(1);
    expect(ls[0]).toMatchObject({
      context_id: 'ctx_bad',
      messages: 0,
      capsule: null,
      truncated: null,
      bytes: before.length,
    });
    const rm = f.runCli(['conversation', 'rm', 'ctx_bad'], E.T);
    expect(rm.status, rm.stderr).toBe(0);
    expect(rm.stdout).toContain('(0 messages)');
    expect(fs.existsSync(path.dirname(file))).toBe(false);
  });
});
