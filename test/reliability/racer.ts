// A racing process that swaps pairs of names with renameat2(RENAME_EXCHANGE) in a tight loop —
// what a sandboxed capsule can do to entries in its own workdir. Compiled at test time with `cc`
// when a compiler is present, else run through python3 ctypes (same syscall). `kind` says which.
// raceEnv and runDriverAsUser give a race test its unprivileged user, staged build and driver run.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { REPO, rmrf, tempDir } from '../helpers/fixtures.js';
import type { Requirement } from '../helpers/requirements.js';
import { stageCli, type StagedCli } from '../helpers/stage.js';
import { asUser, createUser, type TestUser } from './user.js';

const C_SOURCE = `
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/syscall.h>
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif
int main(int argc, char **argv) {
  int pairs = (argc - 1) / 2;
  unsigned long n = 0;
  for (;;) {
    for (int i = 0; i < pairs; i++) syscall(SYS_renameat2, AT_FDCWD, argv[1 + 2 * i], AT_FDCWD, argv[2 + 2 * i], RENAME_EXCHANGE);
    n++;
  }
  return 0;
}
`;

const PY_SOURCE = `
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD = -100
nr = {'x86_64': 316, 'aarch64': 276}.get(__import__('platform').machine(), 316)
args = [a.encode() for a in sys.argv[1:]]
while True:
    for i in range(0, len(args) - 1, 2):
        libc.syscall(nr, AT_FDCWD, args[i], AT_FDCWD, args[i + 1], 2)
`;

export interface RacerBuild {
  kind: 'cc' | 'python3';
  argv0: string[];
}

export function buildRacer(dir: string): RacerBuild {
  const cc = spawnSync('sh', ['-c', 'command -v cc || command -v gcc'], { encoding: 'utf8' }).stdout.trim();
  if (cc) {
    const src = path.join(dir, 'racer.c');
    const bin = path.join(dir, 'racer');
    fs.writeFileSync(src, C_SOURCE);
    execFileSync(cc, ['-O2', '-o', bin, src]);
    fs.chmodSync(bin, 0o755);
    return { kind: 'cc', argv0: [bin] };
  }
  const py = path.join(dir, 'racer.py');
  fs.writeFileSync(py, PY_SOURCE);
  fs.chmodSync(py, 0o644);
  return { kind: 'python3', argv0: ['python3', py] };
}

/** Start the racer as `uid:gid` swapping each [a, b] pair. */
export function startRacer(build: RacerBuild, pairs: [string, string][], uid: number, gid: number): ChildProcess {
  const args = [...build.argv0, ...pairs.flat()];
  return spawn('setpriv', ['--reuid', String(uid), '--regid', String(gid), '--clear-groups', ...args], {
    stdio: 'ignore',
  });
}

/** What a race test runs in: an unprivileged user, a copy of the build it can run, a 0755 temp dir with the racer built in it. */
export interface RaceEnv {
  user: TestUser;
  stage: StagedCli;
  dir: string;
  racer: RacerBuild;
}

/**
 * The race environment of one test file, made in its beforeAll (when `needs` are met) and removed
 * in its afterAll; call at the file's top level, read the result inside a test.
 */
export function raceEnv(tempName: string, needs: Requirement): () => RaceEnv {
  let env: Partial<RaceEnv> = {};
  beforeAll(() => {
    if (!needs.run) return;
    needs.check();
    env.user = createUser();
    // The user runs a staged copy of the build (and of node): the checkout may sit under a 0700 dir.
    env.stage = stageCli();
    env.dir = tempDir(tempName);
    fs.chmodSync(env.dir, 0o755);
    env.racer = buildRacer(env.dir);
  });
  afterAll(() => {
    if (env.dir) rmrf(env.dir);
    if (env.stage) rmrf(env.stage.dir);
    env.user?.remove();
    env = {};
  });
  return () => env as RaceEnv;
}

/**
 * Runs the driver script `test/reliability/<driver>` as the race's user with the staged node: its
 * arguments are the staged app's directory, then `args`. Returns the driver's one JSON line.
 */
export function runDriverAsUser<T>(env: RaceEnv, driver: string, args: string[]): T {
  const copy = path.join(env.dir, driver);
  fs.copyFileSync(path.join(REPO, 'test', 'reliability', driver), copy);
  fs.chmodSync(copy, 0o644);
  const [setpriv, ...rest] = asUser(env.user);
  const r = spawnSync(setpriv!, [...rest, env.stage.node, copy, path.join(env.stage.dir, 'app'), ...args], {
    encoding: 'utf8',
    timeout: 600_000,
  });
  if (r.status !== 0) throw new Error(`${driver} exited ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}
