#!/usr/bin/env node
// Entry point of the `murmur-gc` executable: runs the CLI and sets the exit code.
import { ExitCodes, describeError } from '../errors.js';
import { main } from './main.js';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`murmur-gc: ${describeError(err)}\n`);
    process.exitCode = ExitCodes.failed;
  },
);
