// The append-safe staged rewrite of a file that unlocking writers keep appending to (DESIGN §2.2).
// Guarantees:
// - The new contents are built in `.<name>.<pid>.<uuidv7>.tmp` in the same directory (mode
//   0600, O_EXCL|O_NOFOLLOW), fsync'ed, then renamed over the original: a crash leaves the
//   original or the new file, never a partial one (the temp is debris a later sweep removes).
// - No line appended while it runs is lost: bytes appended to the original after the snapshot
//   are copied before the rename; the rename happens in a synchronous window that first copies
//   the last appended bytes; right after the rename (before anything is awaited) and again after
//   the directory fsync, bytes that reached the old inode are appended to the new file — placed
//   before anything a writer appended to the new file after the rename.
// - If the original was replaced (different dev/ino) before the commit, nothing is renamed and
//   the temp file is removed (`concurrent_append`).
// - Memory is bounded by one copy buffer whatever the file size.
import { Codes, GcError } from '../errors.js';
import { mintId } from '../murmur/ids.js';
import { sameIdentity, identityOf, syncIo, type Dir, type FileHandle, type Identity } from './safe-fs.js';

const COPY_CHUNK = 1 << 20;

export interface StagedContent {
  /** Bytes written first (e.g. the new header line). */
  prefix: Buffer;
  /** Offset in the original from which every byte is kept verbatim. */
  copyFrom: number;
}

export interface RewriteResult {
  oldSize: number;
  newSize: number;
  /** Bytes appended by writers while the rewrite ran (all carried into the new file). */
  appendedDuring: number;
  /** True when bytes reached the old inode after the rename and had to be placed before later appends. */
  reordered: boolean;
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

async function copyRange(src: FileHandle, dst: FileHandle, from: number, to: number, dstPos: number, buf: Buffer, signal?: AbortSignal): Promise<number> {
  let pos = from;
  let out = dstPos;
  while (pos < to) {
    signal?.throwIfAborted();
    const want = Math.min(buf.length, to - pos);
    const { bytesRead } = await src.read(buf, 0, want, pos);
    if (bytesRead === 0) break;
    let written = 0;
    while (written < bytesRead) {
      const { bytesWritten } = await dst.write(buf, written, bytesRead - written, out + written);
      written += bytesWritten;
    }
    pos += bytesRead;
    out += bytesRead;
  }
  return out - dstPos;
}

function copyRangeSync(srcFd: number, dstFd: number, from: number, to: number, dstPos: number, buf: Buffer): number {
  let pos = from;
  let out = dstPos;
  while (pos < to) {
    const n = syncIo.read(srcFd, buf, pos, Math.min(buf.length, to - pos));
    if (n === 0) break;
    let w = 0;
    while (w < n) w += syncIo.write(dstFd, w === 0 ? buf : buf.subarray(w), n - w, out + w);
    pos += n;
    out += n;
  }
  return out - dstPos;
}

/**
 * After the rename: move bytes that reached the old inode (src) beyond `copiedTo` into the new
 * file (dst) at `dstEnd`, keeping anything writers already appended to dst after them.
 * Synchronous on purpose: it runs before anything else is awaited.
 */
function carryLateBytesSync(srcFd: number, dstFd: number, copiedTo: number, dstEnd: number, buf: Buffer): { copiedTo: number; dstEnd: number; late: number; reordered: boolean } {
  const srcSize = Number(syncIo.fstat(srcFd).size);
  if (srcSize <= copiedTo) return { copiedTo, dstEnd, late: 0, reordered: false };
  const late = srcSize - copiedTo;
  const dstSize = Number(syncIo.fstat(dstFd).size);
  let reordered = false;
  let tail: Buffer | undefined;
  if (dstSize > dstEnd) {
    // A writer already appended to the new file: keep the old inode's bytes first.
    tail = Buffer.alloc(dstSize - dstEnd);
    let got = 0;
    while (got < tail.length) {
      const n = syncIo.read(dstFd, tail.subarray(got), dstEnd + got, tail.length - got);
      if (n === 0) break;
      got += n;
    }
    reordered = true;
  }
  copyRangeSync(srcFd, dstFd, copiedTo, srcSize, dstEnd, buf);
  let end = dstEnd + late;
  if (tail) {
    let w = 0;
    while (w < tail.length) w += syncIo.write(dstFd, tail.subarray(w), tail.length - w, end + w);
    end += tail.length;
  }
  return { copiedTo: srcSize, dstEnd: end, late, reordered };
}

export interface StagedRewriteOptions {
  dir: Dir;
  name: string;
  /** Identity seen at scan time; a different file at commit time aborts the rewrite. */
  expect?: Identity;
  mode: number;
  signal?: AbortSignal;
  /** Decide the new contents from the open original and its snapshot size; undefined = no rewrite. */
  stage: (src: FileHandle, snapshotSize: number) => Promise<StagedContent | undefined>;
  /** Test hook: called between the pre-rename copy and the rename (inside the async part). */
  beforeCommit?: () => Promise<void>;
}

/** Returns undefined when `stage` decided nothing needs rewriting (the file is untouched). */
export async function stagedRewrite(opts: StagedRewriteOptions): Promise<RewriteResult | undefined> {
  const { dir, name } = opts;
  const { fh: src, stat } = await dir.openFile(name);
  const tmpName = tempNameFor(name);
  let dst: FileHandle | undefined;
  let committed = false;
  try {
    if (opts.expect && !sameIdentity(identityOf(stat), opts.expect)) {
      throw new GcError(Codes.changedSinceScan, `${dir.display(name)} was replaced since it was scanned`);
    }
    const snapshot = Number(stat.size);
    const staged = await opts.stage(src, snapshot);
    if (!staged) return undefined;
    opts.signal?.throwIfAborted();
    dst = await dir.createExclusive(tmpName, opts.mode);
    const buf = Buffer.allocUnsafe(COPY_CHUNK);
    let out = 0;
    while (out < staged.prefix.length) {
      const { bytesWritten } = await dst.write(staged.prefix, out, staged.prefix.length - out, out);
      out += bytesWritten;
    }
    out += await copyRange(src, dst, staged.copyFrom, snapshot, out, buf, opts.signal);
    let copiedTo = snapshot;
    // Catch up with appends made while we copied (bounded rounds; the sync window takes the rest).
    for (let round = 0; round < 8; round++) {
      const now = Number((await src.stat({ bigint: true })).size);
      if (now <= copiedTo) break;
      out += await copyRange(src, dst, copiedTo, now, out, buf, opts.signal);
      copiedTo = now;
    }
    await dst.sync();
    if (opts.beforeCommit) await opts.beforeCommit();
    opts.signal?.throwIfAborted();

    // ---- commit window: synchronous, nothing awaited until the rename is done and late bytes carried.
    const current = dir.lstatSync(name);
    if (!current || !current.isFile() || !sameIdentity(identityOf(current), identityOf(stat))) {
      throw new GcError(Codes.concurrentAppend, `${dir.display(name)} was replaced while it was being rewritten; left as it is`);
    }
    const srcFd = src.fd;
    const dstFd = dst.fd;
    const endNow = Number(syncIo.fstat(srcFd).size);
    if (endNow > copiedTo) {
      out += copyRangeSync(srcFd, dstFd, copiedTo, endNow, out, buf);
      copiedTo = endNow;
    }
    dir.renameSync(tmpName, name);
    committed = true;
    let carry = carryLateBytesSync(srcFd, dstFd, copiedTo, out, buf);
    let reordered = carry.reordered;
    let appendedDuring = copiedTo - snapshot + carry.late;
    // ---- end of the synchronous window.
    await dir.sync();
    const again = carryLateBytesSync(srcFd, dstFd, carry.copiedTo, carry.dstEnd, buf);
    reordered ||= again.reordered;
    appendedDuring += again.late;
    carry = again;
    await dst.sync();
    const newSize = Number((await dst.stat({ bigint: true })).size);
    return { oldSize: carry.copiedTo, newSize, appendedDuring, reordered };
  } finally {
    if (dst) await dst.close().catch(() => undefined);
    await src.close().catch(() => undefined);
    if (!committed && dst) await dir.unlink(tmpName).catch(() => undefined);
  }
}
