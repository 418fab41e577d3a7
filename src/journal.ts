// Whether stderr is the systemd journal: systemd sets JOURNAL_STREAM to the `dev:ino` of the stream
// it connects to stderr, so a process run by a unit can tell the journal from a pipe, a file or a
// terminal it was handed later. No dependency (the one-shot sweep asks before loading the logger).
import { fstatSync } from 'node:fs';

/**
 * True when stderr is the journal's stream: systemd sets JOURNAL_STREAM=<dev>:<ino> of the
 * stream it connected, and a child whose stderr was redirected elsewhere must not match.
 */
export function underJournal(env: NodeJS.ProcessEnv = process.env): boolean {
  const m = /^(\d+):(\d+)$/.exec(env['JOURNAL_STREAM'] ?? '');
  if (!m) return false;
  try {
    const st = fstatSync(2, { bigint: true });
    return st.dev === BigInt(m[1] ?? '') && st.ino === BigInt(m[2] ?? '');
  } catch {
    return false;
  }
}
