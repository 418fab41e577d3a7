#!/usr/bin/env node
// Benchmark of the JSONL scanner (dist/runtime/jsonl.js) against coreutils on a synthetic record.
//
//   npm run build && node bench/jsonl.mjs [sizeMB=500] [runs=3] [lines=mixed]
//
// Generates a conversation record of about sizeMB (a header + message lines of 300–2000 bytes
// of conversation-like JSON) in a temp dir. `lines` picks their text: `mixed` (default: UTF-8,
// and a quote, backslash, tab or newline — an escape — every ~20 bytes), `plain` (UTF-8, no
// escape), `escapes` (an escape every ~5 bytes). Then it times, each in
// its own child process and warm (the file was just written, so it is in the page cache):
//   scanRecord                      vs  wc -l
//   planKeepNewest(1000) + copy     vs  tail -n 1000 > out
//   (and the backward phase of the plan alone: backwardLines + classifyLine up to 1001 messages)
// Reports medians of `runs` runs: wall seconds (child start to exit, node startup included), the
// in-process seconds of the operation alone (and for scanRecord its CPU seconds: the steadier
// figure on a shared machine), the ratio to the coreutils baseline, and peak RSS.
// The numbers are for comparison (ratios), not limits. All generated files are deleted.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { prng } from './gen.mjs';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const jsonlUrl = pathToFileURL(join(repo, 'dist/runtime/jsonl.js')).href;
const recordUrl = pathToFileURL(join(repo, 'dist/runtime/record.js')).href;
if (!existsSync(fileURLToPath(jsonlUrl))) {
  console.error('dist/runtime/jsonl.js is missing: run `npm run build` first');
  process.exit(2);
}

const sizeMB = Number(process.argv[2] ?? 500);
const runs = Number(process.argv[3] ?? 3);
const kind = process.argv[4] ?? 'mixed';
if (!(sizeMB > 0) || !Number.isInteger(runs) || runs < 1 || !['mixed', 'plain', 'escapes'].includes(kind)) {
  console.error('usage: node bench/jsonl.mjs [sizeMB] [runs] [mixed|plain|escapes]');
  process.exit(2);
}
const KEEP = 1000;
const hasTime = existsSync('/usr/bin/time');

const WORDS = {
  mixed: [
    'the',
    'record',
    'keeps',
    'growing',
    'café',
    'naïve',
    '日本語',
    'emoji 😀',
    'a "quoted" word',
    'C:\\path\\to',
    'tab\there',
    'line\nbreak',
    'retention',
    'sweep',
    'daemon',
    'conversation',
  ],
  plain: [
    'the',
    'record',
    'keeps',
    'growing',
    'café',
    'naïve',
    '日本語',
    'emoji 😀',
    'a quoted word',
    'C:/path/to',
    'retention',
    'sweep',
    'daemon',
    'conversation',
    'function',
    'return x;',
  ],
  escapes: ['"a"', 'b\n', '\\c', 'd\t', '"é"', '\n\n', 'x = "1";\n', '\\'],
}[kind];

async function generate(path, bytes) {
  const rnd = prng(1);
  const fh = await open(path, 'wx', 0o600);
  let written = 0;
  let lines = 0;
  let ms = 0x0199_0000_0000;
  const header = JSON.stringify({ type: 'murmur.record', capsule: 'bench', created_ms: 1756400000000 }) + '\n';
  await fh.write(header);
  written += Buffer.byteLength(header);
  // A pool of bodies; ids are unique per line.
  const bodies = [];
  for (let i = 0; i < 512; i++) {
    const target = 280 + Math.floor(rnd() * 1700);
    let content = '';
    while (Buffer.byteLength(content) < target) content += WORDS[Math.floor(rnd() * WORDS.length)] + ' ';
    const role = ['user', 'assistant', 'tool'][i % 3];
    bodies.push({ role, content });
  }
  try {
    while (written < bytes) {
      let chunk = '';
      for (let i = 0; i < 4000 && written + chunk.length < bytes; i++) {
        const b = bodies[(lines + i) % bodies.length];
        const id =
          'msg_' +
          (ms++).toString(16).padStart(12, '0') +
          '7000800000000000' +
          (lines + i).toString(16).padStart(4, '0').slice(-4);
        const msg =
          b.role === 'tool'
            ? { role: b.role, content: b.content, id, tool_call_id: 'call_1', is_error: false }
            : { role: b.role, content: b.content, id };
        chunk += JSON.stringify(msg) + '\n';
      }
      const buf = Buffer.from(chunk);
      await fh.write(buf);
      written += buf.length;
      lines += chunk.split('\n').length - 1;
    }
  } finally {
    await fh.close();
  }
  return { bytes: written, messages: lines };
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** Runs argv, returns wall seconds, stdout and peak RSS (KB) when measurable. */
function timed(argv, { rssFromStdout = false } = {}) {
  const cmd = hasTime && !rssFromStdout ? ['/usr/bin/time', '-f', '%M', ...argv] : argv;
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd[0], cmd.slice(1), { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  if (r.status !== 0) throw new Error(`${argv.join(' ')} failed: ${r.stderr}`);
  let rssKB;
  let out = r.stdout;
  if (rssFromStdout) {
    const doc = JSON.parse(out.trim().split('\n').at(-1));
    rssKB = doc.maxRSS;
    out = doc;
  } else if (hasTime) {
    rssKB = Number(r.stderr.trim().split('\n').at(-1));
  }
  return { wall, out, rssKB };
}

const SCAN_CHILD = `
import { open } from 'node:fs/promises';
import { scanRecord } from ${JSON.stringify(jsonlUrl)};
const fh = await open(process.argv[1], 'r');
const { size } = await fh.stat();
const c0 = process.cpuUsage();
const t0 = performance.now();
const r = await scanRecord(fh, size);
const op = (performance.now() - t0) / 1000;
const c = process.cpuUsage(c0);
await fh.close();
console.log(JSON.stringify({ messages: r.messages, op, cpu: (c.user + c.system) / 1e6, maxRSS: process.resourceUsage().maxRSS }));
`;

const KEEP_CHILD = `
import { open } from 'node:fs/promises';
import { planKeepNewest } from ${JSON.stringify(jsonlUrl)};
import { nextHeader, serializeHeader } from ${JSON.stringify(recordUrl)};
const [src, dst, keep] = process.argv.slice(1);
const t0 = performance.now();
const fh = await open(src, 'r');
const { size } = await fh.stat();
const p = await planKeepNewest(fh, size, Number(keep));
const planned = performance.now();
const out = await open(dst, 'w', 0o600);
await out.write(serializeHeader(nextHeader(p.header, 'bench', p.dropped, p.oldestSurvivingId, p.lastDroppedId, Date.now())));
const buf = Buffer.allocUnsafe(1024 * 1024);
for (let pos = p.dropped > 0 ? p.cutOffset : 0; pos < size; ) {
  const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, size - pos), pos);
  if (bytesRead === 0) throw new Error('short read');
  await out.write(buf.subarray(0, bytesRead));
  pos += bytesRead;
}
await out.close();
await fh.close();
const t1 = performance.now();
console.log(JSON.stringify({ dropped: p.dropped, kept: p.kept, plan: (planned - t0) / 1000, op: (t1 - t0) / 1000, maxRSS: process.resourceUsage().maxRSS }));
`;

const BACKWARD_CHILD = `
import { open } from 'node:fs/promises';
import { backwardLines } from ${JSON.stringify(jsonlUrl)};
import { classifyLine } from ${JSON.stringify(recordUrl)};
const [src, keep] = process.argv.slice(1);
const fh = await open(src, 'r');
const { size } = await fh.stat();
const t0 = performance.now();
let found = 0;
for await (const l of backwardLines(fh, { to: size })) if (classifyLine(l.bytes).isMessage && ++found > Number(keep)) break;
const op = (performance.now() - t0) / 1000;
await fh.close();
console.log(JSON.stringify({ found, op, maxRSS: process.resourceUsage().maxRSS }));
`;

function node(script, args) {
  return timed([process.execPath, '--input-type=module', '-e', script, '--', ...args], { rssFromStdout: true });
}

const dir = await mkdtemp(join(tmpdir(), 'murmur-gc-bench-'));
try {
  const file = join(dir, 'conversation.jsonl');
  const out = join(dir, 'out.jsonl');
  const tg = process.hrtime.bigint();
  const gen = await generate(file, Math.round(sizeMB * 1024 * 1024));
  const genS = Number(process.hrtime.bigint() - tg) / 1e9;
  console.log(
    `record (${kind} lines): ${(gen.bytes / 1048576).toFixed(1)} MiB, ${gen.messages} message lines (generated in ${genS.toFixed(1)} s); ${runs} warm runs each, medians`,
  );

  const sample = (f) => Array.from({ length: runs }, f);
  const nodeStart = sample(() => timed([process.execPath, '-e', '0']));
  const wc = sample(() => timed(['wc', '-l', file]));
  const scan = sample(() => node(SCAN_CHILD, [file]));
  const tail = sample(() => timed(['sh', '-c', `tail -n ${KEEP} "$0" > "$1"`, file, out]));
  const keep = sample(() => node(KEEP_CHILD, [file, out, String(KEEP)]));
  const back = sample(() => node(BACKWARD_CHILD, [file, String(KEEP)]));

  const wcLines = Number(String(wc[0].out).trim().split(/\s+/)[0]);
  if (scan[0].out.messages !== gen.messages || wcLines !== gen.messages + 1) throw new Error('count mismatch');
  if (keep[0].out.dropped !== gen.messages - KEEP) throw new Error('plan mismatch');

  const m = (xs, k) => median(xs.map(k));
  const rss = (xs) => (xs[0].rssKB === undefined ? '–' : `${(m(xs, (x) => x.rssKB) / 1024).toFixed(0)} MB`);
  const rows = [
    ['node -e 0 (startup)', m(nodeStart, (x) => x.wall), undefined, undefined, rss(nodeStart)],
    ['wc -l', m(wc, (x) => x.wall), undefined, 1, rss(wc)],
    [
      'scanRecord',
      m(scan, (x) => x.wall),
      m(scan, (x) => x.out.op),
      m(scan, (x) => x.wall) / m(wc, (x) => x.wall),
      rss(scan),
    ],
    [`tail -n ${KEEP} > out`, m(tail, (x) => x.wall), undefined, 1, rss(tail)],
    [
      `planKeepNewest(${KEEP}) + copy`,
      m(keep, (x) => x.wall),
      m(keep, (x) => x.out.op),
      m(keep, (x) => x.wall) / m(tail, (x) => x.wall),
      rss(keep),
    ],
    [
      `  its backward phase alone (${KEEP + 1} messages from EOF)`,
      m(back, (x) => x.wall),
      m(back, (x) => x.out.op),
      m(back, (x) => x.wall) / m(tail, (x) => x.wall),
      rss(back),
    ],
  ];
  const mbps = (s) => `${(gen.bytes / 1048576 / s).toFixed(0)} MiB/s`;
  console.log('');
  console.log('| variant | wall s | op s (in-process) | ratio (wall) | peak RSS |');
  console.log('|---|---:|---:|---:|---:|');
  for (const [name, wall, op, ratio, r] of rows) {
    console.log(
      `| ${name} | ${wall.toFixed(3)} | ${op === undefined ? '–' : op.toFixed(3)} | ${ratio === undefined ? '–' : ratio.toFixed(1) + '×'} | ${r} |`,
    );
  }
  console.log('');
  console.log(
    `scanRecord throughput (in-process): ${mbps(m(scan, (x) => x.out.op))} wall, ${mbps(m(scan, (x) => x.out.cpu))} per CPU-second (all threads); wc -l: ${mbps(m(wc, (x) => x.wall))}`,
  );
  console.log(
    `planKeepNewest alone (in-process): ${m(keep, (x) => x.out.plan).toFixed(3)} s; its backward phase ${m(back, (x) => x.out.op).toFixed(3)} s — the rest is the forward pass that classifies the dropped prefix to count it exactly`,
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
