// collectSweepGarbage: one full collection when the heap is at least the threshold, none below it
// (a small heap is left to V8: collecting it costs the next sweep more than it frees).
import { describe, expect, it } from 'vitest';
import { collectSweepGarbage } from '../../src/daemon/release-memory.js';

/** A WeakRef to an unreachable object, made in an earlier job (a WeakRef keeps its target through the job that made it). */
async function garbage(): Promise<WeakRef<object>> {
  const ref = new WeakRef({ sessions: Array.from({ length: 50_000 }, (_, i) => ({ i })) });
  await new Promise((r) => setImmediate(r));
  return ref;
}

describe('collectSweepGarbage', () => {
  it('below the threshold it does not collect', () => {
    expect(collectSweepGarbage(Number.POSITIVE_INFINITY)).toBe(false);
  });

  it('at or above the threshold it collects at once, and exposes no global gc', async () => {
    const ref = await garbage();
    expect(collectSweepGarbage(0)).toBe(true);
    expect(ref.deref()).toBeUndefined();
    expect((globalThis as { gc?: unknown }).gc).toBeUndefined();
  });
});
