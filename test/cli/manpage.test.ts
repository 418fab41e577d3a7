// man/murmur-gc.1 is rendered from the commander definitions behind --help: the checked-in page
// must be exactly what the generator writes now (so a changed option or description cannot ship
// with a stale page), and the generator must carry every command, argument and option --help shows.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/main.js';
import { renderManPage } from '../../src/cli/manpage.js';
import { VERSION } from '../../src/version.js';
import { BIN, REPO, cliEnv, tempDir } from '../helpers/fixtures.js';
import { requirement } from '../helpers/requirements.js';

const MAN = path.join(REPO, 'man', 'murmur-gc.1');
const groff = requirement('man page rendering', ['cmd:groff']);

/** The text of one `.SH NAME` section (up to the next .SH), roff removed. */
function sectionText(roff: string, name: string): string {
  const m = new RegExp(`^\\.SH ${name}\\n([\\s\\S]*?)(?=^\\.SH |(?![\\s\\S]))`, 'm').exec(roff);
  return m ? plain(m[1]!.replace(/^\.[A-Z]+.*\n/gm, '')) : '';
}

/** The page's text with roff font changes and escapes removed. */
function plain(roff: string): string {
  return roff
    .replace(/\\f[BIR]/g, '')
    .replace(/\\-/g, '-')
    .replace(/\\&/g, '')
    .replace(/\\\[u([0-9A-F]{4,6})\]/g, (_m, hex: string) => String.fromCodePoint(parseInt(hex, 16)))
    .replace(/\\e/g, '\\');
}

function everyCommand(cmd: Command): Command[] {
  return [cmd, ...cmd.commands.flatMap(everyCommand)];
}

describe('man page', () => {
  it('the checked-in man/murmur-gc.1 is what the generator writes (run `npm run man` after changing the CLI)', () => {
    expect(fs.readFileSync(MAN, 'utf8')).toBe(renderManPage(buildProgram(), VERSION));
  });

  it('carries every command, argument, option and description that --help prints', () => {
    const program = buildProgram();
    const page = plain(renderManPage(program, VERSION));
    const help = program.createHelp();
    for (const cmd of everyCommand(program)) {
      expect(page).toContain(help.commandUsage(cmd));
      expect(page).toContain(help.commandDescription(cmd));
      for (const a of help.visibleArguments(cmd)) {
        expect(page).toContain(help.argumentTerm(a));
        expect(page).toContain(help.argumentDescription(a));
      }
      for (const o of help.visibleOptions(cmd)) {
        expect(page, `${cmd.name()} ${o.flags}`).toContain(help.optionTerm(o));
        expect(page, `${cmd.name()} ${o.flags}`).toContain(help.optionDescription(o));
      }
    }
    expect(page).toContain('With no command, murmur-gc runs `sweep`');
    expect(page).toMatch(/^\.TH MURMUR-GC 1 "" "murmur-gc \d+\.\d+\.\d+"/m);
  });

  it('a description that changes makes the page differ (the drift check can fail)', () => {
    const program = buildProgram();
    const before = renderManPage(program, VERSION);
    const sweep = program.commands.find((c) => c.name() === 'sweep');
    const opt = sweep?.options.find((o) => o.long === '--dry-run');
    if (!opt) throw new Error('sweep --dry-run is gone');
    opt.description = 'something else';
    expect(renderManPage(program, VERSION)).not.toBe(before);
  });

  it('escapes text roff would read as requests or escapes', () => {
    const program = buildProgram().description('.starts with a dot \\ and a-hyphen');
    const page = renderManPage(program, VERSION);
    expect(page).toContain('murmur\\-gc \\- \\&.starts with a dot \\e and a\\-hyphen');
    expect(renderManPage(buildProgram().description('sweep — fast…'), VERSION)).toContain(
      'sweep \\[u2014] fast\\[u2026]',
    );
  });

  it('has EXAMPLES, FILES, CONFIGURATION and EXIT STATUS sections, in the usual order', () => {
    const page = fs.readFileSync(MAN, 'utf8');
    const order = [...page.matchAll(/^\.SH (.+)$/gm)].map((m) => m[1]);
    expect(order).toEqual([
      'NAME',
      'SYNOPSIS',
      'DESCRIPTION',
      'OPTIONS',
      'COMMANDS',
      'CONFIGURATION',
      'EXIT STATUS',
      'ENVIRONMENT',
      'FILES',
      'EXAMPLES',
      'SEE ALSO',
    ]);
    const config = sectionText(page, 'CONFIGURATION');
    const example = fs.readFileSync(path.join(REPO, 'config.example.yaml'), 'utf8');
    // Every top-level key of the example configuration (commented-out ones too) is described.
    const keys = [...example.matchAll(/^#?([a-z_]+):/gm)].map((m) => m[1]!);
    expect(keys.length).toBeGreaterThan(10);
    for (const k of keys) expect(config, k).toMatch(new RegExp(`^${k}\\b`, 'm'));
    expect(sectionText(page, 'FILES')).toContain('~/.murmur');
    expect(sectionText(page, 'EXAMPLES')).toContain('murmur-gc --dry-run');
  });

  it('EXIT STATUS lists every exit code and case `murmur-gc --help` lists', () => {
    const r = spawnSync(process.execPath, [BIN, '--help'], { env: cliEnv(tempDir('man-help')), encoding: 'utf8' });
    const block = /Exit codes:\n([\s\S]*?)\n\n/.exec(r.stdout)?.[1] ?? '';
    const codes = [...block.matchAll(/^\s+(\d+)\s+(.+)$/gm)].map((m) => [m[1]!, m[2]!] as const);
    expect(codes.length).toBe(4);
    const exit = sectionText(fs.readFileSync(MAN, 'utf8'), 'EXIT STATUS').replace(/\s+/g, ' ');
    for (const [code, what] of codes) expect(exit, code).toContain(`${code} ${what}`);
  });

  it('a boolean flag does not say "(default: false)"', () => {
    const page = fs.readFileSync(MAN, 'utf8');
    expect(page).not.toContain('default: false');
  });

  describe.runIf(groff.run)('rendered by groff', () => {
    it('`groff -ww -man -Tutf8` renders it without a warning', () => {
      groff.check();
      const r = spawnSync('groff', ['-ww', '-man', '-Tutf8', '-z', MAN], { encoding: 'utf8' });
      expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
    });
  });
});
