// The one WebAssembly assembler of murmur-gc: structured control flow with named labels, expressions
// as nested arrays, and a module builder. string-wasm.ts and doc-wasm.ts write their functions with
// it (docs: src/json/README.md, "Changing the module"). Pure; no dependency, no toolchain.
//
// Guarantees:
// - Every branch names its target: `br(label)` / `brIf(label, cond)` is encoded with the depth of
//   the innermost enclosing `block` or `loop` of that name, counted when the function is assembled.
//   Adding, removing or wrapping blocks therefore never moves a branch to another target.
// - Assembly throws (an Error naming the label) and emits nothing when a branch names a label that
//   is not an enclosing `block`/`loop` (unknown, or one whose block has already ended), when a
//   `block`/`loop` reuses a label already in scope (it would capture the outer one's branches), or
//   when a label is empty. An `if` has no label: it counts for depth, and no branch can target it.
// - Any other number in a listing is emitted as one byte and must be an integer in [0, 255].
// - Expressions are postfix once flattened: `add(get(a), k(1))` emits `local.get a; i32.const 1;
//   i32.add`, operands first, in the order written. Types and stack balance are not checked here;
//   WebAssembly validates them when the module is compiled (the parity tests compile both variants).

/** Value types. */
export const I32 = 0x7f;
export const V128 = 0x7b;
/** The block type of a block, loop or if that leaves no value. */
const VOID = 0x40;

/** Unsigned LEB128 of a non-negative integer below 2^32. */
export function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return out;
}

/** Signed LEB128 of a 32-bit integer. */
export function sleb(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (b & 0x40) === 0) || (n === -1 && (b & 0x40) !== 0)) {
      out.push(b);
      return out;
    }
    out.push(b | 0x80);
  }
}

// ---- structured control flow --------------------------------------------------------------------

class Ctl {
  constructor(
    readonly kind: 'block' | 'loop' | 'if' | 'br' | 'brIf',
    /** The name of a block or loop, the target of a branch; null for an `if`. */
    readonly label: string | null,
    readonly body: readonly Code[] = [],
    readonly els: readonly Code[] | undefined = undefined,
    readonly type = VOID,
  ) {}
}

/** A listing: bytes, control constructs, and arrays of them (flattened in order). */
export type Code = number | Ctl | readonly Code[];

const OPEN = { block: 0x02, loop: 0x03, if: 0x04 } as const;

function emit(c: Code, labels: (string | null)[], out: number[]): void {
  if (typeof c === 'number') {
    if (!Number.isInteger(c) || c < 0 || c > 0xff) throw new Error(`wasm-asm: ${c} is not a byte`);
    out.push(c);
    return;
  }
  if (Array.isArray(c)) {
    for (const x of c as readonly Code[]) emit(x, labels, out);
    return;
  }
  const ctl = c as Ctl;
  if (ctl.kind === 'br' || ctl.kind === 'brIf') {
    const at = ctl.label === null ? -1 : labels.lastIndexOf(ctl.label);
    if (at < 0) throw new Error(`wasm-asm: a branch to ${ctl.label}, which is not an enclosing block or loop`);
    out.push(ctl.kind === 'br' ? 0x0c : 0x0d, ...uleb(labels.length - 1 - at));
    return;
  }
  if (ctl.label !== null && labels.includes(ctl.label)) {
    throw new Error(`wasm-asm: a ${ctl.kind} named ${ctl.label} inside another of that name`);
  }
  out.push(OPEN[ctl.kind], ctl.type);
  labels.push(ctl.label);
  emit(ctl.body, labels, out);
  if (ctl.els !== undefined) {
    out.push(0x05);
    emit(ctl.els, labels, out);
  }
  labels.pop();
  out.push(0x0b);
}

function named(label: string): string {
  if (label === '') throw new Error('wasm-asm: an empty label');
  return label;
}

/** `block $label ... end`: `br(label)` inside jumps past its end. */
export const block = (label: string, ...body: Code[]): Code => new Ctl('block', named(label), body);
/** `loop $label ... end`: `br(label)` inside jumps back to its start. */
export const loop = (label: string, ...body: Code[]): Code => new Ctl('loop', named(label), body);
/** `cond; if ... end` (no label, no value). */
export const when = (cond: Code, ...then: Code[]): Code => [cond, new Ctl('if', null, then)];
/** `cond; if ... else ... end`; with `type` (e.g. I32) both arms leave a value of that type. */
export const ifElse = (cond: Code, then: Code[], els: Code[], type = VOID): Code => [
  cond,
  new Ctl('if', null, then, els, type),
];
export const br = (label: string): Code => new Ctl('br', named(label));
export const brIf = (label: string, cond: Code): Code => [cond, new Ctl('brIf', named(label))];

/** The bytes of a listing outside any function's label scope (a function body is `fnBody`). */
export function assemble(code: Code): number[] {
  const out: number[] = [];
  emit(code, [], out);
  return out;
}

// ---- instructions (i32 unless named otherwise) ----------------------------------------------------

export const get = (x: number): Code => [0x20, ...uleb(x)];
export const set = (x: number, v: Code): Code => [v, 0x21, ...uleb(x)];
export const tee = (x: number, v: Code): Code => [v, 0x22, ...uleb(x)];
/** `i32.const v`. */
export const k = (v: number): Code => [0x41, ...sleb(v)];
const bin =
  (opcode: number) =>
  (a: Code, b: Code): Code => [a, b, opcode];
export const eq = bin(0x46);
export const ne = bin(0x47);
export const ltS = bin(0x48);
export const ltU = bin(0x49);
export const gtU = bin(0x4b);
export const geU = bin(0x4f);
export const add = bin(0x6a);
export const sub = bin(0x6b);
export const and = bin(0x71);
export const or = bin(0x72);
export const shl = bin(0x74);
export const eqz = (a: Code): Code => [a, 0x45];
export const ctz = (a: Code): Code => [a, 0x68];
/** `x += by`. */
export const inc = (x: number, by = 1): Code => set(x, add(get(x), k(by)));
/** `cond ? a : b` as a value (`select`: both are evaluated). */
export const select = (cond: Code, a: Code, b: Code): Code => [a, b, cond, 0x1b];
/** Unsigned byte at addr + off (memory 0, alignment 1). */
export const ld8 = (addr: Code, off = 0): Code => [addr, 0x2d, 0x00, ...uleb(off)];
/** i32 at addr + off (memory 0, alignment hint 1: any address). */
export const ld32 = (addr: Code, off = 0): Code => [addr, 0x28, 0x00, ...uleb(off)];
export const st8 = (addr: Code, v: Code, off = 0): Code => [addr, v, 0x3a, 0x00, ...uleb(off)];
export const st32 = (addr: Code, v: Code, off = 0): Code => [addr, v, 0x36, 0x00, ...uleb(off)];
/** Calls function `fn` (its index in the module) with `args` pushed in order. */
export const call = (fn: number, ...args: Code[]): Code => [args, 0x10, ...uleb(fn)];
export const ret = (v: Code): Code => [v, 0x0f];

// SIMD (0xfd prefix; every sub-opcode used here is < 128, one LEB byte).
/** 16 bytes at addr + off. */
export const v128Load = (addr: Code, off = 0): Code => [addr, 0xfd, 0x00, 0x00, ...uleb(off)];
/** `v128.const` with every byte `b`. */
export const splat8 = (b: number): Code => [0xfd, 0x0c, ...new Array<number>(16).fill(b)];
export const i8x16Eq = (a: Code, b: Code): Code => [a, b, 0xfd, 0x23];
export const i8x16LtU = (a: Code, b: Code): Code => [a, b, 0xfd, 0x26];
export const v128Or = (a: Code, b: Code): Code => [a, b, 0xfd, 0x50];
/** The top bit of each of the 16 bytes, as bits 0..15 of an i32. */
export const bitmask = (a: Code): Code => [a, 0xfd, 0x64];

// ---- functions and the module ---------------------------------------------------------------------

/** One function: its signature, its locals after the parameters, its body, its export name if any. */
export interface WasmFunction {
  readonly params: readonly number[];
  readonly results: readonly number[];
  /** Runs of locals: [count, type], numbered after the parameters in this order. */
  readonly locals: readonly (readonly [number, number])[];
  readonly body: Code;
  readonly export?: string;
}

/** A function's code entry (without its size): the locals, the body, `end`. */
export function fnBody(locals: WasmFunction['locals'], body: Code): number[] {
  const out: number[] = [...uleb(locals.length)];
  for (const [n, t] of locals) out.push(...uleb(n), t);
  emit(body, [], out);
  out.push(0x0b);
  return out;
}

function section(id: number, body: number[]): number[] {
  return [id, ...uleb(body.length), ...body];
}

function name(s: string): number[] {
  if (!/^[\x20-\x7e]*$/.test(s)) throw new Error(`wasm-asm: export name ${JSON.stringify(s)} is not printable ASCII`);
  return [...uleb(s.length), ...Array.from(s, (c) => c.charCodeAt(0))];
}

/**
 * A module of `functions` (function i has index i, the index `call` takes) and one memory of at
 * least `memory.minPages` pages with no maximum, exported as `memory.export`. Signatures are
 * shared in the order they first occur; exports come in function order, the memory last.
 */
export function wasmModule(
  functions: readonly WasmFunction[],
  memory: { minPages: number; export: string },
): Uint8Array {
  for (let i = 0; i < functions.length; i++)
    if (!(i in functions)) throw new Error(`wasm-asm: no function at index ${i}`);
  const types: string[] = [];
  const typeBytes: number[] = [];
  const funcTypes: number[] = [];
  for (const f of functions) {
    const sig = [0x60, ...uleb(f.params.length), ...f.params, ...uleb(f.results.length), ...f.results];
    let i = types.indexOf(sig.join());
    if (i < 0) {
      i = types.push(sig.join()) - 1;
      typeBytes.push(...sig);
    }
    funcTypes.push(...uleb(i));
  }
  const exports: number[] = [];
  let nExports = 0;
  functions.forEach((f, i) => {
    if (f.export === undefined) return;
    exports.push(...name(f.export), 0x00, ...uleb(i));
    nExports++;
  });
  exports.push(...name(memory.export), 0x02, ...uleb(0));
  nExports++;
  const code: number[] = [...uleb(functions.length)];
  for (const f of functions) {
    const b = fnBody(f.locals, f.body);
    code.push(...uleb(b.length), ...b);
  }
  return new Uint8Array([
    0x00,
    0x61,
    0x73,
    0x6d,
    0x01,
    0x00,
    0x00,
    0x00, // magic, version 1
    ...section(1, [...uleb(types.length), ...typeBytes]),
    ...section(3, [...uleb(functions.length), ...funcTypes]),
    ...section(5, [1, 0x00, ...uleb(memory.minPages)]), // one memory: min pages, no max
    ...section(7, [...uleb(nExports), ...exports]),
    ...section(10, code),
  ]);
}
