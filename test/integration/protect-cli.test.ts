// The protection list through the built CLI: what an operator reads after `restore`, the
// protect / release / protection ls commands (text, --json, exit codes and refusal codes), and a
// sweep's report of protected items (once each, counted in the summary).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as f from '../helpers/fixtures.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Rec = Record<string, any>;

let T: string;
let home: string;
let root: string;
let cfg: string;

beforeEach(() => {
  T = fs.realpathSync(f.tempDir('protect-cli'));
  home = path.join(T, '.murmur');
  root = path.join(T, 'app', '.murmur');
  fs.mkdirSync(home, { mode: 0o700 });
  fs.mkdirSync(root, { recursive: true });
  cfg = f.writeConfig(
    T,
    `home: ${home}\nquarantine: 24h\nsessions:\n  - root: ${root}\n    retain: { max_age: 30d }\nrecords:\n  - capsule: shey\n    retain: { max_messages: 4 }\n`,
  );
});
afterEach(() => f.rmrf(T));

const cli = (...args: string[]) => f.runCli([...args, '--config', cfg], T);

function session(daysAgo: number): string {
  const startMs = Date.now() - daysAgo * f.DAY;
  const id = f.idAt('ses_', startMs);
  f.writeSession(root, { sessionId: id, startMs, end: true });
  return id;
}

describe('restore, then the next sweep', () => {
  it('restore says it protected the item, that the policy still condemns it, and that mur prunes at launch; the sweep skips it once', () => {
    const old = session(40);
    expect(cli().status).toBe(0);
    expect(fs.existsSync(path.join(root, old))).toBe(false);
    const r = cli('restore', old);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(`protected session ${old}`);
    expect(r.stdout).toContain(`until murmur-gc release ${old}`);
    expect(r.stdout).toMatch(/STILL CONDEMNED by the current policy \(max_age; sessions root .*: max_age 30d\)/);
    expect(r.stdout).toContain(
      "mur itself prunes its sessions by its manifest's trace.retain each time it launches, which is outside murmur-gc's reach",
    );
    const sweep = cli();
    expect(sweep.status).toBe(0);
    expect(fs.existsSync(path.join(root, old))).toBe(true);
    expect(sweep.stdout).toContain('kept although a rule condemns them: protected 1');
    const v = cli('-v');
    expect(v.stdout.split('\n').filter((l) => l.includes('[protected]'))).toHaveLength(1);
    const j = f.json<Rec>(cli('--dry-run', '--json'));
    expect(j['skipped']).toEqual([expect.objectContaining({ code: 'protected', target: `${root}/${old}` })]);
  });

  it('a restored truncation: the header, lines and protection survive the next sweep', () => {
    const { file } = f.writeRecord(home, 'shey', 'ctx_a', { capsule: 'shey', messages: 10 });
    const original = fs.readFileSync(file, 'utf8');
    expect(cli().status).toBe(0);
    const r = cli('restore', 'ctx_a', '--json');
    expect(r.status).toBe(0);
    expect(f.json<Rec>(r)['protection']).toMatchObject({
      added: true,
      item: { kind: 'context', target: 'ctx_a', origin: 'shey', by: 'restore' },
      judgement: { condemned: 'max_messages' },
    });
    expect(fs.readFileSync(file, 'utf8')).toBe(original);
    expect(cli().status).toBe(0);
    expect(fs.readFileSync(file, 'utf8')).toBe(original);
  });
});

describe('protect, release, protection ls', () => {
  it('--json documents, exit codes and refusal codes', () => {
    const old = session(40);
    const p = cli('protect', old, '--note', 'keep', '--json');
    expect(p.status).toBe(0);
    expect(f.json<Rec>(p)).toMatchObject({
      added: true,
      present: true,
      item: { kind: 'session', target: old, origin: root, note: 'keep' },
      judgement: { condemned: 'max_age' },
    });
    const ls = cli('protection', 'ls', '--json');
    expect(ls.status).toBe(0);
    expect(f.json<Rec>(ls)).toMatchObject({ unreadable: null, items: [{ target: old, present: true, by: 'protect' }] });
    expect(cli('status').stdout).toMatch(/protected\s+1 item/);
    const missing = cli('protect', 'ctx_nowhere', '--json');
    expect(missing.status).toBe(1);
    expect(f.json<Rec>(missing)['error']).toMatchObject({ code: 'protect_not_found' });
    const rel = cli('release', old);
    expect(rel.status).toBe(0);
    expect(rel.stdout).toContain('the next sweep removes it');
    const again = cli('release', old);
    expect(again.status).toBe(1);
    expect(again.stderr).toContain('error[release_not_protected]');
    expect(cli('history', '--target', old).stdout).toMatch(
      /protected by murmur-gc protect[\s\S]*released by murmur-gc release/,
    );
  });

  it('a damaged list: protection ls and the sweep exit 1 naming it; nothing is removed', () => {
    const old = session(40);
    fs.mkdirSync(path.join(home, 'gc'), { mode: 0o700 });
    fs.writeFileSync(path.join(home, 'gc', 'protected.json'), 'not json');
    const ls = cli('protection', 'ls');
    expect(ls.status).toBe(1);
    expect(ls.stdout).toContain(path.join(home, 'gc', 'protected.json'));
    const s = cli();
    expect(s.status).toBe(1);
    expect(s.stdout + s.stderr).toContain('protected_unreadable');
    expect(fs.existsSync(path.join(root, old))).toBe(true);
  });
});
