// The undo window on disk (layout and decisions: src/gchome/quarantine-layout.ts).
// Guarantees:
// - Holding is a rename or a hard link, never a copy on the record's filesystem: a session within
//   its own root, a context directory from its record store into `<home>/gc/quarantine/<item>/ctx`;
//   a truncation's dropped lines by keeping the record's old inode (holdDropped; a copy only when
//   the store is on another filesystem than the quarantine, and then on the quarantine's). Both are descriptor-relative; the target's
//   identity (dev/ino from the scan) is re-checked with lstat just before, and re-verified through
//   an O_NOFOLLOW descriptor just after (a mismatch, or the caller's verify failing, moves it back
//   and reports). Across filesystems the kernel refuses (EXDEV) and this says so with code
//   `cross_device`: the caller decides (the sweep deletes as it would without quarantine).
// - `<home>/gc` and `<home>/gc/quarantine` are opened without following links and never across a
//   mount (Dir.openDir): a symlink planted there is refused, never written through.
// - A context item's sidecar is on disk (fsync'ed) before the context is moved in, so a held
//   context always says where it came from; an item without its payload is debris.
// - A sidecar is read only when lstat calls it a regular file, O_NOFOLLOW|O_NONBLOCK, re-checked
//   by fstat and never past 64 KiB: a FIFO, a huge or garbage item.json makes the item
//   `unreadable` in the listing (never an exception, never a hang).
// - Deleting a held item for good goes through fsx/remove.ts (rename to trash, re-verify, delete
//   descriptor-relatively, never following links or crossing mounts).
// - Putting back never replaces anything: the name must be free (checked through the parent's
//   descriptor just before the rename; a directory that appears in between and is not empty makes
//   the rename fail, so nothing is overwritten).
import { Codes, GcError, describeError, errnoCode, withPath } from '../errors.js';
import {
  CONTEXT_PAYLOAD,
  DROPPED_PAYLOAD,
  ITEM_FILE,
  QUARANTINE_DIR,
  RECORD_PAYLOAD,
  itemDirName,
  markerToMeta,
  parseItemDirName,
  parseMeta,
  payloadOf,
  serializeMeta,
  type HeldItem,
  type ItemMeta,
} from './quarantine-layout.js';
import { TRASH_PREFIX } from '../runtime/inventory.js';
import { processesHolding } from '../runtime/running.js';
import { parseSessionQuarantineName, sessionQuarantineName } from '../runtime/gc-entries.js';
import { GC_DIR_NAME } from './paths.js';
import type { RecordHeader } from '../runtime/record.js';
import { KEPT_PREFIX, measureDir, removeDir, type RemovalStats } from '../fsx/remove.js';
import {
  Dir,
  identityOf,
  readSmallFile,
  sameIdentity,
  type BigIntStats,
  type FileHandle,
  type Identity,
} from '../fsx/safe-fs.js';
import { definedOnly } from '../defined.js';

const DIR_MODE = 0o700;
const FILE_MODE = 0o600;

/** 8 random bytes as hex. node:crypto is loaded on first use: the read-only views never pay for it. */
function nonce(): string {
  return process.getBuiltinModule('node:crypto').randomBytes(8).toString('hex');
}

function asSymlinkError(path: string, err: unknown): unknown {
  const c = errnoCode(err);
  if (c === 'ELOOP' || c === 'ENOTDIR')
    return new GcError(
      Codes.symlink,
      `${path} is not a directory (a symbolic link?); the quarantine is never followed`,
      { cause: err },
    );
  return err;
}

/**
 * `<home>/gc/quarantine`, created (0700) when `create`; undefined when absent and not created.
 * A symlink at either level is refused with code `symlink`.
 */
export async function openQuarantineDir(home: Dir, create: boolean): Promise<Dir | undefined> {
  let gc: Dir | undefined;
  try {
    if (create) gc = await home.mkdir(GC_DIR_NAME, DIR_MODE);
    else {
      const st = await home.lstat(GC_DIR_NAME);
      if (!st) return undefined;
      gc = await home.openDir(GC_DIR_NAME);
    }
  } catch (err) {
    throw asSymlinkError(home.display(GC_DIR_NAME), err);
  }
  await using _ = gc;
  try {
    if (create) return await gc.mkdir(QUARANTINE_DIR, DIR_MODE);
    const st = await gc.lstat(QUARANTINE_DIR);
    if (!st) return undefined;
    return await gc.openDir(QUARANTINE_DIR);
  } catch (err) {
    throw asSymlinkError(gc.display(QUARANTINE_DIR), err);
  }
}

/** Re-check that `parent/name` is still the directory scanned. */
async function checkScanned(parent: Dir, name: string, expect: Identity): Promise<void> {
  const st = await parent.lstat(name);
  if (!st || !st.isDirectory() || !sameIdentity(identityOf(st), expect)) {
    throw new GcError(Codes.changedSinceScan, `${parent.display(name)} changed since it was scanned; left alone`);
  }
}

async function measured(parent: Dir, name: string, expect: Identity): Promise<number> {
  try {
    return (await measureDir(parent, name, expect)).bytes;
  } catch {
    return 0;
  }
}

/**
 * Hold session `root/name` as `.murmur-gc-quarantine.<until>.<name>` in the same root.
 * `verify` (e.g. the trace is unchanged since the scan) runs on the moved directory; if it throws,
 * the session is put back under its name.
 */
export async function holdSession(
  root: Dir,
  name: string,
  expect: Identity,
  untilMs: number,
  verify?: (d: Dir) => Promise<void>,
): Promise<{ entry: string; bytes: number }> {
  await checkScanned(root, name, expect);
  const entry = sessionQuarantineName(untilMs, name);
  if (await root.lstat(entry))
    throw new GcError(Codes.ioError, `${root.display(entry)} already exists; ${name} not moved`);
  await root.rename(name, entry);
  try {
    await using d = await root.openDir(entry, expect);
    await verify?.(d);
  } catch (err) {
    if (!(await root.lstat(name))) await root.rename(entry, name).catch(() => undefined);
    throw err;
  }
  await root.sync().catch(() => undefined);
  return { entry, bytes: await measured(root, entry, expect) };
}

/** Remove an item directory we created that holds nothing of value yet (no payload). */
export async function dropEmptyItem(q: Dir, entry: string): Promise<void> {
  const d = await q.openDir(entry).catch(() => undefined);
  if (!d) return;
  try {
    for (const n of [ITEM_FILE, DROPPED_PAYLOAD, RECORD_PAYLOAD]) await d.unlink(n).catch(() => undefined);
  } finally {
    await d.close();
  }
  await q.rmdir(entry).catch(() => undefined);
}

/**
 * Hold context directory `store/name` in `q` (the quarantine dir) as `<until>.<nonce>/ctx`, with
 * its sidecar. Throws GcError `cross_device` when the store is on another filesystem (nothing moved).
 */
export async function holdContext(
  store: Dir,
  name: string,
  expect: Identity,
  q: Dir,
  meta: ItemMeta,
  verify?: (d: Dir) => Promise<void>,
): Promise<{ entry: string; bytes: number }> {
  await checkScanned(store, name, expect);
  const entry = itemDirName(meta.until_ms, nonce());
  await using item = await q.mkdir(entry, DIR_MODE);
  await item.writeFileAtomic(ITEM_FILE, serializeMeta(meta), FILE_MODE);
  try {
    await store.renameInto(name, item, CONTEXT_PAYLOAD);
  } catch (err) {
    await item.close();
    await dropEmptyItem(q, entry);
    if (errnoCode(err) === 'EXDEV') {
      throw new GcError(
        Codes.crossDevice,
        `${store.display(name)} is on another filesystem than ${q.path}; it cannot be held in the quarantine`,
        { cause: err },
      );
    }
    throw err;
  }
  try {
    await using d = await item.openDir(CONTEXT_PAYLOAD, expect);
    await verify?.(d);
  } catch (err) {
    if (!(await store.lstat(name))) {
      await item.renameInto(CONTEXT_PAYLOAD, store, name).catch(() => undefined);
      await item.close();
      await dropEmptyItem(q, entry);
    }
    throw err;
  }
  await item.sync().catch(() => undefined);
  await store.sync().catch(() => undefined);
  return { entry, bytes: await measured(item, CONTEXT_PAYLOAD, expect) };
}

/** How a truncation's dropped lines are held: the record's old inode, or a copy of them. */
export interface HeldDropped {
  entry: string;
  /** the bytes of dropped lines held */
  bytes: number;
  /** RECORD_PAYLOAD (the old inode, hard-linked) or DROPPED_PAYLOAD (a copy) */
  payload: string;
  /** the held inode, when it is the record's own */
  linked?: Identity;
}

const COPY_FALLBACK = new Set(['EXDEV', 'EPERM', 'EMLINK']);

/**
 * Keep bytes [from, to) of the record `dir/name`, open as `src` (a truncation's dropped lines), in
 * a new item of `q` with sidecar `meta` (state `staged`: the rewrite has not committed yet).
 * The record's own inode is hard-linked into the item (`record.jsonl`, the lines are `range`):
 * nothing is copied, so holding needs no disk beyond what the truncation itself needs. When the
 * link cannot be made (the record store is on another filesystem than the quarantine: EXDEV;
 * EPERM; EMLINK) the bytes are copied into `dropped.jsonl` on the quarantine's filesystem. A
 * link whose inode is not the open record (the name was replaced) is removed, and this throws.
 * A write error (ENOSPC…) names its path.
 */
export async function holdDropped(
  q: Dir,
  meta: ItemMeta,
  rec: { dir: Dir; name: string },
  src: FileHandle,
  from: number,
  to: number,
): Promise<HeldDropped> {
  const entry = itemDirName(meta.until_ms, nonce());
  const item = await q.mkdir(entry, DIR_MODE);
  try {
    const want = identityOf(await src.stat({ bigint: true }));
    let linked = false;
    try {
      await rec.dir.linkInto(rec.name, item, RECORD_PAYLOAD);
      linked = true;
    } catch (err) {
      if (!COPY_FALLBACK.has(errnoCode(err) ?? '')) throw withPath(err, item.display(RECORD_PAYLOAD));
    }
    if (linked) {
      const st = await item.lstat(RECORD_PAYLOAD);
      if (!st?.isFile() || !sameIdentity(identityOf(st), want)) {
        await item.unlink(RECORD_PAYLOAD).catch(() => undefined);
        throw new GcError(
          Codes.changedSinceScan,
          `${rec.dir.display(rec.name)} was replaced while its dropped lines were being held`,
        );
      }
      const m: ItemMeta = { ...meta, range: { from, to } };
      await item.writeFileAtomic(ITEM_FILE, serializeMeta(m), FILE_MODE).catch((err: unknown) => {
        throw withPath(err, item.display(ITEM_FILE));
      });
      return { entry, bytes: to - from, payload: RECORD_PAYLOAD, linked: want };
    }
    await copyDropped(item, src, from, to);
    await item.writeFileAtomic(ITEM_FILE, serializeMeta(meta), FILE_MODE).catch((err: unknown) => {
      throw withPath(err, item.display(ITEM_FILE));
    });
    return { entry, bytes: to - from, payload: DROPPED_PAYLOAD };
  } catch (err) {
    await item.close();
    await dropEmptyItem(q, entry);
    throw err;
  } finally {
    await item.close();
  }
}

async function copyDropped(item: Dir, src: FileHandle, from: number, to: number): Promise<void> {
  await using fh = await item.createExclusive(DROPPED_PAYLOAD, FILE_MODE);
  try {
    const buf = Buffer.allocUnsafe(Math.min(1 << 20, Math.max(1, to - from)));
    let pos = from;
    let out = 0;
    while (pos < to) {
      const { bytesRead } = await src.read(buf, 0, Math.min(buf.length, to - pos), pos);
      if (bytesRead === 0)
        throw new GcError(Codes.changedSinceScan, `the record shrank while its dropped lines were kept`);
      let w = 0;
      while (w < bytesRead) w += (await fh.write(buf, w, bytesRead - w, out + w)).bytesWritten;
      pos += bytesRead;
      out += bytesRead;
    }
    await fh.sync();
  } catch (err) {
    throw withPath(err, item.display(DROPPED_PAYLOAD));
  }
}

/**
 * Once the truncation committed, cut the held old inode to the end of its dropped lines: the kept
 * tail (which the new record holds) is then not held twice. Only bytes the new record holds are
 * ever cut: `carried` is how far the rewrite carried the old inode into the new record
 * (RewriteResult.carriedTo; undefined: unknown, nothing is cut), and an old inode that has grown
 * past it (a process still writing to it), or that any process holds open for writing now, is
 * left whole. Only when the item's `record.jsonl` is still that inode, the record's name no
 * longer is (never the live record), and it has no other link (whose bytes it would cut).
 * Returns the bytes of the old inode the new record does not hold (0 when none).
 */
export async function trimHeld(
  q: Dir,
  entry: string,
  linked: Identity,
  to: number,
  rec: { dir: Dir; name: string },
  carried: number | undefined,
): Promise<number> {
  const now = await rec.dir.lstat(rec.name);
  if (now && sameIdentity(identityOf(now), linked)) return 0;
  await using item = await q.openDir(entry);
  const { fh, stat } = await item.openFile(RECORD_PAYLOAD, { write: true });
  await using _ = fh;
  // Another link to it (a backup made with `ln`, say) would lose its bytes: left whole.
  if (!sameIdentity(identityOf(stat), linked) || Number(stat.nlink) !== 1) return 0;
  const size = Number(stat.size);
  if (carried === undefined) return 0;
  if (size > carried) return size - carried;
  if (size <= to) return 0;
  // A writer still holding it would append after the cut, or between this look and the cut.
  if ((await processesHolding(identityOf(stat), fh.fd)).length > 0) return 0;
  await fh.truncate(to);
  await fh.sync();
  return 0;
}

/** The held dropped lines of a truncation item: an open payload and the byte range. */
export async function openHeldLines(item: Dir, meta: ItemMeta): Promise<{ fh: FileHandle; from: number; to: number }> {
  const name = payloadOf(meta);
  const { fh, stat } = await item.openFile(name);
  const from = meta.range?.from ?? 0;
  const to = meta.range?.to ?? Number(stat.size);
  if (Number(stat.size) < to) {
    await fh.close();
    throw new GcError(
      Codes.changedSinceScan,
      `${item.display(name)} holds ${stat.size} bytes, fewer than its dropped lines (${to})`,
    );
  }
  return { fh, from, to };
}

/** Rewrite an item's sidecar (durably). */
export async function writeMeta(q: Dir, entry: string, meta: ItemMeta): Promise<void> {
  await using item = await q.openDir(entry);
  await item.writeFileAtomic(ITEM_FILE, serializeMeta(meta), FILE_MODE);
}

/** Delete `parent/entry` (a held item) for good; its identity must be `expect`. */
export async function purgeEntry(parent: Dir, entry: string, expect: Identity, runId: string): Promise<RemovalStats> {
  return removeDir(parent, entry, expect, { runId });
}

/** A held item of `<home>/gc/quarantine`, as listed. */
export interface QueueItem extends HeldItem {
  identity: Identity;
  meta: ItemMeta | undefined;
  /**
   * The payload is missing (an interrupted hold), is not what the sidecar says (`payloadMismatch`),
   * or the sidecar cannot be read (`unreadable`): nothing of it can be restored.
   */
  incomplete: boolean;
  /**
   * The sidecar is readable but the payload it names is something else (a symbolic link, a file
   * where a directory belongs, a directory where a file does): what it is. The item goes by its
   * window like any other (a link is removed as a link, never followed).
   */
  payloadMismatch?: string;
  /**
   * Why its `item.json` cannot be read (missing, empty, not a sidecar, not a regular file, larger
   * than SIDECAR_MAX_BYTES): the item's window is then the one its name carries.
   */
  unreadable?: string;
  /**
   * Unreadable and holding nothing but sidecar temps (`.item.json.<pid>.<hex>.tmp`), or nothing:
   * what a context hold killed before its sidecar was in place leaves (the sweep's recover step
   * removes it once its writer is dead).
   */
  sidecarTempsOnly?: boolean;
  /** The item directory's mtime (ms): when an entry was last made in it. */
  changedMs: number;
  /** Its inodes (files, directories and itself), when it was measured. */
  inodes?: number;
}

/** What an entry is, in words (for a payload that is not what its sidecar names). */
function kindWords(st: BigIntStats): string {
  if (st.isSymbolicLink()) return 'a symbolic link';
  if (st.isDirectory()) return 'a directory';
  if (st.isFile()) return 'a regular file';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isSocket()) return 'a socket';
  return 'a device';
}

/** An item.json is a few hundred bytes; anything larger is not one (never read whole). */
export const SIDECAR_MAX_BYTES = 64 * 1024;

const SIDECAR_TEMP_RE = /^\.item\.json\.(\d+)\.[0-9a-f]+\.tmp$/;

/** The pid in the name of a sidecar's atomic-write temp (`.item.json.<pid>.<hex>.tmp`), or undefined. */
export function sidecarTempPid(name: string): number | undefined {
  const m = SIDECAR_TEMP_RE.exec(name);
  const pid = m?.[1] ? Number.parseInt(m[1], 10) : NaN;
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
}

/**
 * An item's sidecar, or why it cannot be read. Never opens anything lstat does not call a regular
 * file (a FIFO is never opened), opens O_NOFOLLOW|O_NONBLOCK, re-checks the opened file with fstat
 * and never reads more than SIDECAR_MAX_BYTES (src/fsx/safe-fs.ts readSmallFile).
 */
async function readSidecar(item: Dir): Promise<{ meta: ItemMeta } | { unreadable: string }> {
  const st = await item.lstat(ITEM_FILE);
  if (!st) return { unreadable: 'it has no item.json' };
  if (!st.isFile()) return { unreadable: 'its item.json is not a regular file' };
  if (st.size > BigInt(SIDECAR_MAX_BYTES))
    return { unreadable: `its item.json is larger than ${SIDECAR_MAX_BYTES} bytes` };
  if (st.size === 0n) return { unreadable: 'its item.json is empty' };
  let text: string;
  try {
    text = (await readSmallFile(item, ITEM_FILE, SIDECAR_MAX_BYTES)).toString('utf8');
  } catch (err) {
    return { unreadable: `its item.json could not be read (${describeError(err)})` };
  }
  const meta = parseMeta(text);
  return meta ? { meta } : { unreadable: 'its item.json is not a murmur-gc sidecar' };
}

/**
 * List `<home>/gc/quarantine` (sizes measured when `measure`). An item whose sidecar cannot be read
 * is listed with `unreadable` (its window is its name's); only an entry that turned into a symlink
 * is a problem.
 */
export async function listQuarantineDir(
  q: Dir,
  measure: boolean,
): Promise<{
  items: QueueItem[];
  trash: { entry: string; identity: Identity }[];
  /** what a purge could not remove whole, set aside (`.murmur-gc-kept.*`) */
  kept: { entry: string; identity: Identity }[];
  problems: { target: string; code: string; detail: string }[];
}> {
  const items: QueueItem[] = [];
  const trash: { entry: string; identity: Identity }[] = [];
  const kept: { entry: string; identity: Identity }[] = [];
  const problems: { target: string; code: string; detail: string }[] = [];
  for (const entry of await q.list()) {
    if (entry.startsWith(TRASH_PREFIX) || entry.startsWith(KEPT_PREFIX)) {
      const st = await q.lstat(entry);
      if (st?.isDirectory()) (entry.startsWith(TRASH_PREFIX) ? trash : kept).push({ entry, identity: identityOf(st) });
      continue;
    }
    const named = parseItemDirName(entry);
    if (!named) continue;
    const st = await q.lstat(entry);
    if (!st?.isDirectory()) continue;
    const identity = identityOf(st);
    const changedMs = Number(st.mtimeMs);
    let item: Dir | undefined;
    try {
      let sidecar: Awaited<ReturnType<typeof readSidecar>>;
      try {
        item = await q.openDir(entry, identity);
        sidecar = await readSidecar(item);
      } catch (err) {
        // A directory that cannot be opened (no search permission, replaced meanwhile): its
        // sidecar is as unreadable as a missing one.
        if (errnoCode(err) === 'ELOOP') throw err;
        sidecar = { unreadable: `its directory cannot be read (${describeError(err)})` };
      }
      const meta = 'meta' in sidecar ? sidecar.meta : undefined;
      const payload = meta ? payloadOf(meta) : CONTEXT_PAYLOAD;
      const pst = meta && item ? await item.lstat(payload) : undefined;
      const ok =
        meta !== undefined && pst !== undefined && (meta.kind === 'context' ? pst.isDirectory() : pst.isFile());
      const payloadMismatch =
        meta !== undefined && pst !== undefined && !ok
          ? `its ${payload} is ${kindWords(pst)}, not the ${meta.kind === 'context' ? 'directory' : 'regular file'} its item.json names`
          : undefined;
      let bytes = 0;
      let inodes: number | undefined;
      if (measure) {
        const m = await measureDir(q, entry, identity).catch(() => undefined);
        bytes = m?.bytes ?? 0;
        if (m) inodes = m.files + m.dirs + 1;
      }
      const unreadable = 'unreadable' in sidecar ? sidecar.unreadable : undefined;
      items.push({
        kind: meta?.kind ?? 'context',
        target: meta?.context ?? '?',
        origin: meta?.store ?? '?',
        untilMs: named.untilMs,
        removedMs: meta?.removed_ms,
        bytes,
        parent: q.path,
        entry,
        ...(meta?.reason ? { reason: meta.reason } : {}),
        ...definedOnly({ messages: meta?.messages }),
        identity,
        meta,
        incomplete: !ok,
        ...(payloadMismatch !== undefined ? { payloadMismatch } : {}),
        changedMs,
        ...(inodes !== undefined ? { inodes } : {}),
        ...(unreadable !== undefined
          ? {
              unreadable,
              sidecarTempsOnly: item !== undefined && (await item.list()).every((n) => sidecarTempPid(n) !== undefined),
            }
          : {}),
      });
    } catch (err) {
      problems.push({
        target: q.display(entry),
        code: errnoCode(err) === 'ELOOP' ? Codes.symlink : Codes.ioError,
        detail: `${q.display(entry)}: ${describeError(err)}`,
      });
    } finally {
      await item?.close();
    }
  }
  return { items, trash, kept, problems };
}

/** A held session in a sessions root, as listed. */
export interface RootHeld extends HeldItem {
  identity: Identity;
  uid: number;
  /** the directory's birth time (ns), to vouch for it (src/gchome/registry.ts) */
  birth: bigint;
}

/** The held sessions of one open sessions root (sizes measured when `measure`). */
export async function listRootHeld(root: Dir, measure: boolean): Promise<RootHeld[]> {
  const out: RootHeld[] = [];
  for (const entry of await root.list()) {
    const p = parseSessionQuarantineName(entry);
    if (!p) continue;
    const st = await root.lstat(entry);
    if (!st?.isDirectory()) continue;
    const identity = identityOf(st);
    const bytes = measure ? await measured(root, entry, identity) : 0;
    out.push({
      kind: 'session',
      target: p.session,
      origin: root.path,
      untilMs: p.untilMs,
      removedMs: undefined,
      bytes,
      parent: root.path,
      entry,
      identity,
      uid: Number(st.uid),
      birth: st.birthtimeNs,
    });
  }
  return out;
}

/**
 * The undo window of one truncation: `hook` is TruncateOptions.keepDropped (it keeps the dropped
 * bytes as a `staged` item, holdDropped); `settle(true, carriedTo)` once the rewrite committed
 * marks it `held` and cuts a held old inode to its dropped lines when the new record holds
 * everything after them (trimHeld; it answers the old inode's bytes the record does not hold),
 * `settle(false)` when nothing was dropped, or the rewrite stopped before its rename, removes it. An item left `staged` (the rewrite threw, or we were killed) is resolved by the
 * next sweep against the record's marker (`at_ms`), and a restore puts its lines back as soon as
 * the record carries that marker.
 */
export function dropKeeper(q: Dir, base: Omit<ItemMeta, 'kind' | 'messages' | 'prior' | 'state'> & { at_ms: string }) {
  let held: HeldDropped | undefined;
  let meta: ItemMeta | undefined;
  let rec: { dir: Dir; name: string; to: number } | undefined;
  return {
    hook: async (
      src: FileHandle,
      from: number,
      to: number,
      info: { header: RecordHeader | undefined; dropped: number; dir: Dir; name: string },
    ): Promise<void> => {
      const m: ItemMeta = {
        kind: 'truncation',
        ...base,
        messages: info.dropped,
        prior: markerToMeta(info.header?.truncated),
        state: 'staged',
      };
      held = await holdDropped(q, m, { dir: info.dir, name: info.name }, src, from, to);
      meta = held.payload === RECORD_PAYLOAD ? { ...m, range: { from, to } } : m;
      rec = { dir: info.dir, name: info.name, to };
    },
    get entry(): string | undefined {
      return held?.entry;
    },
    get bytes(): number {
      return held?.bytes ?? 0;
    },
    /** The payload's name in the item (`record.jsonl` or `dropped.jsonl`). */
    get payload(): string {
      return held?.payload ?? DROPPED_PAYLOAD;
    },
    /** The bytes of the held old inode that the new record does not hold (0: none, or a copy was held). */
    async settle(landed: boolean, carriedTo?: number): Promise<number> {
      if (!held || !meta) return 0;
      if (!landed) {
        await dropEmptyItem(q, held.entry);
        return 0;
      }
      await writeMeta(q, held.entry, { ...meta, state: 'held' });
      // A cut that fails only leaves the kept tail held too (more disk until the item goes).
      if (held.linked && rec) return trimHeld(q, held.entry, held.linked, rec.to, rec, carriedTo).catch(() => 0);
      return 0;
    },
  };
}
