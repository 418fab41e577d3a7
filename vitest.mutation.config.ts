// The unit tests of the pure core, for `npm run test:mutation` (stryker.config.mjs,
// docs/mutation.md): fast, no fs, no child processes. Not used by `npm test`.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'test/plan/**/*.test.ts',
      'test/config/retain.test.ts',
      'test/config/size.test.ts',
      'test/runtime/record.test.ts',
      'test/runtime/ids.test.ts',
      'test/gchome/quarantine-layout.test.ts',
      'test/parity/message-lines.test.ts',
      'test/parity/retain-yaml.test.ts',
      'test/parity/session-order.test.ts',
    ],
    passWithNoTests: false,
    // A loaded machine (stryker's own processes, others' work) slows the fuzz tests down.
    testTimeout: 60_000,
  },
});
