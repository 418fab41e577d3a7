// What `murmur-gc explain` prints on a terminal (docs/explain.md): the item and where, its fate
// now, one line per fact that bears on it, when it changes and what would move that.
// Guarantees: pure; every line fits the layout's width (paths shown with `~` and elided in the
// middle, prose wrapped with a hanging indent; an id is never cut); instants are printed in local
// time to the millisecond with their UTC offset (`--json` has every one as `*_ms`); nothing is
// said that the document does not hold — ids, paths, counts, sizes and times only.
import { elidePath, tilde, wrap, type Layout } from '../layout.js';
import { formatBytes, formatWindow, plural, relativeTime } from '../sweep/report.js';
import type { BudgetFacts, Due, ExplainDoc, Move } from '../commands/explain.js';

const two = (n: number): string => String(n).padStart(2, '0');

/** `2026-12-03 07:53:12.346 +01:00`: an instant in local time, to the millisecond, with its offset from UTC. */
export function localTime(ms: number): string {
  const d = new Date(ms);
  if (!Number.isFinite(d.getTime())) return `${ms} ms`;
  const off = -d.getTimezoneOffset();
  const sign = off < 0 ? '-' : '+';
  const a = Math.abs(off);
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}.${String(d.getMilliseconds()).padStart(3, '0')} ${sign}${two(Math.floor(a / 60))}:${two(a % 60)}`;
}

function ordinal(n: number): string {
  const t = n % 100;
  const s = t >= 11 && t <= 13 ? 'th' : n % 10 === 1 ? 'st' : n % 10 === 2 ? 'nd' : n % 10 === 3 ? 'rd' : 'th';
  return `${n}${s}`;
}

/** `59 days 23 h`, `5 h 12 min`, `42 s`: how long, coarsely (the instants beside it are exact). */
function span(ms: number): string {
  const a = Math.abs(ms);
  if (a < 60_000) return `${Math.floor(a / 1000)} s`;
  if (a < 3_600_000) return `${Math.floor(a / 60_000)} min`;
  if (a < 86_400_000) return `${Math.floor(a / 3_600_000)} h ${Math.floor((a % 3_600_000) / 60_000)} min`;
  return `${plural(Math.floor(a / 86_400_000), 'day')} ${Math.floor((a % 86_400_000) / 3_600_000)} h`;
}

const KIND_WORDS: Record<ExplainDoc['item']['kind'], string> = {
  session: 'session',
  context: 'context',
  held_session: 'held session',
  held_context: 'held context',
  held_truncation: 'held truncation of',
  child_workdir: 'child workdir',
  work_log: 'work log',
};

function head(d: ExplainDoc, L: Layout): string[] {
  const i = d.item;
  const where =
    i.store === 'sessions'
      ? `${i.kind === 'child_workdir' || i.kind === 'work_log' ? 'beside' : 'in'} sessions root `
      : 'in record store ';
  const origin =
    i.origin === null
      ? ''
      : ` (${i.origin}${i.manifest !== null ? `, its retain from ${tilde(i.manifest, L.homeDir)}` : ''})`;
  const first = `${KIND_WORDS[i.kind]} ${i.name}`;
  const place =
    i.store === 'sessions' ? elidePath(tilde(i.place, L.homeDir), Math.max(24, L.width - where.length - 4)) : i.place;
  const lines = wrap(`${first} ${where}${place}${origin}`, L.width, '', '    ');
  if (i.kind.startsWith('held_') || i.kind === 'child_workdir' || i.kind === 'work_log')
    lines.push(`  ${elidePath(tilde(i.path, L.homeDir), L.width - 2)}`);
  return lines;
}

function ruleWords(rule: string | null): string {
  return rule === null ? '' : ` (${rule})`;
}

function nowWords(d: ExplainDoc): string {
  const f = d.fate;
  const by = f.condemned_by !== null ? `, although ${f.condemned_by} condemns it` : '';
  const [fate, why] = f.word.split(':') as [string, string | undefined];
  switch (fate) {
    case 'kept':
      switch (why) {
        case 'policy': {
          const b = d.beside;
          if (b !== null) {
            if (b.named_by.length > 0 || b.named_by_held)
              return 'kept: it goes only with the sessions whose traces name it';
            return d.item.kind === 'child_workdir' && b.children_max_age_secs !== null
              ? 'kept: no rule takes it now'
              : 'kept: no policy takes it (only a session whose trace names it takes it along)';
          }
          return d.policy === null || (d.policy.retain === null && d.budgets.length === 0)
            ? 'kept: no policy covers it'
            : 'kept: no rule takes it now';
        }
        case 'live':
          return `kept: live${by}`;
        case 'protected':
          return `kept: protected${by}`;
        case 'blast_radius':
          return `kept: the blast-radius guard stops this ${d.item.store === 'sessions' ? 'root' : 'store'}${by}`;
        case 'foreign_owner':
          return `kept: another user's${by}`;
        case 'not_owned':
          return `kept: ${d.policy?.capsule === null ? 'it has no header' : `its header names capsule ${d.policy?.capsule ?? '?'}`}, which no policy of this store names`;
        case 'not_writable':
          return `kept: this process may not write its sessions root${by}`;
        case 'failed':
          return `kept: its act did not happen in the dry run${by}`;
        default:
          return `kept: ${why ?? ''}${f.detail !== null ? ` — ${f.detail}` : ''}`;
      }
    case 'held':
      return why === undefined
        ? `held in the undo window until ${localTime(f.until_ms ?? 0)}${ruleWords(d.hold?.rule ?? null)}`
        : `condemned by ${why}: the next sweep holds it`;
    case 'removed':
      return `condemned by ${why ?? '?'}: the next sweep removes it for good${f.condemned_by !== null ? ` (in place of holding it for ${f.condemned_by})` : ''}`;
    case 'truncated':
      return 'condemned by max_messages: the next sweep truncates it';
    case 'purged':
      return `the next sweep deletes it for good: ${why === 'keep_free' ? 'keep_free needs the space' : 'its window has ended'}`;
    case 'failed':
      return `its act did not happen in the dry run${f.detail !== null ? ` — ${f.detail}` : ''}`;
    default:
      return 'the dry run stopped before it got to it';
  }
}

function budgetLine(b: BudgetFacts, d: ExplainDoc): string {
  const what = d.item.store === 'sessions' ? 'root' : 'store';
  if (b.rule === 'max_bytes') {
    const older =
      b.older_removable.items > 0
        ? `; ${plural(b.older_removable.items, 'older removable item')} (${formatBytes(b.older_removable.bytes)}) ${b.older_removable.items === 1 ? 'goes' : 'go'} first`
        : '';
    const mine = b.item_bytes !== null ? `, it ${formatBytes(b.item_bytes)}` : '';
    const grows =
      b.grows_by !== null && !d.fate.word.includes('max_bytes')
        ? `; it goes once the ${what} holds ${formatBytes(b.grows_by)} more`
        : b.grows_by === null
          ? '; it may not take it'
          : '';
    return `max_bytes ${formatBytes(b.limit_bytes)}: the ${what} holds ${formatBytes(b.in_place_bytes)} in place${mine}${older}${grows}${b.unmet ? ' (unmet)' : ''}`;
  }
  const short =
    b.short_bytes > 0
      ? `, short by ${formatBytes(b.short_bytes)}${b.short_bytes_after > 0 ? ` (${formatBytes(b.short_bytes_after)} after this sweep)` : ''}`
      : ', not short';
  return `keep_free ${formatBytes(b.required_bytes)}: ${formatBytes(b.free_bytes)} free when measured${short}${b.unmet ? ' (unmet)' : ''}`;
}

function factLines(d: ExplainDoc, L: Layout): string[] {
  const out: string[] = [];
  const p = d.policy;
  if (p !== null) {
    if (p.retain === null && d.item.kind === 'context' && !p.owned) {
      // said by the fate line
    } else if (p.retain === null && d.budgets.length === 0)
      out.push(`no retain policy for this ${d.item.store === 'sessions' ? 'sessions root' : 'record store'}`);
    const a = p.age;
    if (a !== null) {
      const born = a.by === 'id' ? 'minted' : 'last written';
      const over = a.over && a.condemns_from_ms !== null ? `; past it since ${localTime(a.condemns_from_ms)}` : '';
      out.push(
        `max_age ${formatWindow(a.max_age_secs)}: ${born} ${localTime(a.born_ms)}, ${span(a.age_ms)} ${a.age_ms < 0 ? 'in the future' : 'old'}${over}`,
      );
    }
    if (p.clock_behind_ms !== null)
      out.push(
        `max_age is not applied: the clock is ${span(p.clock_behind_ms)} behind the last sweep (docs/config.md)`,
      );
    const r = p.rank;
    if (r !== null)
      out.push(
        `max_sessions ${r.max_sessions}: ${r.rank === 1 ? 'the newest' : `${ordinal(r.rank)} newest`} of ${r.of}${r.over ? ` (past the newest ${r.max_sessions})` : ''}`,
      );
    const m = p.messages;
    if (m !== null)
      out.push(
        `max_messages ${m.max_messages}: ${m.messages === null ? 'messages not counted' : plural(m.messages, 'message')}${m.over ? ` (${m.messages! - m.max_messages} over)` : ''}`,
      );
  }
  const l = d.liveness;
  if (l !== null) {
    if (l.sessions.length > 0) {
      const s = l.sessions;
      const first = s[0]!;
      out.push(
        `live: named by live session ${first.session} (${first.why}${first.pid !== null ? `, pid ${first.pid}` : ''})${s.length > 1 ? ` and ${plural(s.length - 1, 'other')}` : ''}`,
      );
    } else out.push(`${l.state}: ${l.why}${l.pid !== null ? ` (pid ${l.pid})` : ''}`);
  }
  const pr = d.protection;
  if (pr !== null) {
    out.push(
      pr.unreadable
        ? 'protected: the protection list cannot be read, so every item counts as protected (murmur-gc protection ls)'
        : `protected since ${localTime(pr.since_ms ?? 0)} by ${pr.by ?? 'protect'}${pr.note !== null ? `: ${JSON.stringify(pr.note)}` : ''}`,
    );
  }
  for (const h of d.held_too)
    out.push(
      `${h.kind === 'held_truncation' ? 'its dropped lines are' : 'a copy of that name is'} also held, until ${localTime(h.until_ms)}: murmur-gc explain ${tilde(h.path, L.homeDir)}`,
    );
  const g = d.guard;
  if (g !== null) out.push(`guard: this sweep would take ${g.would_take} of ${g.present} here; ${g.limit}`);
  for (const b of d.budgets) out.push(budgetLine(b, d));
  const b = d.beside;
  if (b !== null) {
    if (b.named_by.length > 0)
      out.push(
        `named by the trace of ${b.named_by.length === 1 ? `session ${b.named_by[0]}` : `${plural(b.named_by.length, 'session')}: ${b.named_by.join(', ')}`}`,
      );
    else if (b.named_by_held) out.push('named by the trace of a held session: it goes into that hold once finished');
    else {
      const last = b.last_write_ms !== null ? `; last written ${localTime(b.last_write_ms)}` : '';
      out.push(
        `no session's trace names it${d.item.kind === 'child_workdir' ? ` (an orphan): ${b.children_max_age_secs === null ? 'no children.max_age policy' : `children.max_age ${formatWindow(b.children_max_age_secs)}`}${last}` : ''}`,
      );
    }
  }
  for (const x of d.parents) out.push(`with session ${x.session}: ${x.fate}, ${dueWords(x.due, d, true)}`);
  return out;
}

function thenWords(due: Due, d: ExplainDoc): string {
  switch (due.then) {
    case 'hold':
      return 'holds it';
    case 'remove':
      return 'removes it for good';
    case 'truncate':
      return 'truncates it';
    case 'purge':
      return 'deletes it for good';
    default:
      return d.item.kind === 'child_workdir' || d.item.kind === 'work_log' ? 'takes it with its session' : 'takes it';
  }
}

function dueWords(due: Due, d: ExplainDoc, short = false): string {
  const at = due.at_ms === null ? '' : `${localTime(due.at_ms)} (${relativeTime(due.at_ms, d.now_ms)})`;
  const rule = due.rule !== null && due.then !== 'purge' ? ` (${due.rule})` : '';
  switch (due.event) {
    case 'next_sweep': {
      if (short) return 'taken by the next sweep';
      const until =
        due.then === 'hold' && d.fate.until_ms !== null
          ? ` (until ${localTime(d.fate.until_ms)} if it ran now)`
          : due.then === 'truncate' && d.fate.until_ms !== null
            ? ' (its dropped lines held)'
            : '';
      return `now: the next sweep ${thenWords(due, d)}${until}`;
    }
    case 'condemned':
      return short
        ? `due ${at}`
        : `${at}: ${due.rule ?? 'max_age'} condemns it; the first sweep from then ${thenWords(due, d)}`;
    case 'live_ends':
      return short
        ? `due ${at}`
        : `${at}: it stops counting as live (no further write); the first sweep from then ${thenWords(due, d)}${rule}`;
    case 'window_ends':
      return short ? `due ${at}` : `${at}: its window ends; the first sweep from then deletes it for good`;
    case 'never':
      return short ? 'no rule takes it' : 'never, under this configuration and with nothing else changing';
    default: {
      const pid = d.moves.find((m) => m.cause === 'process_end');
      if (pid) {
        const from = d.policy?.age?.condemns_from_ms;
        return `when its process${pid.count !== null ? ` (pid ${pid.count})` : ''} ends${from !== null && from !== undefined && from > d.now_ms ? `, and not before ${localTime(from)}` : ''}; the first sweep after ${thenWords(due, d)}${rule}`;
      }
      if (d.fate.word === 'kept:blast_radius') return 'when the guard lets this store go (see below)';
      return short ? 'no instant known' : 'no instant is known';
    }
  }
}

function moveWords(m: Move, d: ExplainDoc): string {
  const what = d.item.store === 'sessions' ? 'root' : 'store';
  switch (m.cause) {
    case 'new_sessions':
      return `${plural(m.count ?? 0, 'more session')} in this root ${m.count === 1 ? 'condemns' : 'condemn'} it (max_sessions ${d.policy?.rank?.max_sessions ?? '?'})`;
    case 'new_messages':
      return `${plural(m.count ?? 0, 'more message')} ${m.count === 1 ? 'truncates' : 'truncate'} it (max_messages ${d.policy?.messages?.max_messages ?? '?'})`;
    case 'record_write':
      return 'a write to the record starts its age again (max_age counts from its mtime)';
    case 'trace_write':
      return 'each write to its trace keeps it live longer';
    case 'process_end':
      return `its process${m.count !== null ? ` (pid ${m.count})` : ''} ending`;
    case 'growth':
      return `the ${what} holding ${formatBytes(m.count ?? 0)} more in place (max_bytes takes the oldest first)`;
    case 'keep_free':
      return d.hold !== null
        ? 'keep_free purges holds first, before their window ends, when the filesystem is short'
        : 'the filesystem running short of keep_free (it takes the oldest removable items first)';
    case 'release': {
      const from = d.policy?.age?.condemns_from_ms;
      const then =
        from !== null && from !== undefined && from > d.now_ms ? ` (max_age condemns it from ${localTime(from)})` : '';
      return `murmur-gc release ${d.item.name}: sweeps act on it by the policy again${then}`;
    }
    case 'guard':
      return `the guard: fewer removals from this ${what} at once, --confirm-large, or a higher max_delete`;
    case 'restore':
      return `murmur-gc restore ${d.item.name} puts it back (and protects it)`;
    case 'parent':
      return 'the fate of the sessions whose traces name it';
  }
}

export function renderExplain(d: ExplainDoc, L: Layout): string {
  const out: string[] = [];
  const line = (text: string, first: string, rest: string) => out.push(...wrap(text, L.width, first, rest));
  out.push(...head(d, L));
  line(nowWords(d), '  ', '      ');
  for (const f of factLines(d, L)) line(f, '  ', '      ');
  line(dueWords(d.due, d), 'due ', '      ');
  for (const m of d.moves) line(moveWords(m, d), 'moved by: ', '      ');
  return out.join('\n') + '\n';
}
