// Property: a killed run's audit is completed from what the disk shows — every logged intent is
// settled (a truncation by the marker its new header carries) — and no trace is ever written
// without its session_start; creating the audit on a full disk fails once, clearly, before
// anything is removed.
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { recoverInterruptedAudits } from '../../src/gchome/audit-recovery.js';
import { startTimeOf } from '../../src/runtime/running.js';
import { Dir } from '../../src/fsx/safe-fs.js';
import * as f from '../helpers/fixtures.js';
import { requirement } from '../helpers/requirements.js';
import { readAudits } from './audit-check.js';

let T: string;
let home: string;
beforeEach(() => {
  T = f.tempDir('rel-recover');
  home = path.join(T, '.murmur');
});
afterEach(() => f.rmrf(T));

const AT = 1_764_000_000_123;

function killedAudit(opts: {
  trace: 'whole' | 'empty' | 'missing';
  intents: Record<string, unknown>[];
  done?: Record<string, unknown>[];
  owner?: Record<string, unknown>;
}): string {
  const id = f.idAt('ses_', Date.now() - 1000);
  const dir = path.join(home, 'gc', id);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (opts.trace === 'whole') {
    fs.writeFileSync(
      path.join(dir, 'trace.jsonl'),
      JSON.stringify({
        event_type: 'session_start',
        event_id: f.idAt('evt_', Date.now() - 1000),
        parent_id: null,
        session_id: id,
        timestamp: Date.now() - 1000,
        capsule_name: 'murmur-gc',
        capsule_version: '0.1.0',
        resumed_from: null,
        context_id: null,
      }) + '\n',
    );
  } else if (opts.trace === 'empty') {
    fs.writeFileSync(path.join(dir, 'trace.jsonl'), '');
  }
  const lines = [
    ...(opts.owner ? [{ op: 'owner', seq: 0, ...opts.owner }] : []),
    ...opts.intents.map((o, i) => ({ op: 'intent', seq: i + 1, ...o })),
    ...(opts.done ?? []),
  ];
  fs.writeFileSync(path.join(dir, 'intent.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  return id;
}

async function recover(): Promise<void> {
  const d = await Dir.open(home);
  try {
    await recoverInterruptedAudits(d, home, Date.now());
  } finally {
    await d.close();
  }
}

const truncIntent = (store: string) => ({
  kind: 'truncate_record',
  store: 'records',
  reason: 'max_messages',
  parent: store,
  target: 'ctx_1',
  at_ms: String(AT),
  dropped_before: '5',
});

describe('recovery of a killed run', () => {
  it("a truncation whose rename happened (the header carries the intent's marker) gets its retention line", async () => {
    f.writeRecord(home, 'shey', 'ctx_1', {
      capsule: 'shey',
      messages: 3,
      truncated: { dropped: 12, oldest_surviving_id: '', last_dropped_id: '', at_ms: AT },
    });
    killedAudit({ trace: 'whole', intents: [truncIntent(path.join(home, 'conversations', 'shey'))] });
    await recover();
    const a = readAudits(home);
    expect(a.problems).toEqual([]);
    expect(a.dropped.get('ctx_1')).toBe(7);
  });

  it('a purge of a held item that happened gets its quarantine_purge line; one that did not is not claimed', async () => {
    const q = path.join(home, 'gc', 'quarantine');
    fs.mkdirSync(path.join(q, '1700000000000.bb', 'ctx'), { recursive: true });
    const purge = (entry: string, target: string) => ({
      kind: 'purge_quarantine',
      parent: q,
      target: entry,
      purge: { store: 'records', reason: 'expired', target, held: 'context' },
    });
    const id = killedAudit({
      trace: 'whole',
      intents: [purge('1700000000000.aa', 'ctx_gone'), purge('1700000000000.bb', 'ctx_still')],
    });
    await recover();
    expect(readAudits(home).problems).toEqual([]);
    const lines = fs
      .readFileSync(path.join(home, 'gc', id, 'trace.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const purges = lines.filter((l) => l['event_type'] === 'quarantine_purge');
    expect(purges).toHaveLength(1);
    expect(purges[0]).toMatchObject({
      store: 'records',
      reason: 'expired',
      removed: 1,
      targets: ['ctx_gone'],
      kinds: ['context'],
    });
  });

  it('a run killed while writing where.json or details.json leaves no temp once its audit is completed (the 200-point crash soak found one)', async () => {
    f.writeRecord(home, 'shey', 'ctx_1', {
      capsule: 'shey',
      messages: 3,
      truncated: { dropped: 12, oldest_surviving_id: '', last_dropped_id: '', at_ms: AT },
    });
    const id = killedAudit({ trace: 'whole', intents: [truncIntent(path.join(home, 'conversations', 'shey'))] });
    const dead = Number(execFileSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).toString());
    const dir = path.join(home, 'gc', id);
    fs.writeFileSync(path.join(dir, `.where.json.${dead}.1a22fbf983b3191c91e.tmp`), '{"ctx_1":');
    fs.writeFileSync(path.join(dir, `.details.json.${dead}.1a22fbf983b3191c920.tmp`), '{"tasks":');
    fs.writeFileSync(path.join(dir, `.where.json.${process.ppid}.1a22fbf983b3191c91f.tmp`), ''); // a live pid's: kept
    await recover();
    expect(readAudits(home).problems).toEqual([]);
    expect(fs.readdirSync(dir).sort()).toEqual([
      `.where.json.${process.ppid}.1a22fbf983b3191c91f.tmp`,
      'trace.jsonl',
      'where.json',
    ]);
  });

  it('a truncation whose rename did not happen (older marker) is not claimed', async () => {
    f.writeRecord(home, 'shey', 'ctx_1', {
      capsule: 'shey',
      messages: 3,
      truncated: { dropped: 5, oldest_surviving_id: '', last_dropped_id: '', at_ms: AT - 99 },
    });
    killedAudit({ trace: 'whole', intents: [truncIntent(path.join(home, 'conversations', 'shey'))] });
    await recover();
    const a = readAudits(home);
    expect(a.problems).toEqual([]);
    expect(a.dropped.has('ctx_1')).toBe(false);
  });

  it('an audit whose owner is another live process (a conversation rm in progress) is left alone; once it is dead, it is completed, keeping trigger manual_cli', async () => {
    const store = path.join(home, 'conversations', 'shey');
    fs.mkdirSync(store, { recursive: true });
    const child = spawn('sleep', ['30']);
    try {
      const pid = child.pid!;
      const token = await startTimeOf(pid);
      const intent = {
        kind: 'remove_record',
        store: 'records',
        reason: 'manual',
        parent: store,
        target: 'ctx_gone',
        trigger: 'manual_cli',
      };
      const id = killedAudit({ trace: 'whole', intents: [intent], owner: { pid, start_time: token ?? null } });
      const intentFile = path.join(home, 'gc', id, 'intent.jsonl');
      await recover();
      expect(fs.existsSync(intentFile), 'a live owner is still writing it').toBe(true);
      expect(f.readLines(path.join(home, 'gc', id, 'trace.jsonl'))).toHaveLength(1);

      // the same pid with another start time is a reused pid: not the owner
      fs.writeFileSync(
        intentFile,
        [
          { op: 'owner', seq: 0, pid, start_time: '1' },
          { op: 'intent', seq: 1, ...intent },
        ]
          .map((l) => JSON.stringify(l))
          .join('\n') + '\n',
      );
      await recover();
      expect(fs.existsSync(intentFile)).toBe(false);
      const lines = f
        .readLines(path.join(home, 'gc', id, 'trace.jsonl'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines.map((l) => l['event_type'])).toEqual(['session_start', 'retention', 'session_end']);
      expect(lines[1]).toMatchObject({
        store: 'records',
        reason: 'manual',
        targets: ['ctx_gone'],
        trigger: 'manual_cli',
      });
    } finally {
      child.kill('SIGKILL');
    }
  });

  it.each(['empty', 'missing'] as const)(
    'a trace that is %s is written whole, opening with its session_start (never a parentless session_end)',
    async (trace) => {
      const root = path.join(T, 'root');
      fs.mkdirSync(root);
      killedAudit({
        trace,
        intents: [{ kind: 'remove_session', store: 'sessions', reason: 'max_age', parent: root, target: 'ses_gone' }],
      });
      await recover();
      const a = readAudits(home);
      expect(a.problems).toEqual([]);
      expect(a.traces).toBe(1);
      expect(a.sessions.get('ses_gone')).toBe(1);
    },
  );
});

// A full filesystem needs a tmpfs mount: root only (CI runs as root).
const tmpfs = requirement('disk full at audit creation (tmpfs)', ['root', 'tmpfs', 'cmd:mount', 'cmd:umount']);

describe.runIf(tmpfs.run)('disk full while the audit trace is created', () => {
  it('fails once, clearly, before anything is removed; the next run leaves no trace without session_start', () => {
    tmpfs.check();
    const H = path.join(T, 'h');
    fs.mkdirSync(H);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', H]);
    try {
      const home2 = path.join(H, '.murmur');
      const root = path.join(H, 'app', '.murmur');
      const now = Date.now();
      const ids = [0, 1, 2].map((i) =>
        f.writeSession(root, {
          sessionId: f.idAt('ses_', now - (40 + i) * f.DAY),
          end: true,
          startMs: now - (40 + i) * f.DAY,
        }),
      );
      fs.mkdirSync(path.join(home2, 'gc'), { recursive: true, mode: 0o700 });
      const cfg = f.writeConfig(H, `sessions:\n  - root: ${root}\n    retain: { max_age: 30d }\n`);
      // Fill the disk to the last byte.
      const filler = path.join(H, 'filler');
      try {
        fs.writeFileSync(filler, Buffer.alloc(1 << 20));
      } catch {
        // ENOSPC: full
      }
      const r = f.runCli(['--json', '--config', cfg], H);
      const rep = f.json<{ errors: { code: string; detail: string }[]; actions: { kind: string }[] }>(r);
      expect(r.status).toBe(1);
      expect(rep.errors).toHaveLength(1);
      expect(rep.errors[0]!.detail).toMatch(/audit trace could not be created.*ENOSPC.*nothing was removed/);
      expect(rep.actions.filter((a) => a.kind === 'remove_session')).toEqual([]);
      for (const d of ids) expect(fs.existsSync(d)).toBe(true);
      expect(readAudits(home2)).toMatchObject({ traces: 0, problems: [] });
      // Space is back: the next run removes them and its audit is whole.
      fs.rmSync(filler);
      const again = f.runCli(['--json', '--config', cfg], H);
      expect(again.status, again.stdout).toBe(0);
      for (const d of ids) expect(fs.existsSync(d)).toBe(false);
      const a = readAudits(home2);
      expect(a.problems).toEqual([]);
      expect(a.sessions.size).toBe(3);
    } finally {
      execFileSync('umount', ['-l', H]);
    }
  });
});
