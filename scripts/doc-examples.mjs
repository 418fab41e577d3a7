#!/usr/bin/env node
// Prints the example outputs that README.md and docs/daemon.md show, from a real run of the built
// CLI (dist/, `npm run build` first) on a generated home — not part of the tests.
//
//   node scripts/doc-examples.mjs [--out DIR] [--keep]
//
// The home is bench/gen.mjs's (fixed seed and counts: 3000 sessions over 3 sessions roots, 400
// records over 4 stores), laid out as an operator's: $HOME is DIR/home, the murmur home
// ~/.murmur, the roots ~/src/app/.murmur, ~/src/api/.murmur and ~/runs/bot/.murmur, and the
// configuration at its default place (~/.config/murmur-gc/config.yaml: an undo window, age and
// count policies, two disk budgets). The commands run as a user would: on a terminal 80 columns
// wide (`script -qc`), and with --json piped to jq. Absolute paths under DIR/home print as `~`.
// Ids and times differ from run to run (they are minted relative to now); counts, sizes and
// wording only change when the program does. Each block is printed between `==> name` lines.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generate } from '../bench/gen.mjs';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(REPO, 'dist', 'cli', 'bin.js');
const args = process.argv.slice(2);
const outArg = args.indexOf('--out');
const out = outArg >= 0 ? path.resolve(args[outArg + 1]) : fs.mkdtempSync(path.join(os.tmpdir(), 'mgc-doc-examples-'));
const keep = args.includes('--keep') || outArg >= 0;
if (!fs.existsSync(BIN)) throw new Error(`${BIN} is missing: run npm run build first`);

generate({ sessions: 3000, roots: 3, records: 400, seed: 18, out });
const HOME = path.join(out, 'home');
const places = ['src/app', 'src/api', 'runs/bot'];
places.forEach((p, i) => {
  fs.mkdirSync(path.join(HOME, path.dirname(p)), { recursive: true });
  fs.renameSync(path.join(out, 'roots', `r${String(i).padStart(3, '0')}`), path.join(HOME, p));
});
fs.rmSync(path.join(out, 'roots'), { recursive: true, force: true });
const CONFIG = path.join(HOME, '.config', 'murmur-gc', 'config.yaml');
fs.mkdirSync(path.dirname(CONFIG), { recursive: true });
fs.writeFileSync(
  CONFIG,
  `quarantine: 7d
sessions:
  - root: ~/src/app/.murmur
    retain: { max_age: 90d }
  - root: ~/src/api/.murmur
    retain: { max_sessions: 500 }
  - root: ~/runs/bot/.murmur
    max_bytes: 6M
records:
  - capsule: shey
    retain: { max_messages: 200, max_age: 120d }
  - capsule: ops
    retain: { max_age: 60d }
  - capsule: research
    max_bytes: 4M
`,
);

const env = { ...process.env, HOME, COLUMNS: '80', LINES: '50', TERM: 'xterm', NO_COLOR: '1' };
delete env.XDG_CONFIG_HOME;
delete env.CI;
const tilde = (s) => s.split(HOME).join('~');
const quote = (a) => (/^[\w./~=:-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`);

/** `murmur-gc ARGS` on a terminal of 80 columns: what the operator sees (stdout and stderr). */
function tty(argv) {
  const cmd = `stty cols 80 rows 50; ${[process.execPath, BIN, ...argv].map(quote).join(' ')}`;
  const r = spawnSync('script', ['-qec', cmd, '/dev/null'], { env, encoding: 'utf8', maxBuffer: 1 << 28 });
  // script reports the command's status; the terminal's carriage returns and the status line go
  const text = r.stdout.replace(/\r\n/g, '\n').replace(/^.*\r(?!\n)/gm, '').replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
  return { text: tilde(text), status: r.status };
}

/** `murmur-gc ARGS --json | jq -c PROGRAM`, as a block: the command line, then its output. */
function jsonBlock(name, argv, program) {
  const r = spawnSync(process.execPath, [BIN, ...argv, '--json'], { env, encoding: 'utf8', maxBuffer: 1 << 28 });
  const text = execFileSync('jq', ['-c', program], { input: r.stdout, encoding: 'utf8', maxBuffer: 1 << 28 });
  block(name, `murmur-gc ${[...argv, '--json'].join(' ')} | jq -c '${program}'`, tilde(text));
}

/** The first `head` lines, `…`, and the last `tail` lines of `text` (an excerpt). */
function excerpt(text, head, tail = 0) {
  const lines = text.replace(/\n$/, '').split('\n');
  if (lines.length <= head + tail) return text;
  return [...lines.slice(0, head), '…', ...(tail ? lines.slice(-tail) : [])].join('\n') + '\n';
}

function block(name, command, text) {
  process.stdout.write(`==> ${name}\n$ ${command}\n${text}${text.endsWith('\n') ? '' : '\n'}\n`);
}

const dry = tty(['--dry-run']);
block('dry-run', 'murmur-gc --dry-run', dry.text);
jsonBlock('dry-run-json', ['--dry-run'], '{schema_version, command, dry_run, bytes_freed, steps: [.steps[].step], budget: [.budget.stores[] | {"label": .label, bytes_before, bytes_after, removed}]}');
const sweep = tty([]);
block('sweep', 'murmur-gc', sweep.text);
const held = tty(['quarantine', 'ls']);
block('quarantine-ls', 'murmur-gc quarantine ls', excerpt(held.text, 6, 1));
jsonBlock('quarantine-ls-json', ['quarantine', 'ls'], '.items[0], .totals');
const target = JSON.parse(spawnSync(process.execPath, [BIN, 'quarantine', 'ls', '--json'], { env, encoding: 'utf8', maxBuffer: 1 << 28 }).stdout).items.find((i) => i.held_kind === 'session').target;
block('restore', `murmur-gc restore ${target}`, tty(['restore', target]).text);
block('sweep-again', 'murmur-gc', tty([]).text);
block('status', 'murmur-gc status', tty(['status']).text);
jsonBlock('status-json', ['status'], '{schema_version, command, last_sweep: .last_sweep | {trigger, outcome, counts, bytes_freed}, quarantine: .stores.quarantine}');
block('history', 'murmur-gc history', tty(['history']).text);
block('history-target', `murmur-gc history --target ${target.slice(0, 16)}`, tty(['history', '--target', target.slice(0, 16)]).text);
jsonBlock('history-json', ['history'], '.totals, (.sweeps[0] | {audit, outcome, retention: [.retention[] | del(.targets)]})');

if (!keep) fs.rmSync(out, { recursive: true, force: true });
else process.stderr.write(`home kept in ${out}\n`);
