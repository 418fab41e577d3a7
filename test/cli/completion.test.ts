// `murmur-gc completion bash|zsh|fish`: each script, loaded into its real shell, completes the
// commands, subcommands, options and argument choices --help lists, at the right place on the
// line. zsh and fish are needed for their parts (skipped with a printed reason without them;
// .ci/run installs both). zsh's completion system is stubbed (_describe, _files): what is tested
// is which candidates our function hands it.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderCompletion, SHELLS, type Shell } from '../../src/cli/completion.js';
import { buildProgram } from '../../src/cli/main.js';
import * as f from '../helpers/fixtures.js';
import { requirement } from '../helpers/requirements.js';

let T: string;
const scripts = new Map<Shell, string>();

beforeAll(() => {
  T = f.tempDir('completion');
  for (const shell of SHELLS) {
    const file = path.join(T, `murmur-gc.${shell}`);
    fs.writeFileSync(file, renderCompletion(shell, buildProgram()));
    scripts.set(shell, file);
  }
});
afterAll(() => f.rmrf(T));

function sq(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

function run(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, {
    encoding: 'utf8',
    timeout: 30_000,
    env: { ...process.env, HOME: T, XDG_CONFIG_HOME: path.join(T, '.config'), XDG_DATA_HOME: path.join(T, '.local') },
  });
  if (r.status !== 0) throw new Error(`${cmd} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

/** Candidates for the last word of `murmur-gc <words…>` ('' = completing a new word). */
function bashComplete(words: string[]): string[] {
  const all = ['murmur-gc', ...words];
  const body = `source ${sq(scripts.get('bash')!)}; COMP_WORDS=(${all.map(sq).join(' ')}); COMP_CWORD=${all.length - 1}; _murmur_gc; printf '%s\\n' "\${COMPREPLY[@]}"`;
  return run('bash', ['--norc', '--noprofile', '-c', body])
    .split('\n')
    .filter((l) => l !== '')
    .sort();
}

function zshComplete(words: string[]): string[] {
  const all = ['murmur-gc', ...words];
  const body = [
    'compdef() { :; }',
    '_describe() { local arr=${@[-1]}; local e; for e in "${(@P)arr}"; do print -r -- "${${e%%:*}//\\\\/}"; done }',
    '_files() { print -r -- "<files $*>"; }',
    `source ${sq(scripts.get('zsh')!)}`,
    `words=(${all.map(sq).join(' ')})`,
    `CURRENT=${all.length}`,
    '_murmur_gc',
  ].join('\n');
  const out = run('zsh', ['-f', '-c', body])
    .split('\n')
    .filter((l) => l !== '');
  const cur = all[all.length - 1] ?? '';
  return out.filter((c) => c.startsWith('<files') || c.startsWith(cur)).sort();
}

function fishComplete(words: string[]): string[] {
  const line = ['murmur-gc', ...words].join(' ');
  const body = `source ${sq(scripts.get('fish')!)}; complete -C ${sq(line)}`;
  return run('fish', ['--no-config', '-c', body])
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => l.split('\t')[0] ?? '')
    .sort();
}

function visible(cmd: Command): { commands: string[]; longs: string[] } {
  const help = cmd.createHelp();
  return {
    commands: help
      .visibleCommands(cmd)
      .map((c) => c.name())
      .filter((n) => n !== 'help'),
    longs: help
      .visibleOptions(cmd)
      .map((o) => o.long)
      .filter((l): l is string => l !== undefined),
  };
}

function sub(program: Command, ...names: string[]): Command {
  let c = program;
  for (const n of names) {
    const next = c.commands.find((x) => x.name() === n);
    if (!next) throw new Error(`no command ${names.join(' ')}`);
    c = next;
  }
  return c;
}

const program = buildProgram();
const sorted = (xs: string[]): string[] => [...xs].sort();

type Completer = (words: string[]) => string[];

function behaviour(complete: Completer, { optionsNeedDash }: { optionsNeedDash: boolean }): void {
  it("offers the top-level commands, and the default command's options before any command", () => {
    const top = complete(['']);
    for (const c of visible(program).commands) expect(top).toContain(c);
    expect(complete(['--d'])).toEqual(['--dry-run']);
    expect(complete(['st'])).toEqual(['status']);
  });

  it('offers the subcommands of a command group, and nothing from elsewhere', () => {
    expect(complete(['conversation', ''])).toEqual(expect.arrayContaining(['ls', 'rm', 'truncate']));
    expect(complete(['conversation', ''])).not.toContain('status');
  });

  it('offers exactly the options --help lists for each command', () => {
    const paths: string[][] = [
      ['sweep'],
      ['conversation', 'ls'],
      ['conversation', 'rm'],
      ['conversation', 'truncate'],
      ['daemon'],
      ['status'],
      ['history'],
      ['completion'],
    ];
    for (const p of paths) {
      const got = complete([...p, '--']).filter((w) => w.startsWith('--'));
      expect(sorted(got), p.join(' ')).toEqual(sorted(visible(sub(program, ...p)).longs));
    }
  });

  it('reads the word after a value-taking option as its value, not as a command', () => {
    // `--record truncate` names a record store called "truncate": the command is still `ls`.
    const got = complete(['conversation', 'ls', '--record', 'truncate', optionsNeedDash ? '--' : '']);
    expect(got).toContain('--message');
    expect(got).not.toContain('--keep');
    expect(complete(['--config', 'status', ''])).toEqual(expect.arrayContaining(['conversation', 'daemon']));
  });

  it('offers the shells to `completion`', () => {
    expect(complete(['completion', ''])).toEqual(expect.arrayContaining(['bash', 'fish', 'zsh']));
  });
}

describe('bash completion', () => {
  behaviour(bashComplete, { optionsNeedDash: false });

  it('completes file names after --config, directories after --home, nothing after other values', () => {
    fs.mkdirSync(path.join(T, 'cfgdir'), { recursive: true });
    fs.writeFileSync(path.join(T, 'cfg.yaml'), '');
    expect(bashComplete(['--config', path.join(T, 'cfg')])).toEqual([path.join(T, 'cfg.yaml'), path.join(T, 'cfgdir')]);
    expect(bashComplete(['--home', path.join(T, 'cfg')])).toEqual([path.join(T, 'cfgdir')]);
    expect(bashComplete(['history', '--since', ''])).toEqual([]);
  });
});

const zshReq = requirement('zsh completion tests', ['cmd:zsh']);
describe.runIf(zshReq.run)('zsh completion', () => {
  beforeAll(() => zshReq.check());
  it('parses (zsh -n)', () => {
    run('zsh', ['-n', scripts.get('zsh')!]);
  });
  behaviour(zshComplete, { optionsNeedDash: false });
  it('hands --config to _files and --home to _files -/', () => {
    expect(zshComplete(['--config', ''])).toEqual(['<files >']);
    expect(zshComplete(['status', '--home', ''])).toEqual(['<files -/>']);
  });
});

const fishReq = requirement('fish completion tests', ['cmd:fish']);
describe.runIf(fishReq.run)('fish completion', () => {
  beforeAll(() => fishReq.check());
  it('parses (fish --no-execute)', () => {
    run('fish', ['--no-config', '--no-execute', scripts.get('fish')!]);
  });
  // fish offers options only once a dash is typed.
  behaviour((words) => fishComplete(words), { optionsNeedDash: true });
});

describe('murmur-gc completion (the command)', () => {
  it('prints the script for each shell and refuses another shell with a usage error', () => {
    for (const shell of SHELLS) {
      const r = f.runCli(['completion', shell], T);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toBe(renderCompletion(shell, buildProgram()));
    }
    const bad = f.runCli(['completion', 'ksh'], T);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/Allowed choices are bash, zsh, fish/);
  });
});
