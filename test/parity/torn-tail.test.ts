// Parity: a torn last line is terminated, as the runtime's truncation does — but only when no
// writer holds the record open — and a sweep repairs the torn tail of any record a policy covers
// that is idle for live_grace (`repair_torn_tail`). Otherwise the runtime's next append is glued
// to the torn bytes and that message is lost to every reader.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as f from '../helpers/fixtures.js';
import { makeEnv, type Env } from './helpers.js';

let E: Env;
const now = Date.now();
beforeEach(() => {
  E = makeEnv('parity-torn');
});
afterEach(() => f.rmrf(E.T));

const TORN = '{"role":"assistant","content":[{"type":"text","text":"cut of';

function tornRecord(
  context: string,
  o: { capsule?: string; messages: number; mtimeMs?: number; crlf?: boolean },
): { file: string; ids: string[] } {
  const r = f.writeRecord(E.home, 'shey', context, { capsule: o.capsule ?? 'shey', messages: o.messages });
  let text = fs.readFileSync(r.file, 'utf8');
  if (o.crlf) text = text.replaceAll('\n', '\r\n');
  fs.writeFileSync(r.file, text + TORN);
  if (o.mtimeMs !== undefined) fs.utimesSync(r.file, o.mtimeMs / 1000, o.mtimeMs / 1000);
  return r;
}

/** The runtime's append: one write of one line, no newline check. */
function runtimeAppend(file: string, id: string): void {
  fs.appendFileSync(file, f.messageLine(id) + '\n');
}

function locate(id: string): string {
  return f.runCli(['conversation', 'ls', '--message', id], E.T).stdout;
}

describe('parity: torn last lines', () => {
  it('a truncation terminates the kept torn line when no writer holds the record; the next append is found', () => {
    const { file } = tornRecord('ctx_1', { messages: 6 });
    const r = E.sweep(E.config(`records:\n  - capsule: shey\n    retain: { max_messages: 2 }\n`));
    expect(r.status, r.stderr).toBe(0);
    const text = fs.readFileSync(file, 'utf8');
    expect(text.endsWith(TORN + '\n')).toBe(true);
    const id = f.idAt('msg_', now);
    runtimeAppend(file, id);
    expect(locate(id)).toContain(`present:   ${id} is message 3 of 3 in shey/ctx_1`);
  });

  it('conversation truncate terminates it too', () => {
    const { file } = tornRecord('ctx_1', { messages: 4 });
    const r = f.runCli(['conversation', 'truncate', 'ctx_1', '--keep', '1'], E.T);
    expect(r.status, r.stderr).toBe(0);
    expect(fs.readFileSync(file, 'utf8').endsWith(TORN + '\n')).toBe(true);
  });

  it('while a writer holds the record open, a truncation leaves the torn line as it is (the record is not rewritten at all)', async () => {
    const { file } = tornRecord('ctx_1', { messages: 6 });
    const before = fs.readFileSync(file, 'utf8');
    const writer = spawn(process.execPath, [
      '-e',
      `require('fs').openSync(process.argv[1], 'a'); process.stdout.write('ready'); setTimeout(()=>{}, 60000)`,
      file,
    ]);
    try {
      await new Promise((res) => writer.stdout.once('data', res));
      const r = await f.runCliAsync(
        ['--json', '--config', E.config(`records:\n  - capsule: shey\n    retain: { max_messages: 2 }\n`)],
        E.T,
      );
      expect(r.status, r.stderr).toBe(0);
      // A writer that keeps its descriptor would lose every later line to a rename (docs/design.md
      // §3): the record is skipped, named, and left byte for byte, its torn tail unterminated.
      const skipped = (JSON.parse(r.stdout) as { skipped: { target: string; code: string; detail: string }[] }).skipped;
      expect(skipped).toContainEqual(
        expect.objectContaining({
          target: 'shey/ctx_1',
          code: 'record_held_open',
          detail: expect.stringContaining(`pid ${writer.pid}`),
        }),
      );
      const text = fs.readFileSync(file, 'utf8');
      expect(text).toBe(before);
      expect(text.endsWith(TORN)).toBe(true);
    } finally {
      writer.kill('SIGKILL');
    }
  });

  it('CRLF line endings are kept byte for byte by a truncation', () => {
    const { file } = tornRecord('ctx_1', { messages: 4, crlf: true });
    const before = fs.readFileSync(file, 'utf8');
    E.sweep(E.config(`records:\n  - capsule: shey\n    retain: { max_messages: 2 }\n`));
    const after = fs.readFileSync(file, 'utf8');
    const kept = before.split('\r\n').slice(-3).join('\r\n'); // last two messages + the torn tail
    expect(after.endsWith(kept + '\n')).toBe(true);
  });

  it('a sweep repairs the torn tail of a covered, idle record (repair_torn_tail), and only that', () => {
    const idle = tornRecord('ctx_idle', { messages: 2, mtimeMs: now - 2 * 3600_000 });
    const recent = tornRecord('ctx_recent', { messages: 2, mtimeMs: now - 10 * 60_000 });
    const foreign = tornRecord('ctx_foreign', { capsule: 'other', messages: 2, mtimeMs: now - 2 * 3600_000 });
    const recentBefore = fs.readFileSync(recent.file);
    const foreignBefore = fs.readFileSync(foreign.file);
    const cfg = E.config(`live_grace: 1h\nrecords:\n  - capsule: shey\n    retain: { max_age: 90d }\n`);
    const dry = E.sweep(cfg, ['--dry-run']);
    expect(dry.report.actions.filter((a) => a['kind'] === 'repair_torn_tail').map((a) => a['target'])).toEqual([
      'ctx_idle',
    ]);
    expect(fs.readFileSync(idle.file, 'utf8').endsWith(TORN)).toBe(true);
    const r = E.sweep(cfg);
    expect(r.status, r.stderr).toBe(0);
    expect(r.report.actions.filter((a) => a['kind'] === 'repair_torn_tail').map((a) => a['target'])).toEqual([
      'ctx_idle',
    ]);
    expect(fs.readFileSync(idle.file, 'utf8').endsWith(TORN + '\n')).toBe(true);
    expect(fs.readFileSync(recent.file)).toEqual(recentBefore);
    expect(fs.readFileSync(foreign.file)).toEqual(foreignBefore);
    const id = f.idAt('msg_', now);
    runtimeAppend(idle.file, id);
    expect(locate(id)).toContain(`present:   ${id} is message 3 of 3 in shey/ctx_idle`);
    expect((r.report as unknown as { audit: string | null }).audit).not.toBeNull(); // audited
    const again = E.sweep(cfg);
    expect(again.report.actions.filter((a) => a['kind'] === 'repair_torn_tail')).toEqual([]);
  });
});
