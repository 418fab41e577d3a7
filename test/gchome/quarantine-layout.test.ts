// The undo window's layout, pure (src/gchome/quarantine-layout.ts): names, sidecars, deadlines,
// the purge order and what a restore puts back.
import { describe, expect, it } from 'vitest';
import {
  CONTEXT_PAYLOAD,
  DROPPED_PAYLOAD,
  ITEM_FILE,
  QUARANTINE_DIR,
  RECORD_PAYLOAD,
  heldKey,
  isExpired,
  itemDirName,
  markerToMeta,
  oldestFirst,
  parseItemDirName,
  parseMeta,
  payloadOf,
  restoreChain,
  restoredMarker,
  serializeMeta,
  type ItemMeta,
} from '../../src/gchome/quarantine-layout.js';

const base: ItemMeta = {
  kind: 'context',
  store: 'shey',
  context: 'ctx_a',
  removed_ms: 1000,
  until_ms: 2000,
  reason: 'max_age',
  run: 'ses_x',
};
const trunc: ItemMeta = { ...base, kind: 'truncation', messages: 3, at_ms: '1500' };
const marker = (dropped: bigint, at: bigint) => ({
  dropped,
  oldest_surviving_id: `msg_o${at}`,
  last_dropped_id: `msg_l${at}`,
  at_ms: at,
});

describe('item names', () => {
  it('`<until_ms>.<nonce>`, read back only when the deadline is a safe integer of at most 16 digits and the nonce 8–64 hex', () => {
    expect(itemDirName(1_800_000_000_000, 'ab12cd34')).toBe('1800000000000.ab12cd34');
    expect(parseItemDirName('1800000000000.ab12cd34')).toEqual({ untilMs: 1_800_000_000_000 });
    expect(parseItemDirName('0.' + 'f'.repeat(64))).toEqual({ untilMs: 0 });
    for (const bad of [
      '1800000000000.ab12cd3',
      '1800000000000.' + 'a'.repeat(65),
      '1800000000000.AB12CD34',
      '18x.ab12cd34',
      '.ab12cd34',
      '1800000000000ab12cd34',
      ' 1.ab12cd34',
      '1.ab12cd34 ',
      '12345678901234567.ab12cd34',
      '9999999999999999.ab12cd34',
    ]) {
      expect(parseItemDirName(bad), bad).toBeUndefined();
    }
    expect(parseItemDirName('9007199254740991.ab12cd34')).toEqual({ untilMs: 9_007_199_254_740_991 });
    expect(heldKey({ parent: '/q', entry: 'e' })).toBe('/q/e');
  });

  it('the payload: ctx for a context, record.jsonl for a truncation held as the old inode, dropped.jsonl for a copy', () => {
    expect(payloadOf({ kind: 'context' })).toBe(CONTEXT_PAYLOAD);
    expect(payloadOf({ kind: 'truncation', range: { from: 0, to: 5 } })).toBe(RECORD_PAYLOAD);
    expect(payloadOf({ kind: 'truncation' })).toBe(DROPPED_PAYLOAD);
    expect([CONTEXT_PAYLOAD, RECORD_PAYLOAD, DROPPED_PAYLOAD]).toEqual(['ctx', 'record.jsonl', 'dropped.jsonl']);
  });

  it('the items live in `<home>/gc/quarantine/`, each with its sidecar `item.json` (the layout a restore by hand reads)', () => {
    expect([QUARANTINE_DIR, ITEM_FILE]).toEqual(['quarantine', 'item.json']);
  });
});

describe('sidecars', () => {
  it('round-trip, one line each', () => {
    const text = serializeMeta(trunc);
    expect(text.endsWith('\n')).toBe(true);
    expect(text.split('\n')).toHaveLength(2);
    expect(parseMeta(text)).toEqual(trunc);
    expect(parseMeta(serializeMeta({ ...trunc, range: { from: 10, to: 10 } }))).toEqual({
      ...trunc,
      range: { from: 10, to: 10 },
    });
  });

  it('read down to zero: times, a message count, a range from the first byte', () => {
    const zero: ItemMeta = { ...trunc, removed_ms: 0, until_ms: 0, messages: 0, range: { from: 0, to: 0 } };
    expect(parseMeta(serializeMeta(zero))).toEqual(zero);
  });

  it('refuse anything that is not a sidecar, whatever field is wrong', () => {
    const bad: unknown[] = [
      'not json',
      'null',
      '42',
      '"text"',
      { ...base, kind: 'session' },
      { ...base, store: '' },
      { ...base, store: 7 },
      { ...base, context: '' },
      { ...base, reason: '' },
      { ...base, run: '' },
      { ...base, removed_ms: -1 },
      { ...base, removed_ms: 1.5 },
      { ...base, removed_ms: '1000' },
      { ...base, until_ms: 2 ** 53 },
      { ...base, until_ms: null },
      { ...trunc, messages: undefined },
      { ...trunc, messages: -1 },
      { ...trunc, at_ms: 1500 },
      { ...trunc, range: { from: 5, to: 4 } },
      { ...trunc, range: { from: -1, to: 4 } },
      { ...trunc, range: { from: 0, to: 1.5 } },
      { ...trunc, range: { from: 0 } },
      { ...trunc, range: null },
      { ...trunc, range: 'x' },
      { ...base, range: { from: 0, to: 1 } },
    ];
    for (const b of bad)
      expect(parseMeta(typeof b === 'string' ? b : JSON.stringify(b)), JSON.stringify(b)).toBeUndefined();
    const { store: _s, ...noStore } = base;
    expect(parseMeta(JSON.stringify(noStore))).toBeUndefined();
  });

  it('never names a store or context that is not one path segment', () => {
    for (const name of ['a/b', '.hidden', '..', '.', 'x\0y', '/abs']) {
      expect(parseMeta(JSON.stringify({ ...base, store: name })), `store ${name}`).toBeUndefined();
      expect(parseMeta(JSON.stringify({ ...base, context: name })), `context ${name}`).toBeUndefined();
    }
    expect(parseMeta(JSON.stringify({ ...base, context: 'ctx.with.dots' }))).toMatchObject({
      context: 'ctx.with.dots',
    });
  });

  it('a marker as a sidecar keeps its numbers as decimal text; none is null', () => {
    expect(markerToMeta(marker(12345678901234567890n, 99n))).toEqual({
      dropped: '12345678901234567890',
      oldest_surviving_id: 'msg_o99',
      last_dropped_id: 'msg_l99',
      at_ms: '99',
    });
    expect(markerToMeta(undefined)).toBeNull();
  });
});

describe('deadlines and the purge order', () => {
  it('an item goes once its deadline is now or past', () => {
    expect(isExpired(1000, 999)).toBe(false);
    expect(isExpired(1000, 1000)).toBe(true);
    expect(isExpired(1000, 1001)).toBe(true);
  });

  it('oldest first: the window that ends first, then by target, then by entry, whatever the input order', () => {
    const items = [
      { untilMs: 2, target: 'b', entry: '2' },
      { untilMs: 1, target: 'z', entry: '1' },
      { untilMs: 2, target: 'a', entry: '9' },
      { untilMs: 2, target: 'a', entry: '3' },
      { untilMs: 2, target: 'c', entry: '0' },
    ];
    // a later target sorts after an earlier one whatever its entry ('c/0' after 'b/2' after 'a/9')
    const want = ['1/z/1', '2/a/3', '2/a/9', '2/b/2', '2/c/0'];
    expect(oldestFirst(items).map((i) => `${i.untilMs}/${i.target}/${i.entry}`)).toEqual(want);
    expect(oldestFirst([...items].reverse()).map((i) => `${i.untilMs}/${i.target}/${i.entry}`)).toEqual(want);
    expect(items[0]).toEqual({ untilMs: 2, target: 'b', entry: '2' }); // the input is not sorted in place
  });

  it("items alike in all three (one session held in two roots) stay in the order given (the configured roots' order)", () => {
    const twins = [
      { untilMs: 1, target: 'ses_x', entry: 'e', parent: '/r1' },
      { untilMs: 1, target: 'ses_x', entry: 'e', parent: '/r2' },
    ];
    expect(oldestFirst(twins).map((i) => i.parent)).toEqual(['/r1', '/r2']);
    expect(oldestFirst([...twins].reverse()).map((i) => i.parent)).toEqual(['/r2', '/r1']);
  });
});

describe('what a restore puts back', () => {
  it("the header: dropped goes down by what comes back; at 0 the marker goes; the prior marker's ids and time stand", () => {
    const prior = markerToMeta(marker(5n, 10n));
    expect(restoredMarker(marker(8n, 20n), 3, prior)).toEqual({
      dropped: 5n,
      oldest_surviving_id: 'msg_o10',
      last_dropped_id: 'msg_l10',
      at_ms: 10n,
    });
    expect(restoredMarker(marker(8n, 20n), 8, prior)).toBeUndefined();
    expect(restoredMarker(marker(8n, 20n), 9, prior)).toBeUndefined();
    // truncated earlier than anything held: the current marker's ids and time, the count corrected
    expect(restoredMarker(marker(8n, 20n), 3, null)).toEqual({ ...marker(8n, 20n), dropped: 5n });
    expect(restoredMarker(undefined, 3, null)).toBeUndefined();
    expect(restoredMarker(undefined, 0, null)).toBeUndefined();
  });

  it("the chain ending at the record's marker, oldest first; the newest hold of one at_ms counts; an item outside it never goes back", () => {
    const item = (at: string, prior: string | null, removed: number) => ({
      meta: {
        at_ms: at,
        prior: prior === null ? null : { dropped: '1', oldest_surviving_id: 'o', last_dropped_id: 'l', at_ms: prior },
        removed_ms: removed,
      },
      id: `${at}@${removed}`,
    });
    const a = item('10', null, 1);
    const b = item('20', '10', 2);
    const c = item('30', '20', 3);
    const stray = item('25', '15', 4);
    expect(restoreChain([c, stray, a, b], '30').map((i) => i.id)).toEqual(['10@1', '20@2', '30@3']);
    expect(restoreChain([a, b, c], '20').map((i) => i.id)).toEqual(['10@1', '20@2']);
    expect(restoreChain([a, b, c], '99')).toEqual([]);
    expect(restoreChain([a, b, c], undefined)).toEqual([]);
    // a gap (the cut before 20 was not held): only what follows it
    expect(restoreChain([b, c], '30').map((i) => i.id)).toEqual(['20@2', '30@3']);
    // held twice at the same at_ms: the newest hold
    const again = item('30', '20', 9);
    expect(restoreChain([again, c, b], '30').map((i) => i.id)).toEqual(['20@2', '30@9']);
    // a loop in the priors ends
    const loop1 = item('40', '50', 5);
    const loop2 = item('50', '40', 6);
    expect(restoreChain([loop1, loop2], '50').map((i) => i.id)).toEqual(['40@5', '50@6']);
    // no at_ms: never in a chain
    expect(restoreChain([{ meta: { prior: null, removed_ms: 1 }, id: 'x' }], '30')).toEqual([]);
  });
});
