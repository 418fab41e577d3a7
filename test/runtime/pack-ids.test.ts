// packIds keeps a trace's context and work ids in half the memory when they have the runtime's
// form, and unpackIds gives back exactly the ids of the text, whatever it held: a wrong id would
// let a live session's context lose its protection.
import { describe, expect, it } from 'vitest';
import {
  CompactTrace,
  MemoryTraceCache,
  encodeTrace,
  packIdList,
  packIds,
  unpackIds,
  type TraceFileState,
} from '../../src/runtime/summary-cache.js';
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

  it('packs a list from its ids exactly as from its JSON text, for 3 000 generated lists of every form', () => {
    const rnd = prng(20261204);
    // each a way an id may fall short of the packed form, or a list of its limit
    const spoil: ((s: string) => string)[] = [
      (s) => s.toUpperCase(),
      (s) => `${s.slice(0, -1)}g`,
      (s) => s.slice(0, -1),
      (s) => `${s}0`,
      (s) => `C${s.slice(1)}`,
      (s) => s.replace('_', '-'),
      (s) => `${s.slice(0, 10)}\\${s.slice(11)}`,
      (s) => `${s.slice(0, 10)}\u0130${s.slice(11)}`,
      (s) => `${s.slice(0, 10)}\u0161${s.slice(11)}`,
      (s) => `${s.slice(0, 20)}"${s.slice(21)}`,
      (s) => `é${s.slice(1)}`,
    ];
    let packed = 0;
    for (let t = 0; t < 3000; t++) {
      const n = rnd() < 0.02 ? 255 + Math.floor(rnd() * 3) : 1 + Math.floor(rnd() * 5);
      // one prefix a list, but now and then a list of both
      const prefix = rnd() < 0.5 ? 'ctx' : 'wrk';
      const ids = Array.from({ length: n }, () => minted(rnd() < 0.03 ? 'wrk' : prefix));
      if (rnd() < 0.5) {
        const at = Math.floor(rnd() * n);
        ids[at] = (spoil[Math.floor(rnd() * spoil.length)] as (s: string) => string)(ids[at] as string);
      }
      const fromText = packIds(JSON.stringify(ids));
      expect(packIdList(ids), JSON.stringify(ids)).toBe(fromText);
      expect(unpackIds(packIdList(ids))).toEqual(ids);
      if (fromText.charCodeAt(0) === 1) packed++;
    }
    expect(packed).toBeGreaterThan(1000);
    expect(packed).toBeLessThan(2800);
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

  it('a CompactTrace writes the entry text encodeTrace writes for its summary, on 3 000 generated ones', () => {
    const rnd = prng(20261204);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
    const oddIds = ['ctx_a', 'ctx_"quoted"', 'ctx_\u00e9t\u00e9', 'ctx_line\nbreak', 'ctx_\\back', 'ctx_😀'];
    const ids = (prefix: string): string[] =>
      Array.from({ length: Math.floor(rnd() * 5) }, () => (rnd() < 0.8 ? minted(prefix) : pick(oddIds)));
    for (let t = 0; t < 3000; t++) {
      const st: TraceFileState = {
        dev: pick(['2049', '66306', '18446744073709551615']),
        ino: pick(['1', '77', String(2 ** 53 + 5), '18446744073709551557']),
        size: Math.floor(rnd() * 2 ** 40),
        mtimeMs: pick([0, 1796312367499, 1796312367499.123, 1.5e12 + rnd()]),
      };
      const workIds = Array.from({ length: Math.floor(rnd() * 3) }, () => minted('wrk'));
      const summary = {
        sessionStart: undefined,
        contextIds: ids('ctx'),
        hasSessionEnd: rnd() < 0.5,
        taskTrust: {},
        unaccounted: [],
        endsWithNewline: rnd() < 0.5,
        invalidLines: pick([0, 1, 7, 123456]),
        utf8: rnd() < 0.9,
        ...(workIds.length ? { workIds } : {}),
      };
      expect(CompactTrace.of(st, summary, false).encode(), `summary ${t}`).toBe(encodeTrace(st, summary));
    }
  });

  it('ids read in place from a cache file are the ids stored, minted or not (2 000 generated entries)', () => {
    // The in-place read packs the ids from the file's bytes; the general parse (a directory whose
    // key needs escapes) from their JSON text. Both must give back what was stored.
    const rnd = prng(20261205);
    const spoil = (id: string): string => {
      const at = 4 + Math.floor(rnd() * 32);
      return id.slice(0, at) + (rnd() < 0.5 ? 'G' : 'A') + id.slice(at + 1);
    };
    const ids = (prefix: string): string[] =>
      Array.from({ length: Math.floor(rnd() * 5) }, () => (rnd() < 0.9 ? minted(prefix) : spoil(minted(prefix))));
    const st: TraceFileState = { dev: '2049', ino: '77', size: 10, mtimeMs: 1_775_285_433_015 };
    const summaries = Array.from({ length: 2000 }, () => {
      const workIds = Array.from({ length: Math.floor(rnd() * 3) }, () => minted('wrk'));
      return {
        sessionStart: undefined,
        contextIds: ids('ctx'),
        hasSessionEnd: true,
        taskTrust: {},
        unaccounted: [],
        endsWithNewline: true,
        invalidLines: 0,
        utf8: true,
        ...(workIds.length ? { workIds } : {}),
      };
    });
    for (const dir of ['/r/app/.murmur', '/r/a "q"/.murmur']) {
      const text = summaries
        .map((s, i) => `T\t${JSON.stringify(`${dir}/ses_${i}/trace.jsonl`)}\t${encodeTrace(st, s)}`)
        .join('\n');
      const buf = Buffer.from(text);
      const c = new MemoryTraceCache();
      c.indexLines(buf, 0, buf.length, 0);
      c.indexed(
        (start, end, into, at) => buf.copy(into, at, start, end),
        () => undefined,
      );
      summaries.forEach((s, i) => {
        const got = c.get(dir, `ses_${i}`, st);
        expect(got, `${dir} entry ${i}`).toBeInstanceOf(CompactTrace);
        expect([got?.contextIds, got?.workIds ?? []], `${dir} entry ${i}`).toEqual([s.contextIds, s.workIds ?? []]);
      });
    }
  });
});
