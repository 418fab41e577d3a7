// Truncation of one conversation record to its newest N message lines — the single
// implementation used by the sweep (max_messages) and by `conversation truncate`.
// Guarantees (reference §5.3): surviving lines are kept byte for byte from the first kept message
// to EOF (plus whatever writers append meanwhile, DESIGN §2.2); the header is rewritten with
// `capsule` and `created_ms` preserved (or `fallbackCapsule`/now for a headerless record),
// `dropped` cumulative, in the exact key order; the file ends up 0600. A record already at or
// under N is not touched at all (byte-identical). Dry runs compute the same outcome, write nothing.
import { nextHeader, serializeHeader } from '../murmur/record.js';
import { planKeepNewest } from './jsonl.js';
import { identityOf, sameIdentity, type BigIntStats, type Dir, type Identity } from './safe-fs.js';
import { stagedRewrite } from './staged-rewrite.js';

export const RECORD_FILE_MODE = 0o600;

export interface TruncateOutcome {
  dropped: number;
  kept: number;
  oldestSurvivingId: string;
  lastDroppedId: string;
  bytesBefore: number;
  bytesAfter: number;
  appendedDuring: number;
  reordered: boolean;
  outOfOrder: boolean;
  rounds?: number;
  stillHeld?: boolean;
}

export interface TruncateOptions {
  keep: number;
  /**
   * The message count a scan of this very file found, with the size/identity it saw; used to skip
   * re-counting the dropped prefix when the file is unchanged (same dev/ino, size and mtime).
   */
  known?: { messages: number; size: number; mtimeMs: number; identity: Identity };
  fallbackCapsule: string;
  nowMs: number;
  dryRun: boolean;
  expect?: Identity;
  signal?: AbortSignal;
}

function knownTotalFor(opts: TruncateOptions, stat: BigIntStats): number | undefined {
  const k = opts.known;
  if (!k) return undefined;
  const same = sameIdentity(identityOf(stat), k.identity) && Number(stat.size) === k.size && Number(stat.mtimeMs) === k.mtimeMs;
  return same ? k.messages : undefined;
}

function planOpts(opts: TruncateOptions, stat: BigIntStats): { signal?: AbortSignal; knownTotal?: number } {
  const knownTotal = knownTotalFor(opts, stat);
  return { ...(opts.signal ? { signal: opts.signal } : {}), ...(knownTotal !== undefined ? { knownTotal } : {}) };
}

export async function truncateRecord(ctxDir: Dir, fileName: string, opts: TruncateOptions): Promise<TruncateOutcome> {
  if (opts.dryRun) {
    const { fh, stat } = await ctxDir.openFile(fileName);
    try {
      const size = Number(stat.size);
      const p = await planKeepNewest(fh, size, opts.keep, planOpts(opts, stat));
      if (p.dropped === 0) {
        return { dropped: 0, kept: p.kept, oldestSurvivingId: '', lastDroppedId: '', bytesBefore: size, bytesAfter: size, appendedDuring: 0, reordered: false, outOfOrder: false };
      }
      const header = serializeHeader(nextHeader(p.header, opts.fallbackCapsule, p.dropped, p.oldestSurvivingId, p.lastDroppedId, opts.nowMs));
      return {
        dropped: p.dropped,
        kept: p.kept,
        oldestSurvivingId: p.oldestSurvivingId,
        lastDroppedId: p.lastDroppedId,
        bytesBefore: size,
        bytesAfter: Buffer.byteLength(header) + size - p.cutOffset,
        appendedDuring: 0,
        reordered: false,
        outOfOrder: false,
      };
    } finally {
      await fh.close();
    }
  }
  let outcome: Omit<TruncateOutcome, 'bytesBefore' | 'bytesAfter' | 'appendedDuring' | 'reordered' | 'outOfOrder'> = {
    dropped: 0,
    kept: 0,
    oldestSurvivingId: '',
    lastDroppedId: '',
  };
  let sizeSeen = 0;
  const rw = await stagedRewrite({
    dir: ctxDir,
    name: fileName,
    mode: RECORD_FILE_MODE,
    ...(opts.expect ? { expect: opts.expect } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
    stage: async (src, size, stat) => {
      sizeSeen = size;
      const p = await planKeepNewest(src, size, opts.keep, planOpts(opts, stat));
      outcome = { dropped: p.dropped, kept: p.kept, oldestSurvivingId: p.oldestSurvivingId, lastDroppedId: p.lastDroppedId };
      if (p.dropped === 0) return undefined;
      const header = nextHeader(p.header, opts.fallbackCapsule, p.dropped, p.oldestSurvivingId, p.lastDroppedId, opts.nowMs);
      return { prefix: Buffer.from(serializeHeader(header)), copyFrom: p.cutOffset };
    },
  });
  if (!rw) {
    return { ...outcome, oldestSurvivingId: '', lastDroppedId: '', bytesBefore: sizeSeen, bytesAfter: sizeSeen, appendedDuring: 0, reordered: false, outOfOrder: false };
  }
  return { ...outcome, bytesBefore: rw.oldSize, bytesAfter: rw.newSize, appendedDuring: rw.appendedDuring, reordered: rw.reordered, outOfOrder: rw.outOfOrder, rounds: rw.rounds, stillHeld: rw.stillHeld };
}
