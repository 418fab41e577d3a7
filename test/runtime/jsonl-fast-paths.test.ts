// scanRecord's fast paths against an independent per-line oracle: UTF-8 validated a
// chunk at a time instead of per line (an invalid byte inside a chunk, in a line carried across
// chunks, in the unterminated tail), the read-ahead buffer, and the last message's id kept as
// bytes and decoded once (ids with escapes, non-ASCII, quotes; `findId` compared as bytes); and
// planKeepNewest's forward count of the dropped prefix (same bulk UTF-8 check).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isUtf8 } from 'node:buffer';
import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { planKeepNewest, scanRecord } from '../../src/runtime/jsonl.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'murmur-gc-jsonl-fast-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function oracle(
  buf: Buffer,
  findId: string,
): { utf8: boolean; messages: number; lastMessageId: string | undefined; position: number | undefined } {
  if (!isUtf8(buf)) return { utf8: false, messages: 0, lastMessageId: undefined, position: undefined };
  const text = buf.toString('utf8');
  const lines = text.split('\n');
  if (text.endsWith('\n')) lines.pop();
  let messages = 0;
  let lastMessageId: string | undefined;
  let position: number | undefined;
  for (const l of lines) {
    let v: unknown;
    try {
      v = JSON.parse(l);
    } catch {
      continue;
    }
    if (typeof v !== 'object' || v === null || Array.isArray(v) || typeof (v as { role?: unknown }).role !== 'string')
      continue;
    messages++;
    const id = (v as { id?: unknown }).id;
    lastMessageId = typeof id === 'string' ? id : undefined;
    if (id === findId) position = messages;
  }
  return { utf8: true, messages, lastMessageId, position };
}

const IDS = ['msg_1', 'msg_2', 'é😀', 'a"b', 'back\\slash', 'msg\u00e9'];

function record(seed: number): { buf: Buffer; findId: string } {
  let s = seed;
  const rnd = (n: number): number => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return Math.floor((s / 2147483648) * n);
  };
  const parts: Buffer[] = [];
  const count = 5 + rnd(40);
  for (let i = 0; i < count; i++) {
    const id = IDS[rnd(IDS.length)]!;
    const r = rnd(10);
    let line: string;
    if (r < 5) line = JSON.stringify({ role: 'user', content: 'c'.repeat(rnd(300)) + '\n"\\é', id });
    else if (r < 6)
      line = `{"role":"assistant","id":"${id === 'msg_1' ? 'msg\\u005f1' : 'msg_2'}"}`; // escaped spelling
    else if (r < 7) line = JSON.stringify({ role: 'tool', id: 7 });
    else if (r < 8) line = '{"role":"user","content":"torn';
    else line = JSON.stringify({ role: 'user', content: 'x'.repeat(rnd(2000)), id });
    parts.push(Buffer.from(line + '\n'));
  }
  let buf = Buffer.concat(parts);
  if (rnd(3) === 0) buf = buf.subarray(0, buf.length - 1 - rnd(10)); // an unterminated tail
  if (rnd(2) === 0 && buf.length > 0) {
    // one bad byte somewhere: a stray continuation byte, an overlong `/`, an encoded surrogate
    const bad = [Buffer.from([0x80]), Buffer.from([0xc0, 0xaf]), Buffer.from([0xed, 0xa0, 0x80])][rnd(3)]!;
    const at = rnd(buf.length);
    buf = Buffer.concat([buf.subarray(0, at), bad, buf.subarray(at)]);
  }
  return { buf, findId: IDS[rnd(IDS.length)]! };
}

describe('scanRecord fast paths agree with a per-line oracle', () => {
  it('on random records with invalid UTF-8 anywhere, at many buffer sizes', async () => {
    let n = 0;
    let unreadable = 0;
    let found = 0;
    for (let seed = 1; seed <= 120; seed++) {
      const { buf, findId } = record(seed);
      const path = join(dir, `r${n++}.jsonl`);
      await writeFile(path, buf);
      const fh = await open(path, 'r');
      try {
        const want = oracle(buf, findId);
        if (!want.utf8) unreadable++;
        if (want.position !== undefined) found++;
        for (const bufferSize of [17, 256, 4096, 1 << 20]) {
          const got = await scanRecord(fh, buf.length, { bufferSize, findId });
          expect(
            { utf8: got.utf8, messages: got.messages, lastMessageId: got.lastMessageId, position: got.position },
            `seed ${seed} buffer ${bufferSize}`,
          ).toEqual(want);
          const plan = planKeepNewest(fh, buf.length, 2, { bufferSize });
          if (want.utf8) expect((await plan).total, `seed ${seed} buffer ${bufferSize}`).toBe(want.messages);
          else await expect(plan).rejects.toMatchObject({ code: 'record_unreadable' });
        }
      } finally {
        await fh.close();
      }
    }
    expect(unreadable).toBeGreaterThan(20);
    expect(found).toBeGreaterThan(20);
  });
});
