// Blast radius: how much one sweep may remove from one store (a sessions root, a record store),
// pure (no fs).
// Guarantees:
// - A configured `max_delete` applies to every sweep: a store trips when one sweep would remove
//   more than `count` entries, or more than `fraction` of the entries present.
// - Without it, a sweep a person runs by hand has no limit (they have --dry-run); an unattended
//   sweep (the daemon, the shipped timer) trips when it would remove more than half of a store
//   *and* more than 20 entries: small stores and steady trimming never trip it; a typo or a clock
//   jump on a big store does.
// - `--confirm-large` lifts the limit for that one sweep.
// - A tripped store removes nothing; the caller reports `blast_radius` with what it would remove.

export interface MaxDelete {
  count?: number;
  /** 0 < fraction <= 1 */
  fraction?: number;
}

export const UNATTENDED_MIN_COUNT = 20;
export const UNATTENDED_FRACTION = 0.5;

export interface BlastInput {
  /** Entries in the store (sessions in the root, records in the store). */
  present: number;
  /** Entries this sweep would remove from it. */
  remove: number;
  configured: MaxDelete | undefined;
  unattended: boolean;
  confirmLarge: boolean;
}

/** undefined when within bounds; else the limit exceeded, in words. */
export function blastRadius(i: BlastInput): string | undefined {
  if (i.confirmLarge || i.remove === 0) return undefined;
  const c = i.configured;
  if (c) {
    if (c.count !== undefined && i.remove > c.count) return `max_delete.count is ${c.count}`;
    if (c.fraction !== undefined && i.remove > c.fraction * i.present)
      return `max_delete.fraction is ${c.fraction} (${Math.floor(c.fraction * i.present)} of ${i.present})`;
    return undefined;
  }
  if (i.unattended && i.remove > UNATTENDED_FRACTION * i.present && i.remove > UNATTENDED_MIN_COUNT) {
    return `an unattended sweep removes at most half of a store once it is more than ${UNATTENDED_MIN_COUNT} entries`;
  }
  return undefined;
}
