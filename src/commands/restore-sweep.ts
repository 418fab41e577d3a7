// `murmur-gc restore --sweep AUDIT`: put back everything one sweep held (docs/quarantine.md).
// Guarantees:
// - What the sweep held is read from its own audit trace (its retention lines, with what its
//   details file says the undo window held; for a sweep that did not record that, what the
//   window holds now under its run). Each item is put back by `restore TARGET` itself
//   (src/commands/quarantine.ts restoreTarget, with the sessions root or record store it came
//   from): the same sweep lock, registry check (docs/design.md §4a), refusals, exactly-once audit
//   and protection; `--dry-run` runs the same checks and changes nothing.
// - Only what that sweep held is put back: an item is restored only while the hold that sweep
//   made is there (its run, in the registry for a session, in the item's sidecar for a context or
//   dropped lines); one whose restore would also put back what another sweep holds (a later hold
//   of the same session, a record truncated again under the window) is left, and said.
// - What cannot be put back is said once per cause, with how many and the first few targets:
//   purged since (its window passed, or for space), put back already, held by another sweep too,
//   a refusal of `restore TARGET` (exists now, conflict, …). Exit as restore's: 0 when everything
//   it held came back (or would), 1 otherwise, 75 when a sweep holds the lock (what is left is
//   not attempted).
// - Ids, paths and counts only, never record content.
import { basename, resolve } from 'node:path';
import type { GcConfig } from '../config/types.js';
import { BusyError, Codes, ExitCodes, GcError, RefusalError, describeError } from '../errors.js';
import type { Logger } from '../log.js';
import { listHeld } from '../gchome/held-listing.js';
import { idTimestampMs } from '../runtime/ids.js';
import { readAuditHistory, readSweepWhere } from './audit-read.js';
import type { SweepHistory } from './history.js';
import { RestoreCodes, restoreTarget } from './quarantine.js';
import type { NotRestored, SweepRestoreItem, SweepRestoreResult } from '../schema/json-schemas.js';

/** What `restore --sweep` tells: its schema's (src/schema/json-schemas.ts). */
export type { NotRestored, SweepRestoreItem, SweepRestoreResult };

export type HeldUnit = { kind: 'session' | 'context' | 'truncation'; target: string; origin: string | undefined };

/** restore's exit status for it: 0 everything came back (or would), 75 a sweep took the lock, 1 something else could not. */
export function sweepRestoreExit(r: SweepRestoreResult): number {
  if (r.not_restored.length === 0) return ExitCodes.ok;
  return r.not_restored.some((c) => c.code === Codes.storageBusy) ? ExitCodes.busy : ExitCodes.failed;
}

export const SweepRestoreCodes = {
  /** no sweep of that audit id in the audit trail */
  unknown: 'restore_sweep_unknown',
  purgedExpired: 'purged_expired',
  purgedKeepFree: 'purged_keep_free',
  restoredAlready: 'restored_already',
  heldByAnother: 'held_by_another_sweep',
  noLongerHeld: 'no_longer_held',
} as const;

function startKey(s: SweepHistory): number {
  return s.started_ms ?? idTimestampMs(s.session_id, 'ses_') ?? 0;
}

/** The sweep `given` names: its audit id, or a unique prefix of one. */
function findSweep(sweeps: SweepHistory[], given: string, home: string): SweepHistory {
  const exact = sweeps.find((s) => s.session_id === given);
  if (exact) return exact;
  const hits = given.length >= 8 ? sweeps.filter((s) => s.session_id.startsWith(given)) : [];
  if (hits.length === 1) return hits[0]!;
  if (hits.length > 1) {
    throw new GcError(
      Codes.targetAmbiguous,
      `--sweep ${given} is a prefix of ${hits.length} audit ids: ${hits
        .slice(0, 5)
        .map((s) => s.session_id)
        .join(', ')}${hits.length > 5 ? ', …' : ''}`,
      { exitCode: ExitCodes.usage, hint: 'give more of the id' },
    );
  }
  throw new RefusalError(
    SweepRestoreCodes.unknown,
    `no sweep ${given} in the audit trail (${home}/gc)`,
    'murmur-gc history lists the sweeps by their audit id (audit traces go by audit.retain)',
  );
}

/** What `s` held, by its own trace (and details); `heldNow` fills in for a sweep that did not record it. */
export function heldBy(s: SweepHistory, where: Record<string, string>, heldNow: (u: HeldUnit) => boolean): HeldUnit[] {
  const out = new Map<string, HeldUnit>();
  for (const r of s.retention) {
    if (r.store !== 'sessions' && r.store !== 'records') continue;
    for (const target of r.targets) {
      // a child workdir or work log comes back with its session; an orphan is never held
      if (r.store === 'sessions' && !target.startsWith('ses_')) continue;
      const kind = r.store === 'sessions' ? 'session' : r.reason === 'max_messages' ? 'truncation' : 'context';
      const at = where[target];
      const unit: HeldUnit = {
        kind,
        target,
        origin: at === undefined ? undefined : r.store === 'sessions' ? at : basename(at),
      };
      const held = r.held_until_by_target ? target in r.held_until_by_target : heldNow(unit);
      if (held) out.set(`${kind}\0${target}`, unit);
    }
  }
  return [...out.values()];
}

/** Why `u`, held by `s`, is not held now: the first later line of the trail about it. */
function goneCause(u: HeldUnit, s: SweepHistory, ordered: SweepHistory[]): { code: string; detail: string } {
  const store = u.kind === 'session' ? 'sessions' : 'records';
  for (const later of ordered.slice(ordered.indexOf(s))) {
    const p = later.quarantine.purged.find((x) => x.store === store && x.targets.includes(u.target));
    if (p)
      return p.reason === 'expired'
        ? { code: SweepRestoreCodes.purgedExpired, detail: 'purged since: their window passed' }
        : {
            code: SweepRestoreCodes.purgedKeepFree,
            detail: `purged since for space (${p.reason}) before their window passed`,
          };
    if (later === s) continue;
    if (later.quarantine.restored.some((x) => x.store === store && x.target === u.target))
      return { code: SweepRestoreCodes.restoredAlready, detail: 'put back already (murmur-gc restore)' };
  }
  return {
    code: SweepRestoreCodes.noLongerHeld,
    detail: 'not held now in a configured sessions root or the quarantine, and the audit trail does not say why',
  };
}

export async function restoreSweep(
  config: GcConfig,
  log: Logger,
  opts: { sweep: string; dryRun: boolean },
  now: () => number = Date.now,
): Promise<SweepRestoreResult> {
  const read = await readAuditHistory(config.home);
  const ordered = [...read.sweeps].sort((a, b) => startKey(a) - startKey(b) || (a.session_id < b.session_id ? -1 : 1));
  const s = findSweep(ordered, opts.sweep, config.home);
  const sweep = s.session_id;
  const where = await readSweepWhere(config.home, sweep);
  const held = await listHeld(config, false);
  const sameKind = (u: HeldUnit, kind: string) => (u.kind === 'session' ? kind === 'session' : kind !== 'session');
  const mine = (u: HeldUnit) =>
    held.items.filter(
      (i) =>
        i.run === sweep &&
        i.target === u.target &&
        sameKind(u, i.kind) &&
        (u.origin === undefined ||
          (u.kind === 'session' ? resolve(i.origin) === resolve(u.origin) : i.origin === u.origin)),
    );
  const units = heldBy(s, where, (u) => mine(u).length > 0);
  if (units.length === 0) {
    throw new RefusalError(
      RestoreCodes.notHeld,
      `sweep ${sweep} held nothing: what it took it removed at once (or it took nothing)`,
      `murmur-gc history --json shows what sweep ${sweep} did`,
    );
  }
  const result: SweepRestoreResult = {
    sweep,
    dry_run: opts.dryRun,
    held: units.length,
    restored: [],
    not_restored: [],
  };
  const causes = new Map<string, NotRestored>();
  const cannot = (u: HeldUnit, code: string, detail: string) => {
    const c = causes.get(code) ?? { code, detail, items: [] };
    c.items.push({ target: u.target, held_kind: u.kind, origin: u.origin ?? null });
    causes.set(code, c);
  };
  // A context truncated and held in the same sweep is one restore (restore TARGET puts back both).
  const done = new Set<string>();
  let busy = false;
  for (const u of units) {
    if (busy) {
      cannot(
        u,
        Codes.storageBusy,
        'not attempted: a sweep took the sweep lock (run it again once the sweep has finished)',
      );
      continue;
    }
    const ours = mine(u);
    if (ours.length === 0) {
      const g = goneCause(u, s, ordered);
      cannot(u, g.code, g.detail);
      continue;
    }
    const origin = ours[0]!.origin;
    const key = `${u.kind === 'session' ? 'session' : 'record'}\0${origin}\0${u.target}`;
    if (done.has(key)) continue;
    done.add(key);
    // restore TARGET puts back the newest hold of a session, and every held item of a context in
    // its chain: restored here only when all of that is this sweep's
    const others = held.items.filter(
      (i) =>
        i.target === u.target &&
        sameKind(u, i.kind) &&
        (u.kind === 'session' ? resolve(i.origin) === resolve(origin) : i.origin === origin) &&
        i.run !== sweep,
    );
    const blocking =
      u.kind === 'session' ? others.filter((o) => o.untilMs > Math.max(...ours.map((x) => x.untilMs))) : others;
    if (blocking.length > 0) {
      cannot(
        u,
        SweepRestoreCodes.heldByAnother,
        `also held by another sweep (${blocking[0]!.run ?? 'unknown'}): murmur-gc restore TARGET would put back both`,
      );
      continue;
    }
    try {
      const r = await restoreTarget(
        config,
        log,
        { target: u.target, dryRun: opts.dryRun, ...(u.kind === 'session' ? { root: origin } : { record: origin }) },
        now,
      );
      result.restored.push({
        ...r,
        held_kind:
          u.kind === 'session'
            ? 'session'
            : r.restored.some((x) => x.held_kind === 'context')
              ? 'context'
              : 'truncation',
        origin,
      });
    } catch (err) {
      if (err instanceof BusyError) {
        busy = true;
        cannot(
          u,
          Codes.storageBusy,
          'not attempted: a sweep took the sweep lock (run it again once the sweep has finished)',
        );
      } else if (err instanceof GcError) {
        cannot(u, err.code, refusalWords(err, u));
      } else {
        cannot(u, Codes.ioError, describeError(err));
      }
    }
  }
  result.not_restored = [...causes.values()];
  return result;
}

/** A refusal of restore TARGET as a cause (the first item's own words come with it). */
function refusalWords(err: GcError, u: HeldUnit): string {
  if (err.code === RestoreCodes.exists)
    return `a ${u.kind === 'session' ? 'session' : 'context'} of that name exists now (${err.message})`;
  if (err.code === RestoreCodes.conflict)
    return `the record was truncated again since, or is gone: putting the lines back would leave a gap (${err.message})`;
  return err.message;
}
