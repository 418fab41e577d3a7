// The schemas of murmur-gc's --json documents (docs/json.md), in zod; docs/schemas/*.json are
// generated from them (`npm run schemas`, scripts/schemas.mjs) and a test keeps the committed
// files equal to them and validates real outputs against them.
// Guarantees: every object of every document is closed — a document with a member its schema does
// not list, at any depth, or without a required one, fails; only maps keyed by data (counts by
// code, kind or store; budgets' held items by code) take any key, and their values are typed.
// The TypeScript types of the documents (and of their parts the producers build) are derived from
// these schemas (`z.output`), so a producer that does not follow its schema fails `tsc`.
// Loaded by no command (start-up stays free of zod): shipped code imports it with `import type` only.
import { z } from 'zod';
import { COMMANDS, SCHEMA_VERSION, type JsonCommand } from './contract.js';

const head = <C extends JsonCommand>(command: C) => ({
  schema_version: z.literal(SCHEMA_VERSION),
  command: z.literal(command),
});
const num = z.number();
const int = z.number().int();
const str = z.string();
const nullableString = z.string().nullable();
/** A count per key (a code, an action kind, a store): the keys are open, each value a count. */
const counts = z.record(z.string(), int);
/** A skipped item or an error of a sweep (and a problem of the read-only views). */
const problem = z.strictObject({ target: str, code: str, detail: str });
/** Why a read-only view ran on a fallback configuration (src/cli/context.ts); null when valid. */
const configInvalid = z
  .strictObject({
    /** the configuration file (null: none, the command line was at fault) */
    file: nullableString,
    /** how many errors `murmur-gc config check` lists */
    errors: int,
    /** the first of them, in line order (file:line:column key: detail) */
    first: str,
    hint: str,
  })
  .nullable();
/**
 * What earlier removals could not remove whole and set aside (`.murmur-gc-kept.<run>.<name>`),
 * still there after this sweep tried them again: count, bytes left, when the oldest was set
 * aside, and every path.
 */
const kept = z.strictObject({ items: int, bytes: num, oldest_ms: num.nullable(), paths: z.array(str) });

// ---- sweep ------------------------------------------------------------------------------------
const sessionReason = z.enum(['max_age', 'max_sessions', 'max_bytes', 'keep_free']);
const budgetReason = z.enum(['max_bytes', 'keep_free']);
/** Where a removed item is held by the undo window (`quarantine:`), and until when. */
const heldAt = z.strictObject({ until_ms: num, path: str });
/** What this sweep would have held an item for, when keep_free took it for good instead. */
const condemnedBy = z.enum(['max_age', 'max_sessions', 'max_bytes']);
/** A child workdir or `wrk_` log that went with its parent session: both kinds have these members. */
const besideAction = <K extends 'remove_child_workdir' | 'remove_work_log'>(kind: K) =>
  z.strictObject({
    kind: z.literal(kind),
    root: str,
    target: str,
    parent_session: str,
    path: str,
    reason: sessionReason,
    bytes: num,
    held: heldAt.optional(),
  });
/** What a sweep did, or would do, item by item: every action kind, each with exactly its members. */
const action = z.discriminatedUnion('kind', [
  /**
   * A session held by the undo window (`held`) or removed for good. `condemned_by`: the rule this
   * sweep would have held it for, when keep_free took it for good instead.
   */
  z.strictObject({
    kind: z.literal('remove_session'),
    root: str,
    target: str,
    reason: sessionReason,
    bytes: num,
    condemned_by: condemnedBy.optional(),
    held: heldAt.optional(),
  }),
  z.strictObject({
    kind: z.literal('remove_record'),
    record: str,
    target: str,
    reason: z.enum(['max_age', 'max_bytes', 'keep_free']),
    path: str,
    bytes: num,
    condemned_by: condemnedBy.optional(),
    held: heldAt.optional(),
  }),
  /** an orphaned child workdir removed under its root's `children: { max_age }` (`age_ms`: since its last visible write) */
  z.strictObject({
    kind: z.literal('remove_orphan_workdir'),
    root: str,
    target: str,
    path: str,
    reason: z.literal('children_max_age'),
    bytes: num,
    age_ms: num,
  }),
  /** a child workdir or `wrk_` log that went with its parent session (`parent_session`), docs/design.md §9a */
  besideAction('remove_child_workdir'),
  besideAction('remove_work_log'),
  z.strictObject({
    kind: z.literal('truncate_record'),
    record: str,
    target: str,
    reason: z.literal('max_messages'),
    messages_dropped: int,
    kept: int,
    path: str,
    bytes: num,
    /** present when a racing writer's lines had to be placed after newer ones (they are in the record) */
    concurrent_append: z.strictObject({ lines_out_of_order: int }).optional(),
    /** the dropped lines, held by the undo window */
    held: heldAt.optional(),
  }),
  /**
   * A held item deleted for good: its window passed (`expired`), or keep_free needed the space.
   * `held_kind: unreadable`: an item of `<home>/gc/quarantine` whose item.json could not be read (its
   * target is then the item's entry name, its origin `?`).
   */
  z.strictObject({
    kind: z.literal('purge_quarantine'),
    store: z.enum(['sessions', 'records']),
    origin: str,
    target: str,
    held_kind: z.enum(['session', 'context', 'truncation', 'unreadable']),
    reason: z.enum(['expired', 'keep_free']),
    path: str,
    bytes: num,
  }),
  z.strictObject({
    kind: z.literal('shell_lost'),
    /** the session whose trace gets the `shell_lost` line */
    target: str,
    root: str,
    work_id: str,
    /** shown bounded (src/sweep/reconcile.ts shownText: whole up to 100 characters, else its ends and length) */
    binary: str,
    /** the binary's whole length (UTF-8 bytes) */
    binary_bytes: num,
    /** shown bounded, as `binary` */
    command: str,
    /** the command's whole length (UTF-8 bytes) */
    command_bytes: num,
    detached_at_ms: num,
    task_id: nullableString,
  }),
  z.strictObject({ kind: z.literal('repair_torn_tail'), record: str, target: str, path: str }),
  z.strictObject({ kind: z.literal('chmod'), path: str, from: str, to: str }),
  /** code: process_interrupted for what a killed run left; io_error for a removal that failed earlier */
  z.strictObject({
    kind: z.literal('remove_debris'),
    path: str,
    code: z.enum(['process_interrupted', 'io_error', 'runtime_debris']),
    detail: str,
    bytes: num,
  }),
]);
/** A store the blast-radius guard stops: nothing is taken there by any rule that sweep. */
const stopInfo = z.strictObject({
  /** a sessions root's path, or a record store's name */
  store: str,
  kind: z.enum(['sessions', 'records']),
  present: int,
  /** what every rule together would have taken there (held or removed) */
  would_take: int,
  /** the limit exceeded, in words */
  limit: str,
});
/** What became of every item, per store (src/sweep/fate-counts.ts; docs/fates.md). */
const fates = z.array(
  /** One store's fates: `<fate>` or `<fate>:<rule or why>` → items. */
  z.strictObject({
    /** `sessions`, `records`, or `held` (the undo window of a sessions root or of the record stores) */
    kind: z.enum(['sessions', 'records', 'held']),
    /** the sessions root, or the record store's name; for `held`, where the holds are */
    place: str,
    items: int,
    counts: z.record(z.string(), int),
  }),
);
/** The sweep report's `budget` section (src/plan/fates.ts plans it, src/sweep/steps/budget.ts reports it). */
const budget = z.strictObject({
  stores: z.array(
    z.strictObject({
      store: str,
      label: str,
      max_bytes: num.nullable(),
      /** in place once the policies acted (held items are not counted) */
      bytes_before: num,
      bytes_after: num,
      /** items the budgets removed for good here */
      removed: int,
      bytes_freed: num,
      /** items max_bytes held here (the undo window) */
      held: int,
      /** holds taken from here that keep_free purged */
      held_purged: int,
    }),
  ),
  /** null when keep_free is not configured */
  keep_free: z
    .strictObject({
      required_bytes: num,
      /** free when the sweep measured (what the reserve released, if it was, included) */
      free_bytes: num,
      /** what keep_free asked of this sweep once the policies' own frees were counted (the reserve's room included) */
      short_bytes: num,
      short_bytes_after: num,
      /** the same in inodes, where the filesystem has a fixed number of them (else null) */
      inodes: z.strictObject({ required: int, free: int, short: int, short_after: int }).nullable(),
      /** the most keep_free takes of one store's items in one sweep */
      per_sweep_percent: int,
      /** when it was short: the largest live sessions on the filesystem, largest first (never taken; most likely what fills it) */
      largest_live: z.array(z.strictObject({ path: str, bytes: num })),
      /** holds keep_free purged, items it removed for good */
      purged: int,
      removed: int,
      /** the reserve (`<home>/gc/.reserve`, src/gchome/reserve.ts): released this sweep, put back this sweep (a dry run: would be) */
      reserve: z.strictObject({
        path: str,
        released_bytes: num,
        released_inodes: int,
        /** added to what keep_free wants while the reserve is missing (0 or RESERVE_BYTES); short_bytes include it */
        room_bytes: num,
        room_inodes: int,
        /** the byte part put back this sweep (a dry run: would be) */
        put_back: z.boolean(),
        /** the inode part (`<home>/gc/.reserve-inodes`) likewise */
        put_back_inodes: z.boolean(),
      }),
    })
    .nullable(),
  unmet: z.array(
    z.strictObject({
      /** store key; absent for keep_free */
      store: str.optional(),
      label: str,
      reason: budgetReason,
      /** bytes still over the budget / still missing from keep_free */
      bytes_short: num,
      /** keep_free only: inodes still missing */
      inodes_short: int.optional(),
      /** keep_free only: removable items left out by the per-sweep bound (the most it takes of one store a sweep) */
      beyond_per_sweep: z.strictObject({ items: int, bytes: num }).optional(),
      /** what stayed, by code, with bytes */
      held: z.record(z.string(), z.strictObject({ items: int, bytes: num })),
      /** removable items left in place because all of them together would not meet the budget */
      removable: z.strictObject({ items: int, bytes: num }),
      /** items taken for this budget although it stayed unmet (a removal failed); usually 0 */
      removed: int,
      /** the largest items the budget may not touch, largest first (at most UNMET_LARGEST of src/plan/fates.ts) */
      largest: z.array(z.strictObject({ target: str, code: str, bytes: num })),
    }),
  ),
});

export const SweepSchema = z.strictObject({
  ...head('sweep'),
  dry_run: z.boolean(),
  /**
   * `--dry-run --at`: the instant this dry run forecasts (docs/forecast.md) — the sweep's clock,
   * as `started_ms` is; absent in every other report.
   */
  forecast_ms: num.optional(),
  home: str,
  home_exists: z.boolean(),
  started_ms: num,
  duration_ms: num,
  actions: z.array(action),
  skipped: z.array(problem),
  errors: z.array(problem),
  audit: nullableString,
  bytes_freed: num,
  inventory: z.strictObject({
    sessions_roots: int,
    sessions: int,
    records: int,
    traces_read: int,
    traces_cached: int,
    records_counted: int,
    records_count_cached: int,
  }),
  message: str.optional(),
  /** the configuration file in force; null = built-in defaults */
  config: nullableString.optional(),
  /** each step of the sweep in order: items, bytes, milliseconds */
  steps: z.array(z.strictObject({ step: str, items: int, bytes: num, ms: num })).optional(),
  /** disk budgets (`max_bytes`, `keep_free`), when any is configured */
  budget: budget.optional(),
  /** the undo window, when `quarantine:` is configured: what this sweep held and purged */
  quarantine: z
    .strictObject({ window_secs: num, held: int, held_bytes: num, purged: int, purged_bytes: num })
    .optional(),
  /**
   * Per `W/.murmur` root with orphaned child workdirs (no session's trace there names them):
   * how many, their allocated bytes, the oldest's last visible write, and how many this sweep
   * removed (or would) under `children: { max_age }` (docs/design.md §9a).
   */
  orphans: z
    .array(
      z.strictObject({ root: str, count: int, bytes: num, oldest_ms: num, removed: int, policy_secs: num.nullable() }),
    )
    .optional(),
  /** present while anything murmur-gc set aside is still there (each sweep tries it again) */
  kept: kept.optional(),
  /**
   * What became of every item the sweep looked at, per sessions root, record store and undo
   * window (src/sweep/fate-counts.ts): each store's counts add up to its items (docs/fates.md).
   */
  fates: fates.optional(),
  /** stores the blast-radius guard stopped this sweep (each is also a `blast_radius` error) */
  stopped: z.array(stopInfo).optional(),
  /** `config check --plan` only: the stores an unattended sweep (the daemon, the timer) would stop now */
  stopped_unattended: z.array(stopInfo).optional(),
});

// ---- config check -----------------------------------------------------------------------------
/** Where the blast-radius guard would stop an entry (src/commands/config-plan.ts): nothing is taken there by any rule that sweep. */
const entryStop = z
  .strictObject({
    limit: z.string(),
    /** what every rule together would take there */
    would_take: z.number().int(),
    present: z.number().int(),
  })
  .nullable();
const entryStops = {
  /** the guard stops it in a sweep by hand (only with max_delete set) */
  stopped: entryStop,
  /** the guard stops it in an unattended sweep (the daemon, the timer) */
  stopped_unattended: entryStop,
};
const configProblem = z.strictObject({
  severity: z.enum(['error', 'warning']),
  code: str,
  file: nullableString,
  line: int.nullable(),
  column: int.nullable(),
  key: str,
  message: str,
});
const retain = z
  .strictObject({ max_sessions: int.optional(), max_messages: int.optional(), max_age_secs: num.optional() })
  .nullable();
const policySource = z.strictObject({
  from: z.enum(['config', 'manifest', 'none']),
  manifest: nullableString,
  note: nullableString,
});

export const ConfigCheckSchema = z.strictObject({
  ...head('config check'),
  config: nullableString,
  ok: z.boolean(),
  errors: z.array(configProblem),
  warnings: z.array(configProblem),
  policy: z
    .strictObject({
      home: str,
      schedule: str,
      run_on_start: z.boolean(),
      random_delay_secs: num,
      live_grace_secs: num,
      max_delete: z.strictObject({ count: int.optional(), fraction: num.optional() }).nullable(),
      keep_free: z
        .union([
          z.strictObject({ kind: z.literal('bytes'), bytes: num, per_sweep_percent: int }),
          z.strictObject({ kind: z.literal('percent'), percent: num, per_sweep_percent: int }),
        ])
        .nullable(),
      quarantine_secs: num.nullable(),
      sessions: z.array(
        z.strictObject({
          root: str,
          origin: str,
          retain,
          source: policySource,
          max_bytes: num.nullable(),
          keep_free: z.boolean(),
          children: z.strictObject({ max_age_secs: int }).nullable(),
          problem: z.strictObject({ code: str, detail: str }).nullable(),
        }),
      ),
      records: z.array(
        z.strictObject({
          store: str,
          capsule: str,
          origin: str,
          retain,
          source: policySource,
          max_bytes: num.nullable(),
          keep_free: z.boolean(),
        }),
      ),
      audit: z.strictObject({ retain }),
      log_level: str,
      metrics_textfile: nullableString,
      metrics_interval_secs: num.nullable(),
    })
    .nullable(),
  /** `--plan` only (else null): what the values would remove now, per entry (the dry run's planning). */
  plan: z
    .strictObject({
      home: z.string(),
      home_exists: z.boolean(),
      /** why nothing was planned (a sweep at work, an error); null when it was */
      not_planned: nullableString,
      entries: z.array(
        z.discriminatedUnion('kind', [
          z.strictObject({
            kind: z.literal('sessions'),
            origin: z.string(),
            root: z.string(),
            root_exists: z.boolean(),
            /** sessions removed for good (a sweep by hand) */
            sessions: z.number().int(),
            /** sessions the undo window would hold */
            held: z.number().int(),
            bytes: z.number(),
            ...entryStops,
          }),
          z.strictObject({
            kind: z.literal('records'),
            origin: z.string(),
            store: z.string(),
            records: z.number().int(),
            held: z.number().int(),
            truncated: z.number().int(),
            messages_dropped: z.number().int(),
            bytes: z.number(),
            ...entryStops,
          }),
        ]),
      ),
    })
    .nullable(),
});

// ---- status -----------------------------------------------------------------------------------
const outcome = z.enum(['ok', 'errors', 'busy', 'failed', 'aborted']);
/**
 * start/schedule: the daemon; manual: a one-shot `murmur-gc sweep`; unattended: `murmur-gc sweep
 * --unattended` (the shipped timer's route);
 * keep_free: the daemon, early, because free space under the home fell below `keep_free`.
 */
const trigger = z.enum(['start', 'schedule', 'manual', 'unattended', 'keep_free']);
/** Actions per kind, then per store (a sessions root, a record store, `home`). */
const byKindAndStore = z.record(z.string(), counts);
const sized = z.strictObject({ count: int, bytes: num });
const rootSize = z.strictObject({
  root: str,
  exists: z.boolean(),
  sessions: int,
  bytes: num,
  unreadable: int,
  /** a `W/.murmur` root: what lives beside its sessions in W (docs/design.md §9a) */
  beside: z
    .strictObject({
      workdir: str,
      /** child workdirs a trace of the root names (they go with their session) */
      tied: sized,
      /** child workdirs no trace of the root names (`children: { max_age }` removes them) */
      orphaned: z.strictObject({ count: int, bytes: num, oldest_ms: num.nullable() }),
      /** `W/logs/wrk_<id>.log` (they go with the session whose trace names them) */
      work_logs: sized,
      /** every other entry of `W/logs` (`shell-*.log`, …): not attributable, never touched */
      other_logs: sized,
      /** the capsule's own entries of W, never touched (present ones only) */
      capsule: z.array(z.strictObject({ name: str, bytes: num })),
      /** entries that could not be read or measured (symlinked children/ or logs/ among them) */
      unreadable: int,
    })
    .optional(),
});
const items = z.strictObject({ items: int, bytes: num });
/** The next purge of the undo window: its instant, and what it takes. */
const nextPurge = z.strictObject({ at_ms: num, items: int, bytes: num });
/** One sessions root's or record store's size in the metrics (`name`: its path or name, or `.other`). */
const partSize = z.strictObject({ name: str, items: int, bytes: num });

export const StatusSchema = z.strictObject({
  ...head('status'),
  home: str,
  home_exists: z.boolean(),
  state_file: str,
  state: z.enum(['ok', 'missing', 'corrupt', 'no_home']),
  state_detail: str.optional(),
  daemon: z.strictObject({
    running: z.boolean(),
    /** why running/not running, in words */
    why: str,
    pid: int.nullable(),
    start_time: nullableString,
    started_ms: num.nullable(),
    stopped_ms: num.nullable(),
    config: nullableString,
    schedule: nullableString,
  }),
  /** the sweep in progress (only while the daemon is running) */
  current_sweep: z.strictObject({ started_ms: num, trigger }).nullable(),
  /** one sweep, as the daemon logged it (the state file's, src/gchome/state.ts) */
  last_sweep: z
    .strictObject({
      trigger,
      started_ms: num,
      ended_ms: num,
      duration_ms: num,
      outcome,
      /** actions per kind, holds apart (remove_session, hold_session, remove_record, hold_record, truncate_record, …: src/sweep/report.ts fateKind) */
      counts,
      bytes_freed: num,
      skipped: int,
      skipped_by_code: counts,
      errors: int,
      errors_by_code: counts,
      /** the gc audit session of this sweep, or null when it changed nothing worth auditing */
      audit: nullableString,
      /** a short human note (nothing to sweep, why it failed); no content */
      message: str.optional(),
      /** actions per kind, then per store (sessions root, record store, `home`); for metrics */
      actions_by_store: byKindAndStore.optional(),
      /** messages dropped by truncations */
      messages_dropped: int.optional(),
      /** what earlier removals set aside and this sweep could not remove either (`.murmur-gc-kept.*`) */
      kept: z.strictObject({ items: int, bytes: num, oldest_ms: num.nullable() }).optional(),
    })
    .nullable(),
  /** next scheduled sweep (only while the daemon is running) */
  next_run_ms: num.nullable(),
  /** murmur-gc.timer, asked only when the daemon is not running (null while it runs) */
  timer: z
    .discriminatedUnion('state', [
      z.strictObject({ state: z.literal('active'), next_run_ms: num.nullable() }),
      z.strictObject({ state: z.literal('inactive') }),
      z.strictObject({ state: z.literal('not_installed') }),
      z.strictObject({ state: z.literal('unknown'), why: str }),
    ])
    .nullable(),
  stores: z.strictObject({
    sessions: z.strictObject({ roots: z.array(rootSize), sessions: int, bytes: num }),
    records: z.strictObject({
      stores: int,
      records: int,
      bytes: num,
      unreadable: int,
      /** each record store's records and bytes, largest first (ties by name) */
      by_store: z.array(z.strictObject({ record: str, records: int, bytes: num })),
    }),
    audit: z.strictObject({ sessions: int, bytes: num, unreadable: int }),
    /**
     * What the undo window holds (src/commands/quarantine.ts listHeld): sessions, contexts, dropped
     * lines. `unverified` (absent when none): entries named like holds that murmur-gc's registry
     * does not name (not its own; docs/design.md §4a).
     */
    quarantine: z.strictObject({ items: int, bytes: num, unreadable: int, unverified: int.optional() }).optional(),
    /** set aside by removals that could not remove them whole; each sweep tries them again */
    kept: kept.optional(),
  }),
  /** the undo window's next purge and the next item a max_age policy condemns (src/plan/expiries.ts) */
  next_expiries: z.strictObject({
    purge: nextPurge.nullable(),
    /** the next item a max_age policy condemns: when, which, and where */
    max_age: z
      .strictObject({
        at_ms: num,
        /** the kind of store: a sessions root (murmur-gc's audit root `<home>/gc` among them) or a record store */
        store: z.enum(['sessions', 'records']),
        /** the sessions root's path or the record store's name */
        origin: str,
        /** the `ses_…` or context id */
        target: str,
      })
      .nullable(),
  }),
  /** the numbers the metrics textfile carries, from the same function (src/sweep/fleet.ts) */
  metrics: z.strictObject({
    version: str,
    last_sweep: z
      .strictObject({
        trigger,
        outcome,
        started_ms: num,
        ended_ms: num,
        duration_ms: num,
        bytes_freed: num,
        messages_dropped: int,
        /** kind → store → count */
        actions: byKindAndStore,
        skipped_by_code: counts,
        errors_by_code: counts,
      })
      .nullable(),
    last_success_ms: num.nullable(),
    stores: z.strictObject({ sessions: items, records: items, audit: items }),
    /** the largest 20 sessions roots / record stores by bytes, then one entry named ".other" summing the rest (docs/metrics.md) */
    roots: z.array(partSize),
    record_stores: z.array(partSize),
    /** what the undo window (`quarantine:`) holds; null when not measured */
    quarantine: items.nullable(),
    /** the undo window's next purge (src/plan/expiries.ts); null when it holds nothing or was not measured */
    next_purge: nextPurge.nullable(),
    /** when a max_age policy next condemns an item; null when none will */
    next_max_age_ms: num.nullable(),
    /** counts over every recorded sweep (the state file's `totals`); null when there is no state file */
    totals: z
      .strictObject({
        /** sweeps recorded, by outcome (every outcome present, 0 included) */
        sweeps: z.strictObject({ ok: int, errors: int, busy: int, failed: int, aborted: int }),
        /** bytes freed by those sweeps */
        bytes_freed: num,
      })
      .nullable(),
    /** the cadence sweeps should keep (src/sweep/interval.ts); null when unknown */
    interval_secs: num.nullable(),
  }),
  /** the protection list (murmur-gc protection ls): how many items no sweep acts on */
  protection: z.strictObject({ file: str, items: int, unreadable: nullableString }),
  /** the configuration file in force; null: built-in defaults */
  config: nullableString,
  config_invalid: configInvalid,
});

// ---- history ----------------------------------------------------------------------------------
/** Counts of what became of a retention line's targets. */
const fate = z.strictObject({ removed: int, held: int, purged: int, restored: int });
/**
 * What one sweep took, by kind and fate: `*_removed` removed for good at once, `*_held` taken into
 * the undo window (held now, or purged or restored since); `beside_*`: the child workdirs and
 * work logs that went with a session, and orphaned child workdirs.
 */
const sweepTotals = {
  sessions_removed: int,
  sessions_held: int,
  records_removed: int,
  records_held: int,
  beside_removed: int,
  beside_held: int,
  records_truncated: int,
  messages_dropped: int,
};
const historySweep = z.strictObject({
  /** the sweep's own audit session id (`ses_…` under `<home>/gc`) */
  audit: str,
  started_ms: num.nullable(),
  ended_ms: num.nullable(),
  duration_ms: num.nullable(),
  exit_status: nullableString,
  /**
   * How it ended, in the words `status` uses: ok, errors (exit_status failed), aborted
   * (canceled: stopped by a signal, or killed and completed by the next run), unfinished.
   */
  outcome: z.enum(['ok', 'errors', 'aborted', 'unfinished']),
  /** true when the trace has its session_end */
  complete: z.boolean(),
  /** an intent log is still present: the sweep is running or was killed and not yet recovered */
  intent_pending: z.boolean(),
  capsule_version: nullableString,
  /** true for the audit of an operator's `conversation rm|truncate` (its lines say manual_cli) */
  manual: z.boolean(),
  retention: z.array(
    z.strictObject({
      store: str,
      reason: str,
      removed: int,
      targets: z.array(str),
      /** max_messages lines only: messages dropped across every record of the line */
      messages_dropped: int.optional(),
      /** `manual_cli`: an operator's `conversation rm|truncate`, not a sweep */
      trigger: str.optional(),
      /** max_messages lines of sweeps that recorded it: messages dropped per record */
      messages_dropped_by_target: counts.optional(),
      /** a child workdir or work log taken with its session: target → the session */
      parent_session_by_target: z.record(z.string(), str).optional(),
      /** a target the undo window held (not removed): target → until_ms */
      held_until_by_target: counts.optional(),
      /**
       * What became of its targets, as far as the trail and the undo window tell now: removed at
       * once (or gone from the quarantine otherwise), still held (restorable), held and then deleted
       * for good (purged), held and then put back (restored). The four add up to `targets`.
       */
      fate: fate.optional(),
    }),
  ),
  /** lost background work the sweep reconciled: one detached_lost task per reconciled session */
  reconciled: z.strictObject({
    tasks: int,
    task_ids: z.array(str),
    /** a session whose lost background work a sweep marked `shell_lost` (from the sweep's details file) */
    sessions: z.array(z.strictObject({ task_id: str, target: str, root: str, work_ids: z.array(str) })).optional(),
  }),
  /** the undo window: held items deleted for good (`quarantine_purge`), items put back (`quarantine_restore`) */
  quarantine: z.strictObject({
    purged: z.array(z.strictObject({ store: str, reason: str, targets: z.array(str) })),
    restored: z.array(
      z.strictObject({ store: str, held_kind: str, target: str, origin: str, messages_restored: int.optional() }),
    ),
  }),
  /** the protection list: items put on it (`murmur-gc protect`, or by a restore) or taken off (`release`) */
  protection: z.array(z.strictObject({ change: str, store: str, target: str, origin: str, by: str })).optional(),
  totals: z.strictObject(sweepTotals),
  invalid_lines: int,
  /** the trace was larger than the read cap; only its head was read */
  truncated_read: z.boolean(),
});
const historyMatch = z.strictObject({
  /** the sweep (its audit session id) that removed or truncated the target */
  audit: str,
  started_ms: num.nullable(),
  store: str,
  reason: str,
  action: z.enum(['removed', 'truncated', 'purged', 'restored', 'protected', 'released', 'reconciled']),
  exit_status: nullableString,
  /** that sweep's outcome in status's words (ok, finished with errors, stopped early, unfinished) */
  outcome: str,
  /** the sessions root or record store directory it was in (null for sweeps that did not record it) */
  origin: nullableString,
  /** how many targets the same retention line named */
  line_removed: int,
  /** by an operator's hand (`conversation rm|truncate`, trigger manual_cli), not by a sweep */
  manual: z.boolean(),
  /** max_messages only: messages dropped by that line, across all its records */
  line_messages_dropped: int.optional(),
  /** max_messages, when the sweep recorded it: messages dropped from this record */
  messages_dropped: int.optional(),
  /** reconciled only: the background commands marked lost in it */
  work_ids: z.array(str).optional(),
  /**
   * removed / truncated matches only: what became of it — `removed` (at once, or no longer
   * held), `held` (in the undo window now: `held_until_ms`), `purged` or `restored` later.
   */
  state: z.enum(['removed', 'held', 'purged', 'restored']).optional(),
  held_until_ms: num.optional(),
  /** a child workdir or work log: the session it was taken with (sweeps that recorded it) */
  parent_session: str.optional(),
});

export const HistorySchema = z.strictObject({
  ...head('history'),
  home: str,
  audit_root: str,
  audit_root_exists: z.boolean(),
  since_ms: num.nullable(),
  target: nullableString,
  /** when --target was a unique prefix of `target`: what was given */
  target_prefix: nullableString.optional(),
  /** oldest first; with --target: only the sweeps that removed or truncated it */
  sweeps: z.array(historySweep),
  matches: z.array(historyMatch).optional(),
  /** what the sweeps took, by kind and fate; `held`: of what they held, still in the undo window now */
  totals: z.strictObject({
    sweeps: int,
    ...sweepTotals,
    reconciled_tasks: int,
    held: int,
  }),
  problems: z.array(problem),
  config_invalid: configInvalid,
});

// ---- quarantine ls, restore -------------------------------------------------------------------
export const QuarantineLsSchema = z.strictObject({
  ...head('quarantine ls'),
  home: str,
  window_secs: num.nullable(),
  items: z.array(
    z.strictObject({
      held_kind: z.enum(['session', 'context', 'truncation']),
      target: str,
      origin: str,
      until_ms: num,
      removed_ms: num.nullable(),
      bytes: num,
      path: str,
      reason: nullableString,
      messages_dropped: int.nullable(),
      /** the sweep (its audit session id) that held it, when known: `restore --sweep` puts back all it held */
      audit: nullableString,
      incomplete: z.literal(true).optional(),
    }),
  ),
  /** of the items listed: with a filter, only those it matched */
  totals: items,
  problems: z.array(problem),
  /** the filters given (null: none): only matching items are listed */
  filter: z
    .strictObject({ root: nullableString, record: nullableString, reason: nullableString, before_ms: num.nullable() })
    .nullable(),
  config_invalid: configInvalid,
});

/** An item of the protection list (src/gchome/protect-list.ts), its `where` named `origin`. */
const protectedItem = z.strictObject({
  kind: z.enum(['session', 'context']),
  target: str,
  /** the sessions root (absolute path) of a session, the record store name of a context */
  origin: str,
  since_ms: num,
  /** who protected it: `restore` (automatically) or `protect` (by hand) */
  by: z.enum(['restore', 'protect']),
  note: str.optional(),
});
/** Whether the current policy condemns the item now, by the sweep's own planners. */
const judgement = z.strictObject({
  /** the reason a sweep would act on it now were it not protected, or null */
  condemned: z.enum(['max_age', 'max_sessions', 'max_messages']).nullable(),
  /** the retain policy over it, in words, or null when no policy covers it */
  policy: nullableString,
  /** why it could not be judged (null when it was) */
  unknown: nullableString,
});
const protectOutcome = {
  item: protectedItem,
  /** false: it was protected already (nothing changed) */
  added: z.boolean(),
  /** it exists in its sessions root / record store now */
  present: z.boolean(),
  judgement,
  /** the runtime's own launch-time pruning, which protection does not reach, in words */
  runtime: str,
  /** the audit trace of the change, null when nothing changed */
  audit: nullableString,
};

const restoredStep = z.strictObject({
  held_kind: z.enum(['session', 'context', 'truncation', 'child_workdir', 'work_log']),
  from: str,
  to: str,
  messages_restored: int.optional(),
});
const restoreOne = {
  target: str,
  dry_run: z.boolean(),
  /** what was (or would be) put back, in order */
  restored: z.array(restoredStep),
  /** the audit trace of this restore, null in a dry run */
  audit: nullableString,
  /** what was put back is protected from every sweep (src/commands/protect.ts); absent in a dry run */
  protection: z.strictObject(protectOutcome).optional(),
  /** why it could not be protected (the list is unreadable: every sweep then keeps everything) */
  protection_error: z.strictObject({ code: str, message: str }).optional(),
};

/** `restore TARGET` */
const RestoreTargetSchema = z.strictObject({
  ...head('restore'),
  ...restoreOne,
});

/** `restore --sweep AUDIT`: each item as `restore TARGET` tells it, and what could not go back, by cause */
const RestoreSweepSchema = z.strictObject({
  ...head('restore'),
  sweep: str,
  dry_run: z.boolean(),
  /** how many items that sweep held (sessions, contexts, truncations; what went beside a session comes back with it) */
  held: int,
  restored: z.array(
    z.strictObject({
      ...restoreOne,
      held_kind: z.enum(['session', 'context', 'truncation']),
      /** the sessions root or record store it went back to */
      origin: str,
    }),
  ),
  /** one cause of what could not be put back, with every item it stopped */
  not_restored: z.array(
    z.strictObject({
      /** a stable code: one of restore's refusals, or purged_expired, purged_keep_free, restored_already, held_by_another_sweep, no_longer_held, storage_busy */
      code: str,
      detail: str,
      items: z.array(
        z.strictObject({
          target: str,
          held_kind: z.enum(['session', 'context', 'truncation']),
          origin: nullableString,
        }),
      ),
    }),
  ),
});

export const RestoreSchema = z.union([RestoreTargetSchema, RestoreSweepSchema]);

// ---- protect, release, protection ls ----------------------------------------------------------
export const ProtectSchema = z.strictObject({
  ...head('protect'),
  ...protectOutcome,
});

export const ReleaseSchema = z.strictObject({
  ...head('release'),
  item: protectedItem,
  present: z.boolean(),
  judgement,
  audit: nullableString,
});

export const ProtectionLsSchema = z.strictObject({
  ...head('protection ls'),
  home: str,
  file: str,
  /** why the list cannot be read (every item then counts as protected), else null */
  unreadable: nullableString,
  items: z.array(protectedItem.extend({ present: z.boolean() })),
});

// ---- explain (src/commands/explain.ts; docs/explain.md) ----------------------------------------
const liveTest = z.enum(['running_record', 'recent_write', 'live_grace']).nullable();
const due = z.strictObject({
  /** the instant it changes (ms); null when no instant is known */
  at_ms: num.nullable(),
  event: z.enum(['next_sweep', 'condemned', 'live_ends', 'window_ends', 'never', 'unknown']),
  /** what the first sweep from then does: hold, remove, truncate, purge (delete a hold for good); null: nothing known */
  then: z.enum(['hold', 'remove', 'truncate', 'purge']).nullable(),
  /** the rule it is taken for then */
  rule: nullableString,
});
const liveSession = z.strictObject({
  session: str,
  root: str,
  test: liveTest,
  why: str,
  /** when its trace stops counting as written (no further write); null: a process holds it (or it is not live) */
  live_until_ms: num.nullable(),
  /** the running record's pid, when a live process makes it live */
  pid: int.nullable(),
});
const explainKind = z.enum([
  'session',
  'context',
  'held_session',
  'held_context',
  'held_truncation',
  'child_workdir',
  'work_log',
]);
export const ExplainSchema = z.strictObject({
  ...head('explain'),
  home: str,
  /** TARGET as given */
  target: str,
  /** the instant the fate is judged at (the dry run's clock) */
  now_ms: num,
  item: z.strictObject({
    kind: explainKind,
    /** the `ses_` id, the context id, the child workdir's or log's file name */
    name: str,
    path: str,
    store: z.enum(['sessions', 'records']),
    /** the sessions root, or the record store's name */
    place: str,
    /** the configuration entry over it (`sessions[0]`, `records[1]`, `running/<file>` for a root found from a running record, `audit`); null: none */
    origin: nullableString,
    /** the manifest the entry's retain block came from (a `workdir:`, `project:` or `manifest:` entry); null: the configuration file, or none */
    manifest: nullableString,
  }),
  /** the fate now, as the dry run decided it (docs/fates.md words) */
  fate: z.strictObject({
    /** `kept:live`, `held:max_age`, `removed:keep_free`, `truncated:max_messages`, `purged:expired`, `held` (a hold in its window), `failed`, `not_reached`; a child workdir or log: the dry run's word for it (`kept:child_kept`, …) */
    word: str,
    /** the rule that condemns it although it is kept, or that keep_free took it for good in place of */
    condemned_by: nullableString,
    /** held now: until when its window runs (this sweep's hold: if the sweep ran now) */
    until_ms: num.nullable(),
    /** the dry run's own words about it, when it reported it (a skip's detail) */
    detail: nullableString,
  }),
  policy: z
    .strictObject({
      /** the retain block over it as configured (max_age applies only while the clock is sane) */
      retain,
      /** a record's header capsule (null: no header); null for a session */
      capsule: nullableString,
      /** a record: whether a policy of its store names its capsule; a session: true */
      owned: z.boolean(),
      age: z
        .strictObject({
          max_age_secs: num,
          by: z.enum(['id', 'mtime']),
          born_ms: num,
          age_ms: num,
          condemns_from_ms: num.nullable(),
          over: z.boolean(),
        })
        .nullable(),
      rank: z
        .strictObject({ max_sessions: int, rank: int, of: int, over: z.boolean(), newer_to_condemn: int })
        .nullable(),
      messages: z
        .strictObject({
          max_messages: int,
          messages: int.nullable(),
          over: z.boolean(),
          more_to_condemn: int.nullable(),
        })
        .nullable(),
      /** the clock is behind the last sweep by this much: max_age is not applied (docs/config.md); null: it is */
      clock_behind_ms: num.nullable(),
    })
    .nullable(),
  liveness: z
    .strictObject({
      state: z.enum(['live', 'finished', 'dead']),
      why: str,
      test: liveTest,
      /** the write liveness is judged by (the runtime's last, murmur-gc's own appends aside); null for a context */
      last_write_ms: num.nullable(),
      live_until_ms: num.nullable(),
      pid: int.nullable(),
      /** a context: the live sessions whose traces name it */
      sessions: z.array(liveSession),
    })
    .nullable(),
  protection: z
    .strictObject({
      /** null when it counts as protected because the list cannot be read */
      since_ms: num.nullable(),
      by: z.enum(['protect', 'restore']).nullable(),
      note: nullableString,
      unreadable: z.boolean(),
    })
    .nullable(),
  hold: z
    .strictObject({
      until_ms: num,
      /** the rule the hold was made for (`max_age`, `max_sessions`, `max_bytes`, `max_messages`, `conversation_rm`…); null: not recorded */
      rule: nullableString,
      entry: str,
      /** keep_free may purge it before its window ends (it sits on the home's filesystem) */
      keep_free: z.boolean(),
    })
    .nullable(),
  guard: z.strictObject({ limit: str, would_take: int, present: int }).nullable(),
  budgets: z.array(
    z.discriminatedUnion('rule', [
      z.strictObject({
        rule: z.literal('max_bytes'),
        limit_bytes: num,
        in_place_bytes: num,
        item_bytes: num.nullable(),
        older_removable: z.strictObject({ items: int, bytes: num }),
        grows_by: num.nullable(),
        unmet: z.boolean(),
      }),
      z.strictObject({
        rule: z.literal('keep_free'),
        required_bytes: num,
        free_bytes: num,
        short_bytes: num,
        short_bytes_after: num,
        unmet: z.boolean(),
      }),
    ]),
  ),
  beside: z
    .strictObject({
      /** the sessions in place whose traces name it (a child workdir by delegation_start, a log by its work id) */
      named_by: z.array(str),
      /** named by the trace of a session the undo window holds: it goes into that hold once finished */
      named_by_held: z.boolean(),
      /** a child workdir: the most recent write murmur-gc sees in it (orphans age by it) */
      last_write_ms: num.nullable(),
      /** the root's `children.max_age` (orphans only go under it); null: none */
      children_max_age_secs: num.nullable(),
    })
    .nullable(),
  due,
  /** what would move the instant (or make one): `count` is sessions, messages, bytes or a pid, by cause */
  moves: z.array(
    z.strictObject({
      cause: z.enum([
        'new_sessions',
        'new_messages',
        'record_write',
        'trace_write',
        'process_end',
        'growth',
        'keep_free',
        'release',
        'guard',
        'restore',
        'parent',
      ]),
      count: num.nullable(),
    }),
  ),
  /** a child workdir or log: its parent sessions' explanations (what it goes with) */
  parents: z.array(z.strictObject({ session: str, fate: str, due })),
  /** holds of the undo window of the same name and place (a truncation's dropped lines): explain takes the item in place, a path names a hold */
  held_too: z.array(
    z.strictObject({ kind: z.enum(['held_session', 'held_context', 'held_truncation']), path: str, until_ms: num }),
  ),
});

// ---- du ----------------------------------------------------------------------------------------
const reclaim = z.strictObject({
  /** removed for good, purged from the undo window, cut from a record by a measured truncation */
  bytes: num,
  /** what that sweep would hold in the undo window (freed once its window passes) */
  held_bytes: num,
  /** records that sweep would truncate whose new size was not measured (not in `bytes`) */
  truncations_unmeasured: int,
});
const duPlace = {
  bytes: num,
  by_age: z.strictObject({ lt_1d: num, lt_7d: num, lt_30d: num, lt_90d: num, older: num }),
  /** what the sweep's planner frees at now, now + 7 days, now + 30 days */
  reclaimable: z.strictObject({ now: reclaim, within_7d: reclaim, within_30d: reclaim }),
  /** items no rule of the configuration will ever take: a store with no rule, protected, another user's, a record no policy owns */
  never: num,
};
export const DuSchema = z.strictObject({
  ...head('du'),
  home: str,
  home_exists: z.boolean(),
  now_ms: int,
  /** the whole home (`du -s -B1 -x HOME`) */
  home_bytes: num,
  /** `<home>/gc`: murmur-gc's own (audit trail, registry, caches), with what its undo window holds */
  gc: z.strictObject({ bytes: num, held: num }),
  roots: z.array(
    z.strictObject({
      root: str,
      sessions: int,
      ...duPlace,
      by_kind: z.strictObject({
        traces: num,
        blobs: num,
        logs: num,
        child_workdirs: num,
        held: num,
        protected: num,
        other: num,
      }),
      /** beside a `W/.murmur` root, in W (not in `bytes`): the `wrk_` logs and `out/` */
      beside: z.strictObject({ wrk_logs: num, out: num }).nullable(),
    }),
  ),
  stores: z.array(
    z.strictObject({
      store: str,
      contexts: int,
      ...duPlace,
      /** by the capsule each record's header names (`(no header)` when none) */
      by_capsule: z.record(z.string(), num),
    }),
  ),
  totals: z.strictObject({
    bytes: num,
    reclaimable: z.strictObject({ now: reclaim, within_7d: reclaim, within_30d: reclaim }),
    never: num,
  }),
  /** the dry run's scan: traces read (none when the trace cache has them all) and served from it */
  inventory: z.strictObject({ traces_read: int, traces_cached: int }),
  /** what could not be read (counted as far as it could be) */
  problems: z.array(z.strictObject({ path: str, detail: str })),
  config_invalid: configInvalid,
});

/** What any of these commands prints under --json instead, when it fails (exit 1, 2 or 75). */
export const ErrorSchema = z.strictObject({
  schema_version: z.literal(SCHEMA_VERSION),
  command: z.enum(COMMANDS),
  error: z.strictObject({ code: str, message: str, hint: z.string().nullable().optional() }),
});

/** Each schema by the file docs/schemas/<name>.json it is generated into. */
export const SCHEMAS = {
  sweep: SweepSchema,
  'config-check': ConfigCheckSchema,
  status: StatusSchema,
  history: HistorySchema,
  'quarantine-ls': QuarantineLsSchema,
  restore: RestoreSchema,
  protect: ProtectSchema,
  release: ReleaseSchema,
  'protection-ls': ProtectionLsSchema,
  explain: ExplainSchema,
  du: DuSchema,
  error: ErrorSchema,
} as const;

/** The JSON Schema (draft 2020-12) of one document, as committed under docs/schemas/. */
export function jsonSchemaText(name: keyof typeof SCHEMAS): string {
  const schema = z.toJSONSchema(SCHEMAS[name], { target: 'draft-2020-12', io: 'output' });
  return (
    JSON.stringify(
      {
        ...schema,
        $id: `https://github.com/murmur-gc/murmur-gc/docs/schemas/${name}.json`,
        title: `murmur-gc ${name.replace('-', ' ')} --json (schema_version ${SCHEMA_VERSION})`,
      },
      null,
      2,
    ) + '\n'
  );
}

// ---- the types ----------------------------------------------------------------------------------
/** A document without its envelope (distributed over a union): what a command builds. */
export type Body<T> = T extends unknown ? Omit<T, 'schema_version' | 'command'> : never;

export type SweepJson = z.output<typeof SweepSchema>;
/** The sweep's report: the document a sweep builds (src/sweep/report.ts). */
export type SweepReport = Body<SweepJson>;
export type Action = z.output<typeof action>;
export type HeldAt = z.output<typeof heldAt>;
/** A skipped item or an error: what, why (a code), in words. */
export type Problem = z.output<typeof problem>;
export type KeptAside = z.output<typeof kept>;
export type StopInfo = z.output<typeof stopInfo>;
export type StoreFates = z.output<typeof fates>[number];
export type BudgetReport = z.output<typeof budget>;
export type BudgetStoreOutcome = BudgetReport['stores'][number];
export type BudgetUnmet = BudgetReport['unmet'][number];
/** Why a read-only view runs on a fallback configuration (src/cli/context.ts). */
export type InvalidConfig = NonNullable<z.output<typeof configInvalid>>;
export type ConfigCheckJson = z.output<typeof ConfigCheckSchema>;
/** One error or warning of `config check`. */
export type ConfigProblem = z.output<typeof configProblem>;
/** The effective policy as plain data (`config check`'s `policy`). */
export type ConfigPolicy = NonNullable<ConfigCheckJson['policy']>;
/** A retain policy as the documents spell it (null: none). */
export type RetainJson = z.output<typeof retain>;
export type KeepFreeJson = NonNullable<ConfigPolicy['keep_free']>;
/** `config check --plan`'s `plan` (src/commands/config-plan.ts). */
export type ConfigPlan = NonNullable<ConfigCheckJson['plan']>;
export type SessionsEntryPlan = Extract<ConfigPlan['entries'][number], { kind: 'sessions' }>;
export type RecordsEntryPlan = Extract<ConfigPlan['entries'][number], { kind: 'records' }>;
export type EntryStop = NonNullable<SessionsEntryPlan['stopped']>;
export type StatusJson = z.output<typeof StatusSchema>;
/** What `status` gathers (src/commands/status.ts): the document but `config_invalid`, the CLI's (src/cli/context.ts). */
export type StatusDoc = Omit<Body<StatusJson>, 'config_invalid'>;
/** One sweep, as the daemon logged it and as `status` shows it (src/gchome/state.ts). */
export type SweepSummary = NonNullable<StatusJson['last_sweep']>;
export type TimerInfo = NonNullable<StatusJson['timer']>;
export type StoreSizes = StatusJson['stores'];
export type RootSize = StoreSizes['sessions']['roots'][number];
export type BesideSizes = NonNullable<RootSize['beside']>;
export type RecordStoreSize = StoreSizes['records']['by_store'][number];
/** What the undo window and the max_age policies let go next (src/plan/expiries.ts). */
export type NextExpiries = StatusJson['next_expiries'];
export type NextPurge = z.output<typeof nextPurge>;
export type NextMaxAge = NonNullable<NextExpiries['max_age']>;
export type FleetView = StatusJson['metrics'];
export type PartSize = z.output<typeof partSize>;
/** Running totals over every recorded sweep (the textfile's counters; the state file's `totals`). */
export type SweepTotals = NonNullable<FleetView['totals']>;
export type HistoryJson = z.output<typeof HistorySchema>;
/** `history --json` as src/cli/json-contract.ts historyJson makes it: the document but `config_invalid`, the CLI's. */
export type HistoryBody = Omit<Body<HistoryJson>, 'config_invalid'>;
/** `T` with its members renamed by `M` (old → new), each keeping its type and optionality. */
export type Renamed<T, M extends Readonly<Record<string, string>>> = {
  [K in keyof T as K extends keyof M ? M[K] : K]: T[K];
};
// What src/commands/history.ts reads from the audit trail is the document in the trail's own
// words: historyJson (src/cli/json-contract.ts) renames these members, each in its place, and its
// return type (HistoryBody) proves the renaming gives the document.
type JsonSweep = HistoryJson['sweeps'][number];
/** A retention line of one sweep; `dropped_by_target` is the document's `messages_dropped_by_target`. */
export type RetentionEntry = Renamed<
  JsonSweep['retention'][number],
  { messages_dropped_by_target: 'dropped_by_target' }
>;
/** Counts of what became of a retention line's targets (buildHistory fills it in). */
export type RetentionFate = NonNullable<RetentionEntry['fate']>;
/** A reconciled session; `session` is the document's `target`. */
export type ReconciledSession = Renamed<
  NonNullable<JsonSweep['reconciled']['sessions']>[number],
  { target: 'session' }
>;
/** One sweep of the trail; `session_id` is the document's `audit`, the restored items' `held` its `held_kind`. */
export type SweepHistory = Renamed<
  Omit<JsonSweep, 'retention' | 'reconciled' | 'quarantine'>,
  { audit: 'session_id' }
> & {
  retention: RetentionEntry[];
  reconciled: Omit<JsonSweep['reconciled'], 'sessions'> & { sessions?: ReconciledSession[] };
  quarantine: Omit<JsonSweep['quarantine'], 'restored'> & {
    restored: Renamed<JsonSweep['quarantine']['restored'][number], { held_kind: 'held' }>[];
  };
};
export type HistorySweepTotals = JsonSweep['totals'];
/** A sweep that took `--target`; `sweep` and `where` are the document's `audit` and `origin`. */
export type TargetMatch = Renamed<NonNullable<HistoryJson['matches']>[number], { audit: 'sweep'; origin: 'where' }>;
/** What `history` reads (src/commands/history.ts). */
export type HistoryDoc = Omit<HistoryBody, 'sweeps' | 'matches'> & { sweeps: SweepHistory[]; matches?: TargetMatch[] };
export type QuarantineLsJson = z.output<typeof QuarantineLsSchema>;
/** The undo window's listing as `quarantine ls --json` has it (src/cli/quarantine.ts heldJson). */
export type HeldListingJson = Omit<Body<QuarantineLsJson>, 'filter' | 'config_invalid'>;
export type HeldFilterJson = QuarantineLsJson['filter'];
export type RestoreJson = z.output<typeof RestoreSchema>;
export type ProtectJson = z.output<typeof ProtectSchema>;
export type ReleaseJson = z.output<typeof ReleaseSchema>;
export type ProtectionLsJson = z.output<typeof ProtectionLsSchema>;
/**
 * An item of the protection list as its file has it (src/gchome/protect-list.ts): the document's,
 * with `origin` under the file's own key `where` (src/cli/json-contract.ts protectedItemJson
 * renames it).
 */
export type ProtectedItem = Renamed<z.output<typeof protectedItem>, { origin: 'where' }>;
export type Judgement = z.output<typeof judgement>;
/** What `protect` did (src/commands/protect.ts): the document, its item in the file's words. */
export type ProtectOutcome = Omit<Body<ProtectJson>, 'item'> & { item: ProtectedItem };
/** What `release` did: the document, its item in the file's words. */
export type ReleaseOutcome = Omit<Body<ReleaseJson>, 'item'> & { item: ProtectedItem };
/** `protection ls` (src/commands/protect-listing.ts): the document, its items in the file's words. */
export type ProtectionListing = Omit<Body<ProtectionLsJson>, 'items'> & {
  items: (ProtectedItem & { present: boolean })[];
};
type RestoreTargetJson = Body<z.output<typeof RestoreTargetSchema>>;
type RestoreSweepJson = Body<z.output<typeof RestoreSweepSchema>>;
type InFileWords<T extends { protection?: unknown }> = Omit<T, 'protection'> & { protection?: ProtectOutcome };
/** What `restore TARGET` did (src/commands/quarantine.ts): the document, a protection's item in the file's words. */
export type RestoreResult = InFileWords<RestoreTargetJson>;
/** One item of `restore --sweep` (src/commands/restore-sweep.ts). */
export type SweepRestoreItem = InFileWords<RestoreSweepJson['restored'][number]>;
export type NotRestored = RestoreSweepJson['not_restored'][number];
/** What `restore --sweep AUDIT` did (src/commands/restore-sweep.ts). */
export type SweepRestoreResult = Omit<RestoreSweepJson, 'restored'> & { restored: SweepRestoreItem[] };
export type ExplainJson = z.output<typeof ExplainSchema>;
/** What `explain` tells of one item (src/commands/explain.ts). */
export type ExplainDoc = Body<ExplainJson>;
export type ExplainKind = z.output<typeof explainKind>;
export type ExplainItem = ExplainDoc['item'];
export type FateNow = ExplainDoc['fate'];
export type PolicyFacts = NonNullable<ExplainDoc['policy']>;
export type LiveSession = z.output<typeof liveSession>;
export type LivenessFacts = NonNullable<ExplainDoc['liveness']>;
export type ProtectionFacts = NonNullable<ExplainDoc['protection']>;
export type HoldFacts = NonNullable<ExplainDoc['hold']>;
export type BudgetFacts = ExplainDoc['budgets'][number];
export type ExplainBesideFacts = NonNullable<ExplainDoc['beside']>;
export type Due = z.output<typeof due>;
export type DueEvent = Due['event'];
export type Move = ExplainDoc['moves'][number];
export type MoveCause = Move['cause'];
export type DuJson = z.output<typeof DuSchema>;
/** What `du` measures (src/commands/du.ts): the document but `config_invalid`, the CLI's (src/cli/context.ts). */
export type DuReport = Omit<Body<DuJson>, 'config_invalid'>;
export type DuRoot = DuReport['roots'][number];
export type DuStore = DuReport['stores'][number];
/** What a sessions root and a record store are both measured by. */
export type DuPlace = Pick<DuRoot, keyof typeof duPlace>;
export type Reclaim = z.output<typeof reclaim>;
export type ErrorJson = z.output<typeof ErrorSchema>;

/** Each enveloped document by the command that prints it. */
export interface JsonDocs {
  sweep: SweepJson;
  'config check': ConfigCheckJson;
  status: StatusJson;
  history: HistoryJson;
  'quarantine ls': QuarantineLsJson;
  restore: RestoreJson;
  protect: ProtectJson;
  release: ReleaseJson;
  'protection ls': ProtectionLsJson;
  explain: ExplainJson;
  du: DuJson;
}
