// The one voice of a sweep: the words every action is told in, a dry run's ("would …") and a
// real run's, for the report's table, its -v item lines and the per-item log lines.
// Guarantees: every place that tells an action takes its verb from `wordsOf(action)`, so the
// table, -v and the logs name the same deed (a held item is "held", never "removed"); whether
// the would- or the did-form is said is decided by `say` alone, from the run's mode.
import type { Action } from '../schema/json-schemas.js';

/** The two forms of one phrase: what a dry run says, what a real run says. */
export type Said = readonly [would: string, did: string];

/** The words of one kind of action, in each place it is told. */
export interface Telling {
  /** a per-item log line */
  log: Said;
  /** the verb phrase of a -v item line (a dry run puts "would " before it) */
  item: string;
  /** the first cell of a report table row */
  row: Said;
}

/** tmpfiles' log_action(would, doing): the would-form in a dry run, the did-form in a real one. */
export function say(dry: boolean, [would, did]: Said): string {
  return dry ? would : did;
}

/** The -v item verb: `remove session` in a real run, `would remove session` in a dry run. */
export function sayItem(dry: boolean, t: Telling): string {
  return say(dry, [`would ${t.item}`, t.item]);
}

const WORDS = {
  removeSession: {
    log: ['would remove session', 'session removed'],
    item: 'remove session',
    row: ['would remove sessions', 'removed sessions'],
  },
  holdSession: {
    log: ['would hold session', 'session held'],
    item: 'hold session',
    row: ['would hold sessions', 'held sessions'],
  },
  removeRecord: {
    log: ['would remove record', 'record removed'],
    item: 'remove record',
    row: ['would remove records', 'removed records'],
  },
  holdRecord: {
    log: ['would hold record', 'record held'],
    item: 'hold record',
    row: ['would hold records', 'held records'],
  },
  truncate: {
    log: ['would truncate record', 'record truncated'],
    item: 'truncate record',
    row: ['would truncate records', 'truncated records'],
  },
  purge: {
    log: ['would delete a held item for good', 'held item deleted for good'],
    item: 'delete for good',
    row: ['would purge held items', 'purged held items'],
  },
  lost: {
    log: ['would mark background command lost', 'background command marked lost'],
    item: 'mark lost:',
    row: ['would mark lost', 'marked lost'],
  },
  tornTail: {
    log: ['would terminate the torn last line', 'torn last line terminated'],
    item: 'terminate the torn last line of',
    row: ['would fix torn lines', 'fixed torn lines'],
  },
  chmod: { log: ['would reassert mode', 'mode reasserted'], item: 'chmod', row: ['would fix modes', 'fixed modes'] },
  debris: {
    log: ['would remove a leftover', 'leftover removed'],
    item: 'remove leftover',
    row: ['would clean leftovers', 'cleaned leftovers'],
  },
  removeChild: {
    log: ['would remove beside its session', 'removed beside its session'],
    item: 'remove child workdir',
    row: ['would remove child workdirs', 'removed child workdirs'],
  },
  holdChild: {
    log: ['would hold beside its session', 'held beside its session'],
    item: 'hold child workdir',
    row: ['would hold child workdirs', 'held child workdirs'],
  },
  removeWorkLog: {
    log: ['would remove beside its session', 'removed beside its session'],
    item: 'remove work log',
    row: ['would remove work logs', 'removed work logs'],
  },
  holdWorkLog: {
    log: ['would hold beside its session', 'held beside its session'],
    item: 'hold work log',
    row: ['would hold work logs', 'held work logs'],
  },
  removeOrphan: {
    log: ['would remove orphaned child workdir', 'orphaned child workdir removed'],
    item: 'remove orphaned child workdir',
    row: ['would remove orphaned child workdirs', 'removed orphaned child workdirs'],
  },
} as const satisfies Record<string, Telling>;

/** The words of this action (a removal the undo window holds is told as a hold). */
export function wordsOf(a: Action): Telling {
  switch (a.kind) {
    case 'remove_session':
      return a.held ? WORDS.holdSession : WORDS.removeSession;
    case 'remove_record':
      return a.held ? WORDS.holdRecord : WORDS.removeRecord;
    case 'truncate_record':
      return WORDS.truncate;
    case 'purge_quarantine':
      return WORDS.purge;
    case 'shell_lost':
      return WORDS.lost;
    case 'repair_torn_tail':
      return WORDS.tornTail;
    case 'chmod':
      return WORDS.chmod;
    case 'remove_debris':
      return WORDS.debris;
    case 'remove_child_workdir':
      return a.held ? WORDS.holdChild : WORDS.removeChild;
    case 'remove_work_log':
      return a.held ? WORDS.holdWorkLog : WORDS.removeWorkLog;
    case 'remove_orphan_workdir':
      return WORDS.removeOrphan;
  }
}
