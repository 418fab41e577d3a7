import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { isUtf8 } from 'node:buffer';
import { mkdtemp, open, rm, writeFile, appendFile, truncate as truncateFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  backwardLines,
  forwardLines,
  planKeepNewest,
  scanRecord,
  type KeepPlan,
  type Line,
} from '../../src/runtime/jsonl.js';
import { nextHeader, parseHeaderLine, serializeHeader, type RecordHeader } from '../../src/runtime/record.js';
import { GcError } from '../../src/errors.js';
import { prng } from '../helpers/fixtures.js';

let dir: string;
let n = 0;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'murmur-gc-jsonl-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function withFile<T>(
  content: Buffer | string,
  fn: (fh: import('node:fs/promises').FileHandle, path: string) => Promise<T>,
): Promise<T> {
  const path = join(dir, `f${n++}.jsonl`);
  await writeFile(path, content);
  const fh = await open(path, 'r');
  try {
    return await fn(fh, path);
  } finally {
    await fh.close();
  }
}

interface PlainLine {
  text: string;
  start: number;
  end: number;
  terminated: boolean;
}

const plain = (l: Line): PlainLine => ({
  text: l.bytes.toString('latin1'),
  start: l.start,
  end: l.end,
  terminated: l.terminated,
});

/** Rust `str::lines` over bytes, split on 0x0A only (a trailing \r stays in the line here). */
function naiveLines(buf: Buffer, from = 0, to = buf.length): PlainLine[] {
  const out: PlainLine[] = [];
  let start = from;
  for (let i = from; i < to; i++) {
    if (buf[i] === 10) {
      out.push({ text: buf.toString('latin1', start, i), start, end: i, terminated: true });
      start = i + 1;
    }
  }
  if (start < to) out.push({ text: buf.toString('latin1', start, to), start, end: to, terminated: false });
  return out;
}

async function collectForward(
  fh: import('node:fs/promises').FileHandle,
  to: number,
  bufferSize?: number,
  from?: number,
): Promise<PlainLine[]> {
  const out: PlainLine[] = [];
  const opts = { to, ...(bufferSize === undefined ? {} : { bufferSize }), ...(from === undefined ? {} : { from }) };
  for await (const l of forwardLines(fh, opts)) out.push(plain(l));
  return out;
}

async function collectBackward(
  fh: import('node:fs/promises').FileHandle,
  to: number,
  bufferSize?: number,
  from?: number,
): Promise<PlainLine[]> {
  const out: PlainLine[] = [];
  const opts = { to, ...(bufferSize === undefined ? {} : { bufferSize }), ...(from === undefined ? {} : { from }) };
  for await (const l of backwardLines(fh, opts)) out.push(plain(l));
  return out;
}

function randomBytesFile(rnd: () => number): Buffer {
  const parts: Buffer[] = [];
  const lines = Math.floor(rnd() * 40);
  for (let i = 0; i < lines; i++) {
    const kind = rnd();
    let len: number;
    if (kind < 0.2) len = 0;
    else if (kind < 0.3)
      len = 64 + Math.floor(rnd() * 400); // longer than small buffers
    else len = Math.floor(rnd() * 20);
    const line = Buffer.alloc(len);
    for (let j = 0; j < len; j++) {
      const r = rnd();
      line[j] = r < 0.05 ? 13 : r < 0.1 ? 0xc3 : 0x20 + Math.floor(rnd() * 90);
    }
    parts.push(line);
    if (i < lines - 1 || rnd() < 0.6) parts.push(Buffer.from([10]));
  }
  return Buffer.concat(parts);
}

describe('forwardLines / backwardLines', () => {
  it.each([
    ['empty', ''],
    ['one newline', '\n'],
    ['only newlines', '\n\n\n\n'],
    ['no trailing newline', 'a\nbb\nccc'],
    ['trailing newline', 'a\nbb\nccc\n'],
    ['a single unterminated line', 'abcdef'],
    ['leading blank line', '\nabc\n'],
    ['CRLF', 'a\r\nb\r\n\r\n'],
    ['lone CR is not a separator', 'a\rb\n'],
  ])('match Rust str::lines: %s', async (_name, content) => {
    const buf = Buffer.from(content, 'latin1');
    await withFile(buf, async (fh) => {
      const want = naiveLines(buf);
      for (const bs of [1, 2, 3, 7, 64, undefined]) {
        expect(await collectForward(fh, buf.length, bs)).toEqual(want);
        expect(await collectBackward(fh, buf.length, bs)).toEqual([...want].reverse());
      }
    });
  });

  it('agree with each other and with a naive split on random files, tiny buffers and long lines', async () => {
    const rnd = prng(42);
    for (let f = 0; f < 60; f++) {
      const buf = randomBytesFile(rnd);
      await withFile(buf, async (fh) => {
        const want = naiveLines(buf);
        for (const bs of [1, 7, 64, 4096]) {
          const fwd = await collectForward(fh, buf.length, bs);
          const back = await collectBackward(fh, buf.length, bs);
          expect(fwd).toEqual(want);
          expect(back).toEqual([...want].reverse());
        }
      });
    }
  });

  it('scan a sub-range [from, to) starting at a line start', async () => {
    const rnd = prng(5);
    for (let f = 0; f < 30; f++) {
      const buf = randomBytesFile(rnd);
      const starts = naiveLines(buf).map((l) => l.start);
      if (starts.length === 0) continue;
      const from = starts[Math.floor(rnd() * starts.length)] as number;
      const to = from + Math.floor(rnd() * (buf.length - from + 1));
      await withFile(buf, async (fh) => {
        const want = naiveLines(buf, from, to);
        for (const bs of [1, 7, 64]) {
          expect(await collectForward(fh, to, bs, from)).toEqual(want);
          expect(await collectBackward(fh, to, bs, from)).toEqual([...want].reverse());
        }
      });
    }
  });

  it('yield a view that is valid until the next iteration (copies stay intact)', async () => {
    const content = 'line-one\nline-two-is-longer\n3\n';
    await withFile(content, async (fh) => {
      const copies: string[] = [];
      for await (const l of forwardLines(fh, { to: content.length, bufferSize: 4 }))
        copies.push(Buffer.from(l.bytes).toString());
      expect(copies).toEqual(['line-one', 'line-two-is-longer', '3']);
    });
  });

  it('read only up to `to` even when the file has grown', async () => {
    const content = 'a\nbb\nccc';
    await withFile(content, async (fh, path) => {
      await appendFile(path, 'ZZZ\nmore\n');
      const want = naiveLines(Buffer.from(content));
      expect(want.at(-1)).toEqual({ text: 'ccc', start: 5, end: 8, terminated: false });
      for (const bs of [1, 3, 1024]) {
        expect(await collectForward(fh, content.length, bs)).toEqual(want);
        expect(await collectBackward(fh, content.length, bs)).toEqual([...want].reverse());
      }
    });
  });

  it('raise changed_since_scan when the file shrank below the snapshot', async () => {
    const content = 'aaaa\nbbbb\ncccc\n';
    await withFile(content, async (fh, path) => {
      await truncateFile(path, 6);
      await expect(collectForward(fh, content.length, 4)).rejects.toSatisfy(
        (e: unknown) => e instanceof GcError && e.code === 'changed_since_scan',
      );
      await expect(collectBackward(fh, content.length, 4)).rejects.toSatisfy(
        (e: unknown) => e instanceof GcError && e.code === 'changed_since_scan',
      );
    });
  });

  it('stop on an aborted signal', async () => {
    await withFile('a\nb\n', async (fh) => {
      const ac = new AbortController();
      ac.abort();
      await expect(collectLines(forwardLines(fh, { to: 4, signal: ac.signal }))).rejects.toThrow(/abort/i);
      await expect(collectLines(backwardLines(fh, { to: 4, signal: ac.signal }))).rejects.toThrow(/abort/i);
      await expect(scanRecord(fh, 4, { signal: ac.signal })).rejects.toThrow(/abort/i);
      await expect(planKeepNewest(fh, 4, 1, { signal: ac.signal })).rejects.toThrow(/abort/i);
    });
  });

  it('refuse bad ranges and buffer sizes', async () => {
    await withFile('abc\n', async (fh) => {
      await expect(collectLines(forwardLines(fh, { to: -1 }))).rejects.toThrow(RangeError);
      await expect(collectLines(forwardLines(fh, { from: 3, to: 2 }))).rejects.toThrow(RangeError);
      await expect(collectLines(backwardLines(fh, { to: 1.5 }))).rejects.toThrow(RangeError);
      await expect(collectLines(forwardLines(fh, { to: 4, bufferSize: 0 }))).rejects.toThrow(RangeError);
    });
  });
});

async function collectLines(gen: AsyncGenerator<Line>): Promise<number> {
  let c = 0;
  for await (const _ of gen) c++;
  return c;
}

// ---------------------------------------------------------------------------------------------
// Records
// ---------------------------------------------------------------------------------------------

/** Independent oracle: a message is a line that JSON.parses to a non-array object with a string role. */
function naiveIsMessage(text: string): { isMessage: boolean; id: string | undefined } {
  try {
    const v: unknown = JSON.parse(text);
    if (
      typeof v === 'object' &&
      v !== null &&
      !Array.isArray(v) &&
      typeof (v as { role?: unknown }).role === 'string'
    ) {
      const id = (v as { id?: unknown }).id;
      return { isMessage: true, id: typeof id === 'string' ? id : undefined };
    }
  } catch {
    // not JSON
  }
  return { isMessage: false, id: undefined };
}

function naivePlan(buf: Buffer, keep: number): Omit<KeepPlan, 'terminated'> & { messageStarts: number[] } {
  const lines = naiveLines(buf).map((l) => ({ ...l, text: buf.toString('utf8', l.start, l.end) }));
  const header = lines[0] ? parseHeaderLine(Buffer.from(lines[0].text)) : undefined;
  const msgs = lines.map((l) => ({ l, c: naiveIsMessage(l.text) })).filter((x) => x.c.isMessage);
  const total = msgs.length;
  const messageStarts = msgs.map((m) => m.l.start);
  if (total <= keep) {
    return {
      header,
      total,
      dropped: 0,
      kept: total,
      cutOffset: 0,
      oldestSurvivingId: '',
      lastDroppedId: '',
      messageStarts,
    };
  }
  const dropped = total - keep;
  const first = msgs[dropped]!;
  const last = msgs[dropped - 1]!;
  return {
    header,
    total,
    dropped,
    kept: keep,
    cutOffset: first.l.start,
    oldestSurvivingId: first.c.id ?? '',
    lastDroppedId: last.c.id ?? '',
    messageStarts,
  };
}

function msgId(i: number): string {
  return `msg_0199${i.toString(16).padStart(28, '0')}`;
}

function randomRecord(rnd: () => number): Buffer {
  const out: string[] = [];
  if (rnd() < 0.6) {
    const h: RecordHeader = { type: 'murmur.record', capsule: 'shey', created_ms: 1756400000000n };
    if (rnd() < 0.5)
      h.truncated = { dropped: 3n, oldest_surviving_id: msgId(3), last_dropped_id: msgId(2), at_ms: 1756400000001n };
    out.push(serializeHeader(h).slice(0, -1));
  } else if (rnd() < 0.2) {
    out.push('{"type":"other","capsule":"x","created_ms":1}');
  }
  const count = Math.floor(rnd() * 30);
  for (let i = 0; i < count; i++) {
    const r = rnd();
    if (r < 0.55)
      out.push(
        JSON.stringify({
          role: rnd() < 0.5 ? 'user' : 'assistant',
          content: 'x'.repeat(Math.floor(rnd() * 50)),
          id: msgId(i),
        }),
      );
    else if (r < 0.62)
      out.push(
        JSON.stringify({
          role: 'tool',
          content: 'é😀"\\\n' + 'y'.repeat(Math.floor(rnd() * 300)),
          tool_call_id: 'c',
          is_error: false,
          id: msgId(i),
        }),
      );
    else if (r < 0.68) out.push(JSON.stringify({ role: 'user', content: 'no id' }));
    else if (r < 0.71) out.push(JSON.stringify({ role: 'user', id: 42 }));
    else if (r < 0.74) out.push(`{"\\u0072ole":"user","id":"${msgId(i)}"}`);
    else if (r < 0.77) out.push(JSON.stringify({ role: 'user', id: msgId(i) }) + '\r');
    else if (r < 0.8) out.push('');
    else if (r < 0.83) out.push('   ');
    else if (r < 0.86) out.push('{"role":"user","content":"torn');
    else if (r < 0.89) out.push('garbage line');
    else if (r < 0.92) out.push('{"content":"no role","id":"x"}');
    else if (r < 0.95) out.push('[{"role":"user"}]');
    else out.push(serializeHeader({ type: 'murmur.record', capsule: 'misplaced', created_ms: 1n }).slice(0, -1));
  }
  let text = out.join('\n');
  const tail = rnd();
  if (tail < 0.5 && text.length > 0) text += '\n';
  else if (tail < 0.7) text += (text.length > 0 ? '\n' : '') + '{"role":"assistant","content":"torn ta';
  else if (tail < 0.85)
    text +=
      (text.length > 0 ? '\n' : '') +
      JSON.stringify({ role: 'assistant', content: 'complete but unterminated', id: 'tail' });
  return Buffer.from(text, 'utf8');
}

describe('scanRecord', () => {
  it('counts message lines and reads the header', async () => {
    const header = serializeHeader({ type: 'murmur.record', capsule: 'shey', created_ms: 9n });
    const lines = [
      JSON.stringify({ role: 'user', content: 'a', id: 'msg_a' }),
      '',
      'garbage',
      JSON.stringify({ role: 'assistant', content: 'b', id: 'msg_b' }),
      JSON.stringify({ role: 'user', content: 'a again', id: 'msg_a' }),
      JSON.stringify({ role: 'user', content: 'no id' }),
      '{"role":"user","content":"tor',
    ];
    const content = header + lines.join('\n');
    await withFile(content, async (fh) => {
      for (const bufferSize of [3, 64, 1 << 20]) {
        const scan = await scanRecord(fh, content.length, { bufferSize });
        expect(scan).toEqual({
          utf8: true,
          terminated: false, // the file ends in the middle of the torn last line
          header: { type: 'murmur.record', capsule: 'shey', created_ms: 9n },
          headerEnd: header.length,
          messages: 4,
          lastMessageId: undefined,
        });
        expect('position' in scan).toBe(false);
        expect((await scanRecord(fh, content.length, { bufferSize, findId: 'msg_a' })).position).toBe(3);
        expect((await scanRecord(fh, content.length, { bufferSize, findId: 'msg_b' })).position).toBe(2);
        const absent = await scanRecord(fh, content.length, { bufferSize, findId: 'msg_zzz' });
        expect('position' in absent && absent.position === undefined).toBe(true);
      }
    });
  });

  it('reports no header for a headerless record, an empty file and a header-only file', async () => {
    await withFile('{"role":"user","id":"m1"}\n', async (fh) => {
      expect(await scanRecord(fh, 26)).toEqual({
        utf8: true,
        terminated: true,
        header: undefined,
        headerEnd: 0,
        messages: 1,
        lastMessageId: 'm1',
      });
    });
    await withFile('', async (fh) => {
      expect(await scanRecord(fh, 0)).toEqual({
        utf8: true,
        terminated: true,
        header: undefined,
        headerEnd: 0,
        messages: 0,
        lastMessageId: undefined,
      });
    });
    const h = '{"type":"murmur.record","capsule":"c","created_ms":1}';
    await withFile(h, async (fh) => {
      const scan = await scanRecord(fh, h.length);
      expect(scan.header?.capsule).toBe('c');
      expect(scan.headerEnd).toBe(h.length);
      expect(scan.messages).toBe(0);
    });
  });

  it('counts the same with and without a header', async () => {
    const body = Array.from(
      { length: 5 },
      (_, i) => JSON.stringify({ role: 'user', content: String(i), id: msgId(i) }) + '\n',
    ).join('');
    const header = serializeHeader({ type: 'murmur.record', capsule: 'c', created_ms: 1n });
    const a = await withFile(body, (fh) => scanRecord(fh, body.length));
    const b = await withFile(header + body, (fh) => scanRecord(fh, header.length + body.length));
    expect(a.messages).toBe(5);
    expect(b.messages).toBe(5);
  });

  it('matches the oracle on random records', async () => {
    const rnd = prng(99);
    for (let f = 0; f < 80; f++) {
      const buf = randomRecord(rnd);
      const oracle = naivePlan(buf, Number.MAX_SAFE_INTEGER);
      const lines = naiveLines(buf);
      await withFile(buf, async (fh) => {
        const scan = await scanRecord(fh, buf.length, { bufferSize: 1 + Math.floor(rnd() * 100) });
        expect(scan.messages).toBe(oracle.total);
        expect(scan.header).toEqual(oracle.header);
        const first = lines[0];
        expect(scan.headerEnd).toBe(oracle.header && first ? (first.terminated ? first.end + 1 : first.end) : 0);
      });
    }
  });

  it('classifies the first line like any other (a header carrying a string role counts, as in the runtime)', async () => {
    const odd =
      '{"type":"murmur.record","capsule":"c","created_ms":1,"role":"user","id":"h"}\n{"role":"user","id":"a"}\n';
    await withFile(odd, async (fh) => {
      expect(await scanRecord(fh, odd.length)).toMatchObject({ header: { capsule: 'c' }, messages: 2 });
      expect(await planKeepNewest(fh, odd.length, 1)).toMatchObject({
        header: { capsule: 'c' },
        total: 2,
        dropped: 1,
        lastDroppedId: 'h',
      });
    });
  });

  it('reads only up to the snapshot size even when the file grew', async () => {
    const content = '{"role":"user","id":"a"}\n{"role":"user","id":"b"}\n';
    await withFile(content, async (fh, path) => {
      await appendFile(path, '{"role":"user","id":"c"}\n');
      expect(await scanRecord(fh, content.length)).toMatchObject({ messages: 2, lastMessageId: 'b' });
    });
  });
});

describe('planKeepNewest', () => {
  function tenMessages(): { header: string; lines: string[]; content: string } {
    const header = serializeHeader({ type: 'murmur.record', capsule: 'shey', created_ms: 1756400000000n });
    const lines = Array.from({ length: 10 }, (_, i) =>
      JSON.stringify({ role: i % 2 ? 'assistant' : 'user', content: `m${i + 1}`, id: msgId(i + 1) }),
    );
    return { header, lines, content: header + lines.join('\n') + '\n' };
  }

  it('keeps the newest 3 of 10 with their ids exact (runtime example)', async () => {
    const { header, lines, content } = tenMessages();
    await withFile(content, async (fh) => {
      const plan = await planKeepNewest(fh, content.length, 3);
      expect(plan).toEqual({
        header: parseHeaderLine(header.slice(0, -1)),
        total: 10,
        dropped: 7,
        kept: 3,
        cutOffset: header.length + lines.slice(0, 7).join('\n').length + 1,
        oldestSurvivingId: msgId(8),
        lastDroppedId: msgId(7),
        terminated: true,
      });
      expect(content.slice(plan.cutOffset)).toBe(lines.slice(7).join('\n') + '\n');
    });
  });

  it('does nothing when total <= keep', async () => {
    const { header, content } = tenMessages();
    await withFile(content, async (fh) => {
      for (const keep of [10, 11, 1000]) {
        expect(await planKeepNewest(fh, content.length, keep)).toEqual({
          header: parseHeaderLine(header.slice(0, -1)),
          total: 10,
          dropped: 0,
          kept: 10,
          cutOffset: 0,
          oldestSurvivingId: '',
          lastDroppedId: '',
          terminated: true,
        });
      }
    });
    await withFile('', async (fh) => {
      expect(await planKeepNewest(fh, 0, 1)).toMatchObject({
        header: undefined,
        total: 0,
        dropped: 0,
        kept: 0,
        terminated: true,
      });
    });
  });

  it('accumulates the dropped count across two truncations (10 -> 6 -> 2 gives 8)', async () => {
    const { content } = tenMessages();
    let bytes = Buffer.from(content);
    let now = 1756400001000;
    for (const keep of [6, 2]) {
      bytes = await withFile(bytes, async (fh) => {
        const plan = await planKeepNewest(fh, bytes.length, keep, { bufferSize: 16 });
        const h = nextHeader(plan.header, 'fallback', plan.dropped, plan.oldestSurvivingId, plan.lastDroppedId, now++);
        return Buffer.concat([Buffer.from(serializeHeader(h)), bytes.subarray(plan.cutOffset)]);
      });
    }
    const lines = bytes.toString().split('\n');
    expect(lines).toHaveLength(4); // header + 2 + trailing ''
    expect(parseHeaderLine(lines[0]!)).toEqual({
      type: 'murmur.record',
      capsule: 'shey',
      created_ms: 1756400000000n,
      truncated: { dropped: 8n, oldest_surviving_id: msgId(9), last_dropped_id: msgId(8), at_ms: 1756400001001n },
    });
    expect(lines.slice(1, 3).map((l) => JSON.parse(l).id)).toEqual([msgId(9), msgId(10)]);
  });

  it('uses "" for messages without an id and keeps non-message lines after the cut', async () => {
    const content = ['{"role":"user"}', 'junk', '{"role":"user","id":5}', '', '{"role":"user","id":"k"}', 'torn{'].join(
      '\n',
    );
    await withFile(content, async (fh) => {
      const plan = await planKeepNewest(fh, content.length, 1);
      expect(plan).toMatchObject({
        total: 3,
        dropped: 2,
        kept: 1,
        oldestSurvivingId: 'k',
        lastDroppedId: '',
        terminated: false,
      });
      expect(content.slice(plan.cutOffset)).toBe('{"role":"user","id":"k"}\ntorn{');
      const plan2 = await planKeepNewest(fh, content.length, 2);
      expect(plan2).toMatchObject({ dropped: 1, oldestSurvivingId: '', lastDroppedId: '' });
      expect(content.slice(plan2.cutOffset)).toBe('{"role":"user","id":5}\n\n{"role":"user","id":"k"}\ntorn{');
    });
  });

  it('reads the header from an unterminated header-only file and from a first line that is also dropped', async () => {
    const h = '{"type":"murmur.record","capsule":"c","created_ms":1}';
    await withFile(h, async (fh) => {
      expect(await planKeepNewest(fh, h.length, 1)).toMatchObject({
        header: { capsule: 'c' },
        total: 0,
        dropped: 0,
        terminated: false,
      });
    });
    const content = `${h}\n{"role":"user","id":"a"}\n{"role":"user","id":"b"}\n`;
    await withFile(content, async (fh) => {
      // the last dropped message is right after the header: the forward pass covers only the header
      expect(await planKeepNewest(fh, content.length, 1, { bufferSize: 4 })).toMatchObject({
        header: { capsule: 'c' },
        total: 2,
        dropped: 1,
        lastDroppedId: 'a',
      });
    });
    const noHeader = '{"role":"user","id":"a"}\n{"role":"user","id":"b"}\n';
    await withFile(noHeader, async (fh) => {
      // the last dropped message is the first line: no forward pass at all
      expect(await planKeepNewest(fh, noHeader.length, 1)).toMatchObject({
        header: undefined,
        total: 2,
        dropped: 1,
        cutOffset: 25,
      });
    });
  });

  it('counts a complete but unterminated last line as a message', async () => {
    const content = '{"role":"user","id":"a"}\n{"role":"user","id":"b"}';
    await withFile(content, async (fh) => {
      expect(await planKeepNewest(fh, content.length, 1)).toMatchObject({
        total: 2,
        dropped: 1,
        oldestSurvivingId: 'b',
        lastDroppedId: 'a',
        terminated: false,
      });
    });
  });

  it('matches a naive in-memory implementation on random records for many keep values', async () => {
    const rnd = prng(2024);
    let compared = 0;
    for (let f = 0; f < 150; f++) {
      const buf = randomRecord(rnd);
      await withFile(buf, async (fh) => {
        const total = naivePlan(buf, Number.MAX_SAFE_INTEGER).total;
        const keeps = new Set([
          1,
          2,
          3,
          Math.max(1, total - 1),
          Math.max(1, total),
          total + 1,
          1 + Math.floor(rnd() * (total + 2)),
        ]);
        for (const keep of keeps) {
          const { messageStarts: _, ...want } = naivePlan(buf, keep);
          // bufferSize 1 (one read per byte) is slow; a few files are enough for it.
          for (const bufferSize of f < 5 ? [1, 7, 64, 1 << 20] : f % 3 === 0 ? [7, 1 << 20] : [64, 1 << 20]) {
            const { terminated, ...got } = await planKeepNewest(fh, buf.length, keep, { bufferSize });
            expect(got).toEqual(want);
            expect(terminated).toBe(buf.length === 0 || buf[buf.length - 1] === 10);
            compared++;
          }
        }
      });
    }
    expect(compared).toBeGreaterThan(500);
  });

  it('plans on the snapshot even when the file grew', async () => {
    const { content } = tenMessages();
    await withFile(content, async (fh, path) => {
      await appendFile(path, JSON.stringify({ role: 'user', id: 'late' }) + '\n');
      expect(await planKeepNewest(fh, content.length, 3)).toMatchObject({
        total: 10,
        dropped: 7,
        oldestSurvivingId: msgId(8),
        lastDroppedId: msgId(7),
      });
    });
  });

  it('refuses keep < 1', async () => {
    await withFile('{"role":"user"}\n', async (fh) => {
      await expect(planKeepNewest(fh, 16, 0)).rejects.toThrow(RangeError);
      await expect(planKeepNewest(fh, 16, -3)).rejects.toThrow(RangeError);
      await expect(planKeepNewest(fh, 16, 1.5)).rejects.toThrow(RangeError);
      await expect(planKeepNewest(fh, 16, Number.NaN)).rejects.toThrow(RangeError);
    });
  });
});

describe('planKeepNewest with a known total', () => {
  it('gives the same plan as a full count, including the header, and ignores an inconsistent hint', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mgc-known-'));
    try {
      const ids = Array.from({ length: 40 }, (_, i) => `msg_0199${i.toString(16).padStart(28, '0')}`);
      const lines = [
        '{"type":"murmur.record","capsule":"c","created_ms":5}',
        ...ids.map((id, i) => (i === 7 ? 'garbage' : JSON.stringify({ role: 'user', content: 'x', id }))),
      ];
      const file = join(dir, 'r.jsonl');
      await writeFile(file, lines.join('\n') + '\n');
      const fh = await open(file, 'r');
      try {
        const size = (await fh.stat()).size;
        for (const keep of [1, 5, 38, 39]) {
          const full = await planKeepNewest(fh, size, keep, { bufferSize: 64 });
          const hinted = await planKeepNewest(fh, size, keep, { bufferSize: 64, knownTotal: full.total });
          expect(hinted).toEqual(full);
          const bogus = await planKeepNewest(fh, size, keep, { bufferSize: 64, knownTotal: keep });
          expect(bogus).toEqual(full);
        }
      } finally {
        await fh.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('the line cap (a line longer than maxLineBytes is never held)', () => {
  const msg = (id: string) => JSON.stringify({ role: 'user', content: 'x', id });

  it('reads past an overlong line that cannot be JSON, yielding it empty and flagged, the others intact', async () => {
    const nul = Buffer.alloc(5000); // NUL bytes: a sparse hole as the runtime reads it
    const text = Buffer.concat([
      Buffer.from('a\n'),
      nul,
      Buffer.from('\nb\n'),
      Buffer.from(' x'.repeat(3000)),
      Buffer.from('\nc'),
    ]);
    await withFile(text, async (fh) => {
      const out: (PlainLine & { overlong?: { utf8: boolean } })[] = [];
      for await (const l of forwardLines(fh, { to: text.length, bufferSize: 64, maxLineBytes: 1000 }))
        out.push({ ...plain(l), ...(l.overlong ? { overlong: l.overlong } : {}) });
      expect(out).toEqual([
        { text: 'a', start: 0, end: 1, terminated: true },
        { text: '', start: 2, end: 5002, terminated: true, overlong: { utf8: true } },
        { text: 'b', start: 5003, end: 5004, terminated: true },
        { text: '', start: 5005, end: 11005, terminated: true, overlong: { utf8: true } },
        { text: 'c', start: 11006, end: 11007, terminated: false },
      ]);
    });
  });

  it('tells the UTF-8 validity of an overlong line, multi-byte sequences split across chunks included', async () => {
    const rand = prng(7);
    for (let round = 0; round < 40; round++) {
      const pieces: string[] = [];
      for (let k = 0; k < 400; k++) pieces.push(['é', '€', '𝄞', 'a', '\u00ff'][Math.floor(rand() * 5)] ?? 'a');
      const good = Buffer.from('#' + pieces.join(''));
      const bad = Buffer.from(good);
      const at = 1 + Math.floor(rand() * (bad.length - 1));
      bad[at] = round % 2 ? 0xff : 0x80;
      for (const [body, utf8] of [
        [good, true],
        [bad, isUtf8(bad)],
      ] as const) {
        const text = Buffer.concat([body, Buffer.from('\n'), body]);
        const got = await withFile(text, async (fh) => {
          const r: { utf8: boolean; terminated: boolean }[] = [];
          for await (const l of forwardLines(fh, { to: text.length, bufferSize: 7 + (round % 13), maxLineBytes: 100 }))
            r.push({ utf8: l.overlong?.utf8 ?? isUtf8(l.bytes), terminated: l.terminated });
          return r;
        });
        expect(got).toEqual([
          { utf8, terminated: true },
          { utf8, terminated: false },
        ]);
      }
    }
  });

  it('refuses (line_too_long) an overlong line that may be a JSON object, forwards and backwards', async () => {
    const text = msg('m1') + '\n  {"role":"user","content":"' + 'y'.repeat(5000) + '","id":"m2"}\n' + msg('m3') + '\n';
    await withFile(text, async (fh) => {
      const fwd = (async () => {
        for await (const l of forwardLines(fh, { to: text.length, bufferSize: 64, maxLineBytes: 1000 })) void l;
      })();
      await expect(fwd).rejects.toMatchObject({ code: 'line_too_long' });
      await expect(scanRecord(fh, text.length, { bufferSize: 64, maxLineBytes: 1000 })).rejects.toMatchObject({
        code: 'line_too_long',
      });
      await expect(planKeepNewest(fh, text.length, 1, { bufferSize: 64, maxLineBytes: 1000 })).rejects.toBeInstanceOf(
        GcError,
      );
    });
  });

  it('counts a record around overlong non-JSON lines as the runtime does (neither header nor message)', async () => {
    const header = '{"type":"murmur.record","capsule":"c","created_ms":1}';
    const hole = '\0'.repeat(4000);
    for (const [text, want] of [
      [`${header}\n${msg('m1')}\n${hole}\n${msg('m2')}\n`, { header: true, messages: 2, terminated: true, utf8: true }],
      [`${hole}\n${msg('m1')}\n`, { header: false, messages: 1, terminated: true, utf8: true }],
      [`${header}\n${msg('m1')}\n${hole}`, { header: true, messages: 1, terminated: false, utf8: true }],
    ] as const) {
      const r = await withFile(text, (fh) =>
        scanRecord(fh, Buffer.byteLength(text), { bufferSize: 256, maxLineBytes: 1000 }),
      );
      expect({ header: r.header !== undefined, messages: r.messages, terminated: r.terminated, utf8: r.utf8 }).toEqual(
        want,
      );
    }
    const bad = Buffer.concat([
      Buffer.from(`${header}\n${msg('m1')}\n`),
      Buffer.alloc(3000, 0xff),
      Buffer.from(`\n${msg('m2')}\n`),
    ]);
    const r = await withFile(bad, (fh) => scanRecord(fh, bad.length, { bufferSize: 256, maxLineBytes: 1000 }));
    expect(r.utf8).toBe(false);
  });

  it('holds at most the cap: a 64 MiB line with a 1 MiB cap never grows the carry past it', async () => {
    const big = Buffer.alloc(64 << 20, 0x20);
    big[0] = 0x00;
    const text = Buffer.concat([big, Buffer.from('\nz\n')]);
    await withFile(text, async (fh) => {
      const before = process.memoryUsage().arrayBuffers;
      let peak = 0;
      const lines: string[] = [];
      for await (const l of forwardLines(fh, { to: text.length, maxLineBytes: 1 << 20 })) {
        peak = Math.max(peak, process.memoryUsage().arrayBuffers - before);
        lines.push(l.overlong ? '<overlong>' : `${l.bytes.length} bytes`);
      }
      expect(lines).toEqual(['<overlong>', '1 bytes']);
      expect(peak).toBeLessThan(8 << 20);
    });
  });
});
