// Property: a conversation record that another process holds open for writing — one O_APPEND
// descriptor kept across its appends, which the runtime never does — is never rewritten: not by
// the sweep's max_messages truncation, its torn-tail repair, or `conversation truncate`. Each
// reports it (`record_held_open`, naming the pid) and the rest goes on; not one line of the
// writer is lost (a rename over the file would leave its later lines in the replaced inode), and
// the check costs a fraction of a second, not a wait for the writer (docs/design.md §3).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as f from '../helpers/fixtures.js';
import { checkSequence, startHeldWriter } from './writer.js';

interface Report {
  actions: { kind: string; target?: string }[];
  skipped: { target: string; code: string; detail: string }[];
  errors: { target: string; code: string; detail: string }[];
}

let T: string;
let home: string;
beforeEach(() => {
  T = f.tempDir('held-open');
  home = path.join(T, '.murmur');
});
afterEach(() => f.rmrf(T));

describe('a record a process holds open for writing', () => {
  it('is reported and not rewritten by a sweep, its dry run or conversation truncate, while the process appends 3 000 lines/s; no line is lost', async () => {
    const r = f.writeRecord(home, 'shey', 'ctx_held', { capsule: 'shey', messages: 200 });
    const cfg = f.writeConfig(T, 'records:\n  - capsule: shey\n    retain: { max_messages: 50 }\n');
    const before = fs.readFileSync(r.file, 'utf8');
    const ino = fs.statSync(r.file).ino;
    const w = startHeldWriter(r.file, 3_000);
    const pid = w.child.pid!;
    try {
      await w.opened;
      await new Promise((res) => setTimeout(res, 200)); // it is appending by now
      const t0 = Date.now();
      const sweep = await f.runCliAsync(['--json', '--config', cfg], T);
      const sweepMs = Date.now() - t0;
      const dry = await f.runCliAsync(['--dry-run', '--json', '--config', cfg], T);
      const manual = await f.runCliAsync(['conversation', 'truncate', 'ctx_held', '--keep', '10', '--config', cfg], T);
      const stats = await w.stop();

      for (const res of [sweep, dry]) {
        expect(res.status, res.stderr).toBe(0);
        const rep = f.json<Report>(res);
        expect(rep.actions.filter((a) => a.kind === 'truncate_record')).toEqual([]);
        const held = rep.skipped.filter((s) => s.code === 'record_held_open');
        expect(held.map((s) => s.target)).toEqual(['shey/ctx_held']);
        expect(held[0]!.detail).toContain(`pid ${pid}`);
        expect(rep.errors).toEqual([]);
      }
      // The sweep took the look it needs (a quarter of a second), not a wait for the writer.
      expect(sweepMs).toBeLessThan(8_000);
      expect(manual.status).toBe(1);
      expect(manual.stderr).toContain('[record_held_open]');
      expect(manual.stderr).toContain(`pid ${pid}`);

      // Not rewritten: the same inode, the same bytes it had, followed by every line the writer wrote.
      expect(fs.statSync(r.file).ino).toBe(ino);
      const after = fs.readFileSync(r.file, 'utf8');
      expect(after.startsWith(before)).toBe(true);
      const seq = checkSequence(after.slice(before.length));
      expect(seq.problems).toEqual([]);
      expect(stats.lines).toBeGreaterThan(1_000);
      expect(seq.lines).toBe(stats.lines);
      expect(seq.last.get(0)).toBe(stats.lines - 1);
      expect(fs.readdirSync(path.dirname(r.file)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    } finally {
      await w.stop().catch(() => undefined);
    }
  }, 40_000);

  it('its torn last line is left as it is, and said so with the pid', async () => {
    // Idle for longer than live_grace (so the repair is due), torn, and held open by a process
    // that writes nothing: the line may be its own, half-written.
    const old = Date.now() - 3 * 3600_000;
    const r = f.writeRecord(home, 'shey', 'ctx_torn', { capsule: 'shey', messages: 5 });
    fs.appendFileSync(r.file, '{"role":"user","content":"half');
    fs.utimesSync(r.file, old / 1000, old / 1000);
    const cfg = f.writeConfig(T, 'records:\n  - capsule: shey\n    retain: { max_messages: 100 }\n');
    const before = fs.readFileSync(r.file);
    expect(before.at(-1)).not.toBe(10);
    const w = startHeldWriter(r.file, 0);
    try {
      await w.opened;
      const res = f.runCli(['--json', '--config', cfg], T);
      expect(res.status, res.stderr).toBe(0);
      const rep = f.json<Report>(res);
      expect(rep.actions.filter((a) => a.kind === 'repair_torn_tail')).toEqual([]);
      const held = rep.skipped.filter((s) => s.code === 'record_held_open');
      expect(held.map((s) => s.target)).toEqual(['shey/ctx_torn']);
      expect(held[0]!.detail).toContain(`pid ${w.child.pid}`);
      expect(fs.readFileSync(r.file)).toEqual(before);
    } finally {
      await w.stop();
    }
  }, 30_000);
});
