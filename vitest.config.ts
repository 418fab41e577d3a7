import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    passWithNoTests: false,
    // The plain reporter must stay last: its `N passed, N failed` line is what CI reads.
    reporters: ['default', './test/plain-summary-reporter.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Child processes (integration tests spawn the CLI) behave better in forked workers.
    pool: 'forks',
    // The machines have 2 cores: at most 2 test files at once.
    fileParallelism: true,
    maxWorkers: 2,
  },
});
