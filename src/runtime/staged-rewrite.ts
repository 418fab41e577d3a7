// The append-safe staged rewrite of a file that unlocking writers keep appending to (docs/design.md §3).
// Guarantees:
// - The new contents are built in `.<name>.<pid>.<uuidv7>.tmp` in the same directory (mode
//   0600, O_EXCL|O_NOFOLLOW), fsync'ed, then renamed over the original: a crash leaves the
//   original or the new file, never a partial one (the temp is debris a later sweep removes).
// - The commit window (last catch-up copy → rename) holds no fsync or anything else that can
//   block: a writer appending meanwhile still lands in the old inode, so the window is kept to
//   copies and a rename. It copies the followed file's growth until an fstat finds none and then
//   renames at once (the append descriptor is opened before it, a partial line is found from the
//   bytes in memory): a line that arrives while the window copies is copied too, so the only
//   instant a line can still reach the old inode unseen is the rename itself. (A window that
//   copied once and then did more syscalls left every line arriving in them to a corrective
//   round; at 6 000 lines/s a third of the rounds raced so, and a run of six such rounds ended
//   with late lines appended after newer ones.) Durability: the temp is fsync'ed before the
//   window and again right after the rename (the bytes copied in the window), before the
//   directory fsync and before success is reported. fsync is injectable (`fsync` option) so
//   tests can make it slow.
// - A file some process holds open for writing (a descriptor kept across appends: the same pid at
//   every look of a short watch, src/runtime/running.ts `writersHoldingOpen`) is never rewritten:
//   what it writes after the rename would land in the replaced inode, which nothing reads again.
//   It is checked right before the commit window (its callers look earlier too, before they log or
//   hold anything); held, the rewrite stops with HeldOpenError (`record_held_open`, naming the
//   pids) and the file is left as it is. (The runtime opens, appends and closes per line: never
//   held so.)
// - No line appended while it runs is lost: bytes appended to the original after the snapshot are
//   copied before the rename; the last of them are copied in a synchronous window that ends with
//   the rename; right after it (nothing awaited in between), and again once no other process
//   holds the old inode open any more (a /proc scan, bounded wait), bytes that reached the old
//   inode are carried into the new file. A process that opened the file in the instant between
//   the last check and the rename and keeps holding the replaced inode is waited for at most
//   HELD_AFTER_RENAME_MS; then what it has written is carried, it is named in `heldBy`, and what
//   it writes later is not in the new file — the result never claims otherwise. All waiting of one
//   rewrite is bounded by DRAIN_LIMIT_MS together; `carriedTo` says how far the original's bytes
//   are all in the new file.
// - Nothing is ever written to the live file after a rename: late bytes of a replaced inode are
//   only placed inside a new temp file — a corrective staged rewrite of the new file (its own
//   bytes, then the late bytes, then the lines writers appended to it, then whatever arrives
//   meanwhile), repeated while writers keep racing the renames (bounded). Only if that bound is
//   reached (or the live file is itself held open) are the last late bytes appended (O_APPEND:
//   never overwriting) and the result says `outOfOrder` — every late byte read is in the new file
//   either way.
// - If the original was replaced (different dev/ino) before the commit, nothing is renamed and
//   the temp file is removed (`concurrent_append`).
// - A write error of the temp (ENOSPC…) names the temp's path.
// - Memory is bounded by one copy buffer (plus late bytes, which are a writer's last lines).
import { failpoint } from '../failpoint.js';
import { Codes, GcError, HeldOpenError, withPath } from '../errors.js';
import { mintId } from './ids.js';
import { processesHolding, writersHoldingOpen } from './running.js';
import {
  sameIdentity,
  identityOf,
  syncIo,
  type BigIntStats,
  type Dir,
  type FileHandle,
  type Identity,
} from '../fsx/safe-fs.js';

const COPY_CHUNK = 1 << 20;

export interface StagedContent {
  /** Bytes written first (e.g. the new header line). */
  prefix: Buffer;
  /** Byte ranges of other open files written right after `prefix` (a restore's dropped lines). */
  insert?: { fh: FileHandle; from: number; to: number }[];
  /** Offset in the original from which every byte is kept verbatim. */
  copyFrom: number;
  /** Bytes written right after the snapshot's kept range, before anything appended meanwhile. */
  suffix?: Buffer;
}

export interface RewriteResult {
  oldSize: number;
  newSize: number;
  /** Bytes appended by writers while the rewrite ran (all carried into the new file). */
  appendedDuring: number;
  /** True when late bytes of the old inode had to be put back in order by a corrective rewrite. */
  reordered: boolean;
  /** True when some late bytes could only be appended after lines written later (they are in the new file). */
  outOfOrder: boolean;
  /** How many lines were so appended (placed after lines that may be newer); 0 when in order. */
  outOfOrderLines: number;
  /** Renames done (1 + corrective rounds). */
  rounds: number;
  /** A process still held a replaced file open when we stopped waiting for it. */
  stillHeld: boolean;
  /**
   * The processes that still held a replaced file open for writing when the wait for them ended:
   * what they write there from now on is not in the new file. Empty when every replaced file was
   * let go (then every byte it got is in the new file).
   */
  heldBy: number[];
  /** Every byte of the original file before this offset is in the new file (or was dropped by `stage`). */
  carriedTo: number;
}

export function tempNameFor(name: string): string {
  return `.${name}.${process.pid}.${mintId('ses_').slice(4)}.tmp`;
}

/** Matches temp files of a staged rewrite of `name` (ours or the runtime's): `.<name>.<pid>.<hex>.tmp`. */
export function parseTempName(entry: string, name: string): { pid: number } | undefined {
  const prefix = `.${name}.`;
  if (!entry.startsWith(prefix) || !entry.endsWith('.tmp')) return undefined;
  const mid = entry.slice(prefix.length, -'.tmp'.length);
  const m = /^(\d+)\.[0-9a-f]+$/.exec(mid);
  if (!m || m[1] === undefined) return undefined;
  return { pid: Number.parseInt(m[1], 10) };
}

type Piece = Buffer | { fh: FileHandle; from: number; to: number };

async function writeAll(dst: FileHandle, buf: Buffer, pos: number): Promise<void> {
  let w = 0;
  while (w < buf.length) {
    const { bytesWritten } = await dst.write(buf, w, buf.length - w, pos + w);
    w += bytesWritten;
  }
}

/** Copies [from, to); `last` is the last byte copied (undefined when none was). */
async function copyRange(
  src: FileHandle,
  dst: FileHandle,
  from: number,
  to: number,
  dstPos: number,
  buf: Buffer,
  signal?: AbortSignal,
): Promise<{ n: number; last: number | undefined }> {
  let pos = from;
  let out = dstPos;
  let last: number | undefined;
  while (pos < to) {
    signal?.throwIfAborted();
    const { bytesRead } = await src.read(buf, 0, Math.min(buf.length, to - pos), pos);
    if (bytesRead === 0) break;
    await writeAll(dst, buf.subarray(0, bytesRead), out);
    last = buf[bytesRead - 1];
    pos += bytesRead;
    out += bytesRead;
  }
  return { n: out - dstPos, last };
}

/** Copies [from, to) synchronously; `last` is the last byte copied (undefined when none was). */
function copyRangeSync(
  srcFd: number,
  dstFd: number,
  from: number,
  to: number,
  dstPos: number,
  buf: Buffer,
): { n: number; last: number | undefined } {
  let pos = from;
  let out = dstPos;
  let last: number | undefined;
  while (pos < to) {
    const n = syncIo.read(srcFd, buf, pos, Math.min(buf.length, to - pos));
    if (n === 0) break;
    let w = 0;
    while (w < n) w += syncIo.write(dstFd, w === 0 ? buf : buf.subarray(w), n - w, out + w);
    last = buf[n - 1];
    pos += n;
    out += n;
  }
  return { n: out - dstPos, last };
}

/** Read [from, current size) of a file synchronously (a writer's late lines: small). */
export function readTailSync(fd: number, from: number): Buffer {
  const size = Number(syncIo.fstat(fd).size);
  if (size <= from) return Buffer.alloc(0);
  const out = Buffer.alloc(size - from);
  let got = 0;
  while (got < out.length) {
    const n = syncIo.read(fd, out.subarray(got), from + got, out.length - got);
    if (n === 0) break;
    got += n;
  }
  return out.subarray(0, got);
}

/**
 * Offset just past the last '\n' of dst[from, to) — `to` itself when the range is empty or ends
 * with '\n'; `from` when the range holds no '\n' at all (nothing whole was copied).
 */
function lastLineEndSync(fd: number, from: number, to: number, buf: Buffer): number | undefined {
  if (to <= from) return undefined;
  let end = to;
  while (end > from) {
    const start = Math.max(from, end - Math.min(buf.length, 64 * 1024));
    const n = syncIo.read(fd, buf, start, end - start);
    const at = buf.subarray(0, n).lastIndexOf(10);
    if (at >= 0) return start + at + 1;
    end = start;
  }
  return from;
}

/** One O_APPEND write of all of `buf` (the kernel places it at EOF: it can never overwrite). */
function appendSync(appendFd: number, buf: Buffer): void {
  let w = 0;
  while (w < buf.length) w += syncIo.appendWrite(appendFd, buf.subarray(w));
}

interface Round {
  dst: FileHandle;
  appendFd: number;
  /** Bytes of the new file that are ours, in order (everything beyond was appended by writers). */
  ours: number;
  /** How far the followed source (the file replaced) was copied. */
  copiedTo: number;
  /** Bytes the followed source got after the last copy (read right after the rename). */
  pending: Buffer | undefined;
  appended: number;
}

interface RoundInput {
  dir: Dir;
  name: string;
  mode: number;
  pieces: Piece[];
  /** The file being replaced, which writers may still be appending to. */
  follow: { fh: FileHandle; from: number; identity: Identity };
  signal?: AbortSignal | undefined;
  beforeCommit?: (() => Promise<void>) | undefined;
  inWindow?: ((copy: number) => void) | undefined;
  fsync: (fd: number) => Promise<void>;
  /** Who holds the followed file open for writing, asked right before the window; any → HeldOpenError. */
  heldOpen: (identity: Identity, ownFd?: number) => Promise<number[]>;
}

/** Copies the window makes at most before it renames anyway (a writer outpacing a copy). */
const WINDOW_COPIES = 64;

/** Build a temp file from `pieces` + the followed file's growth, and rename it over `name`. */
async function commitRound(r: RoundInput, onTemp: (tmpName: string, dst: FileHandle) => void): Promise<Round> {
  const { dir, name } = r;
  const tmpName = tempNameFor(name);
  const dst = await dir.createExclusive(tmpName, r.mode);
  onTemp(tmpName, dst);
  const buf = Buffer.allocUnsafe(COPY_CHUNK);
  let out = 0;
  let copiedTo = r.follow.from;
  /** The last byte copied from the followed file (a newline: no line of it is torn). */
  let lastByte: number | undefined;
  try {
    for (const p of r.pieces) {
      if (Buffer.isBuffer(p)) {
        await writeAll(dst, p, out);
        out += p.length;
      } else {
        out += (await copyRange(p.fh, dst, p.from, p.to, out, buf, r.signal)).n;
      }
    }
    for (let round = 0; round < 8; round++) {
      const now = Number((await r.follow.fh.stat({ bigint: true })).size);
      if (now <= copiedTo) break;
      const c = await copyRange(r.follow.fh, dst, copiedTo, now, out, buf, r.signal);
      out += c.n;
      copiedTo += c.n;
      if (c.last !== undefined) lastByte = c.last;
    }
    await r.fsync(dst.fd);
  } catch (err) {
    // ENOSPC (or EIO) of the temp's writes names the temp (the temp is removed by the caller).
    throw withPath(err, dir.display(tmpName));
  }
  if (r.beforeCommit) await r.beforeCommit();
  failpoint('rewrite:before_commit');
  r.signal?.throwIfAborted();
  // Last look before the window (async, so before anything synchronous starts): a process that
  // has opened the file since the first check and holds it would lose every later line.
  const holders = await r.heldOpen(r.follow.identity, r.follow.fh.fd);
  if (holders.length > 0) throw new HeldOpenError(dir.display(name), holders);
  // Opened before the window, which holds only copies and the rename. Closed by the caller once
  // the round is returned; here if the round fails before that.
  const appendFd = syncIo.openAppend(dir.child(tmpName));
  let returned = false;
  try {
    // ---- commit window: synchronous, nothing awaited and nothing that blocks (no fsync) until the
    // rename is done and late bytes carried.
    const current = dir.lstatSync(name);
    if (!current || !current.isFile() || !sameIdentity(identityOf(current), r.follow.identity)) {
      throw new GcError(
        Codes.concurrentAppend,
        `${dir.display(name)} was replaced while it was being rewritten; left as it is`,
      );
    }
    const followFd = r.follow.fh.fd;
    // Copy until an fstat finds nothing new, then rename at once: what arrives while we copy is
    // copied too.
    for (let copy = 0; copy < WINDOW_COPIES; copy++) {
      const endNow = Number(syncIo.fstat(followFd).size);
      if (endNow <= copiedTo) break;
      const c = copyRangeSync(followFd, dst.fd, copiedTo, endNow, out, buf);
      out += c.n;
      copiedTo += c.n;
      if (c.last !== undefined) lastByte = c.last;
      r.inWindow?.(copy);
    }
    // A writer may be half-way through a line right now: keep only whole lines of what was
    // copied from the followed file, so its remainder arrives as late bytes *with* its beginning.
    // (Usually the last byte copied is a newline, and nothing needs reading.)
    const followStart = out - (copiedTo - r.follow.from);
    const mayBeTorn = out > followStart && lastByte !== 10;
    const cut = mayBeTorn ? lastLineEndSync(dst.fd, followStart, out, buf) : undefined;
    if (cut !== undefined && cut < out) {
      syncIo.ftruncate(dst.fd, cut);
      copiedTo -= out - cut;
      out = cut;
    }
    // No fsync here: what the window copied is synced right after the rename (stagedRewrite).
    dir.renameSync(tmpName, name);
    let appended = copiedTo - r.follow.from;
    let pending: Buffer | undefined;
    const late = readTailSync(followFd, copiedTo);
    if (late.length > 0) {
      copiedTo += late.length;
      appended += late.length;
      pending = late;
    }
    // ---- end of the synchronous window.
    returned = true;
    return { dst, appendFd, ours: out, copiedTo, pending, appended };
  } finally {
    if (!returned) syncIo.close(appendFd);
  }
}

export interface StagedRewriteOptions {
  dir: Dir;
  name: string;
  /** Identity seen at scan time; a different file at commit time aborts the rewrite. */
  expect?: Identity;
  mode: number;
  signal?: AbortSignal;
  /** Decide the new contents from the open original and its snapshot size; undefined = no rewrite. */
  stage: (src: FileHandle, snapshotSize: number, stat: BigIntStats) => Promise<StagedContent | undefined>;
  /** Test hook: called after the copy, just before the commit window (async part). */
  beforeCommit?: () => Promise<void>;
  /**
   * Test hook, synchronous: called inside the commit window right after each copy of what the
   * followed file gained (`copy` counts from 0 within one window), where a writer's append is
   * the race the window must absorb.
   */
  inWindow?: (copy: number) => void;
  /** Test hook: called right after the first rename and its immediate carry. */
  afterRename?: () => Promise<void>;
  /** Who else holds a file open (default: a /proc scan); injectable for tests. */
  holders?: (identity: Identity, ownFd?: number) => Promise<number[]>;
  /**
   * Who holds a file open for writing persistently (default: `writersHoldingOpen`, a short watch
   * of the /proc scan); injectable for tests. Asked right before each commit window: a held
   * original is not rewritten (HeldOpenError); a held file of a corrective round gets its late
   * lines appended instead (out of order, and said).
   */
  heldOpen?: (identity: Identity, ownFd?: number) => Promise<number[]>;
  /** fsync of a file descriptor (default: fs.fsync on the thread pool); injectable for tests. */
  fsync?: (fd: number) => Promise<void>;
}

/** fsync on the thread pool: the event loop (lock refresh, signals) keeps running meanwhile. */
export function defaultFsync(fd: number): Promise<void> {
  return syncIo.fsyncAsync(fd);
}

/** All the waiting for holders of replaced files that one rewrite does, at most. */
const DRAIN_LIMIT_MS = 5_000;
/**
 * A process seen holding a replaced file at every look for this long keeps it open (it is not
 * between its open and its write): the wait for it ends, and it is named (`heldBy`).
 */
const HELD_AFTER_RENAME_MS = 2_000;
/**
 * Rewrites at most: the first plus corrective ones while writers race each rename. A round is
 * raced when a line lands in the old inode during the rename or a writer is between its open and
 * its write at that instant: about one round in three at 6 000 lines/s on a loaded 2-core
 * machine, so six rounds ran out about once in 400 rewrites there (then the late lines are
 * appended after newer ones, announced); twelve make that about one in half a million. Only a writer
 * racing every rename pays for all of them.
 */
const MAX_ROUNDS = 12;

/**
 * Wait until no other process holds `fh`'s inode open (two clean looks a few ms apart), then
 * return the bytes it gained beyond `from`. The wait ends early, naming them in `heldBy`, when
 * processes have held it at every look for HELD_AFTER_RENAME_MS, or at `deadline` (then whoever
 * held it at the last look); what they write later cannot be carried.
 */
async function drainReplaced(
  fh: FileHandle,
  from: number,
  holders: ((identity: Identity, ownFd?: number) => Promise<number[]>) | undefined,
  deadline: number,
): Promise<{ bytes: Buffer; heldBy: number[] }> {
  const probe = holders ?? processesHolding;
  const identity = identityOf(await fh.stat({ bigint: true }));
  /** pid → when it was first seen in the run of looks that have all seen it */
  const since = new Map<number, number>();
  let heldBy: number[] = [];
  // Two clean scans a few ms apart: a writer whose open() looked the path up just before the
  // rename may not have its descriptor installed yet at the first scan.
  let clean = 0;
  for (let wait = 1; ; wait = Math.min(wait * 2, 50)) {
    const pids = await probe(identity, fh.fd);
    const now = Date.now();
    if (pids.length === 0) {
      clean++;
      since.clear();
    } else {
      clean = 0;
      for (const p of [...since.keys()]) if (!pids.includes(p)) since.delete(p);
      for (const p of pids) if (!since.has(p)) since.set(p, now);
    }
    if (clean === 2) break;
    const kept = [...since].filter(([, t]) => now - t >= HELD_AFTER_RENAME_MS).map(([p]) => p);
    if (kept.length > 0 || now >= deadline) {
      heldBy = kept.length > 0 ? kept : clean === 0 ? pids : [];
      break;
    }
    await new Promise((r) => setTimeout(r, clean === 1 ? 2 : wait));
  }
  return { bytes: readTailSync(fh.fd, from), heldBy: [...new Set(heldBy)].sort((a, b) => a - b) };
}

/** Returns undefined when `stage` decided nothing needs rewriting (the file is untouched). */
export async function stagedRewrite(opts: StagedRewriteOptions): Promise<RewriteResult | undefined> {
  const { dir, name } = opts;
  const { fh: src, stat } = await dir.openFile(name);
  const temps: { name: string; dst: FileHandle; committed: boolean }[] = [];
  const onTemp = (tmpName: string, dst: FileHandle) => temps.push({ name: tmpName, dst, committed: false });
  const appendFds: number[] = [];
  const fsync = opts.fsync ?? defaultFsync;
  const heldOpen = opts.heldOpen ?? ((identity: Identity, ownFd?: number) => writersHoldingOpen(identity, ownFd));
  try {
    if (opts.expect && !sameIdentity(identityOf(stat), opts.expect)) {
      throw new GcError(Codes.changedSinceScan, `${dir.display(name)} was replaced since it was scanned`);
    }
    const snapshot = Number(stat.size);
    const staged = await opts.stage(src, snapshot, stat);
    if (!staged) return undefined;
    opts.signal?.throwIfAborted();

    const first = await commitRound(
      {
        dir,
        name,
        mode: opts.mode,
        pieces: [
          staged.prefix,
          ...(staged.insert ?? []),
          { fh: src, from: staged.copyFrom, to: snapshot },
          ...(staged.suffix ? [staged.suffix] : []),
        ],
        follow: { fh: src, from: snapshot, identity: identityOf(stat) },
        signal: opts.signal,
        beforeCommit: opts.beforeCommit,
        inWindow: opts.inWindow,
        fsync,
        heldOpen,
      },
      onTemp,
    );
    temps[temps.length - 1]!.committed = true;
    appendFds.push(first.appendFd);
    let appendedDuring = first.appended;
    let reordered = false;
    let outOfOrder = false;
    let outOfOrderLines = 0;
    if (opts.afterRename) await opts.afterRename();
    failpoint('rewrite:after_rename');
    // Durable: the bytes the window copied, then the name (a crash leaves old or whole new).
    await fsync(first.dst.fd);
    await dir.sync();

    // Writers that opened a replaced inode before its rename may still write to it: wait (bounded)
    // until no other process holds it open, then every byte it will ever get is readable. Those
    // bytes belong before anything written to the new file; while a writer races each rename, one
    // more corrective round (bounded) puts them back in order.
    // A replaced file still held when the wait for it ended is not waited for again (`held`):
    // what it gets later cannot be carried, and every round would only wait for it once more.
    const replaced: { fh: FileHandle; copied: number; held: boolean }[] = [
      { fh: src, copied: first.copiedTo, held: false },
    ];
    const heldBy = new Set<number>();
    const deadline = Date.now() + DRAIN_LIMIT_MS;
    let cur: Round = first;
    let carried: Buffer = first.pending ?? Buffer.alloc(0);
    let rounds = 1;
    for (let round = 1; ; round++) {
      rounds = round;
      const lateParts: Buffer[] = [];
      for (const r of replaced) {
        if (r.held) {
          lateParts.push(Buffer.alloc(0));
          continue;
        }
        const d = await drainReplaced(r.fh, r.copied, opts.holders, deadline);
        r.copied += d.bytes.length;
        if (d.heldBy.length > 0) {
          r.held = true;
          for (const p of d.heldBy) heldBy.add(p);
        }
        lateParts.push(d.bytes);
      }
      // `carried` (read at the rename) precedes what the newest replaced inode got afterwards.
      const newest = lateParts.pop() ?? Buffer.alloc(0);
      const late = Buffer.concat([...lateParts, carried, newest]);
      appendedDuring += late.length - carried.length;
      if (late.length === 0) break;
      // Late bytes are only ever placed inside a temp file, never appended to the live file after a
      // size check: a writer could append between the check and our write and be put before them.
      // When the rounds run out, or the live file is itself held open (renaming over it would
      // leave that process writing to a replaced file), they are appended instead.
      const appendLate = () => {
        appendSync(cur.appendFd, late); // never lost; out of order, and said so
        outOfOrder = true;
        for (let i = late.indexOf(10); i >= 0; i = late.indexOf(10, i + 1)) outOfOrderLines++;
      };
      if (round >= MAX_ROUNDS) {
        appendLate();
        break;
      }
      const st = await cur.dst.stat({ bigint: true });
      const size = Number(st.size);
      let next: Round;
      try {
        next = await commitRound(
          {
            dir,
            name,
            mode: opts.mode,
            pieces: [{ fh: cur.dst, from: 0, to: cur.ours }, late, { fh: cur.dst, from: cur.ours, to: size }],
            follow: { fh: cur.dst, from: size, identity: identityOf(st) },
            signal: undefined, // past the first commit, finishing is the safe way out
            inWindow: opts.inWindow,
            fsync,
            heldOpen,
          },
          onTemp,
        );
      } catch (err) {
        if (!(err instanceof HeldOpenError)) throw err;
        appendLate(); // the round's temp was not renamed (it is removed below)
        break;
      }
      temps[temps.length - 1]!.committed = true;
      appendFds.push(next.appendFd);
      reordered = true;
      appendedDuring += size - cur.ours + next.appended - (next.pending?.length ?? 0);
      await fsync(next.dst.fd);
      await dir.sync();
      replaced.push({ fh: cur.dst, copied: next.copiedTo, held: false });
      carried = next.pending ?? Buffer.alloc(0);
      appendedDuring += carried.length;
      cur = next;
    }
    const finalDst = cur.dst;
    await fsync(finalDst.fd);
    const newSize = Number((await finalDst.stat({ bigint: true })).size);
    const held = [...heldBy].sort((a, b) => a - b);
    return {
      oldSize: snapshot,
      newSize,
      appendedDuring,
      reordered,
      outOfOrder,
      outOfOrderLines,
      rounds,
      stillHeld: held.length > 0,
      heldBy: held,
      carriedTo: replaced[0]!.copied,
    };
  } finally {
    for (const fd of appendFds) syncIo.close(fd);
    for (const t of temps) {
      await t.dst.close().catch(() => undefined);
      if (!t.committed) await dir.unlink(t.name).catch(() => undefined);
    }
    await src.close().catch(() => undefined);
  }
}
