// The undo window never keeps an item forever: a held item whose item.json cannot be read goes
// by the window its name carries, audited as unreadable, and never makes a sweep fail; what a
// killed hold leaves is recovered by the next sweep. In process, the clock injected.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listHeld } from '../../src/gchome/held-listing.js';
import { runSweep } from '../../src/sweep/pipeline.js';
import { renderHuman } from '../../src/sweep/report.js';
import { PLAIN } from '../../src/layout.js';
import type { SweepReport } from '../../src/sweep/report.js';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/log.js';
import * as f from '../helpers/fixtures.js';

let tmp: string;
let home: string;
const log = createLogger({ level: 'silent' });
const HOUR = 3_600_000;

beforeEach(() => {
  tmp = fs.realpathSync(f.tempDir('mgc-qpurge'));
  home = path.join(tmp, 'home');
  fs.mkdirSync(home, { mode: 0o700 });
});
afterEach(() => f.rmrf(tmp));

async function config(yaml = 'quarantine: 24h\n') {
  const configPath = f.writeConfig(tmp, `home: ${home}\n${yaml}`);
  return loadConfig({ configPath, env: { HOME: tmp }, cwd: tmp });
}

async function sweep(nowMs: number, yaml?: string): Promise<SweepReport> {
  return runSweep({ config: await config(yaml), dryRun: false, log, now: () => nowMs });
}

const qdir = () => path.join(home, 'gc', 'quarantine');

/** A held context item made by hand, its directory's times `ageMs` in the past. */
function item(
  untilMs: number,
  sidecar: 'garbage' | 'empty' | 'missing' | 'fifo' | 'huge' | 'ok',
  payload: 'ctx' | 'dropped' | 'none' = 'ctx',
  ageMs = 2 * HOUR,
): string {
  const entry = `${untilMs}.${'ab'.repeat(8)}`;
  const dir = path.join(qdir(), entry);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (payload === 'ctx') {
    fs.mkdirSync(path.join(dir, 'ctx'));
    fs.writeFileSync(path.join(dir, 'ctx', 'conversation.jsonl'), '{"type":"murmur.record","capsule":"shey"}\n');
  } else if (payload === 'dropped') {
    fs.writeFileSync(path.join(dir, 'dropped.jsonl'), 'x'.repeat(100) + '\n');
  }
  const meta = path.join(dir, 'item.json');
  if (sidecar === 'garbage') fs.writeFileSync(meta, '{"kind":"context", this is not json');
  else if (sidecar === 'empty') fs.writeFileSync(meta, '');
  else if (sidecar === 'fifo') execFileSync('mkfifo', [meta]);
  else if (sidecar === 'huge') {
    fs.writeFileSync(meta, '');
    fs.truncateSync(meta, 300 * 1024 * 1024); // sparse: costs no disk
  } else if (sidecar === 'ok') {
    fs.writeFileSync(
      meta,
      JSON.stringify({
        kind: 'context',
        store: 'shey',
        context: 'ctx_a',
        removed_ms: untilMs - 24 * HOUR,
        until_ms: untilMs,
        reason: 'max_age',
        run: 'ses_x',
      }) + '\n',
    );
  }
  const t = (Date.now() - ageMs) / 1000;
  fs.utimesSync(dir, t, t);
  return entry;
}

function auditEvents(r: SweepReport): Record<string, unknown>[] {
  return f
    .readLines(path.join(home, 'gc', r.audit ?? 'none', 'trace.jsonl'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('a held item whose item.json cannot be read', () => {
  it.each(['garbage', 'empty', 'missing', 'fifo', 'huge'] as const)(
    'item.json %s: purged by the window in its name, audited as unreadable, no sweep fails',
    async (kind) => {
      const until = Date.now() - HOUR;
      const entry = item(until, kind);
      const r = await sweep(Date.now());
      expect(r.errors).toEqual([]);
      expect(fs.existsSync(path.join(qdir(), entry))).toBe(false);
      expect(r.actions.filter((a) => a.kind === 'purge_quarantine')).toEqual([
        expect.objectContaining({
          kind: 'purge_quarantine',
          store: 'records',
          target: entry,
          held_kind: 'unreadable',
          reason: 'expired',
          path: path.join(qdir(), entry),
        }),
      ]);
      expect(auditEvents(r).filter((e) => e['event_type'] === 'quarantine_purge')).toEqual([
        expect.objectContaining({ store: 'records', reason: 'expired', targets: [entry], kinds: ['unreadable'] }),
      ]);
      const again = await sweep(Date.now());
      expect(again.errors).toEqual([]);
      expect(again.actions).toEqual([]);
    },
  );

  it.each(['fifo', 'huge', 'garbage'] as const)(
    'item.json %s, window not passed: kept, reported once per sweep as quarantine_item_unreadable, never an error',
    async (kind) => {
      const until = Date.now() + 5 * HOUR;
      const entry = item(until, kind);
      for (let i = 0; i < 2; i++) {
        const r = await sweep(Date.now());
        expect(r.errors).toEqual([]);
        expect(r.skipped).toEqual([
          expect.objectContaining({ code: 'quarantine_item_unreadable', target: path.join(qdir(), entry) }),
        ]);
        expect(fs.existsSync(path.join(qdir(), entry, 'ctx', 'conversation.jsonl'))).toBe(true);
      }
      // its window passes: it goes
      const r = await sweep(until + 1);
      expect(r.errors).toEqual([]);
      expect(fs.existsSync(path.join(qdir(), entry))).toBe(false);
    },
  );

  it('dropped lines kept by a hold killed before its sidecar stay until the window in their name (never discarded early)', async () => {
    const until = Date.now() + 5 * HOUR;
    const entry = item(until, 'missing', 'dropped');
    const r = await sweep(Date.now());
    expect(r.errors).toEqual([]);
    expect(fs.readFileSync(path.join(qdir(), entry, 'dropped.jsonl'), 'utf8')).toBe('x'.repeat(100) + '\n');
    const later = await sweep(until + 1);
    expect(later.errors).toEqual([]);
    expect(fs.existsSync(path.join(qdir(), entry))).toBe(false);
    expect(later.actions).toEqual([
      expect.objectContaining({ kind: 'purge_quarantine', held_kind: 'unreadable', target: entry }),
    ]);
  });

  it('a young item without its sidecar (a hold may be writing it) is neither reported nor touched', async () => {
    const entry = item(Date.now() + 24 * HOUR, 'missing', 'dropped', 0);
    const r = await sweep(Date.now());
    expect(r.errors).toEqual([]);
    expect(r.skipped).toEqual([]);
    expect(fs.existsSync(path.join(qdir(), entry, 'dropped.jsonl'))).toBe(true);
  });

  it('quarantine ls / status name it as unreadable (not a held context of unknown origin)', async () => {
    const entry = item(Date.now() + 5 * HOUR, 'garbage');
    const l = await listHeld(await config());
    expect(l.items).toEqual([]);
    expect(l.problems).toEqual([
      expect.objectContaining({ code: 'quarantine_item_unreadable', target: path.join(qdir(), entry) }),
    ]);
  });

  it('the sweep and quarantine ls say until when it is kept in the one human time format (UTC wall clock)', async () => {
    const entry = item(Date.UTC(2099, 0, 2, 3, 4, 5, 600), 'garbage');
    const r = await sweep(Date.now());
    expect(r.skipped.map((s) => s.detail)).toEqual([
      expect.stringContaining(
        '; it cannot be restored, and is kept until 2099-01-02 03:04:05 UTC (the window in its name)',
      ),
    ]);
    const l = await listHeld(await config());
    expect(l.problems).toEqual([
      expect.objectContaining({
        target: path.join(qdir(), entry),
        detail: expect.stringMatching(/; a sweep deletes it for good after 2099-01-02 03:04:05 UTC$/) as unknown,
      }),
    ]);
  });
});

describe('a held item whose payload is not what its item.json names', () => {
  /** A held context whose `ctx` is a symbolic link to a directory outside the quarantine. */
  function linkedItem(untilMs: number): { entry: string; outside: string } {
    const entry = item(untilMs, 'ok', 'none');
    const outside = path.join(tmp, 'outside');
    fs.mkdirSync(outside, { recursive: true });
    fs.writeFileSync(path.join(outside, 'precious'), 'p');
    fs.symlinkSync(outside, path.join(qdir(), entry, 'ctx'));
    return { entry, outside };
  }

  it('window open: kept, reported as quarantine_item_invalid in words that say what it is; ls says the same', async () => {
    const { entry, outside } = linkedItem(Date.now() + 5 * HOUR);
    const r = await sweep(Date.now());
    expect(r.errors).toEqual([]);
    expect(r.skipped).toEqual([
      expect.objectContaining({ code: 'quarantine_item_invalid', target: path.join(qdir(), entry) }),
    ]);
    expect(r.skipped[0]?.detail).toContain(
      'its ctx is a symbolic link, not the directory its item.json names; it cannot be restored, and is kept until',
    );
    expect(r.skipped[0]?.detail).not.toContain('without a readable item.json');
    expect(fs.lstatSync(path.join(qdir(), entry, 'ctx')).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(path.join(outside, 'precious'), 'utf8')).toBe('p');
    const l = await listHeld(await config());
    expect(l.items).toEqual([]);
    expect(l.problems).toEqual([
      expect.objectContaining({ code: 'quarantine_item_invalid', target: path.join(qdir(), entry) }),
    ]);
  });

  it('window passed: purged like any held item (the link removed, never followed), audited with its kind; nothing outside touched', async () => {
    const until = Date.now() - HOUR;
    const { entry, outside } = linkedItem(until);
    const dry = await runSweep({ config: await config(), dryRun: true, log, now: () => Date.now() });
    const r = await sweep(Date.now());
    expect(r.errors).toEqual([]);
    expect(dry.actions.map((a) => a.kind)).toEqual(r.actions.map((a) => a.kind));
    expect(fs.existsSync(path.join(qdir(), entry))).toBe(false);
    expect(fs.readFileSync(path.join(outside, 'precious'), 'utf8')).toBe('p');
    expect(r.actions.filter((a) => a.kind === 'purge_quarantine')).toEqual([
      expect.objectContaining({ target: 'ctx_a', origin: 'shey', held_kind: 'context', reason: 'expired' }),
    ]);
    expect(auditEvents(r).filter((e) => e['event_type'] === 'quarantine_purge')).toEqual([
      expect.objectContaining({ store: 'records', reason: 'expired', targets: ['ctx_a'], kinds: ['context'] }),
    ]);
    const again = await sweep(Date.now());
    expect(again.errors).toEqual([]);
    expect(again.actions).toEqual([]);
  });

  it('a truncation whose record.jsonl is a directory: the same', async () => {
    const until = Date.now() - HOUR;
    const entry = `${until}.${'cd'.repeat(8)}`;
    const dir = path.join(qdir(), entry);
    fs.mkdirSync(path.join(dir, 'record.jsonl'), { recursive: true });
    fs.writeFileSync(
      path.join(dir, 'item.json'),
      JSON.stringify({
        kind: 'truncation',
        store: 'shey',
        context: 'ctx_t',
        removed_ms: until - 24 * HOUR,
        until_ms: until,
        reason: 'max_messages',
        run: 'ses_x',
        messages: 3,
        prior: null,
        at_ms: '1',
        state: 'held',
        range: { from: 0, to: 10 },
      }) + '\n',
    );
    const r = await sweep(Date.now());
    expect(r.errors).toEqual([]);
    expect(fs.existsSync(dir)).toBe(false);
    expect(r.actions.filter((a) => a.kind === 'purge_quarantine')).toEqual([
      expect.objectContaining({ target: 'ctx_t', held_kind: 'truncation' }),
    ]);
  });
});

describe('what keep_free takes of what this sweep would hold', () => {
  it.each([false, true])(
    'is removed for good, never held then purged: counted as removed, not as held (dry run: %s)',
    async (dryRun) => {
      const root = path.join(tmp, 'root', '.murmur');
      fs.mkdirSync(root, { recursive: true });
      const DAY = 24 * HOUR;
      const now = Date.now();
      // Six old sessions (max_age holds them), two recent ones; keep_free then needs the space of
      // four of them: the four oldest of what this sweep would hold go for good instead.
      const ids: string[] = [];
      for (let i = 0; i < 8; i++) {
        const start = now - (i < 6 ? 60 - i : 2 - i * 0.1) * DAY;
        ids.push(f.idAt('ses_', start));
        f.writeSession(root, {
          sessionId: ids[i]!,
          startMs: start,
          end: true,
          files: { 'blobs/b': 'x'.repeat(40_000) },
        });
      }
      const each = Number(
        execFileSync('du', ['-s', '-B1', path.join(root, ids[0]!)], { encoding: 'utf8' }).split('\t')[0],
      );
      const yaml = `quarantine: 24h\nkeep_free: 100000000\nsessions:\n  - root: ${root}\n    retain: { max_age: 30d }\n`;
      const r = await runSweep({
        config: await config(yaml),
        dryRun,
        log,
        now: () => now,
        statfs: () => Promise.resolve({ totalBytes: 1e12, freeBytes: 1e8 - 4 * each + 1 }),
      });
      expect(r.errors).toEqual([]);
      expect(r.actions.filter((a) => a.kind === 'purge_quarantine')).toEqual([]);
      const taken = r.actions.flatMap((a) =>
        a.kind === 'remove_session' ? [[a.target, a.reason, a.held ? 'held' : a.condemned_by]] : [],
      );
      expect(taken).toEqual([
        ...ids.slice(0, 4).map((id) => [id, 'keep_free', 'max_age']),
        ...ids.slice(4, 6).map((id) => [id, 'max_age', 'held']),
      ]);
      if (!dryRun) expect((await listHeld(await config(yaml), false)).items.length).toBe(2);
      expect(r.quarantine?.held).toBe(2);
      const text = renderHuman(r, 'normal', PLAIN);
      expect(text).toContain(`${dryRun ? 'Would have' : 'Done'}: 4 sessions removed, 2 sessions held,`);
      expect(text.replace(/\s+/g, ' ')).toContain(`Quarantine: 2 items ${dryRun ? 'would be held' : 'held'} for 24h`);
    },
  );
});
