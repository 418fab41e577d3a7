// What murmur-gc itself placed under one of its own names in a directory a capsule can write (a
// sessions root other than `<home>/gc`, a `W/.murmur/children/`): its holds
// (`.murmur-gc-quarantine.<until>.<ses>`), trash (`.murmur-gc-trash.<run>.<name>`) and kept-aside
// directories (`.murmur-gc-kept.<run>.<name>`). A capsule can create any of those names in its own
// workdir; it cannot write `<home>/gc/registry.jsonl`, so only an entry this registry names is
// murmur-gc's (the trust rule: docs/design.md §4a).
// Guarantees:
// - An entry is vouched for only by its name together with the device, inode and birth time of
//   the directory murmur-gc renamed to that name (a rename keeps all three): a planted directory,
//   or one put in place of ours, is never vouched for, whatever its name.
// - Exactly-once under a kill: every record is on disk (appended, fsync'ed) before the rename that
//   makes its name; a record whose rename never happened (or whose entry is gone since: purged,
//   finished, restored) names nothing that exists, and settling drops it. Settling rewrites the
//   file atomically (temp 0600, fsync, rename) with what still exists and a closing `settled`
//   line; a file that does not end with it was left by a killed run and is settled before it is
//   trusted again. A torn last line (a kill inside an append) is ignored: its rename never came.
// - Cheap: one read per sweep; one append (one fsync) per batch of acts; one rewrite at the end
//   of a sweep (or restore) that appended or acted on what it names — an lstat per record.
// - Written only under the sweep lock (a sweep, a restore); read by the read-only views too.
//   Holds paths, names, ids, times and inode numbers only.
import { Codes, GcError, describeError } from '../errors.js';
import { Dir, readSmallFile, type BigIntStats, type Identity } from '../fsx/safe-fs.js';
import { GC_DIR_NAME } from './paths.js';
import { failpoint } from '../failpoint.js';
import { groupBy } from '../group-by.js';

export const REGISTRY_FILE = 'registry.jsonl';
/** A registry larger than this is not read (about 250 000 records): nothing is vouched for. */
export const REGISTRY_MAX_BYTES = 64 << 20;

export type PlacedKind = 'hold' | 'trash' | 'kept';

/** One entry murmur-gc placed (or is about to place) in a capsule-writable directory. */
export interface Placed {
  /** the directory it is in, as the sweep reached it */
  dir: string;
  name: string;
  kind: PlacedKind;
  /** of the directory renamed to `name`: device, inode, birth time in ns ("0": none kept) */
  dev: string;
  ino: string;
  birth: string;
  /** the murmur-gc run that placed it */
  run: string;
  /** a hold: the session held, until when, and the rule that took it */
  session?: string;
  until_ms?: number;
  reason?: string;
}

/** What an entry is on disk: its identity and birth time (bigint stats: `birthtimeNs`). */
export interface Fingerprint {
  identity: Identity;
  birth: bigint;
}

export function fingerprintOf(st: BigIntStats): Fingerprint {
  return { identity: { dev: st.dev, ino: st.ino }, birth: st.birthtimeNs };
}

const keyOf = (name: string, fp: { dev: string; ino: string }): string => `${name}\0${fp.dev}\0${fp.ino}`;

function isPlaced(v: unknown): v is Placed & { op: 'add' } {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  const str = (k: string) => typeof o[k] === 'string' && o[k].length > 0;
  return (
    o['op'] === 'add' &&
    str('dir') &&
    str('name') &&
    (o['kind'] === 'hold' || o['kind'] === 'trash' || o['kind'] === 'kept') &&
    str('dev') &&
    str('ino') &&
    typeof o['birth'] === 'string' &&
    str('run')
  );
}

/** The records of `<home>/gc/registry.jsonl`, as one sweep (or restore, or view) holds them. */
export class Registry {
  private readonly records = new Map<string, Placed>();
  /** the file ended with its `settled` line (or there is none) */
  private settledAtLoad = true;
  /** the file's last byte is a newline (or there is no file) */
  private endsWithNewline = true;
  /** something was appended, or something it names was acted on, since it was loaded */
  private changed = false;
  /** why it could not be read: nothing is vouched for, and it is never rewritten */
  readonly unreadable: string | undefined;

  private constructor(unreadable?: string) {
    this.unreadable = unreadable;
  }

  /** From the file's text (a torn or garbage line is passed over). */
  static parse(text: string): Registry {
    const r = new Registry();
    let last = '';
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      last = line;
      let o: unknown;
      try {
        o = JSON.parse(line);
      } catch {
        continue;
      }
      if (!isPlaced(o)) continue;
      const { op: _op, ...p } = o;
      r.records.set(keyOf(p.name, p), definedPlaced(p));
    }
    r.settledAtLoad = text.length === 0 || last === SETTLED;
    r.endsWithNewline = text.length === 0 || text.endsWith('\n');
    return r;
  }

  /** No registry (no home): nothing is vouched for. */
  static empty(): Registry {
    return new Registry();
  }

  /** `<home>/gc/registry.jsonl`; empty when there is none; when it cannot be read, empty and `unreadable`. */
  static async load(home: Dir | undefined): Promise<Registry> {
    if (!home) return new Registry();
    let gc: Dir | undefined;
    try {
      if (!(await home.lstat(GC_DIR_NAME))?.isDirectory()) return new Registry();
      gc = await home.openDir(GC_DIR_NAME);
      if (!(await gc.lstat(REGISTRY_FILE))) return new Registry();
      return Registry.parse((await readSmallFile(gc, REGISTRY_FILE, REGISTRY_MAX_BYTES)).toString('utf8'));
    } catch (err) {
      return new Registry(`${home.display(`${GC_DIR_NAME}/${REGISTRY_FILE}`)}: ${describeError(err)}`);
    } finally {
      await gc?.close();
    }
  }

  /** The record that vouches for `name` being the entry `fp`, or undefined: then it is not murmur-gc's. */
  vouch(name: string, fp: Fingerprint): Placed | undefined {
    const p = this.records.get(keyOf(name, { dev: String(fp.identity.dev), ino: String(fp.identity.ino) }));
    if (!p) return undefined;
    // A filesystem that keeps no birth time says 0: then the inode alone speaks.
    if (p.birth !== '0' && fp.birth !== 0n && p.birth !== String(fp.birth)) return undefined;
    return p;
  }

  /** Whether `place` must run before an act that makes `name` for `fp` (it is not recorded yet). */
  has(name: string, fp: Fingerprint): boolean {
    return this.vouch(name, fp) !== undefined;
  }

  /** Records in hand; `needsSettling` once anything was appended or acted on, or the file was left unsettled. */
  get needsSettling(): boolean {
    return this.unreadable === undefined && (this.changed || !this.settledAtLoad);
  }

  /** Something this registry names was acted on (purged, restored, finished): settle at the end. */
  touched(): void {
    this.changed = true;
  }

  /**
   * Append `items` durably (fsync'ed) to `<home>/gc/registry.jsonl` before the acts that make their
   * names. Items already recorded are not written again. Throws when they cannot be written: the
   * caller must then not make those names.
   */
  async place(home: Dir, items: readonly Placed[]): Promise<void> {
    const fresh = items.filter((p) => !this.records.has(keyOf(p.name, p)));
    if (fresh.length === 0) return;
    if (this.unreadable !== undefined)
      throw new GcError(
        Codes.ioError,
        `${this.unreadable}; what murmur-gc would place in a capsule's directory cannot be recorded, so nothing is`,
      );
    let text = this.endsWithNewline ? '' : '\n';
    for (const p of fresh) text += JSON.stringify({ op: 'add', ...p }) + '\n';
    const gc = await home.mkdir(GC_DIR_NAME, 0o700);
    try {
      const fh = (await gc.lstat(REGISTRY_FILE))
        ? (await gc.openAppend(REGISTRY_FILE)).fh
        : await gc.createExclusive(REGISTRY_FILE, 0o600);
      try {
        await fh.write(text);
        await fh.sync();
      } finally {
        await fh.close();
      }
      await gc.sync().catch(() => undefined);
    } finally {
      await gc.close();
    }
    this.endsWithNewline = true;
    this.settledAtLoad = false;
    this.changed = true;
    for (const p of fresh) this.records.set(keyOf(p.name, p), p);
    failpoint('registry:after_place');
  }

  /**
   * Keep the records whose entry is still there, with the recorded device, inode and birth time;
   * rewrite the file atomically with them and the `settled` line. A directory that cannot be
   * opened now (other than gone) keeps its records.
   */
  async settle(home: Dir): Promise<void> {
    if (!this.needsSettling) return;
    const byDir = groupBy(this.records.values(), (p) => p.dir);
    const keep: Placed[] = [];
    for (const [dir, list] of byDir) {
      let d: Dir;
      try {
        d = await Dir.open(dir);
      } catch (err) {
        const c = (err as { code?: unknown }).code;
        if (c !== 'ENOENT' && c !== 'ENOTDIR') keep.push(...list);
        continue;
      }
      await using _ = d;
      for (const p of list) {
        const st = await d.lstat(p.name);
        if (
          st?.isDirectory() &&
          String(st.dev) === p.dev &&
          String(st.ino) === p.ino &&
          (p.birth === '0' || st.birthtimeNs === 0n || String(st.birthtimeNs) === p.birth)
        )
          keep.push(p);
      }
    }
    const text = keep.map((p) => JSON.stringify({ op: 'add', ...p }) + '\n').join('') + SETTLED + '\n';
    await using gc = await home.mkdir(GC_DIR_NAME, 0o700);
    await gc.writeFileAtomic(REGISTRY_FILE, text, 0o600);
    this.records.clear();
    for (const p of keep) this.records.set(keyOf(p.name, p), p);
    this.settledAtLoad = true;
    this.endsWithNewline = true;
    this.changed = false;
  }
}

const SETTLED = JSON.stringify({ op: 'settled' });

function definedPlaced(p: Placed): Placed {
  const out: Placed = { dir: p.dir, name: p.name, kind: p.kind, dev: p.dev, ino: p.ino, birth: p.birth, run: p.run };
  if (typeof p.session === 'string') out.session = p.session;
  if (typeof p.until_ms === 'number' && Number.isSafeInteger(p.until_ms)) out.until_ms = p.until_ms;
  if (typeof p.reason === 'string') out.reason = p.reason;
  return out;
}

/** The record of a directory (stats `st`) murmur-gc is about to rename to `name` in `dir`. */
export function placing(
  dir: string,
  name: string,
  kind: PlacedKind,
  st: Fingerprint,
  run: string,
  hold?: { session: string; untilMs: number; reason: string },
): Placed {
  return {
    dir,
    name,
    kind,
    dev: String(st.identity.dev),
    ino: String(st.identity.ino),
    birth: String(st.birth),
    run,
    ...(hold ? { session: hold.session, until_ms: hold.untilMs, reason: hold.reason } : {}),
  };
}
