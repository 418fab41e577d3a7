// The trace/record-count cache (<home>/gc/trace-cache.json) is only ever a cache: a corrupt, foreign
// or stale cache — or one corrupt entry of it — is discarded and rebuilt from the files, never
// trusted over them; an unchanged cache is not rewritten. Through the built CLI.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as f from '../helpers/fixtures.js';

interface Report {
  actions: Record<string, unknown>[];
  errors: unknown[];
  inventory: { traces_read: number; traces_cached: number; records_counted: number; records_count_cached: number };
}

let T: string;
let home: string;
let root: string;
let cfg: string;
let cacheFile: string;
const now = Date.now();

beforeEach(() => {
  T = f.tempDir('cache');
  home = path.join(T, '.murmur');
  root = path.join(T, 'app', '.murmur');
  fs.mkdirSync(home, { mode: 0o700 });
  cacheFile = path.join(home, 'gc', 'trace-cache.json');
  for (let i = 0; i < 4; i++)
    f.writeSession(root, { sessionId: f.idAt('ses_', now - (i + 2) * f.DAY), end: true, contextId: `ctx_${i}` });
  f.writeRecord(home, 'shey', 'ctx_a', { capsule: 'shey', messages: 5 });
  f.writeRecord(home, 'shey', 'ctx_b', { capsule: 'shey', messages: 3 });
  cfg = f.writeConfig(
    T,
    `sessions:\n  - root: ${root}\nrecords:\n  - capsule: shey\n    retain: { max_messages: 5 }\n`,
  );
});
afterEach(() => f.rmrf(T));

const sweep = (...extra: string[]) => {
  const r = f.json<Report>(f.runCli(['--json', '--config', cfg, ...extra], T));
  expect(r.errors).toEqual([]);
  return r;
};
const truncations = (r: Report) =>
  r.actions.filter((a) => a['kind'] === 'truncate_record').map((a) => [a['target'], a['messages_dropped'], a['kept']]);

describe('the trace and count cache', () => {
  it('a garbage, truncated or older-format cache is discarded and rebuilt; the plan is the same', () => {
    const dry = sweep('--dry-run');
    expect(dry.inventory).toMatchObject({ traces_read: 4, records_counted: 2 });
    expect(dry.actions).toEqual([]);
    sweep();
    const warm = sweep('--dry-run');
    expect(warm.inventory).toMatchObject({
      traces_read: 0,
      traces_cached: 4,
      records_counted: 0,
      records_count_cached: 2,
    });
    const good = fs.readFileSync(cacheFile, 'utf8');
    for (const bad of [
      '\u0000garbage{',
      good.slice(0, Math.floor(good.length / 2)),
      JSON.stringify({ version: 2, entries: {}, records: {} }),
    ]) {
      fs.writeFileSync(cacheFile, bad);
      const r = sweep('--dry-run');
      // a torn cache keeps its intact lines; nothing is served that was not written whole
      expect(r.inventory.traces_read + r.inventory.traces_cached).toBe(4);
      expect(r.inventory.records_counted + r.inventory.records_count_cached).toBe(2);
      expect(r.actions).toEqual([]);
    }
    // the next real sweep rewrites it whole
    sweep();
    expect(sweep('--dry-run').inventory).toMatchObject({ traces_read: 0, records_counted: 0 });
  }, 180_000);

  it('a cache of the previous format (3) is not trusted: an owner it read from a header repeating a field is not used', () => {
    // Format 3 read a header repeating a field last-wins and stored the owner it found; such a
    // record has no owner, so an entry naming one must not make a sweep truncate it.
    const dup = f.writeRecord(home, 'shey', 'ctx_dup', { messages: 4 });
    fs.writeFileSync(
      dup.file,
      '{"type":"murmur.record","capsule":"a","capsule":"shey","created_ms":5}\n' + fs.readFileSync(dup.file, 'utf8'),
    );
    const before = fs.readFileSync(dup.file);
    const st = fs.statSync(dup.file);
    sweep();
    const lines = fs.readFileSync(cacheFile, 'utf8').split('\n');
    const r = lines.findIndex((l) => l.startsWith('R\t') && l.includes('ctx_dup'));
    expect(r).toBeGreaterThan(0);
    expect(lines[r]).toContain(',null,-1,');
    lines[0] = 'murmur-gc cache 3';
    lines[r] = lines[r]!.replace(
      ',null,-1,',
      `,${JSON.stringify('{"type":"murmur.record","capsule":"shey","created_ms":5}')},4,`,
    );
    fs.writeFileSync(cacheFile, lines.join('\n'));
    fs.writeFileSync(cfg, `records:\n  - capsule: shey\n    retain: { max_messages: 1 }\n`);
    const after = sweep();
    expect(
      truncations(after)
        .map((t) => t[0])
        .sort(),
    ).toEqual(['ctx_a', 'ctx_b']);
    expect(fs.readFileSync(dup.file).equals(before)).toBe(true);
    expect(fs.statSync(dup.file).mtimeMs).toBe(st.mtimeMs);
  });

  it('an entry that does not decode to well-typed values is a miss: that file alone is read again', () => {
    sweep();
    const lines = fs.readFileSync(cacheFile, 'utf8').split('\n');
    const t = lines.findIndex((l) => l.startsWith('T\t'));
    const r = lines.findIndex((l) => l.startsWith('R\t') && l.includes('ctx_b'));
    expect(t).toBeGreaterThan(0);
    expect(r).toBeGreaterThan(0);
    lines[t] = lines[t]!.replace(/,1,1,0,/, ',"yes",1,0,');
    // a cached header the runtime would not accept (capsule not a string) is not trusted either
    lines[r] = lines[r]!.replace('\\"capsule\\":\\"shey\\"', '\\"capsule\\":7');
    expect(lines[r]).toContain('\\"capsule\\":7');
    fs.writeFileSync(cacheFile, lines.join('\n'));
    const again = sweep('--dry-run');
    expect(again.inventory).toMatchObject({
      traces_read: 1,
      traces_cached: 3,
      records_counted: 1,
      records_count_cached: 1,
    });
  });

  it('a record changed since it was counted is counted again, never served from the cache', () => {
    sweep();
    const file = path.join(home, 'conversations', 'shey', 'ctx_b', 'conversation.jsonl');
    const st = fs.statSync(file);
    // three more messages, same mtime as before: the size differs, so the cached count is stale
    fs.appendFileSync(file, [0, 1, 2].map((i) => f.messageLine(f.idAt('msg_', now + i), 'user', 'x') + '\n').join(''));
    fs.utimesSync(file, st.atime, st.mtime);
    const r = sweep('--dry-run');
    expect(r.inventory).toMatchObject({ records_counted: 1, records_count_cached: 1 });
    expect(truncations(r)).toEqual([['ctx_b', 1, 5]]);
  });

  it('a warm sweep sees what changed in place of cached entries: links are reported, never followed; a temp file is debris', () => {
    sweep();
    // A copy of a cached session and of a cached record elsewhere, each swapped in as a link
    // under the cached name (the files keep their identity: hard links, same size and mtime).
    const ses = fs.readdirSync(root).find((n) => n.startsWith('ses_'))!;
    const outside = path.join(T, 'outside');
    fs.mkdirSync(path.join(outside, 'ses'), { recursive: true });
    fs.mkdirSync(path.join(outside, 'ctx'), { recursive: true });
    fs.linkSync(path.join(root, ses, 'trace.jsonl'), path.join(outside, 'ses', 'trace.jsonl'));
    fs.renameSync(path.join(root, ses), path.join(T, 'moved-ses'));
    fs.symlinkSync(path.join(outside, 'ses'), path.join(root, ses));
    const ctxA = path.join(home, 'conversations', 'shey', 'ctx_a');
    fs.linkSync(path.join(ctxA, 'conversation.jsonl'), path.join(outside, 'ctx', 'conversation.jsonl'));
    fs.renameSync(ctxA, path.join(T, 'moved-ctx'));
    fs.symlinkSync(path.join(outside, 'ctx'), ctxA);
    // a rewrite's temp file left in a cached, unchanged context
    const tmp = path.join(home, 'conversations', 'shey', 'ctx_b', '.conversation.jsonl.4000001.ab12.tmp');
    fs.writeFileSync(tmp, 'partial');
    const r = f.json<Report & { skipped: { target: string; code: string }[] }>(
      f.runCli(['--json', '--dry-run', '--config', cfg], T),
    );
    expect(r.skipped).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ target: path.join(root, ses), code: 'symlink' }),
        expect.objectContaining({ target: ctxA, code: 'symlink' }),
      ]),
    );
    expect(r.inventory).toMatchObject({ traces_read: 0, traces_cached: 3, records_count_cached: 1 });
    expect(r.actions).toContainEqual(expect.objectContaining({ kind: 'remove_debris', path: tmp }));
    // and the real sweep acts on nothing through either link
    const real = f.json<Report>(f.runCli(['--json', '--config', cfg], T));
    expect(real.actions.filter((a) => JSON.stringify(a).includes('ctx_a') || JSON.stringify(a).includes(ses))).toEqual(
      [],
    );
    expect(fs.readdirSync(path.join(outside, 'ses'))).toEqual(['trace.jsonl']);
    expect(fs.readdirSync(path.join(outside, 'ctx'))).toEqual(['conversation.jsonl']);
  });

  it('an unchanged cache is not rewritten; a change rewrites it', () => {
    sweep();
    const before = fs.statSync(cacheFile);
    sweep();
    const after = fs.statSync(cacheFile);
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
    f.writeSession(root, { sessionId: f.idAt('ses_', now - 9 * f.DAY), end: true });
    expect(sweep().inventory).toMatchObject({ traces_read: 1, traces_cached: 4 });
    expect(fs.statSync(cacheFile).ino).not.toBe(before.ino);
    expect(sweep().inventory).toMatchObject({ traces_read: 0, traces_cached: 5 });
  });
});
