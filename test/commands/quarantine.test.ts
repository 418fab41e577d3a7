// The undo window (`quarantine:`) through the real sweep and restore, in process (the clock and
// free space are injected).
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { removeContext, truncateContext } from '../../src/commands/conversation.js';
import { restoreTarget } from '../../src/commands/quarantine.js';
import { renderHeld } from '../../src/cli/quarantine.js';
import { listHeld } from '../../src/gchome/held-listing.js';
import { runSweep } from '../../src/sweep/pipeline.js';
import { formatBytes, renderHuman, type SweepReport } from '../../src/sweep/report.js';
import type { GcConfig } from '../../src/config/types.js';
import { RefusalError } from '../../src/errors.js';
import type { FsSpace } from '../../src/fsx/statfs.js';
import { readAuditHistory } from '../../src/commands/audit-read.js';
import { buildHistory, renderHistory } from '../../src/commands/history.js';
import { createLogger } from '../../src/log.js';
import { renderRemoveText } from '../../src/runtime/conversation-format.js';
import * as f from '../helpers/fixtures.js';
import { loadTestConfig } from '../helpers/config.js';

let tmp: string;
let home: string;
let root: string;
const log = createLogger({ level: 'silent' });
const HOUR = 3_600_000;

beforeEach(() => {
  tmp = fs.realpathSync(f.tempDir('mgc-quarantine'));
  home = path.join(tmp, 'home');
  root = path.join(tmp, 'app', '.murmur');
  fs.mkdirSync(home, { mode: 0o700 });
  fs.mkdirSync(root, { recursive: true });
});
afterEach(() => f.rmrf(tmp));

const config = (yaml: string): Promise<GcConfig> => loadTestConfig(tmp, home, yaml);

async function sweep(
  yaml: string,
  opts: { dryRun?: boolean; nowMs?: number; space?: FsSpace } = {},
): Promise<SweepReport> {
  const c = await config(yaml);
  const space = opts.space;
  const nowMs = opts.nowMs;
  return runSweep({
    config: c,
    dryRun: opts.dryRun ?? false,
    log,
    ...(nowMs !== undefined ? { now: () => nowMs } : {}),
    ...(space ? { statfs: () => Promise.resolve(space) } : {}),
  });
}

function session(daysAgo: number, blob = 1000): string {
  const startMs = Date.now() - daysAgo * f.DAY;
  const id = f.idAt('ses_', startMs);
  f.writeSession(root, { sessionId: id, startMs, end: true, files: { blob: 'x'.repeat(blob) } });
  return id;
}

const held = (dir: string) => fs.readdirSync(dir).filter((n) => n.startsWith('.murmur-gc-quarantine.'));
const qdir = () => path.join(home, 'gc', 'quarantine');
const qitems = () => (fs.existsSync(qdir()) ? fs.readdirSync(qdir()).filter((n) => /^\d+\./.test(n)) : []);

/** The tree, without the config file each sweep() rewrites. */
function snap(): Record<string, string> {
  const s = f.snapshotTree(tmp);
  delete s['config.yaml'];
  delete s['.'];
  // the sweep and record locks come and go under gc/ (their directories' mtimes with them)
  for (const k of Object.keys(s)) if (k === 'home/gc' || k.startsWith('home/gc/locks')) delete s[k];
  return s;
}

function auditEvents(r: SweepReport): Record<string, unknown>[] {
  return f
    .readLines(path.join(home, 'gc', r.audit ?? 'none', 'trace.jsonl'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('a sweep with quarantine holds what it removes', () => {
  it('moves a session aside in its own root under a name the runtime never counts, and frees nothing yet', async () => {
    const old = session(40);
    const young = session(1);
    const r = await sweep(`quarantine: 24h\nsessions:\n  - root: ${root}\n    retain: { max_age: 30d }\n`);
    expect(r.errors).toEqual([]);
    expect(fs.existsSync(path.join(root, old))).toBe(false);
    const names = held(root);
    expect(names).toHaveLength(1);
    expect(names[0]).toMatch(new RegExp(`^\\.murmur-gc-quarantine\\.\\d+\\.${old}$`));
    expect(fs.readFileSync(path.join(root, names[0]!, 'blob'), 'utf8')).toBe('x'.repeat(1000));
    expect(fs.existsSync(path.join(root, young))).toBe(true);
    const a = r.actions.find((x) => x.kind === 'remove_session');
    expect(a).toMatchObject({ target: old, reason: 'max_age', held: { path: path.join(root, names[0]!) } });
    expect(r.bytes_freed).toBe(0);
    expect(r.quarantine).toMatchObject({ window_secs: 86400, held: 1, purged: 0 });
    // the runtime's retention line still names it (it left the store)
    expect(auditEvents(r).filter((e) => e['event_type'] === 'retention')).toEqual([
      expect.objectContaining({ store: 'sessions', reason: 'max_age', targets: [old] }),
    ]);
  });

  it('a held session is not counted by max_sessions (the planner ranks ses_ names only)', async () => {
    const ids = [session(5), session(4), session(3)];
    await sweep(`quarantine: 24h\nsessions:\n  - root: ${root}\n    retain: { max_sessions: 2 }\n`);
    expect(held(root)).toHaveLength(1);
    // a second sweep: two sessions and one held entry — nothing more goes
    const r = await sweep(`quarantine: 24h\nsessions:\n  - root: ${root}\n    retain: { max_sessions: 2 }\n`);
    expect(r.actions.filter((a) => a.kind === 'remove_session')).toEqual([]);
    expect(r.inventory.sessions).toBe(2);
    expect(fs.existsSync(path.join(root, ids[1]!))).toBe(true);
    expect(fs.existsSync(path.join(root, ids[2]!))).toBe(true);
  });

  it('a dry run holds nothing and says what would be held', async () => {
    const old = session(40);
    const before = snap();
    const r = await sweep(`quarantine: 24h\nsessions:\n  - root: ${root}\n    retain: { max_age: 30d }\n`, {
      dryRun: true,
    });
    expect(snap()).toEqual(before);
    expect(r.actions.find((a) => a.kind === 'remove_session')).toMatchObject({
      target: old,
      held: { path: expect.stringContaining(`.murmur-gc-quarantine.`) },
    });
    expect(r.quarantine).toMatchObject({ held: 1 });
  });

  it('moves a context out of its record store into <home>/gc/quarantine with a sidecar naming it', async () => {
    f.writeRecord(home, 'shey', 'ctx_old', { capsule: 'shey', messages: 3, mtimeMs: Date.now() - 100 * f.DAY });
    const r = await sweep(`quarantine: 24h\nrecords:\n  - capsule: shey\n    retain: { max_age: 90d }\n`);
    expect(r.errors).toEqual([]);
    expect(fs.existsSync(path.join(home, 'conversations', 'shey', 'ctx_old'))).toBe(false);
    const items = qitems();
    expect(items).toHaveLength(1);
    const meta = JSON.parse(fs.readFileSync(path.join(qdir(), items[0]!, 'item.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(meta).toMatchObject({ kind: 'context', store: 'shey', context: 'ctx_old', reason: 'max_age' });
    expect(fs.readFileSync(path.join(qdir(), items[0]!, 'ctx', 'conversation.jsonl'), 'utf8')).toContain('message 2');
    expect((fs.statSync(qdir()).mode & 0o777).toString(8)).toBe('700');
  });
});

describe('one voice for a held item', () => {
  it('-v, the table and the logs all say "hold" for what the undo window keeps, in a dry run and a real one', async () => {
    const old = session(40);
    f.writeRecord(home, 'shey', 'ctx_old', { capsule: 'shey', messages: 3, mtimeMs: Date.now() - 100 * f.DAY });
    const yaml = `quarantine: 24h\nsessions:\n  - root: ${root}\n    retain: { max_age: 30d }\nrecords:\n  - capsule: shey\n    retain: { max_age: 90d }\n`;
    for (const dryRun of [true, false]) {
      const msgs: string[] = [];
      const logger = pino(
        { level: 'debug' },
        { write: (line: string) => void msgs.push(String((JSON.parse(line) as { msg: unknown }).msg)) },
      );
      const r = await runSweep({ config: await config(yaml), dryRun, log: logger });
      const would = dryRun ? 'would ' : '';
      const verbose = renderHuman(r, 'verbose', { width: 10_000 });
      expect(verbose).toContain(`\n  ${would}hold session ${root}/${old}  (max_age, `);
      expect(verbose).toContain(`\n  ${would}hold record shey/ctx_old  (max_age, `);
      expect(verbose).not.toMatch(/remove (session|record) /);
      const table = renderHuman(r, 'normal', { width: 10_000 });
      expect(table).toMatch(dryRun ? /\n +would hold sessions +\S/ : /\n +held sessions +\S/);
      expect(table).toMatch(dryRun ? /\n +would hold records +\S/ : /\n +held records +\S/);
      expect(msgs).toEqual(
        expect.arrayContaining(dryRun ? ['would hold session', 'would hold record'] : ['session held', 'record held']),
      );
      expect(msgs.filter((m) => /^(would remove (session|record)|(session|record) removed)$/.test(m))).toEqual([]);
    }
  });
});

describe('the window passes', () => {
  it('a later sweep deletes held items for good, audited as quarantine_purge; not before', async () => {
    const old = session(40);
    f.writeRecord(home, 'shey', 'ctx_old', { capsule: 'shey', messages: 3, mtimeMs: Date.now() - 100 * f.DAY });
    const yaml = `quarantine: 24h\nsessions:\n  - root: ${root}\n    retain: { max_age: 30d }\nrecords:\n  - capsule: shey\n    retain: { max_age: 90d }\n`;
    await sweep(yaml);
    expect(held(root)).toHaveLength(1);
    expect(qitems()).toHaveLength(1);
    const early = await sweep(yaml, { nowMs: Date.now() + 23 * HOUR });
    expect(early.actions.filter((a) => a.kind === 'purge_quarantine')).toEqual([]);
    expect(held(root)).toHaveLength(1);
    const r = await sweep(yaml, { nowMs: Date.now() + 25 * HOUR });
    expect(r.errors).toEqual([]);
    const purges = r.actions.filter((a) => a.kind === 'purge_quarantine');
    expect(purges.map((a) => [a.target, a.held_kind, a.reason])).toEqual(
      expect.arrayContaining([
        [old, 'session', 'expired'],
        ['ctx_old', 'context', 'expired'],
      ]),
    );
    expect(held(root)).toEqual([]);
    expect(qitems()).toEqual([]);
    expect(r.bytes_freed).toBeGreaterThan(1000);
    const lines = auditEvents(r).filter((e) => e['event_type'] === 'quarantine_purge');
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ store: 'sessions', reason: 'expired', targets: [old] }),
        expect.objectContaining({ store: 'records', reason: 'expired', targets: ['ctx_old'] }),
      ]),
    );
  });

  it('a dry run after the window says what would be purged and deletes nothing', async () => {
    session(40);
    const yaml = `quarantine: 1h\nsessions:\n  - root: ${root}\n    retain: { max_age: 30d }\n`;
    await sweep(yaml);
    const before = snap();
    const r = await sweep(yaml, { dryRun: true, nowMs: Date.now() + 2 * HOUR });
    expect(r.actions.filter((a) => a.kind === 'purge_quarantine')).toHaveLength(1);
    expect(snap()).toEqual(before);
  });
});

describe('truncation keeps the dropped lines for the window', () => {
  it('keeps the dropped lines byte for byte next to the held items (the old inode, cut to them)', async () => {
    const { ids } = f.writeRecord(home, 'shey', 'ctx_a', { capsule: 'shey', messages: 10 });
    const original = fs.readFileSync(path.join(home, 'conversations', 'shey', 'ctx_a', 'conversation.jsonl'), 'utf8');
    const r = await sweep(`quarantine: 24h\nrecords:\n  - capsule: shey\n    retain: { max_messages: 4 }\n`);
    expect(r.errors).toEqual([]);
    const items = qitems();
    expect(items).toHaveLength(1);
    const meta = JSON.parse(fs.readFileSync(path.join(qdir(), items[0]!, 'item.json'), 'utf8')) as Record<
      string,
      unknown
    > & { range: { from: number; to: number } };
    const dropped = fs
      .readFileSync(path.join(qdir(), items[0]!, 'record.jsonl'))
      .subarray(meta.range.from, meta.range.to)
      .toString('utf8');
    const lines = original.split('\n');
    expect(dropped).toBe(lines.slice(1, 7).join('\n') + '\n');
    expect(dropped).toContain(ids[5]!);
    expect(dropped).not.toContain(ids[6]!);
    expect(meta).toMatchObject({
      kind: 'truncation',
      store: 'shey',
      context: 'ctx_a',
      messages: 6,
      state: 'held',
      prior: null,
    });
    expect(r.actions.find((a) => a.kind === 'truncate_record')).toMatchObject({
      messages_dropped: 6,
      held: { path: path.join(qdir(), items[0]!, 'record.jsonl') },
    });
  });
});

describe('what the undo window holds: the sweep and quarantine ls', () => {
  it("held sessions, contexts and dropped lines: the sweep counts the bytes it held, a dry run the same; quarantine ls counts the window's own files on top, as du does", async () => {
    const sessions = [session(40, 30_000), session(50, 5000)];
    f.writeRecord(home, 'shey', 'ctx_old', { capsule: 'shey', messages: 3, mtimeMs: Date.now() - 100 * f.DAY });
    f.writeRecord(home, 'shey', 'ctx_older', { capsule: 'shey', messages: 30, mtimeMs: Date.now() - 120 * f.DAY });
    f.writeRecord(home, 'shey', 'ctx_long', { capsule: 'shey', messages: 40 });
    const yaml = `quarantine: 24h\nsessions:\n  - root: ${root}\n    retain: { max_age: 30d }\nrecords:\n  - capsule: shey\n    retain: { max_age: 90d, max_messages: 4 }\n`;
    const dry = await sweep(yaml, { dryRun: true });
    expect(dry.quarantine).toMatchObject({ held: 5 });
    const r = await sweep(yaml);
    expect(r.errors).toEqual([]);
    expect(r.quarantine).toEqual(dry.quarantine);
    // what was held: the sessions and contexts as measured when they moved, the truncation's dropped lines
    const moved = r.actions.reduce(
      (n, a) => n + ((a.kind === 'remove_session' || a.kind === 'remove_record') && a.held ? a.bytes : 0),
      0,
    );
    const payload = path.join(
      qdir(),
      qitems().find((n) => fs.existsSync(path.join(qdir(), n, 'record.jsonl')))!,
      'item.json',
    );
    const range = (JSON.parse(fs.readFileSync(payload, 'utf8')) as { range: { from: number; to: number } }).range;
    expect(r.quarantine!.held_bytes).toBe(moved + range.to - range.from);
    const size = formatBytes(r.quarantine!.held_bytes);
    expect(renderHuman(dry, 'normal', { width: 10_000 })).toContain(
      `Quarantine: 5 items would be held for 24h (${size}; murmur-gc restore puts one back).`,
    );
    expect(renderHuman(r, 'normal', { width: 10_000 })).toContain(
      `Quarantine: 5 items held for 24h (${size}; murmur-gc restore puts one back).`,
    );
    const c = await config(yaml);
    const ls = await listHeld(c);
    expect(ls.items.map((i) => `${i.kind} ${i.target}`).sort()).toEqual(
      [...sessions.map((id) => `session ${id}`), 'context ctx_old', 'context ctx_older', 'truncation ctx_long'].sort(),
    );
    // what du counts for the held entries: the sessions renamed in their root, the quarantine's item directories
    const du = (paths: string[]) =>
      Number(
        execFileSync('du', ['-s', '-B1', '-c', ...paths], { encoding: 'utf8' })
          .trim()
          .split('\n')
          .pop()!
          .split('\t')[0],
      );
    const entries = [...held(root).map((n) => path.join(root, n)), ...qitems().map((n) => path.join(qdir(), n))];
    expect(entries).toHaveLength(5);
    expect(ls.totals.bytes).toBe(du(entries));
    expect(ls.totals.bytes).toBeGreaterThan(r.quarantine!.held_bytes);
    expect(renderHeld(ls, c)).toContain(`5 held, ${formatBytes(ls.totals.bytes)} (quarantine: 24h)`);
  });
});

describe('murmur-gc restore', () => {
  const restore = async (target: string, extra: { record?: string; dryRun?: boolean } = {}) =>
    restoreTarget(await config('quarantine: 24h\n' + SESSIONS_YAML()), log, {
      target,
      dryRun: extra.dryRun ?? false,
      ...(extra.record ? { record: extra.record } : {}),
    });
  const SESSIONS_YAML = () =>
    `sessions:\n  - root: ${root}\n    retain: { max_age: 30d }\nrecords:\n  - capsule: shey\n    retain: { max_age: 90d, max_messages: 4 }\n`;
  const refusal = async (p: Promise<unknown>) => {
    try {
      await p;
    } catch (err) {
      return err instanceof RefusalError ? err.code : `not a refusal: ${String(err)}`;
    }
    return 'no refusal';
  };

  it('puts a held session back under its name, byte for byte, and audits it', async () => {
    const old = session(40);
    const before = fs.readFileSync(path.join(root, old, 'trace.jsonl'), 'utf8');
    await sweep(`quarantine: 24h\n${SESSIONS_YAML()}`);
    expect(fs.existsSync(path.join(root, old))).toBe(false);
    const r = await restore(old);
    expect(r.restored).toEqual([
      { held_kind: 'session', from: expect.stringContaining('.murmur-gc-quarantine.'), to: path.join(root, old) },
    ]);
    expect(fs.readFileSync(path.join(root, old, 'trace.jsonl'), 'utf8')).toBe(before);
    expect(fs.readFileSync(path.join(root, old, 'blob'), 'utf8')).toBe('x'.repeat(1000));
    expect(held(root)).toEqual([]);
    const lines = f
      .readLines(path.join(home, 'gc', r.audit!, 'trace.jsonl'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l['event_type'])).toEqual(['session_start', 'quarantine_restore', 'session_end']);
    expect(lines[1]).toMatchObject({ store: 'sessions', held: 'session', target: old, origin: root });
  });

  it('puts a held context back into its record store', async () => {
    const { file } = f.writeRecord(home, 'shey', 'ctx_old', {
      capsule: 'shey',
      messages: 3,
      mtimeMs: Date.now() - 100 * f.DAY,
    });
    const before = fs.readFileSync(file, 'utf8');
    await sweep(`quarantine: 24h\n${SESSIONS_YAML()}`);
    expect(fs.existsSync(file)).toBe(false);
    const r = await restore('ctx_old');
    expect(r.restored.map((x) => x.held_kind)).toEqual(['context']);
    expect(fs.readFileSync(file, 'utf8')).toBe(before);
    expect(qitems()).toEqual([]);
  });

  it('puts dropped lines back in front of the record, lines appended since after them, dropped decreased (marker removed at 0)', async () => {
    const { file, ids } = f.writeRecord(home, 'shey', 'ctx_a', { capsule: 'shey', messages: 10 });
    const original = fs.readFileSync(file, 'utf8');
    await sweep(`quarantine: 24h\n${SESSIONS_YAML()}`);
    expect(f.readLines(file)).toHaveLength(5);
    const appended = [f.messageLine('msg_later1'), f.messageLine('msg_later2')];
    fs.appendFileSync(file, appended.join('\n') + '\n');
    const r = await restore('ctx_a');
    expect(r.restored).toEqual([expect.objectContaining({ held_kind: 'truncation', messages_restored: 6 })]);
    const lines = f.readLines(file);
    expect(lines[0]).toBe(original.split('\n')[0]); // the header as first written: no truncated marker
    expect(lines.slice(1)).toEqual([...original.trimEnd().split('\n').slice(1), ...appended]);
    expect(lines.filter((l) => l.includes('"id":"msg_')).map((l) => (JSON.parse(l) as { id: string }).id)).toEqual([
      ...ids,
      'msg_later1',
      'msg_later2',
    ]);
    expect((fs.statSync(file).mode & 0o777).toString(8)).toBe('600');
    expect(qitems()).toEqual([]);
  });

  it('an earlier truncation that is not held stays counted: dropped goes down by what came back', async () => {
    const earlier = { dropped: 5, oldest_surviving_id: 'msg_a', last_dropped_id: 'msg_b', at_ms: 1756400000123 };
    const { file } = f.writeRecord(home, 'shey', 'ctx_b', { capsule: 'shey', messages: 10, truncated: earlier });
    await sweep(`quarantine: 24h\n${SESSIONS_YAML()}`);
    expect(JSON.parse(f.readLines(file)[0]!)).toMatchObject({ truncated: { dropped: 11 } });
    await restore('ctx_b');
    expect(f.readLines(file)[0]).toBe(
      `{"type":"murmur.record","capsule":"shey","created_ms":1756400000000,"truncated":{"dropped":5,"oldest_surviving_id":"msg_a","last_dropped_id":"msg_b","at_ms":1756400000123}}`,
    );
    expect(f.readLines(file).filter((l) => l.includes('"role"'))).toHaveLength(10);
  });

  it('refuses when something of that name exists now, and changes nothing', async () => {
    const old = session(40);
    f.writeRecord(home, 'shey', 'ctx_old', { capsule: 'shey', messages: 3, mtimeMs: Date.now() - 100 * f.DAY });
    await sweep(`quarantine: 24h\n${SESSIONS_YAML()}`);
    fs.mkdirSync(path.join(root, old));
    fs.writeFileSync(path.join(root, old, 'trace.jsonl'), 'new\n');
    f.writeRecord(home, 'shey', 'ctx_old', { capsule: 'shey', messages: 1 });
    const before = snap();
    expect(await refusal(restore(old))).toBe('restore_exists');
    expect(await refusal(restore('ctx_old'))).toBe('restore_exists');
    expect(snap()).toEqual(before);
  });

  it('refuses to put lines back into a record truncated again since (a gap would be left)', async () => {
    const { file } = f.writeRecord(home, 'shey', 'ctx_c', { capsule: 'shey', messages: 10 });
    await sweep(`quarantine: 24h\n${SESSIONS_YAML()}`);
    const lines = f.readLines(file);
    const h = JSON.parse(lines[0]!) as { truncated: { at_ms: number; dropped: number } };
    // the runtime truncated it once more at launch
    h.truncated.at_ms += 1000;
    h.truncated.dropped += 2;
    fs.writeFileSync(file, [JSON.stringify(h), ...lines.slice(3)].join('\n') + '\n');
    const before = snap();
    expect(await refusal(restore('ctx_c'))).toBe('restore_conflict');
    expect(snap()).toEqual(before);
  });

  it('a dry run checks and changes nothing; an unknown target is refused', async () => {
    const old = session(40);
    await sweep(`quarantine: 24h\n${SESSIONS_YAML()}`);
    const before = snap();
    const r = await restore(old, { dryRun: true });
    expect(r).toMatchObject({ dry_run: true, audit: null, restored: [{ held_kind: 'session' }] });
    expect(snap()).toEqual(before);
    expect(await refusal(restore('ctx_nope'))).toBe('restore_not_held');
  });

  it('a name that starts with ses_ but is no session id is taken for a context id, and the refusal says so', async () => {
    const message = async (target: string) => {
      try {
        await restore(target);
      } catch (err) {
        return err instanceof RefusalError ? `${err.code}: ${err.message}` : `not a refusal: ${String(err)}`;
      }
      return 'no refusal';
    };
    const taken =
      "'ses_nonexistent' is not a session id (ses_ followed by at least 12 hex digits), so it is taken for a context id";
    // the quarantine is empty
    expect(await message('ses_nonexistent')).toContain(
      `restore_not_held: ${taken}, and no context is held (the quarantine is empty)`,
    );
    // something else is held
    f.writeRecord(home, 'shey', 'ctx_old', { capsule: 'shey', messages: 3, mtimeMs: Date.now() - 100 * f.DAY });
    await sweep(`quarantine: 24h\n${SESSIONS_YAML()}`);
    expect(qitems()).toHaveLength(1);
    const m = await message('ses_nonexistent');
    expect(m).toContain(`restore_not_held: ${taken}, and no context of that name is held`);
    expect(m).not.toContain("context 'ses_nonexistent' is not held");
    // a context id as such, and a session id, keep their own words
    expect(await message('ctx_nope')).toContain("restore_not_held: context 'ctx_nope' is not held");
    expect(await message('ses_01a00000000070008000000000000000')).toContain(
      'restore_not_held: session ses_01a00000000070008000000000000000 is not held in any configured sessions root',
    );
  });

  it('a context whose id starts with ses_ (no session id) is put back into its record store and protected as a context', async () => {
    f.writeRecord(home, 'shey', 'ses_ctx', { capsule: 'shey', messages: 3, mtimeMs: Date.now() - 100 * f.DAY });
    await sweep(`quarantine: 24h\n${SESSIONS_YAML()}`);
    expect(fs.existsSync(path.join(home, 'conversations', 'shey', 'ses_ctx'))).toBe(false);
    const r = await restore('ses_ctx');
    expect(r.restored.map((x) => x.held_kind)).toEqual(['context']);
    expect(fs.existsSync(path.join(home, 'conversations', 'shey', 'ses_ctx', 'conversation.jsonl'))).toBe(true);
    expect(r.protection?.item).toMatchObject({ kind: 'context', target: 'ses_ctx', where: 'shey' });
  });
});

describe('disk budgets and the undo window', () => {
  it('max_bytes counts what is in place, never what the window holds: a held session stays held, the budget holds the oldest in place', async () => {
    const old = session(40, 5000);
    const ids = [session(3, 5000), session(2, 5000), session(1, 5000)];
    await sweep(`quarantine: 24h\nsessions:\n  - root: ${root}\n    retain: { max_age: 30d }\n`);
    expect(held(root)).toHaveLength(1);
    // the three sessions in place (allocated bytes, as du counts them): a budget just under them needs one to go
    const inPlace = Number(
      execFileSync('du', ['-s', '-B1', '-c', ...ids.map((id) => path.join(root, id))], { encoding: 'utf8' })
        .trim()
        .split('\n')
        .pop()!
        .split('\t')[0],
    );
    const yaml = `quarantine: 24h\nsessions:\n  - root: ${root}\n    retain: { max_age: 30d }\n    max_bytes: ${inPlace - 100}\n`;
    const dry = await sweep(yaml, { dryRun: true });
    const r = await sweep(yaml);
    expect(r.errors).toEqual([]);
    for (const x of [dry, r]) {
      expect(x.actions.filter((a) => a.kind === 'purge_quarantine')).toEqual([]);
      expect(x.actions.map((a) => a.kind === 'remove_session' && [a.target, a.reason, a.held !== undefined])).toEqual([
        [ids[0], 'max_bytes', true],
      ]);
      expect(x.budget?.stores[0]).toMatchObject({ held: 1, removed: 0, held_purged: 0 });
    }
    expect(held(root)).toHaveLength(2);
    expect(held(root).some((n) => n.endsWith(old))).toBe(true);
    expect(renderHuman(r, 'normal', { width: 10_000 })).toContain('1 item held for space');
    expect(auditEvents(r).filter((e) => e['event_type'] === 'quarantine_purge')).toEqual([]);
  });

  it('keep_free: held contexts are purged (oldest hold first) before any owned context in place', async () => {
    f.writeRecord(home, 'shey', 'ctx_gone', { capsule: 'shey', messages: 50, mtimeMs: Date.now() - 100 * f.DAY });
    f.writeRecord(home, 'shey', 'ctx_oldest_in_place', {
      capsule: 'shey',
      messages: 50,
      mtimeMs: Date.now() - 60 * f.DAY,
    });
    f.writeRecord(home, 'shey', 'ctx_new', { capsule: 'shey', messages: 50, mtimeMs: Date.now() - 1 * f.DAY });
    const yaml = `quarantine: 24h\nkeep_free: 1000\nrecords:\n  - capsule: shey\n    retain: { max_age: 90d }\n`;
    await sweep(yaml, { space: { totalBytes: 1e9, freeBytes: 1e8 } });
    expect(qitems()).toHaveLength(1);
    // now short by 100 bytes: the held context is enough
    const r = await sweep(yaml, { space: { totalBytes: 1e9, freeBytes: 900 } });
    expect(r.actions.filter((a) => a.kind === 'purge_quarantine').map((a) => [a.target, a.reason])).toEqual([
      ['ctx_gone', 'keep_free'],
    ]);
    expect(r.actions.filter((a) => a.kind === 'remove_record')).toEqual([]);
    expect(fs.existsSync(path.join(home, 'conversations', 'shey', 'ctx_oldest_in_place'))).toBe(true);
    expect(qitems()).toEqual([]);
  });
});

describe('symlinks', () => {
  it('a symlink in place of <home>/gc/quarantine is never followed: nothing is written or deleted through it, the context stays', async () => {
    const outside = path.join(tmp, 'outside');
    fs.mkdirSync(outside);
    fs.writeFileSync(path.join(outside, 'canary'), 'keep me');
    const expired = `${Date.now() - HOUR}.0123456789abcdef`; // an expired-looking item out there
    fs.mkdirSync(path.join(outside, expired));
    fs.writeFileSync(path.join(outside, expired, 'item.json'), '{}');
    fs.mkdirSync(path.join(home, 'gc'), { mode: 0o700 });
    fs.symlinkSync(outside, qdir());
    f.writeRecord(home, 'shey', 'ctx_old', { capsule: 'shey', messages: 3, mtimeMs: Date.now() - 100 * f.DAY });
    const before = f.snapshotTree(outside);
    const r = await sweep(`quarantine: 24h\nrecords:\n  - capsule: shey\n    retain: { max_age: 90d }\n`);
    expect(f.snapshotTree(outside)).toEqual(before);
    expect(fs.existsSync(path.join(home, 'conversations', 'shey', 'ctx_old', 'conversation.jsonl'))).toBe(true);
    expect(r.errors.map((e) => e.code)).toContain('symlink');
    expect(r.actions.filter((a) => a.kind === 'remove_record')).toEqual([]);
    // restore and ls do not follow it either
    await expect(
      restoreTarget(await config('quarantine: 24h\n'), log, { target: 'ctx_old', dryRun: false }),
    ).rejects.toMatchObject({ code: 'symlink' });
    expect(f.snapshotTree(outside)).toEqual(before);
  });

  it('a held session entry swapped for a symlink is not followed when it expires', async () => {
    session(40);
    const yaml = `quarantine: 1h\nsessions:\n  - root: ${root}\n    retain: { max_age: 30d }\n`;
    await sweep(yaml);
    const [name] = held(root);
    const outside = path.join(tmp, 'outside');
    fs.mkdirSync(outside);
    fs.writeFileSync(path.join(outside, 'canary'), 'keep me');
    f.rmrf(path.join(root, name!));
    fs.symlinkSync(outside, path.join(root, name!));
    const before = f.snapshotTree(outside);
    await sweep(yaml, { nowMs: Date.now() + 2 * HOUR });
    expect(f.snapshotTree(outside)).toEqual(before);
  });
});

describe('history --target', () => {
  it('shows the removal into the quarantine, the restore, and a later purge', async () => {
    const a = session(40);
    const b = session(39);
    const yaml = `quarantine: 1h\nsessions:\n  - root: ${root}\n    retain: { max_age: 30d }\n`;
    await sweep(yaml);
    await restoreTarget(await config(yaml), log, { target: a, dryRun: false });
    await sweep(yaml, { nowMs: Date.now() + 2 * HOUR }); // b's window has passed; a is back in place, protected: not removed again
    expect(fs.existsSync(path.join(root, a))).toBe(true);
    const readA = await readAuditHistory(home, { target: a });
    const docA = buildHistory(
      { home, auditRoot: readA.auditRoot, exists: readA.exists, problems: readA.problems, where: readA.where },
      readA.sweeps,
      { target: a },
    );
    expect(docA.matches?.map((m) => m.action)).toEqual(['removed', 'restored', 'protected']);
    const text = renderHistory(docA);
    expect(text).toContain('restored by murmur-gc restore');
    expect(text).toContain(`sessions root ${root}`);
    const readB = await readAuditHistory(home, { target: b });
    const docB = buildHistory(
      { home, auditRoot: readB.auditRoot, exists: readB.exists, problems: readB.problems, where: readB.where },
      readB.sweeps,
      { target: b },
    );
    expect(docB.matches?.map((m) => [m.action, m.reason])).toEqual([
      ['removed', 'max_age'],
      ['purged', 'expired'],
    ]);
    expect(renderHistory(docB)).toContain('deleted for good from the quarantine');
  });
});

describe('history tells held from removed', () => {
  it('a session the undo window holds is "held" (human and --json) until it is purged; one removed at once stays "removed"', async () => {
    const a = session(40);
    await sweep(`quarantine: 1h\nsessions:\n  - root: ${root}\n    retain: { max_age: 30d }\n`);
    const cfg = path.join(tmp, 'config.yaml');
    const human = f.runCli(['history', '--config', cfg, '--target', a], tmp);
    expect(human.status, human.stderr).toBe(0);
    expect(human.stdout).toMatch(
      new RegExp(`^  held by sweep ses_\\w+ .*\\n    held now, until .*: murmur-gc restore ${a} puts it back`, 'm'),
    );
    const doc = f.json<{
      matches: { action: string; state: string; held_until_ms: number }[];
      totals: { held: number };
    }>(f.runCli(['history', '--json', '--config', cfg, '--target', a], tmp));
    expect(doc.matches[0]).toMatchObject({ action: 'removed', state: 'held' });
    expect(doc.matches[0]!.held_until_ms).toBeGreaterThan(Date.now());
    expect(doc.totals.held).toBe(1);
    const list = f.runCli(['history', '--config', cfg], tmp).stdout;
    expect(list).toContain('sessions/max_age: 1 session taken — 1 held now (restorable)');

    const b = session(41);
    await sweep(`sessions:\n  - root: ${root}\n    retain: { max_age: 30d }\n`);
    const docB = f.json<{ matches: { state: string }[] }>(
      f.runCli(['history', '--json', '--config', cfg, '--target', b], tmp),
    );
    expect(docB.matches.map((m) => m.state)).toEqual(['removed']);
  });
});

describe('conversation rm / truncate with quarantine on', () => {
  it('rm holds the context and truncate holds the dropped lines; restore undoes both', async () => {
    const c = await config('quarantine: 24h\n');
    const { file: fa } = f.writeRecord(home, 'shey', 'ctx_rm', { capsule: 'shey', messages: 3 });
    const { file: fb } = f.writeRecord(home, 'shey', 'ctx_tr', { capsule: 'shey', messages: 8 });
    const a = fs.readFileSync(fa, 'utf8');
    const b = fs.readFileSync(fb, 'utf8');
    const rm = await removeContext(
      { config: c, log },
      { context: 'ctx_rm', record: undefined, dryRun: false, force: false },
    );
    expect(rm.held?.path).toMatch(/gc\/quarantine\/\d+\.[0-9a-f]+\/ctx$/);
    expect(renderRemoveText(rm)).toContain('murmur-gc restore ctx_rm puts it back');
    expect(fs.existsSync(fa)).toBe(false);
    const tr = await truncateContext(
      { config: c, log },
      { context: 'ctx_tr', record: undefined, dryRun: false, force: false, keep: 2 },
    );
    expect(tr.dropped).toBe(6);
    expect(tr.held?.path).toMatch(/record\.jsonl$/);
    expect(qitems()).toHaveLength(2);
    await restoreTarget(c, log, { target: 'ctx_rm', dryRun: false });
    await restoreTarget(c, log, { target: 'ctx_tr', dryRun: false });
    expect(fs.readFileSync(fa, 'utf8')).toBe(a);
    expect(fs.readFileSync(fb, 'utf8')).toBe(b);
    expect(qitems()).toEqual([]);
  });
});
