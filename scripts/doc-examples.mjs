#!/usr/bin/env node
// Prints the example outputs that docs/commands.md and docs/daemon.md show, from a real run of the built
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
// Then the two worked examples of docs/budgets.md and docs/quarantine.md, each on a small
// home of its own built here. Ids and times differ from run to run (they are minted relative to now); counts, sizes and
// wording only change when the program does. Each block is printed between `==> name` lines.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generate, prng } from '../bench/gen.mjs';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(REPO, 'dist', 'cli', 'bin.js');
const args = process.argv.slice(2);
const outArg = args.indexOf('--out');
const out = outArg >= 0 ? path.resolve(args[outArg + 1]) : fs.mkdtempSync(path.join(os.tmpdir(), 'mgc-doc-examples-'));
const keep = args.includes('--keep') || outArg >= 0;
if (!fs.existsSync(BIN)) throw new Error(`${BIN} is missing: run npm run build first`);

generate({ sessions: 3000, roots: 3, records: 400, seed: 18, out });
let HOME = path.join(out, 'home');
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
/**
 * Paths under $HOME as `~/…`. Where a path is padded to a column (two spaces or more after it),
 * the padding keeps the program's width, so the columns stay where the program put them.
 */
const tilde = (s) => {
  const at = new RegExp(`${HOME.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(\\S*)( {2,})`, 'g');
  return s
    .replace(at, (_m, rest, pad) => `~${rest}${pad}${' '.repeat(HOME.length - 1)}`)
    .split(HOME)
    .join('~');
};
const quote = (a) => (/^[\w./~=:-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`);

/** `murmur-gc ARGS` on a terminal of 80 columns: what the operator sees (stdout and stderr). */
function tty(argv) {
  const cmd = `stty cols 80 rows 50; ${[process.execPath, BIN, ...argv].map(quote).join(' ')}`;
  const r = spawnSync('script', ['-qec', cmd, '/dev/null'], { env, encoding: 'utf8', maxBuffer: 1 << 28 });
  // script reports the command's status; the terminal's carriage returns and the status line go
  const text = r.stdout
    .replace(/\r\n/g, '\n')
    .replace(/^.*\r(?!\n)/gm, '')
    .replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
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
jsonBlock(
  'dry-run-json',
  ['--dry-run'],
  '{schema_version, command, dry_run, bytes_freed, steps: [.steps[].step], budget: [.budget.stores[] | {"label": .label, bytes_before, bytes_after, held, removed}]}',
);
const sweep = tty([]);
block('sweep', 'murmur-gc', sweep.text);
const held = tty(['quarantine', 'ls']);
block('quarantine-ls', 'murmur-gc quarantine ls', excerpt(held.text, 6, 1));
jsonBlock('quarantine-ls-json', ['quarantine', 'ls'], '.items[0], .totals');
const target = JSON.parse(
  spawnSync(process.execPath, [BIN, 'quarantine', 'ls', '--json'], { env, encoding: 'utf8', maxBuffer: 1 << 28 })
    .stdout,
).items.find((i) => i.held_kind === 'session').target;
block('restore', `murmur-gc restore ${target}`, tty(['restore', target]).text);
block('sweep-again', 'murmur-gc', tty([]).text);
block('status', 'murmur-gc status', tty(['status']).text);
jsonBlock(
  'status-json',
  ['status'],
  '{schema_version, command, last_sweep: .last_sweep | {trigger, outcome, counts, bytes_freed}, quarantine: .stores.quarantine}',
);
block('history', 'murmur-gc history', tty(['history']).text);
block(
  'history-target',
  `murmur-gc history --target ${target.slice(0, 16)}`,
  tty(['history', '--target', target.slice(0, 16)]).text,
);
jsonBlock(
  'history-json',
  ['history'],
  '.totals, (.sweeps[0] | {audit, outcome, retention: [.retention[] | del(.targets)]})',
);

// ---- the worked examples of docs/budgets.md and docs/quarantine.md: small homes ---------------
const DAY = 86_400_000;
const now = Date.now();
const rnd = prng(7);
const hex = (n) => Array.from({ length: n }, () => Math.floor(rnd() * 16).toString(16)).join('');
const mint = (prefix, ms) => `${prefix}${Math.floor(ms).toString(16).padStart(12, '0')}7${hex(19)}`;

/** A session of `kib` KiB on disk minted `ageDays` ago; live: no session_end and written just now. */
function session(root, ageDays, kib, live = false) {
  const id = mint('ses_', now - ageDays * DAY);
  const dir = path.join(root, id);
  fs.mkdirSync(path.join(dir, 'blobs'), { recursive: true });
  const t = now - ageDays * DAY;
  const line = (o) =>
    JSON.stringify({ event_id: mint('evt_', t), parent_id: null, session_id: id, timestamp: t, ...o });
  const trace = [
    line({ event_type: 'session_start', capsule_name: 'demo', capsule_version: '1.0.0', context_id: null }),
  ];
  if (!live) trace.push(line({ event_type: 'session_end', duration_ms: 5, exit_status: 'ok' }));
  fs.writeFileSync(path.join(dir, 'trace.jsonl'), trace.join('\n') + '\n');
  fs.writeFileSync(path.join(dir, 'blobs', hex(64)), 'x'.repeat(kib * 1024 - 4096));
  if (!live) for (const p of [path.join(dir, 'trace.jsonl'), dir]) fs.utimesSync(p, (t + 10) / 1000, (t + 10) / 1000);
  return id;
}

/** A record of `messages` messages in store shey, last written `ageDays` ago. */
function record(home, ageDays, messages) {
  const created = now - (ageDays + 1) * DAY;
  const ctx = mint('ctx_', created);
  const dir = path.join(home, 'conversations', 'shey', ctx);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const lines = [JSON.stringify({ type: 'murmur.record', capsule: 'shey', created_ms: created })];
  for (let i = 0; i < messages; i++)
    lines.push(
      JSON.stringify({
        role: i % 2 ? 'assistant' : 'user',
        content: [{ type: 'text', text: `message ${i}` }],
        id: mint('msg_', created + i * 1000),
      }),
    );
  const file = path.join(dir, 'conversation.jsonl');
  fs.writeFileSync(file, lines.join('\n') + '\n', { mode: 0o600 });
  const m = (now - ageDays * DAY) / 1000;
  fs.utimesSync(file, m, m);
  return { ctx, file };
}

/** A fresh $HOME (`name` under DIR) with ~/.murmur and the configuration `yaml`. */
function freshHome(name, yaml) {
  const home = path.join(out, name);
  fs.mkdirSync(path.join(home, '.murmur'), { recursive: true, mode: 0o700 });
  fs.mkdirSync(path.join(home, '.config', 'murmur-gc'), { recursive: true });
  fs.writeFileSync(path.join(home, '.config', 'murmur-gc', 'config.yaml'), yaml);
  env.HOME = home;
  HOME = home;
  return home;
}

{
  const home = freshHome(
    'budget',
    'sessions:\n  - root: ~/app/.murmur\n    retain: { max_age: 5d }\n    max_bytes: 800K\n',
  );
  const root = path.join(home, 'app', '.murmur');
  session(root, 10, 300, true);
  for (const d of [9, 8, 4, 3, 2]) session(root, d, 300);
  block('budget-sweep', 'murmur-gc', tty([]).text);
}

{
  const home = freshHome(
    'undo',
    'quarantine: 24h\nsessions:\n  - root: ~/app/.murmur\n    retain: { max_age: 30d }\nrecords:\n  - capsule: shey\n    retain: { max_age: 90d, max_messages: 2000 }\n',
  );
  const root = path.join(home, 'app', '.murmur');
  const [, younger] = [session(root, 40, 196), session(root, 35, 196), session(root, 10, 196), session(root, 5, 196)];
  void younger;
  const big = record(path.join(home, '.murmur'), 1, 2500);
  record(path.join(home, '.murmur'), 100, 200);
  block('undo-sweep', 'murmur-gc', tty([]).text);
  block('undo-quarantine-ls', 'murmur-gc quarantine ls', tty(['quarantine', 'ls']).text);
  // the runtime appends one message to the truncated record meanwhile
  fs.appendFileSync(
    big.file,
    JSON.stringify({ role: 'user', content: [{ type: 'text', text: 'one more' }], id: mint('msg_', now) }) + '\n',
  );
  block('undo-restore-record', `murmur-gc restore ${big.ctx}`, tty(['restore', big.ctx]).text);
  const lines = fs.readFileSync(big.file, 'utf8').split('\n');
  const rel = `~/.murmur/conversations/shey/${big.ctx}/conversation.jsonl`;
  block(
    'undo-record-after',
    `grep -c '"role"' ${rel}`,
    `${lines.filter((l) => l.includes('"role"')).length}\n$ head -1 ${rel}\n${lines[0]}\n`,
  );
  const held = JSON.parse(
    spawnSync(process.execPath, [BIN, 'quarantine', 'ls', '--json'], { env, encoding: 'utf8' }).stdout,
  )
    .items.filter((i) => i.held_kind === 'session')
    .map((i) => i.target)
    .sort();
  block('undo-restore-session', `murmur-gc restore ${held[0]}`, tty(['restore', held[0]]).text);
  block('undo-sweep-again', 'murmur-gc', tty([]).text);
  block('undo-history-target', `murmur-gc history --target ${held[0]}`, tty(['history', '--target', held[0]]).text);
  fs.mkdirSync(path.join(root, held[1]));
  const refused = tty(['restore', held[1]]);
  block(
    'undo-restore-exists',
    `mkdir ~/app/.murmur/${held[1]}; murmur-gc restore ${held[1]}; echo "exit $?"`,
    `${refused.text}exit ${refused.status}\n`,
  );
  block('undo-status-tail', 'murmur-gc status | tail -2', excerpt(tty(['status']).text, 0, 2).replace(/^…\n/, ''));
}

if (!keep) fs.rmSync(out, { recursive: true, force: true });
else process.stderr.write(`home kept in ${out}\n`);
