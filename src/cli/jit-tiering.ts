// How soon V8 hands a hot function to its optimizing compiler (TurboFan), set for a process
// that mostly lives for one sweep (docs/benchmarks.md, "Start-up").
// Guarantees:
// - Only a tier-up threshold changes: when a function is optimized, never what any code does.
//   The optimized code and the unoptimized code compute the same values; a daemon reaches the
//   same optimized code, a few sweeps later.
// - Set only on the V8 versions whose flag is known (Node 20: V8 11, `--interrupt-budget`; Node
//   22 and 24: V8 12 and 13, `--invocation-count-for-turbofan`), each three times its default.
//   On any other V8 nothing is set, so V8 never prints an "unrecognized flag" error.
// - A threshold given on node's own command line (`node --interrupt-budget=… bin.js`) is kept.
// Why: a one-shot warm sweep of 10 000 sessions on Node 20 spent ~0.23 s of its ~0.7 s of CPU in
// V8's background threads compiling functions that were hot for a few milliseconds; three times
// the default threshold cut its CPU by ~10% (bench/run.mjs), with no change at 100 000 sessions.
import { setFlagsFromString } from 'node:v8';

/** The flag that sets the threshold on V8 `major`, three times its default; undefined: none known. */
export function tierUpFlag(v8Version: string): string | undefined {
  const major = Number(v8Version.split('.')[0]);
  if (major === 11) return '--interrupt-budget=202752'; // default 67584 (bytes of bytecode run)
  if (major === 12 || major === 13) return '--invocation-count-for-turbofan=9000'; // default 3000
  return undefined;
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
