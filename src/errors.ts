// Stable error codes and the small set of typed errors murmur-gc raises.
// Guarantees: every warning/error murmur-gc reports carries one of these codes (docs/design.md §R10
// convention: alert on codes, never parse message text); messages carry ids, counts and paths,
// never conversation content. Only src/cli/main.ts maps errors to process exit codes.
import { definedOnly } from './defined.js';

export const Codes = {
  configInvalid: 'config_invalid',
  storageBusy: 'storage_busy',
  processInterrupted: 'process_interrupted',
  liveSession: 'live_session',
  symlink: 'symlink',
  foreignOwner: 'foreign_owner',
  notOwned: 'not_owned',
  notRegular: 'not_regular',
  hardLink: 'hard_link',
  crossDevice: 'cross_device',
  ioError: 'io_error',
  concurrentAppend: 'concurrent_append',
  changedSinceScan: 'changed_since_scan',
  liveContext: 'live_context',
  invalidLine: 'invalid_line',
  /** A conversation record that is not valid UTF-8: the runtime cannot read it; never pruned or truncated. */
  recordUnreadable: 'record_unreadable',
  /** A file in running/ that is not a running record (unparseable, too big, not a regular file). */
  runningRecordInvalid: 'running_record_invalid',
  lockCompromised: 'lock_compromised',
  aborted: 'aborted',
  blastRadius: 'blast_radius',
  /** a disk budget (max_bytes, keep_free) could not be met: what held it is in the detail */
  budgetUnmet: 'budget_unmet',
  /** A configured sessions root, workdir, project, manifest or metrics directory does not exist (a warning). */
  configPathMissing: 'config_path_missing',
  /**
   * A configured value that would delete nearly everything (`keep_free` of 90% or more, a
   * `max_age` written as a bare number of seconds): a `config check` warning, never fatal.
   */
  configDestructive: 'config_destructive',
  /** the wall clock is behind murmur-gc's record of its last sweep: age-based deletion skipped */
  clockSkew: 'clock_skew',
  /** an item on the protection list (murmur-gc protect, or restored): no sweep acts on it */
  protected: 'protected',
  /** `<home>/gc/protected.json` cannot be read: every item counts as protected until it is fixed */
  protectedUnreadable: 'protected_unreadable',
  /** a held item of <home>/gc/quarantine whose item.json cannot be read: it goes by the window in its name */
  quarantineItemUnreadable: 'quarantine_item_unreadable',
  /**
   * a held item of <home>/gc/quarantine whose payload is not what its item.json says (a symbolic
   * link, a file where the context directory belongs): it cannot be restored, and goes by its window
   */
  quarantineItemInvalid: 'quarantine_item_invalid',
  /**
   * An entry named like one of murmur-gc's own (`.murmur-gc-quarantine.*`, `.murmur-gc-trash.*`,
   * `.murmur-gc-kept.*`) in a directory a capsule can write that murmur-gc's registry does not name
   * (`<home>/gc/registry.jsonl`): not murmur-gc's — never held into, purged, restored or removed;
   * reported once per directory and sweep (docs/design.md §4a). Holds of an older murmur-gc too.
   */
  unverifiedGcEntry: 'unverified_gc_entry',
  /** what a removal could not remove whole is still set aside (`.murmur-gc-kept.*`): one warning per sweep while any is */
  keptAside: 'kept_aside',
  /** A file that must be read whole (configuration, manifest) is over its size cap: not read. */
  fileTooLarge: 'file_too_large',
  /**
   * A trace or record line longer than the line cap that may be JSON: the file is not judged (a
   * trace gives no summary, a record is neither counted nor truncated). See docs/limits.md.
   */
  lineTooLong: 'line_too_long',
  /** A trace or record that is mostly holes (sparse): not read, and reported. See docs/limits.md. */
  sparseFile: 'sparse_file',
  /**
   * A trace naming more distinct context ids, work ids or child workdirs than a summary keeps: not
   * judged, as a trace with a line over the cap (its session is judged by its mtime). docs/limits.md.
   */
  tooManyIds: 'too_many_ids',
  /**
   * A trace with more unaccounted background work than one sweep marks lost (per trace and per
   * sweep caps, docs/limits.md): the rest is marked by later sweeps (a warning).
   */
  lostWorkDeferred: 'lost_work_deferred',
  /**
   * A sessions root this process may not write (read-only mount or sandbox, permissions): found
   * once per root and sweep, reported once with the fix; nothing there is attempted.
   */
  rootNotWritable: 'root_not_writable',
  /** A session name minted in the future outranks real sessions for `max_sessions` (a warning, once per root). */
  futureSessionId: 'future_session_id',
  /**
   * A `delegation_start.child_workdir` that does not name a direct entry of `W/.murmur/children/`
   * (`../x`, an absolute path elsewhere): refused, nothing there is touched (docs/design.md §R11).
   */
  childWorkdirOutside: 'child_workdir_outside',
  /** A child workdir kept with its removed parent: not finished, or something inside is live or cannot be judged. */
  childKept: 'child_kept',
  /**
   * What a killed runtime left and nothing of it ever removes: a `running/<ses>.json.writing-<pid>`
   * or a `.conversation.jsonl.<pid>.<hex>.tmp` of a dead pid, a running record whose process is gone.
   */
  runtimeDebris: 'runtime_debris',
  /**
   * An option naming a sessions root or record store that is neither configured nor the origin
   * of anything it applies to (`quarantine ls --root`/`--record`: a typo, exit 2).
   */
  unknownPlace: 'unknown_place',
  /** `history --target` given a prefix of more than one name in the audit trail (exit 2). */
  targetAmbiguous: 'target_ambiguous',
  /**
   * A conversation record some process holds open for writing (a descriptor kept across appends,
   * unlike the runtime's open/append/close per line): it is not rewritten — no truncation, torn-tail
   * repair or `conversation truncate` — and the pids are named (docs/design.md §3).
   */
  recordHeldOpen: 'record_held_open',
  /**
   * Something that is not a murmur-gc lock sat where a lock belongs (`<home>/gc/sweep.lock` a
   * regular file, FIFO, socket or link, or a directory holding entries with no live holder): it was
   * removed so the sweep could proceed, or what kept it there is said.
   */
  lockDebris: 'lock_debris',
} as const;

/**
 * The codes of the normal state: a live session, a context a live session uses, a protected item
 * — kept although a rule condemns it. Counted in the report, never a warning in the logs
 * (docs/fates.md): a workstation always has live sessions.
 */
export const NORMAL_CODES: ReadonlySet<string> = new Set([Codes.liveSession, Codes.liveContext, Codes.protected]);

export type Code = (typeof Codes)[keyof typeof Codes];

export const ExitCodes = {
  ok: 0,
  failed: 1,
  usage: 2,
  busy: 75,
} as const;

/** An error that carries a stable code and an exit status. */
export class GcError extends Error {
  readonly code: string;
  readonly exitCode: number;
  /** What to do about it; a loader may add one after the fact (how many more errors there are). */
  hint: string | undefined;
  constructor(code: string, message: string, options: { exitCode?: number; hint?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GcError';
    this.code = code;
    this.exitCode = options.exitCode ?? ExitCodes.failed;
    this.hint = options.hint;
  }
}

/** Invalid configuration: exit 2, nothing touched. `path` names the key (e.g. `sessions[0].retain.max_age`). */
export class ConfigError extends GcError {
  readonly file: string | undefined;
  readonly keyPath: string;
  /** The message without its file and key path. */
  readonly detail: string;
  /** Where in `file` the key sits (1-based), when known (`config check` fills these in). */
  line: number | undefined;
  column: number | undefined;
  constructor(keyPath: string, message: string, file?: string, position?: { line: number; column: number }) {
    super(Codes.configInvalid, `${file ? `${file}: ` : ''}${keyPath ? `${keyPath}: ` : ''}${message}`, {
      exitCode: ExitCodes.usage,
    });
    this.name = 'ConfigError';
    this.file = file;
    this.keyPath = keyPath;
    this.detail = message;
    this.line = position?.line;
    this.column = position?.column;
  }
}

/** Another murmur-gc holds the lock: exit 75. */
export class BusyError extends GcError {
  constructor(message: string, hint?: string) {
    super(Codes.storageBusy, message, { exitCode: ExitCodes.busy, ...definedOnly({ hint }) });
    this.name = 'BusyError';
  }
}

/**
 * A record that processes hold open for writing (`record_held_open`): never rewritten while they
 * do, so what they write is never left in a replaced inode. Exit 1.
 */
export class HeldOpenError extends GcError {
  readonly pids: readonly number[];
  constructor(path: string, pids: readonly number[]) {
    super(
      Codes.recordHeldOpen,
      `${path} is held open for writing by ${pidList(pids)}: not rewritten while it is (what it writes would land in the replaced file and be lost)`,
      {
        hint: `let ${pids.length === 1 ? 'that process' : 'those processes'} close the record (or stop ${pids.length === 1 ? 'it' : 'them'}), then run again`,
      },
    );
    this.name = 'HeldOpenError';
    this.pids = pids;
  }
}

/** `pid 12` / `pids 12, 34` (sorted, each once). */
export function pidList(pids: readonly number[]): string {
  const sorted = [...new Set(pids)].sort((a, b) => a - b);
  return `${sorted.length === 1 ? 'pid' : 'pids'} ${sorted.join(', ')}`;
}

/** A refusal in the runtime's `error[CODE]: message` + `hint:` shape (E-CNV-00x). Exit 1. */
export class RefusalError extends GcError {
  constructor(code: string, message: string, hint: string) {
    super(code, message, { exitCode: ExitCodes.failed, hint });
    this.name = 'RefusalError';
  }
}

/** The errno-style code of a Node fs error, or undefined. */
export function errnoCode(err: unknown): string | undefined {
  if (typeof err === 'object' && err !== null && 'code' in err) {
    const c = err.code;
    return typeof c === 'string' ? c : undefined;
  }
  return undefined;
}

let procFdResolver: ((fd: number) => string | undefined) | undefined;

/** src/fsx/safe-fs.ts tells which report path an open directory descriptor stands for. */
export function setProcFdResolver(fn: (fd: number) => string | undefined): void {
  procFdResolver = fn;
}

/** `/proc/self/fd/<N>/name` (how descriptor-relative calls name things) → the real path. */
export function realPaths(text: string): string {
  return text.replace(/\/proc\/self\/fd\/(\d+)(?=\/|'|$|\s)/g, (m, fd: string) => procFdResolver?.(Number(fd)) ?? m);
}

/** A short, content-free description of an error for logs and reports (real paths only). */
export function describeError(err: unknown): string {
  const code = errnoCode(err);
  if (err instanceof Error) {
    return realPaths(code && !err.message.startsWith(code) ? `${code}: ${err.message}` : err.message);
  }
  return realPaths(String(err));
}

/**
 * An I/O error of a write to `path` as a GcError naming that path (a bare ENOSPC/EIO from a
 * descriptor names none); GcErrors and aborts pass through unchanged.
 */
export function withPath(err: unknown, path: string): unknown {
  if (err instanceof GcError || isAbort(err) || errnoCode(err) === undefined) return err;
  return new GcError(Codes.ioError, `${path}: ${describeError(err)}`, { cause: err });
}

/** An abort (signal, compromised lock): stops a run at a safe point, never an item's error. */
export function isAbort(err: unknown): boolean {
  return (
    (err instanceof Error && err.name === 'AbortError') ||
    (err instanceof GcError && (err.code === Codes.lockCompromised || err.code === Codes.aborted))
  );
}

/** The stable code to report for an error from a filesystem step. */
export function codeOf(err: unknown): string {
  if (err instanceof GcError) return err.code;
  const e = errnoCode(err);
  if (e === 'ELOOP') return Codes.symlink;
  return Codes.ioError;
}
