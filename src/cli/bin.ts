#!/usr/bin/env -S node --max-semi-space-size=2 --heap-growing-percent=20
// Entry point of the `murmur-gc` executable: runs the CLI and sets the exit code.
// The shebang caps V8's young generation at 2 MiB per semi-space (default 16): the default young
// generation alone adds ~25-30 MB of RSS to a sweep; measured in bench/run.mjs
// (docs/benchmarks.md), with no measurable CPU cost. It also fixes the old generation's growth
// at 1.2× what the last full GC kept (V8 otherwise picks 1.1-4× from how fast its GC threads run,
// so on a loaded machine a 100 000-session sweep peaked anywhere from 134 to 163 MB; with it
// 134-137 MB, CPU unchanged within noise).
// The early-signal recorder is evaluated before the rest of the CLI is loaded (dynamic import),
// so a daemon is not killed by a SIGTERM/SIGHUP that arrives during its start-up. A lone
// `--version` is answered before the CLI is loaded at all.
// The shipped bin is this file bundled (scripts/bundle.mjs): each dynamic import below and in the
// command modules is a chunk loaded only by the commands that need it, and on Node >= 22 the
// chunks' compiled code is cached per user (compile-cache.ts) before any of them is loaded, and
// V8's tier-up threshold is raised for a process that mostly lives for one sweep (jit-tiering.ts).
import './early-signals.js';
import { enableCompileCache } from './compile-cache.js';
import { tuneTierUp } from './jit-tiering.js';

enableCompileCache();
tuneTierUp();

const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  // The same text commander prints for it, without loading the CLI (~300 modules).
  const { versionText } = await import('../version.js');
  process.stdout.write(versionText() + '\n');
} else {
  void run(argv); // not awaited here, as before: the exit code is set when main settles
}

async function run(args: string[]): Promise<void> {
  const { ExitCodes, describeError } = await import('../errors.js');
  const { main } = await import('./main.js');
  main(args).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`murmur-gc: ${describeError(err)}\n`);
      process.exitCode = ExitCodes.failed;
    },
  );
}
