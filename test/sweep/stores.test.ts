// `status` store sizes are allocated bytes (what du counts), as the disk budgets count them.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { measureStores } from '../../src/sweep/stores.js';
import * as f from '../helpers/fixtures.js';

let tmp: string;
beforeEach(() => {
  tmp = fs.realpathSync(f.tempDir('mgc-stores'));
});
afterEach(() => f.rmrf(tmp));

function duBytes(...paths: string[]): number {
  return paths.reduce((n, p) => n + Number(execFileSync('du', ['-s', '-B1', p], { encoding: 'utf8' }).split('\t')[0]), 0);
}

describe('measureStores', () => {
  it('a sparse 1 TiB file in a session and in a context counts the blocks it holds: the sizes are du\'s', async () => {
    const home = path.join(tmp, 'home');
    const root = path.join(tmp, 'app', '.murmur');
    const now = Date.now();
    const ses = [1, 2].map((d) => f.writeSession(root, { sessionId: f.idAt('ses_', now - d * f.DAY), startMs: now - d * f.DAY, end: true, files: { blob: 'x'.repeat(10_000) } }));
    fs.writeFileSync(path.join(ses[0]!, 'huge.bin'), 'x');
    fs.truncateSync(path.join(ses[0]!, 'huge.bin'), 2 ** 40);
    f.writeRecord(home, 'shey', 'ctx-a', { capsule: 'shey', messages: 30 });
    f.writeRecord(home, 'shey', 'ctx-b', { capsule: 'shey', messages: 5 });
    fs.writeFileSync(path.join(home, 'conversations', 'shey', 'ctx-b', 'attachment'), 'x');
    fs.truncateSync(path.join(home, 'conversations', 'shey', 'ctx-b', 'attachment'), 2 ** 40);
    const configPath = f.writeConfig(tmp, `home: ${home}\nsessions:\n  - root: ${root}\n`);
    const config = await loadConfig({ configPath, env: { HOME: tmp }, cwd: tmp });
    const sizes = await measureStores(config);
    expect(sizes.sessions.bytes).toBe(duBytes(...ses));
    expect(sizes.sessions.bytes).toBeLessThan(1 << 20);
    expect(sizes.records.bytes).toBe(duBytes(path.join(home, 'conversations', 'shey', 'ctx-a'), path.join(home, 'conversations', 'shey', 'ctx-b')));
    expect(sizes.records.bytes).toBeLessThan(1 << 20);
  });
});
