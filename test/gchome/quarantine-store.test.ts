// Holding a truncation's dropped lines as the record's old inode (src/gchome/quarantine-store.ts):
// the cut that follows the commit never removes a byte the new record does not hold.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Dir } from '../../src/fsx/safe-fs.js';
import { holdDropped, trimHeld } from '../../src/gchome/quarantine-store.js';
import type { ItemMeta } from '../../src/gchome/quarantine-layout.js';
import { rmrf, tempDir } from '../helpers/fixtures.js';
import { startHeldWriter } from '../reliability/writer.js';

let T: string;
beforeEach(() => {
  T = tempDir('qstore');
});
afterEach(() => rmrf(T));

const RECORD = 'conversation.jsonl';
const OLD = 'H\nd1\nd2\nk1\nk2\n'; // header, two dropped lines [2, 8), two kept lines

/** Holds [2, 8) of a fresh record as its old inode, then renames a rewritten record over it. */
async function heldTruncation(): Promise<{
  q: Dir;
  rec: Dir;
  entry: string;
  payload: string;
  trim: (carried: number | undefined) => Promise<number>;
  close: () => Promise<void>;
}> {
  fs.mkdirSync(path.join(T, 'q'));
  fs.mkdirSync(path.join(T, 'ctx'));
  fs.writeFileSync(path.join(T, 'ctx', RECORD), OLD);
  const q = await Dir.open(path.join(T, 'q'));
  const rec = await Dir.open(path.join(T, 'ctx'));
  const { fh } = await rec.openFile(RECORD);
  const meta: ItemMeta = {
    kind: 'truncation',
    store: 's',
    context: 'ctx',
    removed_ms: 1,
    until_ms: Date.now() + 60_000,
    reason: 'max_messages',
    run: 'ses_x',
    messages: 2,
    prior: null,
    state: 'staged',
    at_ms: '1',
  };
  const held = await holdDropped(q, meta, { dir: rec, name: RECORD }, fh, 2, 8);
  await fh.close();
  // The rewrite's rename: the record's name now holds the new file; the item keeps the old inode.
  fs.writeFileSync(path.join(T, 'ctx', '.new'), 'H2\nk1\nk2\n');
  fs.renameSync(path.join(T, 'ctx', '.new'), path.join(T, 'ctx', RECORD));
  return {
    q,
    rec,
    entry: held.entry,
    payload: path.join(T, 'q', held.entry, held.payload),
    trim: (carried) => trimHeld(q, held.entry, held.linked!, 8, { dir: rec, name: RECORD }, carried),
    close: async () => {
      await q.close();
      await rec.close();
    },
  };
}

describe('trimHeld', () => {
  it('cuts the old inode to its dropped lines when the new record holds everything after them', async () => {
    const h = await heldTruncation();
    try {
      expect(await h.trim(OLD.length)).toBe(0);
      expect(fs.readFileSync(h.payload, 'utf8')).toBe('H\nd1\nd2\n');
    } finally {
      await h.close();
    }
  });

  it('never cuts an old inode that grew past what was carried into the new record, and says how much it holds beyond', async () => {
    const h = await heldTruncation();
    try {
      // A process still writing to the replaced file after the rewrite's last copy of it.
      fs.appendFileSync(h.payload, 'late1\nlate2\n');
      expect(await h.trim(OLD.length)).toBe(12);
      expect(fs.readFileSync(h.payload, 'utf8')).toBe(`${OLD}late1\nlate2\n`);
    } finally {
      await h.close();
    }
  });

  it('cuts nothing when it is not known how far the old inode was carried, or a process holds it open for writing', async () => {
    const h = await heldTruncation();
    try {
      expect(await h.trim(undefined)).toBe(0);
      expect(fs.readFileSync(h.payload, 'utf8')).toBe(OLD);
      // Not grown, but another process holds it for writing: it could append right after the look.
      const w = startHeldWriter(h.payload, 0);
      try {
        await w.opened;
        expect(await h.trim(OLD.length)).toBe(0);
        expect(fs.readFileSync(h.payload, 'utf8')).toBe(OLD);
      } finally {
        await w.stop();
      }
      expect(await h.trim(OLD.length)).toBe(0);
      expect(fs.readFileSync(h.payload, 'utf8')).toBe('H\nd1\nd2\n');
    } finally {
      await h.close();
    }
  });
});
