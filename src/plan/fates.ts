// The fate planner: what becomes of every item one sweep looks at, decided once, from the scans
// alone (pure: no fs, no clock). The dry run and the real run both act on its answer, so the dry
// run lists exactly what the real run does. The table of fates and which rule, budget or guard may
// change which is docs/fates.md.
//
// Guarantees:
// - One fate per item: every session of a sessions root, every context of a record store and
//   every held item (the undo window) gets exactly one — kept (and why), held (by which rule, until
//   when), removed for good (by which rule), truncated (max_messages), or, for a held item, purged
//   (its window passed, or keep_free needed the space).
// - Policies first, as the runtime defines them (src/plan/sessions.ts, src/plan/records.ts). Then
//   `max_bytes`, store by store in input order: the oldest removable items in place go until the
//   store is at or under its budget. Then `keep_free` (bytes, and inodes where the filesystem has a
//   fixed number): holds first (those of earlier sweeps, the one whose window ends first first;
//   then what this sweep would hold), then the oldest removable items in place across every store
//   taking part — of each store at most its per-sweep share of its items (at least one, whatever
//   its size) — until the filesystem is no longer short.
// - The undo window: with `quarantine`, nothing a sweep takes by age, count or `max_bytes` is gone
//   for good before its window passes — it is held — unless `keep_free` finds the filesystem
//   short: only keep_free removes for good, and purges holds, and never holds what it takes
//   (holding frees nothing). A store whose items cannot be held (murmur-gc's own audit root, a
//   record store on another filesystem than the home) removes at once.
// - Held items are not charged to a store's `max_bytes`: the budget counts what is in place, so
//   holding what it takes brings a store under it; keep_free counts what the disk holds, holds too.
// - What a budget counts is what the scan measured: sizes before anything was done, a truncation
//   at the size it leaves, and for keep_free the filesystem's free space then plus what this
//   sweep's own removals, purges and truncations free by those sizes (holds free nothing).
// - All or nothing: a budget is acted on only when the removable items could meet it together;
//   then the fewest oldest go, none skipped. Otherwise nothing goes for it and it is unmet, with
//   what held it and the largest items it may not touch.
// - Never removable: a live session or a context a live session names, a protected item, another
//   user's entry, a record whose header names no capsule of the store's policies, an item in a
//   store this process may not write, an item whose act failed earlier this sweep.
// - The blast-radius guard (src/plan/guards.ts) counts, per store, the items of that store's kind
//   every rule together would take this sweep (held or removed; sessions in a sessions root,
//   contexts in a record store — never what lies beside a session, never a truncation). A store it
//   stops loses nothing to any rule that sweep (kept, `blast_radius`), and the budgets are planned
//   again without it, until no store trips.
// - Deterministic: ties in age go by name, then by store order.
import type { RecordRetain, SessionRetain } from '../config/types.js';
import { blastRadius, type MaxDelete } from './guards.js';
import { planRecords } from './records.js';
import { planSessions } from './sessions.js';
import { idTimestampMs } from '../runtime/ids.js';
import type { BudgetStoreOutcome, BudgetUnmet } from '../schema/json-schemas.js';

/** A budget's outcome per store, and a budget left unmet: the report's (src/schema/json-schemas.ts). */
export type { BudgetStoreOutcome, BudgetUnmet };

export type PolicyRule = 'max_age' | 'max_sessions' | 'max_messages';
export type BudgetRule = 'max_bytes' | 'keep_free';
export type Rule = PolicyRule | BudgetRule;

/** Why an item stays where it is. */
export type KeptWhy =
  /** no rule takes it (no policy, inside every policy, not needed by a budget) */
  | 'policy'
  /** a live session, or a context a live session names */
  | 'live'
  | 'protected'
  /** another user's */
  | 'foreign_owner'
  /** a record whose header names no capsule of its store's policies (never pruned automatically) */
  | 'not_owned'
  /** this process may not write its store (root_not_writable) */
  | 'not_writable'
  /** its act did not happen earlier this sweep */
  | 'failed'
  /** the blast-radius guard stopped its store */
  | 'blast_radius';

export type Fate =
  | { fate: 'kept'; why: KeptWhy; condemnedBy?: Rule }
  | { fate: 'held'; rule: 'max_age' | 'max_sessions' | 'max_bytes'; untilMs: number }
  /** `condemnedBy`: what this sweep would have held it for, when keep_free took it for good instead */
  | {
      fate: 'removed';
      rule: 'max_age' | 'max_sessions' | BudgetRule;
      condemnedBy?: 'max_age' | 'max_sessions' | 'max_bytes';
    }
  /** the newest `keep` messages stay; `heldUntilMs`: the dropped lines are held until then */
  | { fate: 'truncated'; keep: number; dropped: number; heldUntilMs?: number };

export type HoldFate =
  | { fate: 'held'; untilMs: number }
  | { fate: 'purged'; rule: 'expired' | 'keep_free' }
  | { fate: 'kept'; why: 'foreign_owner' | 'failed' };

export interface SessionIn {
  name: string;
  live: boolean;
  /** why it is live, for the skip's words */
  liveWhy?: string;
  owned: boolean;
  protected: boolean;
  /** allocated bytes of the session and of what goes beside it with it; undefined: not measured */
  bytes?: number;
  /** the inodes it holds (files and directories), when keep_free counts them */
  inodes?: number;
}

/** A root's sessions as the planner reads them: one after the other, and how many. */
export type SessionsIn = Iterable<SessionIn> & { readonly length: number };

/**
 * A root's sessions packed column by column — its name, a byte of flags, and bytes and inodes
 * only where a budget measured them — so what the planner is given for 100 000 sessions is a
 * pointer and a byte each, not an object each (docs/limits.md, "What the plan holds"). Iterating
 * makes each SessionIn in turn, garbage once looked at.
 */
export class PackedSessions implements Iterable<SessionIn> {
  static readonly LIVE = 1;
  static readonly OWNED = 2;
  static readonly PROTECTED = 4;
  readonly length: number;

  /**
   * `flags[i]`: LIVE | OWNED | PROTECTED of `names[i]`; `sizes`, when given: bytes at 2i and inodes
   * at 2i + 1, NaN where not measured.
   */
  constructor(
    readonly names: readonly string[],
    private readonly flags: Uint8Array,
    private readonly sizes?: Float64Array,
  ) {
    this.length = names.length;
  }

  at(i: number): SessionIn {
    const f = this.flags[i] ?? 0;
    const s: SessionIn = {
      name: this.names[i]!,
      live: (f & PackedSessions.LIVE) !== 0,
      owned: (f & PackedSessions.OWNED) !== 0,
      protected: (f & PackedSessions.PROTECTED) !== 0,
    };
    if (this.sizes) {
      const bytes = this.sizes[2 * i]!;
      const inodes = this.sizes[2 * i + 1]!;
      if (!Number.isNaN(bytes)) s.bytes = bytes;
      if (!Number.isNaN(inodes)) s.inodes = inodes;
    }
    return s;
  }

  *[Symbol.iterator](): Iterator<SessionIn> {
    for (let i = 0; i < this.length; i++) yield this.at(i);
  }
}

export interface RootIn {
  /** `sessions:<root>` */
  key: string;
  label: string;
  retain: SessionRetain | undefined;
  /** sessions at or after this id are never condemned (the audit root: the running audit) */
  floorId?: string;
  maxBytes?: number;
  /** draws on keep_free (it has a policy and sits on the home's filesystem) */
  keepFree: boolean;
  /** what is taken here may be held by the undo window */
  holdable: boolean;
  /** false: this process may not write it, nothing there is attempted */
  writable: boolean;
  /** a list, or (the sweep's input) PackedSessions: what the planner reads is each in turn and the count */
  sessions: SessionsIn;
  /** what no rule removes but its budget counts (child workdirs that stay), with the code that keeps each */
  fixed: { target: string; code: string; bytes: number }[];
}

export interface ContextIn {
  context: string;
  /** the capsule its header names; undefined: no header */
  capsule?: string;
  mtimeMs: number;
  messages?: number;
  live: boolean;
  owned: boolean;
  protected: boolean;
  bytes?: number;
  /** the allocated bytes its max_messages truncation would leave (predicted from its new length) */
  bytesAfterTruncation?: number;
  inodes?: number;
}

export interface StoreIn {
  /** `records:<store>` */
  key: string;
  label: string;
  /** the policies naming this store, in configuration order */
  policies: { capsule: string; retain: RecordRetain | undefined }[];
  maxBytes?: number;
  keepFree: boolean;
  holdable: boolean;
  writable: boolean;
  contexts: ContextIn[];
}

export interface HoldIn {
  /** `<parent>/<entry>` */
  key: string;
  /** the store it was taken from (a root or store key, or `quarantine` when unknown) */
  store: string;
  target: string;
  untilMs: number;
  owned: boolean;
  bytes?: number;
  inodes?: number;
  /** keep_free may purge it: it sits on the home's filesystem */
  keepFree: boolean;
}

export interface GuardIn {
  maxDelete?: MaxDelete;
  unattended: boolean;
  confirmLarge: boolean;
}

export interface FateInput {
  nowMs: number;
  /** the undo window in ms; undefined: removals are at once */
  quarantineMs?: number;
  guard: GuardIn;
  /**
   * keep_free: bytes missing from it when the sweep measured (≤ 0: met), the room wanted for a
   * missing reserve; inodes missing (≤ 0 or absent: met) and their room; the most it takes of one
   * store's items in one sweep, as a share (0 < perSweep ≤ 1; default 1: no bound).
   */
  keepFree?: { short: number; room: number; inodesShort?: number; inodesRoom?: number; perSweep?: number };
  roots: RootIn[];
  stores: StoreIn[];
  holds: HoldIn[];
  /** items (itemKey) and holds (their key) whose act did not happen this sweep: they stay */
  failed?: ReadonlySet<string>;
  /** stores the guard stopped earlier this sweep (a plan made again never lets them go) */
  stopped?: ReadonlySet<string>;
}

/** A store the guard stopped: what every rule together would have taken there. */
export interface Stop {
  store: string;
  kind: 'sessions' | 'records';
  present: number;
  going: string[];
  /** the limit exceeded, in words (src/plan/guards.ts) */
  limit: string;
}

/** How many of the largest untouchable items an unmet budget names. */
export const UNMET_LARGEST = 3;

export interface KeepFreeOutcome {
  /** what keep_free asked of this sweep: missing bytes, the reserve's room included when wanted */
  short: number;
  short_after: number;
  /** the room for a missing reserve this sweep made (0 when it was not wanted or out of reach) */
  room: number;
  /** the room for the reserve's inode part this sweep made */
  inodes_room: number;
  /** inodes missing from what keep_free asks (the reserve's room included), before and after */
  inodes_short: number;
  inodes_short_after: number;
  /** inodes this sweep frees on the filesystem (the policies' and keep_free's removals, purged holds) */
  freed_inodes: number;
  /** holds purged, items removed for good for it */
  purged: number;
  removed: number;
  /** what this sweep frees on the home's filesystem by the measured sizes: its policies' removals and truncations, purges, the budgets' removals */
  freed: number;
}

export interface FatePlan {
  /**
   * itemKey(store, name) → fate, for every item that is not simply kept: an item absent here is
   * kept by its policy (`KEPT`; see fateOf). Most items of a home are, so they cost nothing here.
   */
  items: Map<string, Fate>;
  /** hold key → fate */
  holds: Map<string, HoldFate>;
  stops: Stop[];
  budget: { stores: BudgetStoreOutcome[]; keepFree: KeepFreeOutcome | undefined; unmet: BudgetUnmet[] };
}

export const itemKey = (store: string, name: string): string => `${store}\0${name}`;

/** The fate of an item no rule takes and nothing keeps for a reason of its own. */
export const KEPT: Fate = Object.freeze({ fate: 'kept', why: 'policy' });

/** The fate of the item `name` of `store` in `plan`. */
export function fateOf(plan: FatePlan | undefined, store: string, name: string): Fate {
  return plan?.items.get(itemKey(store, name)) ?? KEPT;
}

/** Every fate of one sweep (see the header). */
export function planFates(input: FateInput): FatePlan {
  const stopped = new Set(input.stopped);
  const stops: Stop[] = [];
  for (;;) {
    const plan = planWith(input, stopped);
    const trips = guardTrips(input, plan);
    if (trips.length === 0) return { ...plan, stops };
    for (const t of trips) {
      stopped.add(t.store);
      stops.push(t);
    }
  }
}

// ---- the plan for one set of stopped stores ------------------------------------------------------

/** An item a budget may count: where it is, its size, its age, whether it may go. */
interface Candidate {
  key: string;
  store: string;
  target: string;
  ageMs: number;
  bytes: number;
  inodes: number;
  holdable: boolean;
}

function planWith(input: FateInput, stopped: ReadonlySet<string>): Omit<FatePlan, 'stops'> {
  const items = new Map<string, Fate>();
  const holds = new Map<string, HoldFate>();
  const failed = input.failed ?? new Set<string>();
  const until = input.quarantineMs === undefined ? undefined : input.nowMs + input.quarantineMs;
  const taken = (holdable: boolean, rule: 'max_age' | 'max_sessions'): Fate =>
    holdable && until !== undefined ? { fate: 'held', rule, untilMs: until } : { fate: 'removed', rule };

  // 1. the policies
  for (const r of input.roots) planRootPolicy(r, input.nowMs, stopped.has(r.key), failed, taken, items);
  for (const s of input.stores) planStorePolicy(s, input.nowMs, stopped.has(s.key), failed, until, items);
  for (const h of input.holds) {
    if (h.untilMs > input.nowMs) holds.set(h.key, { fate: 'held', untilMs: h.untilMs });
    else if (!h.owned) holds.set(h.key, { fate: 'kept', why: 'foreign_owner' });
    else holds.set(h.key, failed.has(h.key) ? { fate: 'kept', why: 'failed' } : { fate: 'purged', rule: 'expired' });
  }

  // 2. the budgets
  const budgeted =
    input.keepFree !== undefined ||
    input.roots.some((r) => r.maxBytes !== undefined) ||
    input.stores.some((s) => s.maxBytes !== undefined);
  if (!budgeted) return { items, holds, budget: { stores: [], keepFree: undefined, unmet: [] } };
  const policyItems = new Map(items);
  const policyHolds = new Map(holds);
  const budget = planBudgets(input, stopped, items, holds, until);
  markProtectedWanted(input, stopped, items, policyItems, policyHolds, until);
  return { items, holds, budget };
}

/**
 * A protected item a budget would have taken, were it not protected, is kept saying so
 * (`condemnedBy` the budget's rule): the same budgets planned once more with protection ignored.
 */
function markProtectedWanted(
  input: FateInput,
  stopped: ReadonlySet<string>,
  items: Map<string, Fate>,
  policyItems: ReadonlyMap<string, Fate>,
  policyHolds: ReadonlyMap<string, HoldFate>,
  until: number | undefined,
): void {
  // (a protected item of a store no budget reaches is never taken by the plan below either)
  const guarded = [
    ...input.roots.flatMap((r) => [...r.sessions].filter((s) => s.protected).map((s) => itemKey(r.key, s.name))),
    ...input.stores.flatMap((st) => st.contexts.filter((c) => c.protected).map((c) => itemKey(st.key, c.context))),
  ];
  if (guarded.length === 0) return;
  const shadow = new Map(policyItems);
  planBudgets(input, stopped, shadow, new Map(policyHolds), until, true);
  for (const key of guarded) {
    const real = items.get(key);
    const would = shadow.get(key);
    if (real !== undefined && (real.fate !== 'kept' || real.why !== 'policy')) continue;
    if (would?.fate === 'held' || would?.fate === 'removed')
      items.set(key, { fate: 'kept', why: 'protected', condemnedBy: would.rule });
  }
}

function planRootPolicy(
  r: RootIn,
  nowMs: number,
  stopped: boolean,
  failed: ReadonlySet<string>,
  taken: (holdable: boolean, rule: 'max_age' | 'max_sessions') => Fate,
  items: Map<string, Fate>,
): void {
  // Only what the runtime's policy condemns, and by which rule, is taken from planSessions; why a
  // condemned session stays is decided here (keptWhy). Live and protected sessions keep their rank
  // there anyway, so every session goes in as one it may remove.
  const p = planSessions(
    Array.from(r.sessions, (s) => ({ name: s.name, liveness: 'dead', livenessWhy: '' })),
    r.retain,
    nowMs,
    r.floorId,
  );
  if (p.remove.length === 0) return;
  // Only what a rule condemns gets an entry (and a key): a kept `policy` is the absence of one.
  const condemned = new Map<string, 'max_age' | 'max_sessions'>();
  for (const x of p.remove) condemned.set(x.name, x.reason);
  for (const s of r.sessions) {
    const rule = condemned.get(s.name);
    if (rule === undefined) continue;
    const key = itemKey(r.key, s.name);
    items.set(key, keptWhy(s, r.writable, failed.has(key), stopped, rule) ?? taken(r.holdable, rule));
  }
}

/** Why an item a rule condemns stays, or undefined when it may go. */
function keptWhy(
  i: { protected: boolean; live: boolean; owned: boolean },
  writable: boolean,
  failed: boolean,
  stopped: boolean,
  rule: Rule,
): Fate | undefined {
  const why: KeptWhy | undefined = i.protected
    ? 'protected'
    : i.live
      ? 'live'
      : !i.owned
        ? 'foreign_owner'
        : !writable
          ? 'not_writable'
          : failed
            ? 'failed'
            : stopped
              ? 'blast_radius'
              : undefined;
  return why === undefined ? undefined : { fate: 'kept', why, condemnedBy: rule };
}

function planStorePolicy(
  s: StoreIn,
  nowMs: number,
  stopped: boolean,
  failed: ReadonlySet<string>,
  until: number | undefined,
  items: Map<string, Fate>,
): void {
  const ruleOf = new Map<string, { rule: 'max_age' | 'max_messages'; keep?: number; dropped?: number }>();
  const owners = new Set<string>();
  for (const pol of s.policies) {
    // The first policy naming a capsule decides its records (a later duplicate adds nothing).
    if (owners.has(pol.capsule)) continue;
    owners.add(pol.capsule);
    const mine = s.contexts.filter((c) => c.capsule === pol.capsule);
    const p = planRecords(
      mine.map((c) => ({
        context: c.context,
        header: { type: 'murmur.record', capsule: pol.capsule, created_ms: 0n },
        mtimeMs: c.mtimeMs,
        messages: c.messages,
      })),
      pol.capsule,
      pol.retain,
      new Set(),
      nowMs,
    );
    for (const x of p.remove) ruleOf.set(x.context, { rule: 'max_age' });
    for (const x of p.truncate)
      ruleOf.set(x.context, { rule: 'max_messages', keep: x.keep, dropped: x.messagesDropped });
  }
  for (const c of s.contexts) {
    const owned = c.capsule !== undefined && owners.has(c.capsule);
    const r = ruleOf.get(c.context);
    if (owned && r === undefined) continue;
    const key = itemKey(s.key, c.context);
    if (!owned) items.set(key, { fate: 'kept', why: 'not_owned' });
    else if (r === undefined) continue;
    else {
      const kept = keptWhy(c, s.writable, failed.has(key), stopped, r.rule);
      if (kept) items.set(key, kept);
      else if (r.rule === 'max_age')
        items.set(
          key,
          s.holdable && until !== undefined
            ? { fate: 'held', rule: 'max_age', untilMs: until }
            : { fate: 'removed', rule: 'max_age' },
        );
      else
        items.set(key, {
          fate: 'truncated',
          keep: r.keep ?? 0,
          dropped: r.dropped ?? 0,
          ...(until !== undefined ? { heldUntilMs: until } : {}),
        });
    }
  }
}

// ---- budgets ----------------------------------------------------------------------------------

interface StoreState {
  key: string;
  label: string;
  index: number;
  maxBytes: number | undefined;
  keepFree: boolean;
  holdable: boolean;
  /** bytes in place (what the budget counts) */
  charged: number;
  before: number;
  /** items of the store (what keep_free's per-sweep share is of) */
  present: number;
  candidates: Candidate[];
  /** items that stay whatever a budget wants: code and bytes */
  staying: { target: string; code: string; bytes: number }[];
  removed: number;
  freed: number;
  held: number;
  heldPurged: number;
}

const byName = (a: { target: string }, b: { target: string }): number =>
  a.target < b.target ? -1 : a.target > b.target ? 1 : 0;
/** One store's candidates, oldest first (the names of one store are never alike). */
const byAge = (a: Candidate, b: Candidate): number => a.ageMs - b.ageMs || byName(a, b);

/**
 * What a budget may not take an item for (undefined: it may): the reason its policy fate keeps it,
 * or being live, protected, another user's, in a store it may not write or the guard stopped, or
 * having failed earlier this sweep. `ignoreProtection`: what a budget would take were nothing protected.
 */
function blockOf(
  f: Fate | undefined,
  i: { protected: boolean; live: boolean; owned: boolean },
  where: { liveCode: string; writable: boolean; stopped: boolean; failed: boolean },
  ignoreProtection: boolean,
): string | undefined {
  if (f?.fate === 'kept' && f.why !== 'policy' && !(ignoreProtection && f.why === 'protected'))
    return f.why === 'live' ? where.liveCode : f.why;
  if (i.protected && !ignoreProtection) return 'protected';
  if (i.live) return where.liveCode;
  if (!i.owned) return 'foreign_owner';
  if (!where.writable) return 'not_writable';
  if (where.failed) return 'failed';
  if (where.stopped) return 'blast_radius';
  return undefined;
}

/** The stores a budget reaches, with what they hold in place once the policies acted. */
function budgetStores(
  input: FateInput,
  stopped: ReadonlySet<string>,
  items: Map<string, Fate>,
  ignoreProtection: boolean,
): StoreState[] {
  const out: StoreState[] = [];
  const failed = input.failed ?? new Set<string>();
  const state = (
    key: string,
    label: string,
    maxBytes: number | undefined,
    keepFree: boolean,
    holdable: boolean,
  ): StoreState => ({
    key,
    label,
    index: out.length,
    maxBytes,
    keepFree,
    holdable,
    charged: 0,
    before: 0,
    present: 0,
    candidates: [],
    staying: [],
    removed: 0,
    freed: 0,
    held: 0,
    heldPurged: 0,
  });
  const place = (st: StoreState, c: Candidate, blocked: string | undefined) => {
    st.charged += c.bytes;
    if (blocked !== undefined) st.staying.push({ target: c.target, code: blocked, bytes: c.bytes });
    else st.candidates.push(c);
  };
  for (const r of input.roots) {
    if (r.maxBytes === undefined && !r.keepFree) continue;
    const st = state(r.key, r.label, r.maxBytes, r.keepFree, r.holdable);
    const where = { liveCode: 'live_session', writable: r.writable, stopped: stopped.has(r.key) };
    st.present = r.sessions.length;
    for (const s of r.sessions) {
      const key = itemKey(r.key, s.name);
      const f = items.get(key);
      if (f?.fate === 'held' || f?.fate === 'removed' || s.bytes === undefined) continue;
      const c = {
        key,
        store: r.key,
        target: s.name,
        ageMs: idTimestampMs(s.name, 'ses_') ?? 0,
        bytes: s.bytes,
        inodes: s.inodes ?? 0,
        holdable: r.holdable,
      };
      place(st, c, blockOf(f, s, { ...where, failed: failed.has(key) }, ignoreProtection));
    }
    for (const x of r.fixed) {
      st.charged += x.bytes;
      st.staying.push(x);
    }
    st.before = st.charged;
    out.push(st);
  }
  for (const s of input.stores) {
    if (s.maxBytes === undefined && !s.keepFree) continue;
    const st = state(s.key, s.label, s.maxBytes, s.keepFree, s.holdable);
    const where = { liveCode: 'live_context', writable: s.writable, stopped: stopped.has(s.key) };
    st.present = s.contexts.length;
    for (const x of s.contexts) {
      const key = itemKey(s.key, x.context);
      const f = items.get(key);
      if (f?.fate === 'held' || f?.fate === 'removed' || x.bytes === undefined) continue;
      // a record its max_messages truncates weighs what the truncation leaves
      const bytes = f?.fate === 'truncated' ? (x.bytesAfterTruncation ?? x.bytes) : x.bytes;
      const c = {
        key,
        store: s.key,
        target: x.context,
        ageMs: x.mtimeMs,
        bytes,
        inodes: x.inodes ?? 0,
        holdable: s.holdable,
      };
      place(st, c, blockOf(f, x, { ...where, failed: failed.has(key) }, ignoreProtection));
    }
    st.before = st.charged;
    out.push(st);
  }
  for (const st of out) st.candidates.sort(byAge);
  return out;
}

function planBudgets(
  input: FateInput,
  stopped: ReadonlySet<string>,
  items: Map<string, Fate>,
  holds: Map<string, HoldFate>,
  until: number | undefined,
  ignoreProtection = false,
): FatePlan['budget'] {
  const stores = budgetStores(input, stopped, items, ignoreProtection);
  const byKey = new Map(stores.map((s) => [s.key, s]));
  const unmet: BudgetUnmet[] = [];

  // What keep_free counts as freed before the budgets act: this sweep's removals and unheld
  // truncations in the stores taking part, and the expired holds it may count.
  const freed: Frees = { bytes: 0, inodes: 0 };
  for (const st of stores) {
    if (!st.keepFree) continue;
    const f = policyFrees(input, st.key, items);
    freed.bytes += f.bytes;
    freed.inodes += f.inodes;
  }
  for (const h of input.holds) {
    if (!h.keepFree || h.bytes === undefined || holds.get(h.key)?.fate !== 'purged') continue;
    freed.bytes += h.bytes;
    freed.inodes += h.inodes ?? 0;
  }

  // max_bytes, store by store
  for (const st of stores) {
    if (st.maxBytes === undefined) continue;
    // at or under its budget: `over` ≤ 0 is in reach, and the loop below takes nothing
    const over = st.charged - st.maxBytes;
    const reachable = st.candidates.reduce((n, c) => n + c.bytes, 0);
    if (reachable < over) {
      unmet.push(unmetOf(st.key, st.label, 'max_bytes', over, st.staying, st.candidates));
      continue;
    }
    const chosen = new Set<string>();
    for (const c of st.candidates) {
      if (st.charged <= st.maxBytes) break;
      chosen.add(c.key);
      st.charged -= c.bytes;
      if (c.holdable && until !== undefined) {
        items.set(c.key, { fate: 'held', rule: 'max_bytes', untilMs: until });
        st.held++;
      } else {
        items.set(c.key, { fate: 'removed', rule: 'max_bytes' });
        st.removed++;
        st.freed += c.bytes;
        if (st.keepFree) {
          freed.bytes += c.bytes;
          freed.inodes += c.inodes;
        }
      }
    }
    st.candidates = st.candidates.filter((c) => !chosen.has(c.key));
  }

  let keepFree: KeepFreeOutcome | undefined;
  if (input.keepFree) {
    const kf = keepFreeFor(input, input.keepFree, stores, byKey, items, holds, freed);
    keepFree = kf.outcome;
    if (kf.unmet) unmet.push(kf.unmet);
  }

  return {
    stores: stores.map((st) => ({
      store: st.key,
      label: st.label,
      max_bytes: st.maxBytes ?? null,
      bytes_before: st.before,
      bytes_after: st.charged,
      removed: st.removed,
      bytes_freed: st.freed,
      held: st.held,
      held_purged: st.heldPurged,
    })),
    keepFree,
    unmet,
  };
}

/** Bytes and inodes freed on the home's filesystem. */
interface Frees {
  bytes: number;
  inodes: number;
}

/** What the policies' own acts free in one store: removals for good, truncations whose lines are not held. */
function policyFrees(input: FateInput, store: string, items: Map<string, Fate>): Frees {
  const n: Frees = { bytes: 0, inodes: 0 };
  const root = input.roots.find((r) => r.key === store);
  for (const s of root?.sessions ?? []) {
    if (items.get(itemKey(store, s.name))?.fate !== 'removed') continue;
    n.bytes += s.bytes ?? 0;
    n.inodes += s.inodes ?? 0;
  }
  const rs = input.stores.find((s) => s.key === store);
  for (const c of rs?.contexts ?? []) {
    const f = items.get(itemKey(store, c.context));
    if (f?.fate === 'removed') {
      n.bytes += c.bytes ?? 0;
      n.inodes += c.inodes ?? 0;
    } else if (f?.fate === 'truncated' && f.heldUntilMs === undefined) n.bytes += truncationFrees(c);
  }
  return n;
}

/** What a truncation frees on the disk once its dropped lines are not held. */
function truncationFrees(c: ContextIn): number {
  return c.bytes !== undefined && c.bytesAfterTruncation !== undefined
    ? Math.max(0, c.bytes - c.bytesAfterTruncation)
    : 0;
}

/** A keep_free candidate: a hold to purge (0), a hold this sweep would make (1), or an item in place (2). */
interface KeepFreePick {
  order: 0 | 1 | 2;
  ageMs: number;
  target: string;
  storeIndex: number;
  bytes: number;
  inodes: number;
  take: () => void;
}

function keepFreeFor(
  input: FateInput,
  kf: NonNullable<FateInput['keepFree']>,
  stores: StoreState[],
  byKey: Map<string, StoreState>,
  items: Map<string, Fate>,
  holds: Map<string, HoldFate>,
  freed: Frees,
): { outcome: KeepFreeOutcome; unmet: BudgetUnmet | undefined } {
  const picks: KeepFreePick[] = [];
  const counts = { purged: 0, removed: 0 };
  // 0. what earlier sweeps hold, the window that ends first first
  for (const h of input.holds) {
    if (
      !h.keepFree ||
      h.bytes === undefined ||
      holds.get(h.key)?.fate !== 'held' ||
      !h.owned ||
      input.failed?.has(h.key) === true
    )
      continue;
    const st = byKey.get(h.store);
    picks.push({
      order: 0,
      ageMs: h.untilMs,
      target: h.target,
      storeIndex: st?.index ?? stores.length,
      bytes: h.bytes,
      inodes: h.inodes ?? 0,
      take: () => {
        holds.set(h.key, { fate: 'purged', rule: 'keep_free' });
        counts.purged++;
        if (st) st.heldPurged++;
      },
    });
  }
  // 1. what this sweep would hold: taken for good instead, oldest first
  for (const st of stores) {
    if (!st.keepFree) continue;
    for (const x of thisSweepsHolds(input, st.key, items)) {
      picks.push({
        order: 1,
        ageMs: x.ageMs,
        target: x.target,
        storeIndex: st.index,
        bytes: x.bytes,
        inodes: x.inodes,
        take: () => {
          const f = items.get(x.key);
          if (f?.fate === 'held') {
            items.set(x.key, { fate: 'removed', rule: 'keep_free', condemnedBy: f.rule });
            if (f.rule === 'max_bytes') st.held--;
            st.removed++;
            counts.removed++;
          } else if (f?.fate === 'truncated') {
            const { heldUntilMs: _lines, ...unheld } = f;
            items.set(x.key, unheld);
            counts.purged++;
          }
          st.freed += x.bytes;
        },
      });
    }
  }
  // 2. the oldest in place across every store taking part — of each store at most its per-sweep
  //    share of its items (at least one), whatever its size
  const share = kf.perSweep ?? 1;
  const beyond = { items: 0, bytes: 0 };
  for (const st of stores) {
    if (!st.keepFree) continue;
    const cap = Math.max(1, Math.floor(share * st.present));
    for (const c of st.candidates.slice(cap)) {
      beyond.items++;
      beyond.bytes += c.bytes;
    }
    for (const c of st.candidates.slice(0, cap)) {
      picks.push({
        order: 2,
        ageMs: c.ageMs,
        target: c.target,
        storeIndex: st.index,
        bytes: c.bytes,
        inodes: c.inodes,
        take: () => {
          items.set(c.key, { fate: 'removed', rule: 'keep_free' });
          st.charged -= c.bytes;
          st.removed++;
          st.freed += c.bytes;
          counts.removed++;
        },
      });
    }
  }
  picks.sort((a, b) => a.order - b.order || a.ageMs - b.ageMs || byName(a, b) || a.storeIndex - b.storeIndex);
  const reachable = picks.reduce((n, p) => n + p.bytes, 0);
  const reachableInodes = picks.reduce((n, p) => n + p.inodes, 0);
  // The room for a missing reserve is wanted on top only while what may go can provide it.
  const base = Math.max(0, kf.short - freed.bytes);
  const withRoom = Math.max(0, kf.short + kf.room - freed.bytes);
  const baseInodes = Math.max(0, (kf.inodesShort ?? 0) - freed.inodes);
  const withRoomInodes = Math.max(0, (kf.inodesShort ?? 0) + (kf.inodesRoom ?? 0) - freed.inodes);
  const roomFits = reachable >= withRoom && reachableInodes >= withRoomInodes;
  const short = roomFits ? withRoom : base;
  const shortInodes = roomFits ? withRoomInodes : baseInodes;
  let left = short;
  let leftInodes = shortInodes;
  let taken = 0;
  let takenInodes = 0;
  let unmet: BudgetUnmet | undefined;
  // Nothing short (left and leftInodes 0) is in reach and takes nothing; out of reach, something is short.
  if (reachable >= left && reachableInodes >= leftInodes) {
    for (const p of picks) {
      if (left <= 0 && leftInodes <= 0) break;
      p.take();
      left -= p.bytes;
      leftInodes -= p.inodes;
      taken += p.bytes;
      takenInodes += p.inodes;
    }
  } else {
    const taking = stores.filter((s) => s.keepFree);
    unmet = unmetOf(
      undefined,
      'keep_free',
      'keep_free',
      Math.max(0, left),
      taking.flatMap((s) => s.staying),
      picks,
    );
    if (leftInodes > 0) unmet.inodes_short = leftInodes;
    if (beyond.items > 0) unmet.beyond_per_sweep = beyond;
  }
  return {
    outcome: {
      short,
      short_after: Math.max(0, left),
      room: short - base,
      inodes_room: shortInodes - baseInodes,
      inodes_short: shortInodes,
      inodes_short_after: Math.max(0, leftInodes),
      purged: counts.purged,
      removed: counts.removed,
      freed: freed.bytes + taken,
      freed_inodes: freed.inodes + takenInodes,
    },
    unmet,
  };
}

/** This sweep's holds in one store, with what taking them for good would free. */
function thisSweepsHolds(
  input: FateInput,
  store: string,
  items: Map<string, Fate>,
): { key: string; target: string; ageMs: number; bytes: number; inodes: number }[] {
  const out: { key: string; target: string; ageMs: number; bytes: number; inodes: number }[] = [];
  const root = input.roots.find((r) => r.key === store);
  for (const s of root?.sessions ?? []) {
    const key = itemKey(store, s.name);
    if (items.get(key)?.fate === 'held' && s.bytes !== undefined)
      out.push({
        key,
        target: s.name,
        ageMs: idTimestampMs(s.name, 'ses_') ?? 0,
        bytes: s.bytes,
        inodes: s.inodes ?? 0,
      });
  }
  const rs = input.stores.find((s) => s.key === store);
  for (const c of rs?.contexts ?? []) {
    const key = itemKey(store, c.context);
    const f = items.get(key);
    if (f?.fate === 'held' && c.bytes !== undefined)
      out.push({ key, target: c.context, ageMs: c.mtimeMs, bytes: c.bytes, inodes: c.inodes ?? 0 });
    else if (f?.fate === 'truncated' && f.heldUntilMs !== undefined && truncationFrees(c) > 0)
      out.push({ key, target: c.context, ageMs: c.mtimeMs, bytes: truncationFrees(c), inodes: 0 });
  }
  return out;
}

function unmetOf(
  store: string | undefined,
  label: string,
  reason: BudgetRule,
  short: number,
  staying: { target: string; code: string; bytes: number }[],
  removable: { bytes: number }[],
): BudgetUnmet {
  const held: BudgetUnmet['held'] = {};
  for (const s of staying) {
    const h = (held[s.code] ??= { items: 0, bytes: 0 });
    h.items++;
    h.bytes += s.bytes;
  }
  const largest = [...staying].sort((a, b) => b.bytes - a.bytes || byName(a, b)).slice(0, UNMET_LARGEST);
  return {
    store,
    label,
    reason,
    bytes_short: short,
    held,
    removable: { items: removable.length, bytes: removable.reduce((n, c) => n + c.bytes, 0) },
    removed: 0,
    largest,
  };
}

// ---- the guard --------------------------------------------------------------------------------

/** The stores where every rule together would take more than the guard allows (a stopped store loses nothing, so it never trips again). */
function guardTrips(input: FateInput, plan: Omit<FatePlan, 'stops'>): Stop[] {
  const out: Stop[] = [];
  // How many items of each store go, from the plan's entries alone (an item without one stays):
  // no key is made for an item that stays.
  const counts = new Map<string, number>();
  for (const [k, f] of plan.items) {
    if (f.fate !== 'held' && f.fate !== 'removed') continue;
    const store = k.slice(0, k.indexOf('\0'));
    counts.set(store, (counts.get(store) ?? 0) + 1);
  }
  const check = <T>(
    key: string,
    kind: Stop['kind'],
    all: Iterable<T> & { readonly length: number },
    name: (x: T) => string,
  ) => {
    const remove = counts.get(key) ?? 0;
    const limit = blastRadius({
      present: all.length,
      remove,
      configured: input.guard.maxDelete,
      unattended: input.guard.unattended,
      confirmLarge: input.guard.confirmLarge,
    });
    if (limit === undefined) return;
    const going: string[] = [];
    for (const x of all) {
      const f = plan.items.get(itemKey(key, name(x)));
      if (f?.fate === 'held' || f?.fate === 'removed') going.push(name(x));
    }
    out.push({ store: key, kind, present: all.length, going, limit });
  };
  for (const r of input.roots) check(r.key, 'sessions', r.sessions, (s) => s.name);
  for (const s of input.stores) check(s.key, 'records', s.contexts, (c) => c.context);
  return out;
}
