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
// A record some process holds open for writing (src/runtime/running.ts `writersHoldingOpen`) is
// never rewritten by any of these: `heldOpenBy` answers who (the callers skip and report it with
// `record_held_open` before anything is logged or held), and the rewrite itself checks again
// right before it renames (HeldOpenError, src/runtime/staged-rewrite.ts); the measuring twins
// throw the same error, so a dry run reports what a real run would. A
// truncation's outcome says how far the old file was carried (`carriedTo`) and who still held the
// replaced file when the rewrite stopped waiting (`heldBy`): nothing claims more than was checked.
import type { FileHandle } from 'node:fs/promises';
import { HeldOpenError } from '../errors.js';
import { nextHeader, serializeHeader, type RecordHeader } from './record.js';
import { planKeepNewest, sparseFileError } from './jsonl.js';
import { processesHolding, writersHoldingOpen } from './running.js';
import { identityOf, sameIdentity, syncIo, type BigIntStats, type Dir, type Identity } from '../fsx/safe-fs.js';
import { stagedRewrite } from './staged-rewrite.js';
import { definedOnly } from '../defined.js';

export const RECORD_FILE_MODE = 0o600;

export interface TruncateOutcome {
  dropped: number;
  /** bytes of the dropped lines (every line after the header up to the first kept message) */
  droppedBytes: number;
  kept: number;
  oldestSurvivingId: string;
  lastDroppedId: string;
  bytesBefore: number;
  bytesAfter: number;
  appendedDuring: number;
  reordered: boolean;
  outOfOrder: boolean;
  /** Lines a writer appended during the rewrite that were placed after newer ones (still in the record). */
  outOfOrderLines?: number;
  rounds?: number;
  stillHeld?: boolean;
  /** Processes that still held the replaced file open for writing when the rewrite stopped waiting (RewriteResult.heldBy). */
  heldBy?: number[];
  /** Every byte of the old file before this offset is in the new one, or was dropped (RewriteResult.carriedTo). */
  carriedTo?: number;
}

type Probe = (identity: Identity, ownFd?: number) => Promise<number[]>;

/** Who holds the file open for writing persistently (`opts.heldOpen`, default the watch over /proc). */
function heldOpenProbe(opts: { heldOpen?: Probe }): Probe {
  return opts.heldOpen ?? ((identity, ownFd) => writersHoldingOpen(identity, ownFd));
}

/**
 * The pids that hold `dir/name` open for writing (a descriptor kept across appends; [] when none,
 * after one /proc scan). A file that is no longer the `expect`ed one answers [] (the rewrite that
 * follows finds the change itself). Opens the file as every read here does (never a link or FIFO).
 */
export async function heldOpenBy(
  dir: Dir,
  name: string,
  opts: { expect?: Identity; heldOpen?: Probe } = {},
): Promise<number[]> {
  const { fh, stat } = await dir.openFile(name);
  await using _ = fh;
  if (opts.expect && !sameIdentity(identityOf(stat), opts.expect)) return [];
  return await heldOpenProbe(opts)(identityOf(stat), fh.fd);
}

async function refuseHeldOpen(
  dir: Dir,
  name: string,
  opts: { heldOpen?: Probe },
  stat: BigIntStats,
  fd: number,
): Promise<void> {
  const pids = await heldOpenProbe(opts)(identityOf(stat), fd);
  if (pids.length > 0) throw new HeldOpenError(dir.display(name), pids);
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
  /** Who holds it open for writing persistently (default: `writersHoldingOpen`); injectable for tests. */
  heldOpen?: (identity: Identity, ownFd?: number) => Promise<number[]>;
  /**
   * The undo window: called (real runs only) with the bytes the truncation drops — [from, to) of
   * the open original, every line after the header up to the first kept message — before the
   * rewrite commits (`dir`/`name`: the record, so its inode can be kept by a hard link). Throwing
   * stops the truncation (nothing rewritten).
   */
  keepDropped?: (
    src: FileHandle,
    from: number,
    to: number,
    info: { header: RecordHeader | undefined; dropped: number; dir: Dir; name: string },
  ) => Promise<void>;
}

/** Offset just past the first line's `\n` in [0, limit), or `limit` when there is none. */
export async function firstLineEnd(fh: FileHandle, limit: number): Promise<number> {
  const buf = Buffer.allocUnsafe(64 * 1024);
  for (let pos = 0; pos < limit;) {
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
async function mayTerminate(
  opts: { holders?: (identity: Identity, ownFd?: number) => Promise<number[]> },
  stat: BigIntStats,
  fd: number,
): Promise<boolean> {
  const probe = opts.holders ?? processesHolding;
  if ((await probe(identityOf(stat), fd)).length > 0) return false;
  return syncIo.fstat(fd).size === stat.size;
}

function knownTotalFor(opts: TruncateOptions, stat: BigIntStats): number | undefined {
  const k = opts.known;
  if (!k) return undefined;
  const same =
    sameIdentity(identityOf(stat), k.identity) && Number(stat.size) === k.size && Number(stat.mtimeMs) === k.mtimeMs;
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
function rewriteTarget(
  dir: Dir,
  name: string,
  opts: { expect?: Identity; signal?: AbortSignal; holders?: Probe; heldOpen?: Probe },
) {
  return {
    dir,
    name,
    mode: RECORD_FILE_MODE,
    ...(opts.expect ? { expect: opts.expect } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.holders ? { holders: opts.holders } : {}),
    ...(opts.heldOpen ? { heldOpen: opts.heldOpen } : {}),
  };
}

/**
 * What `truncateRecord` would do to this file now, measured without writing: the same plan
 * (messages dropped and kept, the new header), the sizes before and after.
 */
export async function measureTruncation(
  ctxDir: Dir,
  fileName: string,
  opts: TruncateOptions,
): Promise<TruncateOutcome> {
  const { fh, stat } = await ctxDir.openFile(fileName);
  await using _ = fh;
  const size = Number(stat.size);
  notSparse(stat);
  const p = await planKeepNewest(fh, size, opts.keep, planOpts(opts, stat));
  if (p.dropped === 0) {
    return {
      dropped: 0,
      droppedBytes: 0,
      kept: p.kept,
      oldestSurvivingId: '',
      lastDroppedId: '',
      bytesBefore: size,
      bytesAfter: size,
      appendedDuring: 0,
      reordered: false,
      outOfOrder: false,
    };
  }
  await refuseHeldOpen(ctxDir, fileName, opts, stat, fh.fd);
  const header = serializeHeader(
    nextHeader(p.header, opts.fallbackCapsule, p.dropped, p.oldestSurvivingId, p.lastDroppedId, opts.nowMs),
  );
  const terminate = !p.terminated && (await mayTerminate(opts, stat, fh.fd)) ? 1 : 0;
  return {
    dropped: p.dropped,
    droppedBytes: p.cutOffset - (p.header ? await firstLineEnd(fh, p.cutOffset) : 0),
    kept: p.kept,
    oldestSurvivingId: p.oldestSurvivingId,
    lastDroppedId: p.lastDroppedId,
    bytesBefore: size,
    bytesAfter: Buffer.byteLength(header) + size - p.cutOffset + terminate,
    appendedDuring: 0,
    reordered: false,
    outOfOrder: false,
  };
}

export async function truncateRecord(ctxDir: Dir, fileName: string, opts: TruncateOptions): Promise<TruncateOutcome> {
  let outcome: Omit<TruncateOutcome, 'bytesBefore' | 'bytesAfter' | 'appendedDuring' | 'reordered' | 'outOfOrder'> = {
    dropped: 0,
    droppedBytes: 0,
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
      outcome = {
        dropped: p.dropped,
        droppedBytes: 0,
        kept: p.kept,
        oldestSurvivingId: p.oldestSurvivingId,
        lastDroppedId: p.lastDroppedId,
      };
      if (p.dropped === 0) return undefined;
      const from = p.header ? await firstLineEnd(src, p.cutOffset) : 0;
      outcome.droppedBytes = p.cutOffset - from;
      if (opts.keepDropped)
        await opts.keepDropped(src, from, p.cutOffset, {
          header: p.header,
          dropped: p.dropped,
          dir: ctxDir,
          name: fileName,
        });
      const header = nextHeader(
        p.header,
        opts.fallbackCapsule,
        p.dropped,
        p.oldestSurvivingId,
        p.lastDroppedId,
        opts.nowMs,
      );
      const terminate = !p.terminated && (await mayTerminate(opts, stat, src.fd));
      return {
        prefix: Buffer.from(serializeHeader(header)),
        copyFrom: p.cutOffset,
        ...(terminate ? { suffix: NEWLINE } : {}),
      };
    },
  });
  if (!rw) {
    return {
      ...outcome,
      droppedBytes: 0,
      oldestSurvivingId: '',
      lastDroppedId: '',
      bytesBefore: sizeSeen,
      bytesAfter: sizeSeen,
      appendedDuring: 0,
      reordered: false,
      outOfOrder: false,
    };
  }
  return {
    ...outcome,
    bytesBefore: rw.oldSize,
    bytesAfter: rw.newSize,
    appendedDuring: rw.appendedDuring,
    reordered: rw.reordered,
    outOfOrder: rw.outOfOrder,
    outOfOrderLines: rw.outOfOrderLines,
    rounds: rw.rounds,
    stillHeld: rw.stillHeld,
    heldBy: rw.heldBy,
    carriedTo: rw.carriedTo,
  };
}

export interface RepairOutcome {
  /** True when the torn tail was (measureTornTail: would be) terminated. */
  repaired: boolean;
  /**
   * Why not, when not: `terminated` (nothing torn), `held` (a process was writing to it at that
   * instant, or it grew since it was opened: the line may be mid-write).
   */
  why?: 'terminated' | 'held';
  /** With `held`: the processes seen writing to it (empty when it had grown and none was seen). */
  pids?: number[];
  bytesBefore: number;
}

type RepairOptions = { expect?: Identity; signal?: AbortSignal; holders?: Probe; heldOpen?: Probe };

type TornTail = { why: 'terminated' | 'held'; pids?: number[] } | undefined;

/** Whether a torn last line needs its `\n` (undefined), and why not otherwise. */
async function tornTailDecision(
  opts: RepairOptions,
  fh: { fd: number; read: (b: Buffer, o: number, l: number, p: number) => Promise<{ bytesRead: number }> },
  size: number,
  stat: BigIntStats,
): Promise<TornTail> {
  if (size === 0) return { why: 'terminated' };
  const last = Buffer.alloc(1);
  const { bytesRead } = await fh.read(last, 0, 1, size - 1);
  if (bytesRead === 1 && last[0] === 0x0a) return { why: 'terminated' };
  const pids = await (opts.holders ?? processesHolding)(identityOf(stat), fh.fd);
  if (pids.length > 0) return { why: 'held', pids };
  return syncIo.fstat(fh.fd).size === stat.size ? undefined : { why: 'held', pids: [] };
}

/** What `repairTornTail` would do to this file now, decided the same way, writing nothing. */
export async function measureTornTail(ctxDir: Dir, fileName: string, opts: RepairOptions): Promise<RepairOutcome> {
  const { fh, stat } = await ctxDir.openFile(fileName);
  await using _ = fh;
  if (opts.expect && !sameIdentity(identityOf(stat), opts.expect))
    return { repaired: false, why: 'terminated', bytesBefore: Number(stat.size) };
  const not = await tornTailDecision(opts, fh, Number(stat.size), stat);
  if (!not) await refuseHeldOpen(ctxDir, fileName, opts, stat, fh.fd);
  return not
    ? { repaired: false, ...not, bytesBefore: Number(stat.size) }
    : { repaired: true, bytesBefore: Number(stat.size) };
}

/**
 * Terminates a torn last line with `\n` through the staged rewrite (so a line a writer appends
 * meanwhile lands after the `\n`, never glued to the torn bytes), when no process holds the file
 * open for writing. A file that is empty or ends with `\n` is not touched.
 */
export async function repairTornTail(ctxDir: Dir, fileName: string, opts: RepairOptions): Promise<RepairOutcome> {
  let not: TornTail;
  let before = 0;
  const rw = await stagedRewrite({
    ...rewriteTarget(ctxDir, fileName, opts),
    stage: async (src, size, stat) => {
      before = size;
      not = await tornTailDecision(opts, src, size, stat);
      return not ? undefined : { prefix: Buffer.alloc(0), copyFrom: 0, suffix: NEWLINE };
    },
  });
  return rw ? { repaired: true, bytesBefore: before } : { repaired: false, ...(not ?? {}), bytesBefore: before };
}
