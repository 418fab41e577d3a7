// The YAML syntax error type and the locator a parsed file gives (src/config/parse.ts makes both);
// its own module so the loader can recognise them without loading the YAML parser.
import { ConfigError } from '../errors.js';

/** 1-based line and column of the key (or item) a key path names, in one parsed file. */
export type Locator = (segments: readonly (string | number)[]) => { line: number; column: number } | undefined;

/** Several YAML syntax errors in one file: the first is this error, `all` holds every one. */
export class YamlSyntaxError extends ConfigError {
  constructor(readonly all: ConfigError[]) {
    const first = all[0] ?? new ConfigError('', 'invalid YAML');
    super(
      first.keyPath,
      first.detail,
      first.file,
      first.line !== undefined && first.column !== undefined ? { line: first.line, column: first.column } : undefined,
    );
  }
}
