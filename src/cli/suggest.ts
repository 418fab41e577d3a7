// "Did you mean …?" for a mistyped command. `sweep` is the default command, so without this a
// mistyped `stauts` would reach it as an argument ("too many arguments for 'sweep'").
// Guarantees: pure; suggests only names within edit distance 2 (or a prefix), nearest first.

/** Optimal string alignment distance (Damerau–Levenshtein with adjacent transpositions). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

export function nearest(word: string, names: readonly string[]): string | undefined {
  // No command name is this long: skip the quadratic distance for an absurd argument.
  if (word.length > 64) return undefined;
  let best: { name: string; d: number } | undefined;
  for (const n of names) {
    const d = n.startsWith(word) && word.length >= 2 ? 1 : editDistance(word, n);
    if (d <= 2 && (!best || d < best.d)) best = { name: n, d };
  }
  return best?.name;
}

/**
 * The error text for a first argument that is no command, or undefined when it is one (or an
 * option, or absent).
 */
export function unknownCommand(argv: readonly string[], names: readonly string[]): string | undefined {
  const first = argv[0];
  if (first === undefined || first.startsWith('-') || names.includes(first)) return undefined;
  const near = nearest(first, names);
  return `murmur-gc: error: unknown command '${first}'${near ? `\n(Did you mean ${near}?)` : ''}\n(run murmur-gc --help for the commands)\n`;
}
