// `murmur-gc du`: what the home and every configured sessions root hold on disk, by place, kind
// and age, and what the sweep's own planner would free now, within 7 and within 30 days
// (docs/du.md).
// Guarantees:
// - Writes nothing, `<home>/gc` included: the inventory is the dry run's own (the sweep's steps
//   up to its plan, with measure-only effects and the injected clock: no lock taken, no cache
//   written, no trace it has cached read again), and the walk below only opens, lists and lstats.
// - Sizes are allocated bytes, as `du` counts them (src/fsx/remove.ts allocatedBytes): every entry
//   of the tree, directories included, a file with several links once per sessions root (and once
//   in the home), never following a link, never entering another filesystem (as `du -s -x`). A
//   root's total is what `du -s -B1 -x ROOT` says when nothing changes meanwhile. Directories are
//   opened descriptor-relatively (src/fsx/safe-fs.ts Dir: O_NOFOLLOW, the identity just lstat'ed);
//   a session directory and its subdirectories (two levels, the common case) are read in one pass
//   relative to the root's descriptor instead, each from inside itself: entered by name, read only
//   when lstat('.') there is the identity found before (the scan's for the session, its lstat in
//   the session for a subdirectory), and its entries lstat'ed by single name, so a link swapped in
//   at any moment is never followed (it sends that session to the descriptor walk).
// - What is reclaimable comes from the fate planner the sweep uses (src/plan/fates.ts), given the
//   same input at now, now+7d and now+30d: the tree as it is now, what is live now still live.
//   Freed means what that sweep removes for good, purges from the undo window, or cuts from a
//   record (when the truncation's size was measured); what it would hold is said apart.
// - Ids, paths, counts and sizes only; never record content.
import { dirname } from 'node:path';
import type { GcConfig } from '../config/types.js';
import { allocatedBytes, measureDir } from '../fsx/remove.js';
import {
  Dir,
  identityOf,
  processUid,
  type BigIntStats,
  type Identity,
  type InsideReads,
  type RelativeReads,
} from '../fsx/safe-fs.js';
import { describeError } from '../errors.js';
import type { Logger } from '../log.js';
import { itemKey, planFates, type FatePlan } from '../plan/fates.js';
import { idTimestampMs } from '../runtime/ids.js';
import { CONVERSATIONS_DIR, RECORD_FILE } from '../runtime/inventory.js';
import { GC_DIR } from '../gchome/audit.js';
import { QUARANTINE_DIR } from '../gchome/quarantine-layout.js';
import { SWEEP_STEPS } from '../sweep/pipeline.js';
import { createContext, runStep, type SessionsRootPlan, type SweepContext } from '../sweep/steps/context.js';
import { fateInput } from '../sweep/steps/plan.js';
import type { DuPlace, DuReport, DuRoot, DuStore, Reclaim } from '../schema/json-schemas.js';

const DAY = 86_400_000;

/** The age buckets, by upper bound in days (the last has none). */
export const AGE_BUCKETS = ['lt_1d', 'lt_7d', 'lt_30d', 'lt_90d', 'older'] as const;
const AGE_BOUNDS = [1, 7, 30, 90];
export type AgeBucket = (typeof AGE_BUCKETS)[number];

/** What a sessions root holds, by kind (each byte in one kind). */
export const ROOT_KINDS = ['traces', 'blobs', 'logs', 'child_workdirs', 'held', 'protected', 'other'] as const;
export type RootKind = (typeof ROOT_KINDS)[number];

/** The instants the planner is asked about: now, within 7 days, within 30 days. */
export const HORIZONS = [
  { name: 'now', days: 0 },
  { name: 'within_7d', days: 7 },
  { name: 'within_30d', days: 30 },
] as const;

/** What `du` measures: its schema's (src/schema/json-schemas.ts). */
export type { DuPlace, DuReport, DuRoot, DuStore, Reclaim };

/** Below this depth a subtree is measured by measureDir (its own walk: links once within it). */
const MAX_DEPTH = 48;

interface Walk {
  dev: bigint;
  linked: Set<bigint>;
  problems: DuReport['problems'];
}

function fileBytes(st: BigIntStats, w: Walk): number {
  if (st.nlink > 1n) {
    if (w.linked.has(st.ino)) return 0;
    w.linked.add(st.ino);
  }
  return allocatedBytes(st);
}

/** The entries of `d` with their lstat (an entry gone meanwhile is left out). */
function entries(d: Dir): [string, BigIntStats][] {
  return lstatAll(d, d.listSync());
}

/** `names` of `d` with their lstat (an entry gone meanwhile is left out). */
function lstatAll(d: Dir, names: readonly string[]): [string, BigIntStats][] {
  return d.relativePassSync((at) => {
    const out: [string, BigIntStats][] = [];
    for (const n of names) {
      const st = at.lstat(n);
      if (st !== undefined && !(st instanceof Error)) out.push([n, st]);
    }
    return out;
  });
}

/** The allocated bytes of `parent/name` (lstat `st`), the whole tree under it. */
async function treeBytes(parent: Dir, name: string, st: BigIntStats, w: Walk, depth = 0): Promise<number> {
  if (!st.isDirectory()) return fileBytes(st, w);
  if (st.dev !== w.dev) return 0;
  let d: Dir;
  try {
    d = await parent.openDir(name, identityOf(st));
  } catch (err) {
    w.problems.push({ path: parent.display(name), detail: describeError(err) });
    return allocatedBytes(st);
  }
  await using _ = d;
  try {
    if (depth >= MAX_DEPTH) return (await measureDir(parent, name, identityOf(st))).bytes;
    return allocatedBytes(st) + (await contentsBytes(d, w, depth));
  } catch (err) {
    w.problems.push({ path: d.path, detail: describeError(err) });
    return allocatedBytes(st);
  }
}

async function contentsBytes(d: Dir, w: Walk, depth: number): Promise<number> {
  let n = 0;
  for (const [name, st] of entries(d)) n += await treeBytes(d, name, st, w, depth + 1);
  return n;
}

function emptyReclaim(): DuPlace['reclaimable'] {
  return {
    now: { bytes: 0, held_bytes: 0, truncations_unmeasured: 0 },
    within_7d: { bytes: 0, held_bytes: 0, truncations_unmeasured: 0 },
    within_30d: { bytes: 0, held_bytes: 0, truncations_unmeasured: 0 },
  };
}

function emptyPlace(): DuPlace {
  return {
    bytes: 0,
    by_age: { lt_1d: 0, lt_7d: 0, lt_30d: 0, lt_90d: 0, older: 0 },
    reclaimable: emptyReclaim(),
    never: 0,
  };
}

function bucketOf(ageMs: number): AgeBucket {
  const days = ageMs / DAY;
  for (let i = 0; i < AGE_BOUNDS.length; i++) if (days < AGE_BOUNDS[i]!) return AGE_BUCKETS[i]!;
  return 'older';
}

/**
 * Where the walk hands each item of a store it measured (`store` a store key, `name` the item's
 * name there): accounted at once against the fates planned before the walk, so no list of items
 * is kept.
 */
type Measured = (store: string, name: string, bytes: number) => void;

/** The kind of an entry of a session directory. */
function sessionPart(name: string, st: BigIntStats): RootKind {
  if (name === 'trace.jsonl' && st.isFile()) return 'traces';
  if (name === 'blobs') return 'blobs';
  if (name.endsWith('.log') && st.isFile()) return 'logs';
  return 'other';
}

/** A directory read in a relative pass (shallowPass): its entries with their bytes, its total and its own lstat. */
interface ShallowRead {
  entries: { name: string; st: BigIntStats; bytes: number }[];
  bytes: number;
  dir: BigIntStats;
}

/**
 * The directory `name` of the pass's directory, read two levels deep in the pass (`expected`:
 * the identity it was found with — for a session, the dry run's scan's, so the root's listing
 * needs no lstat of its own). It and each directory in it are read from inside themselves
 * (RelativeReads.inside), entered by name and checked to be the directory lstat'ed before: a link
 * swapped in at any moment leaves what is read unchanged or returns undefined (then the caller
 * walks it by descriptor), as does a third level or an entry that cannot be read.
 */
function shallowPass(at: RelativeReads, name: string, expected: Identity, w: Walk): ShallowRead | undefined {
  const added: bigint[] = [];
  const undo = () => {
    for (const i of added) w.linked.delete(i);
    return undefined;
  };
  const file = (cst: BigIntStats) => {
    if (cst.nlink > 1n) {
      if (w.linked.has(cst.ino)) return 0;
      w.linked.add(cst.ino);
      added.push(cst.ino);
    }
    return allocatedBytes(cst);
  };
  /** The entries of the directory being read, with their lstat; undefined when one cannot be read. */
  const entriesOf = (d: InsideReads): [string, BigIntStats][] | undefined => {
    const names = d.list();
    if (names instanceof Error) return undefined;
    const out: [string, BigIntStats][] = [];
    for (const n of names) {
      const st = d.lstat(n);
      if (st instanceof Error) return undefined;
      if (st !== undefined) out.push([n, st]);
    }
    return out;
  };
  const top = at.inside(name, expected, (d, self) => {
    const e = entriesOf(d);
    return e && { entries: e, self };
  });
  if (!top) return undefined;
  const out: ShallowRead = { entries: [], bytes: allocatedBytes(top.self), dir: top.self };
  for (const [n, cst] of top.entries) {
    let b: number;
    if (cst.isDirectory()) {
      if (cst.dev !== w.dev) continue;
      const sub = at.inside(`${name}/${n}`, identityOf(cst), (d, self) => {
        const e = entriesOf(d);
        if (!e || e.some(([, est]) => est.isDirectory())) return undefined;
        let sb = allocatedBytes(self);
        for (const [, est] of e) sb += file(est);
        return sb;
      });
      if (sub === undefined) return undo();
      b = sub;
    } else b = file(cst);
    out.entries.push({ name: n, st: cst, bytes: b });
    out.bytes += b;
  }
  return out;
}

async function walkRoot(
  ctx: SweepContext,
  p: SessionsRootPlan,
  nowMs: number,
  problems: DuReport['problems'],
  measured: Measured,
  holds: Map<string, number>,
): Promise<DuRoot | undefined> {
  const root = p.input.root;
  let d: Dir;
  try {
    d = await Dir.open(root, { followFinal: true });
  } catch (err) {
    problems.push({ path: root, detail: describeError(err) });
    return undefined;
  }
  const out: DuRoot = {
    root,
    sessions: p.views.length,
    ...emptyPlace(),
    by_kind: { traces: 0, blobs: 0, logs: 0, child_workdirs: 0, held: 0, protected: 0, other: 0 },
    beside: null,
  };
  const w: Walk = { dev: d.stat.dev, linked: new Set(), problems };
  await using _ = d;
  const isProtected = ctx.protection.session(p.input.root);
  const scanned = new Map(p.views.map((v) => [v.scan.name, v.scan]));
  const held = new Set(p.scan.held.map((h) => h.entry));
  out.by_kind.other += allocatedBytes(d.stat);
  const session = (name: string, st: BigIntStats, bytes: number) => {
    measured(p.key, name, bytes);
    out.by_age[bucketOf(nowMs - (idTimestampMs(name, 'ses_') ?? Number(st.mtimeMs)))] += bytes;
  };
  // Sessions first, in one pass relative to the root, from the identities the scan found them
  // with; the rest (and any session that pass cannot read) lstat'ed, then walked by descriptor.
  // What is kept across the root is names, never a stat per entry.
  const others: string[] = [];
  d.relativePassSync((at) => {
    for (const name of d.listSync()) {
      const scan = scanned.get(name);
      const r = scan && scan.identity.dev === w.dev ? shallowPass(at, name, scan.identity, w) : undefined;
      if (!r) {
        others.push(name);
        continue;
      }
      if (isProtected(name)) out.by_kind.protected += r.bytes;
      else {
        out.by_kind.other += allocatedBytes(r.dir);
        for (const e of r.entries) out.by_kind[sessionPart(e.name, e.st)] += e.bytes;
      }
      session(name, r.dir, r.bytes);
    }
  });
  const rest = lstatAll(d, others);
  for (const [name, st] of rest) {
    if (scanned.has(name) && st.isDirectory() && st.dev === w.dev) {
      let bytes: number;
      if (isProtected(name)) {
        bytes = await treeBytes(d, name, st, w);
        out.by_kind.protected += bytes;
      } else {
        let s: Dir | undefined;
        try {
          s = await d.openDir(name, identityOf(st));
        } catch (err) {
          problems.push({ path: d.display(name), detail: describeError(err) });
        }
        bytes = allocatedBytes(st);
        out.by_kind.other += bytes;
        if (s) {
          await using _ = s;
          for (const [n, cst] of entries(s)) {
            const b = await treeBytes(s, n, cst, w, 1);
            out.by_kind[sessionPart(n, cst)] += b;
            bytes += b;
          }
        }
      }
      session(name, st, bytes);
      continue;
    }
    const bytes = await treeBytes(d, name, st, w);
    if (held.has(name)) {
      out.by_kind.held += bytes;
      holds.set(`${root}/${name}`, bytes);
    } else if (name === 'children' && st.isDirectory()) out.by_kind.child_workdirs += bytes;
    else out.by_kind.other += bytes;
  }
  out.bytes = ROOT_KINDS.reduce((n, k) => n + out.by_kind[k], 0);
  if (p.beside) out.beside = await besideBytes(dirname(root), problems);
  return out;
}

/** `W/logs/wrk_*.log` and `W/out` of a `W/.murmur` root. */
async function besideBytes(
  workdir: string,
  problems: DuReport['problems'],
): Promise<{ wrk_logs: number; out: number }> {
  const r = { wrk_logs: 0, out: 0 };
  let w: Dir;
  try {
    w = await Dir.open(workdir, { followFinal: true });
  } catch (err) {
    problems.push({ path: workdir, detail: describeError(err) });
    return r;
  }
  const walk: Walk = { dev: w.stat.dev, linked: new Set(), problems };
  await using _ = w;
  try {
    const logs = w.lstatSync('logs');
    if (logs?.isDirectory() && logs.dev === walk.dev) {
      await using l = await w.openDir('logs', identityOf(logs));
      for (const [n, st] of entries(l))
        if (n.startsWith('wrk_') && n.endsWith('.log') && st.isFile()) r.wrk_logs += fileBytes(st, walk);
    }
    const o = w.lstatSync('out');
    if (o) r.out = await treeBytes(w, 'out', o, walk);
  } catch (err) {
    problems.push({ path: workdir, detail: describeError(err) });
  }
  return r;
}

/** The home: its record stores (by capsule), `<home>/gc` (with the undo window), the rest. */
async function walkHome(
  ctx: SweepContext,
  home: Dir,
  nowMs: number,
  problems: DuReport['problems'],
  measured: Measured,
  holds: Map<string, number>,
): Promise<{ bytes: number; gc: DuReport['gc']; stores: DuStore[] }> {
  const w: Walk = { dev: home.stat.dev, linked: new Set(), problems };
  const capsuleOf = new Map(
    (ctx.records?.contexts ?? []).map((c) => [`${c.store}\0${c.context}`, c.header?.capsule ?? '(no header)']),
  );
  const stores: DuStore[] = [];
  const gc = { bytes: 0, held: 0 };
  let bytes = allocatedBytes(home.stat);
  for (const [name, st] of entries(home)) {
    if (name === CONVERSATIONS_DIR && st.isDirectory() && st.dev === w.dev) {
      await using conv = await home.openDir(name, identityOf(st));
      bytes += allocatedBytes(st);
      for (const [store, sst] of entries(conv)) {
        if (!sst.isDirectory() || sst.dev !== w.dev) {
          bytes += await treeBytes(conv, store, sst, w);
          continue;
        }
        const s = await walkStore(conv, store, sst, w, capsuleOf, nowMs, measured);
        bytes += s.bytes;
        stores.push(s);
      }
      continue;
    }
    if (name === GC_DIR && st.isDirectory() && st.dev === w.dev) {
      await using g = await home.openDir(name, identityOf(st));
      gc.bytes = allocatedBytes(st);
      for (const [n, gst] of entries(g)) {
        if (n === QUARANTINE_DIR && gst.isDirectory() && gst.dev === w.dev) {
          await using q = await g.openDir(n, identityOf(gst));
          let held = allocatedBytes(gst);
          for (const [e, est] of entries(q)) {
            const b = await treeBytes(q, e, est, w, 2);
            holds.set(`${q.path}/${e}`, b);
            held += b;
          }
          gc.held += held;
          gc.bytes += held;
        } else gc.bytes += await treeBytes(g, n, gst, w, 1);
      }
      bytes += gc.bytes;
      continue;
    }
    bytes += await treeBytes(home, name, st, w);
  }
  return { bytes, gc, stores };
}

async function walkStore(
  conv: Dir,
  store: string,
  st: BigIntStats,
  w: Walk,
  capsuleOf: Map<string, string>,
  nowMs: number,
  measured: Measured,
): Promise<DuStore> {
  const out: DuStore = { store, contexts: 0, by_capsule: {}, ...emptyPlace() };
  let s: Dir;
  try {
    s = await conv.openDir(store, identityOf(st));
  } catch (err) {
    w.problems.push({ path: conv.display(store), detail: describeError(err) });
    out.bytes = allocatedBytes(st);
    return out;
  }
  await using _ = s;
  out.bytes = allocatedBytes(st);
  // Each context in one pass relative to the store (shallowPass); one it cannot read, by descriptor.
  const read: { name: string; bytes: number; mtimeMs: number }[] = [];
  const others = s.relativePassSync((at) => {
    const rest: string[] = [];
    for (const name of s.listSync()) {
      const cst = at.lstat(name);
      if (cst === undefined) continue;
      const r = cst instanceof Error || !cst.isDirectory() ? undefined : shallowPass(at, name, identityOf(cst), w);
      if (!r) {
        rest.push(name);
        continue;
      }
      const rec = r.entries.find((e) => e.name === RECORD_FILE);
      read.push({ name, bytes: r.bytes, mtimeMs: Number((rec?.st ?? r.dir).mtimeMs) });
    }
    return rest;
  });
  for (const [name, cst] of lstatAll(s, others)) {
    const bytes = await treeBytes(s, name, cst, w, 2);
    const recordMs = cst.isDirectory() ? await recordMtime(s, name) : undefined;
    read.push({ name, bytes, mtimeMs: recordMs ?? Number(cst.mtimeMs) });
  }
  for (const c of read) {
    out.bytes += c.bytes;
    const capsule = capsuleOf.get(`${store}\0${c.name}`);
    if (capsule === undefined) continue;
    out.contexts++;
    out.by_capsule[capsule] = (out.by_capsule[capsule] ?? 0) + c.bytes;
    measured(`records:${store}`, c.name, c.bytes);
    out.by_age[bucketOf(nowMs - c.mtimeMs)] += c.bytes;
  }
  return out;
}

async function recordMtime(store: Dir, ctxName: string): Promise<number | undefined> {
  return store.relativePassSync((at) => {
    const st = at.lstat(`${ctxName}/${RECORD_FILE}`);
    return st === undefined || st instanceof Error ? undefined : Number(st.mtimeMs);
  });
}

/** Whether a store has any rule that may ever take an item: a policy with a retain key, a max_bytes, keep_free. */
function anyRule(retains: readonly (object | undefined)[], maxBytes: number | undefined, keepFree: boolean): boolean {
  return keepFree || maxBytes !== undefined || retains.some((r) => r !== undefined && Object.keys(r).length > 0);
}

const NEVER_WHY = new Set(['protected', 'foreign_owner', 'not_owned', 'not_writable']);

export async function diskUsage(config: GcConfig, log: Logger, nowMs: number = Date.now()): Promise<DuReport> {
  const ctx = createContext({ config, dryRun: true, log, now: () => nowMs }, processUid());
  const report: DuReport = {
    home: config.home,
    home_exists: false,
    now_ms: nowMs,
    home_bytes: 0,
    gc: { bytes: 0, held: 0 },
    roots: [],
    stores: [],
    totals: { bytes: 0, reclaimable: emptyReclaim(), never: 0 },
    inventory: { traces_read: 0, traces_cached: 0 },
    problems: [],
  };
  try {
    for (const step of SWEEP_STEPS) {
      await runStep(ctx, step);
      if (ctx.stopped || step.name === 'plan') break;
    }
    report.home_exists = ctx.homeExists;
    report.inventory = {
      traces_read: ctx.report.inventory.traces_read,
      traces_cached: ctx.report.inventory.traces_cached,
    };
    // The fates at now (the dry run's own plan), within 7 and within 30 days, planned before the
    // walk: each item is accounted as soon as it is measured.
    const input = fateInput(ctx);
    const plans: FatePlan[] = HORIZONS.map((hz) =>
      hz.days === 0 && ctx.fates ? ctx.fates : planFates({ ...input, nowMs: nowMs + hz.days * DAY }),
    );
    const last = plans[plans.length - 1]!;
    const ruled = new Map<string, boolean>();
    for (const r of input.roots) ruled.set(r.key, anyRule([r.retain], r.maxBytes, r.keepFree));
    for (const s of input.stores)
      ruled.set(
        s.key,
        anyRule(
          s.policies.map((p) => p.retain),
          s.maxBytes,
          s.keepFree,
        ),
      );
    const holds = new Map<string, number>();
    const placeOf = new Map<string, DuPlace>();
    // An item measured before its place is made (the walk of a root or store builds its place
    // as it goes): its bytes are added when the place is known.
    const pending: { store: string; key: string; bytes: number }[] = [];
    const account = (place: DuPlace, store: string, key: string, bytes: number) => {
      HORIZONS.forEach((hz, i) => {
        const f = plans[i]!.items.get(key);
        const r = place.reclaimable[hz.name];
        if (f?.fate === 'removed') r.bytes += bytes;
        else if (f?.fate === 'held') r.held_bytes += bytes;
        else if (f?.fate === 'truncated') {
          const after = ctx.sizes?.afterTruncation.get(key);
          if (after === undefined) r.truncations_unmeasured++;
          else if (f.heldUntilMs === undefined) r.bytes += Math.max(0, bytes - after);
          else r.held_bytes += Math.max(0, bytes - after);
        }
      });
      // never: what the last horizon still keeps for a reason time does not change, and every item of a store no rule reaches
      const f = last.items.get(key);
      if (f === undefined ? ruled.get(store) === false : f.fate === 'kept' && NEVER_WHY.has(f.why))
        place.never += bytes;
    };
    const measured: Measured = (store, name, bytes) => {
      const key = itemKey(store, name);
      const place = placeOf.get(store);
      if (place) account(place, store, key, bytes);
      else pending.push({ store, key, bytes });
    };
    const settle = () => {
      for (const x of pending.splice(0)) {
        const place = placeOf.get(x.store);
        if (place) account(place, x.store, x.key, x.bytes);
      }
    };
    for (const p of ctx.sessionPlans) {
      if (p.input.isAuditRoot || !p.scan.exists) continue;
      const r = await walkRoot(ctx, p, nowMs, report.problems, measured, holds);
      if (!r) {
        pending.length = 0;
        continue;
      }
      report.roots.push(r);
      placeOf.set(p.key, r);
      settle();
    }
    if (ctx.homeDir) {
      const h = await walkHome(ctx, ctx.homeDir, nowMs, report.problems, measured, holds);
      report.home_bytes = h.bytes;
      report.gc = h.gc;
      report.stores = h.stores;
      for (const s of h.stores) placeOf.set(`records:${s.store}`, s);
      settle();
    }
    HORIZONS.forEach((hz, i) => {
      for (const h of input.holds) {
        const f = plans[i]!.holds.get(h.key);
        const place = placeOf.get(h.store);
        const bytes = holds.get(h.key);
        if (f?.fate === 'purged' && place && bytes !== undefined) place.reclaimable[hz.name].bytes += bytes;
      }
    });
    for (const p of [...report.roots, ...report.stores]) {
      report.totals.never += p.never;
      for (const hz of HORIZONS) {
        const t = report.totals.reclaimable[hz.name];
        const r = p.reclaimable[hz.name];
        t.bytes += r.bytes;
        t.held_bytes += r.held_bytes;
        t.truncations_unmeasured += r.truncations_unmeasured;
      }
    }
    // the home's record stores are in the home; a root outside it is not: the total counts the home once, each root outside it
    report.totals.bytes =
      report.home_bytes + report.roots.filter((r) => !inside(r.root, config.home)).reduce((n, r) => n + r.bytes, 0);
    for (const s of ctx.report.errors) report.problems.push({ path: s.target, detail: `${s.code}: ${s.detail}` });
    return report;
  } finally {
    ctx.cache?.close();
    await ctx.quarantineDir?.close();
    await ctx.homeDir?.close();
    await ctx.sweepLock?.release();
  }
}

function inside(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith('/') ? dir : `${dir}/`);
}
