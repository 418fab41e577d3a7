// The schemas of murmur-gc's --json documents (docs/json.md), in zod; docs/schemas/*.json are
// generated from them (`npm run schemas`, scripts/schemas.mjs) and a test keeps the committed
// files equal to them and validates real outputs against them.
// Guarantees: each schema fixes its document's top-level members (a document with another, or
// without a required one, fails); nested members are typed where they are stable and open (more
// keys allowed) elsewhere. Loaded by no command (start-up stays free of it).
import { z } from 'zod';
import { COMMANDS, SCHEMA_VERSION, type JsonCommand } from './json-contract.js';

const head = <C extends JsonCommand>(command: C) => ({ schema_version: z.literal(SCHEMA_VERSION), command: z.literal(command) });
const problem = z.looseObject({ target: z.string(), code: z.string(), detail: z.string() });
const nullableString = z.string().nullable();
/** Why a read-only view ran on a fallback configuration (src/cli/context.ts); null when valid. */
const configInvalid = z.object({ file: nullableString, errors: z.number().int(), first: z.string(), hint: z.string() }).nullable();

export const SweepSchema = z.strictObject({
  ...head('sweep'),
  dry_run: z.boolean(),
  home: z.string(),
  home_exists: z.boolean(),
  started_ms: z.number(),
  duration_ms: z.number(),
  actions: z.array(z.looseObject({ kind: z.enum(['remove_session', 'remove_record', 'truncate_record', 'shell_lost', 'chmod', 'remove_debris', 'purge_quarantine']), target: z.string() })),
  skipped: z.array(problem),
  errors: z.array(problem),
  audit: nullableString,
  bytes_freed: z.number(),
  inventory: z.looseObject({ sessions_roots: z.number(), sessions: z.number(), records: z.number() }),
  message: z.string().optional(),
  config: nullableString.optional(),
  steps: z.array(z.looseObject({ step: z.string(), items: z.number(), bytes: z.number(), ms: z.number() })).optional(),
  budget: z.looseObject({}).optional(),
  quarantine: z.looseObject({ window_secs: z.number(), held: z.number(), held_bytes: z.number(), purged: z.number(), purged_bytes: z.number() }).optional(),
  kept: z.looseObject({ items: z.number(), bytes: z.number(), oldest_ms: z.number().nullable(), paths: z.array(z.string()) }).optional(),
});

const configProblem = z.strictObject({
  severity: z.enum(['error', 'warning']),
  code: z.string(),
  file: nullableString,
  line: z.number().int().nullable(),
  column: z.number().int().nullable(),
  key: z.string(),
  message: z.string(),
});

export const ConfigCheckSchema = z.strictObject({
  ...head('config check'),
  config: nullableString,
  ok: z.boolean(),
  errors: z.array(configProblem),
  warnings: z.array(configProblem),
  policy: z.looseObject({ home: z.string(), sessions: z.array(z.looseObject({ root: z.string(), origin: z.string(), children: z.strictObject({ max_age_secs: z.number().int() }).nullable() })), records: z.array(z.looseObject({ store: z.string(), capsule: z.string(), origin: z.string() })) }).nullable(),
  /** `--plan` only (else null): what the values would remove now, per entry (the dry run's planning). */
  plan: z
    .strictObject({
      home: z.string(),
      home_exists: z.boolean(),
      /** why nothing was planned (a sweep at work, an error); null when it was */
      not_planned: nullableString,
      entries: z.array(
        z.discriminatedUnion('kind', [
          z.strictObject({ kind: z.literal('sessions'), origin: z.string(), root: z.string(), root_exists: z.boolean(), sessions: z.number().int(), bytes: z.number() }),
          z.strictObject({ kind: z.literal('records'), origin: z.string(), store: z.string(), records: z.number().int(), truncated: z.number().int(), messages_dropped: z.number().int(), bytes: z.number() }),
        ]),
      ),
    })
    .nullable(),
});

export const StatusSchema = z.strictObject({
  ...head('status'),
  home: z.string(),
  home_exists: z.boolean(),
  state_file: z.string(),
  state: z.enum(['ok', 'missing', 'corrupt', 'no_home']),
  state_detail: z.string().optional(),
  /** the configuration file in force; null: built-in defaults */
  config: nullableString,
  daemon: z.looseObject({ running: z.boolean(), why: z.string(), pid: z.number().nullable() }),
  current_sweep: z.looseObject({ started_ms: z.number(), trigger: z.string() }).nullable(),
  last_sweep: z.looseObject({ outcome: z.string() }).nullable(),
  next_run_ms: z.number().nullable(),
  timer: z.looseObject({}).nullable(),
  stores: z.looseObject({}),
  metrics: z.looseObject({}),
  protection: z.looseObject({ file: z.string(), items: z.number(), unreadable: nullableString }),
  config_invalid: configInvalid,
});

export const HistorySchema = z.strictObject({
  ...head('history'),
  home: z.string(),
  audit_root: z.string(),
  audit_root_exists: z.boolean(),
  since_ms: z.number().nullable(),
  target: nullableString,
  sweeps: z.array(z.looseObject({ session_id: z.string() })),
  matches: z.array(z.looseObject({})).optional(),
  totals: z.looseObject({ sweeps: z.number(), sessions_removed: z.number(), records_removed: z.number(), records_truncated: z.number(), messages_dropped: z.number() }),
  problems: z.array(problem),
  config_invalid: configInvalid,
});

export const QuarantineLsSchema = z.strictObject({
  ...head('quarantine ls'),
  home: z.string(),
  window_secs: z.number().nullable(),
  items: z.array(z.looseObject({ kind: z.string(), target: z.string(), origin: z.string(), until_ms: z.number(), bytes: z.number(), path: z.string() })),
  totals: z.looseObject({ items: z.number(), bytes: z.number() }),
  problems: z.array(problem),
  config_invalid: configInvalid,
});

const protectedItem = z.looseObject({ kind: z.string(), target: z.string(), where: z.string(), since_ms: z.number(), by: z.string() });
const judgement = z.looseObject({ condemned: nullableString, policy: nullableString });

export const RestoreSchema = z.strictObject({
  ...head('restore'),
  target: z.string(),
  dry_run: z.boolean(),
  restored: z.array(z.looseObject({ held: z.enum(['session', 'context', 'truncation']), from: z.string(), to: z.string(), messages: z.number().optional() })),
  audit: nullableString,
  protection: z.looseObject({}).optional(),
  protection_error: z.looseObject({ code: z.string(), message: z.string() }).optional(),
});

export const ProtectSchema = z.strictObject({
  ...head('protect'),
  item: protectedItem,
  added: z.boolean(),
  present: z.boolean(),
  judgement,
  runtime: z.string().optional(),
  audit: nullableString,
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
  home: z.string(),
  file: z.string(),
  unreadable: nullableString,
  items: z.array(protectedItem.extend({ present: z.boolean() })),
});

/** What any of these commands prints under --json instead, when it fails (exit 1, 2 or 75). */
export const ErrorSchema = z.strictObject({
  schema_version: z.literal(SCHEMA_VERSION),
  command: z.enum(COMMANDS),
  error: z.strictObject({ code: z.string(), message: z.string(), hint: z.string().nullable().optional() }),
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
  error: ErrorSchema,
} as const;

/** The JSON Schema (draft 2020-12) of one document, as committed under docs/schemas/. */
export function jsonSchemaText(name: keyof typeof SCHEMAS): string {
  const schema = z.toJSONSchema(SCHEMAS[name], { target: 'draft-2020-12', io: 'output' });
  return JSON.stringify({ ...schema, $id: `https://github.com/murmur-gc/murmur-gc/docs/schemas/${name}.json`, title: `murmur-gc ${name.replace('-', ' ')} --json (schema_version ${SCHEMA_VERSION})` }, null, 2) + '\n';
}

