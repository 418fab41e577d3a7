// The forecast (`murmur-gc --dry-run --at TIME`, docs/forecast.md):
// - TIME's forms (the configuration's durations after '+', ISO 8601 dates and date-times, local
//   time without an offset) and its refusals, pure;
// - --at without --dry-run, with --check-config, in the past or malformed: usage errors (exit 2);
// - over seeded generated homes (sessions finished, dead, recently written and kept alive by a
//   running process; records owned, foreign and headerless; age, count and byte policies; the
//   undo window with an earlier sweep's holds; a clock reference behind or ahead of now), the
//   built CLI's `--dry-run --at +N` reports exactly what a dry run whose clock is injected at
//   that instant reports — same actions, targets, reasons, bytes, holds, skips, errors, budgets,
//   fates — with the process's own clock (Date) set to that instant too, so any part of the
//   sweep that read the real clock instead of the injected one would tell; the forecast changes
//   nothing (state.json's clock reference included), and the clock-skew guard speaks exactly when
//   the forecast instant is behind the reference.
// Seeded (MURMUR_GC_FORECAST_SEED) and sized (MURMUR_GC_FORECAST_RUNS) from the environment.
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AtTimeError, forecastClock, parseAtTime } from '../../src/cli/at-time.js';
import { runSweep } from '../../src/sweep/pipeline.js';
import type { SweepReport } from '../../src/sweep/report.js';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/log.js';
import { advanceClockReference } from '../../src/gchome/state.js';
import { CLOCK_SKEW_TOLERANCE_MS } from '../../src/plan/clock.js';
import { writeProtection } from '../../src/gchome/protect-file.js';
import type { ProtectedItem } from '../../src/gchome/protect-list.js';
import { Dir } from '../../src/fsx/safe-fs.js';
import * as f from '../helpers/fixtures.js';
import { budgetYaml, comparable, retainPolicyArb, retainYaml, type Retain } from '../helpers/generated-home.js';

const RUNS = Number(process.env['MURMUR_GC_FORECAST_RUNS'] ?? 12);
const SEED = Number(process.env['MURMUR_GC_FORECAST_SEED'] ?? 20261209);
const DAY = f.DAY;
const H = 3_600_000;
const log = createLogger({ level: 'silent' });

describe('--at TIME', () => {
  const NOW = Date.UTC(2026, 11, 2, 19, 0, 0);
  const tz = process.env['TZ'];
  afterEach(() => {
    if (tz === undefined) delete process.env['TZ'];
    else process.env['TZ'] = tz;
  });

  it('+DURATION is the configuration grammar added to now; ISO dates and date-times, local without an offset', () => {
    expect(parseAtTime('+7d', NOW)).toBe(NOW + 7 * DAY);
    expect(parseAtTime('+36h', NOW)).toBe(NOW + 36 * H);
    expect(parseAtTime('+90', NOW)).toBe(NOW + 90_000);
    expect(parseAtTime('+0', NOW)).toBe(NOW);
    expect(parseAtTime('2026-12-09T07:53:00Z', NOW)).toBe(Date.UTC(2026, 11, 9, 7, 53));
    expect(parseAtTime('2026-12-09T07:53:00.25Z', NOW)).toBe(Date.UTC(2026, 11, 9, 7, 53, 0, 250));
    expect(parseAtTime('2026-12-09T07:53+01:00', NOW)).toBe(Date.UTC(2026, 11, 9, 6, 53));
    expect(parseAtTime('2026-12-09 07:53-0500', NOW)).toBe(Date.UTC(2026, 11, 9, 12, 53));
    process.env['TZ'] = 'Europe/Berlin';
    expect(parseAtTime('2026-12-09', NOW)).toBe(Date.UTC(2026, 11, 8, 23, 0));
    expect(parseAtTime('2026-12-09T07:53', NOW)).toBe(Date.UTC(2026, 11, 9, 6, 53));
    expect(parseAtTime('2027-07-01T12:00:00', NOW)).toBe(Date.UTC(2027, 6, 1, 10, 0));
    process.env['TZ'] = 'UTC';
    expect(parseAtTime('2026-12-09', NOW)).toBe(Date.UTC(2026, 11, 9));
  });

  it('refuses the past, what is no time, a local time a DST change skips, and a duration without its +', () => {
    const refused = (text: string) => {
      try {
        parseAtTime(text, NOW);
      } catch (err) {
        expect(err).toBeInstanceOf(AtTimeError);
        return (err as Error).message;
      }
      throw new Error(`${text} was accepted`);
    };
    expect(refused('2026-12-02T18:59:59Z')).toMatch(/is in the past: a forecast judges the tree as it is now/);
    expect(refused('2026-02-30')).toMatch(/names no date or time of the calendar/);
    expect(refused('2026-12-09T24:00Z')).toMatch(/names no date/);
    expect(refused('7d')).toMatch(/a duration from now takes a '\+': \+7d/);
    expect(refused('+7w')).toMatch(/after '\+' comes a duration/);
    expect(refused('next tuesday')).toMatch(/is not a time: give \+DURATION/);
    expect(refused('2026-12-09T07:53+25:00')).toMatch(/offset \+25:00 is not one/);
    expect(refused('+999999999999d')).toMatch(/after 9999-12-31/);
    process.env['TZ'] = 'Europe/Berlin';
    expect(refused('2027-03-28T02:30')).toMatch(/does not exist in the local time zone/);
  });

  it("the forecast's clock reads the instant at its first call, then runs at the real pace", () => {
    let t = 1000.4;
    const clock = forecastClock(NOW + DAY, () => t);
    expect(clock()).toBe(NOW + DAY);
    t += 1234.9;
    expect(clock()).toBe(NOW + DAY + 1234);
  });

  it('is refused without --dry-run, with --check-config, in the past, malformed: exit 2, one clear line', () => {
    const T = f.tempDir('mgc-at');
    try {
      fs.mkdirSync(path.join(T, 'home'));
      for (const [args, said] of [
        [['--at', '+7d'], /--at forecasts a dry run: give --dry-run with it/],
        [['sweep', '--dry-run', '--check-config', '--at', '+7d'], /--at forecasts a dry run, not --check-config/],
        [['--dry-run', '--at', '2001-01-01'], /'2001-01-01' is in the past/],
        [['--dry-run', '--json', '--at', 'soon'], /'soon' is not a time/],
      ] as const) {
        const r = f.runCli([...args, '--home', path.join(T, 'home')], T);
        expect(r.status, args.join(' ')).toBe(2);
        expect(r.stderr).toMatch(said);
        expect(r.stdout).toBe('');
      }
      expect(fs.readdirSync(path.join(T, 'home'))).toEqual([]);
    } finally {
      f.rmrf(T);
    }
  });
});

interface SessionSpec {
  ageDays: number;
  blob: number;
  /** finished; dead long ago; written 30 min ago without session_end (live within live_grace now); kept alive by a running process */
  state: 'finished' | 'dead' | 'recent' | 'process';
  protected: boolean;
  /** a session kept alive by a process names this context of the store (its index) */
  names: number | null;
}
interface ContextSpec {
  ageDays: number;
  messages: number;
  capsule: 'own' | 'other' | 'none';
}
interface Case {
  roots: { sessions: SessionSpec[]; retain: Retain | null; maxBytes: number | null }[];
  contexts: ContextSpec[];
  storeRetain: Retain | null;
  storeMaxBytes: number | null;
  quarantineDays: 1 | 7 | null;
  /** an earlier real sweep, two days ago, left its holds and its clock reference */
  earlier: boolean;
  /** the clock reference a day ahead of now (the clock was stepped back since) */
  ahead: boolean;
  at: '+0' | '+36h' | '+3d' | '+8d' | '+30d' | '+50d';
}

const retainArb = retainPolicyArb(6);
const fraction = fc.option(fc.constantFrom(0.3, 0.7, 1.2), { nil: null, freq: 2 });
const caseArb: fc.Arbitrary<Case> = fc.record({
  roots: fc.array(
    fc.record({
      sessions: fc.array(
        fc.record({
          ageDays: fc.double({ min: 0.05, max: 60, noNaN: true }),
          blob: fc.constantFrom(0, 3000, 20_000),
          state: fc.constantFrom('finished', 'finished', 'finished', 'dead', 'recent', 'process'),
          protected: fc.constantFrom(false, false, false, false, false, true),
          names: fc.option(fc.integer({ min: 0, max: 3 }), { nil: null }),
        }),
        { maxLength: 10 },
      ),
      retain: retainArb,
      maxBytes: fraction,
    }),
    { minLength: 1, maxLength: 2 },
  ),
  contexts: fc.array(
    fc.record({
      ageDays: fc.double({ min: 0.05, max: 70, noNaN: true }),
      messages: fc.integer({ min: 1, max: 20 }),
      capsule: fc.constantFrom('own', 'own', 'other', 'none'),
    }),
    { minLength: 1, maxLength: 6 },
  ),
  storeRetain: retainArb,
  storeMaxBytes: fraction,
  quarantineDays: fc.constantFrom(null, 1, 7),
  earlier: fc.boolean(),
  ahead: fc.constantFrom(false, false, true),
  at: fc.constantFrom('+0', '+0', '+36h', '+3d', '+8d', '+30d', '+50d'),
});

const AT_MS: Record<Case['at'], number> = {
  '+0': 0,
  '+36h': 36 * H,
  '+3d': 3 * DAY,
  '+8d': 8 * DAY,
  '+30d': 30 * DAY,
  '+50d': 50 * DAY,
};
/** The home of one case and its configuration file. */
function build(
  c: Case,
  T: string,
  now: number,
): { home: string; roots: string[]; protectedItems: ProtectedItem[]; configPath: string } {
  const home = path.join(T, 'home');
  fs.mkdirSync(path.join(home, 'running'), { recursive: true, mode: 0o700 });
  const roots = c.roots.map((_, i) => path.join(T, `r${i}`, '.murmur'));
  c.contexts.forEach((x, ci) => {
    f.writeRecord(home, 's0', `ctx_${ci}`, {
      capsule: x.capsule === 'own' ? 'shey' : x.capsule === 'other' ? 'other' : null,
      messages: x.messages,
      mtimeMs: now - x.ageDays * DAY,
      startMs: now - (x.ageDays + 1) * DAY,
    });
  });
  const protectedItems: ProtectedItem[] = [];
  c.roots.forEach((r, ri) => {
    fs.mkdirSync(roots[ri]!, { recursive: true });
    r.sessions.forEach((s, k) => {
      const startMs = Math.round(now - s.ageDays * DAY) - k;
      const id = f.idAt('ses_', startMs);
      const contextId =
        s.state === 'process' && s.names !== null && c.contexts.length > s.names ? `ctx_${s.names}` : null;
      const mtimeMs = s.state === 'recent' ? now - 30 * 60_000 : s.state === 'process' ? now - 10 * 60_000 : startMs;
      f.writeSession(roots[ri]!, {
        sessionId: id,
        startMs,
        end: s.state === 'finished',
        contextId,
        mtimeMs,
        files: s.blob > 0 ? { blob: 'x'.repeat(s.blob) } : {},
      });
      // kept alive by this very test process: still running at any instant the forecast names
      if (s.state === 'process')
        fs.writeFileSync(
          path.join(home, 'running', `${id}.json`),
          f.runningRecordJson({
            sessionId: id,
            pid: process.pid,
            processStart: f.processStartOf(process.pid),
            workdir: path.join(roots[ri]!, id),
          }),
          { mode: 0o600 },
        );
      if (s.protected)
        protectedItems.push({ kind: 'session', target: id, where: roots[ri]!, since_ms: now - DAY, by: 'protect' });
    });
  });
  let yaml = `home: ${home}\n`;
  if (c.quarantineDays !== null) yaml += `quarantine: ${c.quarantineDays}d\n`;
  yaml += 'sessions:\n';
  c.roots.forEach(
    (r, ri) =>
      (yaml += `  - root: ${roots[ri]}\n${retainYaml(r.retain, 'max_sessions')}${budgetYaml(r.maxBytes, roots[ri]!)}`),
  );
  yaml += `records:\n  - capsule: shey\n    store: s0\n${retainYaml(c.storeRetain, 'max_messages')}${budgetYaml(c.storeMaxBytes, path.join(home, 'conversations', 's0'))}`;
  return { home, roots, protectedItems, configPath: f.writeConfig(T, yaml) };
}

/** An action as both reports must carry it (a held context's name in the quarantine carries a random nonce). */
/** What the forecast and the dry run at its instant must say alike. */
function said(r: SweepReport) {
  return {
    started_ms: r.started_ms,
    actions: r.actions.map(comparable),
    skipped: r.skipped.map((s) => `${s.code} ${s.target}`),
    errors: r.errors.map((e) => `${e.code} ${e.target}`),
    budget: r.budget ?? null,
    quarantine: r.quarantine ?? null,
    fates: r.fates ?? null,
    stopped: r.stopped ?? null,
    bytes_freed: r.bytes_freed,
    inventory: r.inventory,
  };
}

/** `run` with the process's Date reading `ms` (and running on from there): what the real clock says at that instant. */
async function atInstant<T>(ms: number, run: () => Promise<T>): Promise<T> {
  vi.useFakeTimers({ toFake: ['Date'], now: ms, shouldAdvanceTime: true });
  try {
    return await run();
  } finally {
    vi.useRealTimers();
  }
}

const reached = new Map<string, number>();
function note(r: SweepReport, c: Case): void {
  const seen = new Set<string>([`at:${c.at}`]);
  for (const a of r.actions)
    seen.add(
      a.kind === 'remove_session' || a.kind === 'remove_record'
        ? `${a.kind}:${a.reason}${a.held ? ':held' : ''}`
        : a.kind === 'purge_quarantine'
          ? `purge:${a.reason}`
          : a.kind,
    );
  for (const s of r.skipped) seen.add(`skip:${s.code}`);
  for (const k of seen) reached.set(k, (reached.get(k) ?? 0) + 1);
}

describe('a forecast is the dry run at that instant (generated homes)', () => {
  it(`--dry-run --at +N equals a dry run with the clock injected at now + N (${RUNS} cases, seed ${SEED})`, async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        const T = fs.realpathSync(f.tempDir('mgc-forecast'));
        try {
          const now = Date.now();
          const b = build(c, T, now);
          if (b.protectedItems.length > 0) {
            const home = await Dir.open(b.home);
            await writeProtection(home, b.protectedItems).finally(() => home.close());
          }
          const config = await loadConfig({ configPath: b.configPath, env: { HOME: T }, cwd: T });
          // an earlier sweep left holds (their windows end before or after the forecast) and its clock reference
          if (c.earlier) await runSweep({ config, dryRun: false, log, now: () => now - 2 * DAY });
          if (c.ahead) await advanceClockReference(b.home, now + DAY);
          const tree = () => [b.home, ...b.roots].map((p) => f.snapshotTree(p));
          const before = tree();

          const t0 = Date.now();
          const r = f.runCli(['--dry-run', '--json', '--config', b.configPath, '--at', c.at], T, { TZ: 'UTC' });
          const t1 = Date.now();
          expect(r.status, r.stderr).toBe(0);
          const forecast = f.json<SweepReport & { forecast_ms: number }>(r);
          expect(tree(), 'the forecast changed nothing').toEqual(before);
          expect(forecast.forecast_ms).toBe(forecast.started_ms);
          expect(forecast.forecast_ms).toBeGreaterThanOrEqual(t0 + AT_MS[c.at]);
          expect(forecast.forecast_ms).toBeLessThanOrEqual(t1 + AT_MS[c.at]);

          const dry = await atInstant(forecast.forecast_ms, () =>
            runSweep({ config, dryRun: true, log, now: () => forecast.forecast_ms }),
          );
          expect(said(forecast), 'the forecast says what the dry run at its instant says').toEqual(said(dry));
          // the clock-skew guard speaks exactly when the instant is behind the reference
          const reference = c.ahead ? now + DAY : c.earlier ? now - 2 * DAY : undefined;
          const skewed = reference !== undefined && reference - forecast.forecast_ms > CLOCK_SKEW_TOLERANCE_MS;
          expect(
            forecast.skipped.some((s) => s.code === 'clock_skew'),
            `clock_skew at ${c.at}, reference ${String(reference)}`,
          ).toBe(skewed);
          note(forecast, c);
        } finally {
          f.rmrf(T);
        }
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
    if (process.env['MGC_FORECAST_STATS'])
      process.stderr.write(`${JSON.stringify(Object.fromEntries([...reached].sort()), null, 1)}\n`);
    // the default cases reach what a forecast is for: ages, counts and budgets, holds and their
    // windows ending, the live, the protected, the skewed clock
    if (SEED === 20261209 && RUNS >= 12) {
      for (const k of [
        'remove_session:max_age',
        'remove_session:max_sessions',
        'remove_record:max_age',
        'truncate_record',
        'purge:expired',
        'skip:live_session',
        'skip:protected',
        'skip:clock_skew',
      ]) {
        expect(
          [...reached.keys()].some((x) => x.startsWith(k)),
          `no generated case reached ${k}`,
        ).toBe(true);
      }
    }
  }, 120_000);
});
