// Benchmark: a sweep that truncates one large record to its newest 1000 messages, against
// `wc -l` (a full read) and `tail -n 1000` (the kept range) on the same file, in the same script.
// Usage: node bench/truncate.mjs [size-MiB=2048]   (needs `npm run build` first)
// Reports wall seconds, ratios and peak RSS (from /usr/bin/time); deletes its files.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(repo, 'dist', 'cli', 'bin.js');
const sizeMiB = Number(process.argv[2] ?? 2048);
const T = fs.mkdtempSync(path.join(os.tmpdir(), 'mgc-bench-'));
const home = path.join(T, '.murmur');
const dir = path.join(home, 'conversations', 'big', 'ctx_big');
fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
const file = path.join(dir, 'conversation.jsonl');

function timed(cmd, args, opts = {}) {
  const r = spawnSync('/usr/bin/time', ['-f', '%e %M', cmd, ...args], { encoding: 'utf8', maxBuffer: 1 << 26, ...opts });
  const m = /([\d.]+) (\d+)\s*$/.exec(r.stderr.trim());
  if (r.status !== 0 || !m) throw new Error(`${cmd} failed: ${r.stderr}`);
  return { s: Number(m[1]), rssMB: Number(m[2]) / 1024 };
}

try {
  process.stdout.write(`generating ${sizeMiB} MiB record… `);
  const fd = fs.openSync(file, 'w', 0o600);
  fs.writeSync(fd, '{"type":"murmur.record","capsule":"big","created_ms":1756400000000}\n');
  let written = 0;
  let n = 0;
  const body = 'conversation text with "quotes", a \\ backslash, café and 日本語 '.repeat(14);
  while (written < sizeMiB * 1024 * 1024) {
    const lines = [];
    for (let k = 0; k < 8192; k++, n++) {
      lines.push(JSON.stringify({ role: k % 2 ? 'assistant' : 'user', content: body.slice(0, 600 + (n % 400)), id: 'msg_' + (1_700_000_000_000 + n).toString(16).padStart(12, '0') + '7' + String(n).padStart(19, '0') }));
    }
    const chunk = Buffer.from(lines.join('\n') + '\n');
    fs.writeSync(fd, chunk);
    written += chunk.length;
  }
  fs.closeSync(fd);
  console.log(`${n} messages`);
  const copy = path.join(T, 'copy.jsonl');
  fs.copyFileSync(file, copy);
  execFileSync('cat', [file], { stdio: ['ignore', 'ignore', 'ignore'] }); // warm the cache
  const wc = timed('wc', ['-l', copy]);
  const tail = timed('sh', ['-c', `tail -n 1000 ${copy} > ${path.join(T, 'tail.out')}`]);
  const startup = timed(process.execPath, ['-e', '0']);
  const cfg = path.join(T, 'config.yaml');
  fs.writeFileSync(cfg, 'records:\n  - capsule: big\n    retain: { max_messages: 1000 }\n');
  const env = { ...process.env, HOME: T, XDG_CONFIG_HOME: path.join(T, '.config') };
  const dry = timed(process.execPath, [bin, '--dry-run', '--json', '--config', cfg], { env });
  const sweep = timed(process.execPath, [bin, '--json', '--config', cfg], { env });
  const kept = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).length - 1;
  const rows = [
    ['node -e 0 (startup)', startup],
    ['wc -l (full read)', wc],
    ['tail -n 1000 > out', tail],
    ['murmur-gc --dry-run (count + plan)', dry],
    ['murmur-gc sweep (count + truncate)', sweep],
  ];
  console.log(`\n${'variant'.padEnd(38)} ${'wall s'.padStart(8)} ${'peak RSS'.padStart(10)}`);
  for (const [name, r] of rows) console.log(`${name.padEnd(38)} ${r.s.toFixed(2).padStart(8)} ${(r.rssMB.toFixed(0) + ' MB').padStart(10)}`);
  console.log(`\nsweep / wc -l = ${(sweep.s / Math.max(wc.s, 0.01)).toFixed(1)}x; sweep / tail = ${(sweep.s / Math.max(tail.s, 0.01)).toFixed(0)}x; kept ${kept} messages`);
} finally {
  fs.rmSync(T, { recursive: true, force: true });
}
