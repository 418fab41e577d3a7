// The sweep judges the home again through the descriptor it opened, before anything is created,
// locked or changed in it (src/sweep/steps/lock.ts): a home that stopped being one since the
// configuration was loaded (a daemon runs for days) is refused, exit 2, and left as it is.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runSweep } from '../../src/sweep/pipeline.js';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/log.js';
import * as f from '../helpers/fixtures.js';

let tmp: string;
let home: string;
const log = createLogger({ level: 'silent' });
beforeEach(() => {
  tmp = fs.realpathSync(f.tempDir('mgc-home-guard'));
  home = path.join(tmp, 'home');
  fs.mkdirSync(path.join(home, 'conversations'), { recursive: true });
});
afterEach(() => f.rmrf(tmp));

describe('the home, judged at the moment of action', () => {
  it('a home emptied of every murmur entry and given other files since the load is refused by a sweep and its dry run, and left alone', async () => {
    const config = await loadConfig({
      configPath: f.writeConfig(tmp, `home: ${home}\n`),
      env: { HOME: tmp },
      cwd: tmp,
    });
    fs.rmdirSync(path.join(home, 'conversations'));
    fs.writeFileSync(path.join(home, 'notes.txt'), 'mine');
    fs.chmodSync(home, 0o755);
    for (const dryRun of [true, false]) {
      await expect(runSweep({ config, dryRun, log })).rejects.toMatchObject({
        code: 'config_invalid',
        exitCode: 2,
        keyPath: 'home',
        message: expect.stringContaining('is not a murmur home'),
      });
    }
    expect(fs.statSync(home).mode & 0o777).toBe(0o755);
    expect(fs.readdirSync(home)).toEqual(['notes.txt']);
  });

  it('a home replaced by a link to a system directory is refused (nothing there is read for it but a listing)', async () => {
    const config = await loadConfig({
      configPath: f.writeConfig(tmp, `home: ${home}\n`),
      env: { HOME: tmp },
      cwd: tmp,
    });
    fs.rmSync(home, { recursive: true });
    fs.symlinkSync('/etc', home);
    await expect(runSweep({ config, dryRun: true, log })).rejects.toMatchObject({
      code: 'config_invalid',
      message: expect.stringContaining('resolves to /etc, which is a system directory'),
    });
  });
});
