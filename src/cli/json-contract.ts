// The one JSON contract of murmur-gc's own commands (docs/json.md).
// Guarantees: every `--json` document of sweep, config check, status, history, quarantine ls,
// restore, protect, release, protection ls and explain — and the error document any of them prints
// instead — opens with the same envelope, `schema_version` then `command`; each matches its
// schema in src/schema/json-schemas.ts. Within one `schema_version` members are only ever added.
// `conversation` is not covered: it keeps `mur conversation`'s shapes (that is its contract).
// Each document's body is typed by its schema: a producer that does not follow it fails `tsc`.
// Imports the schemas' types only (the schemas themselves are loaded only by `npm run schemas`
// and the tests).
import type { HistoryDoc, SweepHistory, TargetMatch } from '../commands/history.js';
import { SCHEMA_VERSION, type JsonCommand } from '../schema/contract.js';
import type { Body, HistoryBody, JsonDocs, Renamed } from '../schema/json-schemas.js';

/** `{schema_version, command, ...body}`: the envelope first, the command's members after it. */
export function envelope<T extends object>(
  command: JsonCommand,
  body: T,
): { schema_version: number; command: JsonCommand } & Omit<T, 'schema_version' | 'command'> {
  const { schema_version: _v, command: _c, ...rest } = body as T & { schema_version?: unknown; command?: unknown };
  return { schema_version: SCHEMA_VERSION, command, ...(rest as Omit<T, 'schema_version' | 'command'>) };
}

/** The envelope as one JSON line; `body` is typed by the command's schema (src/schema/json-schemas.ts). */
export function jsonLine<C extends JsonCommand>(command: C, body: Body<JsonDocs[C]>): string {
  return JSON.stringify(envelope(command, body)) + '\n';
}

/** `o` with its members renamed by `names` (old → new), each in its place. */
function renamed<T extends object, const M extends Readonly<Record<string, string>>>(o: T, names: M): Renamed<T, M> {
  const n: Readonly<Record<string, string>> = names;
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [n[k] ?? k, v as unknown])) as Renamed<T, M>;
}

/**
 * A protected item as the contract names it: the protection list's `where` (its file's key) is
 * `origin`, the word every document uses for the sessions root or record store of an item.
 */
export function protectedItemJson<T extends { where: string }>(item: T): Renamed<T, { where: 'origin' }> {
  return renamed(item, { where: 'origin' });
}

/**
 * `history --json`'s members in the contract's words (docs/json.md "Changes"): a sweep is named by
 * its `audit` session id (as the sweep's report and `status` name it), an item by `target`, where
 * it lives by `origin`, a count of messages by `messages_<what>`, what kind of item a hold is by
 * `held_kind`. Every other member is passed through as it is, in its place.
 */
export function historyJson(doc: HistoryDoc): HistoryBody {
  const sweep = (s: SweepHistory) => {
    const { sessions, ...reconciled } = s.reconciled; // `sessions` comes last when present
    return renamed(
      {
        ...s,
        retention: s.retention.map((r) => renamed(r, { dropped_by_target: 'messages_dropped_by_target' })),
        reconciled: {
          ...reconciled,
          ...(sessions ? { sessions: sessions.map((r) => renamed(r, { session: 'target' })) } : {}),
        },
        quarantine: { ...s.quarantine, restored: s.quarantine.restored.map((r) => renamed(r, { held: 'held_kind' })) },
      },
      { session_id: 'audit' },
    );
  };
  const match = (m: TargetMatch) => renamed(m, { sweep: 'audit', where: 'origin' });
  // `matches` keeps its place: spread with the rest, then renamed over itself
  const rest: Omit<HistoryDoc, 'matches'> = doc;
  return { ...rest, sweeps: doc.sweeps.map(sweep), ...(doc.matches ? { matches: doc.matches.map(match) } : {}) };
}

/** The command a failing `--json` invocation was (for the error document), from its arguments. */
export function commandOf(argv: readonly string[]): JsonCommand | 'conversation' {
  // The first argument naming a command (an option's value before it is passed over); none: sweep.
  for (const a of argv) {
    if (a === 'conversation') return 'conversation';
    if (a === 'config') return 'config check';
    if (a === 'quarantine') return 'quarantine ls';
    if (a === 'protection') return 'protection ls';
    if (
      a === 'sweep' ||
      a === 'status' ||
      a === 'history' ||
      a === 'restore' ||
      a === 'protect' ||
      a === 'release' ||
      a === 'explain' ||
      a === 'du'
    )
      return a;
  }
  return 'sweep';
}
