// packIds keeps a trace's context and work ids in half the memory when they have the runtime's
// form, and unpackIds gives back exactly the ids of the text, whatever it held: a wrong id would
// let a live session's context lose its protection.
import { describe, expect, it } from 'vitest';
import { CompactTrace, packIds, unpackIds, type TraceFileState } from '../../src/runtime/summary-cache.js';
import { hex, prng } from '../helpers/fixtures.js';

const minted = (prefix: string) => `${prefix}_${hex(32)}`;

describe('packIds / unpackIds', () => {
  it('round-trips 2 000 generated lists of minted ids, packed at about half their JSON text', () => {
    const rnd = prng(20261202);
    for (let t = 0; t < 2000; t++) {
      const prefix = rnd() < 0.5 ? 'ctx' : 'wrk';
      const ids = Array.from({ length: 1 + Math.floor(rnd() * 6) }, () => minted(prefix));
      const text = JSON.stringify(ids);
      const packed = packIds(text);
      expect(packed.length).toBe(4 + 16 * ids.length);
      expect(unpackIds(packed)).toEqual(ids);
    }
  });

  it('keeps as it is any text whose ids do not all have that form, and reads it back the same', () => {
    const id = 'ctx_0123456789abcdef0123456789abcdef';
    const texts = [
      '[]',
      JSON.stringify(['ctx_a']),
      JSON.stringify([id.toUpperCase()]),
      JSON.stringify([`${id.slice(0, -1)}g`]),
      JSON.stringify([id.slice(0, -1)]),
      JSON.stringify([`${id}0`]),
      JSON.stringify([id, 'wrk_0123456789abcdef0123456789abcdef']),
      JSON.stringify(['CTX_0123456789abcdef0123456789abcdef']),
      JSON.stringify(['ctx-0123456789abcdef0123456789abcdef']),
      JSON.stringify(['ctx_0123456789abcdef0123456789abcde\u00e9']),
      `["ctx\\u005f0123456789abcdef0123456789abcdef"]`,
      JSON.stringify(Array.from({ length: 257 }, () => minted('ctx'))),
      JSON.stringify([id, id]).replace(',', ' ,'),
    ];
    for (const text of texts) {
      expect(packIds(text), text).toBe(text);
      expect(unpackIds(packIds(text))).toEqual(JSON.parse(text));
    }
  });

  it('a CompactTrace keeps its ids packed and answers with the same ids', () => {
    const st: TraceFileState = { dev: '2049', ino: '77', size: 10, mtimeMs: 5 };
    const contextIds = [minted('ctx'), minted('ctx'), 'ctx_not_minted'];
    const workIds = [minted('wrk'), minted('wrk')];
    const t = CompactTrace.of(
      st,
      {
        sessionStart: undefined,
        contextIds,
        hasSessionEnd: true,
        taskTrust: {},
        unaccounted: [],
        endsWithNewline: true,
        invalidLines: 0,
        utf8: true,
        workIds,
      },
      false,
    );
    expect([t.contextIds, t.workIds]).toEqual([contextIds, workIds]);
    const minted2 = [minted('ctx'), minted('ctx')];
    expect(
      CompactTrace.of(
        st,
        {
          sessionStart: undefined,
          contextIds: minted2,
          hasSessionEnd: true,
          taskTrust: {},
          unaccounted: [],
          endsWithNewline: true,
          invalidLines: 0,
          utf8: true,
        },
        false,
      ).contextIds,
    ).toEqual(minted2);
  });
});
