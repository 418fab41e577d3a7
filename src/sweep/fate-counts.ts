// What became of every item one sweep looked at, counted per store: the report's `fates` section,
// what `--json`, the summary line, `status` and the metrics count from. Pure.
// Guarantees: every session of a sessions root, every context of a record store and every held
// item of the undo window is counted exactly once, under the fate it ended in — the plan's
// (src/plan/fates.ts), the act's when one was carried out, `failed` when its act did not happen,
// `not_reached` when the sweep stopped before it — so each store's counts add up to what it holds.
// A store that holds nothing is left out.
import type { Fate, FatePlan, HoldFate } from '../plan/fates.js';
import { itemKey } from '../plan/fates.js';
import type { StoreFates } from '../schema/json-schemas.js';

/** The word of one fate: `kept:live`, `held:max_age`, `removed:keep_free`, `truncated:max_messages`, `purged:expired`. */
export function fateWord(f: Fate | HoldFate): string {
  switch (f.fate) {
    case 'kept':
      return `kept:${f.why}`;
    case 'held':
      return 'rule' in f ? `held:${f.rule}` : 'held';
    case 'removed':
      return `removed:${f.rule}`;
    case 'truncated':
      return 'truncated:max_messages';
    case 'purged':
      return `purged:${f.rule}`;
  }
}

export interface FateLedger {
  plan: FatePlan;
  /** what each act carried out (or tried) */
  acts: ReadonlyMap<string, Fate | HoldFate>;
  failed: ReadonlySet<string>;
}

function finalWord(key: string, planned: Fate | HoldFate | undefined, l: FateLedger): string {
  if (l.failed.has(key)) return 'failed';
  const acted = l.acts.get(key);
  if (acted) return fateWord(acted);
  if (!planned) return 'kept:policy';
  // a taking the sweep did not get to (stopped early): it stays
  if (
    planned.fate === 'removed' ||
    planned.fate === 'truncated' ||
    planned.fate === 'purged' ||
    (planned.fate === 'held' && 'rule' in planned)
  )
    return 'not_reached';
  return fateWord(planned);
}

export function countFates(
  roots: readonly { root: string; key: string; names: readonly string[]; holds: readonly string[] }[],
  stores: readonly { store: string; key: string; names: readonly string[] }[],
  quarantine: { place: string; holds: readonly string[] } | undefined,
  l: FateLedger,
): StoreFates[] {
  const out: StoreFates[] = [];
  const tally = (kind: StoreFates['kind'], place: string, words: string[]) => {
    if (words.length === 0) return;
    const counts: Record<string, number> = {};
    for (const w of words) counts[w] = (counts[w] ?? 0) + 1;
    out.push({ kind, place, items: words.length, counts });
  };
  for (const r of roots) {
    tally(
      'sessions',
      r.root,
      r.names.map((n) => finalWord(itemKey(r.key, n), l.plan.items.get(itemKey(r.key, n)), l)),
    );
    if (r.holds.length > 0)
      tally(
        'held',
        r.root,
        r.holds.map((k) => finalWord(k, l.plan.holds.get(k), l)),
      );
  }
  for (const s of stores)
    tally(
      'records',
      s.store,
      s.names.map((n) => finalWord(itemKey(s.key, n), l.plan.items.get(itemKey(s.key, n)), l)),
    );
  if (quarantine && quarantine.holds.length > 0)
    tally(
      'held',
      quarantine.place,
      quarantine.holds.map((k) => finalWord(k, l.plan.holds.get(k), l)),
    );
  return out;
}
