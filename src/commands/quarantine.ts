// `murmur-gc quarantine ls` and `murmur-gc restore TARGET`: the operator's side of the undo window
// (layout: src/gchome/quarantine-layout.ts; the moves: src/gchome/quarantine-store.ts).
// Guarantees:
// - `ls` is read-only: it shows what src/gchome/held-listing.ts reads.
// - `restore` runs under the sweep lock (so no sweep purges or holds meanwhile; busy → exit 75).
//   It puts back a held session only when murmur-gc's registry vouches for its hold
//   (src/gchome/registry.ts; anything else named like one is refused, `restore_not_held`), and an
//   item only where nothing of that name exists now (else `restore_exists`,
//   nothing changed), through descriptors, never replacing anything. A session id (`ses_` and at
//   least 12 hex digits) is a session; anything else a context id, and a refusal for a name that
//   starts with `ses_` but is no session id says it was taken for one. A context held whole goes
//   back into its record store (created 0700 when it is gone); the lines a truncation dropped go
//   back in front of the record's current lines with the staged rewrite truncation uses (lines
//   appended since stay after them; under the record's lock), the header's `dropped` decreased by
//   the messages put back, the `truncated` marker removed when it reaches 0. Only the chain of held
//   truncations ending at the marker the record carries now goes back (restoreChain,
//   src/gchome/quarantine-layout.ts; none: `restore_conflict` — it was truncated again since, and
//   putting lines back would leave a gap); an item outside it (its lines are back already) is never
//   put back again. A truncation whose run was killed before marking its item held is restorable as
//   soon as the record carries its marker. `--dry-run` runs the same checks and changes nothing:
//   every act goes through the effects engine (src/sweep/effects.ts), real or measure-only.
// - Exactly once: each step is an intent in the restore's audit (logged durably before it runs,
//   marked done durably once its change landed, before its held item is removed); the audit ends
//   with one `quarantine_restore` line per step (`history --target` shows it). Killed or failing
//   at any point (a held item that cannot be removed fails the restore, exit 1), it is completed
//   by the next sweep's recover step or the next restore, which runs that recovery first
//   (src/gchome/audit-recovery.ts): lines back once and the item gone, or the item held whole and the
//   audit saying nothing was restored.
// - What a restore put back is put on the protection list before the sweep lock is released (no
//   sweep acts on it until `murmur-gc release`), with its own audit trace, and judged by the
//   current policy (src/commands/protect.ts).
import { resolve } from 'node:path';
import type { GcConfig } from '../config/types.js';
import { BusyError, Codes, GcError, RefusalError } from '../errors.js';
import { CONVERSATIONS_DIR, RECORD_FILE } from '../runtime/inventory.js';
import { listQuarantineDir, listRootHeld, openQuarantineDir, type RootHeld } from '../gchome/quarantine-store.js';
import { Dir } from '../fsx/safe-fs.js';
import type { Logger } from '../log.js';
import { isSessionName, notASessionId } from '../runtime/ids.js';
import { CONTEXT_PAYLOAD, payloadOf } from '../gchome/quarantine-layout.js';
import type { RestoredItem } from '../gchome/audit.js';
import { BESIDE_DIR, type BesideHeld } from '../gchome/quarantine-beside.js';
import { protectRestored } from './protect.js';
import { openAnchor } from '../fsx/dirs.js';
import { landedStaged, notOurHold } from '../gchome/held-listing.js';
import { Registry } from '../gchome/registry.js';
import { commandEffects, type CommandEffects } from '../sweep/effects.js';
import type { RestoreResult } from '../schema/json-schemas.js';

/** What `restore TARGET` tells: its schema's (src/schema/json-schemas.ts). */
export type { RestoreResult };

export const RestoreCodes = {
  /** nothing of that id is held */
  notHeld: 'restore_not_held',
  /** something of that name exists now */
  exists: 'restore_exists',
  /** held under more than one sessions root or record store */
  ambiguous: 'restore_ambiguous',
  /** the record was truncated again since (or is gone): the held lines cannot go back in order */
  conflict: 'restore_conflict',
} as const;

// ---- restore ------------------------------------------------------------------------------------

export interface RestoreOptions {
  target: string;
  /** record store, when a context id is held from more than one */
  record?: string;
  /** sessions root, when a session id is held in more than one */
  root?: string;
  dryRun: boolean;
}

/** After a restore: protect what came back, and judge it by the current policy. */
async function withProtection(
  config: GcConfig,
  home: Dir,
  log: Logger,
  r: RestoreResult,
  now: () => number,
): Promise<RestoreResult> {
  try {
    const p = await protectRestored(config, home, log, r, now);
    return p ? { ...r, protection: p } : r;
  } catch (err) {
    if (!(err instanceof GcError)) throw err;
    log.warn({ code: err.code, target: r.target }, `restored but not protected: ${err.message}`);
    return { ...r, protection_error: { code: err.code, message: err.message } };
  }
}

function refuse(code: string, message: string, hint: string): RefusalError {
  return new RefusalError(code, message, hint);
}

export async function restoreTarget(
  config: GcConfig,
  log: Logger,
  opts: RestoreOptions,
  now: () => number = Date.now,
): Promise<RestoreResult> {
  await using home = await openAnchor(config.home, true);
  if (!home && !isSessionName(opts.target))
    throw refuse(
      RestoreCodes.notHeld,
      `nothing named '${opts.target}' is held: there is no murmur home at ${config.home}`,
      'murmur-gc quarantine ls lists what the undo window holds',
    );
  if (!home) {
    // A session may be held in a configured root even without a home; the audit trail needs one.
    throw refuse(
      RestoreCodes.notHeld,
      `there is no murmur home at ${config.home} to keep the audit trail of a restore`,
      'run murmur-gc once the runtime has created its home',
    );
  }
  await using fx = commandEffects({
    home: config.home,
    homeDir: home,
    measureOnly: opts.dryRun,
    now,
    log,
    recordLockWaitMs: 3000,
  });
  const lock = await fx.lockForCommand(home);
  try {
    // A restore (or sweep) killed or failed mid-way is completed first, as a sweep's recover
    // step would (src/sweep/steps/recover.ts): a retried restore then finds its lines back and
    // its held item gone; and the small temps a killed run left under <home>/gc.
    const rec = await fx.recover(home);
    for (const r of rec.recovered) log.warn({ code: Codes.processInterrupted, path: r.target }, r.detail);
    for (const t of rec.temps)
      log.warn(
        { code: Codes.processInterrupted, path: t.path, pid: t.pid },
        'leftover temp file of a killed murmur-gc removed',
      );
    const r = await (
      isSessionName(opts.target) ? restoreSession(config, fx, home, opts) : restoreContext(config, fx, home, opts)
    ).catch(async (err: unknown) => {
      await fx.abandonAudit();
      throw err;
    });
    return (await fx.upkeep(() => withProtection(config, home, log, r, now))) ?? r;
  } finally {
    await lock?.release();
  }
}

/**
 * What the audit trail says became of a target restore does not find held: deleted for good by
 * which sweep, and why (its window passed, or keep_free purged it for space); else where to look.
 */
async function notHeldHint(home: string, target: string): Promise<string> {
  const general = `murmur-gc quarantine ls lists what the undo window holds; murmur-gc history --target ${target} says what became of it`;
  try {
    const { readAuditHistory } = await import('./audit-read.js');
    const { findTarget } = await import('./history.js');
    const read = await readAuditHistory(home, { target });
    const purges = findTarget(read.sweeps, target).filter((m) => m.action === 'purged');
    const last = purges.at(-1);
    if (!last) return general;
    const why =
      last.reason === 'expired'
        ? 'its undo window had passed'
        : `purged for space (${last.reason}) before its window passed`;
    return `it was deleted for good by sweep ${last.sweep}: ${why} (murmur-gc history --target ${target} has the whole trail)`;
  } catch {
    return general;
  }
}

async function restoreSession(
  config: GcConfig,
  fx: CommandEffects,
  home: Dir,
  opts: RestoreOptions,
): Promise<RestoreResult> {
  const wanted = opts.root === undefined ? undefined : resolve(opts.root);
  const roots = [...new Set(config.sessions.map((s) => s.root))].filter(
    (r) => wanted === undefined || resolve(r) === wanted,
  );
  const found: { root: string; h: RootHeld }[] = [];
  // Only a hold murmur-gc's registry vouches for is put back (docs/design.md §4a).
  const registry = await Registry.load(home);
  const notOurs: string[] = [];
  for (const r of roots) {
    await using d = await openAnchor(r, false);
    if (!d) continue;
    for (const h of await listRootHeld(d, false)) {
      if (h.target !== opts.target) continue;
      if (registry.vouch(h.entry, h)?.kind === 'hold') found.push({ root: r, h });
      else notOurs.push(d.display(h.entry));
    }
  }
  if (found.length === 0) {
    if (notOurs.length > 0)
      throw refuse(
        RestoreCodes.notHeld,
        `session ${opts.target} is not held by murmur-gc: ${notOurHold(notOurs[0]!)}`,
        'murmur-gc quarantine ls lists what the undo window holds',
      );
    throw refuse(
      RestoreCodes.notHeld,
      `session ${opts.target} is not held in ${opts.root ?? 'any configured sessions root'}`,
      await notHeldHint(config.home, opts.target),
    );
  }
  const roots2 = [...new Set(found.map((f) => f.root))];
  if (roots2.length > 1) {
    throw refuse(
      RestoreCodes.ambiguous,
      `session ${opts.target} is held in ${roots2.length} sessions roots: ${roots2.join(', ')}`,
      `pass --root <DIR> to say which one, e.g. --root ${roots2[0]}`,
    );
  }
  // Held more than once in one root (removed, restored, removed again): the newest hold.
  const { root, h } = found.sort((a, b) => b.h.untilMs - a.h.untilMs)[0]!;
  await using d = await Dir.open(root);
  if (await d.lstat(opts.target)) {
    throw refuse(
      RestoreCodes.exists,
      `${d.display(opts.target)} exists now; the held session was not put back`,
      `move it away first if the held one should take its place (the held one is ${d.display(h.entry)})`,
    );
  }
  const step = { held_kind: 'session' as const, from: d.display(h.entry), to: d.display(opts.target) };
  // What went with it from beside the root comes back with it, first (docs/design.md §9a).
  const besideStep = (b: BesideHeld) => ({
    held_kind: b.sub === 'children' ? ('child_workdir' as const) : ('work_log' as const),
    from: `${d.display(h.entry)}/${BESIDE_DIR}/${b.sub}/${b.name}`,
    to: b.to,
  });
  const item: RestoredItem = { store: 'sessions', held: 'session', target: opts.target, origin: root };
  const beside = await fx.putBackSession(d, h, opts.target, item, registry, (p) =>
    refuse(
      RestoreCodes.exists,
      `${p} exists now; the held session was not put back`,
      `move it away first if the held one should take its place`,
    ),
  );
  return {
    target: opts.target,
    dry_run: opts.dryRun,
    restored: [...beside.map(besideStep), step],
    audit: await fx.finishAudit('ok'),
  };
}

async function restoreContext(
  config: GcConfig,
  fx: CommandEffects,
  home: Dir,
  opts: RestoreOptions,
): Promise<RestoreResult> {
  await using q = await openQuarantineDir(home, false);
  const lookalike = notASessionId(opts.target);
  if (!q) {
    const what =
      lookalike !== undefined
        ? `${lookalike}, and no context is held (the quarantine is empty)`
        : `context '${opts.target}' is not held (the quarantine is empty)`;
    throw refuse(RestoreCodes.notHeld, what, 'murmur-gc quarantine ls lists what the undo window holds');
  }
  const listed = await listQuarantineDir(q, false);
  const landed = await landedStaged(home, listed.items);
  let mine = listed.items.filter(
    (i) =>
      !i.incomplete &&
      i.meta?.context === opts.target &&
      (i.meta.state !== 'staged' || landed.has(i.entry)) &&
      (opts.record === undefined || i.meta.store === opts.record),
  );
  const stores = [...new Set(mine.map((i) => i.meta!.store))].sort();
  if (mine.length === 0) {
    throw refuse(
      RestoreCodes.notHeld,
      `${lookalike !== undefined ? `${lookalike}, and no context of that name is held` : `context '${opts.target}' is not held`}${opts.record !== undefined ? ` from record store '${opts.record}'` : ''}`,
      await notHeldHint(config.home, opts.target),
    );
  }
  if (stores.length > 1)
    throw refuse(
      RestoreCodes.ambiguous,
      `context '${opts.target}' is held from ${stores.length} record stores: ${stores.join(', ')}`,
      `pass --record <NAME> to say which one, e.g. --record ${stores[0]}`,
    );
  const store = stores[0]!;
  mine = mine.sort((a, b) => a.meta!.removed_ms - b.meta!.removed_ms || (a.entry < b.entry ? -1 : 1));
  const contexts = mine.filter((i) => i.kind === 'context');
  const truncations = mine.filter((i) => i.kind === 'truncation');
  const result: RestoreResult = { target: opts.target, dry_run: opts.dryRun, restored: [], audit: null };
  // 1. The context directory (the newest hold), when one is held.
  const ctxItem = contexts[contexts.length - 1];
  const storeDir = await fx.openStore(home, store, ctxItem !== undefined);
  try {
    if (ctxItem) {
      if (storeDir && (await storeDir.lstat(opts.target))) {
        throw refuse(
          RestoreCodes.exists,
          `${storeDir.display(opts.target)} exists now; the held context was not put back`,
          `move it away (murmur-gc conversation rm ${opts.target} --record ${store}) if the held one should take its place`,
        );
      }
      const to = `${config.home}/${CONVERSATIONS_DIR}/${store}/${opts.target}`;
      result.restored.push({ held_kind: 'context', from: `${q.display(ctxItem.entry)}/${CONTEXT_PAYLOAD}`, to });
      const restored: RestoredItem = { store: 'records', held: 'context', target: opts.target, origin: store };
      await fx.putBackContext(q, ctxItem, storeDir, restored);
    }

    // 2. Dropped lines, oldest truncation first, in front of what the record holds now.
    const cutoff = ctxItem?.meta!.removed_ms;
    const pending = cutoff !== undefined ? truncations.filter((t) => t.meta!.removed_ms <= cutoff) : truncations;
    if (pending.length > 0) {
      const ctxDir = storeDir ? await storeDir.openDir(opts.target).catch(() => undefined) : undefined;
      const done = await fx
        .putBackLines({
          q,
          ctxDir,
          candidates: pending,
          cutoff,
          ctxRestoredFirst: ctxItem !== undefined,
          item: { store: 'records', held: 'truncation', target: opts.target, origin: store },
          noRecord: () =>
            refuse(
              RestoreCodes.conflict,
              `${config.home}/${CONVERSATIONS_DIR}/${store}/${opts.target} does not exist: there is no record to put the held lines back into`,
              'murmur-gc quarantine ls shows what is held; the lines go when their window passes',
            ),
          conflict: (d) =>
            refuse(
              RestoreCodes.conflict,
              `${d.display(RECORD_FILE)} does not carry the truncation marker of a held truncation (it was truncated again since its lines were held, or they are back already); putting them back would leave a gap or repeat them`,
              'the held lines stay in the quarantine until their window passes (murmur-gc quarantine ls)',
            ),
          busy: (d) =>
            new BusyError(`${d.display(RECORD_FILE)} is locked by another murmur-gc; try again when it has finished`),
        })
        .finally(() => ctxDir?.close());
      result.restored.push({
        held_kind: 'truncation',
        from: done.items.map((p) => `${q.display(p.entry)}/${payloadOf(p.meta!)}`).join(', '),
        to: `${config.home}/${CONVERSATIONS_DIR}/${store}/${opts.target}/${RECORD_FILE}`,
        messages_restored: done.messages,
      });
    }
  } finally {
    await storeDir?.close();
  }
  result.audit = await fx.finishAudit('ok');
  return result;
}
