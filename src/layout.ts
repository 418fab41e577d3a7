// Fitting human output into a terminal's width (docs/design.md §8): the operator's home
// directory shortened to `~`, long paths elided in the middle (`/srv/agents/…/sessions`), prose
// wrapped at word boundaries with a hanging indent.
// Guarantees: pure; the last component of an elided path (the id an operator acts on) is never
// cut, and a listing of every item (`-v`) shows every path whole; a word longer than the width is never broken, only put on its own line; --json output is
// never passed through here (it carries every path whole).

/** Where human output goes: its width, and the operator's home directory (shown as `~`). */
export interface Layout {
  width: number;
  homeDir?: string | undefined;
}

/** The width when stdout is not a terminal (a pipe, a file, a journal). */
export const DEFAULT_WIDTH = 80;
/** Narrower than this, a terminal is treated as this wide. */
const MIN_WIDTH = 40;

export const PLAIN: Layout = { width: DEFAULT_WIDTH };

/** The terminal's width on a TTY (`columns`), else 80. */
export function layoutFor(out: { isTTY?: boolean; columns?: number }, homeDir: string | undefined): Layout {
  const cols =
    out.isTTY === true && typeof out.columns === 'number' && out.columns > 0
      ? Math.max(MIN_WIDTH, out.columns)
      : DEFAULT_WIDTH;
  return { width: cols, homeDir };
}

/** `p` with the operator's home directory shown as `~` (only at a component boundary). */
export function tilde(p: string, homeDir: string | undefined): string {
  if (homeDir === undefined || homeDir === '' || homeDir === '/') return p;
  const h = homeDir.endsWith('/') ? homeDir.slice(0, -1) : homeDir;
  if (p === h) return '~';
  return p.startsWith(h + '/') ? '~' + p.slice(h.length) : p;
}

/**
 * `p` in at most `max` characters: whole when it fits; else its first components, `…`, and its
 * last components, cut at `/` boundaries (the last component always whole, even when that alone
 * is longer than `max`).
 */
export function elidePath(p: string, max: number): string {
  if (p.length <= max) return p;
  const parts = p.split('/');
  if (parts.length < 3) return p;
  let head = 1; // components [0, head) kept in front: at least the first (`~`, or `` for `/`)
  let tail = parts.length - 1; // components [tail, end) kept behind
  const text = () => [...parts.slice(0, head), '…', ...parts.slice(tail)].join('/');
  // Take components from both ends, alternately, while the result fits.
  for (;;) {
    const grewHead =
      head < tail - 1 &&
      (() => {
        head++;
        if (text().length <= max) return true;
        head--;
        return false;
      })();
    const grewTail =
      tail - 1 > head &&
      (() => {
        tail--;
        if (text().length <= max) return true;
        tail++;
        return false;
      })();
    if (!grewHead && !grewTail) break;
  }
  return text();
}

/**
 * `text` wrapped at spaces into lines of at most `width` characters, the first one starting
 * with `first` and the others with `rest` (a hanging indent).
 */
export function wrap(text: string, width: number, first = '', rest = '    '): string[] {
  const words = text.split(' ').filter((w, i) => w !== '' || i === 0);
  const out: string[] = [];
  let line = first;
  let empty = true;
  for (const w of words) {
    if (empty) {
      line += w;
      empty = false;
    } else if (line.length + 1 + w.length <= width) {
      line += ' ' + w;
    } else {
      out.push(line);
      line = rest + w;
    }
  }
  out.push(line);
  return out;
}

/**
 * `head + path + tail` on one line when it fits `width` (the path elided in the middle down to
 * `minPath` characters if that is enough); else `head + path` and the tail wrapped below it.
 * `whole`: the path is never elided (a listing meant to be read back, `-v`): it may pass the
 * width, on a line of its own with its head.
 */
export function fitLine(
  head: string,
  path: string,
  tail: string,
  layout: Layout,
  minPath = 24,
  whole = false,
): string[] {
  const w = layout.width;
  const p = tilde(path, layout.homeDir);
  const room = w - head.length - tail.length;
  if (p.length <= room) return [head + p + tail];
  if (whole) {
    const t = tail.trim();
    return [head + p, ...(t === '' ? [] : wrap(t, w, '    ', '    '))];
  }
  if (room >= minPath) {
    // Elided on one line only while the item's parent directory still shows beside it.
    const e = elidePath(p, room);
    const kept = e.split('/…/')[1];
    if (e.length <= room && (kept === undefined || kept.includes('/'))) return [head + e + tail];
  }
  const t = tail.trim();
  return [head + elidePath(p, w - head.length), ...(t === '' ? [] : wrap(t, w, '    ', '    '))];
}
