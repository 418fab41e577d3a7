// One JSON contract: every --json of murmur-gc's own commands, run through the built CLI on a real
// home, opens with {schema_version, command} and matches its schema (src/cli/json-schemas.ts);
// the committed docs/schemas/*.json are exactly what `npm run schemas` generates from them.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { commandOf } from '../../src/cli/json-contract.js';
import { SCHEMAS, jsonSchemaText } from '../../src/cli/json-schemas.js';
import * as f from '../helpers/fixtures.js';

let T: string;
let file: string;
let held: string;
const kept: string[] = [];
beforeAll(() => {
  T = f.tempDir('jsoncontract');
  fs.mkdirSync(path.join(T, '.murmur'), { mode: 0o700 });
  const app = path.join(T, 'app');
  for (let i = 0; i < 3; i++) {
    const id = f.idAt('ses_', Date.now() - (10 - i) * f.DAY);
    f.writeSession(app, { sessionId: id, end: true });
    if (i === 2) kept.push(id);
  }
  file = f.writeConfig(T, ['home: ./.murmur', 'quarantine: 1d', 'sessions:', '  - root: ./app', '    retain: { max_sessions: 1 }', ''].join('\n'));
  held = '';
});
afterAll(() => f.rmrf(T));

function check(name: keyof typeof SCHEMAS, args: string[], status: number): Record<string, unknown> {
  const r = f.runCli([...args, '--json', '--config', file], T);
  expect(r.status, r.stderr).toBe(status);
  const doc = f.json(r);
  expect(Object.keys(doc).slice(0, 2)).toEqual(['schema_version', 'command']);
  const parsed = (SCHEMAS[name] as z.ZodType).safeParse(doc);
  expect(parsed.success ? [] : parsed.error.issues, `${args.join(' ')}: ${r.stdout.slice(0, 400)}`).toEqual([]);
  return doc;
}

describe('the JSON contract', () => {
  it('the committed docs/schemas/*.json equal the schemas generated from the zod definitions', () => {
    const dir = path.join(f.REPO, 'docs', 'schemas');
    expect(fs.readdirSync(dir).sort()).toEqual(Object.keys(SCHEMAS).map((n) => `${n}.json`).sort());
    for (const name of Object.keys(SCHEMAS) as (keyof typeof SCHEMAS)[]) {
      expect(fs.readFileSync(path.join(dir, `${name}.json`), 'utf8'), `${name}.json is stale: run npm run schemas`).toBe(jsonSchemaText(name));
    }
  });

  it('every --json of the own commands is enveloped and matches its schema, on a real home', () => {
    expect(check('sweep', ['--dry-run'], 0)['command']).toBe('sweep');
    const real = check('sweep', [], 0);
    expect((real['actions'] as unknown[]).length).toBe(2);
    expect(check('config-check', ['config', 'check'], 0)['command']).toBe('config check');
    expect(check('config-check', ['config', 'check', '--plan'], 0)['plan']).toMatchObject({ home_exists: true, not_planned: null });
    check('status', ['status'], 0);
    check('history', ['history'], 0);
    const q = check('quarantine-ls', ['quarantine', 'ls'], 0);
    held = ((q['items'] as { target: string }[])[0] ?? { target: '' }).target;
    expect(held).toMatch(/^ses_/);
    check('restore', ['restore', held, '--dry-run'], 0);
    check('protect', ['protect', kept[0] ?? ''], 0);
    check('protection-ls', ['protection', 'ls'], 0);
    check('release', ['release', kept[0] ?? ''], 0);
    // An error, under --json, is the error document in the same envelope.
    const e = check('error', ['restore', 'ctx_nothing'], 1);
    expect(e).toMatchObject({ command: 'restore', error: { code: 'restore_not_held' } });
    // `conversation` keeps mur conversation's shape: no envelope.
    const c = f.runCli(['conversation', 'ls', '--json', '--config', file], T);
    expect(Object.keys(f.json(c))).not.toContain('schema_version');
  });

  it('the error document names the command even when an option value comes first', () => {
    expect(commandOf(['--config', 'c.yaml', 'conversation', 'rm', 'ctx_a', '--json'])).toBe('conversation');
    expect(commandOf(['--home', '/h', 'status', '--json'])).toBe('status');
    expect(commandOf(['restore', 'status', '--json'])).toBe('restore');
    expect(commandOf(['--dry-run', '--json'])).toBe('sweep');
  });
});
