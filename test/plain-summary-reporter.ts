// A vitest reporter that ends the run with one plain line, `vitest: N passed, N failed, N skipped`,
// which CI reads as the run's result (vitest's own summary is coloured and in another shape).
// Counting: every test case by its final state; a test file that failed outside any test (import
// error, syntax error, failing beforeAll/afterAll, crashed worker) counts as one failure; every
// unhandled error counts as one failure; tests left pending (never finished) count as failures; a
// run that vitest ends as failed or interrupted with none of the above (e.g. no test files found)
// counts as one failure. The line is written last, without colour.
import type { Reporter, SerializedError, TestModule, TestRunEndReason } from 'vitest/node';

export interface Counts {
  passed: number;
  failed: number;
  skipped: number;
}

export function countResults(
  testModules: ReadonlyArray<TestModule>,
  unhandledErrors: ReadonlyArray<SerializedError>,
  reason?: TestRunEndReason,
): Counts {
  const counts: Counts = { passed: 0, failed: 0, skipped: 0 };
  for (const mod of testModules) {
    let failedHere = 0;
    for (const test of mod.children.allTests()) {
      const state = test.result().state;
      if (state === 'passed') counts.passed += 1;
      else if (state === 'skipped') counts.skipped += 1;
      else failedHere += 1; // 'failed', or 'pending' = never finished
    }
    // A module that failed without a failed test: import/collection error or a hook outside tests.
    const moduleFailed = mod.errors().length > 0 || !mod.ok() || mod.state() === 'failed';
    if (moduleFailed && failedHere === 0) failedHere = 1;
    // A module that never ran (still queued/pending at the end) did not pass.
    if (failedHere === 0 && (mod.state() === 'queued' || mod.state() === 'pending')) failedHere = 1;
    counts.failed += failedHere;
  }
  counts.failed += unhandledErrors.length;
  // The run failed or was interrupted for a reason not visible above (no test files found,
  // Ctrl-C, bail): never report that as `0 failed`.
  if (reason !== undefined && reason !== 'passed' && counts.failed === 0) counts.failed = 1;
  return counts;
}

export default class PlainSummaryReporter implements Reporter {
  onTestRunEnd(
    testModules: ReadonlyArray<TestModule>,
    unhandledErrors: ReadonlyArray<SerializedError>,
    reason: TestRunEndReason,
  ): void {
    const { passed, failed, skipped } = countResults(testModules, unhandledErrors, reason);
    process.stdout.write(`\nvitest: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
