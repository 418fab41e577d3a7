// The pure texts of `murmur-gc conversation`: the runtime's own unit cases (docs/design.md §R6,
// `murmur-cli/src/commands/conversation.rs`), the ls columns, the --message answers and refusals.
import { describe, expect, it } from 'vitest';
import {
  ambiguousContextRefusal,
  badKeepRefusal,
  compareUtf8,
  fmtBytes,
  fmtTimestamp,
  humanTime,
  lastTouchedMs,
  listingOf,
  liveContextRefusal,
  locateAnswer,
  locationOf,
  lsHeaderLine,
  lsRowLine,
  noContextRefusal,
  padLeft,
  padRight,
  renderLocateJson,
  renderLocateText,
  renderLsJson,
  renderLsText,
  renderRemoveText,
  renderResultJson,
  renderTruncateText,
  sortListings,
  type MessageLocation,
  type RecordListing,
} from '../../src/runtime/conversation-format.js';
import type { RecordHeader } from '../../src/runtime/record.js';

const msg = (ms: number, tail = '7000000000000000000'): string => `msg_${ms.toString(16).padStart(12, '0')}${tail}`;

describe('fmtTimestamp (fmt_timestamp_reads_as_utc_wall_clock)', () => {
  it('reads as UTC wall clock', () => {
    expect(fmtTimestamp(0)).toBe('1970-01-01 00:00:00');
    expect(fmtTimestamp(1756400000000)).toBe('2025-08-28 16:53:20');
  });

  it('drops milliseconds and handles leap days, year ends and far years', () => {
    expect(fmtTimestamp(999)).toBe('1970-01-01 00:00:00');
    expect(fmtTimestamp(Date.UTC(2024, 1, 29, 23, 59, 59, 999))).toBe('2024-02-29 23:59:59');
    expect(fmtTimestamp(Date.UTC(2000, 11, 31, 0, 0, 1))).toBe('2000-12-31 00:00:01');
    expect(fmtTimestamp(Date.UTC(2100, 2, 1))).toBe('2100-03-01 00:00:00');
    expect(fmtTimestamp(Date.UTC(12345, 0, 2, 3, 4, 5))).toBe('12345-01-02 03:04:05');
  });

  it('agrees with Date over many instants', () => {
    for (let i = 0; i < 2000; i++) {
      const ms = Math.floor(((i * 7919) % 2000) * 2_000_000_000 + i * 12_345);
      expect(fmtTimestamp(ms)).toBe(new Date(ms).toISOString().slice(0, 19).replace('T', ' '));
    }
  });

  it('refuses what is not a non-negative integer', () => {
    expect(() => fmtTimestamp(-1)).toThrow(RangeError);
    expect(() => fmtTimestamp(1.5)).toThrow(RangeError);
  });
});

describe('humanTime: the one way a time reads in human output', () => {
  it('is the UTC wall clock marked UTC, the sub-second part dropped', () => {
    expect(humanTime(0)).toBe('1970-01-01 00:00:00 UTC');
    expect(humanTime(Date.UTC(2026, 10, 30, 20, 16, 44, 999))).toBe('2026-11-30 20:16:44 UTC');
    expect(humanTime(Date.UTC(2026, 10, 30, 20, 16, 44) + 0.5)).toBe('2026-11-30 20:16:44 UTC');
    expect(humanTime(0xffffffffffff)).toBe('10889-08-02 05:31:50 UTC');
  });

  it('prints what no wall clock reads as its raw ms, and never throws', () => {
    expect(humanTime(-1)).toBe('-1 ms');
    expect(humanTime(Number.NaN)).toBe('NaN ms');
    expect(humanTime(Number.POSITIVE_INFINITY)).toBe('Infinity ms');
    expect(humanTime(2 ** 64)).toBe('18446744073709552000 ms');
    expect(humanTime(Number.MAX_SAFE_INTEGER)).toMatch(/^\d{6}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
  });
});

describe('fmtBytes (fmt_bytes_scales_at_the_binary_boundaries)', () => {
  it('scales at the binary boundaries', () => {
    expect(fmtBytes(0)).toBe('0 B');
    expect(fmtBytes(1023)).toBe('1023 B');
    expect(fmtBytes(1024)).toBe('1.0 KiB');
    expect(fmtBytes(1024 * 1024)).toBe('1.0 MiB');
  });

  it('keeps one decimal, KiB up to just under a MiB, MiB up to just under a GiB, GiB beyond (one style in every output)', () => {
    expect(fmtBytes(1536)).toBe('1.5 KiB');
    expect(fmtBytes(1024 * 1024 - 1)).toBe('1024.0 KiB');
    expect(fmtBytes(1024 ** 3 - 1)).toBe('1024.0 MiB');
    expect(fmtBytes(2 * 1024 ** 3)).toBe('2.0 GiB');
    expect(fmtBytes(5 * 1024 ** 3)).toBe('5.0 GiB');
  });

  it("rounds an exact tie to even, as Rust's {:.1} does (JS toFixed would round up)", () => {
    expect(fmtBytes(1280)).toBe('1.2 KiB'); // 1.25
    expect(fmtBytes(1792)).toBe('1.8 KiB'); // 1.75
    expect(fmtBytes(1331)).toBe('1.3 KiB');
    expect(fmtBytes(1434)).toBe('1.4 KiB');
    expect(fmtBytes(1310720)).toBe('1.2 MiB'); // 1.25 MiB
    expect(fmtBytes(2621440)).toBe('2.5 MiB');
  });

  it('refuses negative and fractional counts', () => {
    expect(() => fmtBytes(-1)).toThrow(RangeError);
    expect(() => fmtBytes(1.5)).toThrow(RangeError);
  });
});

describe('columns', () => {
  it('pads by characters (Rust chars), never cuts a longer value', () => {
    expect(padRight('é€😀', 6)).toBe('é€😀   ');
    expect(padLeft('😀', 6)).toBe('     😀');
    expect(padRight('x'.repeat(30), 24)).toBe('x'.repeat(30));
  });

  it('header and row widths: 24, 28, right 8, right 10, two spaces, 20, then TRUNCATED', () => {
    expect(lsHeaderLine()).toBe(
      'RECORD                   CONTEXT                      MESSAGES       SIZE  LAST TOUCHED (UTC)   TRUNCATED',
    );
    const row: RecordListing = {
      record: 'shey',
      context_id: 'ctx_1',
      path: '/h/conversations/shey/ctx_1/conversation.jsonl',
      messages: 12,
      bytes: 1280,
      last_touched_ms: 1756400000000,
      capsule: 'shey',
      truncated: { dropped: 7n, oldest_surviving_id: 'msg_b', last_dropped_id: 'msg_a', at_ms: 5n },
    };
    expect(lsRowLine(row)).toBe(
      'shey                     ctx_1                              12    1.2 KiB  2025-08-28 16:53:20  7 dropped',
    );
    expect(lsRowLine({ ...row, last_touched_ms: null, truncated: null, bytes: 0 })).toBe(
      'shey                     ctx_1                              12        0 B  -                    -',
    );
  });

  it('last touched is null when unknown or before the epoch', () => {
    expect(lastTouchedMs(undefined)).toBeNull();
    expect(lastTouchedMs(-1)).toBeNull();
    expect(lastTouchedMs(Number.NaN)).toBeNull();
    expect(lastTouchedMs(0)).toBe(0);
    expect(lastTouchedMs(12.9)).toBe(12);
  });
});

describe('ls text and JSON', () => {
  const header: RecordHeader = {
    type: 'murmur.record',
    capsule: 'shey',
    created_ms: 1n,
    // keys deliberately out of order: the listing rewrites them in the header's declaration order
    truncated: { at_ms: 9n, last_dropped_id: 'msg_l', oldest_surviving_id: 'msg_o', dropped: 3n },
  };
  const a = listingOf({
    record: 'shey',
    context: 'ctx_b',
    path: '/p/b',
    messages: 2,
    bytes: 10,
    mtimeMs: 1756400000000,
    header,
  });
  const b = listingOf({
    record: 'shey',
    context: 'ctx_a',
    path: '/p/a',
    messages: 1,
    bytes: 5,
    mtimeMs: undefined,
    header: undefined,
  });
  const c = listingOf({
    record: 'Zed',
    context: 'ctx_z',
    path: '/p/z',
    messages: 0,
    bytes: 0,
    mtimeMs: 0,
    header: undefined,
  });

  it('builds rows with the documented keys in order; capsule and truncated null when headerless', () => {
    expect(Object.keys(a)).toEqual([
      'record',
      'context_id',
      'path',
      'messages',
      'bytes',
      'last_touched_ms',
      'capsule',
      'truncated',
    ]);
    expect(Object.keys(a.truncated ?? {})).toEqual(['dropped', 'oldest_surviving_id', 'last_dropped_id', 'at_ms']);
    expect(b).toMatchObject({ capsule: null, truncated: null, last_touched_ms: null });
  });

  it('sorts by (record, context) in byte order', () => {
    expect(sortListings([a, b, c]).map((r) => `${r.record}/${r.context_id}`)).toEqual([
      'Zed/ctx_z',
      'shey/ctx_a',
      'shey/ctx_b',
    ]);
    // U+FF5E sorts before U+1F600 in UTF-8 byte order, after it in UTF-16 unit order.
    const x = { ...b, record: '\u{ff5e}' };
    const y = { ...b, record: '\u{1f600}' };
    expect(sortListings([y, x]).map((r) => r.record)).toEqual(['\u{ff5e}', '\u{1f600}']);
  });

  it('compareUtf8 orders any two strings as their UTF-8 bytes do', () => {
    // ASCII, prefixes, the top of the BMP, surrogate pairs, lone surrogates (encoded as U+FFFD)
    const s = [
      '',
      'a',
      'ab',
      'b',
      'ses_0190a',
      'ses_0190b',
      '\u00e9',
      '\ud7ff',
      '\ue000',
      '\uff5e',
      '\ufffd',
      '\uffff',
      '\u{1f600}',
      '\u{1f601}',
      '\u{10ffff}',
      '\ud83d',
      '\ude00',
      'x\ud83d',
      'x\ud83da',
      'x\ud83d\ude00',
      'x\ufffd',
    ];
    const sign = (n: number) => Math.sign(n) || 0;
    for (const a of s)
      for (const b of s)
        expect([a, b, sign(compareUtf8(a, b))]).toEqual([
          a,
          b,
          sign(Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'))),
        ]);
  });

  it('empty: the runtime sentences, and [] on one line', () => {
    expect(renderLsText([], undefined)).toBe('No conversation records.\n');
    expect(renderLsText([], 'nothing-here')).toBe("No conversation records under record store 'nothing-here'.\n");
    expect(renderLsJson([])).toBe('[]\n');
  });

  it('non-empty: header then one row each; JSON is one line', () => {
    const text = renderLsText([b, a], undefined).split('\n');
    expect(text).toHaveLength(4);
    expect(text[0]).toBe(lsHeaderLine());
    expect(text[3]).toBe('');
    const j = renderLsJson([b, a]);
    expect(j.trimEnd()).not.toContain('\n');
    // exact header integers are written as JSON numbers, digit for digit
    expect(j).toContain('"truncated":{"dropped":3,');
    expect(JSON.parse(j)).toEqual(
      JSON.parse(JSON.stringify([b, a], (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v))),
    );
  });
});

describe('ls --message (locate_message)', () => {
  const last = msg(1_000_000);
  const header: RecordHeader = {
    type: 'murmur.record',
    capsule: 's',
    created_ms: 1n,
    truncated: { dropped: 6n, oldest_surviving_id: 'msg_keep', last_dropped_id: last, at_ms: 2n },
  };

  it('present: position of the last line carrying the id, total = max(position, messages)', () => {
    expect(locateAnswer('msg_x', { position: 2, messages: 4, header })).toEqual({
      status: 'present',
      position: 2,
      total: 4,
    });
    expect(locateAnswer('msg_x', { position: 5, messages: 4, header: undefined })).toEqual({
      status: 'present',
      position: 5,
      total: 5,
    });
  });

  it('truncated when minted at or before the last dropped id; cumulative dropped and oldest surviving', () => {
    expect(locateAnswer(msg(1_000_000, '7fff'), { position: undefined, messages: 4, header })).toEqual({
      status: 'truncated',
      dropped: 6n,
      oldest_surviving_id: 'msg_keep',
      last_dropped_id: last,
    });
    expect(locateAnswer(msg(999_999), { position: undefined, messages: 4, header })).toMatchObject({
      status: 'truncated',
    });
    expect(locateAnswer(msg(1_000_001), { position: undefined, messages: 4, header })).toEqual({ status: 'unknown' });
  });

  it('unknown without a marker, or when either id has no readable time', () => {
    expect(locateAnswer(msg(1), { position: undefined, messages: 4, header: undefined })).toEqual({
      status: 'unknown',
    });
    expect(locateAnswer('msg_nothex', { position: undefined, messages: 4, header })).toEqual({ status: 'unknown' });
    expect(locateAnswer('ctx_000000000001', { position: undefined, messages: 4, header })).toEqual({
      status: 'unknown',
    });
    const noLast: RecordHeader = {
      ...header,
      truncated: { dropped: 1n, oldest_surviving_id: '', last_dropped_id: '', at_ms: 1n },
    };
    expect(locateAnswer(msg(1), { position: undefined, messages: 4, header: noLast })).toEqual({ status: 'unknown' });
  });

  it('texts and JSON', () => {
    const where = { record: 'shey', context_id: 'ctx_1', path: '/p' };
    const p = locationOf(where, { status: 'present', position: 2, total: 4 });
    const t = locationOf(where, {
      status: 'truncated',
      dropped: 6n,
      oldest_surviving_id: 'msg_keep',
      last_dropped_id: 'msg_last',
    });
    expect(locationOf(where, { status: 'unknown' })).toBeUndefined();
    expect(renderLocateText('msg_q', [])).toBe('unknown: msg_q is in no record on this host\n');
    // a fact (present) says where it is: the inference from mint order is left out
    expect(renderLocateText('msg_q', [p!, t!])).toBe('present:   msg_q is message 2 of 4 in shey/ctx_1\n');
    expect(renderLocateText('msg_q', [t!])).toBe(
      'truncated: msg_q is not in shey/ctx_1; if it ever was, it is among the 6 messages dropped (by mint order: it is no newer than the last one dropped, msg_last; oldest surviving is msg_keep)\n',
    );
    expect(renderLocateJson('msg_q', [])).toBe('{"message_id":"msg_q","status":"unknown","locations":[]}\n');
    expect(renderLocateJson('msg_q', [p!, t!])).toBe(
      '{"message_id":"msg_q","status":"found","locations":[' +
        '{"record":"shey","context_id":"ctx_1","path":"/p","status":"present","position":2,"total":4},' +
        '{"record":"shey","context_id":"ctx_1","path":"/p","status":"truncated","dropped":6,"oldest_surviving_id":"msg_keep"}]}\n',
    );
  });
});

describe('ls --message says only what is true', () => {
  const at = (record: string, last: string, dropped = 3n): MessageLocation =>
    locationOf(
      { record, context_id: 'ctx_1', path: `/h/${record}` },
      { status: 'truncated', dropped, oldest_surviving_id: `msg_keep_${record}`, last_dropped_id: last },
    )!;
  const id = msg(5_000);

  it("an id that is exactly a header's last_dropped_id: one line, mur's words, though four other markers are newer", () => {
    const locs = [at('a', msg(9_000)), at('b', msg(8_000)), at('c', id, 6n), at('d', msg(7_000)), at('e', msg(6_000))];
    expect(renderLocateText(id, locs)).toBe(
      `truncated: ${id} was dropped from c/ctx_1 (6 messages dropped; oldest surviving is msg_keep_c)\n`,
    );
    // the JSON keeps mur's answer and shape: every record whose marker is not older, no extra key
    const j = JSON.parse(renderLocateJson(id, locs)) as { locations: Record<string, unknown>[] };
    expect(j.locations.map((l) => l['record'])).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(Object.keys(j.locations[2]!)).toEqual([
      'record',
      'context_id',
      'path',
      'status',
      'dropped',
      'oldest_surviving_id',
    ]);
  });

  it('an inference from mint order alone is said as one, once per record', () => {
    const text = renderLocateText(id, [at('a', msg(9_000)), at('b', msg(8_000))]);
    expect(text.split('\n').filter(Boolean)).toEqual([
      `truncated: ${id} is not in a/ctx_1; if it ever was, it is among the 3 messages dropped (by mint order: it is no newer than the last one dropped, ${msg(9_000)}; oldest surviving is msg_keep_a)`,
      `truncated: ${id} is not in b/ctx_1; if it ever was, it is among the 3 messages dropped (by mint order: it is no newer than the last one dropped, ${msg(8_000)}; oldest surviving is msg_keep_b)`,
    ]);
    expect(text).not.toMatch(/may have been|was dropped/);
  });
});

describe('rm / truncate outputs', () => {
  it('removed / would remove', () => {
    const r = {
      action: 'remove' as const,
      record: 's',
      context_id: 'c',
      path: '/h/conversations/s/c',
      messages: 3,
      dry_run: false,
    };
    expect(renderRemoveText(r)).toBe('removed /h/conversations/s/c (3 messages)\n');
    expect(renderRemoveText({ ...r, dry_run: true })).toBe('would remove /h/conversations/s/c (3 messages)\n');
    expect(renderResultJson(r)).toBe(
      '{"action":"remove","record":"s","context_id":"c","path":"/h/conversations/s/c","messages":3,"dry_run":false}\n',
    );
  });

  it('dropped / would drop / already holds', () => {
    const t = {
      action: 'truncate' as const,
      record: 's',
      context_id: 'c',
      path: '/f',
      dropped: 2,
      kept: 3,
      oldest_surviving_id: 'msg_o',
      last_dropped_id: 'msg_l',
      dry_run: false,
    };
    expect(renderTruncateText(t)).toBe('dropped 2 messages from /f (3 kept; oldest surviving is msg_o)\n');
    expect(renderTruncateText({ ...t, dry_run: true })).toBe(
      'would drop 2 messages from /f (3 kept; oldest surviving is msg_o)\n',
    );
    expect(renderTruncateText({ ...t, dropped: 0, oldest_surviving_id: '', last_dropped_id: '' })).toBe(
      '/f already holds 3 messages; nothing dropped\n',
    );
    expect(renderResultJson(t)).toBe(
      '{"action":"truncate","record":"s","context_id":"c","path":"/f","dropped":2,"kept":3,"oldest_surviving_id":"msg_o","last_dropped_id":"msg_l","dry_run":false}\n',
    );
  });
});

describe('refusals (docs/design.md §R6, with murmur-gc in the hints)', () => {
  it('E-CNV-001 with and without --record', () => {
    expect(noContextRefusal('ctx_x', undefined, '/home/u/.murmur/conversations/')).toEqual({
      code: 'E-CNV-001',
      message: "no context 'ctx_x' in any record under /home/u/.murmur/conversations/",
      hint: '`murmur-gc conversation ls` lists every record and context on this host',
    });
    expect(noContextRefusal('ctx_x', 'shey', '/r/').message).toBe(
      "no context 'ctx_x' under record store 'shey' in /r/",
    );
  });

  it('E-CNV-002 names the stores in order and suggests the first', () => {
    expect(ambiguousContextRefusal('ctx_1', ['store-a', 'store-b'])).toEqual({
      code: 'E-CNV-002',
      message: "context 'ctx_1' is present under 2 record stores: store-a, store-b",
      hint: 'pass --record <NAME> to say which one, e.g. --record store-a',
    });
  });

  it('E-CNV-003 points at rm', () => {
    expect(badKeepRefusal('ctx_1')).toEqual({
      code: 'E-CNV-003',
      message: '--keep must be at least 1',
      hint: 'truncating a record to nothing is `murmur-gc conversation rm ctx_1`',
    });
  });

  it('live_context names the context and the session', () => {
    const r = liveContextRefusal(
      'ctx_1',
      { id: 'ses_1', root: '/w/.murmur', why: 'its trace was written in the last 60 s' },
      'remove',
    );
    expect(r.code).toBe('live_context');
    expect(r.message).toBe(
      "context 'ctx_1' is in use by live session ses_1 in /w/.murmur (its trace was written in the last 60 s); not removed",
    );
    expect(r.hint).toContain('--force');
    expect(liveContextRefusal('ctx_1', undefined, 'truncate').message).toBe(
      "context 'ctx_1' is in use by a live session; not truncated",
    );
  });
});

describe('ls columns are sized to their data', () => {
  it('a real 36-character ctx_ id widens CONTEXT so every value ends under its header', () => {
    const id = 'ctx_0190a1b2c3d47e5f8a9b0c1d2e3f4a5b';
    expect(id).toHaveLength(36);
    const rows = [
      listingOf({
        record: 'shey',
        context: id,
        path: '/p',
        messages: 1234567,
        bytes: 2 * 1024 ** 3,
        mtimeMs: 1756400000000,
        header: undefined,
      }),
      listingOf({
        record: 'shey',
        context: 'ctx_1',
        path: '/q',
        messages: 3,
        bytes: 10,
        mtimeMs: 1756400000000,
        header: undefined,
      }),
    ];
    const [head, ...lines] = renderLsText(rows, undefined).trimEnd().split('\n');
    const end = (h: string) => head!.indexOf(h) + h.length;
    for (const l of lines) {
      expect(l.slice(0, end('MESSAGES')).trimEnd()).toMatch(/\d$/);
      expect(l[end('MESSAGES')]).toBe(' ');
      expect(l.slice(0, end('SIZE'))).toMatch(/(B|KiB|MiB|GiB)$/);
      expect(l.slice(head!.indexOf('LAST TOUCHED (UTC)'))).toMatch(/^2025-08-28 16:53:20/);
    }
    expect(lines[0]).toContain('2.0 GiB');
  });
});

describe('truncate output with concurrent_append', () => {
  const base = {
    action: 'truncate' as const,
    record: 'shey',
    context_id: 'ctx_1',
    path: '/h/c.jsonl',
    dropped: 5,
    kept: 3,
    oldest_surviving_id: 'msg_b',
    last_dropped_id: 'msg_a',
    dry_run: false,
  };
  it('text and JSON carry the number of lines placed out of order; absent when in order', () => {
    const r = { ...base, concurrent_append: { lines_out_of_order: 7 } };
    expect(renderTruncateText(r)).toContain(
      'warning[concurrent_append]: a writer kept appending during the rewrite; 7 line(s) were placed after newer ones (none lost)\n',
    );
    expect(JSON.parse(renderResultJson(r))).toMatchObject({ concurrent_append: { lines_out_of_order: 7 } });
    expect(renderTruncateText(base)).not.toContain('concurrent_append');
    expect(JSON.parse(renderResultJson(base))).not.toHaveProperty('concurrent_append');
  });

  it('never says "none lost" while a process still held the replaced file: it names the pids instead', () => {
    const r = { ...base, concurrent_append: { lines_out_of_order: 7 }, held_open_by: [4242] };
    const text = renderTruncateText(r);
    expect(text).not.toContain('none lost');
    expect(text).toContain(
      'warning[concurrent_append]: a writer kept appending during the rewrite; 7 line(s) were placed after newer ones\n',
    );
    expect(text).toContain(
      'error[record_held_open]: pid 4242 opened the record during the rewrite and still held the replaced file open for writing',
    );
    expect(text).toContain('not in the record');
    expect(JSON.parse(renderResultJson(r))).toMatchObject({ held_open_by: [4242] });
    expect(renderTruncateText({ ...base, held_open_by: [1, 2] })).toContain(
      'error[record_held_open]: pids 1, 2 opened',
    );
    expect(JSON.parse(renderResultJson(base))).not.toHaveProperty('held_open_by');
  });
});
