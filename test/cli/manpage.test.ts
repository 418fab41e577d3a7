// man/murmur-gc.1 is rendered from the commander definitions behind --help: the checked-in page
// must be exactly what the generator writes now (so a changed option or description cannot ship
// with a stale page), and the generator must carry every command, argument and option --help shows.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/main.js';
import { renderManPage } from '../../src/cli/manpage.js';
import { VERSION } from '../../src/version.js';
import { REPO } from '../helpers/fixtures.js';

const MAN = path.join(REPO, 'man', 'murmur-gc.1');

/** The page's text with roff font changes and escapes removed. */
function plain(roff: string): string {
  return roff.replace(/\\f[BIR]/g, '').replace(/\\-/g, '-').replace(/\\&/g, '').replace(/\\e/g, '\\');
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
  });
});
