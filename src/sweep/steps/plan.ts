// Step "plan": every mode to reassert, and the fate of every item of every sessions root and
// record store (src/plan/fates.ts: policies, disk budgets, the undo window, the blast-radius
// guard), decided once from the scans and the measure step's sizes.
// Guarantees: no fs access; the fates are acted on by the steps after it (remove, truncate,
// budget, quarantine), which report the skips of the stores they act on (so each store's
// outcomes stay together); mode skips are reported here. When the clock step found the clock
// behind the last sweep, no `max_age` is given to the planner (count keys still are). What the
// protection list names (the protect step) is never taken, whatever condemns it; murmur-gc's own
// audit sessions are never protected, never held and never budgeted. A sessions root holding
// session names minted in the future is warned about once (`future_session_id`); their ranking
// is the runtime's, unchanged.
import { resolve } from 'node:path';
import { planMode } from '../../plan/modes.js';
import {
  planFates,
  itemKey,
  PackedSessions,
  type FateInput,
  type HoldIn,
  type RootIn,
  type Stop,
  type StoreIn,
} from '../../plan/fates.js';
import type { StopInfo } from '../report.js';
import { recordStoreBudgets, sessionsRootBudget } from '../../plan/budget.js';
import { RESERVE_BYTES, RESERVE_INODES_ROOM } from '../../gchome/reserve.js';
import { skip, type HomeSpace, type MeasuredSizes, type SweepContext, type StepTally } from './context.js';
import type { SessionView } from '../world.js';
import { isHeld } from './measure.js';
import { Codes } from '../../errors.js';
import { definedOnly } from '../../defined.js';
import { futureSessions } from '../../plan/future-ids.js';
import { humanTime } from '../../runtime/conversation-format.js';

/** The retain block without its age key while the clock is skewed (undefined when nothing is left). */
function withoutAge<R extends { maxAgeSecs?: number }>(ctx: SweepContext, retain: R | undefined): R | undefined {
  if (!ctx.clockSkew || retain?.maxAgeSecs === undefined) return retain;
  const { maxAgeSecs: _age, ...rest } = retain;
  return Object.keys(rest).length === 0 ? undefined : (rest as R);
}

/** Once per root and sweep: session names minted in the future outrank every real session. */
function warnFutureSessions(ctx: SweepContext, root: string, names: string[]): void {
  const f = futureSessions(names, ctx.nowMs);
  if (f.count === 0 || f.newest === undefined) return;
  skip(ctx, {
    target: root,
    code: Codes.futureSessionId,
    detail: `${root} holds ${f.count} session name${f.count === 1 ? '' : 's'} minted in the future (the first-ranked: ${f.newest}, minted ${humanTime(f.newestMs)}); like the runtime, murmur-gc ranks them newest, so under max_sessions they push real sessions out and max_age never reaches them`,
  });
}

export function planStep(ctx: SweepContext): Promise<StepTally> {
  for (const e of ctx.modes) {
    const r = planMode(e, ctx.uid);
    if (!r) continue;
    if ('code' in r) {
      // A symlinked store/context is already reported by the scan; report others once.
      if (r.code !== 'symlink' || e.ref.chain.length <= 1)
        skip(ctx, { target: r.path, code: r.code, detail: r.detail });
      continue;
    }
    ctx.chmods.push({ entry: e, action: r });
  }
  for (const p of ctx.sessionPlans)
    if (!p.input.isAuditRoot)
      warnFutureSessions(
        ctx,
        p.input.root,
        p.views.map((v) => v.scan.name),
      );

  const input = fateInput(ctx);
  ctx.fates = planFates(input);
  if (ctx.fates.stops.length > 0) ctx.report.stopped = ctx.fates.stops.map(stopInfo);
  if (ctx.opts.alsoUnattended === true)
    ctx.report.stopped_unattended = planFates({ ...input, guard: { ...input.guard, unattended: true } }).stops.map(
      stopInfo,
    );
  let items = ctx.chmods.length;
  for (const f of ctx.fates.items.values()) if (f.fate !== 'kept') items++;
  for (const f of ctx.fates.holds.values()) if (f.fate === 'purged') items++;
  return Promise.resolve({ items, bytes: 0 });
}

/** A stop of the guard as the report gives it: the store (a root's path, a record store's name), what it would have taken. */
function stopInfo(s: Stop): StopInfo {
  return {
    store: s.store.slice(s.store.indexOf(':') + 1),
    kind: s.kind,
    present: s.present,
    would_take: s.going.length,
    limit: s.limit,
  };
}

/** What the fate planner is given: the scans, the protection list, the measured sizes, the configuration. */
export function fateInput(ctx: SweepContext): FateInput {
  const homeDev = ctx.homeDir?.identity.dev;
  const keepFree = ctx.config.keepFree !== undefined;
  const sizes = ctx.sizes;
  const roots: RootIn[] = [];
  const holds: HoldIn[] = [];
  for (const p of ctx.sessionPlans) {
    const { input, scan, views, key } = p;
    const budget =
      input.isAuditRoot || !scan.identity || sizes?.unmeasured.has(key)
        ? undefined
        : sessionsRootBudget(input, keepFree, scan.identity.dev === homeDev);
    const isProtected = input.isAuditRoot ? () => false : ctx.protection.session(resolve(input.root));
    roots.push({
      key,
      label: `sessions root ${input.root}`,
      retain: withoutAge(ctx, input.retain),
      ...(input.isAuditRoot ? { floorId: ctx.auditId } : {}),
      ...(budget?.maxBytes !== undefined ? { maxBytes: budget.maxBytes } : {}),
      keepFree: budget?.keepFree === true,
      holdable: !input.isAuditRoot,
      writable: !ctx.unwritable.has(input.root),
      sessions: packSessions(ctx, key, views, isProtected, budget ? sizes : undefined),
      fixed: budget ? (sizes?.fixed.get(key) ?? []) : [],
    });
    for (const h of scan.held) {
      const hk = `${input.root}/${h.entry}`;
      holds.push({
        key: hk,
        store: key,
        target: h.session,
        untilMs: h.untilMs,
        owned: h.uid === ctx.uid,
        ...definedOnly({ bytes: sizes?.holds.get(hk), inodes: sizes?.inodes.get(hk) }),
        keepFree: budget?.keepFree === true,
      });
    }
  }
  const budgets = new Map(recordStoreBudgets(ctx.config.records, keepFree).map((b) => [b.name, b.store]));
  const stores: StoreIn[] = ctx.recordPlans.map((r) => {
    const budget = sizes?.unmeasured.has(r.key) ? undefined : budgets.get(r.store);
    const isProtected = ctx.protection.context(r.store);
    return {
      key: r.key,
      label: `record store ${r.store}`,
      policies: r.policies.map((p) => ({ capsule: p.capsule, retain: withoutAge(ctx, p.retain) })),
      ...(budget?.maxBytes !== undefined ? { maxBytes: budget.maxBytes } : {}),
      keepFree: budget?.keepFree === true,
      // The quarantine is under the home: a store on another filesystem cannot be held there.
      holdable: r.contexts.every((c) => c.dirIdentity.dev === homeDev),
      writable: true,
      contexts: r.contexts.map((c) => {
        const k = itemKey(r.key, c.context);
        const bytes = budget ? sizes?.items.get(k) : undefined;
        const after = budget ? sizes?.afterTruncation.get(k) : undefined;
        const inodes = budget ? sizes?.inodes.get(k) : undefined;
        return {
          context: c.context,
          ...(c.header ? { capsule: c.header.capsule } : {}),
          mtimeMs: c.file.mtimeMs,
          ...(c.messages !== undefined ? { messages: c.messages } : {}),
          live: ctx.world.liveContexts.has(c.context),
          owned: c.dirUid === ctx.uid && c.file.uid === ctx.uid,
          protected: isProtected(c.context),
          ...(bytes !== undefined ? { bytes } : {}),
          ...(after !== undefined ? { bytesAfterTruncation: after } : {}),
          ...definedOnly({ inodes }),
        };
      }),
    };
  });
  const q = ctx.quarantineDir;
  for (const i of q ? (ctx.quarantineListing?.items ?? []) : []) {
    if (!isHeld(i)) continue;
    const hk = `${q!.path}/${i.entry}`;
    const store = ctx.recordPlans.some((r) => r.store === i.origin) ? `records:${i.origin}` : 'quarantine';
    holds.push({
      key: hk,
      store,
      target: i.target,
      untilMs: i.untilMs,
      owned: true,
      ...definedOnly({ bytes: sizes?.holds.get(hk), inodes: sizes?.inodes.get(hk) }),
      keepFree,
    });
  }
  const space = ctx.space;
  return {
    nowMs: ctx.nowMs,
    ...(ctx.quarantineMs !== undefined ? { quarantineMs: ctx.quarantineMs } : {}),
    guard: {
      ...(ctx.config.maxDelete ? { maxDelete: ctx.config.maxDelete } : {}),
      unattended: ctx.opts.unattended === true,
      confirmLarge: ctx.opts.confirmLarge === true,
    },
    ...(keepFree && space?.keepFreeBytes !== undefined
      ? { keepFree: keepFreeInput(ctx, space, space.keepFreeBytes) }
      : {}),
    roots,
    stores,
    holds,
  };
}

/** A root's sessions for the planner, packed (no object a session); sizes only for a root a budget measured, and no key made otherwise. */
function packSessions(
  ctx: SweepContext,
  key: string,
  views: readonly SessionView[],
  isProtected: (name: string) => boolean,
  sizes: MeasuredSizes | undefined,
): PackedSessions {
  const names = new Array<string>(views.length);
  const flags = new Uint8Array(views.length);
  const measured = sizes ? new Float64Array(2 * views.length).fill(Number.NaN) : undefined;
  views.forEach((v, i) => {
    const name = v.scan.name;
    names[i] = name;
    flags[i] =
      (v.liveness === 'live' ? PackedSessions.LIVE : 0) |
      (v.scan.uid === ctx.uid ? PackedSessions.OWNED : 0) |
      (isProtected(name) ? PackedSessions.PROTECTED : 0);
    if (!sizes || !measured) return;
    const k = itemKey(key, name);
    measured[2 * i] = sizes.items.get(k) ?? Number.NaN;
    measured[2 * i + 1] = sizes.inodes.get(k) ?? Number.NaN;
  });
  return new PackedSessions(names, flags, measured);
}

/** What keep_free asks of the planner: bytes and (where counted) inodes short, the reserve's room, the per-sweep share. */
function keepFreeInput(ctx: SweepContext, space: HomeSpace, keepFreeBytes: number): NonNullable<FateInput['keepFree']> {
  const missing = ctx.reserveMissing;
  const inodes =
    space.keepFreeInodes !== undefined && space.freeInodes !== undefined
      ? { inodesShort: space.keepFreeInodes - space.freeInodes, inodesRoom: missing.inodes ? RESERVE_INODES_ROOM : 0 }
      : {};
  return {
    short: keepFreeBytes - space.freeBytes,
    room: missing.bytes ? RESERVE_BYTES : 0,
    ...inodes,
    perSweep: (ctx.config.keepFree?.perSweepPercent ?? 100) / 100,
  };
}
