// Counting a record's messages has several paths, which must give the same answer on
// every record: scanRecord's fast path (chunks read into the WebAssembly memory, whole lines
// counted there), its streaming path (taken for a line longer than the chunk, and while another
// scan holds the chunk region), scanRecordBytes (a record read whole), and the line-by-line
// classification that `findId` takes, the reference (json-scan.ts's per-line scanner). Compared
// on generated records with the edges of the fast path: a header and a first line that is not
// one, lines longer than the chunk, lines the WebAssembly validator leaves to JavaScript
// (exponents, escaped keys), escaped ids, empty / whitespace / `\r` lines, a torn last line,
// invalid UTF-8, a file that shrank; and planKeepNewest, whose prefix count is scanRecord's.
import * as fs from 'node:fs';
import { open } from 'node:fs/promises';
import * as path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { chunkRegion } from '../../src/json/doc-wasm.js';
import { planKeepNewest, scanRecord, scanRecordBytes, type RecordScan } from '../../src/runtime/jsonl.js';
import { tempDir, rmrf } from '../helpers/fixtures.js';

const T = tempDir('s9-paths');
afterAll(() => rmrf(T));

function lines(seed: number, n: number): string[] {
  let s = seed;
  const rnd = (k: number): number => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) % k;
  };
  const out: string[] = [];
  const kinds = [
    (i: number) => JSON.stringify({ role: 'user', content: 'x'.repeat(rnd(300)), id: `m${i}` }),
    (i: number) => `{"role":"assistant","n":1.5e${rnd(400)},"id":"m${i}"}`,
    (i: number) => `{"r\\u006fle":"tool","id":"m${i}"}`,
    (i: number) => `{"role":"user","id":"m\\u00e9${i}"}`,
    () => `{"role":"user"}`,
    (i: number) => `{"role":7,"id":"n${i}"}`,
    () => '',
    () => ' \t ',
    (i: number) => ` {"role":"user","id":"r${i}"}\r`,
    (i: number) => JSON.stringify({ role: 'user', content: 'é😀"\\\n'.repeat(40 + rnd(200)), id: `long${i}` }),
    (i: number) => `{"role":"user","id":"m${i}",}`,
    (i: number) => `[{"role":"user","id":"a${i}"}]`,
    (i: number) => `{"role":"user","x":${'['.repeat(126 + rnd(4))}${']'.repeat(126 + rnd(4))},"id":"d${i}"}`,
  ];
  for (let i = 0; i < n; i++) out.push(kinds[rnd(kinds.length)]!(i));
  return out;
}

const HEADER = '{"type":"murmur.record","capsule":"c","created_ms":1756400000000}';

async function viaFile(
  file: string,
  size: number,
  opts: Parameters<typeof scanRecord>[2],
  held: boolean,
): Promise<{ r: RecordScan; asyncReads: number }> {
  const fh = await open(file, 'r');
  const region = held ? chunkRegion() : undefined;
  if (held) expect(region).toBeDefined();
  const spy = vi.spyOn(fh, 'read');
  try {
    return { r: await scanRecord(fh, size, opts), asyncReads: spy.mock.calls.length };
  } finally {
    region?.release();
    await fh.close();
  }
}

async function allAgree(
  name: string,
  data: Buffer,
  sizes: (number | undefined)[] = [61, 4096, undefined],
  fastOnly = true,
): Promise<RecordScan> {
  const file = path.join(T, name);
  fs.writeFileSync(file, data);
  const want = scanRecordBytes(data);
  // with findId every line is classified on its own (no chunk walk): the reference
  const { position, ...perLine } = scanRecordBytes(data, { findId: 'no such id' });
  expect(position).toBeUndefined();
  expect(want).toEqual(perLine);
  for (const bufferSize of sizes) {
    const o = bufferSize === undefined ? {} : { bufferSize };
    const fast = await viaFile(file, data.length, o, false);
    const slow = await viaFile(file, data.length, o, true);
    expect(fast.r, `${name} fast, buffer ${bufferSize}`).toEqual(want);
    expect(slow.r, `${name} streaming, buffer ${bufferSize}`).toEqual(want);
    if (data.length > 0) expect(slow.asyncReads).toBeGreaterThan(0);
    if (bufferSize === undefined && fastOnly) expect(fast.asyncReads, 'the fast path reads synchronously').toBe(0);
  }
  return want;
}

describe('record counting: fast, streaming and in-memory paths agree', () => {
  it('on generated records with and without a header, terminated and torn', async () => {
    for (let seed = 1; seed <= 3; seed++) {
      const body = lines(seed, 400);
      for (const header of [true, false]) {
        const text = (header ? [HEADER, ...body] : body).join('\n');
        const a = await allAgree(`r${seed}${header}-t`, Buffer.from(text + '\n'));
        expect(a.terminated).toBe(true);
        expect(a.messages).toBeGreaterThan(100);
        const b = await allAgree(`r${seed}${header}-torn`, Buffer.from(text));
        expect(b.header !== undefined).toBe(header);
      }
    }
  });

  it('with a line longer than the 1 MiB chunk region (the streaming path takes over mid-file)', async () => {
    const big = JSON.stringify({ role: 'user', content: 'y'.repeat(1_200_000), id: 'big' });
    const text = [HEADER, ...lines(7, 50), big, ...lines(8, 50)].join('\n') + '\n';
    const r = await allAgree('big', Buffer.from(text), [65536, undefined], false);
    expect(r.messages).toBeGreaterThan(20);
  });

  it('with invalid UTF-8 anywhere: unreadable on every path', async () => {
    const text = [HEADER, ...lines(9, 300)].join('\n') + '\n';
    for (const at of [5, 2000, text.length - 3]) {
      const data = Buffer.from(text);
      data[at] = 0xff;
      const r = await allAgree(`utf8-${at}`, data, [4096, undefined]);
      expect(r.utf8).toBe(false);
    }
  });

  it('with findId: the streaming path gives the position', async () => {
    const text = [HEADER, ...lines(10, 300)].join('\n') + '\n';
    const file = path.join(T, 'find');
    fs.writeFileSync(file, text);
    const fh = await open(file, 'r');
    try {
      const r = await scanRecord(fh, Buffer.byteLength(text), { findId: 'm150' });
      expect(r).toEqual(scanRecordBytes(Buffer.from(text), { findId: 'm150' }));
    } finally {
      await fh.close();
    }
  });

  it('a file that shrank during the scan is changed_since_scan on both paths', async () => {
    const text = [HEADER, ...lines(11, 200)].join('\n') + '\n';
    const file = path.join(T, 'shrank');
    fs.writeFileSync(file, text);
    for (const held of [false, true]) {
      await expect(viaFile(file, Buffer.byteLength(text) + 10, {}, held)).rejects.toMatchObject({
        code: 'changed_since_scan',
      });
    }
  });

  it('planKeepNewest counts the dropped prefix alike on both paths', async () => {
    const text = [HEADER, ...lines(12, 3000)].join('\n') + '\n';
    const file = path.join(T, 'keep');
    fs.writeFileSync(file, text);
    const total = scanRecordBytes(Buffer.from(text)).messages;
    for (const held of [false, true]) {
      const fh = await open(file, 'r');
      const region = held ? chunkRegion() : undefined;
      try {
        const plan = await planKeepNewest(fh, Buffer.byteLength(text), 100);
        expect(plan.total).toBe(total);
        expect(plan.dropped).toBe(total - 100);
        expect(plan.header?.capsule).toBe('c');
      } finally {
        region?.release();
        await fh.close();
      }
    }
  });
});
