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
    // The machines have 2 cores. Most test files wait on fsync and on the CLI processes they
    // spawn, so a third file at once fills that time (the suite measured 232 s against ~258 s
    // with two at once); the tests hold under load by design (failpoints, injected delays).
    fileParallelism: true,
    maxWorkers: 3,
  },
});
