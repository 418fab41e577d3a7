// Property (the safety nets compose, docs/fates.md): over generated homes — sessions finished,
// dead and live, protected and another user's; records owned, foreign and headerless, live and
// protected — and generated configurations of every policy (max_age, max_sessions, max_messages,
// record max_age), budget (max_bytes per root and store, keep_free), the undo window, max_delete and
// the unattended guard, on a first sweep and on a later one that meets the first one's holds:
// - the dry run changes nothing and reports exactly what the real run then does (actions, targets,
//   reasons, bytes, holds, skips, errors, budgets, fates);
// - no hold is lost before its window passes except to keep_free;
// - with the undo window, only keep_free removes for good what a policy or budget takes;
// - a store the guard stops loses nothing;
// - every store's fates add up to what it holds and name one fate per item, and the summary's and
//   history's counts equal them.
// Seeded (MURMUR_GC_PROPERTY_SEED) and sized (MURMUR_GC_PROPERTY_RUNS) from the environment; a
// failure prints the seed and the generated case. In process, the clock and free space injected.
import { RESERVE_INODES_ROOM } from '../../src/gchome/reserve.js';
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runSweep } from '../../src/sweep/pipeline.js';
import type { SweepReport } from '../../src/sweep/report.js';
import { summarizeReport } from '../../src/sweep/summary.js';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/log.js';
import { writeProtection } from '../../src/gchome/protect-file.js';
import { Dir } from '../../src/fsx/safe-fs.js';
import { readAuditHistory } from '../../src/commands/audit-read.js';
import { buildHistory } from '../../src/commands/history.js';
import * as f from '../helpers/fixtures.js';
import { budgetYaml, comparable, retainPolicyArb, du, retainYaml, type Retain } from '../helpers/generated-home.js';

const DEFAULT_RUNS = 24;
const DEFAULT_SEED = 20261202;
const RUNS = Number(process.env['MURMUR_GC_PROPERTY_RUNS'] ?? DEFAULT_RUNS);
const SEED = Number(process.env['MURMUR_GC_PROPERTY_SEED'] ?? DEFAULT_SEED);
const log = createLogger({ level: 'silent' });
const DAY = f.DAY;
const KEEP_FREE = 1_000_000_000;
const KEEP_FREE_INODES = 1000;
const asRoot = process.getuid?.() === 0;

interface SessionSpec {
  ageDays: number;
  blob: number;
  state: 'finished' | 'dead' | 'live';
  protected: boolean;
  foreign: boolean;
  /** a live session names this context of store 0 (its index), so it is live too */
  names: number | null;
}
interface ContextSpec {
  ageDays: number;
  messages: number;
  capsule: 'own' | 'other' | 'none';
  protected: boolean;
}
interface Case {
  roots: { sessions: SessionSpec[]; retain: Retain | null; maxBytes: number | null; keepFreeOptOut: boolean }[];
  stores: { contexts: ContextSpec[]; retain: Retain | null; maxBytes: number | null; keepFreeOptOut: boolean }[];
  /** keep_free's per_sweep (null: its default) */
  perSweep: 25 | 100 | null;
  /** keep_free short of this many inodes too (null: the filesystem counts no inodes) */
  inodesShort: number | null;
  quarantineDays: 1 | 7 | null;
  /** keep_free short by this fraction of what the home holds (null: not configured) */
  keepFreeShort: number | null;
  maxDelete: number | null;
  unattended: boolean;
  firstSweep: boolean;
}

const retainArb = retainPolicyArb(8);
const fraction = fc.option(fc.constantFrom(0.2, 0.5, 0.7, 0.9, 1.2), { nil: null, freq: 2 });
const anyCase: fc.Arbitrary<Case> = fc.record({
  roots: fc.array(
    fc.record({
      sessions: fc.array(
        fc.record({
          ageDays: fc.double({ min: 0.05, max: 80, noNaN: true }),
          blob: fc.constantFrom(0, 3000, 9000, 30_000),
          state: fc.constantFrom('finished', 'finished', 'finished', 'dead', 'live'),
          protected: fc.constantFrom(false, false, false, false, false, false, false, true),
          foreign: fc.constantFrom(false, false, false, false, false, true),
          names: fc.option(fc.integer({ min: 0, max: 5 }), { nil: null }),
        }),
        { maxLength: 14 },
      ),
      retain: retainArb,
      maxBytes: fraction,
      keepFreeOptOut: fc.constantFrom(false, false, false, true),
    }),
    { minLength: 1, maxLength: 2 },
  ),
  stores: fc.array(
    fc.record({
      contexts: fc.array(
        fc.record({
          ageDays: fc.double({ min: 0.05, max: 120, noNaN: true }),
          messages: fc.integer({ min: 1, max: 40 }),
          capsule: fc.constantFrom('own', 'own', 'own', 'other', 'none'),
          protected: fc.constantFrom(false, false, false, false, true),
        }),
        { maxLength: 8 },
      ),
      retain: retainArb,
      maxBytes: fraction,
      keepFreeOptOut: fc.constantFrom(false, false, false, true),
    }),
    { minLength: 1, maxLength: 2 },
  ),
  perSweep: fc.constantFrom(null, null, 25, 100),
  inodesShort: fc.option(fc.constantFrom(0, 3, 40, 1000), { nil: null, freq: 2 }),
  quarantineDays: fc.constantFrom(null, 1, 7),
  keepFreeShort: fc.option(fc.constantFrom(0, 0.05, 0.2, 0.5, 0.9, 2), { nil: null, freq: 2 }),
  maxDelete: fc.option(fc.constantFrom(3, 12), { nil: null }),
  unattended: fc.boolean(),
  firstSweep: fc.boolean(),
});
/** One case in three is a home under pressure: an earlier sweep's holds, the undo window, keep_free short. */
const caseArb: fc.Arbitrary<Case> = fc.oneof(
  { arbitrary: anyCase, weight: 2 },
  {
    arbitrary: anyCase.map((c) => ({
      ...c,
      quarantineDays: 7 as const,
      keepFreeShort: c.keepFreeShort ?? 0.3,
      firstSweep: true,
    })),
    weight: 1,
  },
);

/** The home of one case, and its configuration text. */
function build(c: Case, T: string, now: number) {
  const home = path.join(T, 'home');
  fs.mkdirSync(home, { mode: 0o700 });
  const roots = c.roots.map((_, i) => path.join(T, `r${i}`, '.murmur'));
  const protectedItems: {
    kind: 'session' | 'context';
    target: string;
    where: string;
    since_ms: number;
    by: 'protect';
  }[] = [];
  c.stores.forEach((s, si) => {
    s.contexts.forEach((x, ci) => {
      const context = `ctx_${si}_${ci}`;
      f.writeRecord(home, `s${si}`, context, {
        capsule: x.capsule === 'own' ? 'shey' : x.capsule === 'other' ? 'other' : null,
        messages: x.messages,
        mtimeMs: now - x.ageDays * DAY,
        startMs: now - (x.ageDays + 1) * DAY,
      });
      if (x.protected)
        protectedItems.push({ kind: 'context', target: context, where: `s${si}`, since_ms: now - DAY, by: 'protect' });
    });
  });
  c.roots.forEach((r, ri) => {
    fs.mkdirSync(roots[ri]!, { recursive: true });
    r.sessions.forEach((s, k) => {
      const startMs = Math.round(now - s.ageDays * DAY) - k;
      const id = f.idAt('ses_', startMs);
      const contextId =
        s.state === 'live' && s.names !== null && (c.stores[0]?.contexts.length ?? 0) > s.names
          ? `ctx_0_${s.names}`
          : null;
      f.writeSession(roots[ri]!, {
        sessionId: id,
        startMs,
        end: s.state === 'finished',
        contextId,
        mtimeMs: s.state === 'live' ? now - 5_000 : startMs,
        files: s.blob > 0 ? { blob: 'x'.repeat(s.blob) } : {},
      });
      if (s.foreign && asRoot) {
        fs.chownSync(path.join(roots[ri]!, id), 65534, 65534);
        fs.chownSync(path.join(roots[ri]!, id, 'trace.jsonl'), 65534, 65534);
      }
      if (s.protected)
        protectedItems.push({ kind: 'session', target: id, where: roots[ri]!, since_ms: now - DAY, by: 'protect' });
    });
  });
  let yaml = `home: ${home}\n`;
  if (c.quarantineDays !== null) yaml += `quarantine: ${c.quarantineDays}d\n`;
  if (c.keepFreeShort !== null)
    yaml +=
      c.perSweep === null
        ? `keep_free: ${KEEP_FREE}\n`
        : `keep_free: { free: ${KEEP_FREE}, per_sweep: ${c.perSweep}% }\n`;
  if (c.maxDelete !== null) yaml += `max_delete: { count: ${c.maxDelete} }\n`;
  yaml += 'sessions:\n';
  const optOut = (o: boolean) => (o ? '    keep_free: false\n' : '');
  c.roots.forEach(
    (r, ri) =>
      (yaml += `  - root: ${roots[ri]}\n${retainYaml(r.retain, 'max_sessions')}${budgetYaml(r.maxBytes, roots[ri]!)}${optOut(r.keepFreeOptOut)}`),
  );
  yaml += 'records:\n';
  c.stores.forEach(
    (s, si) =>
      (yaml += `  - capsule: shey\n    store: s${si}\n${retainYaml(s.retain, 'max_messages')}${budgetYaml(s.maxBytes, path.join(home, 'conversations', `s${si}`))}${optOut(s.keepFreeOptOut)}`),
  );
  const short =
    c.keepFreeShort === null
      ? 0
      : Math.round((roots.reduce((n, r) => n + du(r), 0) + du(path.join(home, 'conversations'))) * c.keepFreeShort);
  return { home, roots, yaml, short, protectedItems, configPath: f.writeConfig(T, yaml) };
}

type Built = ReturnType<typeof build>;

/** An action as both runs must report it (the held item's name in the quarantine carries a random nonce). */
/** What both runs must say alike. */
function said(r: SweepReport) {
  return {
    actions: r.actions.map(comparable),
    skipped: r.skipped.map((s) => `${s.code} ${s.target}`),
    errors: r.errors.map((e) => `${e.code} ${e.target}`),
    budget: r.budget ?? null,
    quarantine: r.quarantine ?? null,
    fates: r.fates ?? null,
    stopped: r.stopped ?? null,
    bytes_freed: r.bytes_freed,
  };
}

/** The holds on disk now: `<parent>/<entry>` → until_ms. */
function holdsOnDisk(home: string, roots: string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of roots) {
    for (const n of fs.existsSync(r) ? fs.readdirSync(r) : []) {
      const m = /^\.murmur-gc-quarantine\.(\d+)\./.exec(n);
      if (m) out.set(`${r}/${n}`, Number(m[1]));
    }
  }
  const q = path.join(home, 'gc', 'quarantine');
  for (const n of fs.existsSync(q) ? fs.readdirSync(q) : []) {
    const m = /^(\d+)\.[0-9a-f]+$/.exec(n);
    if (m) out.set(`${q}/${n}`, Number(m[1]));
  }
  return out;
}

/** One sweep; `roomy`: the filesystem has room to spare (keep_free met), whatever the case says. */
async function sweepOnce(
  b: Built,
  T: string,
  now: number,
  c: Case,
  dryRun: boolean,
  roomy = false,
): Promise<SweepReport> {
  const config = await loadConfig({ configPath: b.configPath, env: { HOME: T }, cwd: T });
  const short = roomy ? -1e9 : b.short;
  return runSweep({
    config,
    dryRun,
    log,
    now: () => now,
    unattended: c.unattended,
    statfs: () =>
      Promise.resolve({
        totalBytes: 1e12,
        freeBytes: c.keepFreeShort === null ? 5e11 : KEEP_FREE - short,
        // keep_free asks the same share of the inodes: 1000 of a million; the reserve's inode part,
        // when it is not there (a real run released it), counts as free
        ...(c.inodesShort !== null
          ? {
              totalInodes: 1e6,
              freeInodes:
                (roomy ? 5e5 : KEEP_FREE_INODES - c.inodesShort) +
                (fs.existsSync(path.join(b.home, 'gc', '.reserve-inodes')) ? 0 : RESERVE_INODES_ROOM),
            }
          : {}),
      }),
  });
}

/** How often the generated cases reached each situation (the test asserts they all were). */
const reached = new Map<string, number>();
const noteReached = (k: string) => reached.set(k, (reached.get(k) ?? 0) + 1);
function note(r: SweepReport): void {
  const seen = new Set<string>();
  for (const a of r.actions) {
    if (a.kind === 'remove_session' || a.kind === 'remove_record')
      seen.add(`${a.kind}:${a.reason}${a.held ? ':held' : ''}${a.condemned_by ? `<${a.condemned_by}` : ''}`);
    else seen.add(a.kind === 'purge_quarantine' ? `purge:${a.reason}` : a.kind);
  }
  for (const s of r.skipped) seen.add(`skip:${s.code}`);
  if ((r.stopped ?? []).length > 0) seen.add('stopped');
  for (const u of r.budget?.unmet ?? []) seen.add(`unmet:${u.reason}`);
  for (const k of seen) reached.set(k, (reached.get(k) ?? 0) + 1);
}

/** Dry run, then real run, at `now`: the invariants of the header. */
async function checkSweep(c: Case, T: string, b: Built, now: number, label: string): Promise<void> {
  const tree = () => [b.home, ...b.roots].map((p) => (fs.existsSync(p) ? f.snapshotTree(p) : null));
  const before = tree();
  const holdsBefore = holdsOnDisk(b.home, b.roots);
  const dry = await sweepOnce(b, T, now, c, true);
  expect(tree(), `${label}: the dry run changed nothing`).toEqual(before);
  const real = await sweepOnce(b, T, now, c, false);
  expect(said(dry), `${label}: the dry run says what the real run does`).toEqual(said(real));
  note(real);

  // no hold lost before its window, except to keep_free
  const after = holdsOnDisk(b.home, b.roots);
  const purged = new Map(
    real.actions.flatMap((a) => (a.kind === 'purge_quarantine' ? [[a.path, a.reason] as const] : [])),
  );
  for (const [key, until] of holdsBefore) {
    if (after.has(key)) continue;
    const why = purged.get(key);
    expect(
      why === 'keep_free' || (why === 'expired' && until <= now),
      `${label}: hold ${key} (until ${until}) went as ${String(why)}`,
    ).toBe(true);
  }
  // with the undo window, only keep_free removes for good (murmur-gc's own audit traces aside)
  if (c.quarantineDays !== null) {
    for (const a of real.actions) {
      if ((a.kind === 'remove_session' && !a.root.endsWith('/gc')) || a.kind === 'remove_record')
        expect(a.held !== undefined || a.reason === 'keep_free', `${label}: ${comparable(a)}`).toBe(true);
    }
  }
  // keep_free takes nothing from an entry that opts out, and of the others at most per_sweep of
  // their items in place (what the policies condemned aside)
  if (c.keepFreeShort !== null) {
    const share = (c.perSweep ?? 50) / 100;
    const places = [
      ...c.roots.map((r, i) => ({ place: b.roots[i]!, optOut: r.keepFreeOptOut, kind: 'sessions' })),
      ...c.stores.map((x, i) => ({ place: `s${i}`, optOut: x.keepFreeOptOut, kind: 'records' })),
    ];
    for (const p of places) {
      const taken = real.actions.filter(
        (a) =>
          (a.kind === 'remove_session' ? a.root === p.place : a.kind === 'remove_record' && a.record === p.place) &&
          'reason' in a &&
          a.reason === 'keep_free',
      );
      if (p.optOut) expect(taken.map(comparable), `${label}: ${p.place} opted out of keep_free`).toEqual([]);
      const inPlace = taken.filter((a) => !('condemned_by' in a) || a.condemned_by === undefined).length;
      const present = (real.fates ?? []).find((st) => st.kind === p.kind && st.place === p.place)?.items ?? 0;
      if (inPlace > 0) noteReached('keep_free:in_place');
      if (inPlace > 0 && inPlace === Math.max(1, Math.floor(share * present)) && present > 1)
        noteReached('keep_free:per_sweep_full');
      expect(inPlace, `${label}: keep_free took ${inPlace} of ${present} in ${p.place}`).toBeLessThanOrEqual(
        Math.max(1, Math.floor(share * present)),
      );
    }
    if (c.inodesShort !== null && (real.budget?.keep_free?.inodes?.short ?? 0) > 0)
      noteReached(`keep_free:inodes${(real.budget?.keep_free?.inodes?.short_after ?? 0) > 0 ? ':unmet' : ':met'}`);
  }
  // a store the guard stops loses nothing
  for (const s of real.stopped ?? []) {
    const inIt = real.actions.filter((a) =>
      s.kind === 'sessions' ? 'root' in a && a.root === s.store : 'record' in a && a.record === s.store,
    );
    expect(inIt, `${label}: stopped ${s.store}`).toEqual([]);
  }
  // one fate per item; the counts agree with the actions, the summary and history
  let sessionsRemoved = 0;
  let sessionsHeld = 0;
  let recordsRemoved = 0;
  let recordsHeld = 0;
  for (const st of real.fates ?? []) {
    expect(
      Object.values(st.counts).reduce((n, k) => n + k, 0),
      `${label}: ${st.place}`,
    ).toBe(st.items);
    const n = (prefix: string) =>
      Object.entries(st.counts).reduce((m, [k, v]) => m + (k.startsWith(prefix) ? v : 0), 0);
    if (st.kind === 'sessions') {
      const mine = real.actions.filter((a) => a.kind === 'remove_session' && a.root === st.place);
      expect(n('held:'), `${label}: held in ${st.place}`).toBe(
        mine.filter((a) => a.kind === 'remove_session' && a.held).length,
      );
      expect(n('removed:'), `${label}: removed in ${st.place}`).toBe(
        mine.filter((a) => a.kind === 'remove_session' && !a.held).length,
      );
      sessionsHeld += n('held:');
      sessionsRemoved += n('removed:');
    } else if (st.kind === 'records') {
      const mine = real.actions.filter(
        (a) => (a.kind === 'remove_record' || a.kind === 'truncate_record') && a.record === st.place,
      );
      expect(n('held:')).toBe(mine.filter((a) => a.kind === 'remove_record' && a.held).length);
      expect(n('removed:')).toBe(mine.filter((a) => a.kind === 'remove_record' && !a.held).length);
      expect(n('truncated:')).toBe(mine.filter((a) => a.kind === 'truncate_record').length);
      recordsHeld += n('held:');
      recordsRemoved += n('removed:');
    }
  }
  const s = summarizeReport(real, 'manual', now, now + 1);
  expect(
    [
      s.counts['remove_session'] ?? 0,
      s.counts['hold_session'] ?? 0,
      s.counts['remove_record'] ?? 0,
      s.counts['hold_record'] ?? 0,
    ],
    `${label}: summary counts`,
  ).toEqual([sessionsRemoved, sessionsHeld, recordsRemoved, recordsHeld]);
  if (real.audit) {
    const read = await readAuditHistory(b.home);
    const mine = buildHistory(
      { home: b.home, auditRoot: read.auditRoot, exists: read.exists, problems: read.problems },
      read.sweeps,
      {},
    ).sweeps.find((x) => x.session_id === real.audit);
    expect(mine?.totals, `${label}: history`).toMatchObject({
      sessions_removed: sessionsRemoved,
      sessions_held: sessionsHeld,
      records_removed: recordsRemoved,
      records_held: recordsHeld,
    });
  }
}

describe('the safety nets compose (generated homes and configurations)', () => {
  it(`dry run == real run, no hold lost, stopped stores untouched, counts true (${RUNS} cases, seed ${SEED})`, async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        const T = fs.realpathSync(f.tempDir('mgc-prop'));
        try {
          const now = Date.now();
          const b = build(c, T, now);
          await protect(b);
          // an earlier sweep, with room to spare, leaves holds for this one to meet
          if (c.firstSweep) await sweepOnce(b, T, now - 2 * DAY, c, false, true);
          await checkSweep(c, T, b, now, 'sweep');
          // a later sweep, past the windows: it meets what the first ones hold
          await checkSweep(c, T, b, now + 8 * DAY, 'later sweep');
        } finally {
          f.rmrf(T);
        }
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
    if (process.env['MGC_PROPERTY_STATS'])
      process.stderr.write(`${JSON.stringify(Object.fromEntries([...reached].sort()), null, 1)}\n`);
    // the default cases reach every net: holds, removals, budgets, keep_free's purges, the guard, the normal state
    if (SEED === DEFAULT_SEED && RUNS >= DEFAULT_RUNS) {
      const needed = [
        'remove_session:max_age:held',
        'remove_session:max_sessions',
        'remove_session:max_bytes:held',
        'remove_session:max_bytes',
        'remove_session:keep_free',
        'remove_session:keep_free<',
        'remove_record:max_age',
        'remove_record:max_bytes',
        'truncate_record',
        'purge:expired',
        'purge:keep_free',
        'stopped',
        'skip:live_session',
        'skip:live_context',
        'skip:protected',
        'skip:foreign_owner',
        'unmet:max_bytes',
        'unmet:keep_free',
        'keep_free:in_place',
        'keep_free:per_sweep_full',
        'keep_free:inodes:met',
        'keep_free:inodes:unmet',
      ];
      for (const k of needed)
        expect(
          [...reached.keys()].some((x) => x.startsWith(k)),
          `no generated case reached ${k}`,
        ).toBe(true);
    }
  }, 300_000);
});

/** Puts the generated protected items on the protection list. */
async function protect(b: Built): Promise<void> {
  if (b.protectedItems.length === 0) return;
  const home = await Dir.open(b.home);
  try {
    await writeProtection(home, b.protectedItems);
  } finally {
    await home.close();
  }
}
