// The WebAssembly module's bytes are pinned (src/json/README.md, "Changing the module"): a change
// to the listing that is meant to be a refactor (renaming a label, regrouping an expression,
// moving a helper into wasm-asm.ts) must assemble to the very same module, and a change that is
// meant to change the module shows up here as a reviewed new digest, after the parity tests pass.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { moduleBytes } from '../../src/json/doc-wasm.js';

const api = (globalThis as unknown as { WebAssembly: { validate(bytes: Uint8Array): boolean } }).WebAssembly;

const sha256 = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

describe('the document module', () => {
  it('assembles to the reviewed bytes, SIMD and scalar variants', () => {
    const simd = moduleBytes(true);
    const scalar = moduleBytes(false);
    expect([simd.length, sha256(simd)]).toEqual([
      2333,
      'dd9882be81eb8d2809117757da14303a281bfe58eec8d82ee8188e1add0b8ece',
    ]);
    expect([scalar.length, sha256(scalar)]).toEqual([
      2124,
      'fd4cfa93a198f87a5b6baf284c65f661b44539992ab8cddac61efd16eb67a1ce',
    ]);
  });

  it('is a valid WebAssembly module in both variants', () => {
    expect(api.validate(moduleBytes(true))).toBe(true);
    expect(api.validate(moduleBytes(false))).toBe(true);
  });
});
