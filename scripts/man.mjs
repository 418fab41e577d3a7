#!/usr/bin/env node
// Writes man/murmur-gc.1 from the built CLI's commander definitions (the same ones --help prints).
// Run by `npm run man` (which builds first); test/cli/manpage.test.ts fails when the checked-in
// page differs from what this writes.
import { fileURLToPath } from 'node:url';
import fse from 'fs-extra';
import { buildProgram } from '../dist/cli/main.js';
import { renderManPage } from '../dist/cli/manpage.js';
import { VERSION } from '../dist/version.js';

const out = fileURLToPath(new URL('../man/murmur-gc.1', import.meta.url));
fse.outputFileSync(out, renderManPage(buildProgram(), VERSION));
process.stdout.write(`wrote ${out}\n`);
