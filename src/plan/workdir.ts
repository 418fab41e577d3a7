// What goes with a removed session beside its sessions root `W/.murmur/`, pure
// (docs/design.md §9a, runtime rules §R11).
// Guarantees:
// - Only what the removed session's own trace names: a child workdir from a
//   `delegation_start.child_workdir` that is exactly `.murmur/children/<one segment>` (relative to
//   W, or that path under W spelled absolute), and a `logs/wrk_<id>.log` whose id the trace names.
//   Anything else a trace names (`../x`, another directory, an absolute path elsewhere) is refused
//   with `child_workdir_outside` and nothing is chosen for it.
// - A child goes only when it is finished (a terminal `delegation`/`delegation_late` in the
//   parent's trace, or a final status in its `completion.json`), is a real directory of ours, and
//   nothing inside it — its sessions, its grandchildren's — is live (liveness as for sessions:
//   docs/design.md §2) or unjudgeable. A child or log also named by a session that stays is kept,
//   and so is every one while a session of the root that stays has no readable trace (it may
//   name any of them: `uncertain`), as for orphans.
// - A log goes only when it is a regular file of ours. Capsule files are never candidates: only
//   `children/<name>` and `logs/wrk_<32 hex>.log` entries can be chosen at all.
import { Codes } from '../errors.js';
import type { Delegation } from '../runtime/trace.js';
import type { ChildEntry, LogEntry } from '../runtime/workdir-scan.js';
import { judgeLiveness, type RunningProbe } from './liveness.js';

export interface BesideParent {
  /** the removed (or held) session's id */
  session: string;
  delegations: readonly Delegation[];
  workIds: readonly string[];
}

export interface BesideFacts {
  /** W, the sessions root's parent */
  workdir: string;
  children: readonly ChildEntry[];
  logs: readonly LogEntry[];
  /** child names and work ids named by sessions of this root that stay */
  claimedChildren: Pick<ReadonlySet<string>, 'has'>;
  claimedWorkIds: Pick<ReadonlySet<string>, 'has'>;
  /**
   * A session of this root that stays and has no readable trace (what it names is unknown), or
   * undefined when every staying session's trace was read: while one is set nothing goes.
   */
  uncertain?: string;
  /** `children` by name and `logs` by work id, when the caller has them (else made from the lists) */
  index?: { children: ReadonlyMap<string, ChildEntry>; logs: ReadonlyMap<string, LogEntry> };
}

/** BesideFacts' index of `children` and `logs`. */
export function besideIndex(
  children: readonly ChildEntry[],
  logs: readonly LogEntry[],
): { children: ReadonlyMap<string, ChildEntry>; logs: ReadonlyMap<string, LogEntry> } {
  return { children: new Map(children.map((c) => [c.name, c])), logs: new Map(logs.map((l) => [l.workId, l])) };
}

export interface BesideJudge {
  uid: number;
  nowMs: number;
  liveGraceMs: number;
  running: (session: string) => RunningProbe;
}

export interface BesideItem {
  kind: 'child_workdir' | 'work_log';
  /** the entry's name in `W/.murmur/children` or `W/logs` */
  name: string;
  /** the parent session whose trace names it */
  session: string;
}

export interface BesidePlan {
  remove: BesideItem[];
  skip: { target: string; code: string; detail: string; session: string }[];
}

/**
 * The child's entry name when `childWorkdir` names a direct entry of `W/.murmur/children/`, else
 * undefined. `workdir` is W as configured (no trailing slash needed).
 */
export function childEntryName(childWorkdir: string, workdir: string): string | undefined {
  let rel = childWorkdir;
  if (rel.startsWith('/')) {
    const w = workdir.replace(/\/+$/, '');
    if (!rel.startsWith(`${w}/`)) return undefined;
    rel = rel.slice(w.length + 1);
  }
  const parts = rel.split('/');
  if (parts.length === 4 && parts[3] === '') parts.pop(); // one trailing slash
  if (parts.length !== 3 || parts[0] !== '.murmur' || parts[1] !== 'children') return undefined;
  const name = parts[2]!;
  if (name === '' || name === '.' || name === '..' || name.startsWith('.') || name.includes('\0')) return undefined;
  return name;
}

/** Whether anything inside a child workdir is live (or cannot be judged): why, or undefined when nothing is. */
export function childLiveWhy(c: ChildEntry, j: BesideJudge): string | undefined {
  if (c.unjudged !== undefined) return `nothing inside can be judged (${c.unjudged})`;
  for (const s of c.sessions) {
    const v = judgeLiveness(
      { running: j.running(s.name), lastWriteMs: s.lastWriteMs, hasSessionEnd: s.hasSessionEnd },
      j.nowMs,
      j.liveGraceMs,
    );
    if (v.state === 'live') return `its session ${s.name} is live (${v.why})`;
  }
  return undefined;
}

export function planBeside(parents: readonly BesideParent[], f: BesideFacts, j: BesideJudge): BesidePlan {
  const out: BesidePlan = { remove: [], skip: [] };
  const { children, logs } = f.index ?? besideIndex(f.children, f.logs);
  const chosen = new Set<string>();
  const childPath = (n: string) => `${f.workdir}/.murmur/children/${n}`;
  for (const p of parents) {
    for (const d of p.delegations) {
      const name = childEntryName(d.childWorkdir, f.workdir);
      if (name === undefined) {
        out.skip.push({
          session: p.session,
          target: `${f.workdir}/.murmur/${p.session}`,
          code: Codes.childWorkdirOutside,
          detail: `${p.session}'s trace names a child workdir outside ${f.workdir}/.murmur/children (delegation ${d.delegationId}); nothing there is touched`,
        });
        continue;
      }
      const c = children.get(name);
      if (!c || chosen.has(`c/${name}`)) continue;
      const target = childPath(name);
      const keep = (code: string, detail: string) =>
        out.skip.push({ session: p.session, target, code, detail: `${target} (child of ${p.session}): ${detail}` });
      if (c.kind === 'symlink') keep(Codes.symlink, 'a symbolic link; never followed, kept');
      else if (c.kind !== 'dir') keep(Codes.notRegular, 'not a directory; kept');
      else if (c.uid !== j.uid) keep(Codes.foreignOwner, `belongs to uid ${c.uid}; kept`);
      else if (f.claimedChildren.has(name)) keep(Codes.childKept, 'a session that stays names it too; kept');
      else if (f.uncertain !== undefined)
        keep(Codes.childKept, `${f.uncertain}, which stays, has no readable trace: it may name this child too; kept`);
      else if (!d.ended && c.completion === undefined)
        keep(Codes.childKept, 'not finished (no terminal delegation line, no final completion.json); kept');
      else {
        const live = childLiveWhy(c, j);
        if (live !== undefined) keep(Codes.childKept, `${live}; kept`);
        else {
          chosen.add(`c/${name}`);
          out.remove.push({ kind: 'child_workdir', name, session: p.session });
        }
      }
    }
    for (const id of p.workIds) {
      const l = logs.get(id);
      if (!l || chosen.has(`l/${id}`)) continue;
      const target = `${f.workdir}/logs/${l.name}`;
      const keep = (code: string, detail: string) =>
        out.skip.push({ session: p.session, target, code, detail: `${target} (log of ${p.session}): ${detail}` });
      if (l.kind === 'symlink') keep(Codes.symlink, 'a symbolic link; never followed, kept');
      else if (l.kind !== 'file') keep(Codes.notRegular, 'not a regular file; kept');
      else if (l.uid !== j.uid) keep(Codes.foreignOwner, `belongs to uid ${l.uid}; kept`);
      else if (f.claimedWorkIds.has(id)) keep(Codes.childKept, 'a session that stays names it too; kept');
      else if (f.uncertain !== undefined)
        keep(Codes.childKept, `${f.uncertain}, which stays, has no readable trace: it may name this log too; kept`);
      else {
        chosen.add(`l/${id}`);
        out.remove.push({ kind: 'work_log', name: l.name, session: p.session });
      }
    }
  }
  return out;
}

export interface OrphanVerdict {
  name: string;
  /** the most recent write murmur-gc can see in it: the child directory's mtime, every session's trace inside */
  lastWriteMs: number;
  /** removable under the root's `children.max_age` now */
  remove: boolean;
  /** why it stays (when it does) */
  why?: string;
}

/**
 * The child workdirs of one root that no session's trace there names (orphans): each with its
 * age, and — only under a `children.max_age` policy (`maxAgeMs`) — whether it goes: older than the
 * policy by its most recent visible write, a real directory of ours, every session inside finished
 * (`session_end`, not live; none dead), nothing unjudgeable. `uncertain`: some session of the root
 * has no readable trace (it might name any child), so none goes.
 */
export function planOrphans(
  children: readonly ChildEntry[],
  tied: ReadonlySet<string>,
  maxAgeMs: number | undefined,
  uncertain: boolean,
  j: BesideJudge,
): OrphanVerdict[] {
  const out: OrphanVerdict[] = [];
  for (const c of children) {
    if (tied.has(c.name)) continue;
    const lastWriteMs = c.sessions.reduce((m, s) => Math.max(m, s.lastWriteMs), c.mtimeMs);
    const stay = (why: string): void => void out.push({ name: c.name, lastWriteMs, remove: false, why });
    if (maxAgeMs === undefined) stay('no children.max_age policy for this root');
    else if (c.kind !== 'dir') stay(c.kind === 'symlink' ? 'a symbolic link' : 'not a directory');
    else if (c.uid !== j.uid) stay(`belongs to uid ${c.uid}`);
    else if (uncertain) stay('a session of this root has no readable trace: it may name this child');
    else if (j.nowMs - lastWriteMs <= maxAgeMs) stay('younger than children.max_age');
    else {
      const live = childLiveWhy(c, j);
      const unfinished = c.sessions.find((s) => s.hasSessionEnd !== true);
      if (live !== undefined) stay(live);
      else if (unfinished) stay(`its session ${unfinished.name} never finished (no session_end)`);
      else out.push({ name: c.name, lastWriteMs, remove: true });
    }
  }
  return out;
}
