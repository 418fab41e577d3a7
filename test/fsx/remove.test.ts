// Whole-directory removal: links removed as links, identity re-checked, a failed verification puts
// the directory back, and sizes are measured without changing anything.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { measureDir, removeDir } from '../../src/fsx/remove.js';
import { Dir, identityOf } from '../../src/fsx/safe-fs.js';
import { rmrf, tempDir } from '../helpers/fixtures.js';

let T: string;
beforeEach(() => {
  T = tempDir('remove');
  fs.mkdirSync(path.join(T, 'root', 'ses_a', 'blobs'), { recursive: true });
  fs.writeFileSync(path.join(T, 'root', 'ses_a', 'trace.jsonl'), 'x'.repeat(10));
  fs.writeFileSync(path.join(T, 'root', 'ses_a', 'blobs', 'b'), 'y'.repeat(5));
  fs.mkdirSync(path.join(T, 'outside'));
  fs.writeFileSync(path.join(T, 'outside', 'keep'), 'keep');
  fs.symlinkSync(path.join(T, 'outside'), path.join(T, 'root', 'ses_a', 'link-dir'));
  fs.symlinkSync(path.join(T, 'outside', 'keep'), path.join(T, 'root', 'ses_a', 'link-file'));
});
afterEach(() => rmrf(T));

/** `du -s -B1`: the allocated bytes of a tree (every entry's blocks, a hard-linked file once). */
function duBytes(p: string): number {
  return Number(execFileSync('du', ['-s', '-B1', p], { encoding: 'utf8' }).split('\t')[0]);
}

async function ident(p: string) {
  return identityOf(await fs.promises.lstat(p, { bigint: true }));
}

describe('removeDir', () => {
  it('removes the whole directory, links as links, and reports the bytes du counts', async () => {
    const root = await Dir.open(path.join(T, 'root'));
    const id = await ident(path.join(T, 'root', 'ses_a'));
    const du = duBytes(path.join(T, 'root', 'ses_a'));
    expect((await measureDir(root, 'ses_a', id)).bytes).toBe(du);
    expect(fs.existsSync(path.join(T, 'root', 'ses_a'))).toBe(true);
    const stats = await removeDir(root, 'ses_a', id, { runId: 'ses_run' });
    await root.close();
    expect(stats.bytes).toBe(du);
    expect(fs.readdirSync(path.join(T, 'root'))).toEqual([]);
    expect(fs.readFileSync(path.join(T, 'outside', 'keep'), 'utf8')).toBe('keep');
  });

  it('refuses a directory that is not the one scanned', async () => {
    const root = await Dir.open(path.join(T, 'root'));
    const wrong = await ident(path.join(T, 'outside'));
    await expect(removeDir(root, 'ses_a', wrong, { runId: 'ses_run' })).rejects.toMatchObject({
      code: 'changed_since_scan',
    });
    await root.close();
    expect(fs.existsSync(path.join(T, 'root', 'ses_a', 'trace.jsonl'))).toBe(true);
  });

  it('puts the directory back under its name when the check in the trash fails', async () => {
    const root = await Dir.open(path.join(T, 'root'));
    const id = await ident(path.join(T, 'root', 'ses_a'));
    await expect(
      removeDir(root, 'ses_a', id, {
        runId: 'ses_run',
        verifyInTrash: async () => {
          throw Object.assign(new Error('written since the scan'), { code: 'changed_since_scan' });
        },
      }),
    ).rejects.toThrow('written since the scan');
    await root.close();
    expect(fs.readdirSync(path.join(T, 'root'))).toEqual(['ses_a']);
    expect(fs.readFileSync(path.join(T, 'root', 'ses_a', 'blobs', 'b'), 'utf8')).toBe('yyyyy');
  });
});

describe('measureDir counts allocated bytes (what du counts)', () => {
  it('a sparse 1 TiB file counts the blocks it holds, not its length; a file linked twice counts once', async () => {
    const ses = path.join(T, 'root', 'ses_a');
    fs.writeFileSync(path.join(ses, 'dense'), Buffer.alloc(100_000, 1));
    const sparse = path.join(ses, 'sparse');
    fs.writeFileSync(sparse, 'tail');
    fs.truncateSync(sparse, 2 ** 40);
    fs.linkSync(path.join(ses, 'dense'), path.join(ses, 'blobs', 'dense-again'));
    const root = await Dir.open(path.join(T, 'root'));
    try {
      const bytes = (await measureDir(root, 'ses_a', await ident(ses))).bytes;
      expect(bytes).toBe(duBytes(ses));
      expect(bytes).toBeGreaterThanOrEqual(100_000);
      expect(bytes).toBeLessThan(1 << 20);
    } finally {
      await root.close();
    }
  });
});
