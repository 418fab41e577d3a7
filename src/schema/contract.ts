// The names of murmur-gc's JSON contract (docs/json.md): its version and the commands whose
// `--json` documents it covers. Guarantees: imports nothing, so the bin can load it (the
// schemas module beside it is for types and `npm run schemas` only); src/schema/json-schemas.ts
// builds every document's schema on these, src/cli/json-contract.ts the envelope.

/** The contract's version: every enveloped document carries it. */
export const SCHEMA_VERSION = 2;

export const COMMANDS = [
  'sweep',
  'config check',
  'status',
  'history',
  'quarantine ls',
  'restore',
  'protect',
  'release',
  'protection ls',
  'explain',
  'du',
] as const;
export type JsonCommand = (typeof COMMANDS)[number];
