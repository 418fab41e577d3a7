// Bad command-line input, through the built CLI (dist/cli/bin.js): an argument echoed in an error
// is bounded and escaped (one line, at most a few hundred characters), options that do not apply
// to a target are refused naming the option, a command group alone prints its help and exits 2,
// `--keep` has the runtime's rule (anything but a whole number from 0 up: usage error, exit 2;
// 0: the runtime's E-CNV-003, exit 1), and a configuration nested too deep is a config_invalid error
// naming the file, not a stack overflow.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as f from '../helpers/fixtures.js';

let home: string;

beforeAll(() => {
  home = f.tempDir('cli-input');
});

afterAll(() => f.rmrf(home));

const run = (args: string[]) => f.runCli(args, home);

/** Every stderr line is short, and no raw control character survived. */
function expectBounded(text: string, max = 400): void {
  for (const line of text.split('\n')) expect(line.length, line.slice(0, 120)).toBeLessThanOrEqual(max);
}

describe('arguments echoed in errors', () => {
  const huge = 'ctx_' + 'a'.repeat(100_000);

  it.each([
    ['conversation truncate', ['conversation', 'truncate', huge, '--keep', '1']],
    ['conversation rm', ['conversation', 'rm', huge]],
    ['restore', ['restore', huge]],
    ['an unknown command', [huge]],
    ['an invalid option value', ['conversation', 'truncate', 'ctx_x', '--keep', `1${'x'.repeat(100_000)}`]],
  ])('a 100 KB argument is echoed elided (%s)', (_name, args) => {
    const r = run(args);
    expect(r.status).not.toBe(0);
    expect(r.stderr.length).toBeLessThan(2_000);
    expectBounded(r.stderr);
    expect(r.stderr).toMatch(/…\(1000\d\d characters\)…/);
  });

  it('a newline in a target is printed escaped, on the error line', () => {
    const r = run(['conversation', 'rm', 'ctx_a\nFAKE: all clear']);
    expect(r.status).toBe(1);
    expect(r.stderr).not.toMatch(/^FAKE/m);
    expect(r.stderr).toContain('"ctx_a\\nFAKE: all clear"');
  });

  it('conversation ls --message echoes an unknown id escaped and bounded', () => {
    const r = run(['conversation', 'ls', '--message', 'msg_a\nFAKE: present']);
    expect(r.stdout).not.toMatch(/^FAKE/m);
    expect(r.stdout).toContain('"msg_a\\nFAKE: present"');
    const long = run(['conversation', 'ls', '--message', huge]);
    expectBounded(long.stdout);
  });

  it('with --json the error document is bounded too', () => {
    const r = run(['conversation', 'rm', huge, '--json']);
    expect(r.status).toBe(1);
    expect(r.stdout.length).toBeLessThan(2_000);
    expect(f.json<{ error: { message: string } }>(r).error.message).toMatch(/…\(1000\d\d characters\)…/);
  });
});

describe('options that do not apply', () => {
  it('restore of a context refuses --root as a usage error naming the option', () => {
    const r = run(['restore', 'ctx_x', '--root', '/tmp']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--root');
    expect(r.stderr).toMatch(/session/);
  });

  it('restore of a name that starts with ses_ but is no session id says it is taken for a context id, so --root does not apply', () => {
    const r = run(['restore', 'ses_nonexistent', '--root', '/tmp']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(
      "error: 'ses_nonexistent' is not a session id (ses_ followed by at least 12 hex digits), so it is taken for a context id; --root applies to a session (ses_ id) only",
    );
  });

  it('restore of a session refuses --record as a usage error naming the option', () => {
    const r = run(['restore', 'ses_01a17aa1857f75374b12c83742c49d4b', '--record', 'main']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--record');
  });
});

describe('a command group alone', () => {
  it.each(['quarantine', 'conversation', 'config'])('`murmur-gc %s` prints its help on stderr and exits 2', (group) => {
    const r = run([group]);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`Usage: murmur-gc ${group}`);
  });

  it('`murmur-gc help quarantine` still exits 0', () => {
    expect(run(['help', 'quarantine']).status).toBe(0);
  });
});

describe('--keep', () => {
  it.each([
    ['0x10', 2],
    ['1.5', 2],
    ['', 2],
    ['99999999999', 2],
    ['0', 1],
    // mur's --keep is a u32: a negative number is its argument parser's usage error, not E-CNV-003
    ['-1', 2],
    ['-0', 2],
  ])('--keep %j exits %i', (keep, code) => {
    const r = run(['conversation', 'truncate', 'ctx_x', '--keep', keep]);
    expect(r.status).toBe(code);
    if (code === 1) expect(r.stderr).toContain('E-CNV-003');
  });

  it('the help states the rule', () => {
    const r = run(['conversation', 'truncate', '--help']);
    expect(r.stdout.replace(/\s+/g, ' ')).toContain(
      '0 is refused (E-CNV-003, exit 1); anything else, a negative number included, is a usage error (exit 2)',
    );
  });
});

describe('deeply nested configuration', () => {
  it.each([
    ['flow', '['.repeat(100_000) + ']'.repeat(100_000)],
    ['block', '- '.repeat(100_000) + 'x'],
    ['mixed', '{a: '.repeat(50_000) + 'x' + '}'.repeat(50_000)],
  ])('deep %s YAML is config_invalid naming the file, exit 2', (_kind, text) => {
    const file = path.join(home, `deep.yaml`);
    fs.writeFileSync(file, `sessions:\n  - root:\n      ${text}\n`);
    const r = run(['config', 'check', '--config', file]);
    const out = r.stdout + r.stderr;
    expect(out).not.toMatch(/call stack/i);
    expect(out).toContain('config_invalid');
    expect(out).toContain(file);
    expect(out).toMatch(/nesting too deep/);
    expect(r.status).toBe(2);
  });
});
