// What the repository tells an operator about installing murmur-gc says one thing: every install
// instruction (README, docs/, the systemd unit headers) is the packed-tarball route the README
// documents, `npm pack` leaves nothing untracked behind, and the package's `files` list names each
// entry once. Reads files only; runs `git check-ignore` for the tarball name.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as f from '../helpers/fixtures.js';

const INSTALL = 'npm pack && npm install -g --prefix ~/.local ./murmur-gc-*.tgz';

function papers(): { file: string; text: string }[] {
  const out: { file: string; text: string }[] = [];
  const add = (rel: string) => out.push({ file: rel, text: fs.readFileSync(path.join(f.REPO, rel), 'utf8') });
  add('README.md');
  for (const d of ['docs', 'systemd']) {
    for (const name of fs.readdirSync(path.join(f.REPO, d)).sort()) {
      if (/\.(md|service|timer)$/.test(name)) add(`${d}/${name}`);
    }
  }
  return out;
}

describe('the install route', () => {
  it('every `npm install -g` instruction is the packed tarball, the same command everywhere', () => {
    const found: string[] = [];
    for (const { file, text } of papers()) {
      for (const line of text.split('\n')) {
        // A command line (in a code block or a unit's comment), not prose naming the command.
        if (!/^\s*#?\s*(npm ci && )?npm (pack && npm )?install -g/.test(line)) continue;
        found.push(file);
        expect(line, `${file}: ${line}`).toContain(INSTALL);
      }
    }
    expect(found).toContain('README.md');
    expect(found).toContain('docs/daemon.md');
    expect(found).toContain('systemd/murmur-gc.service');
    expect(found).toContain('systemd/murmur-gc-sweep.service');
  });

  it('the tarball `npm pack` writes into the clone is ignored by git', () => {
    const r = spawnSync('git', ['check-ignore', '-q', 'murmur-gc-1.2.3.tgz'], { cwd: f.REPO });
    expect(r.status).toBe(0);
  });

  it('package.json `files` names each entry once', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(f.REPO, 'package.json'), 'utf8')) as { files: string[] };
    expect(pkg.files.length).toBe(new Set(pkg.files).size);
  });
});
