// The one JSON contract of murmur-gc's own commands (docs/json.md).
// Guarantees: every `--json` document of sweep, config check, status, history, quarantine ls,
// restore, protect, release and protection ls — and the error document any of them prints
// instead — opens with the same envelope, `schema_version` then `command`; each matches its
// schema in src/cli/json-schemas.ts. Within one `schema_version` members are only ever added.
// `conversation` is not covered: it keeps `mur conversation`'s shapes (that is its contract).
// Imports nothing (the zod schemas are loaded only by `npm run schemas` and the tests).

/** The contract's version: every enveloped document carries it. */
export const SCHEMA_VERSION = 1;

export const COMMANDS = ['sweep', 'config check', 'status', 'history', 'quarantine ls', 'restore', 'protect', 'release', 'protection ls'] as const;
export type JsonCommand = (typeof COMMANDS)[number];

/** `{schema_version, command, ...body}`: the envelope first, the command's members after it. */
export function envelope<T extends object>(command: JsonCommand, body: T): { schema_version: number; command: JsonCommand } & Omit<T, 'schema_version' | 'command'> {
  const { schema_version: _v, command: _c, ...rest } = body as T & { schema_version?: unknown; command?: unknown };
  return { schema_version: SCHEMA_VERSION, command, ...(rest as Omit<T, 'schema_version' | 'command'>) };
}

/** The envelope as one JSON line. */
export function jsonLine<T extends object>(command: JsonCommand, body: T): string {
  return JSON.stringify(envelope(command, body)) + '\n';
}

/** The command a failing `--json` invocation was (for the error document), from its arguments. */
export function commandOf(argv: readonly string[]): JsonCommand | 'conversation' {
  // The first argument naming a command (an option's value before it is passed over); none: sweep.
  for (const a of argv) {
    if (a === 'conversation') return 'conversation';
    if (a === 'config') return 'config check';
    if (a === 'quarantine') return 'quarantine ls';
    if (a === 'protection') return 'protection ls';
    if (a === 'sweep' || a === 'status' || a === 'history' || a === 'restore' || a === 'protect' || a === 'release') return a;
  }
  return 'sweep';
}
