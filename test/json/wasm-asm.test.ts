// The labelled WebAssembly assembler (src/json/wasm-asm.ts): a branch reaches the block it names,
// whatever blocks are added around it, and a listing with a branch it cannot resolve is refused
// when it is assembled, not compiled into a module that branches somewhere else.
import { describe, expect, it } from 'vitest';
import {
  I32,
  add,
  assemble,
  block,
  br,
  brIf,
  call,
  eqz,
  fnBody,
  get,
  k,
  ld32,
  loop,
  ret,
  set,
  sleb,
  st32,
  uleb,
  when,
  wasmModule,
  type Code,
} from '../../src/json/wasm-asm.js';

interface Wasm {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (m: object, imports: object) => { exports: Record<string, unknown> };
}
const api = (globalThis as unknown as { WebAssembly: Wasm }).WebAssembly;

/** Compiles a one-function module `f(x) -> i32` with `body` and returns f. */
function compile(body: Code): (x: number) => number {
  const bytes = wasmModule([{ params: [I32], results: [I32], locals: [], body, export: 'f' }], {
    minPages: 1,
    export: 'm',
  });
  return new api.Instance(new api.Module(bytes), {}).exports['f'] as (x: number) => number;
}

describe('LEB128', () => {
  it('encodes the reference values of the WebAssembly and DWARF specifications', () => {
    expect(uleb(0)).toEqual([0x00]);
    expect(uleb(127)).toEqual([0x7f]);
    expect(uleb(128)).toEqual([0x80, 0x01]);
    expect(uleb(624485)).toEqual([0xe5, 0x8e, 0x26]);
    expect(uleb(0xffffffff)).toEqual([0xff, 0xff, 0xff, 0xff, 0x0f]);
    expect(sleb(0)).toEqual([0x00]);
    expect(sleb(-1)).toEqual([0x7f]);
    expect(sleb(63)).toEqual([0x3f]);
    expect(sleb(64)).toEqual([0xc0, 0x00]);
    expect(sleb(-64)).toEqual([0x40]);
    expect(sleb(-65)).toEqual([0xbf, 0x7f]);
    expect(sleb(-123456)).toEqual([0xc0, 0xbb, 0x78]);
    expect(sleb(-0x80000000)).toEqual([0x80, 0x80, 0x80, 0x80, 0x78]);
  });
});

describe('labelled branches', () => {
  it('encodes a branch with the depth of the block or loop it names, an `if` counting as one level', () => {
    const code = block('out', loop('again', when(get(0), br('again')), br('out')));
    expect(assemble(code)).toEqual([
      0x02,
      0x40, // block $out
      0x03,
      0x40, // loop $again
      0x20,
      0x00,
      0x04,
      0x40, // local.get 0; if
      0x0c,
      0x01, // br $again: the if is depth 0, the loop depth 1
      0x0b, // end if
      0x0c,
      0x01, // br $out
      0x0b,
      0x0b,
    ]);
  });

  it('keeps every branch on its target when a block is added between them', () => {
    // f(x) = x == 0 ? 1 : 2, written with two nested blocks
    const listing = (wrap: (c: Code) => Code): Code => [
      block('two', block('one', wrap(brIf('one', eqz(get(0)))), br('two')), ret(k(1))),
      k(2),
    ];
    const plain = compile(listing((c) => c));
    // the same with the zero test wrapped in a new block and a loop: with numbered depths its
    // `br_if 0` would now leave only the new block and fall through to the branch to `two`
    const wrapped = compile(listing((c) => block('added', loop('also', c))));
    for (const f of [plain, wrapped]) {
      expect(f(0)).toBe(1);
      expect(f(5)).toBe(2);
    }
    expect(assemble(listing((c) => c))).not.toEqual(assemble(listing((c) => block('added', c))));
  });

  it('refuses at assembly a branch to a label that no enclosing block or loop has', () => {
    expect(() => assemble(block('a', br('b')))).toThrow(/branch to b, which is not an enclosing block or loop/);
    expect(() => fnBody([], loop('a', brIf('nowhere', k(1))))).toThrow(/nowhere/);
  });

  it('refuses a branch to a block that has already ended (out of scope)', () => {
    expect(() => assemble([block('done'), br('done')])).toThrow(/branch to done/);
    expect(() => assemble(block('outer', loop('inner'), brIf('inner', k(0))))).toThrow(/branch to inner/);
  });

  it('refuses a block or loop that reuses a label in scope, which would capture the outer one’s branches', () => {
    expect(() => assemble(block('invalid', loop('next', block('invalid', br('invalid')))))).toThrow(
      /block named invalid inside another/,
    );
    expect(() => assemble(loop('x', loop('x')))).toThrow(/loop named x/);
    // siblings may share a name: only one is in scope at a time
    expect(() => assemble([block('ws', br('ws')), block('ws', br('ws'))])).not.toThrow();
  });

  it('refuses an empty label, so nothing can branch to an `if`', () => {
    expect(() => br('')).toThrow(/empty label/);
    expect(() => block('')).toThrow(/empty label/);
  });

  it('refuses a number that is not a byte', () => {
    for (const bad of [256, -1, 1.5, NaN]) expect(() => assemble([0x41, bad])).toThrow(/is not a byte/);
  });
});

describe('wasmModule', () => {
  it('builds a module that compiles and runs: call by index, exports in order, memory of the given size', () => {
    const addOne = { params: [I32], results: [I32], locals: [], body: add(get(0), k(1)) };
    // g(p): mem[p] = addOne(mem[p]) + x (a local), returns the new value
    const g = {
      params: [I32],
      results: [I32],
      locals: [[1, I32]] as const,
      body: [set(1, k(40)), st32(get(0), add(call(0, ld32(get(0))), get(1))), ld32(get(0))],
      export: 'g',
    };
    const bytes = wasmModule([addOne, g], { minPages: 2, export: 'mem' });
    const { exports } = new api.Instance(new api.Module(bytes), {});
    expect(Object.keys(exports)).toEqual(['g', 'mem']);
    const mem = exports['mem'] as { buffer: ArrayBuffer };
    expect(mem.buffer.byteLength).toBe(2 * 65536);
    new Int32Array(mem.buffer)[2] = 1;
    expect((exports['g'] as (p: number) => number)(8)).toBe(42);
    expect(new Int32Array(mem.buffer)[2]).toBe(42);
  });

  it('refuses a function list with a gap, where `call` indexes would shift', () => {
    const f = { params: [], results: [I32], locals: [], body: k(1) };
    const fns = [f];
    fns[2] = f;
    expect(() => wasmModule(fns, { minPages: 1, export: 'm' })).toThrow(/no function at index 1/);
  });
});
