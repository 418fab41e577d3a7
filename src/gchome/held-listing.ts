// What the undo window holds now, read-only: the sessions held in the configured sessions roots
// and the items of `<home>/gc/quarantine` (layout: src/gchome/quarantine-layout.ts), for
// `quarantine ls`, `restore`, `status` and the metrics.
// Guarantees: reads only, through descriptors, never following links or crossing mounts; a session
// hold is listed only when murmur-gc's registry vouches for it (src/gchome/registry.ts), any other
// entry named like one is a problem (`unverified_gc_entry`), never an item; bytes
// are allocated bytes (as `du` counts them). An item whose restore happened but was not completed
// (killed, or its removal failed) is not listed, nor a truncation whose rewrite never committed;
// a staged truncation that did land (its record carries its marker) is listed as restorable. An
// item whose sidecar cannot be read, or whose payload is not what its sidecar names, is a
// problem, not an item (the sweep purges it by its window).
import { resolve } from 'node:path';
import type { GcConfig } from '../config/types.js';
import { Codes, GcError, describeError } from '../errors.js';
import { openAnchor, openChain } from '../fsx/dirs.js';
import { Dir } from '../fsx/safe-fs.js';
import { CONVERSATIONS_DIR, RECORD_FILE, readHeader } from '../runtime/inventory.js';
import { humanTime } from '../runtime/conversation-format.js';
import { restoredPendingEntries } from './restore-landed.js';
import { oldestFirst, restoreChain, type HeldItem, type ItemMeta } from './quarantine-layout.js';
import {
  listQuarantineDir,
  listRootHeld,
  openQuarantineDir,
  type QueueItem,
  type RootHeld,
} from './quarantine-store.js';
import { definedOnly } from '../defined.js';
import { Registry } from './registry.js';

export interface HeldListing {
  home: string;
  items: (HeldItem & { path: string; incomplete?: boolean })[];
  totals: { items: number; bytes: number };
  problems: { target: string; code: string; detail: string }[];
}

/** Every held item (sessions in the configured roots, contexts and dropped lines in the home). */
export async function listHeld(config: GcConfig, measure = true): Promise<HeldListing> {
  const out: HeldListing = { home: config.home, items: [], totals: { items: 0, bytes: 0 }, problems: [] };
  const roots = [...new Set(config.sessions.map((s) => s.root))];
  const registry = await registryOf(config.home);
  for (const r of roots) {
    await using d = await openAnchor(r, false);
    if (!d) continue;
    try {
      for (const h of await listRootHeld(d, measure)) {
        // only a hold murmur-gc's registry vouches for is one (docs/design.md §4a)
        const placed = registry.vouch(h.entry, h);
        // the registry's record names the run that held it and the rule that took it
        if (placed?.kind === 'hold')
          out.items.push({
            ...strip(h),
            ...definedOnly({ reason: placed.reason, run: placed.run }),
            path: d.display(h.entry),
          });
        else
          out.problems.push({
            target: d.display(h.entry),
            code: Codes.unverifiedGcEntry,
            detail: notOurHold(d.display(h.entry)),
          });
      }
    } catch (err) {
      out.problems.push({ target: r, code: Codes.ioError, detail: `${r}: ${describeError(err)}` });
    }
  }
  const home = await openAnchor(config.home, true);
  if (home) {
    await using _ = home;
    try {
      await using q = await openQuarantineDir(home, false);
      if (q) {
        const l = await listQuarantineDir(q, measure);
        out.problems.push(...l.problems);
        const landed = await landedStaged(home, l.items);
        // Its restore happened; recovery (the next sweep, or restore) removes it.
        const back = await restoredPendingEntries(home);
        for (const i of l.items) {
          if (i.meta?.state === 'staged' && !landed.has(i.entry)) continue; // its truncation never committed (or is committing)
          if (back.has(i.entry)) continue;
          if (i.unreadable !== undefined) {
            // No sidecar: nothing to restore; the sweep purges it by the window in its name.
            if (!i.sidecarTempsOnly)
              out.problems.push({
                target: q.display(i.entry),
                code: Codes.quarantineItemUnreadable,
                detail: `${q.display(i.entry)}: ${i.unreadable}; a sweep deletes it for good after ${humanTime(i.untilMs)}`,
              });
            continue;
          }
          if (i.payloadMismatch !== undefined) {
            out.problems.push({
              target: q.display(i.entry),
              code: Codes.quarantineItemInvalid,
              detail: `${q.display(i.entry)}: ${i.payloadMismatch}; it cannot be restored, and a sweep deletes it for good after ${humanTime(i.untilMs)}`,
            });
            continue;
          }
          out.items.push({ ...strip(i), path: q.display(i.entry), ...(i.incomplete ? { incomplete: true } : {}) });
        }
      }
    } catch (err) {
      out.problems.push({
        target: `${config.home}/gc/quarantine`,
        code: err instanceof GcError ? err.code : Codes.ioError,
        detail: describeError(err),
      });
    }
  }
  out.items = oldestFirst(out.items);
  out.totals = { items: out.items.length, bytes: out.items.reduce((n, i) => n + i.bytes, 0) };
  return out;
}

/** The registry of `home` (src/gchome/registry.ts), read only; empty when there is no home. */
export async function registryOf(homePath: string): Promise<Registry> {
  await using home = await openAnchor(homePath, true).catch(() => undefined);
  return await Registry.load(home);
}

/** What a listing says of an entry named like a hold that the registry does not vouch for. */
export function notOurHold(path: string): string {
  return `${path} is named like a hold but murmur-gc's registry does not name it: a capsule's look-alike, or a hold of an older murmur-gc. It is never purged or restored; put it back by hand (mv it to <root>/<ses_id>) for the policy to judge again, or delete it by hand (docs/design.md §4a)`;
}

/**
 * Items left `staged` whose truncation did land (a run killed between the rewrite and marking
 * them held): they are in the chain of held truncations ending at the marker the record carries
 * now, so their lines are restorable at once.
 */
export async function landedStaged(home: Dir, items: QueueItem[]): Promise<Set<string>> {
  const out = new Set<string>();
  const truncs = items.filter((i) => !i.incomplete && i.kind === 'truncation' && i.meta !== undefined) as (QueueItem & {
    meta: ItemMeta;
  })[];
  const keys = new Set(
    truncs.filter((i) => i.meta.state === 'staged').map((i) => JSON.stringify([i.meta.store, i.meta.context])),
  );
  for (const k of keys) {
    const [store, context] = JSON.parse(k) as [string, string];
    let dir: Dir | undefined;
    try {
      dir = await openChain(home, [CONVERSATIONS_DIR, store, context]);
      const h = await readHeader(dir, RECORD_FILE);
      const chain = restoreChain(
        truncs.filter((i) => i.meta.store === store && i.meta.context === context),
        h?.truncated?.at_ms.toString(),
      );
      for (const c of chain) if (c.meta.state === 'staged') out.add(c.entry);
    } catch {
      // no record: nothing shows the truncation landed
    } finally {
      await dir?.close();
    }
  }
  return out;
}

function strip(
  i: HeldItem & Partial<Pick<QueueItem, 'identity' | 'meta' | 'incomplete'>> & Partial<Pick<RootHeld, 'uid'>>,
): HeldItem {
  const { kind, target, origin, untilMs, removedMs, bytes, parent, entry } = i;
  return {
    kind,
    target,
    origin,
    untilMs,
    removedMs,
    bytes,
    parent,
    entry,
    ...(i.reason ? { reason: i.reason } : {}),
    ...definedOnly({ messages: i.messages, run: i.meta?.run }),
  };
}

/**
 * Which held items `quarantine ls` shows: those of the sessions roots in `roots` or the record
 * stores in `records` (either, when both are given; every place when neither is), held for
 * `reason`, and whose window ends before `beforeMs`. Empty lists and undefined bounds select all.
 */
export interface HeldFilter {
  roots?: readonly string[];
  records?: readonly string[];
  reason?: string;
  beforeMs?: number;
}

/** The listing with only the items `f` selects, and the totals of those (the problems are kept whole). */
export function filterHeld(l: HeldListing, f: HeldFilter): HeldListing {
  const roots = new Set((f.roots ?? []).map((r) => resolve(r)));
  const records = new Set(f.records ?? []);
  const anyPlace = roots.size === 0 && records.size === 0;
  const items = l.items.filter(
    (i) =>
      (anyPlace || (i.kind === 'session' ? roots.has(resolve(i.origin)) : records.has(i.origin))) &&
      (f.reason === undefined || i.reason === f.reason) &&
      (f.beforeMs === undefined || i.untilMs < f.beforeMs),
  );
  return { ...l, items, totals: { items: items.length, bytes: items.reduce((n, i) => n + i.bytes, 0) } };
}
