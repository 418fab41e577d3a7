// Truncation of one conversation record to its newest N message lines — the single
// implementation used by the sweep (max_messages) and by `conversation truncate`.
// Guarantees (docs/design.md §R5): surviving lines are kept byte for byte from the first kept message
// to EOF (plus whatever writers append meanwhile, docs/design.md §3); the header is rewritten with
// `capsule` and `created_ms` preserved (or `fallbackCapsule`/now for a headerless record),
// `dropped` cumulative, in the exact key order; the file ends up 0600. A record already at or
// under N is not touched at all (byte-identical), nor is one that looks mostly holes now
// (`sparse_file`, docs/limits.md). `measureTruncation` computes the same outcome and writes nothing.
// A torn (unterminated) last line that survives is terminated with `\n`, as the runtime's
// rewrite does, but only when no process holds the record open for writing (a /proc scan): a
// writer may be in the middle of that very line. CRLF endings are kept byte for byte (the runtime
// strips the `\r`; see README "Where murmur-gc differs from the runtime").
// `repairTornTail` is the same termination on its own (sweep action `repair_torn_tail`): the
// runtime's next append (one `write_all` per line, no newline check) would otherwise be glued to
// the torn bytes and lost to every reader; `measureTornTail` decides it the same way, writing nothing.
import type { FileHandle } from 'node:fs/promises';
import { nextHeader, serializeHeader, type RecordHeader } from './record.js';
import { planKeepNewest, sparseFileError } from './jsonl.js';
import { processesHolding } from './running.js';
import { identityOf, sameIdentity, syncIo, type BigIntStats, type Dir, type Identity } from '../fsx/safe-fs.js';
import { stagedRewrite } from './staged-rewrite.js';
import { definedOnly } from '../defined.js';

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
  /** Lines a writer appended during the rewrite that were placed after newer ones (none lost). */
  outOfOrderLines?: number;
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
  expect?: Identity;
  signal?: AbortSignal;
  /** Who holds a file open for writing (default: the /proc scan); injectable for tests. */
  holders?: (identity: Identity, ownFd?: number) => Promise<number[]>;
  /**
   * The undo window: called (real runs only) with the bytes the truncation drops — [from, to) of
   * the open original, every line after the header up to the first kept message — before the
   * rewrite commits (`dir`/`name`: the record, so its inode can be kept by a hard link). Throwing
   * stops the truncation (nothing rewritten).
   */
  keepDropped?: (src: FileHandle, from: number, to: number, info: { header: RecordHeader | undefined; dropped: number; dir: Dir; name: string }) => Promise<void>;
}

/** Offset just past the first line's `\n` in [0, limit), or `limit` when there is none. */
export async function firstLineEnd(fh: FileHandle, limit: number): Promise<number> {
  const buf = Buffer.allocUnsafe(64 * 1024);
  for (let pos = 0; pos < limit; ) {
    const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, limit - pos), pos);
    if (bytesRead === 0) break;
    const nl = buf.subarray(0, bytesRead).indexOf(10);
    if (nl >= 0) return pos + nl + 1;
    pos += bytesRead;
  }
  return limit;
}

const NEWLINE = Buffer.from('\n');

/**
 * True when a kept torn tail may be terminated: no other process holds the file open for writing
 * AND the file has not grown past the snapshot. (A writer may have finished the very line we saw
 * torn — the kernel can expose a write part-way — and closed the file before the scan: its bytes
 * are then already beyond the snapshot, and the line is not torn at all.)
 */
async function mayTerminate(opts: { holders?: (identity: Identity, ownFd?: number) => Promise<number[]> }, stat: BigIntStats, fd: number): Promise<boolean> {
  const probe = opts.holders ?? processesHolding;
  if ((await probe(identityOf(stat), fd)).length > 0) return false;
  return syncIo.fstat(fd).size === stat.size;
}

function knownTotalFor(opts: TruncateOptions, stat: BigIntStats): number | undefined {
  const k = opts.known;
  if (!k) return undefined;
  const same = sameIdentity(identityOf(stat), k.identity) && Number(stat.size) === k.size && Number(stat.mtimeMs) === k.mtimeMs;
  return same ? k.messages : undefined;
}

/** A record that looks mostly holes now (it may have grown since it was counted) is not planned: `sparse_file`. */
function notSparse(stat: BigIntStats): void {
  const sparse = sparseFileError(stat);
  if (sparse) throw sparse;
}

function planOpts(opts: TruncateOptions, stat: BigIntStats): { signal?: AbortSignal; knownTotal?: number } {
  const knownTotal = knownTotalFor(opts, stat);
  return { ...(opts.signal ? { signal: opts.signal } : {}), ...definedOnly({ knownTotal }) };
}

/** The staged-rewrite options both rewrites here share: the record, its 0600 mode, the checks. */
function rewriteTarget(dir: Dir, name: string, opts: { expect?: Identity; signal?: AbortSignal; holders?: (identity: Identity, ownFd?: number) => Promise<number[]> }) {
  return {
    dir,
    name,
    mode: RECORD_FILE_MODE,
    ...(opts.expect ? { expect: opts.expect } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.holders ? { holders: opts.holders } : {}),
  };
}

/**
 * What `truncateRecord` would do to this file now, measured without writing: the same plan
 * (messages dropped and kept, the new header), the sizes before and after.
 */
export async function measureTruncation(ctxDir: Dir, fileName: string, opts: TruncateOptions): Promise<TruncateOutcome> {
  const { fh, stat } = await ctxDir.openFile(fileName);
  try {
    const size = Number(stat.size);
    notSparse(stat);
    const p = await planKeepNewest(fh, size, opts.keep, planOpts(opts, stat));
    if (p.dropped === 0) {
      return { dropped: 0, kept: p.kept, oldestSurvivingId: '', lastDroppedId: '', bytesBefore: size, bytesAfter: size, appendedDuring: 0, reordered: false, outOfOrder: false };
    }
    const header = serializeHeader(nextHeader(p.header, opts.fallbackCapsule, p.dropped, p.oldestSurvivingId, p.lastDroppedId, opts.nowMs));
    const terminate = !p.terminated && (await mayTerminate(opts, stat, fh.fd)) ? 1 : 0;
    return {
      dropped: p.dropped,
      kept: p.kept,
      oldestSurvivingId: p.oldestSurvivingId,
      lastDroppedId: p.lastDroppedId,
      bytesBefore: size,
      bytesAfter: Buffer.byteLength(header) + size - p.cutOffset + terminate,
      appendedDuring: 0,
      reordered: false,
      outOfOrder: false,
    };
  } finally {
    await fh.close();
  }
}

export async function truncateRecord(ctxDir: Dir, fileName: string, opts: TruncateOptions): Promise<TruncateOutcome> {
  let outcome: Omit<TruncateOutcome, 'bytesBefore' | 'bytesAfter' | 'appendedDuring' | 'reordered' | 'outOfOrder'> = {
    dropped: 0,
    kept: 0,
    oldestSurvivingId: '',
    lastDroppedId: '',
  };
  let sizeSeen = 0;
  const rw = await stagedRewrite({
    ...rewriteTarget(ctxDir, fileName, opts),
    stage: async (src, size, stat) => {
      sizeSeen = size;
      notSparse(stat);
      const p = await planKeepNewest(src, size, opts.keep, planOpts(opts, stat));
      outcome = { dropped: p.dropped, kept: p.kept, oldestSurvivingId: p.oldestSurvivingId, lastDroppedId: p.lastDroppedId };
      if (p.dropped === 0) return undefined;
      if (opts.keepDropped) await opts.keepDropped(src, p.header ? await firstLineEnd(src, p.cutOffset) : 0, p.cutOffset, { header: p.header, dropped: p.dropped, dir: ctxDir, name: fileName });
      const header = nextHeader(p.header, opts.fallbackCapsule, p.dropped, p.oldestSurvivingId, p.lastDroppedId, opts.nowMs);
      const terminate = !p.terminated && (await mayTerminate(opts, stat, src.fd));
      return { prefix: Buffer.from(serializeHeader(header)), copyFrom: p.cutOffset, ...(terminate ? { suffix: NEWLINE } : {}) };
    },
  });
  if (!rw) {
    return { ...outcome, oldestSurvivingId: '', lastDroppedId: '', bytesBefore: sizeSeen, bytesAfter: sizeSeen, appendedDuring: 0, reordered: false, outOfOrder: false };
  }
  return { ...outcome, bytesBefore: rw.oldSize, bytesAfter: rw.newSize, appendedDuring: rw.appendedDuring, reordered: rw.reordered, outOfOrder: rw.outOfOrder, outOfOrderLines: rw.outOfOrderLines, rounds: rw.rounds, stillHeld: rw.stillHeld };
}

export interface RepairOutcome {
  /** True when the torn tail was (measureTornTail: would be) terminated. */
  repaired: boolean;
  /** Why not, when not: `terminated` (nothing torn), `held` (a writer holds it open). */
  why?: 'terminated' | 'held';
  bytesBefore: number;
}

type RepairOptions = { expect?: Identity; signal?: AbortSignal; holders?: (identity: Identity, ownFd?: number) => Promise<number[]> };

/** Whether a torn last line needs its `\n` (undefined), and why not otherwise. */
async function tornTailDecision(opts: RepairOptions, fh: { fd: number; read: (b: Buffer, o: number, l: number, p: number) => Promise<{ bytesRead: number }> }, size: number, stat: BigIntStats): Promise<'terminated' | 'held' | undefined> {
  if (size === 0) return 'terminated';
  const last = Buffer.alloc(1);
  const { bytesRead } = await fh.read(last, 0, 1, size - 1);
  if (bytesRead === 1 && last[0] === 0x0a) return 'terminated';
  return (await mayTerminate(opts, stat, fh.fd)) ? undefined : 'held';
}

/** What `repairTornTail` would do to this file now, decided the same way, writing nothing. */
export async function measureTornTail(ctxDir: Dir, fileName: string, opts: RepairOptions): Promise<RepairOutcome> {
  const { fh, stat } = await ctxDir.openFile(fileName);
  try {
    if (opts.expect && !sameIdentity(identityOf(stat), opts.expect)) return { repaired: false, why: 'terminated', bytesBefore: Number(stat.size) };
    const why = await tornTailDecision(opts, fh, Number(stat.size), stat);
    return why ? { repaired: false, why, bytesBefore: Number(stat.size) } : { repaired: true, bytesBefore: Number(stat.size) };
  } finally {
    await fh.close();
  }
}

/**
 * Terminates a torn last line with `\n` through the staged rewrite (so a line a writer appends
 * meanwhile lands after the `\n`, never glued to the torn bytes), when no process holds the file
 * open for writing. A file that is empty or ends with `\n` is not touched.
 */
export async function repairTornTail(ctxDir: Dir, fileName: string, opts: RepairOptions): Promise<RepairOutcome> {
  let why: 'terminated' | 'held' | undefined;
  let before = 0;
  const rw = await stagedRewrite({
    ...rewriteTarget(ctxDir, fileName, opts),
    stage: async (src, size, stat) => {
      before = size;
      why = await tornTailDecision(opts, src, size, stat);
      return why ? undefined : { prefix: Buffer.alloc(0), copyFrom: 0, suffix: NEWLINE };
    },
  });
  return rw ? { repaired: true, bytesBefore: before } : { repaired: false, ...(why ? { why } : {}), bytesBefore: before };
}
