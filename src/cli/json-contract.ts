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
  const words = argv.filter((a) => !a.startsWith('-'));
  const [first] = words;
  if (first === 'conversation') return 'conversation';
  if (first === 'config') return 'config check';
  if (first === 'quarantine') return 'quarantine ls';
  if (first === 'protection') return 'protection ls';
  if (first === 'status' || first === 'history' || first === 'restore' || first === 'protect' || first === 'release') return first;
  return 'sweep';
}
