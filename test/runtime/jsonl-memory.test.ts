// Memory-bound regression test (in the spirit of node-glob's test/oom.ts): the scanner must not
// hold a record in memory. A ~300 MB record is generated, then a child node process running the
// BUILT module (dist/, produced by `npm test`'s pretest `tsc`) scans it and plans a truncation;
// its peak RSS must stay under 150 MB whatever the file size.
import { PEAK_RSS_KB_JS } from '../helpers/measured.js';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const TARGET_BYTES = 300 * 1024 * 1024;
const RSS_LIMIT_KB = 150 * 1024;
const KEEP = 1000;

const distJsonl = fileURLToPath(new URL('../../dist/runtime/jsonl.js', import.meta.url));
const srcJsonl = fileURLToPath(new URL('../../src/runtime/jsonl.ts', import.meta.url));
const srcRecord = fileURLToPath(new URL('../../src/runtime/record.ts', import.meta.url));

let dir: string;
let file: string;
let messages = 0;
let lastId = '';

function id(i: number): string {
  return `msg_0199${i.toString(16).padStart(28, '0')}`;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'murmur-gc-jsonl-mem-'));
  file = join(dir, 'conversation.jsonl');
  const fh = await open(file, 'wx', 0o600);
  try {
    let written = 0;
    const header = '{"type":"murmur.record","capsule":"mem","created_ms":1756400000000}\n';
    await fh.write(header);
    written += header.length;
    const filler = 'conversation text with "quotes", a \\ backslash, café, 日本語 and 😀 — '.repeat(20);
    while (written < TARGET_BYTES) {
      const lines: string[] = [];
      for (let k = 0; k < 4096; k++) {
        const i = messages++;
        lastId = id(i);
        // ~1 KB of message-like JSON, varying length
        // (never cut a surrogate pair: JSON.stringify would write a lone `\ud83d`, which is not a
        // message for the runtime — serde_json refuses it)
        let cut = 700 + (i % 300);
        if (/[\ud800-\udbff]/.test(filler[cut - 1] ?? '')) cut--;
        lines.push(JSON.stringify({ role: i % 2 ? 'assistant' : 'user', content: filler.slice(0, cut), id: lastId }));
      }
      const chunk = Buffer.from(lines.join('\n') + '\n');
      await fh.write(chunk);
      written += chunk.length;
    }
  } finally {
    await fh.close();
  }
}, 120_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

const CHILD = `
import { open } from 'node:fs/promises';
const { scanRecord, planKeepNewest } = await import(process.argv[1]);
const fh = await open(process.argv[2], 'r');
const { size } = await fh.stat();
const scan = await scanRecord(fh, size);
const plan = await planKeepNewest(fh, size, Number(process.argv[3]));
await fh.close();
console.log(JSON.stringify({ size, messages: scan.messages, lastMessageId: scan.lastMessageId, header: scan.header?.capsule,
  total: plan.total, dropped: plan.dropped, kept: plan.kept, maxRSS: ${PEAK_RSS_KB_JS} }));
`;

function runChild(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD, '--', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('jsonl scanner memory', () => {
  it('scans and plans a ~300 MB record in a child under 150 MB peak RSS', async () => {
    // The child imports dist/: make sure it exists and is not older than the sources under test.
    expect(existsSync(distJsonl), 'dist/runtime/jsonl.js is missing: run `npm run build` (npm test does it)').toBe(
      true,
    );
    const distTime = statSync(distJsonl).mtimeMs;
    expect(
      distTime >= statSync(srcJsonl).mtimeMs && distTime >= statSync(srcRecord).mtimeMs,
      'dist/ is older than src/: rebuild',
    ).toBe(true);

    const r = await runChild([pathToFileURL(distJsonl).href, file, String(KEEP)]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout.trim()) as {
      size: number;
      messages: number;
      lastMessageId: string;
      header: string;
      total: number;
      dropped: number;
      kept: number;
      maxRSS: number;
    };
    expect(out.size).toBeGreaterThanOrEqual(TARGET_BYTES);
    expect(out).toMatchObject({
      messages,
      lastMessageId: lastId,
      header: 'mem',
      total: messages,
      dropped: messages - KEEP,
      kept: KEEP,
    });
    expect(out.maxRSS, `child peak RSS ${Math.round(out.maxRSS / 1024)} MB`).toBeLessThan(RSS_LIMIT_KB);
  }, 120_000);
});
