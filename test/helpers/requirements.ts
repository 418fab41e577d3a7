// What some tests need beyond Node and npm, and what happens when it is missing.
// Guarantees: a test group guarded here runs when everything it needs is present; otherwise it is
// skipped and the reason is printed on stderr (`murmur-gc tests: skipped …: needs …`), so a
// contributor without root or systemd-analyze still gets a green, honest run. With
// MURMUR_GC_REQUIRE_ALL=1 (set by .ci/run) nothing is skipped: the group runs and fails in its
// beforeAll with the same reason. Probes are cheap and have no lasting effect (a tmpfs probe
// mounts and unmounts a scratch directory).
//
// Usage (vitest's runIf: no committed test calls vitest's skip API):
//   const req = requirement('tmpfs boundaries', ['root', 'tmpfs']);
//   describe.runIf(req.run)('…', () => { beforeAll(() => req.check()); … });
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** `root`, a tmpfs that can be mounted, or a command that must be on PATH (`cmd:NAME`). */
export type Need = 'root' | 'tmpfs' | `cmd:${string}`;

export interface Requirement {
  /** Everything is present. */
  ok: boolean;
  /** Whether the guarded group should run: when ok, or when MURMUR_GC_REQUIRE_ALL=1. */
  run: boolean;
  /** Empty when ok; otherwise `<title>: needs <what>, <what>`. */
  reason: string;
  /** Call in the group's beforeAll: throws the reason when something is missing. */
  check(): void;
}

export const REQUIRE_ALL_ENV = 'MURMUR_GC_REQUIRE_ALL';

export function requireAll(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = env[REQUIRE_ALL_ENV];
  return v !== undefined && v !== '' && v !== '0';
}

export function isRoot(): boolean {
  return process.getuid?.() === 0;
}

/** An executable named `name` in one of PATH's directories (plus the sbin dirs root uses). */
export function onPath(name: string, envPath = process.env['PATH'] ?? ''): string | undefined {
  const dirs = [...envPath.split(path.delimiter), '/usr/local/sbin', '/usr/sbin', '/sbin'].filter((d) => d !== '');
  for (const dir of dirs) {
    const p = path.join(dir, name);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      if (fs.statSync(p).isFile()) return p;
    } catch {
      // not here
    }
  }
  return undefined;
}

let tmpfsProbe: boolean | undefined;

/** Root can mount a tmpfs here (not in every container): mount one on a scratch dir, unmount it. */
export function canMountTmpfs(): boolean {
  if (tmpfsProbe !== undefined) return tmpfsProbe;
  tmpfsProbe = false;
  if (!isRoot() || onPath('mount') === undefined || onPath('umount') === undefined) return tmpfsProbe;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mgc-tmpfs-probe-'));
  try {
    const m = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=16k', 'tmpfs', dir], { stdio: 'ignore' });
    if (m.status === 0) {
      tmpfsProbe = true;
      spawnSync('umount', [dir], { stdio: 'ignore' });
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return tmpfsProbe;
}

function describeMissing(need: Need): string | undefined {
  if (need === 'root') return isRoot() ? undefined : 'root (run the tests as root, as CI does)';
  if (need === 'tmpfs')
    return canMountTmpfs() ? undefined : 'permission to mount a tmpfs (root outside a restricted container)';
  const cmd = need.slice('cmd:'.length);
  return onPath(cmd) !== undefined ? undefined : `\`${cmd}\` on PATH`;
}

export function requirement(
  title: string,
  needs: Need[],
  env: NodeJS.ProcessEnv = process.env,
  print: (line: string) => void = (line) => process.stderr.write(line),
): Requirement {
  // Without root, "root" says it all: no need to add that root-only probes (tmpfs) fail too.
  const effective = needs.includes('root') && !isRoot() ? needs.filter((n) => n !== 'tmpfs') : needs;
  const missing = effective.map(describeMissing).filter((m): m is string => m !== undefined);
  const ok = missing.length === 0;
  const strict = requireAll(env);
  const reason = ok ? '' : `${title}: needs ${missing.join(', ')}`;
  if (!ok && !strict) print(`murmur-gc tests: skipped ${reason}\n`);
  return {
    ok,
    run: ok || strict,
    reason,
    check(): void {
      if (!ok)
        throw new Error(
          `${reason} (${REQUIRE_ALL_ENV}=1: this run must provide it; see CONTRIBUTING.md "Requirements")`,
        );
    },
  };
}
