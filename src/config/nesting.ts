// How deeply a YAML text nests, measured on the raw text before it is parsed.
// Guarantees: linear in the text, no recursion, never throws. The result is an upper bound on the
// document's nesting depth for the YAML murmur-gc reads (block indentation levels, compact `- `
// entries on one line, and `[`/`{` outside quoted scalars and comments); brackets inside plain
// scalars can only make it larger. The loader refuses a text above MAX_NESTING before the `yaml`
// parser, whose composer recurses per level, can run out of stack (docs/config.md).

/** Deeper than any configuration needs (murmur-gc's own keys nest at most 5 levels). */
export const MAX_NESTING = 64;

/** Where the nesting first exceeds `limit` (1-based line and column), or undefined. */
export function nestingBeyond(text: string, limit = MAX_NESTING): { line: number; column: number } | undefined {
  const indents: number[] = []; // block levels open at the start of the current line
  let flow = 0;
  let line = 1;
  let lineStart = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    // Start of a line (outside flow context): its indentation closes deeper block levels.
    let j = i;
    while (j < n && text[j] === ' ') j++;
    if (flow === 0 && j < n && text[j] !== '\n' && text[j] !== '#') {
      const col = j - i;
      while (indents.length > 0 && indents[indents.length - 1]! >= col) indents.pop();
      indents.push(col);
      // Compact block entries on the same line (`- - - x`, `? - x`): each after the first opens
      // one more level (the first is the level the indentation just opened).
      let first = true;
      while (j + 1 < n && (text[j] === '-' || text[j] === '?') && (text[j + 1] === ' ' || text[j + 1] === '\n')) {
        if (!first) indents.push(j - lineStart);
        first = false;
        j += 2;
        while (j < n && text[j] === ' ') j++;
        if (indents.length + flow > limit) return { line, column: j - lineStart + 1 };
      }
      if (indents.length + flow > limit) return { line, column: j - lineStart + 1 };
    }
    // The rest of the line: flow brackets, quoted scalars (which may span lines), comments.
    while (j < n && text[j] !== '\n') {
      const c = text[j]!;
      const prev = j === lineStart ? ' ' : text[j - 1]!;
      if (c === '#' && (prev === ' ' || prev === '\t')) {
        while (j < n && text[j] !== '\n') j++;
        break;
      }
      if ((c === '"' || c === "'") && ' \t[{,:'.includes(prev)) {
        j++;
        while (j < n) {
          if (text[j] === c) {
            if (c === "'" && text[j + 1] === "'") {
              j += 2; // '' is a quote inside a single-quoted scalar
              continue;
            }
            break;
          }
          if (c === '"' && text[j] === '\\') j++;
          else if (text[j] === '\n') {
            line++;
            lineStart = j + 1;
          }
          j++;
        }
        j++;
        continue;
      }
      if (c === '[' || c === '{') {
        flow++;
        if (indents.length + flow > limit) return { line, column: j - lineStart + 1 };
      } else if ((c === ']' || c === '}') && flow > 0) flow--;
      j++;
    }
    if (j < n) {
      line++;
      lineStart = j + 1;
    }
    i = j + 1;
  }
  return undefined;
}
