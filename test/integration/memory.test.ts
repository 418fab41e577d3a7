// The sweep truncates a large record with bounded memory: a ~512 MB record truncated through the
// real CLI code path (inventory count + staged rewrite) must stay under 150 MB peak RSS.
// (bench/run.mjs runs the same at 2 GB and compares against `tail`.)
import { PEAK_RSS_KB_JS } from '../helpers/measured.js';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as f from '../helpers/fixtures.js';

const TARGET = 512 * 1024 * 1024;
let T: string;
let file: string;
let total = 0;

beforeAll(() => {
  T = f.tempDir('memory');
  const home = path.join(T, '.murmur');
  const dir = path.join(home, 'conversations', 'big', 'ctx_big');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  file = path.join(dir, 'conversation.jsonl');
  const fd = fs.openSync(file, 'w', 0o600);
  fs.writeSync(fd, '{"type":"murmur.record","capsule":"big","created_ms":1756400000000}\n');
  const body = 'x'.repeat(900);
  let written = 0;
  while (written < TARGET) {
    const lines: string[] = [];
    for (let k = 0; k < 8192; k++) {
      lines.push(
        JSON.stringify({
          role: k % 2 ? 'assistant' : 'user',
          content: body,
          id: f.idAt('msg_', 1_700_000_000_000 + total),
        }),
      );
      total++;
    }
    const chunk = Buffer.from(lines.join('\n') + '\n');
    fs.writeSync(fd, chunk);
    written += chunk.length;
  }
  fs.closeSync(fd);
}, 120_000);

afterAll(() => f.rmrf(T));

/** Run the CLI's main() in a child and return its output and peak RSS in KB. */
function runMeasured(
  args: string[],
  home: string,
): { status: number | null; stdout: string; stderr: string; rssKb: number } {
  const wrapper = `
    const { main } = await import(${JSON.stringify(path.join(f.REPO, 'dist', 'cli', 'main.js'))});
    const code = await main(${JSON.stringify(args)});
    process.stderr.write('\\nMAXRSS_KB ' + ${PEAK_RSS_KB_JS} + '\\n');
    process.exitCode = code;
  `;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', wrapper], {
    env: f.cliEnv(home),
    encoding: 'utf8',
    timeout: 120_000,
    maxBuffer: 64 << 20,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, rssKb: Number(/MAXRSS_KB (\d+)/.exec(r.stderr)?.[1]) };
}

describe('memory', () => {
  it('listing a 512 MB record (conversation ls, ls --message) keeps peak RSS under 150 MB', () => {
    const ls = runMeasured(['conversation', 'ls', '--json'], T);
    expect(ls.status, ls.stderr).toBe(0);
    expect(JSON.parse(ls.stdout)).toEqual([
      expect.objectContaining({ record: 'big', context_id: 'ctx_big', messages: total }),
    ]);
    expect(ls.rssKb).toBeGreaterThan(0);
    expect(ls.rssKb).toBeLessThan(150 * 1024);
    const msg = runMeasured(['conversation', 'ls', '--message', f.idAt('msg_', 1_700_000_000_000 + total - 1)], T);
    expect(msg.status, msg.stderr).toBe(0);
    expect(msg.rssKb).toBeLessThan(150 * 1024);
  }, 180_000);

  it('truncating a 512 MB record keeps peak RSS under 150 MB', () => {
    const cfg = f.writeConfig(T, 'records:\n  - capsule: big\n    retain: { max_messages: 1000 }\n');
    const r = runMeasured(['--json', '--config', cfg], T);
    expect(r.status, r.stderr).toBe(0);
    const rep = JSON.parse(r.stdout) as { actions: { kind: string; messages_dropped?: number; kept?: number }[] };
    expect(rep.actions).toContainEqual(
      expect.objectContaining({ kind: 'truncate_record', messages_dropped: total - 1000, kept: 1000 }),
    );
    expect(r.rssKb).toBeGreaterThan(0);
    expect(r.rssKb).toBeLessThan(150 * 1024);
    expect(f.readLines(file)).toHaveLength(1001);
  }, 180_000);

  it('conversation ls over 10 000 records keeps peak RSS under 150 MB', () => {
    const H = f.tempDir('memory-many');
    try {
      for (let i = 0; i < 10_000; i++)
        f.writeRecord(path.join(H, '.murmur'), `store${i % 10}`, `ctx_${i}`, {
          capsule: `store${i % 10}`,
          messages: 3,
        });
      const ls = runMeasured(['conversation', 'ls', '--json'], H);
      expect(ls.status, ls.stderr).toBe(0);
      expect((JSON.parse(ls.stdout) as unknown[]).length).toBe(10_000);
      expect(ls.rssKb).toBeLessThan(150 * 1024);
    } finally {
      f.rmrf(H);
    }
  }, 180_000);
});
