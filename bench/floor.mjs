#!/usr/bin/env node
// The floor of a sweep's file access in Node: the system calls murmur-gc's safety rules make for
// a generated home (bench/gen.mjs), and nothing else. It parses no line, builds no plan and loads
// no module but node:fs, so what murmur-gc spends above it is start-up, parsing and planning.
//
//   node bench/floor.mjs first HOME_DIR   every session directory opened (O_DIRECTORY|O_NOFOLLOW)
//                                         through its root's descriptor and fstat'ed; its trace
//                                         lstat'ed, opened (O_NOFOLLOW|O_NONBLOCK) through the
//                                         session's descriptor, fstat'ed and read whole; every
//                                         record the same way, but those of the store `archive`
//                                         (the one store of a generated home no policy names: only
//                                         its first 64 KiB, the header probe), and every context
//                                         directory listed (a rewrite's temp file is found there)
//   node bench/floor.mjs warm HOME_DIR    each root and store listed once, each session directory
//                                         and its trace lstat'ed (each context and its record, and
//                                         the context listed), relative to the directory held; the
//                                         cache file read
//   node bench/floor.mjs du HOME_DIR      du's walk: every root, store and the home listed once;
//                                         each session and context directory, and each directory
//                                         in it, entered (chdir through the parent's descriptor),
//                                         lstat('.') checked, listed, and every entry lstat'ed by
//                                         single name (no dry run: bench/run.mjs adds its CPU)
//
// HOME_DIR is a directory bench/gen.mjs made (its manifest.json names the roots and the home).
// Prints one JSON line: files, bytes, and this process's CPU seconds (user, sys). Node cannot
// openat(2) a descriptor, so, as murmur-gc does, a child is named /proc/self/fd/N/<name>.
import * as fs from 'node:fs';
import * as path from 'node:path';

const [mode, dir] = process.argv.slice(2);
if (!['first', 'warm', 'du'].includes(mode) || !dir) {
  console.error('usage: node bench/floor.mjs first|warm|du HOME_DIR');
  process.exit(2);
}
const m = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
const conversations = path.join(m.home, 'conversations');
const stores = fs.readdirSync(conversations);
const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = fs.constants;
const DIR = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;
const FILE = O_RDONLY | O_NOFOLLOW | O_NONBLOCK;
const HEADER_PROBE = 64 * 1024;
const bigint = { bigint: true };
let buf = Buffer.allocUnsafe(1 << 20);
let files = 0;
let bytes = 0;

/** Read dir's child `name` at most `max` bytes, the way a first sweep does. */
function readChild(dfd, name, max) {
  const p = `/proc/self/fd/${dfd}/${name}`;
  if (!fs.lstatSync(p, { ...bigint, throwIfNoEntry: false })) return;
  const fd = fs.openSync(p, FILE);
  try {
    const want = Math.min(Number(fs.fstatSync(fd, bigint).size), max);
    if (buf.length < want) buf = Buffer.allocUnsafe(want);
    let off = 0;
    for (let n; off < want && (n = fs.readSync(fd, buf, off, want - off, off)) > 0;) off += n;
    files++;
    bytes += off;
  } finally {
    fs.closeSync(fd);
  }
}

/** Each child directory of `parent` opened through its descriptor, then `each(childFd)`. */
function eachChildDir(parent, each) {
  const pfd = fs.openSync(parent, DIR);
  try {
    for (const name of fs.readdirSync(`/proc/self/fd/${pfd}`)) {
      const cfd = fs.openSync(`/proc/self/fd/${pfd}/${name}`, DIR);
      try {
        fs.fstatSync(cfd, bigint);
        each(cfd);
      } finally {
        fs.closeSync(cfd);
      }
    }
  } finally {
    fs.closeSync(pfd);
  }
}

/**
 * Each child of `parent` and `child/<file>` lstat'ed relative to the directory held (its cwd);
 * with `list`, each child also listed (a context directory, looked at for a rewrite's temp file).
 */
function statChildren(parent, file, list = false) {
  const pfd = fs.openSync(parent, DIR);
  const back = process.cwd();
  try {
    process.chdir(`/proc/self/fd/${pfd}`);
    for (const name of fs.readdirSync('.')) {
      fs.lstatSync(name, bigint);
      fs.lstatSync(`${name}/${file}`, { ...bigint, throwIfNoEntry: false });
      if (list) fs.readdirSync(name);
      files++;
    }
  } finally {
    process.chdir(back);
    fs.closeSync(pfd);
  }
}

/** Each child directory of `parent`, and each directory in it, read from inside itself (as du does). */
function walkInside(parent) {
  const pfd = fs.openSync(parent, DIR);
  const back = process.cwd();
  const readHere = () => {
    fs.lstatSync('.', bigint);
    const subs = [];
    for (const e of fs.readdirSync('.')) {
      files++;
      if (fs.lstatSync(e, bigint).isDirectory()) subs.push(e);
    }
    return subs;
  };
  try {
    process.chdir(`/proc/self/fd/${pfd}`);
    for (const name of fs.readdirSync('.')) {
      files++;
      process.chdir(`/proc/self/fd/${pfd}/${name}`);
      for (const sub of readHere()) {
        process.chdir(`/proc/self/fd/${pfd}/${name}/${sub}`);
        readHere();
      }
    }
  } finally {
    process.chdir(back);
    fs.closeSync(pfd);
  }
}

const before = process.cpuUsage();
if (mode === 'first') {
  for (const root of m.roots) eachChildDir(root, (sfd) => readChild(sfd, 'trace.jsonl', Infinity));
  for (const store of stores)
    eachChildDir(path.join(conversations, store), (cfd) => {
      fs.readdirSync(`/proc/self/fd/${cfd}`);
      readChild(cfd, 'conversation.jsonl', store === 'archive' ? HEADER_PROBE : Infinity);
    });
} else if (mode === 'du') {
  for (const root of m.roots) walkInside(root);
  for (const store of stores) walkInside(path.join(conversations, store));
} else {
  const cache = path.join(m.home, 'gc', 'trace-cache.json');
  if (fs.existsSync(cache)) bytes += fs.readFileSync(cache).length;
  for (const root of m.roots) statChildren(root, 'trace.jsonl');
  for (const store of stores) statChildren(path.join(conversations, store), 'conversation.jsonl', true);
}
const cpu = process.cpuUsage(before);
console.log(JSON.stringify({ mode, files, bytes, user: cpu.user / 1e6, sys: cpu.system / 1e6 }));
