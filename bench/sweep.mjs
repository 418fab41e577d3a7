// Benchmark: a dry-run sweep over a synthetic home (N sessions with traces in one sessions root,
// M conversation records under a max_messages policy), against `find` listing the same trees, in
// the same script. Runs the sweep twice: the second run is served by the trace/count cache.
// Usage: node bench/sweep.mjs [sessions=10000] [records=10000]   (needs `npm run build` first)
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(repo, 'dist', 'cli', 'bin.js');
const nSessions = Number(process.argv[2] ?? 10000);
const nRecords = Number(process.argv[3] ?? 10000);
const T = fs.mkdtempSync(path.join(os.tmpdir(), 'mgc-bench-sweep-'));
const home = path.join(T, '.murmur');
const root = path.join(T, 'app', '.murmur');
const now = Date.now();
const id = (p, ms, i) => p + Math.floor(ms).toString(16).padStart(12, '0') + '7' + String(i).padStart(19, '0');

function timed(cmd, args, opts = {}) {
  const r = spawnSync('/usr/bin/time', ['-f', '%e %M', cmd, ...args], { encoding: 'utf8', maxBuffer: 1 << 28, ...opts });
  const m = /([\d.]+) (\d+)\s*$/.exec(r.stderr.trim());
  if (!m) throw new Error(`${cmd} failed: ${r.stderr}`);
  return { s: Number(m[1]), rssMB: Number(m[2]) / 1024, stdout: r.stdout };
}

try {
  process.stdout.write(`generating ${nSessions} sessions and ${nRecords} records… `);
  for (let i = 0; i < nSessions; i++) {
    const s = id('ses_', now - (i % 60) * 86_400_000 - i, i);
    fs.mkdirSync(path.join(root, s), { recursive: true });
    const lines = [
      { event_type: 'session_start', event_id: id('evt_', now, i), parent_id: null, session_id: s, timestamp: now },
      ...Array.from({ length: 20 }, (_, k) => ({ event_type: 'inference', event_id: id('evt_', now, k), parent_id: null, session_id: s, timestamp: now, turn: k, input_tokens: 1000 })),
      { event_type: 'session_end', event_id: id('evt_', now, i + 1), parent_id: null, session_id: s, timestamp: now },
    ];
    fs.writeFileSync(path.join(root, s, 'trace.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const t = (now - 3_600_000) / 1000;
    fs.utimesSync(path.join(root, s, 'trace.jsonl'), t, t);
  }
  for (let i = 0; i < nRecords; i++) {
    const dir = path.join(home, 'conversations', 'shey', `ctx_${i}`);
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    let text = '{"type":"murmur.record","capsule":"shey","created_ms":1756400000000}\n';
    for (let k = 0; k < 40; k++) text += JSON.stringify({ role: k % 2 ? 'assistant' : 'user', content: 'x'.repeat(200), id: id('msg_', now, k) }) + '\n';
    fs.writeFileSync(path.join(dir, 'conversation.jsonl'), text, { mode: 0o600 });
  }
  console.log('done');
  const cfg = path.join(T, 'config.yaml');
  fs.writeFileSync(cfg, `sessions:\n  - root: ${root}\n    retain: { max_sessions: ${nSessions * 2} }\nrecords:\n  - capsule: shey\n    retain: { max_messages: 1000 }\n`);
  const env = { ...process.env, HOME: T, XDG_CONFIG_HOME: path.join(T, '.config') };
  const find = timed('sh', ['-c', `find ${root} ${home} -type f | wc -l`]);
  const cold = timed(process.execPath, [bin, '--json', '--config', cfg], { env }); // real run: writes the caches
  const warm = timed(process.execPath, [bin, '--dry-run', '--json', '--config', cfg], { env });
  const rep = JSON.parse(warm.stdout);
  console.log(`\n${'variant'.padEnd(40)} ${'wall s'.padStart(8)} ${'peak RSS'.padStart(10)}`);
  for (const [name, r] of [
    ['find -type f | wc -l', find],
    ['murmur-gc sweep (first: reads everything)', cold],
    ['murmur-gc --dry-run (caches warm)', warm],
  ]) console.log(`${name.padEnd(40)} ${r.s.toFixed(2).padStart(8)} ${(r.rssMB.toFixed(0) + ' MB').padStart(10)}`);
  console.log(`\nfirst sweep / find = ${(cold.s / Math.max(find.s, 0.01)).toFixed(1)}x; warm / find = ${(warm.s / Math.max(find.s, 0.01)).toFixed(1)}x`);
  console.log(`inventory (warm): ${JSON.stringify(rep.inventory)}`);
} finally {
  fs.rmSync(T, { recursive: true, force: true });
}
