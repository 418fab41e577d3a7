// How soon V8 hands a hot function to its optimizing compiler (TurboFan), set for a process
// that mostly lives for one sweep (docs/benchmarks.md, "Start-up").
// Guarantees:
// - Only a tier-up threshold changes: when a function is optimized, never what any code does.
//   The optimized code and the unoptimized code compute the same values; a daemon reaches the
//   same optimized code, a few sweeps later.
// - Set only on V8 11 (Node 20: `--interrupt-budget`, three times its default), where it was
//   measured to pay. Node 22 and 24 (V8 12, 13: Maglev compiles first, the flag there is
//   `--invocation-count-for-turbofan`) gained 0.97× CPU for 1.05× wall time, so nothing is set
//   there, nor on any other V8 (V8 prints "unrecognized flag" for one it does not know).
// - A threshold given on node's own command line (`node --interrupt-budget=… bin.js`) is kept.
// Why: a one-shot warm sweep of 10 000 sessions on Node 20 spent ~0.23 s of its ~0.65 s of CPU
// in V8's background threads compiling functions that were hot for a few milliseconds; three
// times the default threshold cut its CPU by ~12% (paired runs; docs/benchmarks.md), with no
// change at 100 000 sessions.
import { setFlagsFromString } from 'node:v8';

/** The flag that sets the threshold on this V8, three times its default; undefined: none to set. */
export function tierUpFlag(v8Version: string): string | undefined {
  const major = Number(v8Version.split('.')[0]);
  return major === 11 ? '--interrupt-budget=202752' : undefined; // default 67584 (bytes of bytecode run)
}

/** Sets the threshold (see above) unless node's command line set one; the flag set, if any. */
export function tuneTierUp(
  v8Version: string = process.versions.v8,
  execArgv: readonly string[] = process.execArgv,
): string | undefined {
  const flag = tierUpFlag(v8Version);
  if (flag === undefined) return undefined;
  const name = flag.slice(0, flag.indexOf('='));
  // (V8 reads `_` in a flag's name as `-`)
  if (execArgv.some((a) => (a.split('=')[0] ?? '').replace(/_/g, '-') === name)) return undefined;
  setFlagsFromString(flag);
  return flag;
}
