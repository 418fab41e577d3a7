// Grouping a list by a key in one pass. Guarantees: linear in the items (each is pushed onto its
// group's array once; no group is copied); the groups come in the order their first item came,
// and each group's items in their original order; the input is not changed.

/** The items of `items` grouped by `keyOf`, first-seen key order, items in input order. */
export function groupBy<T, K>(items: Iterable<T>, keyOf: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}
