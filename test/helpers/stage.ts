// A copy of the built CLI that any local user can run, for tests that run it as another user.
// Guarantees: the stage holds dist/, package.json, the production dependencies named by
// package-lock.json and, when the running Node binary is out of other users' reach, a copy of it,
// under a fresh world-readable temp dir (every file a+r, every directory a+rx), so it works whatever the mode of the checkout's parent
// directories (a clone under /root or under a 0700 mktemp dir) and whatever node runs the tests
// (a Node fetched by `npx -p node@22` lives under root's 0700 npm cache). Nothing in the checkout
// is modified. fs-extra's copy is used here: it is stable on every Node we support (fs.cpSync is
// still experimental on Node 20), and this is test scaffolding, not the descriptor-checked layer.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import fse from 'fs-extra';
import { REPO, tempDir } from './fixtures.js';

export interface StagedCli {
  /** The stage's root directory (0755). */
  dir: string;
  /** The Node binary to run it with: the running one, or a staged copy of it. */
  node: string;
  /** The staged dist/cli/bin.js. */
  bin: string;
}

interface LockFile {
  packages?: Record<string, { dev?: boolean; optional?: boolean; link?: boolean }>;
}

/** Top-level node_modules entries the CLI needs at run time (not dev-only), from package-lock.json. */
export function productionModules(repo: string): string[] {
  const lock = JSON.parse(fs.readFileSync(path.join(repo, 'package-lock.json'), 'utf8')) as LockFile;
  const out: string[] = [];
  for (const [key, meta] of Object.entries(lock.packages ?? {})) {
    if (!key.startsWith('node_modules/') || meta.dev === true) continue;
    // Nested copies (node_modules/a/node_modules/b) come along with their top-level parent.
    if (key.slice('node_modules/'.length).includes('node_modules/')) continue;
    out.push(key);
  }
  return out.sort();
}

/** Copy what running `repo`'s built CLI needs (dist/, package.json, production modules) to `to`. */
export function copyApp(repo: string, to: string): void {
  fse.copySync(path.join(repo, 'dist'), path.join(to, 'dist'), { dereference: true });
  for (const file of ['package.json', 'package-lock.json']) fse.copySync(path.join(repo, file), path.join(to, file));
  for (const rel of productionModules(repo)) {
    const from = path.join(repo, rel);
    if (fs.existsSync(from)) fse.copySync(from, path.join(to, rel), { dereference: true });
  }
}

/** Any other user can execute `file`: it and every directory above it have the world x bit. */
export function reachableByAnyone(file: string): boolean {
  let p = fs.realpathSync(file);
  if ((fs.statSync(p).mode & 0o001) === 0) return false;
  for (;;) {
    const parent = path.dirname(p);
    if (parent === p) return true;
    p = parent;
    if ((fs.statSync(p).mode & 0o001) === 0) return false;
  }
}

/** Copy the built CLI of `repo` (default: this checkout) to a new world-readable directory. */
export function stageCli(repo: string = REPO): StagedCli {
  const dir = tempDir('mgc-stage');
  const app = path.join(dir, 'app');
  copyApp(repo, app);
  let node = process.execPath;
  if (!reachableByAnyone(node)) {
    node = path.join(dir, 'node', 'bin', 'node');
    fse.copySync(process.execPath, node, { dereference: true });
  }
  execFileSync('chmod', ['-R', 'a+rX', dir]);
  return { dir, node, bin: path.join(app, 'dist', 'cli', 'bin.js') };
}
