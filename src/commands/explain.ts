// `murmur-gc explain TARGET`: why one item is where it is, and when that changes (docs/explain.md).
// Guarantees:
// - The fate now is the dry run's own: explain runs the sweep with the measure-only effects
//   (runSweep with dryRun, src/sweep/effects.ts) and reads the item's fate from the very plan
//   and acts that dry run made (src/plan/fates.ts) — so it is what `murmur-gc --dry-run` lists for
//   the item. Nothing is written, not even `<home>/gc`; no lock is taken (one is only probed, as a
//   dry run does: a sweep at work is exit 75).
// - The instant it changes is the planner's (src/plan/explain.ts): when its age passes `max_age`
//   by the runtime's definition of age (a session's id, a record's mtime) and the planner's own
//   comparison, to the millisecond; when a hold's window ends; when a live session's trace stops
//   counting as written; with what would move it (new sessions under `max_sessions`, new messages,
//   a write, growth under `max_bytes`, a release, the guard).
// - TARGET is a `ses_` id, a context id, a child workdir's name, a `wrk_` log (its id or file
//   name), a path to any of these or to a hold of the undo window, or a unique prefix of an id.
//   A prefix of several names, or a name in several places that `--root`/`--record` does not
//   settle, is `target_ambiguous` (exit 2) naming the candidates, as `history --target` does;
//   none is `explain_not_found` (exit 1). `--root` takes only a session's, `--record` only a
//   context's, as `protect` and `restore` take them.
// - Ids, paths, counts, sizes and times only — never record content.
import { resolve } from 'node:path';
import type { GcConfig } from '../config/types.js';
import { policySourceOf } from '../config/load.js';
import { Codes, ExitCodes, GcError, RefusalError } from '../errors.js';
import type { Logger } from '../log.js';
import {
  judgeLiveness,
  type LiveTest,
  type Liveness,
  type LivenessInput,
  type RunningProbe,
} from '../plan/liveness.js';
import { fateOf, itemKey, type Fate, type FateInput, type HoldFate } from '../plan/fates.js';
import {
  ageCondemnsFromMs,
  bornMs,
  bytesBudget,
  firstTrue,
  liveUntilMs,
  messagesToCondemn,
  rankOf,
  sessionsToCondemn,
} from '../plan/explain.js';
import { childEntryName, planOrphans } from '../plan/workdir.js';
import { notASessionId } from '../runtime/ids.js';
import { readRunningRecords } from '../runtime/running.js';
import { CONVERSATIONS_DIR, type ContextScan } from '../runtime/inventory.js';
import type { ChildEntry, LogEntry } from '../runtime/workdir-scan.js';
import type { StatFs } from '../fsx/statfs.js';
import { fateWord } from '../sweep/fate-counts.js';
import { runSweep } from '../sweep/pipeline.js';
import { fateInput } from '../sweep/steps/plan.js';
import { orphansOf } from '../sweep/steps/orphans.js';
import type { SessionsRootPlan, SweepContext } from '../sweep/steps/context.js';
import type { SessionView } from '../sweep/world.js';
import { definedOnly } from '../defined.js';
import type {
  BudgetFacts,
  Due,
  DueEvent,
  ExplainBesideFacts,
  ExplainDoc,
  ExplainItem,
  ExplainKind,
  FateNow,
  HoldFacts,
  LiveSession,
  LivenessFacts,
  Move,
  MoveCause,
  PolicyFacts,
  ProtectionFacts,
} from '../schema/json-schemas.js';

export const ExplainCodes = {
  /** nothing of that name in any sessions root, record store or hold the dry run looked at */
  notFound: 'explain_not_found',
  /** `--root` for what is not a session, `--record` for what is not a context (exit 2) */
  optionNotApplicable: 'option_not_applicable',
} as const;

/** What `explain` tells and its parts: its schema's (src/schema/json-schemas.ts). */
export type {
  ExplainBesideFacts as BesideFacts,
  BudgetFacts,
  Due,
  DueEvent,
  ExplainDoc,
  ExplainItem,
  ExplainKind,
  FateNow,
  HoldFacts,
  LiveSession,
  LivenessFacts,
  Move,
  MoveCause,
  PolicyFacts,
  ProtectionFacts,
};

export interface ExplainOptions {
  target: string;
  /** the sessions root of a session (when several hold it) */
  root?: string;
  /** the record store of a context (when several hold it) */
  record?: string;
  /** relative paths are taken from here (default the process's) */
  cwd?: string;
  /** the clock (tests inject one) */
  now?: () => number;
  /** free space for keep_free (tests inject one) */
  statfs?: StatFs;
}

/** Explain `opts.target`: one dry run, then the item's fate from it. */
export async function explainTarget(config: GcConfig, log: Logger, opts: ExplainOptions): Promise<ExplainDoc> {
  let doc: ExplainDoc | undefined;
  await runSweep({
    config,
    dryRun: true,
    log,
    ...definedOnly({ now: opts.now, statfs: opts.statfs }),
    inspect: async (ctx) => {
      doc = await explainIn(ctx, opts);
    },
  });
  if (!doc)
    throw notFound(config, opts.target, 'there is nothing to sweep (no murmur home and no configured sessions root)');
  return doc;
}

// ---- the places a target may name ---------------------------------------------------------------

type Place =
  | { kind: 'session'; name: string; path: string; p: SessionsRootPlan; v: SessionView }
  | {
      kind: 'held_session';
      name: string;
      path: string;
      p: SessionsRootPlan;
      h: SessionsRootPlan['scan']['held'][number];
    }
  | { kind: 'context'; name: string; path: string; c: ContextScan }
  | {
      kind: 'held_context' | 'held_truncation';
      name: string;
      path: string;
      i: NonNullable<SweepContext['quarantineListing']>['items'][number];
      key: string;
    }
  | { kind: 'child_workdir'; name: string; path: string; p: SessionsRootPlan; c: ChildEntry }
  | { kind: 'work_log'; name: string; path: string; alias: string; p: SessionsRootPlan; l: LogEntry };
/** A place in the undo window. */
type HeldPlace = Extract<Place, { kind: 'held_session' | 'held_context' | 'held_truncation' }>;

/** The places `pick` keeps, of every place the scans found: made one at a time, only those picked are kept (not one object per session). */
function placesOf(ctx: SweepContext, pick: (x: Place) => boolean): Place[] {
  const out: Place[] = [];
  const add = (x: Place) => {
    if (pick(x)) out.push(x);
  };
  for (const p of ctx.sessionPlans) {
    const root = p.input.root;
    for (const v of p.views) add({ kind: 'session', name: v.scan.name, path: `${root}/${v.scan.name}`, p, v });
    for (const h of p.scan.held) add({ kind: 'held_session', name: h.session, path: `${root}/${h.entry}`, p, h });
    const b = p.beside;
    if (!b) continue;
    for (const c of b.children?.entries ?? [])
      add({ kind: 'child_workdir', name: c.name, path: `${b.workdir}/.murmur/children/${c.name}`, p, c });
    for (const l of b.logs?.wrk ?? [])
      add({ kind: 'work_log', name: l.name, alias: l.workId, path: `${b.workdir}/logs/${l.name}`, p, l });
  }
  for (const c of ctx.records?.contexts ?? [])
    add({ kind: 'context', name: c.context, path: `${ctx.home}/${CONVERSATIONS_DIR}/${c.store}/${c.context}`, c });
  const q = ctx.quarantineDir;
  for (const i of q ? (ctx.quarantineListing?.items ?? []) : []) {
    if (i.kind !== 'context' && i.kind !== 'truncation') continue;
    add({
      kind: i.kind === 'context' ? 'held_context' : 'held_truncation',
      name: i.target,
      path: `${q!.path}/${i.entry}`,
      i,
      key: `${q!.path}/${i.entry}`,
    });
  }
  return out;
}

const storeOf = (pl: Place): 'sessions' | 'records' =>
  pl.kind === 'context' || pl.kind === 'held_context' || pl.kind === 'held_truncation' ? 'records' : 'sessions';
function placeName(pl: Place): string {
  switch (pl.kind) {
    case 'context':
      return pl.c.store;
    case 'held_context':
    case 'held_truncation':
      return pl.i.origin;
    default:
      return pl.p.input.root;
  }
}

function notFound(config: GcConfig, target: string, why?: string): RefusalError {
  const taken = notASessionId(target);
  return new RefusalError(
    ExplainCodes.notFound,
    `${taken !== undefined ? `${taken}; ` : ''}nothing named ${target} is in a sessions root, a record store or the undo window murmur-gc looks at${why !== undefined ? ` (${why})` : ''}`,
    `murmur-gc history --target ${target} says what became of it; murmur-gc quarantine ls lists what the undo window holds (home ${config.home})`,
  );
}

/** At most this many candidates named by an ambiguous target. */
const CANDIDATES_SHOWN = 10;

function ambiguous(given: string, what: string, candidates: string[], hint: string): GcError {
  const shown = candidates.slice(0, CANDIDATES_SHOWN).join(', ');
  const more = candidates.length > CANDIDATES_SHOWN ? ` and ${candidates.length - CANDIDATES_SHOWN} more` : '';
  return new GcError(Codes.targetAmbiguous, `${given} ${what} ${candidates.length}: ${shown}${more}`, {
    exitCode: ExitCodes.usage,
    hint,
  });
}

/** The one place `opts` names (see the header). */
function resolvePlace(ctx: SweepContext, opts: ExplainOptions): { place: Place; heldToo: HeldPlace[] } {
  const given = opts.target;
  let hits: Place[];
  if (given.includes('/')) {
    const p = resolve(opts.cwd ?? process.cwd(), given).replace(/\/+$/, '');
    hits = placesOf(ctx, (x) => x.path === p || (x.kind === 'context' && `${x.path}/conversation.jsonl` === p));
  } else {
    const names = (x: Place) => (x.kind === 'work_log' ? [x.name, x.alias] : [x.name]);
    hits = placesOf(ctx, (x) => names(x).includes(given));
    if (hits.length === 0 && given !== '') {
      hits = placesOf(ctx, (x) => names(x).some((n) => n.startsWith(given)));
      const distinct = [...new Set(hits.map((x) => x.name))].sort();
      if (distinct.length > 1) throw ambiguous(given, 'is a prefix of', distinct, 'give more of the id');
    }
  }
  // --root / --record: for a session only / a context only (as protect and restore take them)
  const usage = (message: string, hint: string) =>
    new GcError(ExplainCodes.optionNotApplicable, message, { exitCode: ExitCodes.usage, hint });
  if (opts.record !== undefined && hits.length > 0 && hits.every((x) => storeOf(x) === 'sessions')) {
    throw usage(
      `--record applies to a context only; ${given} is in a sessions root`,
      'pass --root <DIR> for the sessions root of a session',
    );
  }
  if (opts.root !== undefined && hits.length > 0 && hits.every((x) => storeOf(x) === 'records')) {
    throw usage(
      `--root applies to a session only; ${notASessionId(given) ?? `${given} is a context`} in a record store`,
      'pass --record <NAME> for the record store of a context',
    );
  }
  if (opts.root !== undefined) {
    const root = resolve(opts.cwd ?? process.cwd(), opts.root);
    hits = hits.filter((x) => storeOf(x) === 'sessions' && resolve(placeName(x)) === root);
  }
  if (opts.record !== undefined) hits = hits.filter((x) => storeOf(x) === 'records' && placeName(x) === opts.record);
  if (hits.length === 0) throw notFound(ctx.config, given);
  // A name in place and held in the same place (a truncation's dropped lines): the item in place;
  // the hold is named by its path.
  const inPlace = hits.filter((x) => !x.kind.startsWith('held_'));
  const held = hits.filter((x): x is HeldPlace => x.kind.startsWith('held_'));
  if (inPlace.length === 1 && held.every((h) => placeName(h) === placeName(inPlace[0]!) && h.name === inPlace[0]!.name))
    return { place: inPlace[0]!, heldToo: held };
  if (hits.length > 1) {
    const places = new Set(hits.map((x) => `${storeOf(x)}:${placeName(x)}`));
    const flag =
      places.size === 1
        ? 'its path'
        : hits.every((x) => storeOf(x) === 'records')
          ? '--record <NAME>'
          : hits.every((x) => storeOf(x) === 'sessions')
            ? '--root <DIR>'
            : 'a path';
    throw ambiguous(
      given,
      'names',
      hits.map(
        (x) =>
          `${x.kind.replace('_', ' ')} ${x.name} in ${placeName(x)}${x.kind.startsWith('held_') ? ` (${x.path})` : ''}`,
      ),
      `pass ${flag} to say which one`,
    );
  }
  return { place: hits[0]!, heldToo: [] };
}

// ---- what the dry run decided ------------------------------------------------------------------

/** The item's fate as the dry run ended it: the act's when one was carried out, `failed` when it did not happen, else the plan's. */
function finalFate(
  ctx: SweepContext,
  key: string,
  planned: Fate | HoldFate | undefined,
): { word: string; fate: Fate | HoldFate | undefined } {
  if (ctx.failed.has(key)) return { word: 'failed', fate: undefined };
  const acted = ctx.acts.get(key);
  if (acted) return { word: fateWord(acted), fate: acted };
  if (!planned) return { word: 'kept:policy', fate: undefined };
  const taking =
    planned.fate === 'removed' ||
    planned.fate === 'truncated' ||
    planned.fate === 'purged' ||
    (planned.fate === 'held' && 'rule' in planned);
  return { word: taking ? 'not_reached' : fateWord(planned), fate: planned };
}

function fateNow(ctx: SweepContext, key: string, planned: Fate | HoldFate | undefined, target: string): FateNow {
  const { word, fate } = finalFate(ctx, key, planned);
  const condemned =
    fate && (fate.fate === 'kept' || fate.fate === 'removed') && 'condemnedBy' in fate
      ? (fate.condemnedBy ?? null)
      : null;
  const until = fate?.fate === 'held' ? fate.untilMs : fate?.fate === 'truncated' ? (fate.heldUntilMs ?? null) : null;
  const skipped =
    ctx.report.skipped.find(
      (s) =>
        s.target.endsWith(target) &&
        (s.code === Codes.liveSession ||
          s.code === Codes.liveContext ||
          s.code === Codes.protected ||
          s.code === Codes.blastRadius),
    ) ?? ctx.report.errors.find((e) => e.target.endsWith(target));
  return { word, condemned_by: condemned, until_ms: until, detail: skipped?.detail ?? null };
}

function sessionLiveness(ctx: SweepContext, v: SessionView): LivenessInput {
  return {
    running: ctx.world.running.get(v.scan.name) ?? 'none',
    lastWriteMs: v.lastWriteMs,
    hasSessionEnd: v.scan.trace?.ok ? v.scan.trace.summary.hasSessionEnd : undefined,
  };
}

async function pidsOf(ctx: SweepContext): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (!ctx.homeDir) return out;
  for (const r of (await readRunningRecords(ctx.homeDir)).records) out.set(r.sessionId, r.pid);
  return out;
}

function liveSession(
  ctx: SweepContext,
  v: SessionView,
  pids: ReadonlyMap<string, number>,
): LiveSession & { state: Liveness; lastWriteMs: number } {
  const l = sessionLiveness(ctx, v);
  const grace = ctx.config.liveGraceSecs * 1000;
  const verdict = judgeLiveness(l, ctx.nowMs, grace);
  const probe: RunningProbe = l.running;
  return {
    session: v.scan.name,
    root: v.root,
    state: verdict.state,
    test: verdict.test ?? null,
    why: verdict.why,
    live_until_ms: liveUntilMs(l, ctx.nowMs, grace) ?? null,
    pid: probe === 'alive' ? (pids.get(v.scan.name) ?? null) : null,
    lastWriteMs: v.lastWriteMs,
  };
}

function guardOf(ctx: SweepContext, kind: 'sessions' | 'records', place: string): ExplainDoc['guard'] {
  const s = ctx.report.stopped?.find((x) => x.kind === kind && x.store === place);
  return s ? { limit: s.limit, would_take: s.would_take, present: s.present } : null;
}

function budgetsOf(ctx: SweepContext, input: FateInput, key: string, name: string): BudgetFacts[] {
  const out: BudgetFacts[] = [];
  const b = ctx.report.budget;
  const items = ctx.fates?.items ?? new Map<string, Fate>();
  const stopped = new Set((ctx.report.stopped ?? []).map((s) => `${s.kind}:${s.store}`));
  const store = b?.stores.find((s) => s.store === key);
  const unmet = (reason: string) =>
    (b?.unmet ?? []).some((u) => u.reason === reason && (reason === 'keep_free' || u.store === key));
  const bb = bytesBudget(input, items, stopped, key, name, store?.bytes_before ?? 0);
  if (bb)
    out.push({
      rule: 'max_bytes',
      limit_bytes: bb.limit,
      in_place_bytes: bb.inPlace,
      item_bytes: bb.itemBytes ?? null,
      older_removable: bb.olderRemovable,
      grows_by: bb.growsBy ?? null,
      unmet: unmet('max_bytes'),
    });
  const kf = b?.keep_free;
  const takesPart =
    input.roots.find((r) => r.key === key)?.keepFree ?? input.stores.find((s) => s.key === key)?.keepFree ?? false;
  if (kf && takesPart)
    out.push({
      rule: 'keep_free',
      required_bytes: kf.required_bytes,
      free_bytes: kf.free_bytes,
      short_bytes: kf.short_bytes,
      short_bytes_after: kf.short_bytes_after,
      unmet: unmet('keep_free'),
    });
  return out;
}

function protectionOf(
  ctx: SweepContext,
  kind: 'session' | 'context',
  target: string,
  where: string,
): ProtectionFacts | null {
  const p = ctx.protection.items.find((i) => i.kind === kind && i.target === target && i.where === where);
  if (p) return { since_ms: p.since_ms, by: p.by, note: p.note ?? null, unreadable: false };
  return ctx.protection.all ? { since_ms: null, by: null, note: null, unreadable: true } : null;
}

/** The FateInput with the configured retain of `key` (the planner's input drops max_age while the clock is behind). */
function configuredInput(ctx: SweepContext, input: FateInput): FateInput {
  if (!ctx.clockSkew) return input;
  return {
    ...input,
    roots: input.roots.map((r) => {
      const p = ctx.sessionPlans.find((x) => x.key === r.key);
      return p ? { ...r, retain: p.input.retain } : r;
    }),
    stores: input.stores.map((s) => {
      const r = ctx.recordPlans.find((x) => x.key === s.key);
      return r ? { ...s, policies: r.policies.map((p) => ({ capsule: p.capsule, retain: p.retain })) } : s;
    }),
  };
}

const retainJson = (r: { maxSessions?: number; maxMessages?: number; maxAgeSecs?: number } | undefined) =>
  r === undefined
    ? null
    : definedOnly({ max_sessions: r.maxSessions, max_messages: r.maxMessages, max_age_secs: r.maxAgeSecs });

function ageFacts(
  ctx: SweepContext,
  input: FateInput,
  key: string,
  name: string,
  maxAgeSecs: number | undefined,
  by: 'id' | 'mtime',
): PolicyFacts['age'] {
  const born = bornMs(input, key, name);
  if (maxAgeSecs === undefined || born === undefined) return null;
  const from = ageCondemnsFromMs(configuredInput(ctx, input), key, name) ?? null;
  return {
    max_age_secs: maxAgeSecs,
    by,
    born_ms: born,
    age_ms: ctx.nowMs - born,
    condemns_from_ms: from,
    over: from !== null && from <= ctx.nowMs && !ctx.clockSkew,
  };
}

function originOf(config: GcConfig, origin: string | null): { origin: string | null; manifest: string | null } {
  if (origin === null) return { origin, manifest: null };
  const s = policySourceOf(config, origin);
  return { origin, manifest: s?.from === 'manifest' ? (s.manifest ?? null) : null };
}

// ---- the explanations --------------------------------------------------------------------------

async function explainIn(ctx: SweepContext, opts: ExplainOptions): Promise<ExplainDoc> {
  const { place: pl, heldToo } = resolvePlace(ctx, opts);
  const input = fateInput(ctx);
  const pids = await pidsOf(ctx);
  const base = { home: ctx.home, target: opts.target, now_ms: ctx.nowMs };
  const held_too = heldToo.map((h) => ({
    kind: h.kind,
    path: h.path,
    until_ms: h.kind === 'held_session' ? h.h.untilMs : h.i.untilMs,
  }));
  switch (pl.kind) {
    case 'session':
      return { ...base, ...sessionDoc(ctx, input, pids, pl.p, pl.v), held_too };
    case 'context':
      return { ...base, ...contextDoc(ctx, input, pids, pl.c, pl.path), held_too };
    case 'held_session':
    case 'held_context':
    case 'held_truncation':
      return { ...base, ...holdDoc(ctx, input, pl), held_too };
    case 'child_workdir':
    case 'work_log':
      return { ...base, ...besideDoc(ctx, input, pids, pl), held_too };
  }
}

type Body = Omit<ExplainDoc, 'home' | 'target' | 'now_ms' | 'held_too'>;

function sessionDoc(
  ctx: SweepContext,
  input: FateInput,
  pids: ReadonlyMap<string, number>,
  p: SessionsRootPlan,
  v: SessionView,
): Body {
  const name = v.scan.name;
  const key = itemKey(p.key, name);
  const root = input.roots.find((r) => r.key === p.key);
  const retain = p.input.retain;
  const fate = fateNow(ctx, key, fateOf(ctx.fates, p.key, name), `/${name}`);
  const rank = retain?.maxSessions !== undefined && root ? rankOf(root, name) : undefined;
  const live = liveSession(ctx, v, pids);
  const policy: PolicyFacts = {
    retain: retainJson(retain),
    capsule: null,
    owned: true,
    age: ageFacts(ctx, input, p.key, name, retain?.maxAgeSecs, 'id'),
    rank:
      rank && retain?.maxSessions !== undefined
        ? {
            max_sessions: retain.maxSessions,
            rank: rank.rank,
            of: rank.of,
            over: rank.rank > retain.maxSessions,
            newer_to_condemn: sessionsToCondemn(rank.rank, retain.maxSessions),
          }
        : null,
    messages: null,
    clock_behind_ms: ctx.clockSkew?.behindMs ?? null,
  };
  const liveness: LivenessFacts = {
    state: live.state,
    why: live.why,
    test: live.test,
    last_write_ms: live.lastWriteMs,
    live_until_ms: live.live_until_ms,
    pid: live.pid,
    sessions: [],
  };
  const body: Body = {
    item: {
      kind: 'session',
      name,
      path: `${p.input.root}/${name}`,
      store: 'sessions',
      place: p.input.root,
      ...originOf(ctx.config, p.input.origin),
    },
    fate,
    policy,
    liveness,
    protection: p.input.isAuditRoot ? null : protectionOf(ctx, 'session', name, resolve(p.input.root)),
    hold: null,
    guard: guardOf(ctx, 'sessions', p.input.root),
    budgets: budgetsOf(ctx, input, p.key, name),
    beside: null,
    due: { at_ms: null, event: 'never', then: null, rule: null },
    moves: [],
    parents: [],
  };
  const holdable = root?.holdable === true && ctx.quarantineMs !== undefined;
  forecast(
    ctx,
    body,
    holdable,
    liveness.state === 'live' ? [liveness] : [],
    root?.writable !== false,
    v.scan.uid === ctx.uid,
  );
  return body;
}

function contextDoc(
  ctx: SweepContext,
  input: FateInput,
  pids: ReadonlyMap<string, number>,
  c: ContextScan,
  path: string,
): Body {
  const storeKey = `records:${c.store}`;
  const key = itemKey(storeKey, c.context);
  const st = input.stores.find((s) => s.key === storeKey);
  const plan = ctx.recordPlans.find((r) => r.key === storeKey);
  const capsule = c.header?.capsule ?? null;
  const pol = plan?.policies.find((x) => x.capsule === capsule);
  const retain = pol?.retain;
  const fate = fateNow(ctx, key, fateOf(ctx.fates, storeKey, c.context), c.context);
  const live = ctx.world.views
    .filter(
      (v) => v.liveness === 'live' && v.scan.trace?.ok === true && v.scan.trace.summary.contextIds.includes(c.context),
    )
    .map((v) => liveSession(ctx, v, pids));
  const sessions = live.map(({ state: _s, lastWriteMs: _w, ...rest }) => rest);
  const liveness: LivenessFacts | null =
    sessions.length === 0
      ? null
      : {
          state: 'live',
          why: `named by ${sessions.length === 1 ? 'a live session' : `${sessions.length} live sessions`}`,
          test: null,
          last_write_ms: null,
          live_until_ms: sessions.some((s) => s.live_until_ms === null)
            ? null
            : Math.max(...sessions.map((s) => s.live_until_ms!)),
          pid: null,
          sessions,
        };
  const messages = c.messages ?? null;
  const policy: PolicyFacts | null = plan
    ? {
        retain: retainJson(retain),
        capsule,
        owned: pol !== undefined,
        age: pol ? ageFacts(ctx, input, storeKey, c.context, retain?.maxAgeSecs, 'mtime') : null,
        rank: null,
        messages:
          retain?.maxMessages !== undefined
            ? {
                max_messages: retain.maxMessages,
                messages,
                over: messages !== null && messages > retain.maxMessages,
                more_to_condemn: messages === null ? null : messagesToCondemn(messages, retain.maxMessages),
              }
            : null,
        clock_behind_ms: ctx.clockSkew?.behindMs ?? null,
      }
    : null;
  const body: Body = {
    item: {
      kind: 'context',
      name: c.context,
      path,
      store: 'records',
      place: c.store,
      ...originOf(ctx.config, pol?.origin ?? plan?.policies[0]?.origin ?? null),
    },
    fate,
    policy,
    liveness,
    protection: protectionOf(ctx, 'context', c.context, c.store),
    hold: null,
    guard: guardOf(ctx, 'records', c.store),
    budgets: st ? budgetsOf(ctx, input, storeKey, c.context) : [],
    beside: null,
    due: { at_ms: null, event: 'never', then: null, rule: null },
    moves: [],
    parents: [],
  };
  const holdable = st?.holdable === true && ctx.quarantineMs !== undefined;
  forecast(
    ctx,
    body,
    holdable,
    liveness ? sessions.map((s) => ({ state: 'live', ...s })) : [],
    true,
    c.dirUid === ctx.uid && c.file.uid === ctx.uid,
  );
  return body;
}

function holdDoc(
  ctx: SweepContext,
  input: FateInput,
  pl: Extract<Place, { kind: 'held_session' | 'held_context' | 'held_truncation' }>,
): Body {
  const key = pl.kind === 'held_session' ? `${pl.p.input.root}/${pl.h.entry}` : pl.key;
  const hin = input.holds.find((h) => h.key === key);
  const fate = fateNow(ctx, key, ctx.fates?.holds.get(key), key);
  const untilMs = pl.kind === 'held_session' ? pl.h.untilMs : pl.i.untilMs;
  const rule =
    pl.kind === 'held_session'
      ? (ctx.registry.vouch(pl.h.entry, { identity: pl.h.identity, birth: pl.h.birth })?.reason ?? null)
      : (pl.i.reason ?? null);
  const entry = pl.kind === 'held_session' ? pl.h.entry : pl.i.entry;
  const origin =
    pl.kind === 'held_session'
      ? pl.p.input.origin
      : (ctx.config.records.find((r) => r.store === pl.i.origin)?.origin ?? null);
  const body: Body = {
    item: {
      kind: pl.kind,
      name: pl.name,
      path: pl.path,
      store: storeOf(pl),
      place: placeName(pl),
      ...originOf(ctx.config, origin),
    },
    fate: { ...fate, until_ms: untilMs },
    policy: null,
    liveness: null,
    protection: null,
    hold: { until_ms: untilMs, rule, entry, keep_free: hin?.keepFree === true },
    guard: null,
    budgets: [],
    beside: null,
    due: { at_ms: null, event: 'never', then: null, rule: null },
    moves: [],
    parents: [],
  };
  const word = fate.word;
  if (word.startsWith('purged'))
    body.due = { at_ms: ctx.nowMs, event: 'next_sweep', then: 'purge', rule: word.slice('purged:'.length) };
  else if (word === 'held') body.due = { at_ms: untilMs, event: 'window_ends', then: 'purge', rule: 'expired' };
  else body.due = { at_ms: null, event: 'unknown', then: null, rule: null };
  if (hin?.keepFree === true && word === 'held') body.moves.push({ cause: 'keep_free', count: null });
  body.moves.push({ cause: 'restore', count: null });
  return body;
}

function besideDoc(
  ctx: SweepContext,
  input: FateInput,
  pids: ReadonlyMap<string, number>,
  pl: Extract<Place, { kind: 'child_workdir' | 'work_log' }>,
): Body {
  const p = pl.p;
  const workdir = p.beside?.workdir ?? '';
  const names = (v: SessionView): boolean => {
    const t = v.scan.trace?.ok ? v.scan.trace.summary : undefined;
    if (!t) return false;
    return pl.kind === 'child_workdir'
      ? (t.delegations ?? []).some((d) => childEntryName(d.childWorkdir, workdir) === pl.name)
      : (t.workIds ?? []).includes(pl.alias);
  };
  const parents = p.views.filter(names);
  const namedByHeld = pl.kind === 'child_workdir' && (p.heldTied?.has(pl.name) ?? false);
  const action = ctx.report.actions.find(
    (a) =>
      (a.kind === 'remove_child_workdir' || a.kind === 'remove_work_log' || a.kind === 'remove_orphan_workdir') &&
      a.path === pl.path,
  );
  const skipped = ctx.report.skipped.find((s) => s.target === pl.path);
  let word = 'kept:policy';
  let until: number | null = null;
  if (action && 'reason' in action) {
    const held = 'held' in action ? action.held : undefined;
    word = `${held ? 'held' : 'removed'}:${action.reason}`;
    until = held?.until_ms ?? null;
  } else if (skipped) word = `kept:${skipped.code}`;
  const maxAge = p.input.childrenMaxAgeSecs ?? null;
  const lastWrite =
    pl.kind === 'child_workdir' ? pl.c.sessions.reduce((m, s) => Math.max(m, s.lastWriteMs), pl.c.mtimeMs) : null;
  const body: Body = {
    item: {
      kind: pl.kind,
      name: pl.name,
      path: pl.path,
      store: 'sessions',
      place: p.input.root,
      ...originOf(ctx.config, p.input.origin),
    },
    fate: { word, condemned_by: null, until_ms: until, detail: skipped?.detail ?? null },
    policy: null,
    liveness: null,
    protection: null,
    hold: null,
    guard: null,
    budgets: [],
    beside: {
      named_by: parents.map((v) => v.scan.name),
      named_by_held: namedByHeld,
      last_write_ms: lastWrite,
      children_max_age_secs: maxAge,
    },
    due: { at_ms: null, event: 'never', then: null, rule: null },
    moves: [],
    parents: [],
  };
  if (action) {
    body.due = {
      at_ms: ctx.nowMs,
      event: 'next_sweep',
      then: word.startsWith('held') ? 'hold' : 'remove',
      rule: word.slice(word.indexOf(':') + 1),
    };
    return body;
  }
  if (parents.length > 0) {
    // It goes with the sessions that name it, once the last of them goes.
    body.parents = parents.map((v) => {
      const d = sessionDoc(ctx, input, pids, p, v);
      return { session: v.scan.name, fate: d.fate.word, due: d.due };
    });
    const dues = body.parents.map((x) => x.due);
    const unknown = dues.find((d) => d.at_ms === null);
    const last = dues.reduce((a, b) => ((b.at_ms ?? 0) > (a.at_ms ?? 0) ? b : a));
    body.due = unknown ?? last;
    body.moves.push({ cause: 'parent', count: null });
    return body;
  }
  if (pl.kind === 'child_workdir' && !namedByHeld && maxAge !== null && p.beside) {
    // An orphan: children.max_age by its most recent visible write, the planner's comparison.
    const j = {
      uid: ctx.uid,
      liveGraceMs: ctx.config.liveGraceSecs * 1000,
      running: (s: string) => ctx.world.running.get(s) ?? 'none',
    };
    const v = orphansOf(ctx, p.beside, p.views, maxAge, p.heldTied, p.heldUncertain).find((o) => o.name === pl.name);
    if (v?.why === 'younger than children.max_age') {
      const young = (t: number) =>
        planOrphans([pl.c], new Set(), maxAge * 1000, false, { ...j, nowMs: t })[0]?.why ===
        'younger than children.max_age';
      const at = firstTrue((t) => !young(t), Math.floor(v.lastWriteMs + maxAge * 1000) + 1);
      body.due = { at_ms: at ?? null, event: 'condemned', then: 'remove', rule: 'children_max_age' };
    } else body.due = { at_ms: null, event: 'unknown', then: null, rule: null };
  }
  return body;
}

// ---- when it changes ---------------------------------------------------------------------------

/**
 * The instant the item's fate changes and what moves it, from its facts (filled into `body`):
 * a taking now is the next sweep; a hold's end is its window's; a live item's is when its trace
 * stops counting as written; an age is when max_age passes it; nothing else has an instant.
 */
function forecast(
  ctx: SweepContext,
  body: Body,
  holdable: boolean,
  live: { state: Liveness; live_until_ms: number | null; pid: number | null; test: LiveTest | null }[],
  writable: boolean,
  owned: boolean,
): void {
  const word = body.fate.word;
  const then = (rule: string): Due['then'] =>
    rule === 'max_messages' ? 'truncate' : rule === 'keep_free' || !holdable ? 'remove' : 'hold';
  const policy = body.policy;
  const age = policy?.age ?? null;
  const protectedNow = body.protection !== null;
  const taking = /^(held|removed|truncated):/.exec(word);
  if (taking) {
    const rule = word.slice(word.indexOf(':') + 1);
    body.due = {
      at_ms: ctx.nowMs,
      event: 'next_sweep',
      then: taking[1] === 'held' ? 'hold' : taking[1] === 'truncated' ? 'truncate' : 'remove',
      rule,
    };
  } else if (word === 'failed' || word === 'not_reached') {
    body.due = { at_ms: null, event: 'unknown', then: null, rule: null };
  } else if (
    !owned ||
    !writable ||
    word === 'kept:not_owned' ||
    word === 'kept:foreign_owner' ||
    word === 'kept:not_writable'
  ) {
    body.due = { at_ms: null, event: 'never', then: null, rule: null };
  } else if (protectedNow) {
    body.due = { at_ms: null, event: 'never', then: null, rule: null };
    body.moves.push({ cause: 'release', count: null });
  } else if (word === 'kept:blast_radius') {
    body.due = { at_ms: null, event: 'unknown', then: null, rule: body.fate.condemned_by };
    body.moves.push({ cause: 'guard', count: null });
  } else {
    // Not taken now: the first instant a rule condemns it, and the end of what keeps it live.
    const condemnedAt =
      body.fate.condemned_by !== null
        ? ctx.nowMs
        : age !== null && age.condemns_from_ms !== null && policy?.clock_behind_ms === null
          ? age.condemns_from_ms
          : undefined;
    const rule = body.fate.condemned_by ?? (condemnedAt !== undefined ? 'max_age' : null);
    const liveNow = live.filter((l) => l.state === 'live');
    const process = liveNow.find((l) => l.live_until_ms === null);
    if (condemnedAt === undefined) body.due = { at_ms: null, event: 'never', then: null, rule: null };
    else if (process) body.due = { at_ms: null, event: 'unknown', then: rule === null ? null : then(rule), rule };
    else {
      const liveEnd = liveNow.reduce((m, l) => Math.max(m, l.live_until_ms ?? 0), 0);
      const at = Math.max(condemnedAt, liveEnd);
      body.due = {
        at_ms: at,
        event: liveEnd > condemnedAt ? 'live_ends' : 'condemned',
        then: rule === null ? null : then(rule),
        rule,
      };
    }
    if (process) body.moves.push({ cause: 'process_end', count: process.pid });
    if (liveNow.some((l) => l.test === 'recent_write' || l.test === 'live_grace'))
      body.moves.push({ cause: 'trace_write', count: null });
  }
  if (body.due.event !== 'next_sweep' && body.fate.condemned_by === null && !protectedNow && owned && writable) {
    const rank = policy?.rank;
    if (rank && !rank.over) body.moves.push({ cause: 'new_sessions', count: rank.newer_to_condemn });
    const m = policy?.messages;
    if (m && !m.over && m.more_to_condemn !== null)
      body.moves.push({ cause: 'new_messages', count: m.more_to_condemn });
    if (age?.by === 'mtime' && !age.over) body.moves.push({ cause: 'record_write', count: null });
    for (const b of body.budgets) {
      if (b.rule === 'max_bytes' && b.grows_by !== null) body.moves.push({ cause: 'growth', count: b.grows_by });
      if (b.rule === 'keep_free') body.moves.push({ cause: 'keep_free', count: null });
    }
    if (body.guard && word !== 'kept:blast_radius') body.moves.push({ cause: 'guard', count: null });
  }
}
