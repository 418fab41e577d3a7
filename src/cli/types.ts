// Types shared by the CLI modules (src/cli/*), kept apart so that no command module has to import
// another: main.ts wires the commands, the command modules import only this and context.ts (and
// the one help text they all share).
// Guarantees: nothing here touches the file system or the process; ExitWith carries an exit code.

/** Flags every command that reads the configuration accepts. */
export interface CommonFlags {
  config?: string | undefined;
  home?: string | undefined;
  /** `--force-home`: use the home even when src/config/home.ts would refuse it. */
  forceHome?: boolean | undefined;
}

/** The help of `--force-home`, which every command with `--home` takes. */
export const FORCE_HOME_HELP =
  'use the home even when it is not recognisably a murmur home (none of conversations/, running/, state/, gc/… in it, and not empty) or is a system path such as / or $HOME (docs/config.md "The home")';

export interface GlobalOptions {
  config?: string;
  home?: string;
  json?: boolean;
}

/** Thrown by command actions to set the exit code without printing anything more. */
export class ExitWith extends Error {
  constructor(readonly exitCode: number) {
    super(`exit ${exitCode}`);
  }
}
