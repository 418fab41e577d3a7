// One JSON contract: every --json of murmur-gc's own commands, run through the built CLI on a real
// home, opens with {schema_version, command} and matches its schema (src/schema/json-schemas.ts);
// the committed docs/schemas/*.json are exactly what `npm run schemas` generates from them.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { commandOf } from '../../src/cli/json-contract.js';
import { SCHEMAS, jsonSchemaText } from '../../src/schema/json-schemas.js';
import * as f from '../helpers/fixtures.js';

let T: string;
let file: string;
const kept: string[] = [];
/** Every document printed, by schema name, for the nested-member checks. */
const docs: { name: keyof typeof SCHEMAS; doc: Record<string, unknown> }[] = [];
beforeAll(() => {
  T = f.tempDir('jsoncontract');
  const home = path.join(T, '.murmur');
  fs.mkdirSync(home, { mode: 0o700 });
  // Four finished sessions (max_sessions 1 holds three), and a dead one with lost background work.
  const app = path.join(T, 'app');
  for (let i = 0; i < 4; i++) {
    const id = f.idAt('ses_', Date.now() - (10 - i) * f.DAY);
    f.writeSession(app, { sessionId: id, end: true });
    if (i === 3) kept.push(id);
  }
  f.writeSession(path.join(T, 'bot'), {
    sessionId: f.idAt('ses_', Date.now() - 5 * f.DAY),
    end: false,
    detached: [{ workId: f.idAt('wrk_', Date.now() - 5 * f.DAY) }],
  });
  // A record over max_messages (its dropped lines held), one with a loose mode (chmod), and a
  // store over its max_bytes (the budget removes its oldest record, never held).
  f.writeRecord(home, 'shey', 'ctx_long', { capsule: 'shey', messages: 30 });
  f.writeRecord(home, 'shey', 'ctx_loose', { capsule: 'shey', messages: 3, mode: 0o644 });
  f.writeRecord(home, 'ops', 'ctx_old', { capsule: 'ops', messages: 200, mtimeMs: Date.now() - 20 * f.DAY });
  f.writeRecord(home, 'ops', 'ctx_new', { capsule: 'ops', messages: 5 });
  file = f.writeConfig(
    T,
    [
      'home: ./.murmur',
      'quarantine: 1d',
      'sessions:',
      '  - root: ./app',
      '    retain: { max_sessions: 1 }',
      '  - root: ./bot',
      'records:',
      '  - capsule: shey',
      '    retain: { max_messages: 10 }',
      '  - capsule: ops',
      '    max_bytes: 16K',
      '',
    ].join('\n'),
  );
});
afterAll(() => f.rmrf(T));

function check(name: keyof typeof SCHEMAS, args: string[], status: number): Record<string, unknown> {
  const r = f.runCli([...args, '--json', '--config', file], T);
  expect(r.status, r.stderr).toBe(status);
  const doc = f.json(r);
  expect(Object.keys(doc).slice(0, 2)).toEqual(['schema_version', 'command']);
  const parsed = (SCHEMAS[name] as z.ZodType).safeParse(doc);
  expect(parsed.success ? [] : parsed.error.issues, `${args.join(' ')}: ${r.stdout.slice(0, 400)}`).toEqual([]);
  docs.push({ name, doc });
  return doc;
}

/** Members whose keys are data (a code, an action kind, a store, a target): any key is valid there. */
const MAPS = new Set([
  'skipped_by_code',
  'errors_by_code',
  'counts',
  'actions_by_store',
  'messages_dropped_by_target',
  'held_until_by_target',
  'parent_session_by_target',
  'by_capsule',
]);
const isMap = (trail: string[]): boolean => {
  const [last, prev] = [trail.at(-1) ?? '', trail.at(-2) ?? ''];
  if (MAPS.has(last) || MAPS.has(prev)) return true;
  // metrics.last_sweep.actions (kind -> store -> count); budget.unmet[].held (code -> items, bytes)
  if ((last === 'actions' && prev === 'last_sweep') || (trail.at(-3) === 'last_sweep' && prev === 'actions'))
    return true;
  return last === 'held' && trail.includes('unmet');
};

/** The trail of every object nested in `v` (not `v` itself), array positions as '[]'. */
function nestedObjects(v: unknown, trail: string[] = []): { trail: string[]; obj: Record<string, unknown> }[] {
  const out: { trail: string[]; obj: Record<string, unknown> }[] = [];
  if (Array.isArray(v)) for (const x of v) out.push(...nestedObjects(x, [...trail, '[]']));
  else if (typeof v === 'object' && v !== null) {
    if (trail.length > 0) out.push({ trail, obj: v as Record<string, unknown> });
    for (const [k, x] of Object.entries(v)) out.push(...nestedObjects(x, [...trail, k]));
  }
  return out;
}

describe('the JSON contract', () => {
  it('the committed docs/schemas/*.json equal the schemas generated from the zod definitions', () => {
    const dir = path.join(f.REPO, 'docs', 'schemas');
    expect(fs.readdirSync(dir).sort()).toEqual(
      Object.keys(SCHEMAS)
        .map((n) => `${n}.json`)
        .sort(),
    );
    for (const name of Object.keys(SCHEMAS) as (keyof typeof SCHEMAS)[]) {
      expect(
        fs.readFileSync(path.join(dir, `${name}.json`), 'utf8'),
        `${name}.json is stale: run npm run schemas`,
      ).toBe(jsonSchemaText(name));
    }
  });

  it('every --json of the own commands is enveloped and matches its schema, on a real home', () => {
    expect(check('sweep', ['--dry-run'], 0)['command']).toBe('sweep');
    expect(check('sweep', ['--dry-run', '--at', '+7d'], 0)['forecast_ms']).toBeGreaterThan(Date.now() + 6 * 86_400_000);
    const real = check('sweep', [], 0);
    const kinds = (real['actions'] as { kind: string }[]).map((a) => a.kind);
    expect(new Set(kinds)).toEqual(
      new Set(['remove_session', 'truncate_record', 'shell_lost', 'remove_record', 'chmod']),
    );
    // with the undo window, what max_bytes takes is held
    expect((real['budget'] as { stores: unknown[] }).stores).toContainEqual(
      expect.objectContaining({ label: 'record store ops', held: 1, removed: 0 }),
    );
    expect(real['quarantine']).toMatchObject({ held: 5 });
    expect(check('config-check', ['config', 'check'], 0)['command']).toBe('config check');
    expect(check('config-check', ['config', 'check', '--plan'], 0)['plan']).toMatchObject({
      home_exists: true,
      not_planned: null,
    });
    const q = check('quarantine-ls', ['quarantine', 'ls'], 0);
    const held = q['items'] as { held_kind: string; target: string; messages_dropped: number | null }[];
    expect(held.map((i) => i.held_kind).sort()).toEqual(['context', 'session', 'session', 'session', 'truncation']);
    expect(held.find((i) => i.held_kind === 'truncation')).toMatchObject({ target: 'ctx_long', messages_dropped: 20 });
    const session = held.find((i) => i.held_kind === 'session')!.target;
    const filtered = check('quarantine-ls', ['quarantine', 'ls', '--reason', 'max_messages', '--before', '+2d'], 0);
    expect(filtered).toMatchObject({
      items: [{ target: 'ctx_long', audit: real['audit'] }],
      totals: { items: 1 },
      filter: { reason: 'max_messages', root: null },
    });
    expect(check('restore', ['restore', '--sweep', real['audit'] as string, '--dry-run'], 0)).toMatchObject({
      sweep: real['audit'],
      held: 5,
      not_restored: [],
    });
    check('restore', ['restore', session, '--dry-run'], 0);
    expect(check('restore', ['restore', 'ctx_long'], 0)).toMatchObject({
      restored: [{ held_kind: 'truncation', messages_restored: 20 }],
      protection: { item: { origin: 'shey' } },
    });
    check('protect', ['protect', kept[0]!], 0);
    check('protection-ls', ['protection', 'ls'], 0);
    check('release', ['release', kept[0]!], 0);
    expect(check('explain', ['explain', kept[0]!], 0)).toMatchObject({
      command: 'explain',
      item: { kind: 'session' },
      policy: { rank: { rank: 1 } },
    });
    check('explain', ['explain', 'ctx_new'], 0);
    check('explain', ['explain', session], 0);
    expect(check('error', ['explain', 'ses_'], 2)).toMatchObject({
      command: 'explain',
      error: { code: 'target_ambiguous' },
    });
    check('sweep', [], 0);
    const st = check('status', ['status'], 0);
    expect(st['stores']).toMatchObject({ quarantine: { items: 4 } });
    expect((st['metrics'] as { last_sweep: unknown }).last_sweep).not.toBeNull();
    const du = check('du', ['du'], 0);
    expect(du).toMatchObject({ home_exists: true, inventory: { traces_read: 0 }, problems: [] });
    expect((du['roots'] as { root: string }[]).map((r) => r.root).sort()).toEqual([
      path.join(T, 'app'),
      path.join(T, 'bot'),
    ]);
    const h = check('history', ['history'], 0);
    expect((h['sweeps'] as unknown[]).length).toBeGreaterThanOrEqual(5);
    const m = check('history', ['history', '--target', session.slice(0, 30)], 0);
    expect(m).toMatchObject({
      target: session,
      matches: [{ action: 'removed', state: 'held', origin: path.join(T, 'app') }],
    });
    // An error, under --json, is the error document in the same envelope.
    const e = check('error', ['restore', 'ctx_nothing'], 1);
    expect(e).toMatchObject({ command: 'restore', error: { code: 'restore_not_held' } });
    // `conversation` keeps mur conversation's shape: no envelope.
    const c = f.runCli(['conversation', 'ls', '--json', '--config', file], T);
    expect(Object.keys(f.json(c))).not.toContain('schema_version');
  });

  it('a dry run with nothing to sweep (no ~/.murmur, no configuration) is enveloped and matches its schema', () => {
    const bare = f.tempDir('mgc-json-bare');
    try {
      const r = f.runCli(['--dry-run', '--json'], bare);
      expect(r.status, r.stderr).toBe(0);
      const doc = f.json(r);
      expect(Object.keys(doc).slice(0, 2)).toEqual(['schema_version', 'command']);
      expect(doc).toMatchObject({ command: 'sweep', dry_run: true, home_exists: false, actions: [] });
      const parsed = SCHEMAS.sweep.safeParse(doc);
      expect(parsed.success ? [] : parsed.error.issues).toEqual([]);
      expect(fs.readdirSync(bare).filter((n) => n !== '.config')).toEqual([]);
    } finally {
      f.rmrf(bare);
    }
  });

  it('a member a schema does not list fails it, at any depth (every nested object is closed)', () => {
    expect(docs.length).toBeGreaterThan(10);
    let tried = 0;
    for (const { name, doc } of docs) {
      for (const { trail, obj } of nestedObjects(doc)) {
        if (isMap(trail)) continue;
        obj['unlisted_member'] = 1;
        const ok = (SCHEMAS[name] as z.ZodType).safeParse(doc).success;
        delete obj['unlisted_member'];
        expect(ok, `${name}: ${trail.join('.')} took an unlisted member`).toBe(false);
        tried++;
      }
    }
    // budget, stores, metrics, each history sweep and match, the actions: all of them were tried.
    expect(tried).toBeGreaterThan(100);
  });

  it('the error document names the command even when an option value comes first', () => {
    expect(commandOf(['--config', 'c.yaml', 'conversation', 'rm', 'ctx_a', '--json'])).toBe('conversation');
    expect(commandOf(['--home', '/h', 'status', '--json'])).toBe('status');
    expect(commandOf(['restore', 'status', '--json'])).toBe('restore');
    expect(commandOf(['--dry-run', '--json'])).toBe('sweep');
  });
});
