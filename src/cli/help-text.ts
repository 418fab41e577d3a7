// The words `murmur-gc --help` and the man page (src/cli/manpage.ts) share: exit codes, examples
// and the configuration's top-level keys. Guarantees: pure data; one source, so the two cannot
// disagree (test/cli/manpage.test.ts checks the page against --help and config.example.yaml).
import { ExitCodes } from '../errors.js';

export const EXIT_CODES: readonly (readonly [number, string])[] = [
  [ExitCodes.ok, 'done (a sweep without errors; status and history answered)'],
  [ExitCodes.failed, 'finished with errors, a refusal, or history --target found nothing'],
  [
    ExitCodes.usage,
    'usage error or invalid configuration (nothing touched; status, history, quarantine ls still show the home)',
  ],
  [ExitCodes.busy, 'another murmur-gc sweep or writer holds the lock (try again later)'],
];

export const EXAMPLES: readonly (readonly [string, string])[] = [
  ['murmur-gc --dry-run', 'what a sweep would remove, truncate and fix'],
  ['murmur-gc -v', 'sweep now, listing every item'],
  ['murmur-gc --json > report.json', 'sweep now, one JSON report on stdout'],
  ['murmur-gc status', 'daemon or timer, last sweep, next run, store sizes'],
  ['murmur-gc history --target ses_…', 'what happened to it: removed, held, restored, …'],
  ['murmur-gc explain ses_…', 'why it is kept or taken, and when that changes'],
  ['murmur-gc conversation ls', 'conversation records, sizes, truncations'],
  ['murmur-gc quarantine ls', 'what the undo window holds, until when'],
  ['murmur-gc restore ses_…', 'put a held session (or context) back, protected'],
  ['murmur-gc protect ses_…', 'keep a session (or context) from every sweep'],
  ['murmur-gc protection ls', 'what is protected; murmur-gc release TARGET undoes it'],
  ['murmur-gc daemon', 'sweep on the configured schedule (systemd unit)'],
  ['murmur-gc config check', 'every configuration error at once, then the effective policy'],
];

/** The configuration's top-level keys (config.example.yaml explains each in full). */
export const CONFIG_KEYS: readonly (readonly [string, string])[] = [
  [
    'home',
    'the Murmur home (default ~/.murmur); --home beats it. A system path (/, /etc, $HOME itself…) or a directory that is not recognisably a murmur home (none of conversations/, running/, state/, gc/… in it, and not empty) is refused, exit 2.',
  ],
  ['force_home', 'true: use home even when it would be refused (as --force-home does; default false).'],
  ['schedule', 'when the daemon sweeps: cron syntax, 5 or 6 fields (default every 30 minutes).'],
  ['run_on_start', 'the daemon sweeps once when it starts (default true).'],
  ['random_delay', 'a random wait of up to this duration before each scheduled sweep (default 0).'],
  ['live_grace', 'a session without session_end is live this long after its last trace write (default 1h).'],
  ['max_delete', '{count, fraction}: the most one sweep may remove from one store (blast radius).'],
  ['keep_free', "free space to keep on the home's filesystem, a size or a percentage (default none)."],
  ['quarantine', 'the undo window: removals are held this long before they are deleted (default none).'],
  [
    'sessions',
    'sessions roots (root, workdir or project), each with an optional retain {max_sessions, max_age} and max_bytes.',
  ],
  [
    'records',
    'conversation record stores (capsule or manifest, store), each with an optional retain {max_messages, max_age} and max_bytes.',
  ],
  ['audit', "retain {max_sessions, max_age} of murmur-gc's own audit traces (default max_age 90d)."],
  [
    'metrics',
    'textfile: a .prom file for node_exporter, replaced after every sweep (default none); interval: the sweep interval its alerts assume.',
  ],
  ['log', 'level: trace, debug, info, warn, error, fatal or silent (default info).'],
];
