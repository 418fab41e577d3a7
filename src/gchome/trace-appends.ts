// What murmur-gc itself appended to session traces (the `shell_lost` lines of reconciliation,
// src/sweep/reconcile.ts), kept in `<home>/gc/trace-appends.json`, so that liveness judges such a
// trace by the runtime's last write and not by murmur-gc's own (docs/design.md §2).
// Guarantees:
// - An entry speaks for a trace only while that trace is exactly as murmur-gc left it: same
//   device, inode, size and mtime. Any other state (the runtime wrote since, the file was
//   replaced) is judged by its own mtime, so a later write by the runtime is life again.
// - A missing, oversized, foreign-version or corrupt file (or a corrupt entry in it) is empty: the
//   trace's own mtime is used then, which errs toward "live" — a lost file never removes a session.
// - Written only by a real sweep (the sweep's upkeep), atomically (temp 0600, rename), and only
//   when it changed; it keeps the entries this sweep matched or made, so it cannot grow without
//   bound. Holds paths, session ids, sizes and times only.
import { GC_DIR_NAME, TRACE_APPENDS_FILE } from './paths.js';
import { readSmallFile, type Dir, type Identity } from '../fsx/safe-fs.js';

const VERSION = 1;
const LIMIT = 16 << 20;

/** A trace file's state as the scan saw it. */
export interface TraceState {
  identity: Identity;
  size: number;
  mtimeMs: number;
}

interface Entry {
  root: string;
  session: string;
  dev: string;
  ino: string;
  /** size and mtime right after murmur-gc's append */
  size: number;
  mtime_ms: number;
  /** the trace's mtime before murmur-gc's first append since the runtime last wrote it */
  runtime_mtime_ms: number;
}

const keyOf = (root: string, session: string): string => `${root}\0${session}`;

function isEntry(v: unknown): v is Entry {
  if (typeof v !== 'object' || v === null) return false;
  const e = v as Record<string, unknown>;
  return (
    typeof e['root'] === 'string' &&
    typeof e['session'] === 'string' &&
    typeof e['dev'] === 'string' &&
    typeof e['ino'] === 'string' &&
    Number.isSafeInteger(e['size']) &&
    Number.isFinite(e['mtime_ms']) &&
    Number.isFinite(e['runtime_mtime_ms'])
  );
}

export class TraceAppends {
  private readonly loaded = new Map<string, Entry>();
  private readonly kept = new Map<string, Entry>();
  private dirty = false;

  /** From the file's text; anything unreadable is left out. */
  static parse(text: string): TraceAppends {
    const t = new TraceAppends();
    try {
      const doc = JSON.parse(text) as { version?: unknown; traces?: unknown };
      if (doc.version !== VERSION || !Array.isArray(doc.traces)) return t;
      for (const e of doc.traces) if (isEntry(e)) t.loaded.set(keyOf(e.root, e.session), e);
    } catch {
      // corrupt: empty (every trace is judged by its own mtime)
    }
    return t;
  }

  /**
   * The runtime's last write to `<root>/<session>/trace.jsonl` when the only change since is
   * murmur-gc's own append; undefined when the trace is not as murmur-gc left it.
   */
  runtimeWriteMs(root: string, session: string, trace: TraceState): number | undefined {
    const k = keyOf(root, session);
    const e = this.kept.get(k) ?? this.loaded.get(k);
    if (!e) return undefined;
    if (
      e.dev !== String(trace.identity.dev) ||
      e.ino !== String(trace.identity.ino) ||
      e.size !== trace.size ||
      e.mtime_ms !== trace.mtimeMs
    )
      return undefined;
    this.kept.set(k, e);
    return e.runtime_mtime_ms;
  }

  /** murmur-gc appended to the trace: `after` is its state right after, `runtimeMs` the runtime's last write. */
  record(root: string, session: string, after: TraceState, runtimeMs: number): void {
    this.kept.set(keyOf(root, session), {
      root,
      session,
      dev: String(after.identity.dev),
      ino: String(after.identity.ino),
      size: after.size,
      mtime_ms: after.mtimeMs,
      runtime_mtime_ms: runtimeMs,
    });
    this.dirty = true;
  }

  /** Whether the persisted form would differ from what was loaded. */
  get changed(): boolean {
    return this.dirty || this.kept.size !== this.loaded.size;
  }

  text(): string {
    return JSON.stringify({ version: VERSION, traces: [...this.kept.values()] }) + '\n';
  }
}

/** `<home>/gc/trace-appends.json`, or an empty memory when there is none (or it cannot be read). */
export async function loadTraceAppends(home: Dir | undefined): Promise<TraceAppends> {
  if (!home) return new TraceAppends();
  try {
    if (!(await home.lstat(GC_DIR_NAME))?.isDirectory()) return new TraceAppends();
    await using gc = await home.openDir(GC_DIR_NAME);
    if (!(await gc.lstat(TRACE_APPENDS_FILE))?.isFile()) return new TraceAppends();
    return TraceAppends.parse((await readSmallFile(gc, TRACE_APPENDS_FILE, LIMIT)).toString('utf8'));
  } catch {
    return new TraceAppends();
  }
}

export async function saveTraceAppends(home: Dir, t: TraceAppends): Promise<void> {
  if (!t.changed) return;
  await using gc = await home.mkdir(GC_DIR_NAME, 0o700);
  await gc.writeFileAtomic(TRACE_APPENDS_FILE, t.text(), 0o600);
}
