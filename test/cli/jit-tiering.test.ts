// The tier-up threshold the bin sets (src/cli/jit-tiering.ts): on V8 11 (Node 20) a flag its V8
// knows (never an "unrecognized flag" on stderr), none on any other V8, and a threshold given on
// node's own command line kept.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { tierUpFlag, tuneTierUp } from '../../src/cli/jit-tiering.js';
import { BIN } from '../helpers/fixtures.js';

const T = 60_000;

describe('tierUpFlag', () => {
  it('names the threshold of V8 11 (Node 20), three times its default', () => {
    expect(tierUpFlag('11.3.244.8-node.38')).toBe(`--interrupt-budget=${3 * 67584}`);
  });

  it('names none for any other V8 (Node 22 and 24 included)', () => {
    for (const v of ['12.4.254.21-node.57', '13.6.233.17-node.53', '10.2.154.26-node.26', '14.0.1', '', 'x.y'])
      expect(tierUpFlag(v)).toBeUndefined();
  });
});

describe('tuneTierUp', () => {
  it('keeps a threshold given on the command line, in either spelling', () => {
    const flag = tierUpFlag('11.3.0') as string;
    const name = flag.slice(0, flag.indexOf('='));
    expect(tuneTierUp('11.3.0', [`${name}=1000`])).toBeUndefined();
    expect(tuneTierUp('11.3.0', [name.replace(/-/g, '_').replace(/^__/, '--') + '=1000'])).toBeUndefined();
    expect(tuneTierUp('99.0.0', [])).toBeUndefined();
  });

  it('on V8 11 sets a flag that V8 knows (no error on stderr, node accepts it on its command line)', () => {
    const flag = tierUpFlag('11.3.0') as string;
    const node20 = process.versions.v8.startsWith('11.');
    // (on another Node nothing is set, so there is no flag of its V8 to check)
    expect(tuneTierUp(process.versions.v8, [])).toBe(node20 ? flag : undefined);
    if (!node20) return;
    const set = spawnSync(process.execPath, ['-e', `require('node:v8').setFlagsFromString(${JSON.stringify(flag)})`], {
      encoding: 'utf8',
      timeout: T,
    });
    expect(set.status).toBe(0);
    expect(set.stderr).toBe('');
    const given = spawnSync(process.execPath, [flag, '-e', '0'], { encoding: 'utf8', timeout: T });
    expect(given.status, given.stderr).toBe(0);
  });

  it('leaves the bin silent on stderr, with and without a threshold of its own', () => {
    const own = process.versions.v8.startsWith('11.') ? ['--interrupt-budget=70000'] : [];
    for (const pre of [[], own]) {
      const r = spawnSync(process.execPath, [...pre, BIN, '--help'], { encoding: 'utf8', timeout: T });
      expect(r.status).toBe(0);
      expect(r.stderr).toBe('');
    }
  });
});
