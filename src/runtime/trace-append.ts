// Appending `shell_lost` lines to another session's trace (docs/design.md §7, §R9).
// Guarantees: the trace is opened append-only, never created, never followed through a link,
// and must still be the file that was scanned (dev/ino) and unchanged in size since the scan;
// when the file ends mid-line the first line written is prefixed with '\n'; each line is one
// write call, built just before it is written (one line is held at a time: a `shell_lost` repeats
// its command, which may be tens of MiB, and may be built into a reused buffer); a line that could not be built or failed to land is
// reported as not landed (so a later sweep retries it).
// The file's state right after is returned only when every line landed and the file grew by
// exactly what was written (no other writer came between), so the caller may remember it as its own.
import { Codes, GcError, codeOf, describeError } from '../errors.js';
import { sameIdentity, identityOf, type Dir, type Identity } from '../fsx/safe-fs.js';

/** Why a line did not land: a stable code and a content-free detail. */
export interface AppendFailure {
  code: string;
  detail: string;
}

const NEWLINE = Buffer.from('\n');

export interface AppendResult {
  /** Per line: undefined when it landed, else why it did not. */
  failures: (AppendFailure | undefined)[];
  /** mtime (ms) of the trace when it was opened, before anything was written */
  beforeMtimeMs: number;
  /** The trace right after: only when every line landed and nothing else wrote meanwhile. */
  after?: { identity: Identity; size: number; mtimeMs: number };
}

/**
 * Append `lines` to `dir/trace.jsonl`: each builds one complete line ending in '\n' (or throws:
 * that line is not written, and reported with the error's code). `expect` and `expectSize` come
 * from the scan; any difference means the session wrote since (it may be alive after all) and
 * nothing is appended.
 */
export async function appendTraceLines(
  dir: Dir,
  expect: Identity,
  expectSize: number,
  lines: readonly (() => Promise<string | Buffer> | string | Buffer)[],
): Promise<AppendResult> {
  const name = 'trace.jsonl';
  const { fh, stat } = await dir.openAppend(name);
  await using _ = fh;
  if (!sameIdentity(identityOf(stat), expect) || Number(stat.size) !== expectSize) {
    throw new GcError(
      Codes.changedSinceScan,
      `${dir.display(name)} changed since it was scanned; not reconciled this sweep`,
    );
  }
  let needsNewline = false;
  if (stat.size > 0n) {
    const r = await dir.openFile(name);
    await using _ = r.fh;
    const b = Buffer.alloc(1);
    await r.fh.read(b, 0, 1, Number(stat.size) - 1);
    needsNewline = b[0] !== 0x0a;
  }
  const result: AppendResult = { failures: [], beforeMtimeMs: Number(stat.mtimeMs) };
  let written = 0;
  for (const make of lines) {
    let l: string | Buffer;
    try {
      l = await make();
    } catch (err) {
      result.failures.push({ code: codeOf(err), detail: describeError(err) });
      continue;
    }
    const buf =
      typeof l === 'string' ? Buffer.from(needsNewline ? '\n' + l : l) : needsNewline ? Buffer.concat([NEWLINE, l]) : l;
    try {
      const { bytesWritten } = await fh.write(buf, 0, buf.length);
      if (bytesWritten !== buf.length) throw new Error(`short write (${bytesWritten} of ${buf.length} bytes)`);
      result.failures.push(undefined);
      written += buf.length;
      needsNewline = false;
    } catch (err) {
      result.failures.push({ code: Codes.ioError, detail: describeError(err) });
      needsNewline = true; // a partial write may have left a torn line behind
    }
  }
  await fh.sync().catch(() => undefined);
  const end = await fh.stat({ bigint: true }).catch(() => undefined);
  if (
    end &&
    result.failures.every((f) => f === undefined) &&
    sameIdentity(identityOf(end), expect) &&
    Number(end.size) === expectSize + written
  ) {
    result.after = { identity: identityOf(end), size: Number(end.size), mtimeMs: Number(end.mtimeMs) };
  }
  return result;
}
