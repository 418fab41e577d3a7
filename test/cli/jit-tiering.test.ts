// The tier-up threshold the bin sets (src/cli/jit-tiering.ts): a flag this Node's V8 knows (never
// an "unrecognized flag" on stderr), none on a V8 whose flag is not known, and a threshold given on
// node's own command line kept.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { tierUpFlag, tuneTierUp } from '../../src/cli/jit-tiering.js';
import { BIN } from '../helpers/fixtures.js';

const T = 60_000;

describe('tierUpFlag', () => {
  it('names the threshold of V8 11 (Node 20) and of V8 12 and 13 (Node 22, 24), each three times its default', () => {
    expect(tierUpFlag('11.3.244.8-node.38')).toBe(`--interrupt-budget=${3 * 67584}`);
    expect(tierUpFlag('12.4.254.21-node.57')).toBe(`--invocation-count-for-turbofan=${3 * 3000}`);
    expect(tierUpFlag('13.6.233.17-node.53')).toBe(`--invocation-count-for-turbofan=${3 * 3000}`);
  });

  it('names none for a V8 whose flag is not known', () => {
    for (const v of ['10.2.154.26-node.26', '14.0.1', '', 'x.y']) expect(tierUpFlag(v)).toBeUndefined();
  });
});

describe('tuneTierUp', () => {
  it('keeps a threshold given on the command line, in either spelling', () => {
    const flag = tierUpFlag('11.3.0') as string;
    const name = flag.slice(0, flag.indexOf('='));
    expect(tuneTierUp('11.3.0', [`${name}=1000`])).toBeUndefined();
    expect(tuneTierUp('11.3.0', [name.replace(/-/g, '_').replace(/^__/, '--') + '=1000'])).toBeUndefined();
    expect(tuneTierUp('99.0.0', [])).toBeUndefined();
    // (raising this process's threshold changes when vitest's code is optimized, nothing else)
    expect(tuneTierUp(process.versions.v8, [])).toBe(tierUpFlag(process.versions.v8));
  });

  it("sets a flag this Node's V8 knows: no error on stderr, and node accepts it on its command line", () => {
    const flag = tierUpFlag(process.versions.v8);
    expect(flag, `a known V8 (${process.versions.v8})`).toBeDefined();
    const set = spawnSync(process.execPath, ['-e', `require('node:v8').setFlagsFromString(${JSON.stringify(flag)})`], {
      encoding: 'utf8',
      timeout: T,
    });
    expect(set.status).toBe(0);
    expect(set.stderr).toBe('');
    const given = spawnSync(process.execPath, [flag as string, '-e', '0'], { encoding: 'utf8', timeout: T });
    expect(given.status, given.stderr).toBe(0);
  });

  it('leaves the bin silent on stderr, with and without a threshold of its own', () => {
    const flag = tierUpFlag(process.versions.v8) as string;
    for (const pre of [[], [flag.replace(/=.*/, '=70000')]]) {
      const r = spawnSync(process.execPath, [...pre, BIN, '--help'], { encoding: 'utf8', timeout: T });
      expect(r.status).toBe(0);
      expect(r.stderr).toBe('');
    }
  });
});
