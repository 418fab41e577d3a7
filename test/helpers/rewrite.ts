// Shared set-ups for the staged-rewrite tests (test/runtime/staged-rewrite.test.ts and
// test/reliability/rewrite-writer.test.ts): one rewrite of `<dir>/conversation.jsonl`, and a
// writer that keeps the original open and lands a line whenever holders are looked for.
import * as fs from 'node:fs';
import { Dir } from '../../src/fsx/safe-fs.js';
import { stagedRewrite, type RewriteResult, type StagedRewriteOptions } from '../../src/runtime/staged-rewrite.js';

export const RECORD = 'conversation.jsonl';

/**
 * Rewrites `<dirPath>/conversation.jsonl` (mode 0600) keeping everything from byte 2 on (a file
 * starting with a one-byte line loses that line) behind `prefix`; `hooks` override any option
 * (holders default to "nobody else holds it").
 */
export async function rewriteFromByte2(
  dirPath: string,
  hooks: Partial<Omit<StagedRewriteOptions, 'dir' | 'name'>> = {},
  prefix = '',
): Promise<RewriteResult | undefined> {
  const dir = await Dir.open(dirPath);
  try {
    return await stagedRewrite({
      dir,
      name: RECORD,
      mode: 0o600,
      stage: async () => ({ prefix: Buffer.from(prefix), copyFrom: 2 }),
      holders: async () => [],
      ...hooks,
    });
  } finally {
    await dir.close();
  }
}

/**
 * A writer holding the file at `file` open (its original inode) that appends `late<i>\n` to it
 * at every third look for holders, up to `max` lines, and says it holds the file exactly then:
 * each drain of a rewrite gets one more late line, round after round. Close it with `close()`.
 */
export function lateLineWriter(
  file: string,
  max: number,
): { holders: NonNullable<StagedRewriteOptions['holders']>; appended: () => number; close: () => void } {
  const fd = fs.openSync(file, 'a');
  const ino = fs.fstatSync(fd, { bigint: true }).ino;
  let appended = 0;
  let looks = 0;
  return {
    holders: async (identity) => {
      if (identity.ino !== ino) return [];
      if (looks++ % 3 === 0 && appended < max) {
        fs.writeSync(fd, `late${appended++}\n`);
        return [process.pid];
      }
      return [];
    },
    appended: () => appended,
    close: () => fs.closeSync(fd),
  };
}
