// After a sweep that left a large heap, the daemon runs one full garbage collection. A sweep's
// working set (every session and record of the scan, the plan) is garbage once its summary is
// written, but V8 only collects old objects when new allocation pushes it to, which an idle daemon
// never does: the next sweep then built its working set beside the last one's (peak RSS 154-160 MB
// at 100 000 sessions, against 141-145 MB for a single sweep).
// A small heap is left alone: collecting it frees a few MB and costs the next sweep more CPU than
// that is worth (V8 throws away optimized code that referred to the objects collected, and compiles
// it again: 0.5 s a sweep became 0.7 s at 10 000 sessions, whose heap is about 20 MB).
// The collector is V8's `gc` (the --expose-gc flag, set at run time), taken from a fresh context:
// no global `gc` is exposed to the rest of the process.
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Collect after a sweep only when the heap is at least this large (bytes). */
export const COLLECT_ABOVE_HEAP_BYTES = 48 * 1024 * 1024;

let collect: (() => void) | null | undefined;

/**
 * One full, synchronous garbage collection when the heap is at least `minHeapBytes`; whether it
 * ran (false also when the runtime refuses the flag).
 */
export function collectSweepGarbage(minHeapBytes = COLLECT_ABOVE_HEAP_BYTES): boolean {
  if (getHeapStatistics().total_heap_size < minHeapBytes) return false;
  if (collect === undefined) {
    try {
      setFlagsFromString('--expose-gc');
      const gc: unknown = runInNewContext('gc');
      collect = typeof gc === 'function' ? (gc as () => void) : null;
    } catch {
      collect = null;
    }
  }
  if (!collect) return false;
  collect();
  return true;
}
