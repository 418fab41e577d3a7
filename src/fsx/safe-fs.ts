// Descriptor-relative filesystem access that planted links cannot steer.
// Guarantees:
// - Every directory is opened with O_DIRECTORY|O_NOFOLLOW and its children are reached through
//   `/proc/self/fd/<dirfd>/<name>` (Linux's openat/unlinkat equivalent for plain Node), so a
//   symlink swapped into a path component after we opened a directory is never followed.
// - Files are only opened after `lstat` says they are regular, with O_NOFOLLOW|O_NONBLOCK, and
//   `fstat` must then show the same dev/ino: a FIFO, socket or device is never opened.
// - Nothing here crosses a mount: `openDir` refuses a child on another device.
// - Identity (dev, ino) is compared as bigint so it never loses precision.
import { constants as C, promises as fsp } from 'node:fs';
import * as fs from 'node:fs';
import type { BigIntStats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { Codes, GcError, errnoCode, setProcFdResolver } from '../errors.js';

export type { FileHandle } from 'node:fs/promises';
export type { BigIntStats } from 'node:fs';

export interface Identity {
  dev: bigint;
  ino: bigint;
}

/** The last device number seen: a scan's identities share one bigint per device, not one each. */
let lastDev = 0n;

export function identityOf(st: BigIntStats): Identity {
  if (st.dev !== lastDev) lastDev = st.dev;
  return { dev: lastDev, ino: st.ino };
}

/**
 * An inode number held compactly: a number when exact (no allocation below 2^31, 8 bytes up to
 * 2^53), the bigint itself beyond. `inoOf` gives the bigint back.
 */
export type PackedIno = number | bigint;

export function packIno(ino: bigint): PackedIno {
  return ino <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(ino) : ino;
}

export function inoOf(p: PackedIno): bigint {
  return typeof p === 'bigint' ? p : BigInt(p);
}

export function sameIdentity(a: Identity, b: Identity): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

const DIR_FLAGS = C.O_RDONLY | C.O_DIRECTORY | C.O_NOFOLLOW;
const FILE_READ_FLAGS = C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK;
/**
 * Linux's O_PATH (asm-generic value, used by x86-64, arm64 and the other architectures Node ships
 * for); Node passes numeric flags through to open(2). Undefined elsewhere: such repairs are
 * reported instead of done.
 */
const O_PATH: number | undefined =
  process.platform === 'linux' &&
  ['x64', 'arm64', 'ia32', 'arm', 'riscv64', 's390x', 'ppc64', 'loong64'].includes(process.arch)
    ? 0o10000000
    : undefined;

export function processUid(): number {
  return typeof process.geteuid === 'function' ? process.geteuid() : -1;
}

/** Reads Dir.relativePassSync offers, relative to the directory. */
export interface RelativeReads {
  /**
   * lstat: the stats, undefined when the entry does not exist (ENOENT, or ENOTDIR for a path
   * through a non-directory), or the error.
   */
  lstat(path: string): BigIntStats | undefined | Error;
  /**
   * The names in a directory, unsorted, or the error. The last segment is followed if it is a
   * link (readdir opens by name): what it lists may only send the caller to its descriptor-relative
   * path, never be acted on.
   */
  list(path: string): string[] | Error;
  /**
   * Reads of the directory at `path` from inside it: the working directory becomes that
   * directory, and `read` runs only when its lstat('.') has the identity `expect`, so the names it
   * lists and lstats are that directory's own whatever is renamed or swapped for a link meanwhile
   * (no path it reads has a segment that could be resolved again). `read` gets that lstat of the
   * directory itself. undefined: it is not that directory, or it cannot be entered (or the pass
   * cannot change the working directory). The other reads are relative to the pass's directory
   * again after.
   */
  inside<T>(path: string, expect: Identity, read: (d: InsideReads, self: BigIntStats) => T): T | undefined;
}

/** Reads of one directory from inside it (RelativeReads.inside): of its entries by single name. */
export interface InsideReads {
  /** The names in the directory, unsorted, or the error. */
  list(): string[] | Error;
  /** lstat of the entry `name` (one segment): the stats, undefined when it does not exist, or the error. */
  lstat(name: string): BigIntStats | undefined | Error;
}

/**
 * Report path of each directory descriptor number (kept after close — an error is often described
 * after its directory was closed — and replaced when the number is reused by another Dir):
 * error texts name these, never /proc/self/fd/N.
 */
const openDirPaths = new Map<number, string>();
setProcFdResolver((fd) => openDirPaths.get(fd));

/**
 * An open directory; children are addressed relative to its descriptor.
 * Metadata calls (lstat, open, fstat, readdir, rename, unlink, chmod) are synchronous under async
 * signatures: each is a few microseconds, whereas a thread-pool round trip costs ~50 µs, which
 * dominated sweeps over tens of thousands of entries. Callers await between items, so timers (lock
 * refresh, signals) still run; bulk reads and writes stay asynchronous and streamed.
 */
export class Dir {
  private closed = false;
  private constructor(
    /** Human path used in reports (the path we believe this directory has). */
    readonly path: string,
    private readonly dirFd: number,
    readonly stat: BigIntStats,
  ) {
    openDirPaths.set(dirFd, path);
  }

  /**
   * Open `path` as a directory. `followFinal` allows the last component to be a symlink (only
   * for user-configured anchors such as the murmur home); everything below is never followed.
   */
  static async open(path: string, opts: { followFinal?: boolean } = {}): Promise<Dir> {
    await Promise.resolve();
    return Dir.openSync(path, opts.followFinal ? C.O_RDONLY | C.O_DIRECTORY : DIR_FLAGS);
  }

  private static openSync(path: string, flags: number, check?: (st: BigIntStats) => void, display = path): Dir {
    const fd = fs.openSync(path, flags);
    try {
      const st = fs.fstatSync(fd, { bigint: true });
      check?.(st);
      return new Dir(display, fd, st);
    } catch (err) {
      fs.closeSync(fd);
      throw err;
    }
  }

  get fd(): number {
    return this.dirFd;
  }

  get identity(): Identity {
    return identityOf(this.stat);
  }

  /** Kernel path of a child, resolved relative to this descriptor. */
  child(name: string): string {
    assertSegment(name);
    return `/proc/self/fd/${this.dirFd}/${name}`;
  }

  /**
   * Whether this process may create and remove entries in this directory: access(2) with
   * W_OK|X_OK on the descriptor's own inode (`/proc/self/fd/<N>`), which writes nothing and
   * answers for the mount the descriptor was opened on. undefined when it may; else the errno
   * code: EROFS (a read-only filesystem or bind mount, e.g. a systemd sandbox), EACCES or EPERM
   * (mode bits, ACLs, a security module). Like access(2), judged for the real uid (murmur-gc
   * runs with real = effective uid).
   */
  async writeDenied(): Promise<'EROFS' | 'EACCES' | 'EPERM' | undefined> {
    try {
      await fsp.access(`/proc/self/fd/${this.dirFd}`, C.W_OK | C.X_OK);
      return undefined;
    } catch (err) {
      const code = errnoCode(err);
      if (code === 'EROFS' || code === 'EACCES' || code === 'EPERM') return code;
      throw err;
    }
  }

  /** Report path of a child. */
  display(name: string): string {
    return this.path.endsWith('/') ? this.path + name : `${this.path}/${name}`;
  }

  async list(): Promise<string[]> {
    await Promise.resolve();
    return this.listSync();
  }

  listSync(): string[] {
    return fs.readdirSync(`/proc/self/fd/${this.dirFd}`).sort();
  }

  /**
   * The path the kernel has for this directory now (readlink of `/proc/self/fd/<N>`): where the
   * descriptor really is, whatever links led to it or moves happened since.
   */
  realPathSync(): string {
    return fs.readlinkSync(`/proc/self/fd/${this.dirFd}`);
  }

  /** lstat a child; undefined when it does not exist. */
  async lstat(name: string): Promise<BigIntStats | undefined> {
    await Promise.resolve();
    return this.lstatSync(name);
  }

  lstatSync(name: string): BigIntStats | undefined {
    try {
      return fs.lstatSync(this.child(name), { bigint: true });
    } catch (err) {
      if (errnoCode(err) === 'ENOENT') return undefined;
      throw err;
    }
  }

  /**
   * Run `pass` with reads of paths below this directory (`name`, or `name/name`: each segment a
   * single name, as child() demands, else the read throws), all synchronous. While the pass runs, the process's working directory is
   * this descriptor's own directory and the paths are relative to it: the kernel resolves one
   * component per segment, against the five of `/proc/self/fd/<N>/…` (a warm sweep makes two
   * lstats per session and three calls per record; this halves their kernel time). It is put back
   * before this returns, even on a throw; nothing asynchronous can run in between, so no other
   * code sees the change, and `pass` itself must not use a relative path of its own. Where the
   * working directory cannot be changed or put back (a worker thread, no read permission on the
   * starting directory), the same reads go through `/proc/self/fd/<N>`, with the same results.
   * What a pass should keep is what it needs, not the stats: stats held across many reads outlive
   * the young generation and cost the garbage collector more than the reads.
   */
  relativePassSync<T>(pass: (at: RelativeReads) => T): T {
    const before = enterDirSync(this.dirFd);
    const prefix = before !== undefined ? '' : `/proc/self/fd/${this.dirFd}/`;
    const checked = (path: string): string => {
      if (NOT_RELATIVE_NAMES.test(path))
        throw new GcError(
          Codes.ioError,
          `refusing a path that is not a chain of single names: ${JSON.stringify(path)}`,
        );
      return prefix + path;
    };
    const home = `/proc/self/fd/${this.dirFd}`;
    // inside() leaves the working directory where it read; the next read by path goes back first
    let away = false;
    const back = () => {
      if (away) process.chdir(home);
      away = false;
    };
    const inside: InsideReads = {
      list: () => listSync('.'),
      lstat: (name) => {
        if (NOT_RELATIVE_NAMES.test(name) || name.includes('/'))
          throw new GcError(Codes.ioError, `refusing a path that is not a single name: ${JSON.stringify(name)}`);
        return lstatSync(name);
      },
    };
    try {
      return pass({
        lstat(path) {
          const at = checked(path);
          back();
          return lstatSync(at);
        },
        list(path) {
          const at = checked(path);
          back();
          return listSync(at);
        },
        inside(path, expect, read) {
          checked(path);
          if (before === undefined) return undefined;
          try {
            away = true;
            process.chdir(`${home}/${path}`);
          } catch {
            return undefined;
          }
          const self = lstatSync('.');
          if (self === undefined || self instanceof Error || !sameIdentity(identityOf(self), expect)) return undefined;
          return read(inside, self);
        },
      });
    } finally {
      if (before !== undefined) leaveDirSync(before);
    }
  }

  /** Open a child directory without following a link and without crossing a mount. */
  async openDir(name: string, expect?: Identity): Promise<Dir> {
    await Promise.resolve();
    return Dir.openSync(
      this.child(name),
      DIR_FLAGS,
      (st) => {
        if (st.dev !== this.stat.dev) {
          throw new GcError(Codes.crossDevice, `${this.display(name)} is on another filesystem; not crossing a mount`);
        }
        if (expect && !sameIdentity(identityOf(st), expect)) {
          throw new GcError(Codes.changedSinceScan, `${this.display(name)} was replaced since it was scanned`);
        }
      },
      this.display(name),
    );
  }

  /**
   * Re-open the directory this one sits in (`..`) — used by walks that close ancestors to stay
   * within descriptor limits. It must be the directory `expect` names (a moved subtree is
   * refused with `changed_since_scan`, never followed elsewhere).
   */
  async openParent(expect: Identity, display: string): Promise<Dir> {
    await Promise.resolve();
    return Dir.openSync(
      `/proc/self/fd/${this.dirFd}/..`,
      DIR_FLAGS,
      (st) => {
        if (!sameIdentity(identityOf(st), expect))
          throw new GcError(Codes.changedSinceScan, `${display} was moved while it was being walked`);
      },
      display,
    );
  }

  /** lstat a child that must be a regular file: never a link, FIFO, socket or device. */
  private regularChild(name: string): BigIntStats {
    return this.checkRegular(name, this.lstatSync(name));
  }

  private checkRegular(name: string, pre: BigIntStats | undefined): BigIntStats {
    if (!pre) {
      const err = new Error(`ENOENT: ${this.display(name)}`) as Error & { code: string };
      err.code = 'ENOENT';
      throw err;
    }
    if (pre.isSymbolicLink())
      throw new GcError(Codes.symlink, `${this.display(name)} is a symbolic link; not following it`);
    if (!pre.isFile())
      throw new GcError(Codes.notRegular, `${this.display(name)} is not a regular file; not opening it`);
    return pre;
  }

  /** What was opened must be the regular file lstat saw (no swap between lstat and open). */
  private assertSameFile(name: string, pre: BigIntStats, st: BigIntStats): void {
    if (!st.isFile() || !sameIdentity(identityOf(st), identityOf(pre))) {
      throw new GcError(Codes.changedSinceScan, `${this.display(name)} changed while it was being opened`);
    }
  }

  /**
   * Open a regular child file read-only. Refuses anything lstat does not call a regular file
   * (so a FIFO is never opened) and anything whose identity changes between lstat and open.
   */
  async openFile(name: string, opts: { write?: boolean } = {}): Promise<{ fh: FileHandle; stat: BigIntStats }> {
    const pre = this.regularChild(name);
    const flags = opts.write ? C.O_RDWR | C.O_NOFOLLOW | C.O_NONBLOCK : FILE_READ_FLAGS;
    const fh = await fsp.open(this.child(name), flags);
    try {
      const st = fs.fstatSync(fh.fd, { bigint: true });
      this.assertSameFile(name, pre, st);
      return { fh, stat: st };
    } catch (err) {
      await fh.close();
      throw err;
    }
  }

  /**
   * Read a regular child whole when it is at most `maxBytes` (same refusals as openFile); returns
   * undefined when it is larger (the caller streams it instead). Synchronous: for small files.
   */
  readSmallSync(
    name: string,
    maxBytes: number,
    lstat?: BigIntStats,
    into?: Buffer,
  ): { data: Buffer; stat: BigIntStats } | undefined {
    const pre = lstat ?? this.lstatSync(name);
    if (pre?.isFile() && pre.size > BigInt(maxBytes)) return undefined;
    const r = this.readHeadSync(name, maxBytes, pre, into);
    return Number(r.stat.size) > maxBytes ? undefined : r;
  }

  /**
   * Read at most the first `maxBytes` of a regular child (same refusals as openFile). `lstat`: the
   * child's lstat the caller just made (saves making it again; what is opened must still be that
   * file). `into`: a buffer to read into when it is large enough (the data returned is a view of
   * it, valid until the caller reuses it). Synchronous.
   */
  readHeadSync(
    name: string,
    maxBytes: number,
    lstat?: BigIntStats,
    into?: Buffer,
  ): { data: Buffer; stat: BigIntStats } {
    const pre = lstat ? this.checkRegular(name, lstat) : this.regularChild(name);
    const fd = fs.openSync(this.child(name), FILE_READ_FLAGS);
    try {
      const st = fs.fstatSync(fd, { bigint: true });
      this.assertSameFile(name, pre, st);
      const want = Math.min(Number(st.size), maxBytes);
      const data = into && into.length >= want ? into.subarray(0, want) : Buffer.allocUnsafe(want);
      let off = 0;
      while (off < data.length) {
        const n = fs.readSync(fd, data, off, data.length - off, off);
        if (n === 0) break;
        off += n;
      }
      return { data: data.subarray(0, off), stat: st };
    } finally {
      fs.closeSync(fd);
    }
  }

  /**
   * Open a regular child read-only and keep the descriptor (same refusals as openFile); the
   * caller reads it with `syncIo.read` and must `syncIo.close` it. Synchronous.
   */
  openReadFdSync(name: string): { fd: number; stat: BigIntStats } {
    const pre = this.regularChild(name);
    const fd = fs.openSync(this.child(name), FILE_READ_FLAGS);
    try {
      const st = fs.fstatSync(fd, { bigint: true });
      this.assertSameFile(name, pre, st);
      return { fd, stat: st };
    } catch (err) {
      fs.closeSync(fd);
      throw err;
    }
  }

  /** Open a regular child for appending (never creating it). */
  async openAppend(name: string): Promise<{ fh: FileHandle; stat: BigIntStats }> {
    const pre = this.regularChild(name);
    const fh = await fsp.open(this.child(name), C.O_WRONLY | C.O_APPEND | C.O_NOFOLLOW | C.O_NONBLOCK);
    try {
      const st = fs.fstatSync(fh.fd, { bigint: true });
      this.assertSameFile(name, pre, st);
      return { fh, stat: st };
    } catch (err) {
      await fh.close();
      throw err;
    }
  }

  /** Create a new file exclusively (O_EXCL|O_NOFOLLOW) with `mode`, then fchmod to beat the umask. */
  async createExclusive(name: string, mode: number): Promise<FileHandle> {
    const fh = await fsp.open(this.child(name), C.O_RDWR | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, mode);
    try {
      fs.fchmodSync(fh.fd, mode);
      return fh;
    } catch (err) {
      await fh.close();
      throw err;
    }
  }

  /** mkdir a child with `mode` (fchmod'ed after to beat the umask); existing dirs are left alone. */
  async mkdir(name: string, mode: number): Promise<Dir> {
    try {
      fs.mkdirSync(this.child(name), { mode });
    } catch (err) {
      if (errnoCode(err) !== 'EEXIST') throw err;
    }
    const d = await this.openDir(name);
    if (Number(d.stat.mode & 0o7777n) !== mode && d.stat.uid === BigInt(processUid())) {
      fs.fchmodSync(d.dirFd, mode);
    }
    return d;
  }

  async rename(from: string, to: string): Promise<void> {
    await Promise.resolve();
    fs.renameSync(this.child(from), this.child(to));
  }

  /**
   * rename a child of this directory to a child of `other` (both descriptor-relative). Across
   * filesystems the kernel refuses (EXDEV): nothing is ever copied.
   */
  async renameInto(from: string, other: Dir, to: string): Promise<void> {
    await Promise.resolve();
    fs.renameSync(this.child(from), other.child(to));
  }

  /**
   * Hard-link child `from` (never following it if it is a symlink: link(2) does not) as `to` in
   * `other`. Across filesystems the kernel refuses (EXDEV). The caller checks the new link's
   * identity (the name may have been replaced since it was opened).
   */
  async linkInto(from: string, other: Dir, to: string): Promise<void> {
    await Promise.resolve();
    fs.linkSync(this.child(from), other.child(to));
  }

  renameSync(from: string, to: string): void {
    fs.renameSync(this.child(from), this.child(to));
  }

  async unlink(name: string): Promise<void> {
    await Promise.resolve();
    fs.unlinkSync(this.child(name));
  }

  async rmdir(name: string): Promise<void> {
    await Promise.resolve();
    fs.rmdirSync(this.child(name));
  }

  /**
   * chmod a child no descriptor can be read through (mode 0000 to its owner) without ever
   * resolving its name at the moment of the chmod (CVE-2018-6954 class): the entry itself is
   * opened with O_PATH|O_NOFOLLOW (no read permission needed; a symlink yields a descriptor on
   * the link, never its target), `fstat` must show the non-link entry the scan saw, and the mode
   * is set through `/proc/self/fd/<N>`, which names that inode and nothing else.
   */
  async chmodChildNoFollow(name: string, expect: Identity, mode: number): Promise<void> {
    await Promise.resolve();
    if (O_PATH === undefined) {
      throw new GcError(
        Codes.ioError,
        `${this.display(name)} cannot be opened by its owner and this platform has no O_PATH; its mode is left alone`,
      );
    }
    const fd = fs.openSync(this.child(name), O_PATH | C.O_NOFOLLOW);
    try {
      const st = fs.fstatSync(fd, { bigint: true });
      if (st.isSymbolicLink() || !sameIdentity(identityOf(st), expect)) {
        throw new GcError(Codes.changedSinceScan, `${this.display(name)} changed since it was scanned`);
      }
      fs.chmodSync(`/proc/self/fd/${fd}`, mode);
    } finally {
      fs.closeSync(fd);
    }
  }

  /**
   * Write a small file atomically: exclusive temp (mode), fsync, rename over `name`, fsync dir.
   * `durable: false` skips both fsyncs (still atomic; after a crash the old or new contents).
   */
  async writeFileAtomic(
    name: string,
    data: string | Buffer,
    mode: number,
    opts: { durable?: boolean } = {},
  ): Promise<void> {
    const durable = opts.durable ?? true;
    const tmp = `.${name}.${process.pid}.${Date.now().toString(16)}${Math.random().toString(16).slice(2, 10)}.tmp`;
    const fh = await this.createExclusive(tmp, mode);
    let renamed = false;
    try {
      await fh.writeFile(data);
      if (durable) await fh.sync();
      await fh.close();
      await this.rename(tmp, name);
      renamed = true;
      if (durable) await this.sync().catch(() => undefined);
    } finally {
      await fh.close().catch(() => undefined);
      if (!renamed) await this.unlink(tmp).catch(() => undefined);
    }
  }

  /** fchmod this directory itself. */
  async chmodSelf(mode: number): Promise<void> {
    await Promise.resolve();
    fs.fchmodSync(this.dirFd, mode);
  }

  async sync(): Promise<void> {
    await new Promise<void>((resolve, reject) => fs.fsync(this.dirFd, (err) => (err ? reject(err) : resolve())));
  }

  /** `await using d = await Dir.open(…)` closes it at the end of the block, as close() does. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async close(): Promise<void> {
    await Promise.resolve();
    if (this.closed) return;
    this.closed = true;
    try {
      fs.closeSync(this.dirFd);
    } catch {
      // already closed
    }
  }
}

let lastYield = performance.now();

/**
 * Let timers and signal handlers run when synchronous metadata work has held the event loop for
 * more than ~20 ms (lock refresh, SIGTERM). Call once per item in long scans; cheap otherwise.
 */
export async function yieldIfBusy(): Promise<void> {
  const now = performance.now();
  if (now - lastYield < 20) return;
  await new Promise<void>((resolve) => setImmediate(resolve));
  lastYield = performance.now();
}

/**
 * Make the descriptor's directory the working directory. Returns the descriptor of the working
 * directory it replaced (held open, so leaveDirSync can go back to it even if it was renamed or
 * removed meanwhile), or undefined when the change cannot be made or could not be undone (no read
 * permission on the working directory, a worker thread): then nothing was changed.
 */
function enterDirSync(dirFd: number): number | undefined {
  let before: number;
  try {
    before = fs.openSync('.', C.O_RDONLY | C.O_DIRECTORY);
  } catch {
    return undefined;
  }
  try {
    process.chdir(`/proc/self/fd/${dirFd}`);
    return before;
  } catch {
    fs.closeSync(before);
    return undefined;
  }
}

/** lstat for a relative pass: the stats, undefined when there is none (ENOENT, ENOTDIR), or the error. */
function lstatSync(path: string): BigIntStats | undefined | Error {
  try {
    return fs.lstatSync(path, { bigint: true, throwIfNoEntry: false });
  } catch (err) {
    return errnoCode(err) === 'ENOTDIR' ? undefined : (err as Error);
  }
}

/** readdir for a relative pass: the names, or the error. */
function listSync(path: string): string[] | Error {
  try {
    return fs.readdirSync(path);
  } catch (err) {
    return err as Error;
  }
}

/** Back to the working directory enterDirSync replaced (the root directory if even that fails). */
function leaveDirSync(before: number): void {
  try {
    process.chdir(`/proc/self/fd/${before}`);
  } catch {
    process.chdir('/');
  } finally {
    fs.closeSync(before);
  }
}

/**
 * A relative path that is not one or more single names joined by '/': an empty segment (a leading,
 * trailing or doubled '/', or nothing at all), a '.' or '..' segment, or a NUL byte. One test,
 * with no string made per segment (the warm scans check thousands of paths).
 */
const NOT_RELATIVE_NAMES = /(?:^|\/)\.{0,2}(?:\/|$)|\0/;

/** A name the runtime would accept as one path segment. Guards every child() call. */
export function assertSegment(name: string): void {
  if (name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0')) {
    throw new GcError(Codes.ioError, `refusing a path segment that is not a single name: ${JSON.stringify(name)}`);
  }
}

export function modeBits(st: BigIntStats): number {
  return Number(st.mode & 0o7777n);
}

export function formatMode(mode: number): string {
  return '0' + mode.toString(8).padStart(3, '0');
}

/** lstat an absolute path (for anchors such as the home or a configured root). */
export async function lstatPath(path: string): Promise<BigIntStats | undefined> {
  try {
    return await fsp.lstat(path, { bigint: true });
  } catch (err) {
    if (errnoCode(err) === 'ENOENT' || errnoCode(err) === 'ENOTDIR') return undefined;
    throw err;
  }
}

export async function realpath(path: string): Promise<string> {
  return fsp.realpath(path);
}

/** Read a small regular file through a Dir (max `limit` bytes); never opens non-regular files. */
export async function readSmallFile(dir: Dir, name: string, limit = 1 << 20): Promise<Buffer> {
  const { fh, stat } = await dir.openFile(name);
  await using _ = fh;
  if (stat.size > BigInt(limit)) {
    throw new GcError(
      Codes.fileTooLarge,
      `${dir.display(name)} is larger than ${limit} bytes (${stat.size} bytes); not reading it`,
    );
  }
  const buf = Buffer.alloc(Number(stat.size));
  let off = 0;
  while (off < buf.length) {
    const { bytesRead } = await fh.read(buf, off, buf.length - off, off);
    if (bytesRead === 0) break;
    off += bytesRead;
  }
  return buf.subarray(0, off);
}

// Synchronous helpers used inside the staged rewrite's commit window, where nothing may be awaited.
export const syncIo = {
  fstat: (fd: number): BigIntStats => fs.fstatSync(fd, { bigint: true }),
  read: (fd: number, buf: Buffer, pos: number, len: number): number => fs.readSync(fd, buf, 0, len, pos),
  write: (fd: number, buf: Buffer, len: number, pos: number): number => fs.writeSync(fd, buf, 0, len, pos),
  fsyncAsync: (fd: number): Promise<void> =>
    new Promise<void>((resolve, reject) => fs.fsync(fd, (err) => (err ? reject(err) : resolve()))),
  ftruncate: (fd: number, len: number): void => fs.ftruncateSync(fd, len),
  /** Open an existing regular file for O_APPEND writes (never creating, never following a link). */
  openAppend: (path: string): number => fs.openSync(path, C.O_WRONLY | C.O_APPEND | C.O_NOFOLLOW | C.O_NONBLOCK),
  /** One write on an O_APPEND descriptor: the kernel places it at end of file. */
  appendWrite: (fd: number, buf: Buffer): number => fs.writeSync(fd, buf, 0, buf.length),
  close: (fd: number): void => {
    try {
      fs.closeSync(fd);
    } catch {
      // already closed
    }
  },
};

/** Read /proc/<pid>/stat (small, virtual); undefined if the process is gone or unreadable. */
export async function readProcStat(pid: number): Promise<string | undefined> {
  try {
    return await fsp.readFile(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return undefined;
  }
}
