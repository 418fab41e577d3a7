// Dir.relativePassSync: reads relative to a directory's descriptor, through the working directory
// for the length of one synchronous pass. What it returns equals what the descriptor's
// /proc/self/fd path returns; links are never followed by lstat; the working directory is always
// put back; where it cannot be changed (a worker thread) the same answers come through /proc.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Dir } from '../../src/fsx/safe-fs.js';
import { rmrf, tempDir } from '../helpers/fixtures.js';

let T: string;
let startCwd: string;
beforeEach(() => {
  startCwd = process.cwd();
  T = tempDir('relpass');
  fs.mkdirSync(path.join(T, 'root', 'ses_a'), { recursive: true });
  fs.writeFileSync(path.join(T, 'root', 'ses_a', 'trace.jsonl'), 'x'.repeat(10));
  fs.writeFileSync(path.join(T, 'root', 'plain'), 'p');
  fs.mkdirSync(path.join(T, 'outside'));
  fs.writeFileSync(path.join(T, 'outside', 'trace.jsonl'), 'o');
  fs.symlinkSync(path.join(T, 'outside'), path.join(T, 'root', 'ses_link'));
});
afterEach(() => {
  process.chdir(startCwd);
  rmrf(T);
});

const PATHS = [
  'ses_a',
  'ses_a/trace.jsonl',
  'ses_link',
  'plain',
  'missing',
  'plain/trace.jsonl',
  'missing/trace.jsonl',
];

/** What each path is, as a short comparable word (kind and size, or none). */
function describePass(dir: Dir): string[] {
  return dir.relativePassSync((at) =>
    PATHS.map((p) => {
      const st = at.lstat(p);
      if (st === undefined) return `${p}: none`;
      if (st instanceof Error) return `${p}: error`;
      const kind = st.isSymbolicLink() ? 'link' : st.isDirectory() ? 'dir' : 'file';
      return `${p}: ${kind}${kind === 'file' ? ` ${st.size}` : ''} ino ${st.ino}`;
    }),
  );
}

/** The same through the descriptor's /proc path, as child() reaches it. */
function describeProc(dir: Dir): string[] {
  return PATHS.map((p) => {
    let st: fs.BigIntStats | undefined;
    try {
      st = fs.lstatSync(`/proc/self/fd/${dir.fd}/${p}`, { bigint: true, throwIfNoEntry: false });
    } catch {
      st = undefined; // ENOTDIR
    }
    if (st === undefined) return `${p}: none`;
    const kind = st.isSymbolicLink() ? 'link' : st.isDirectory() ? 'dir' : 'file';
    return `${p}: ${kind}${kind === 'file' ? ` ${st.size}` : ''} ino ${st.ino}`;
  });
}

describe('Dir.relativePassSync', () => {
  it('answers as the descriptor does, a link is reported and not followed, and the working directory is put back', async () => {
    const dir = await Dir.open(path.join(T, 'root'));
    try {
      const got = describePass(dir);
      expect(got).toEqual(describeProc(dir));
      expect(got).toContain(
        `ses_link: link ino ${fs.lstatSync(path.join(T, 'root', 'ses_link'), { bigint: true }).ino}`,
      );
      expect(got).toContain('missing: none');
      expect(got).toContain('plain/trace.jsonl: none');
      expect(process.cwd()).toBe(startCwd);
      const names = dir.relativePassSync((at) => at.list('ses_a'));
      expect(names).toEqual(['trace.jsonl']);
      expect(dir.relativePassSync((at) => at.list('missing'))).toBeInstanceOf(Error);
    } finally {
      await dir.close();
    }
  });

  it('reads the directory it opened even after its path names another one', async () => {
    const dir = await Dir.open(path.join(T, 'root'));
    try {
      fs.renameSync(path.join(T, 'root'), path.join(T, 'moved'));
      fs.mkdirSync(path.join(T, 'root'));
      fs.symlinkSync(path.join(T, 'outside'), path.join(T, 'root', 'ses_a'));
      const st = dir.relativePassSync((at) => at.lstat('ses_a/trace.jsonl'));
      expect(st).not.toBeInstanceOf(Error);
      expect((st as fs.BigIntStats).size).toBe(10n);
    } finally {
      await dir.close();
    }
  });

  it('puts the working directory back after a throw inside the pass', async () => {
    const dir = await Dir.open(path.join(T, 'root'));
    try {
      expect(() =>
        dir.relativePassSync(() => {
          throw new Error('boom');
        }),
      ).toThrow('boom');
      expect(process.cwd()).toBe(startCwd);
      // a path that is not a chain of single names is refused before anything is read
      for (const bad of [
        '../outside',
        '',
        '/etc',
        'ses_a/',
        'ses_a//trace.jsonl',
        'ses_a/./trace.jsonl',
        'ses_a/..',
        '.',
        'ses\0a',
      ]) {
        expect(() => dir.relativePassSync((at) => at.lstat(bad)), bad).toThrow(/not a chain of single names/);
        expect(() => dir.relativePassSync((at) => at.list(bad)), bad).toThrow(/not a chain of single names/);
      }
      expect(process.cwd()).toBe(startCwd);
      // names that only look like those are names
      fs.writeFileSync(path.join(T, 'root', '...'), '');
      fs.writeFileSync(path.join(T, 'root', '.hidden'), '');
      expect(
        dir.relativePassSync((at) =>
          [at.lstat('...'), at.lstat('.hidden')].map((st) => st !== undefined && !(st instanceof Error)),
        ),
      ).toEqual([true, true]);
    } finally {
      await dir.close();
    }
  });

  it('goes back to a starting directory that was removed since', async () => {
    const gone = path.join(T, 'gone');
    fs.mkdirSync(gone);
    process.chdir(gone);
    fs.rmdirSync(gone);
    const dir = await Dir.open(path.join(T, 'root'));
    try {
      expect(describePass(dir)).toEqual(describeProc(dir));
      // still in the removed directory, not in the root the pass used
      expect(fs.readdirSync('.')).toEqual([]);
    } finally {
      await dir.close();
    }
  });

  it('in a worker thread (no chdir there) gives the same answers through /proc', async () => {
    const dist = path.resolve(__dirname, '../../dist/fsx/safe-fs.js');
    const code = `
      const { parentPort, workerData } = require('node:worker_threads');
      import(workerData.dist).then(async ({ Dir }) => {
        const dir = await Dir.open(workerData.root);
        const out = dir.relativePassSync((at) => workerData.paths.map((p) => {
          const st = at.lstat(p);
          return st === undefined ? 'none' : st instanceof Error ? 'error' : String(st.ino) + (st.isSymbolicLink() ? ' link' : '');
        }));
        let chdirRefused = false;
        try { process.chdir('/'); } catch { chdirRefused = true; }
        await dir.close();
        parentPort.postMessage({ out, chdirRefused });
      });
    `;
    const w = new Worker(code, { eval: true, workerData: { dist, root: path.join(T, 'root'), paths: PATHS } });
    const got = await new Promise<{ out: string[]; chdirRefused: boolean }>((resolve, reject) => {
      w.once('message', resolve);
      w.once('error', reject);
    });
    await w.terminate();
    expect(got.chdirRefused).toBe(true);
    const ino = (p: string) => String(fs.lstatSync(path.join(T, 'root', p), { bigint: true }).ino);
    expect(got.out).toEqual([
      ino('ses_a'),
      ino('ses_a/trace.jsonl'),
      `${ino('ses_link')} link`,
      ino('plain'),
      'none',
      'none',
      'none',
    ]);
  });
});
