// Fault injection for the crash-consistency tests: `MURMUR_GC_FAILPOINT=<name>` makes the process
// SIGKILL itself when it reaches the named point, so a test can land a kill exactly where timing
// alone rarely does (after a rename, between the temp's fsync and the rename).
// Guarantees: without the variable (every real run) a failpoint is a comparison with undefined,
// read once at start-up; it never changes behaviour otherwise; nothing is written or logged.
const armed = process.env['MURMUR_GC_FAILPOINT'];

/** The named points (kept in one place so tests and code cannot drift apart). */
export type FailpointName = 'rewrite:before_commit' | 'rewrite:after_rename' | 'remove:after_trash_rename' | 'audit:after_intent';

export function failpoint(name: FailpointName): void {
  if (armed === name) process.kill(process.pid, 'SIGKILL');
}
