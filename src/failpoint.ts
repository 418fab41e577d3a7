// Fault injection for the crash-consistency tests: `MURMUR_GC_FAILPOINT=<name>` makes the process
// SIGKILL itself when it reaches the named point, so a test can land a kill exactly where timing
// alone rarely does (after a rename, between the temp's fsync and the rename);
// `MURMUR_GC_FAILPOINT=<name>:error` makes that point throw an I/O error instead (a failure, not a
// kill: what the code does when that step fails). `<name>@<n>` (or `<name>:error@<n>`) acts only
// the n-th time the point is reached, so a test can land on every pass of a point in a loop.
// Guarantees: without the variable (every real run) a failpoint is a comparison with undefined,
// read once at start-up; it never changes behaviour otherwise; nothing is written or logged.
const spec = /^(.*?)(?:@([1-9][0-9]*))?$/.exec(process.env['MURMUR_GC_FAILPOINT'] ?? '');
const armed = spec?.[1] || undefined;
const nth = spec?.[2] === undefined ? undefined : Number(spec[2]);
let reached = 0;

/** The named points (kept in one place so tests and code cannot drift apart). */
export type FailpointName =
  | 'rewrite:before_commit'
  | 'rewrite:after_rename'
  | 'remove:after_trash_rename'
  | 'audit:after_intent'
  /** a restore's lines (or directory) are back and that is logged; before the held item goes */
  | 'restore:after_done'
  /** a restore removes its held item(s) (`:error`: the removal fails) */
  | 'restore:remove_item'
  /** a restore's held items are gone; before its audit trace is finished */
  | 'restore:before_audit'
  /** between a session and what goes with it from beside its root (at once: after those, before the session; held: after the session's hold, before those) */
  | 'beside:session_boundary'
  /** a child workdir or work log was moved into its held session; before the audit marks it done */
  | 'beside:after_hold'
  /** names about to be made in a capsule's directory are in the registry (fsync'ed); before any is made */
  | 'registry:after_place';

export function failpoint(name: FailpointName): void {
  if (armed === undefined || (armed !== name && armed !== `${name}:error`) || (nth !== undefined && ++reached !== nth))
    return;
  if (armed === name) process.kill(process.pid, 'SIGKILL');
  throw Object.assign(new Error(`EIO: injected failure at ${name}`), { code: 'EIO' });
}
