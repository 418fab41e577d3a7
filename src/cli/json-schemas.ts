// The schemas of murmur-gc's --json documents (docs/json.md), in zod; docs/schemas/*.json are
// generated from them (`npm run schemas`, scripts/schemas.mjs) and a test keeps the committed
// files equal to them and validates real outputs against them.
// Guarantees: every object of every document is closed — a document with a member its schema does
// not list, at any depth, or without a required one, fails; only maps keyed by data (counts by
// code, kind or store; budgets' held items by code) take any key, and their values are typed.
// Loaded by no command (start-up stays free of it).
import { z } from 'zod';
import { COMMANDS, SCHEMA_VERSION, type JsonCommand } from './json-contract.js';

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
const problem = z.strictObject({ target: str, code: str, detail: str });
/** Why a read-only view ran on a fallback configuration (src/cli/context.ts); null when valid. */
const configInvalid = z.strictObject({ file: nullableString, errors: int, first: str, hint: str }).nullable();
const kept = z.strictObject({ items: int, bytes: num, oldest_ms: num.nullable(), paths: z.array(str) });

// ---- sweep ------------------------------------------------------------------------------------
const sessionReason = z.enum(['max_age', 'max_sessions', 'max_bytes', 'keep_free']);
const budgetReason = z.enum(['max_bytes', 'keep_free']);
const heldAt = z.strictObject({ until_ms: num, path: str });
/** What this sweep would have held an item for, when keep_free took it for good instead. */
const condemnedBy = z.enum(['max_age', 'max_sessions', 'max_bytes']);
/** Every action kind of src/sweep/actions.ts, each with exactly its members. */
const action = z.discriminatedUnion('kind', [
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
  z.strictObject({
    kind: z.literal('remove_orphan_workdir'),
    root: str,
    target: str,
    path: str,
    reason: z.literal('children_max_age'),
    bytes: num,
    age_ms: num,
  }),
  z.strictObject({
    kind: z.literal('remove_child_workdir'),
    root: str,
    target: str,
    parent_session: str,
    path: str,
    reason: sessionReason,
    bytes: num,
    held: heldAt.optional(),
  }),
  z.strictObject({
    kind: z.literal('remove_work_log'),
    root: str,
    target: str,
    parent_session: str,
    path: str,
    reason: sessionReason,
    bytes: num,
    held: heldAt.optional(),
  }),
  z.strictObject({
    kind: z.literal('truncate_record'),
    record: str,
    target: str,
    reason: z.literal('max_messages'),
    messages_dropped: int,
    kept: int,
    path: str,
    bytes: num,
    concurrent_append: z.strictObject({ lines_out_of_order: int }).optional(),
    held: heldAt.optional(),
  }),
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
    target: str,
    root: str,
    work_id: str,
    binary: str,
    binary_bytes: num,
    command: str,
    command_bytes: num,
    detached_at_ms: num,
    task_id: nullableString,
  }),
  z.strictObject({ kind: z.literal('repair_torn_tail'), record: str, target: str, path: str }),
  z.strictObject({ kind: z.literal('chmod'), path: str, from: str, to: str }),
  z.strictObject({
    kind: z.literal('remove_debris'),
    path: str,
    code: z.enum(['process_interrupted', 'io_error', 'runtime_debris']),
    detail: str,
    bytes: num,
  }),
]);
/** A store the blast-radius guard stops (src/sweep/report.ts StopInfo). */
const stopInfo = z.strictObject({
  store: str,
  kind: z.enum(['sessions', 'records']),
  present: int,
  would_take: int,
  limit: str,
});
/** What became of every item, per store (src/sweep/fate-counts.ts; docs/fates.md). */
const fates = z.array(
  z.strictObject({
    kind: z.enum(['sessions', 'records', 'held']),
    place: str,
    items: int,
    counts: z.record(z.string(), int),
  }),
);
const budget = z.strictObject({
  stores: z.array(
    z.strictObject({
      store: str,
      label: str,
      max_bytes: num.nullable(),
      bytes_before: num,
      bytes_after: num,
      removed: int,
      bytes_freed: num,
      held: int,
      held_purged: int,
    }),
  ),
  keep_free: z
    .strictObject({
      required_bytes: num,
      free_bytes: num,
      short_bytes: num,
      short_bytes_after: num,
      inodes: z.strictObject({ required: int, free: int, short: int, short_after: int }).nullable(),
      per_sweep_percent: int,
      largest_live: z.array(z.strictObject({ path: str, bytes: num })),
      purged: int,
      removed: int,
      reserve: z.strictObject({
        path: str,
        released_bytes: num,
        released_inodes: int,
        room_bytes: num,
        room_inodes: int,
        put_back: z.boolean(),
        put_back_inodes: z.boolean(),
      }),
    })
    .nullable(),
  unmet: z.array(
    z.strictObject({
      store: str.optional(),
      label: str,
      reason: budgetReason,
      bytes_short: num,
      inodes_short: int.optional(),
      beyond_per_sweep: z.strictObject({ items: int, bytes: num }).optional(),
      held: z.record(z.string(), z.strictObject({ items: int, bytes: num })),
      removable: z.strictObject({ items: int, bytes: num }),
      removed: int,
      largest: z.array(z.strictObject({ target: str, code: str, bytes: num })),
    }),
  ),
});

export const SweepSchema = z.strictObject({
  ...head('sweep'),
  dry_run: z.boolean(),
  /** `--dry-run --at` only: the instant the dry run forecasts (the sweep's clock, as started_ms) */
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
  config: nullableString.optional(),
  steps: z.array(z.strictObject({ step: str, items: int, bytes: num, ms: num })).optional(),
  budget: budget.optional(),
  quarantine: z
    .strictObject({ window_secs: num, held: int, held_bytes: num, purged: int, purged_bytes: num })
    .optional(),
  orphans: z
    .array(
      z.strictObject({ root: str, count: int, bytes: num, oldest_ms: num, removed: int, policy_secs: num.nullable() }),
    )
    .optional(),
  kept: kept.optional(),
  fates: fates.optional(),
  stopped: z.array(stopInfo).optional(),
  stopped_unattended: z.array(stopInfo).optional(),
});

// ---- config check -----------------------------------------------------------------------------
/** Where the blast-radius guard would stop an entry (src/commands/config-plan.ts). */
const entryStop = z
  .strictObject({ limit: z.string(), would_take: z.number().int(), present: z.number().int() })
  .nullable();
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
            sessions: z.number().int(),
            held: z.number().int(),
            bytes: z.number(),
            stopped: entryStop,
            stopped_unattended: entryStop,
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
            stopped: entryStop,
            stopped_unattended: entryStop,
          }),
        ]),
      ),
    })
    .nullable(),
});

// ---- status -----------------------------------------------------------------------------------
const outcome = z.enum(['ok', 'errors', 'busy', 'failed', 'aborted']);
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
  beside: z
    .strictObject({
      workdir: str,
      tied: sized,
      orphaned: z.strictObject({ count: int, bytes: num, oldest_ms: num.nullable() }),
      work_logs: sized,
      other_logs: sized,
      capsule: z.array(z.strictObject({ name: str, bytes: num })),
      unreadable: int,
    })
    .optional(),
});
const items = z.strictObject({ items: int, bytes: num });
const nextPurge = z.strictObject({ at_ms: num, items: int, bytes: num });

export const StatusSchema = z.strictObject({
  ...head('status'),
  home: str,
  home_exists: z.boolean(),
  state_file: str,
  state: z.enum(['ok', 'missing', 'corrupt', 'no_home']),
  state_detail: str.optional(),
  daemon: z.strictObject({
    running: z.boolean(),
    why: str,
    pid: int.nullable(),
    start_time: nullableString,
    started_ms: num.nullable(),
    stopped_ms: num.nullable(),
    config: nullableString,
    schedule: nullableString,
  }),
  current_sweep: z.strictObject({ started_ms: num, trigger }).nullable(),
  last_sweep: z
    .strictObject({
      trigger,
      started_ms: num,
      ended_ms: num,
      duration_ms: num,
      outcome,
      counts,
      bytes_freed: num,
      skipped: int,
      skipped_by_code: counts,
      errors: int,
      errors_by_code: counts,
      audit: nullableString,
      message: str.optional(),
      actions_by_store: byKindAndStore.optional(),
      messages_dropped: int.optional(),
      kept: z.strictObject({ items: int, bytes: num, oldest_ms: num.nullable() }).optional(),
    })
    .nullable(),
  next_run_ms: num.nullable(),
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
      by_store: z.array(z.strictObject({ record: str, records: int, bytes: num })),
    }),
    audit: z.strictObject({ sessions: int, bytes: num, unreadable: int }),
    quarantine: z.strictObject({ items: int, bytes: num, unreadable: int, unverified: int.optional() }).optional(),
    kept: kept.optional(),
  }),
  /** the undo window's next purge and the next item a max_age policy condemns (src/plan/expiries.ts) */
  next_expiries: z.strictObject({
    purge: nextPurge.nullable(),
    max_age: z
      .strictObject({ at_ms: num, store: z.enum(['sessions', 'records']), origin: str, target: str })
      .nullable(),
  }),
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
        actions: byKindAndStore,
        skipped_by_code: counts,
        errors_by_code: counts,
      })
      .nullable(),
    last_success_ms: num.nullable(),
    stores: z.strictObject({ sessions: items, records: items, audit: items }),
    /** the largest 20 sessions roots / record stores by bytes, then one entry named ".other" summing the rest (docs/metrics.md) */
    roots: z.array(z.strictObject({ name: str, items: int, bytes: num })),
    record_stores: z.array(z.strictObject({ name: str, items: int, bytes: num })),
    quarantine: items.nullable(),
    next_purge: nextPurge.nullable(),
    next_max_age_ms: num.nullable(),
    totals: z
      .strictObject({
        sweeps: z.strictObject({ ok: int, errors: int, busy: int, failed: int, aborted: int }),
        bytes_freed: num,
      })
      .nullable(),
    interval_secs: num.nullable(),
  }),
  protection: z.strictObject({ file: str, items: int, unreadable: nullableString }),
  /** the configuration file in force; null: built-in defaults */
  config: nullableString,
  config_invalid: configInvalid,
});

// ---- history ----------------------------------------------------------------------------------
const fate = z.strictObject({ removed: int, held: int, purged: int, restored: int });
const historySweep = z.strictObject({
  audit: str,
  started_ms: num.nullable(),
  ended_ms: num.nullable(),
  duration_ms: num.nullable(),
  exit_status: nullableString,
  outcome: z.enum(['ok', 'errors', 'aborted', 'unfinished']),
  complete: z.boolean(),
  intent_pending: z.boolean(),
  capsule_version: nullableString,
  manual: z.boolean(),
  retention: z.array(
    z.strictObject({
      store: str,
      reason: str,
      removed: int,
      targets: z.array(str),
      messages_dropped: int.optional(),
      trigger: str.optional(),
      messages_dropped_by_target: counts.optional(),
      /** a child workdir or work log taken with its session: target → the session */
      parent_session_by_target: z.record(z.string(), str).optional(),
      /** a target the undo window held (not removed): target → until_ms */
      held_until_by_target: counts.optional(),
      fate: fate.optional(),
    }),
  ),
  reconciled: z.strictObject({
    tasks: int,
    task_ids: z.array(str),
    sessions: z.array(z.strictObject({ task_id: str, target: str, root: str, work_ids: z.array(str) })).optional(),
  }),
  quarantine: z.strictObject({
    purged: z.array(z.strictObject({ store: str, reason: str, targets: z.array(str) })),
    restored: z.array(
      z.strictObject({ store: str, held_kind: str, target: str, origin: str, messages_restored: int.optional() }),
    ),
  }),
  protection: z.array(z.strictObject({ change: str, store: str, target: str, origin: str, by: str })).optional(),
  totals: z.strictObject({
    sessions_removed: int,
    sessions_held: int,
    records_removed: int,
    records_held: int,
    beside_removed: int,
    beside_held: int,
    records_truncated: int,
    messages_dropped: int,
  }),
  invalid_lines: int,
  truncated_read: z.boolean(),
});
const historyMatch = z.strictObject({
  audit: str,
  started_ms: num.nullable(),
  store: str,
  reason: str,
  action: z.enum(['removed', 'truncated', 'purged', 'restored', 'protected', 'released', 'reconciled']),
  exit_status: nullableString,
  outcome: str,
  origin: nullableString,
  line_removed: int,
  manual: z.boolean(),
  line_messages_dropped: int.optional(),
  messages_dropped: int.optional(),
  work_ids: z.array(str).optional(),
  state: z.enum(['removed', 'held', 'purged', 'restored']).optional(),
  held_until_ms: num.optional(),
  /** a child workdir or work log: the session it was taken with */
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
  sweeps: z.array(historySweep),
  matches: z.array(historyMatch).optional(),
  totals: z.strictObject({
    sweeps: int,
    sessions_removed: int,
    sessions_held: int,
    records_removed: int,
    records_held: int,
    beside_removed: int,
    beside_held: int,
    records_truncated: int,
    messages_dropped: int,
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

const protectedItem = z.strictObject({
  kind: z.enum(['session', 'context']),
  target: str,
  origin: str,
  since_ms: num,
  by: z.enum(['restore', 'protect']),
  note: str.optional(),
});
const judgement = z.strictObject({
  condemned: z.enum(['max_age', 'max_sessions', 'max_messages']).nullable(),
  policy: nullableString,
  unknown: nullableString,
});
const protectOutcome = {
  item: protectedItem,
  added: z.boolean(),
  present: z.boolean(),
  judgement,
  runtime: str,
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
  restored: z.array(restoredStep),
  audit: nullableString,
  protection: z.strictObject(protectOutcome).optional(),
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
  held: int,
  restored: z.array(
    z.strictObject({ ...restoreOne, held_kind: z.enum(['session', 'context', 'truncation']), origin: str }),
  ),
  not_restored: z.array(
    z.strictObject({
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
  unreadable: nullableString,
  items: z.array(protectedItem.extend({ present: z.boolean() })),
});

// ---- explain (src/commands/explain.ts; docs/explain.md) ----------------------------------------
const liveTest = z.enum(['running_record', 'recent_write', 'live_grace']).nullable();
const due = z.strictObject({
  at_ms: num.nullable(),
  event: z.enum(['next_sweep', 'condemned', 'live_ends', 'window_ends', 'never', 'unknown']),
  then: z.enum(['hold', 'remove', 'truncate', 'purge']).nullable(),
  rule: nullableString,
});
const liveSession = z.strictObject({
  session: str,
  root: str,
  test: liveTest,
  why: str,
  live_until_ms: num.nullable(),
  pid: int.nullable(),
});
export const ExplainSchema = z.strictObject({
  ...head('explain'),
  home: str,
  target: str,
  now_ms: num,
  item: z.strictObject({
    kind: z.enum([
      'session',
      'context',
      'held_session',
      'held_context',
      'held_truncation',
      'child_workdir',
      'work_log',
    ]),
    name: str,
    path: str,
    store: z.enum(['sessions', 'records']),
    place: str,
    origin: nullableString,
    manifest: nullableString,
  }),
  fate: z.strictObject({ word: str, condemned_by: nullableString, until_ms: num.nullable(), detail: nullableString }),
  policy: z
    .strictObject({
      retain,
      capsule: nullableString,
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
      clock_behind_ms: num.nullable(),
    })
    .nullable(),
  liveness: z
    .strictObject({
      state: z.enum(['live', 'finished', 'dead']),
      why: str,
      test: liveTest,
      last_write_ms: num.nullable(),
      live_until_ms: num.nullable(),
      pid: int.nullable(),
      sessions: z.array(liveSession),
    })
    .nullable(),
  protection: z
    .strictObject({
      since_ms: num.nullable(),
      by: z.enum(['protect', 'restore']).nullable(),
      note: nullableString,
      unreadable: z.boolean(),
    })
    .nullable(),
  hold: z.strictObject({ until_ms: num, rule: nullableString, entry: str, keep_free: z.boolean() }).nullable(),
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
      named_by: z.array(str),
      named_by_held: z.boolean(),
      last_write_ms: num.nullable(),
      children_max_age_secs: num.nullable(),
    })
    .nullable(),
  due,
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
  parents: z.array(z.strictObject({ session: str, fate: str, due })),
  held_too: z.array(
    z.strictObject({ kind: z.enum(['held_session', 'held_context', 'held_truncation']), path: str, until_ms: num }),
  ),
});

// ---- du ----------------------------------------------------------------------------------------
const reclaim = z.strictObject({
  /** removed for good, purged from the undo window, cut by a measured truncation */
  bytes: num,
  /** what that sweep would hold (freed once its window passes) */
  held_bytes: num,
  /** records it would truncate whose new size was not measured (not in bytes) */
  truncations_unmeasured: int,
});
const duPlace = {
  bytes: num,
  by_age: z.strictObject({ lt_1d: num, lt_7d: num, lt_30d: num, lt_90d: num, older: num }),
  /** what the sweep's planner frees at now, now + 7 days, now + 30 days */
  reclaimable: z.strictObject({ now: reclaim, within_7d: reclaim, within_30d: reclaim }),
  /** items no rule will ever take */
  never: num,
};
export const DuSchema = z.strictObject({
  ...head('du'),
  home: str,
  home_exists: z.boolean(),
  now_ms: int,
  /** du -s -B1 -x HOME */
  home_bytes: num,
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
      beside: z.strictObject({ wrk_logs: num, out: num }).nullable(),
    }),
  ),
  stores: z.array(z.strictObject({ store: str, contexts: int, ...duPlace, by_capsule: z.record(z.string(), num) })),
  totals: z.strictObject({
    bytes: num,
    reclaimable: z.strictObject({ now: reclaim, within_7d: reclaim, within_30d: reclaim }),
    never: num,
  }),
  inventory: z.strictObject({ traces_read: int, traces_cached: int }),
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
