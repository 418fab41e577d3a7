import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import {
  KEEP_FREE_ACCEPTED_FORM,
  SIZE_ACCEPTED_FORM,
  SIZE_ZERO,
  keepFreeBytes,
  keepFreeInodes,
  parseKeepFree,
  parseSizeValue,
} from '../../src/config/size.js';
import { YamlFloat } from '../../src/config/retain.js';
import { ConfigError } from '../../src/errors.js';

let tmp: string;
beforeEach(async () => {
  tmp = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), 'murmur-gc-size-')));
});
afterEach(async () => {
  await fsp.rm(tmp, { recursive: true, force: true });
});

async function load(yaml: string) {
  const configPath = path.join(tmp, 'config.yaml');
  await fsp.writeFile(configPath, yaml);
  return loadConfig({ configPath, env: { HOME: tmp }, cwd: tmp });
}

async function loadError(yaml: string): Promise<ConfigError> {
  try {
    await load(yaml);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('size grammar', () => {
  it('bytes, K, M, G, T in powers of 1024; YAML integers are bytes', () => {
    expect(parseSizeValue('1048576', 'k', undefined)).toBe(1048576);
    expect(parseSizeValue(4096n, 'k', undefined)).toBe(4096);
    expect(parseSizeValue('500K', 'k', undefined)).toBe(500 * 1024);
    expect(parseSizeValue('500M', 'k', undefined)).toBe(500 * 1024 ** 2);
    expect(parseSizeValue('10G', 'k', undefined)).toBe(10 * 1024 ** 3);
    expect(parseSizeValue('2T', 'k', undefined)).toBe(2 * 1024 ** 4);
  });

  it.each(['10 G', '10g', '10GB', '1.5G', '-1G', 'G', '', ' 10G', '10P', '0x10'])(
    'refuses %j with the accepted form',
    (v) => {
      expect(() => parseSizeValue(v, 'records[0].max_bytes', '/c.yaml')).toThrow(
        `/c.yaml: records[0].max_bytes: '${v}' ${SIZE_ACCEPTED_FORM}`,
      );
    },
  );

  it('refuses floats, booleans, lists and null, zero and overflow', () => {
    expect(() => parseSizeValue(new YamlFloat(1.5), 'k', undefined)).toThrow(`'Number(1.5)' ${SIZE_ACCEPTED_FORM}`);
    expect(() => parseSizeValue(true, 'k', undefined)).toThrow(`'Bool(true)' ${SIZE_ACCEPTED_FORM}`);
    expect(() => parseSizeValue(null, 'k', undefined)).toThrow(`'Null' ${SIZE_ACCEPTED_FORM}`);
    expect(() => parseSizeValue('0G', 'k', undefined)).toThrow(SIZE_ZERO);
    expect(() => parseSizeValue(0n, 'k', undefined)).toThrow(SIZE_ZERO);
    expect(() => parseSizeValue('99999999T', 'k', undefined)).toThrow(/too large/);
    expect(parseSizeValue('9007199254740991', 'k', undefined)).toBe(Number.MAX_SAFE_INTEGER);
    expect(() => parseSizeValue('9007199254740992', 'k', undefined)).toThrow(
      `'9007199254740992' is too large (more than 2^53 - 1 bytes)`,
    );
  });

  it('a JS number from a programmatic caller counts as bytes only when it is a safe integer', () => {
    expect(parseSizeValue(5120, 'k', undefined)).toBe(5120);
    expect(parseSizeValue(Number.MAX_SAFE_INTEGER, 'k', undefined)).toBe(Number.MAX_SAFE_INTEGER);
    // Past 2^53 a number is no exact byte count: refused as not a size, quoted as a float.
    expect(() => parseSizeValue(2 ** 53, 'k', undefined)).toThrow(
      `k: 'Number(9007199254740992.0)' ${SIZE_ACCEPTED_FORM}`,
    );
    expect(() => parseSizeValue(1.5, 'k', undefined)).toThrow(`k: 'Number(1.5)' ${SIZE_ACCEPTED_FORM}`);
  });

  it('refuses a list, even of one size', () => {
    expect(() => parseSizeValue([5n], 'k', '/c.yaml')).toThrow(
      `/c.yaml: k: 'Sequence [Number(5)]' ${SIZE_ACCEPTED_FORM}`,
    );
    expect(() => parseSizeValue(['5G'], 'k', undefined)).toThrow(`k: 'Sequence [String("5G")]' ${SIZE_ACCEPTED_FORM}`);
  });

  it('keep_free: a size that is zero or too large keeps its own reason', () => {
    expect(() => parseKeepFree('0', 'keep_free', '/c.yaml')).toThrow(
      new ConfigError('keep_free', SIZE_ZERO, '/c.yaml'),
    );
    expect(() => parseKeepFree(0n, 'keep_free', '/c.yaml')).toThrow(`/c.yaml: keep_free: ${SIZE_ZERO}`);
    expect(() => parseKeepFree('99999999T', 'keep_free', undefined)).toThrow(
      new ConfigError('keep_free', `'99999999T' is too large (more than 2^53 - 1 bytes)`, undefined),
    );
  });

  it('keep_free: a value that is not a string is quoted in its Rust form', () => {
    expect(() => parseKeepFree(true, 'keep_free', undefined)).toThrow(
      `keep_free: 'Bool(true)' ${KEEP_FREE_ACCEPTED_FORM}`,
    );
    expect(() => parseKeepFree(new YamlFloat(0.5), 'keep_free', undefined)).toThrow(
      `keep_free: 'Number(0.5)' ${KEEP_FREE_ACCEPTED_FORM}`,
    );
    expect(() => parseKeepFree(null, 'keep_free', undefined)).toThrow(`keep_free: 'Null' ${KEEP_FREE_ACCEPTED_FORM}`);
    expect(parseKeepFree(4096n, 'keep_free', undefined)).toEqual({ kind: 'bytes', bytes: 4096, perSweepPercent: 50 });
  });

  it('keep_free: a size or a whole percentage 1..99', () => {
    expect(parseKeepFree('5%', 'keep_free', undefined)).toEqual({ kind: 'percent', percent: 5, perSweepPercent: 50 });
    expect(parseKeepFree('2G', 'keep_free', undefined)).toEqual({
      kind: 'bytes',
      bytes: 2 * 1024 ** 3,
      perSweepPercent: 50,
    });
    for (const bad of ['0%', '100%', '5.5%', '%', '5 %', '-5%', 'five', '5%%', 'x5%', '05%5%']) {
      expect(() => parseKeepFree(bad, 'keep_free', undefined)).toThrow(
        `keep_free: '${bad}' ${KEEP_FREE_ACCEPTED_FORM}`,
      );
    }
    // the words a user reads: what keep_free accepts, after what a size accepts
    expect(() => parseKeepFree('100%', 'keep_free', undefined)).toThrow(
      `keep_free: '100%' ${SIZE_ACCEPTED_FORM}; or a whole percentage of the filesystem from 1% to 99%`,
    );
    expect(parseKeepFree('1%', 'keep_free', undefined)).toEqual({ kind: 'percent', percent: 1, perSweepPercent: 50 });
    expect(parseKeepFree('99%', 'keep_free', undefined)).toEqual({ kind: 'percent', percent: 99, perSweepPercent: 50 });
    expect(keepFreeBytes({ kind: 'percent', percent: 10 }, 1001), 'rounded up').toBe(101);
    expect(keepFreeBytes({ kind: 'bytes', bytes: 7 }, 1001)).toBe(7);
  });

  it('keep_free: a block of free and per_sweep (the most it takes of one store a sweep, 1%..100%, default 50%)', () => {
    expect(parseKeepFree({ free: '10%', per_sweep: '25%' }, 'keep_free', undefined)).toEqual({
      kind: 'percent',
      percent: 10,
      perSweepPercent: 25,
    });
    expect(parseKeepFree({ free: '2G' }, 'keep_free', undefined)).toEqual({
      kind: 'bytes',
      bytes: 2 * 1024 ** 3,
      perSweepPercent: 50,
    });
    expect(parseKeepFree({ free: '2G', per_sweep: '100%' }, 'keep_free', undefined)).toMatchObject({
      perSweepPercent: 100,
    });
    expect(() => parseKeepFree({ per_sweep: '10%' }, 'keep_free', undefined)).toThrow('keep_free: must set free');
    expect(() => parseKeepFree({ free: '5%', sweep: '10%' }, 'keep_free', undefined)).toThrow(
      "keep_free.sweep: unknown key 'sweep'; expected: free, per_sweep",
    );
    expect(() => parseKeepFree({ free: '0%' }, 'keep_free', undefined)).toThrow("keep_free.free: '0%'");
    for (const bad of ['0%', '101%', '50', 'half', 50n]) {
      expect(() => parseKeepFree({ free: '5%', per_sweep: bad }, 'keep_free', undefined)).toThrow(
        /^keep_free\.per_sweep: '.*' must be a whole percentage from 1% to 100%/,
      );
    }
  });

  it('keep_free asks the same share of the inodes as of the bytes; none where the filesystem counts no inodes', () => {
    const k = (v: unknown) => parseKeepFree(v, 'keep_free', undefined);
    expect(keepFreeInodes(k('10%'), 1000, 4001)).toBe(401); // rounded up
    expect(keepFreeInodes(k(250n), 1000, 4000)).toBe(1000); // a size: its share of the filesystem
    expect(keepFreeInodes(k(5000n), 1000, 4000)).toBe(4000); // never more than there are
    expect(keepFreeInodes(k('10%'), 1000, 0)).toBe(0);
  });
});

describe('config keys', () => {
  it('max_bytes on sessions and records entries, keep_free at the top', async () => {
    const c = await load(`keep_free: 10%
sessions:
  - root: ./s
    max_bytes: 10G
  - root: ./t
    retain: { max_sessions: 3 }
records:
  - capsule: shey
    max_bytes: 500M
    retain: { max_age: 30d }
`);
    expect(c.keepFree).toEqual({ kind: 'percent', percent: 10, perSweepPercent: 50 });
    expect(c.sessions.map((s) => [s.root, s.maxBytes, s.retain])).toEqual([
      [path.join(tmp, 's'), 10 * 1024 ** 3, undefined],
      [path.join(tmp, 't'), undefined, { maxSessions: 3 }],
    ]);
    expect(c.records[0]).toMatchObject({
      capsule: 'shey',
      maxBytes: 500 * 1024 ** 2,
      retain: { maxAgeSecs: 30 * 86400 },
    });
  });

  it('absent: no budget, no keep_free', async () => {
    const c = await load('records:\n  - capsule: shey\n');
    expect(c.keepFree).toBeUndefined();
    expect(c.records[0]?.maxBytes).toBeUndefined();
  });

  it('errors name the file and key path', async () => {
    const file = path.join(tmp, 'config.yaml');
    expect((await loadError('sessions:\n  - root: ./s\n    max_bytes: 10GB\n')).message).toBe(
      `${file}: sessions[0].max_bytes: '10GB' ${SIZE_ACCEPTED_FORM}`,
    );
    expect((await loadError('records:\n  - capsule: a\n  - capsule: b\n    max_bytes: 0\n')).message).toBe(
      `${file}: records[1].max_bytes: ${SIZE_ZERO}`,
    );
    expect((await loadError('keep_free: 150%\n')).message).toBe(
      `${file}: keep_free: '150%' ${KEEP_FREE_ACCEPTED_FORM}`,
    );
    expect((await loadError('keep_free: 0.5\n')).message).toBe(
      `${file}: keep_free: 'Number(0.5)' ${KEEP_FREE_ACCEPTED_FORM}`,
    );
    expect((await loadError('keep_free: 0\n')).message).toBe(`${file}: keep_free: ${SIZE_ZERO}`);
    expect((await loadError('sessions:\n  - root: ./s\n    max_bytes: [5]\n')).message).toBe(
      `${file}: sessions[0].max_bytes: 'Sequence [Number(5)]' ${SIZE_ACCEPTED_FORM}`,
    );
    expect((await loadError('sessions:\n  - root: ./s\n    max_byte: 1G\n')).message).toBe(
      `${file}: sessions[0].max_byte: unknown key 'max_byte'; expected: root, workdir, project, retain, max_bytes, children, keep_free`,
    );
  });
});

describe('metrics.textfile', () => {
  it('resolves against the config directory and must end in .prom', async () => {
    expect((await load('metrics:\n  textfile: prom/murmur-gc.prom\n')).metrics).toEqual({
      textfile: path.join(tmp, 'prom', 'murmur-gc.prom'),
    });
    expect((await load('log: { level: info }\n')).metrics).toBeUndefined();
    const file = path.join(tmp, 'config.yaml');
    expect((await loadError('metrics:\n  textfile: /x/murmur-gc.txt\n')).message).toBe(
      `${file}: metrics.textfile: '/x/murmur-gc.txt' must name a file ending in .prom (the textfile collector reads only *.prom)`,
    );
    expect((await loadError('metrics:\n  path: /x/a.prom\n')).message).toBe(
      `${file}: metrics.path: unknown key 'path'; expected: textfile, interval`,
    );
  });

  it('metrics.interval: a duration (the cadence the alert rules assume), only beside a textfile', async () => {
    expect((await load('metrics:\n  textfile: prom/m.prom\n  interval: 2h\n')).metrics).toEqual({
      textfile: path.join(tmp, 'prom', 'm.prom'),
      intervalSecs: 7200,
    });
    const file = path.join(tmp, 'config.yaml');
    expect((await loadError('metrics:\n  interval: 2h\n')).message).toBe(
      `${file}: metrics.interval: has no effect without metrics.textfile`,
    );
    expect((await loadError('metrics:\n  textfile: prom/m.prom\n  interval: soon\n')).message).toMatch(
      /^.*metrics\.interval: /,
    );
  });
});

describe('max_bytes on a workdir entry with a broken manifest', () => {
  it('is not applied: the entry deletes nothing until the manifest is fixed', async () => {
    await fsp.mkdir(path.join(tmp, 'wd'));
    await fsp.writeFile(path.join(tmp, 'wd', 'murmur.yaml'), 'trace:\n  retain: {}\n');
    const c = await load('sessions:\n  - workdir: ./wd\n    max_bytes: 1G\n  - workdir: ./ok\n    max_bytes: 1G\n');
    expect(c.sessions[0]?.problem?.code).toBe('config_invalid');
    expect(c.sessions[0]?.maxBytes).toBeUndefined();
    expect(c.sessions[1]?.maxBytes).toBe(1024 ** 3);
  });
});
