// The operator's side of the protection list (`murmur-gc protect`, `release`, `protection ls`,
// and the protection `restore` adds; format: src/gchome/protect-list.ts; docs/protect.md).
// Guarantees:
// - protect and release change the list under the sweep lock (no sweep plans meanwhile; busy →
//   exit 75), replace it atomically, and write a murmur-gc audit trace with one `protection` line
//   (`history --target` shows it). Protecting what is already protected, like any refusal,
//   changes nothing and writes no audit.
// - A list that cannot be read is never overwritten: protect and release refuse
//   (`protected_unreadable`, naming the file); `protection ls` reports it and exits 1.
// - A session is named by its sessions root (absolute), a context by its record store: without
//   --root/--record the one configured root / record store that holds it now is used; none is
//   `protect_not_found`, several `protect_ambiguous`. With --root/--record an item may be
//   protected before it exists.
// - The judgement (is it condemned by the current policy, and why) runs the sweep's own pure
//   planners on that one item (src/plan/sessions.ts, records.ts), with the root's other sessions
//   ranked as the sweep ranks them. It reads; it never changes anything.
// - Ids, paths, counts and times only — never record content.
import { resolve } from 'node:path';
import type { GcConfig } from '../config/types.js';
import { BusyError, RefusalError, describeError } from '../errors.js';
import { CONVERSATIONS_DIR, RECORD_FILE, countMessages } from '../runtime/inventory.js';
import { humanTime } from '../runtime/conversation-format.js';
import { notASessionId } from '../runtime/ids.js';
import { acquireLock, sweepLockPath } from '../gchome/lock.js';
import { auditProtection, protectionPath, readProtection, writeProtection } from '../gchome/protect-file.js';
import { Dir } from '../fsx/safe-fs.js';
import type { Logger } from '../log.js';
import {
  PROTECT_LIMIT,
  kindOf,
  protectedText,
  sameItem,
  type ProtectedItem,
  type ProtectedKind,
} from '../gchome/protect-list.js';
import { planRecords } from '../plan/records.js';
import { planSessions } from '../plan/sessions.js';
import { GC_DIR } from '../gchome/audit.js';
import { exists, itemPath, openHome } from './protect-listing.js';

export { listProtection, type ProtectionListing } from './protect-listing.js';
import { formatWindow } from '../sweep/report.js';
import { definedOnly } from '../defined.js';
import type { Judgement, ProtectOutcome, ReleaseOutcome } from '../schema/json-schemas.js';

/** What `protect` and `release` tell: their schemas' (src/schema/json-schemas.ts). */
export type { Judgement, ProtectOutcome, ReleaseOutcome };

export const ProtectCodes = {
  /** nothing of that id in any configured sessions root / record store (and no --root/--record) */
  notFound: 'protect_not_found',
  /** present in (or protected for) more than one sessions root / record store */
  ambiguous: 'protect_ambiguous',
  /** release: it is not on the protection list */
  notProtected: 'release_not_protected',
  /** the list would grow past what murmur-gc reads back */
  full: 'protect_full',
  /** the list on disk cannot be read: it is not overwritten */
  unreadable: 'protected_unreadable',
} as const;

export interface ItemRef {
  target: string;
  /** record store, for a context id */
  record?: string;
  /** sessions root, for a session id */
  root?: string;
}

function refuse(code: string, message: string, hint: string): RefusalError {
  return new RefusalError(code, message, hint);
}

/** The runtime's launch-time pruning of this item, which murmur-gc cannot stop, in words. */
export function runtimeNote(kind: ProtectedKind): string {
  return kind === 'session'
    ? "protection binds murmur-gc only: mur itself prunes its sessions by its manifest's trace.retain each time it launches, which is outside murmur-gc's reach (raise trace.retain, or copy the session elsewhere, to keep it from mur)"
    : "protection binds murmur-gc only: mur itself prunes its records by its manifest's context.retain each time it launches, which is outside murmur-gc's reach (raise context.retain, or copy the record elsewhere, to keep it from mur)";
}

function retainWords(r: { maxSessions?: number; maxMessages?: number; maxAgeSecs?: number }): string {
  const w: string[] = [];
  if (r.maxSessions !== undefined) w.push(`max_sessions ${r.maxSessions}`);
  if (r.maxMessages !== undefined) w.push(`max_messages ${r.maxMessages}`);
  if (r.maxAgeSecs !== undefined) w.push(`max_age ${formatWindow(r.maxAgeSecs)}`);
  return w.join(', ');
}

/** Would a sweep act on this item now, were it not protected? (the planners, for one item) */
export async function judgeItem(
  config: GcConfig,
  i: Pick<ProtectedItem, 'kind' | 'target' | 'where'>,
  nowMs: number,
): Promise<Judgement> {
  try {
    if (i.kind === 'session') {
      const entry = config.sessions.find((s) => resolve(s.root) === i.where && s.retain !== undefined);
      if (!entry?.retain) return { condemned: null, policy: null, unknown: null };
      const policy = retainWords(entry.retain);
      if (!(await exists(i.where))) return { condemned: null, policy, unknown: `${i.where} does not exist` };
      const d = await Dir.open(i.where);
      let names: string[];
      try {
        names = await d.list();
      } finally {
        await d.close();
      }
      if (!names.includes(i.target)) return { condemned: null, policy, unknown: null };
      const plan = planSessions(
        names.map((name) => ({ name, liveness: 'dead' as const, livenessWhy: '' })),
        entry.retain,
        nowMs,
      );
      return { condemned: plan.remove.find((r) => r.name === i.target)?.reason ?? null, policy, unknown: null };
    }
    const policies = config.records.filter((r) => r.store === i.where && r.retain !== undefined);
    if (policies.length === 0) return { condemned: null, policy: null, unknown: null };
    const policy = policies.map((p) => `${retainWords(p.retain!)} for capsule ${p.capsule}`).join('; ');
    const ctxPath = `${config.home}/${CONVERSATIONS_DIR}/${i.where}/${i.target}`;
    if (!(await exists(`${ctxPath}/${RECORD_FILE}`))) return { condemned: null, policy, unknown: null };
    await using dir = await Dir.open(ctxPath);
    const st = await dir.lstat(RECORD_FILE);
    if (!st?.isFile()) return { condemned: null, policy, unknown: `${ctxPath}/${RECORD_FILE} is not a regular file` };
    const counted = await countMessages(dir, RECORD_FILE);
    const input = {
      context: i.target,
      header: counted.utf8 ? counted.header : undefined,
      mtimeMs: Number(st.mtimeMs),
      messages: counted.messages,
    };
    for (const p of policies) {
      const plan = planRecords([input], p.capsule, p.retain, new Set(), nowMs);
      if (plan.remove.length > 0) return { condemned: 'max_age', policy, unknown: null };
      if (plan.truncate.length > 0) return { condemned: 'max_messages', policy, unknown: null };
    }
    return { condemned: null, policy, unknown: null };
  } catch (err) {
    return { condemned: null, policy: null, unknown: describeError(err) };
  }
}

async function withSweepLock<T>(config: GcConfig, fn: () => Promise<T>): Promise<T> {
  const lock = await acquireLock(sweepLockPath(config.home), { waitMs: 3000 });
  if (!lock)
    throw new BusyError(`a murmur-gc sweep holds ${sweepLockPath(config.home)}; try again when it has finished`);
  try {
    return await fn();
  } finally {
    await lock.release();
  }
}

async function currentList(home: Dir): Promise<ProtectedItem[]> {
  const read = await readProtection(home);
  if (read.status === 'unreadable') {
    throw refuse(
      ProtectCodes.unreadable,
      `${read.detail}; it was not changed`,
      'check it (murmur-gc protection ls), then move it away: until then every sweep counts every item as protected',
    );
  }
  return read.items;
}

/** Nothing of that name in any configured place; a name taken for a context id though it starts with `ses_` says so. */
function notFoundWords(kind: ProtectedKind, target: string): string {
  if (kind === 'session') return `session ${target} is in no configured sessions root`;
  const taken = notASessionId(target);
  return taken !== undefined
    ? `${taken}, and no configured record store holds a context of that name`
    : `context ${target} is in no configured record store`;
}

function notProtectedWords(kind: ProtectedKind, target: string, wanted: string | undefined): string {
  if (wanted === undefined) return `${target} is not protected`;
  const taken = kind === 'context' ? notASessionId(target) : undefined;
  return taken !== undefined
    ? `${taken}, and no context of that name is protected in record store ${wanted}`
    : `${target} is not protected in ${wanted}`;
}

/** The kind of `ref.target`; a flag for the other kind (--record for a session, --root for a context) is refused. */
function checkFlags(ref: ItemRef): ProtectedKind {
  const kind = kindOf(ref.target);
  if (kind === 'session' && ref.record !== undefined)
    throw refuse(
      ProtectCodes.notFound,
      `${ref.target} is a session id; --record names a record store`,
      'pass --root <DIR> for the sessions root of a session',
    );
  if (kind === 'context' && ref.root !== undefined) {
    throw refuse(
      ProtectCodes.notFound,
      `${notASessionId(ref.target) ?? `${ref.target} is a context id (not ses_…)`}; --root names a sessions root`,
      'pass --record <NAME> for the record store of a context',
    );
  }
  return kind;
}

/** Where a session or context is, from --root/--record or from the configured stores holding it. */
async function locate(config: GcConfig, ref: ItemRef): Promise<{ kind: ProtectedKind; where: string }> {
  const kind = checkFlags(ref);
  if (kind === 'session' && ref.root !== undefined) return { kind, where: resolve(ref.root) };
  if (kind === 'context' && ref.record !== undefined) return { kind, where: ref.record };
  const candidates =
    kind === 'session'
      ? [...new Set(config.sessions.map((s) => resolve(s.root)))]
      : [...new Set(config.records.map((r) => r.store))];
  const found: string[] = [];
  for (const w of candidates) if (await exists(itemPath(config, { kind, target: ref.target, where: w }))) found.push(w);
  const flag = kind === 'session' ? '--root <DIR>' : '--record <NAME>';
  if (found.length === 0) {
    throw refuse(
      ProtectCodes.notFound,
      notFoundWords(kind, ref.target),
      `pass ${flag} to protect it there ahead of time; murmur-gc quarantine ls lists what the undo window holds (restore protects what it puts back)`,
    );
  }
  if (found.length > 1)
    throw refuse(
      ProtectCodes.ambiguous,
      `${kind} ${ref.target} is in ${found.length} places: ${found.join(', ')}`,
      `pass ${flag} to say which one, e.g. ${flag.split(' ')[0]} ${found[0]}`,
    );
  return { kind, where: found[0]! };
}

/** Adds one item to the list (the caller holds the sweep lock). */
async function addItem(
  config: GcConfig,
  home: Dir,
  log: Logger,
  item: ProtectedItem,
  now: () => number,
): Promise<ProtectOutcome> {
  const items = await currentList(home);
  const had = items.find((i) => sameItem(i, item));
  let audit: string | null = null;
  if (!had) {
    const next = [...items, item];
    if (Buffer.byteLength(protectedText(next)) > PROTECT_LIMIT) {
      throw refuse(
        ProtectCodes.full,
        `the protection list ${protectionPath(config.home)} would grow past ${PROTECT_LIMIT} bytes; ${item.target} was not protected`,
        'release items that no longer need it (murmur-gc protection ls)',
      );
    }
    // Written before anything slower (the judgement may count a large record's messages).
    await writeProtection(home, next);
    log.info({ target: item.target, origin: item.where, by: item.by }, 'protected');
    audit = await auditProtection(home, now, {
      change: 'protect',
      store: item.kind === 'session' ? 'sessions' : 'records',
      target: item.target,
      origin: item.where,
      by: item.by,
    });
  }
  const present = await exists(itemPath(config, item));
  const judgement = await judgeItem(config, item, now());
  return { item: had ?? item, added: !had, present, judgement, runtime: runtimeNote(item.kind), audit };
}

export async function protectTarget(
  config: GcConfig,
  log: Logger,
  ref: ItemRef & { note?: string },
  now: () => number = Date.now,
): Promise<ProtectOutcome> {
  await using home = await openHome(config);
  if (!home)
    throw refuse(
      ProtectCodes.notFound,
      `there is no murmur home at ${config.home} to keep the protection list in`,
      'run murmur-gc once the runtime has created its home',
    );
  const gc = await home.mkdir(GC_DIR, 0o700);
  await gc.close();
  return await withSweepLock(config, async () => {
    const { kind, where } = await locate(config, ref);
    const item: ProtectedItem = {
      kind,
      target: ref.target,
      where,
      since_ms: now(),
      by: 'protect',
      ...definedOnly({ note: ref.note }),
    };
    return addItem(config, home, log, item, now);
  });
}

export async function releaseTarget(
  config: GcConfig,
  log: Logger,
  ref: ItemRef,
  now: () => number = Date.now,
): Promise<ReleaseOutcome> {
  await using home = await openHome(config);
  if (!home)
    throw refuse(
      ProtectCodes.notProtected,
      `${ref.target} is not protected: there is no murmur home at ${config.home}`,
      'murmur-gc protection ls lists what is protected',
    );
  return await withSweepLock(config, async () => {
    const kind = checkFlags(ref);
    const items = await currentList(home);
    const wanted = kind === 'session' ? (ref.root === undefined ? undefined : resolve(ref.root)) : ref.record;
    // Without --root/--record, the item of that name whatever its kind: a list may hold one
    // whose kind was judged otherwise when it was written.
    const mine = items.filter(
      (i) => i.target === ref.target && (wanted === undefined || (i.kind === kind && i.where === wanted)),
    );
    if (mine.length === 0)
      throw refuse(
        ProtectCodes.notProtected,
        notProtectedWords(kind, ref.target, wanted),
        'murmur-gc protection ls lists what is protected',
      );
    const flag = mine[0]!.kind === 'session' ? '--root' : '--record';
    if (mine.length > 1)
      throw refuse(
        ProtectCodes.ambiguous,
        `${ref.target} is protected in ${mine.length} places: ${mine.map((i) => i.where).join(', ')}`,
        `pass ${flag} to say which one, e.g. ${flag} ${mine[0]!.where}`,
      );
    const item = mine[0]!;
    await writeProtection(
      home,
      items.filter((i) => !sameItem(i, item)),
    );
    log.info({ target: item.target, origin: item.where }, 'released');
    const audit = await auditProtection(home, now, {
      change: 'release',
      store: item.kind === 'session' ? 'sessions' : 'records',
      target: item.target,
      origin: item.where,
      by: 'release',
    });
    return {
      item,
      present: await exists(itemPath(config, item)),
      judgement: await judgeItem(config, item, now()),
      audit,
    };
  });
}

/**
 * Protects what `restore` just put back (the caller holds the sweep lock, so no sweep runs between
 * the restore and this). `to` is the path the restore put it at.
 */
export async function protectRestored(
  config: GcConfig,
  home: Dir,
  log: Logger,
  r: { target: string; restored: { held_kind: string; to: string }[] },
  now: () => number,
): Promise<ProtectOutcome | undefined> {
  const kind = kindOf(r.target);
  // The target itself, not what came back with it (a session's child workdirs and work logs come first).
  const first = r.restored.find((x) =>
    kind === 'session' ? x.held_kind === 'session' : x.held_kind === 'context' || x.held_kind === 'truncation',
  );
  if (!first) return undefined;
  // session: <root>/<id>; context: <home>/conversations/<store>/<ctx>[/conversation.jsonl]
  const rel = first.to.slice(`${config.home}/${CONVERSATIONS_DIR}/`.length).split('/');
  const where = kind === 'session' ? resolve(first.to, '..') : rel[0]!;
  return addItem(config, home, log, { kind, target: r.target, where, since_ms: now(), by: 'restore' }, now);
}

/** The judgement, in one line. */
export function judgementWords(j: Judgement, i: Pick<ProtectedItem, 'kind' | 'where'>): string {
  const place = i.kind === 'session' ? `sessions root ${i.where}` : `record store ${i.where}`;
  if (j.unknown !== null) return `whether the current policy condemns it could not be judged: ${j.unknown}`;
  if (j.policy === null) return `no policy of this configuration covers ${place}`;
  if (j.condemned !== null) return `STILL CONDEMNED by the current policy (${j.condemned}; ${place}: ${j.policy})`;
  return `not condemned by the current policy now (${place}: ${j.policy})`;
}

/** What `protect` and `restore` print about the protection (text output). */
export function renderProtectOutcome(p: ProtectOutcome): string[] {
  const t = p.item.target;
  const out: string[] = [];
  out.push(
    p.added
      ? `protected ${p.item.kind} ${t} (${p.item.kind === 'session' ? 'sessions root' : 'record store'} ${p.item.where}): no sweep removes or truncates it, for any reason, until murmur-gc release ${t}`
      : `${p.item.kind} ${t} was already protected (since ${humanTime(p.item.since_ms)}, by ${p.item.by}); nothing changed`,
  );
  if (!p.present) out.push(`note: ${t} is not in ${p.item.where} now; the protection applies once it is`);
  const j = judgementWords(p.judgement, p.item);
  out.push(
    p.judgement.condemned !== null
      ? `${j}: without the protection the next sweep would ${p.judgement.condemned === 'max_messages' ? 'truncate' : 'remove'} it again`
      : j,
  );
  out.push(p.runtime);
  return out;
}
