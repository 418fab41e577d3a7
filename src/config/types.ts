// The resolved configuration murmur-gc runs on, after YAML parsing, validation, `~`/glob
// expansion and manifest lookups. Everything here is plain data: absolute paths, policy numbers.
// Guarantee: a value of these types has been fully validated; a policy with no keys is `undefined`
// (no policy means nothing is deleted).

/**
 * `keep_free`: an absolute byte count or a percentage of the filesystem's total size, and the
 * most it takes of any one store's items in one sweep (`per_sweep`, a percentage; default 50).
 */
export type KeepFree = ({ kind: 'bytes'; bytes: number } | { kind: 'percent'; percent: number }) & {
  perSweepPercent: number;
};

/** `trace.retain` semantics: both keys ANDed; at least one present. */
export interface SessionRetain {
  maxSessions?: number;
  /** seconds */
  maxAgeSecs?: number;
}

/** `context.retain` semantics: both keys ANDed; at least one present. */
export interface RecordRetain {
  maxMessages?: number;
  /** seconds */
  maxAgeSecs?: number;
}

export interface SessionsRootConfig {
  /** Absolute path of a sessions root (a directory holding `ses_…` directories). */
  root: string;
  /** undefined: nothing is deleted here (still reconciled and mode-checked). */
  retain: SessionRetain | undefined;
  /** Disk budget (`max_bytes`): the root's sessions are kept under this many bytes. */
  maxBytes?: number;
  /**
   * `children: { max_age }` in seconds: orphaned child workdirs beside a `W/.murmur` root older
   * than this are removed (docs/design.md §9a); undefined: only reported.
   */
  childrenMaxAgeSecs?: number;
  /** Where this entry came from, for messages: e.g. `sessions[2]` or `running/ses_….json`. */
  origin: string;
  /** `keep_free: false`: this root never gives up anything for keep_free (docs/fates.md). */
  keepFree?: false;
  /**
   * A problem with a capsule-writable manifest (`workdir:` entries): the entry then has no policy
   * and every sweep reports this (it never stops the other entries).
   */
  problem?: { code: string; detail: string };
}

export interface RecordPolicyConfig {
  /** The owner named in the record header (`capsule`). */
  capsule: string;
  /** Record store directory name under `<home>/conversations/`. Defaults to the capsule. */
  store: string;
  retain: RecordRetain | undefined;
  /** Disk budget (`max_bytes`): the store's contexts are kept under this many bytes. */
  maxBytes?: number;
  /** `keep_free: false`: this store never gives up anything for keep_free (docs/fates.md). */
  keepFree?: false;
  origin: string;
}

export interface GcConfig {
  /** Absolute path of the murmur home (default `$HOME/.murmur`). */
  home: string;
  /**
   * `--force-home` / `force_home: true`: the home is used even when src/config/home.ts would refuse
   * it (a system path, or not recognisably a murmur home).
   */
  forceHome?: boolean;
  /** $HOME (and its real path) when the configuration was resolved: a home may not be one of these or hold them. */
  userHomes?: readonly string[];
  /** Where the home came from, for a refusal at the moment of action: `--home`, else the `home` key (or its default). */
  homeKey?: 'home' | '--home';
  /** Cron expression (daemon only). */
  schedule: string;
  /** Run one sweep when the daemon starts. */
  runOnStart: boolean;
  /** Upper bound of a random delay before each scheduled sweep, seconds (0 = none). */
  randomDelaySecs: number;
  /** How long a session without `session_end` is considered live after its last trace write. seconds */
  liveGraceSecs: number;
  /** Per-sweep, per-store removal limit (`max_delete`); absent = the defaults of src/plan/guards.ts. */
  maxDelete?: { count?: number; fraction?: number };
  sessions: SessionsRootConfig[];
  records: RecordPolicyConfig[];
  /**
   * Free space to keep on the filesystem holding the home (`keep_free`); stores with a policy on
   * that filesystem give up their oldest removable items when it runs short.
   */
  keepFree?: KeepFree;
  /**
   * The undo window (`quarantine`): a session or context a sweep removes is moved aside and held
   * this long before it is deleted for good (src/gchome/quarantine-layout.ts). Absent: removal is at once.
   */
  quarantine?: { windowSecs: number };
  audit: { retain: SessionRetain | undefined };
  /** Prometheus text-format file written after every sweep (node_exporter textfile collector). */
  metrics?: {
    textfile: string;
    /** `metrics.interval`: the sweep cadence the alert rules assume (default: the gap of `schedule`). */
    intervalSecs?: number;
  };
  log: { level: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent' };
  /** The config file this came from, or undefined for built-in defaults. */
  source: string | undefined;
}
