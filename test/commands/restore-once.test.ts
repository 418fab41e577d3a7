// A restore is exactly-once, and holding dropped lines costs no second copy: a restore killed or
// failing at any step ends with its lines back once and its item gone (recovery completes it,
// audited) or its item held whole; an item left held after its lines came back is never put back
// again; a truncation killed under quarantine is restorable as soon as the record shows it
// landed; a truncation's hold keeps the record's old inode (cut to the dropped lines) instead of
// copying them, so it fits where the truncation fits, and ENOSPC names its path.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { removeContext, truncateContext } from '../../src/commands/conversation.js';
import { restoreTarget } from '../../src/commands/quarantine.js';
import { runSweep } from '../../src/sweep/pipeline.js';
import { loadConfig } from '../../src/config/load.js';
import type { GcConfig } from '../../src/config/types.js';
import { RefusalError } from '../../src/errors.js';
import { createLogger } from '../../src/log.js';
import * as f from '../helpers/fixtures.js';
import { requirement } from '../helpers/requirements.js';

let tmp: string;
let home: string;
const log = createLogger({ level: 'silent' });

beforeEach(() => {
  tmp = fs.realpathSync(f.tempDir('mgc-restore-once'));
  home = path.join(tmp, 'home');
  fs.mkdirSync(home, { mode: 0o700 });
});
afterEach(() => f.rmrf(tmp));

const QUARANTINE_ONLY = 'quarantine: 24h\n';
async function config(yaml = QUARANTINE_ONLY): Promise<GcConfig> {
  const configPath = f.writeConfig(tmp, `home: ${home}\n${yaml}`);
  return loadConfig({ configPath, env: { HOME: tmp }, cwd: tmp });
}
const qdir = () => path.join(home, 'gc', 'quarantine');
const qitems = () => (fs.existsSync(qdir()) ? fs.readdirSync(qdir()).filter((n) => /^\d+\./.test(n)) : []);
const ids = (file: string) =>
  f
    .readLines(file)
    .slice(1)
    .map((l) => (JSON.parse(l) as { id: string }).id);
const truncate = async (context: string, keep: number) =>
  truncateContext({ config: await config(), log }, { context, record: undefined, dryRun: false, force: false, keep });
const restore = async (context: string) => restoreTarget(await config(), log, { target: context, dryRun: false });
const cli = (args: string[], extra: Record<string, string> = {}) =>
  f.runCli([...args, '--config', path.join(tmp, 'config.yaml')], tmp, extra);
const sweep = async () => runSweep({ config: await config(), dryRun: false, log });
async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    return err instanceof RefusalError ? err.code : `not a refusal: ${String(err)}`;
  }
  return 'no refusal';
}
/** quarantine_restore lines over every audit trace of the home, for `target`. */
function restoreLines(target: string): Record<string, unknown>[] {
  const gc = path.join(home, 'gc');
  const out: Record<string, unknown>[] = [];
  for (const d of fs.readdirSync(gc).filter((n) => n.startsWith('ses_'))) {
    const t = path.join(gc, d, 'trace.jsonl');
    if (!fs.existsSync(t)) continue;
    for (const l of f.readLines(t)) {
      const o = JSON.parse(l) as Record<string, unknown>;
      if (o['event_type'] === 'quarantine_restore' && o['target'] === target) out.push(o);
    }
  }
  return out;
}

describe('restore is exactly-once', () => {
  it('an item left held after its lines came back is never put back again (no duplicate after the next truncation)', async () => {
    const { file } = f.writeRecord(home, 'shey', 'ctx_a', { capsule: 'shey', messages: 40 });
    const original = fs.readFileSync(file, 'utf8');
    await truncate('ctx_a', 10);
    const [item] = qitems();
    const kept = path.join(tmp, 'kept-item');
    fs.cpSync(path.join(qdir(), item!), kept, { recursive: true });
    await restore('ctx_a');
    expect(fs.readFileSync(file, 'utf8')).toBe(original);
    // What a failed removal (or a kill between the rewrite and the removal) used to leave behind.
    fs.cpSync(kept, path.join(qdir(), item!), { recursive: true });
    await truncate('ctx_a', 5);
    await restore('ctx_a');
    const got = ids(file);
    expect(new Set(got).size).toBe(got.length);
    expect(fs.readFileSync(file, 'utf8')).toBe(original);
  });

  it('a restore whose held item cannot be removed fails, and the next sweep removes it and audits the restore once', async () => {
    const { file } = f.writeRecord(home, 'shey', 'ctx_b', { capsule: 'shey', messages: 30 });
    const original = fs.readFileSync(file, 'utf8');
    await truncate('ctx_b', 10);
    const r = cli(['restore', 'ctx_b'], { MURMUR_GC_FAILPOINT: 'restore:remove_item:error' });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(qdir());
    expect(fs.readFileSync(file, 'utf8')).toBe(original);
    // Its lines are back: `quarantine ls` no longer lists it, though the next sweep removes it.
    expect(qitems()).toHaveLength(1);
    expect(cli(['quarantine', 'ls']).stdout).not.toContain('ctx_b');
    const s = await sweep();
    expect(s.errors).toEqual([]);
    expect(qitems()).toEqual([]);
    expect(restoreLines('ctx_b')).toEqual([expect.objectContaining({ held: 'truncation', messages_restored: 20 })]);
    expect(await refusal(restore('ctx_b'))).toBe('restore_not_held');
    expect(fs.readFileSync(file, 'utf8')).toBe(original);
  });

  for (const point of [
    'rewrite:after_rename',
    'restore:after_done',
    'remove:after_trash_rename',
    'restore:before_audit',
  ]) {
    it(`a restore killed at ${point} is completed by the next sweep: lines back once, item gone, audited once`, async () => {
      const { file } = f.writeRecord(home, 'shey', 'ctx_c', { capsule: 'shey', messages: 30 });
      const original = fs.readFileSync(file, 'utf8');
      await truncate('ctx_c', 10);
      const r = cli(['restore', 'ctx_c'], { MURMUR_GC_FAILPOINT: point });
      expect(r.status).toBe(null); // SIGKILLed
      expect(fs.readFileSync(file, 'utf8')).toBe(original);
      expect((await sweep()).errors).toEqual([]);
      expect(qitems()).toEqual([]);
      expect(restoreLines('ctx_c')).toHaveLength(1);
      expect(fs.readdirSync(path.dirname(file))).toEqual(['conversation.jsonl']); // no staged-rewrite temp
      expect(await refusal(restore('ctx_c'))).toBe('restore_not_held');
      expect(fs.readFileSync(file, 'utf8')).toBe(original);
    });
  }

  it('a restore killed before its rewrite commits leaves the item held whole; retried, it puts the lines back once', async () => {
    const { file } = f.writeRecord(home, 'shey', 'ctx_d', { capsule: 'shey', messages: 30 });
    const original = fs.readFileSync(file, 'utf8');
    await truncate('ctx_d', 10);
    const truncated = fs.readFileSync(file, 'utf8');
    expect(cli(['restore', 'ctx_d'], { MURMUR_GC_FAILPOINT: 'rewrite:before_commit' }).status).toBe(null);
    expect(fs.readFileSync(file, 'utf8')).toBe(truncated);
    const ls = cli(['quarantine', 'ls', '--json']);
    expect(ls.stdout).toContain('ctx_d');
    await restore('ctx_d');
    expect(fs.readFileSync(file, 'utf8')).toBe(original);
    expect(qitems()).toEqual([]);
    expect(restoreLines('ctx_d')).toHaveLength(1);
    expect(fs.readdirSync(path.dirname(file))).toEqual(['conversation.jsonl']);
  });

  it('a conversation truncate killed under quarantine right after its rename is restorable at once', async () => {
    const { file } = f.writeRecord(home, 'shey', 'ctx_e', { capsule: 'shey', messages: 30 });
    const original = fs.readFileSync(file, 'utf8');
    await config();
    const r = cli(['conversation', 'truncate', 'ctx_e', '--keep', '10'], {
      MURMUR_GC_FAILPOINT: 'rewrite:after_rename',
    });
    expect(r.status).toBe(null);
    expect(f.readLines(file)).toHaveLength(11);
    expect(cli(['quarantine', 'ls']).stdout).toContain('ctx_e');
    await restore('ctx_e');
    expect(fs.readFileSync(file, 'utf8')).toBe(original);
    expect(qitems()).toEqual([]);
  });
});

/**
 * A finished session older than its root's `max_age: 30d`, held by a sweep, then a restore of it
 * SIGKILLed right after its rename was logged done (the session is back, nothing completed it).
 */
async function sessionRestoreKilledAfterRename(): Promise<{ root: string; id: string; yaml: string }> {
  const root = path.join(tmp, 'app', '.murmur');
  const startMs = Date.now() - 40 * f.DAY;
  const id = f.idAt('ses_', startMs);
  f.writeSession(root, { sessionId: id, startMs, end: true });
  const yaml = `quarantine: 24h\nsessions:\n  - root: ${root}\n    retain: { max_age: 30d }\n`;
  await runSweep({ config: await config(yaml), dryRun: false, log });
  expect(fs.existsSync(path.join(root, id))).toBe(false);
  expect(cli(['restore', id], { MURMUR_GC_FAILPOINT: 'restore:after_done' }).status).toBe(null);
  expect(fs.existsSync(path.join(root, id))).toBe(true);
  return { root, id, yaml };
}

describe('a held context or session restore is exactly-once too', () => {
  it('a context restore killed after its rename is completed by the next sweep, audited once', async () => {
    const { file } = f.writeRecord(home, 'shey', 'ctx_h', { capsule: 'shey', messages: 5 });
    const before = fs.readFileSync(file, 'utf8');
    await removeContext(
      { config: await config(), log },
      { context: 'ctx_h', record: undefined, dryRun: false, force: false },
    );
    expect(fs.existsSync(file)).toBe(false);
    expect(cli(['restore', 'ctx_h'], { MURMUR_GC_FAILPOINT: 'restore:after_done' }).status).toBe(null);
    expect(fs.readFileSync(file, 'utf8')).toBe(before);
    expect(cli(['quarantine', 'ls']).stdout).not.toContain('ctx_h');
    expect((await sweep()).errors).toEqual([]);
    expect(qitems()).toEqual([]);
    expect(restoreLines('ctx_h')).toEqual([expect.objectContaining({ held: 'context' })]);
  });

  it('a session restore killed after its rename is audited once by the retried restore', async () => {
    const { id, yaml } = await sessionRestoreKilledAfterRename();
    expect(restoreLines(id)).toEqual([]);
    // A retried restore completes it (so would the next sweep: below).
    expect(await refusal(restoreTarget(await config(yaml), log, { target: id, dryRun: false }))).toBe(
      'restore_not_held',
    );
    expect(restoreLines(id)).toEqual([expect.objectContaining({ held: 'session' })]);
  });
});

describe('what an interrupted restore put back is protected by the run that completes it', () => {
  it('a session restore killed after its rename: the next sweep completes it, protects it and does not remove it again', async () => {
    const { root, id, yaml } = await sessionRestoreKilledAfterRename();
    const next = await runSweep({ config: await config(yaml), dryRun: false, log });
    expect(next.errors).toEqual([]);
    expect(fs.existsSync(path.join(root, id))).toBe(true);
    expect(next.actions.filter((a) => a.kind === 'remove_session')).toEqual([]);
    expect(next.skipped).toContainEqual(expect.objectContaining({ code: 'protected', target: `${root}/${id}` }));
    expect(restoreLines(id)).toEqual([expect.objectContaining({ held: 'session' })]);
  });

  it('a context restore killed after its rename: the retried restore completes it and protects it', async () => {
    const { file } = f.writeRecord(home, 'shey', 'ctx_p', {
      capsule: 'shey',
      messages: 5,
      mtimeMs: Date.now() - 100 * f.DAY,
    });
    const yaml = `quarantine: 24h\nrecords:\n  - capsule: shey\n    retain: { max_age: 90d }\n`;
    await runSweep({ config: await config(yaml), dryRun: false, log });
    expect(fs.existsSync(file)).toBe(false);
    expect(cli(['restore', 'ctx_p'], { MURMUR_GC_FAILPOINT: 'restore:after_done' }).status).toBe(null);
    expect(await refusal(restoreTarget(await config(yaml), log, { target: 'ctx_p', dryRun: false }))).toBe(
      'restore_not_held',
    );
    const next = await runSweep({ config: await config(yaml), dryRun: false, log });
    expect(fs.existsSync(file)).toBe(true);
    expect(next.actions.filter((a) => a.kind === 'remove_record')).toEqual([]);
    expect(next.skipped).toContainEqual(expect.objectContaining({ code: 'protected' }));
  });
});

describe('holding dropped lines costs no second copy', () => {
  it('keeps the record’s old inode, cut to the header and the dropped lines, and restores from it', async () => {
    const { file } = f.writeRecord(home, 'shey', 'ctx_f', { capsule: 'shey', messages: 50 });
    const original = fs.readFileSync(file, 'utf8');
    const ino = fs.statSync(file).ino;
    const tr = await truncate('ctx_f', 10);
    expect(tr.held?.path).toMatch(/record\.jsonl$/);
    const held = tr.held!.path;
    expect(fs.statSync(held).ino).toBe(ino);
    expect(fs.statSync(held).nlink).toBe(1);
    const lines = original.split('\n');
    const droppedEnd = lines.slice(0, 41).join('\n').length + 1;
    expect(fs.statSync(held).size).toBe(droppedEnd);
    const meta = JSON.parse(fs.readFileSync(path.join(path.dirname(held), 'item.json'), 'utf8')) as {
      range: { from: number; to: number };
    };
    expect(meta.range).toEqual({ from: lines[0]!.length + 1, to: droppedEnd });
    await restore('ctx_f');
    expect(fs.readFileSync(file, 'utf8')).toBe(original);
  });

  it('never cuts an old inode that has another link (a backup made with ln keeps every byte)', async () => {
    const { file } = f.writeRecord(home, 'shey', 'ctx_l', { capsule: 'shey', messages: 30 });
    const original = fs.readFileSync(file, 'utf8');
    const backup = path.join(tmp, 'backup.jsonl');
    fs.linkSync(file, backup);
    const tr = await truncate('ctx_l', 10);
    expect(tr.dropped).toBe(20);
    expect(fs.readFileSync(backup, 'utf8')).toBe(original);
    await restore('ctx_l');
    expect(fs.readFileSync(file, 'utf8')).toBe(original);
  });

  it('items held as a copy (dropped.jsonl, the earlier layout) still restore and purge', async () => {
    const { file } = f.writeRecord(home, 'shey', 'ctx_g', { capsule: 'shey', messages: 20 });
    const original = fs.readFileSync(file, 'utf8');
    const tr = await truncate('ctx_g', 5);
    const dir = path.dirname(tr.held!.path);
    const meta = JSON.parse(fs.readFileSync(path.join(dir, 'item.json'), 'utf8')) as {
      range?: { from: number; to: number };
    };
    const bytes = fs.readFileSync(path.join(dir, 'record.jsonl')).subarray(meta.range!.from, meta.range!.to);
    fs.writeFileSync(path.join(dir, 'dropped.jsonl'), bytes, { mode: 0o600 });
    fs.rmSync(path.join(dir, 'record.jsonl'));
    delete meta.range;
    fs.writeFileSync(path.join(dir, 'item.json'), JSON.stringify(meta) + '\n');
    expect(cli(['quarantine', 'ls']).stdout).toContain('ctx_g');
    await restore('ctx_g');
    expect(fs.readFileSync(file, 'utf8')).toBe(original);
    expect(qitems()).toEqual([]);
  });
});

// A filesystem without room for a second copy needs a tmpfs mount: root only (CI runs as root).
const tmpfs = requirement('quarantine on a small filesystem (tmpfs)', ['root', 'tmpfs', 'cmd:mount', 'cmd:umount']);

describe.runIf(tmpfs.run)('on a filesystem without room for a second copy', () => {
  function bigRecord(dir: string, messages: number): string {
    const file = path.join(dir, 'conversation.jsonl');
    const pad = 'p'.repeat(900);
    let text = '{"type":"murmur.record","capsule":"shey","created_ms":1756400000000}\n';
    for (let i = 0; i < messages; i++) text += f.messageLine(f.idAt('msg_', 1756400000000 + i), 'user', pad) + '\n';
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    fs.writeFileSync(file, text, { mode: 0o600 });
    return file;
  }

  it('a truncation under quarantine fits where the truncation fits; ENOSPC names its path', async () => {
    tmpfs.check();
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', home]);
    try {
      // 5 MiB record on an 8 MiB filesystem: a copy of the 4.5 MiB it drops does not fit.
      bigRecord(path.join(home, 'conversations', 'shey', 'ctx_big'), 5_000);
      const tr = await truncate('ctx_big', 500);
      expect(tr.dropped).toBe(4_500);
      expect(fs.statfsSync(home).bfree).toBeGreaterThan(0);
      // 2.5 MiB more, kept at 90 %: the new file itself (2.2 MiB beside 2.5 MiB) does not fit.
      const two = bigRecord(path.join(home, 'conversations', 'shey', 'ctx_two'), 2_500);
      const before = fs.readFileSync(two, 'utf8');
      let err: unknown;
      try {
        await truncate('ctx_two', 2_250);
      } catch (e) {
        err = e;
      }
      expect(String((err as Error | undefined)?.message)).toMatch(
        /\/conversations\/shey\/ctx_two\/\.conversation\.jsonl\.\d+\.[0-9a-f]+\.tmp: ENOSPC/,
      );
      expect(fs.readFileSync(two, 'utf8')).toBe(before);
      expect(fs.readdirSync(path.dirname(two))).toEqual(['conversation.jsonl']);
    } finally {
      execFileSync('umount', [home]);
    }
  });
});
