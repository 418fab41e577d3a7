// How a command-line argument is echoed back in an error message.
// Guarantees: an argument of at most ECHO_MAX characters with no control characters is echoed as
// given; any other is echoed JSON-escaped (one line, no raw control characters) in double quotes,
// and past ECHO_MAX characters elided in the middle with its length, so an error line stays
// bounded whatever was passed. Pure.

export const ECHO_MAX = 200;

// C0, DEL, C1 and the Unicode line/paragraph separators: anything a terminal or log reader could
// take for a line break or a control sequence.
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/** The form of `arg` to print: itself when short and plain, else escaped and bounded. */
export function echoArg(arg: string): string {
  if (arg.length <= ECHO_MAX && !UNSAFE.test(arg)) return arg;
  const esc = (s: string) =>
    JSON.stringify(s)
      .slice(1, -1)
      .replace(/[\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  if (arg.length <= ECHO_MAX) return `"${esc(arg)}"`;
  const half = ECHO_MAX / 2;
  return `"${esc(arg.slice(0, half))}…(${arg.length} characters)…${esc(arg.slice(-half))}"`;
}

/**
 * `text` with every argument of `argv` that is not echoed as given (see echoArg) replaced by its
 * echo form; a quoted occurrence ('ARG') loses its quotes, the echo form brings its own. The value
 * of a `--name=value` argument counts as an argument.
 */
export function boundEchoes(text: string, argv: readonly string[]): string {
  const args = new Set<string>();
  for (const a of argv) {
    args.add(a);
    const eq = /^--[^=]+=/.exec(a);
    if (eq) args.add(a.slice(eq[0].length));
  }
  let out = text;
  // Longest first, so a value inside a longer `--name=value` is replaced after its whole.
  for (const a of [...args].sort((x, y) => y.length - x.length)) {
    const shown = echoArg(a);
    if (shown === a || !out.includes(a)) continue;
    out = out.replaceAll(`'${a}'`, shown).replaceAll(a, shown);
  }
  return out;
}
