// Parity: running records (docs/design.md §R1). The start token is `process_start`; a live pid with
// another token, or a record that does not parse with every field, is no liveness evidence; a file
// in running/ that is not a running record (huge, FIFO, garbage) never fails a sweep.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as f from '../helpers/fixtures.js';
import { makeEnv, type Env } from './helpers.js';

let E: Env;
const now = Date.now();
beforeEach(() => {
  E = makeEnv('parity-running');
  fs.mkdirSync(path.join(E.home, 'running'), { mode: 0o700 });
});
afterEach(() => f.rmrf(E.T));

/** An old, finished-looking-by-time session (no session_end, idle far beyond live_grace). */
function staleSession(daysAgo: number): { id: string; dir: string } {
  const id = f.idAt('ses_', now - daysAgo * f.DAY);
  return { id, dir: f.writeSession(E.root, { sessionId: id, end: false, startMs: now - daysAgo * f.DAY }) };
}

describe('parity: running records', () => {
  it('a live pid whose process_start differs is a reused pid: the session is not live', () => {
    const s = staleSession(50);
    const cfg = E.config(`sessions:\n  - root: ${E.root}\n    retain: { max_age: 1d }\n`);
    // A runtime record naming this (live) test process with a stale token: the pid was reused.
    fs.writeFileSync(
      path.join(E.home, 'running', `${s.id}.json`),
      f.runningRecordJson({ sessionId: s.id, pid: process.pid, processStart: '1', workdir: s.dir }),
      { mode: 0o600 },
    );
    const r = E.sweep(cfg);
    expect(r.status, r.stderr).toBe(0);
    expect(fs.existsSync(s.dir)).toBe(false);
    expect(r.report.actions.some((a) => a['kind'] === 'remove_session' && a['target'] === s.id)).toBe(true);
  });

  it('the same record with the right process_start keeps the session live', () => {
    const s = staleSession(50);
    const cfg = E.config(`sessions:\n  - root: ${E.root}\n    retain: { max_age: 1d }\n`);
    fs.writeFileSync(
      path.join(E.home, 'running', `${s.id}.json`),
      f.runningRecordJson({
        sessionId: s.id,
        pid: process.pid,
        processStart: f.processStartOf(process.pid),
        workdir: s.dir,
      }),
      { mode: 0o600 },
    );
    const r = E.sweep(cfg);
    expect(fs.existsSync(s.dir)).toBe(true);
    expect(r.report.skipped.some((k) => k.code === 'live_session' && k.target.endsWith(s.id))).toBe(true);
  });

  it.each([
    ['process_start missing', (o: Record<string, unknown>) => delete o['process_start']],
    ['url missing', (o: Record<string, unknown>) => delete o['url']],
    ['outlives_launcher not a bool', (o: Record<string, unknown>) => (o['outlives_launcher'] = 'no')],
    ['pid beyond u32', (o: Record<string, unknown>) => (o['pid'] = 2 ** 32 + process.pid)],
  ])('a record that does not parse with every field (%s) gives no liveness evidence', (_name, spoil) => {
    const s = staleSession(50);
    const cfg = E.config(`sessions:\n  - root: ${E.root}\n    retain: { max_age: 1d }\n`);
    const o = JSON.parse(
      f.runningRecordJson({
        sessionId: s.id,
        pid: process.pid,
        processStart: f.processStartOf(process.pid),
        workdir: s.dir,
      }),
    ) as Record<string, unknown>;
    spoil(o);
    fs.writeFileSync(path.join(E.home, 'running', `${s.id}.json`), JSON.stringify(o), { mode: 0o600 });
    const r = E.sweep(cfg);
    expect(r.status, r.stderr).toBe(0);
    expect(fs.existsSync(s.dir)).toBe(false);
    expect(r.report.skipped.some((k) => k.code === 'running_record_invalid')).toBe(true);
  });

  it('a 100 MB file, a FIFO and garbage in running/ are skipped with a warning code; the sweep succeeds', () => {
    const s = staleSession(50);
    const cfg = E.config(`sessions:\n  - root: ${E.root}\n    retain: { max_age: 1d }\n`);
    const big = path.join(E.home, 'running', 'ses_big.json');
    fs.writeFileSync(big, '');
    fs.truncateSync(big, 100 * 1024 * 1024); // sparse: no disk cost
    execFileSync('mkfifo', [path.join(E.home, 'running', 'ses_fifo.json')]);
    fs.writeFileSync(path.join(E.home, 'running', 'ses_garbage.json'), '\u0000\u0001 not json', { mode: 0o600 });
    const r = E.sweep(cfg);
    expect(r.status, r.stderr).toBe(0);
    expect(r.report.errors).toEqual([]);
    const codes = r.report.skipped
      .filter((k) => k.code === 'running_record_invalid')
      .map((k) => [path.basename(k.target), k.code]);
    expect(codes.sort(), JSON.stringify(r.report.skipped)).toEqual([
      ['ses_big.json', 'running_record_invalid'],
      ['ses_fifo.json', 'running_record_invalid'],
      ['ses_garbage.json', 'running_record_invalid'],
    ]);
    expect(fs.existsSync(s.dir)).toBe(false); // the rest of the sweep went ahead
  });
});
