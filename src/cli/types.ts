// Types shared by the CLI modules (src/cli/*), kept apart so that no command module has to import
// another: main.ts wires the commands, the command modules import only this and context.ts.
// Guarantees: nothing here touches the file system or the process; ExitWith carries an exit code.

/** Flags every command that reads the configuration accepts. */
export interface CommonFlags {
  config?: string | undefined;
  home?: string | undefined;
}

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
