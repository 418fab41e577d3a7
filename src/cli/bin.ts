#!/usr/bin/env -S node --max-semi-space-size=2
// Entry point of the `murmur-gc` executable: runs the CLI and sets the exit code.
// The shebang caps V8's young generation at 2 MiB per semi-space (default 16): the default young
// generation alone adds ~25-30 MB of RSS to a sweep; measured in bench/run.mjs
// (docs/benchmarks.md), with no measurable CPU cost.
// The early-signal recorder is evaluated before the rest of the CLI is loaded (dynamic import),
// so a daemon is not killed by a SIGTERM/SIGHUP that arrives during its start-up.
import './early-signals.js';

const { ExitCodes, describeError } = await import('../errors.js');
const { main } = await import('./main.js');

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`murmur-gc: ${describeError(err)}\n`);
    process.exitCode = ExitCodes.failed;
  },
);
