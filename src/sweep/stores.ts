// Store sizes for `murmur-gc status`: sessions in the configured sessions roots, conversation
// records under `<home>/conversations`, murmur-gc's audit sessions in `<home>/gc`, what the
// undo window holds (`quarantine ls`'s listing), and what removals could not remove whole and set
// aside (`.murmur-gc-kept.*` in a sessions root — only those murmur-gc's registry names, see
// docs/design.md §4a — a record store or `<home>/gc/quarantine`).
// Guarantees: read-only (nothing is created, chmod'ed or locked); directories are walked
// descriptor-relatively without following links or crossing mounts (src/fsx/remove.ts
// `measureDir`); bytes are allocated bytes (what `du` counts, as the disk budgets count them: a
// sparse file counts its blocks, not its length); an entry that cannot be read is counted in
// `unreadable` and the rest is still measured. Records are enumerated by the sweep's own
// inventory (src/runtime/inventory.ts), which reads only their header line, never a message; each
// context directory is measured whole, as `max_bytes` measures it. Beside a `W/.murmur` root, what
// lives in W is sized too: child workdirs (tied to a session by its trace, or orphaned), `wrk_`
// logs, other logs, and the capsule's own entries murmur-gc never manages. The traces read for
// that are summarized as a sweep's are (bounded, docs/limits.md), holding none of their
// unaccounted work.
// The next expiries (src/plan/expiries.ts) come from what this walk reads anyway — the held
// items' deadlines and sizes, the session names, the records' headers and mtimes — and the
// protection list: no trace is read for them.
import { listHeld, registryOf } from '../gchome/held-listing.js';
import { fingerprintOf, type Registry } from '../gchome/registry.js';
import { listRootHeld } from '../gchome/quarantine-store.js';
import { readTraceSummary } from '../runtime/trace-scan.js';
import { CONVERSATIONS_DIR, scanRecords, scanSessionsRoot, type ContextScan } from '../runtime/inventory.js';
import { GC_DIR_NAME } from '../gchome/paths.js';
import { KEPT_PREFIX, allocatedBytes, measureDir } from '../fsx/remove.js';
import { keptSinceMs } from '../runtime/gc-entries.js';
import { CAPSULE_ENTRIES, CHILDREN_DIR, scanBeside } from '../runtime/workdir-scan.js';
import { childEntryName } from '../plan/workdir.js';
import { QUARANTINE_DIR } from '../gchome/quarantine-layout.js';
import { Dir, lstatPath } from '../fsx/safe-fs.js';
import { Codes, errnoCode } from '../errors.js';
import { isSessionName } from '../runtime/ids.js';
import type { GcConfig } from '../config/types.js';
import { earliest, nextPurge, nextRecordAge, nextSessionAge, type NextMaxAge } from '../plan/expiries.js';
import { readProtection } from '../gchome/protect-file.js';
import { ProtectionSet } from '../gchome/protect-list.js';
import type {
  BesideSizes,
  KeptAside,
  NextExpiries,
  RecordStoreSize,
  RootSize,
  StoreSizes,
} from '../schema/json-schemas.js';
import { groupBy } from '../group-by.js';

/** What `status` shows of the stores, and their next expiries: its schema's (src/schema/json-schemas.ts). */
export type { BesideSizes, NextExpiries, RecordStoreSize, RootSize, StoreSizes };

/** What lives beside the sessions of the open root `d` (named `.murmur`), measured. */
async function measureBeside(d: Dir): Promise<BesideSizes | undefined> {
  const b = await scanBeside(d.path, d.identity, undefined);
  if (!b) return undefined;
  const out: BesideSizes = {
    workdir: b.workdir,
    tied: { count: 0, bytes: 0 },
    orphaned: { count: 0, bytes: 0, oldest_ms: null },
    work_logs: { count: b.logs?.wrk.length ?? 0, bytes: (b.logs?.wrk ?? []).reduce((n, l) => n + l.bytes, 0) },
    other_logs: { count: b.logs?.other.count ?? 0, bytes: b.logs?.other.bytes ?? 0 },
    capsule: [],
    unreadable: b.problems.length,
  };
  const tied = new Set<string>();
  const sessions = await scanSessionsRoot(d.path, undefined);
  for (const sc of sessions.sessions) {
    for (const del of sc.trace?.ok ? (sc.trace.summary.delegations ?? []) : []) {
      const n = childEntryName(del.childWorkdir, b.workdir);
      if (n !== undefined) tied.add(n);
    }
  }
  // a held session still takes what its trace names (src/sweep/steps/beside.ts completeHeldBeside)
  if (b.children?.entries.length) {
    for (const h of await listRootHeld(d, false).catch(() => [])) {
      await using hd = await d.openDir(h.entry, h.identity).catch(() => undefined);
      if (!hd) continue;
      try {
        const st = await hd.lstat('trace.jsonl');
        if (!st?.isFile()) continue;
        const t = (await readTraceSummary(hd, { dir: d.path, name: h.entry }, undefined, undefined, st)).summary;
        for (const del of t.delegations ?? []) {
          const n = childEntryName(del.childWorkdir, b.workdir);
          if (n !== undefined) tied.add(n);
        }
      } catch {
        out.unreadable++;
      }
    }
  }
  if (b.children) {
    const children = await d.openDir(CHILDREN_DIR, b.children.identity).catch(() => undefined);
    if (!children) out.unreadable++;
    for (const c of children ? b.children.entries : []) {
      const bytes =
        c.kind === 'dir'
          ? await measureDir(children!, c.name, c.identity).then(
              (m) => m.bytes,
              () => (out.unreadable++, 0),
            )
          : 0;
      if (tied.has(c.name)) {
        out.tied.count++;
        out.tied.bytes += bytes;
      } else {
        const last = c.sessions.reduce((m, x) => Math.max(m, x.lastWriteMs), c.mtimeMs);
        out.orphaned.count++;
        out.orphaned.bytes += bytes;
        out.orphaned.oldest_ms = out.orphaned.oldest_ms === null ? last : Math.min(out.orphaned.oldest_ms, last);
      }
    }
    await children?.close();
  }
  await using w = await Dir.open(b.workdir, { followFinal: true }).catch(() => undefined);
  if (w) {
    for (const name of CAPSULE_ENTRIES) {
      const st = await w.lstat(name).catch(() => undefined);
      if (!st) continue;
      const bytes = st.isDirectory()
        ? await measureDir(w, name).then(
            (m) => m.bytes,
            () => (out.unreadable++, 0),
          )
        : allocatedBytes(st);
      out.capsule.push({ name, bytes });
    }
  }
  return out;
}

/** The stores' sizes, and their next expiries as of `nowMs`. */
export interface StoreSurvey {
  sizes: StoreSizes;
  expiries: NextExpiries;
}

/**
 * Directories named `.murmur-gc-kept.*` directly under `dir`, measured, into `out`; in a sessions
 * root (a capsule can write it) only those murmur-gc's registry names (docs/design.md §4a).
 */
async function findKept(dir: Dir, out: KeptAside, registry?: Registry): Promise<void> {
  for (const name of await dir.list()) {
    if (!name.startsWith(KEPT_PREFIX)) continue;
    const st = await dir.lstat(name).catch(() => undefined);
    if (!st?.isDirectory()) continue;
    if (registry && registry.vouch(name, fingerprintOf(st))?.kind !== 'kept') continue;
    out.items++;
    out.paths.push(dir.display(name));
    out.bytes += await measureDir(dir, name).then(
      (m) => m.bytes,
      () => 0,
    );
    const since = keptSinceMs(name, st);
    out.oldest_ms = out.oldest_ms === null ? since : Math.min(out.oldest_ms, since);
  }
}

/** `.murmur-gc-kept.*` in each record store and in `<home>/gc/quarantine`. */
async function findKeptInHome(home: Dir, out: KeptAside): Promise<void> {
  const inside = async (parent: Dir, chain: string[], each: (d: Dir) => Promise<void>) => {
    let d: Dir | undefined = parent;
    const opened: Dir[] = [];
    try {
      for (const seg of chain) {
        const st = await d.lstat(seg);
        if (!st?.isDirectory()) return;
        d = await d.openDir(seg);
        opened.push(d);
      }
      await each(d);
    } finally {
      for (const o of opened.reverse()) await o.close();
    }
  };
  await inside(home, [CONVERSATIONS_DIR], async (conv) => {
    for (const store of await conv.list()) {
      if (store.startsWith('.')) continue;
      await inside(conv, [store], (d) => findKept(d, out)).catch(() => undefined);
    }
  }).catch(() => undefined);
  await inside(home, [GC_DIR_NAME, QUARANTINE_DIR], (d) => findKept(d, out)).catch(() => undefined);
}

async function openAnchor(path: string, followFinal: boolean): Promise<Dir | undefined> {
  try {
    return await Dir.open(path, { followFinal });
  } catch (err) {
    const c = errnoCode(err);
    if (c === 'ENOENT' || c === 'ENOTDIR' || c === 'ELOOP') return undefined;
    throw err;
  }
}

/** Count and measure `ses_*` directories directly under `dir`; `names` gets theirs. */
async function measureSessions(
  dir: Dir,
  names: string[] = [],
): Promise<{ sessions: number; bytes: number; unreadable: number }> {
  const out = { sessions: 0, bytes: 0, unreadable: 0 };
  for (const name of await dir.list()) {
    if (!isSessionName(name)) continue;
    const st = await dir.lstat(name).catch(() => undefined);
    if (!st?.isDirectory()) continue;
    out.sessions++;
    names.push(name);
    try {
      out.bytes += (await measureDir(dir, name)).bytes;
    } catch {
      out.unreadable++;
    }
  }
  return out;
}

/** What the protection list protects (an unreadable list protects everything, as in a sweep). */
async function protectionOf(home: string): Promise<ProtectionSet> {
  if (!(await lstatPath(home))) return ProtectionSet.none;
  await using d = await openAnchor(home, true).catch(() => undefined);
  if (!d) return new ProtectionSet([], true);
  const read = await readProtection(d);
  return read.status === 'ok' ? new ProtectionSet(read.items) : new ProtectionSet([], true);
}

/** The stores' sizes and their next expiries as of `nowMs` (see the header). */
export async function surveyStores(config: GcConfig, nowMs: number): Promise<StoreSurvey> {
  const kept: KeptAside = { items: 0, bytes: 0, oldest_ms: null, paths: [] };
  const sizes: StoreSizes = {
    sessions: { roots: [], sessions: 0, bytes: 0 },
    records: { stores: 0, records: 0, bytes: 0, unreadable: 0, by_store: [] },
    audit: { sessions: 0, bytes: 0, unreadable: 0 },
    kept,
  };
  const protection = await protectionOf(config.home);
  const ages: (NextMaxAge | undefined)[] = [];
  let held: { untilMs: number; bytes: number }[] = [];
  const expiries = (): NextExpiries => ({ purge: nextPurge(held, nowMs), max_age: earliest(ages) });
  const seen = new Set<string>();
  const registry = await registryOf(config.home);
  for (const s of config.sessions) {
    if (seen.has(s.root)) continue;
    seen.add(s.root);
    // the policy the sweep applies to this root: the first entry's, else the first with a retain block (src/sweep/world.ts)
    const retain = s.retain ?? config.sessions.find((x) => x.root === s.root && x.retain)?.retain;
    const r: RootSize = { root: s.root, exists: false, sessions: 0, bytes: 0, unreadable: 0 };
    try {
      await using d = await openAnchor(s.root, false);
      if (d) {
        r.exists = true;
        const names: string[] = [];
        Object.assign(r, await measureSessions(d, names));
        ages.push(nextSessionAge(names, retain, nowMs, s.root, protection.session(s.root)));
        await findKept(d, kept, registry);
        const beside = await measureBeside(d).catch(() => undefined);
        if (beside) r.beside = beside;
      }
    } catch {
      r.unreadable++;
    }
    sizes.sessions.roots.push(r);
    sizes.sessions.sessions += r.sessions;
    sizes.sessions.bytes += r.bytes;
  }

  try {
    const l = await listHeld(config);
    held = l.items;
    const unverified = l.problems.filter((p) => p.code === Codes.unverifiedGcEntry).length;
    sizes.quarantine = {
      items: l.totals.items,
      bytes: l.totals.bytes,
      unreadable: l.problems.length - unverified,
      ...(unverified > 0 ? { unverified } : {}),
    };
  } catch {
    sizes.quarantine = { items: 0, bytes: 0, unreadable: 1 };
  }

  if (!(await lstatPath(config.home))) return { sizes, expiries: expiries() };
  await using home = await openAnchor(config.home, true);
  if (!home) return { sizes, expiries: expiries() };
  await findKeptInHome(home, kept);
  const cst = await home.lstat(CONVERSATIONS_DIR);
  if (cst?.isDirectory()) {
    for (const [store, contexts] of await measureRecords(home, config.home, sizes.records)) {
      const policies = config.records
        .filter((p) => p.store === store)
        .map((p) => ({ capsule: p.capsule, retain: p.retain }));
      if (policies.length > 0)
        ages.push(
          nextRecordAge(
            contexts.map((c) => ({ context: c.context, capsule: c.header?.capsule, mtimeMs: c.file.mtimeMs })),
            policies,
            nowMs,
            store,
            protection.context(store),
          ),
        );
    }
  }
  const gst = await home.lstat(GC_DIR_NAME);
  if (gst?.isDirectory()) {
    try {
      await using gc = await home.openDir(GC_DIR_NAME);
      const names: string[] = [];
      Object.assign(sizes.audit, await measureSessions(gc, names));
      ages.push(nextSessionAge(names, config.audit.retain, nowMs, gc.path));
    } catch {
      sizes.audit.unreadable++;
    }
  }
  return { sizes, expiries: expiries() };
}

/**
 * Records through the sweep's own inventory (same enumeration rules, headers only, no counting);
 * returns the contexts of each store.
 */
async function measureRecords(
  home: Dir,
  homePath: string,
  out: StoreSizes['records'],
): Promise<Map<string, ContextScan[]>> {
  const scan = await scanRecords(home, homePath, {
    collectModes: false,
    nowMs: Date.now(),
    debrisAgeMs: Infinity,
    isPidAlive: () => true,
  });
  out.stores = new Set(scan.contexts.map((c) => c.store)).size;
  out.records = scan.contexts.length;
  out.unreadable = scan.problems.length;
  out.bytes = 0;
  const byStore = groupBy(scan.contexts, (c) => c.store);
  for (const [store, contexts] of byStore) {
    const part: RecordStoreSize = { record: store, records: contexts.length, bytes: 0 };
    out.by_store.push(part);
    let dir: Dir | undefined;
    try {
      await using conv = await home.openDir(CONVERSATIONS_DIR);
      dir = await conv.openDir(store);
    } catch {
      out.unreadable += contexts.length;
      continue;
    }
    await using _ = dir;
    for (const c of contexts) {
      try {
        part.bytes += (await measureDir(dir, c.context, c.dirIdentity)).bytes;
      } catch {
        out.unreadable++;
      }
    }
    out.bytes += part.bytes;
  }
  out.by_store.sort((a, b) => b.bytes - a.bytes || (a.record < b.record ? -1 : 1));
  return byStore;
}
