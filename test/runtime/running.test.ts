// Process probes: start-time tokens, reused pids, who holds a file open for writing, and who
// holds it open across appends (not the runtime's open/append/close per line).
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  HELD_OPEN_WATCH_MS,
  parseRunningRecord,
  probeProcess,
  procStartTime,
  processesHolding,
  startTimeOf,
  writersHoldingOpen,
} from '../../src/runtime/running.js';
import { startHeldWriter, startWriter } from '../reliability/writer.js';
import { identityOf } from '../../src/fsx/safe-fs.js';
import { rmrf, tempDir } from '../helpers/fixtures.js';

let T: string;
beforeEach(() => {
  T = tempDir('running');
});
afterEach(() => rmrf(T));

describe('process probes', () => {
  it('reads field 22 even when the command name holds spaces and parentheses', () => {
    const line =
      '4242 (my (odd) cmd) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 12345 67 18446744073709551615';
    expect(procStartTime(line)).toBe('987654');
  });

  it('a live pid with the same start time is alive; with another start time it is a reused pid', async () => {
    const token = await startTimeOf(process.pid);
    expect(token).toMatch(/^\d+$/);
    expect(await probeProcess(process.pid, token)).toBe('alive');
    expect(await probeProcess(process.pid, '1')).toBe('dead');
    expect(await probeProcess(2 ** 22 + 99, undefined)).toBe('dead');
  });

  it('parses running records with every field the runtime requires, and nothing else', () => {
    const full = {
      session_id: 'ses_x',
      url: '127.0.0.1:4100',
      pid: 12,
      process_start: '34',
      capsule_name: 'demo',
      capsule_version: '1.0.0',
      workdir: '/w/.murmur/ses_x',
      outlives_launcher: false,
      started_at: '2026-01-01T00:00:00Z',
    };
    expect(parseRunningRecord('ses_x.json', JSON.stringify(full, null, 2))).toEqual({
      file: 'ses_x.json',
      sessionId: 'ses_x',
      pid: 12,
      startTime: '34',
      workdir: '/w/.murmur/ses_x',
    });
    for (const key of Object.keys(full)) {
      const { [key]: _gone, ...rest } = full as Record<string, unknown>;
      expect(parseRunningRecord('a.json', JSON.stringify(rest)), key).toBeUndefined();
    }
    expect(parseRunningRecord('a.json', JSON.stringify({ ...full, pid: 2 ** 32 }))).toBeUndefined();
    expect(parseRunningRecord('a.json', JSON.stringify({ ...full, process_start: 34 }))).toBeUndefined();
    expect(parseRunningRecord('a.json', '[1]')).toBeUndefined();
    expect(parseRunningRecord('a.json', 'garbage')).toBeUndefined();
  });

  it('sees a process holding a file open for writing, and not one only reading it', async () => {
    const file = path.join(T, 'conversation.jsonl');
    fs.writeFileSync(file, 'x\n');
    const id = identityOf(fs.lstatSync(file, { bigint: true }));
    const hold = (flag: string) =>
      spawn(process.execPath, [
        '-e',
        `const fs=require('fs'); fs.openSync(process.argv[1], '${flag}'); process.stdout.write('ready'); setTimeout(()=>{}, 30000)`,
        file,
      ]);
    const reader = hold('r');
    const writer = hold('a');
    try {
      await Promise.all([reader, writer].map((c) => new Promise((r) => c.stdout.once('data', r))));
      const holders = await processesHolding(id);
      expect(holders).toContain(writer.pid);
      expect(holders).not.toContain(reader.pid);
    } finally {
      reader.kill('SIGKILL');
      writer.kill('SIGKILL');
    }
  });
});

describe('a file held open for writing, told from one written per line', () => {
  it('a process keeping one descriptor is held; one opening, appending and closing per line (the runtime, here at full speed) is not', async () => {
    const file = path.join(T, 'conversation.jsonl');
    fs.writeFileSync(file, '');
    const id = identityOf(fs.statSync(file, { bigint: true }));
    const perLine = startWriter(file, 2_000_000, 1_000_000); // as fast as it can go
    const killed = perLine.done.catch(() => undefined);
    try {
      await new Promise((r) => setTimeout(r, 100));
      // About one look in seven finds it mid-line; no watch finds it at every look.
      for (let i = 0; i < 5; i++) expect(await writersHoldingOpen(id)).toEqual([]);
    } finally {
      perLine.child.kill('SIGKILL');
      await killed;
    }
    const held = startHeldWriter(file, 0);
    try {
      await held.opened;
      const t0 = Date.now();
      expect(await writersHoldingOpen(id)).toEqual([held.child.pid]);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(HELD_OPEN_WATCH_MS);
    } finally {
      await held.stop();
    }
    // Nobody at the first look: answered at once.
    const t1 = Date.now();
    expect(await writersHoldingOpen(id)).toEqual([]);
    expect(Date.now() - t1).toBeLessThan(HELD_OPEN_WATCH_MS);
  }, 20_000);
});
