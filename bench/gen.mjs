#!/usr/bin/env node
// Generator of a realistic murmur home for the benchmarks (bench/run.mjs).
//
//   npm run bench:gen -- --sessions N --roots R --records M --big-mb X [--big K] [--out DIR]
//
// Builds, under DIR (default: a fresh temp dir, printed):
//   roots/rNNN/.murmur/ses_<uuid-v7>/   N session dirs spread over R sessions roots; ids minted over
//       the last ~8 months; each holds trace.jsonl (session_start, task_start/task_end with
//       context ids, inference/tool_call/shell lines, shell_detached with its shell_completed or
//       shell_abandoned, session_end on ~97%), blobs/<sha256> and a log; trace mtime = session end.
//   home/.murmur/conversations/<store>/ctx_<uuid-v7>/conversation.jsonl   M records over 4 stores,
//       each with its header and 10–300 messages (some tool results, some blank lines), mtimes
//       spread over months; modes as the runtime leaves them (0700 dirs, 0600 files).
//   home/.murmur/conversations/archive/ctx_big_K/conversation.jsonl   K (default 2 when --big-mb
//       is given) records of X MiB each, owned by capsule `archive`.
//   config.yaml   retains everything (max_sessions above N, max_age 3650d, max_messages 1000 on
//       the 4 stores): a sweep of this home has nothing to delete or rewrite.
//   manifest.json what was built (counts, bytes, the big records and their message counts).
// Everything is written with synchronous calls in a tight loop (no thread-pool round trips).
// Deterministic for given arguments (seeded PRNG); ids are relative to the time of generation.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

export const STORES = ['shey', 'ops', 'research', 'support'];
const DAY = 86_400_000;

/** Deterministic PRNG (mulberry32); shared with the other bench scripts. */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Generate a home. Returns the manifest (also written to DIR/manifest.json). */
export function generate(opts) {
  const t0 = process.hrtime.bigint();
  const nSessions = opts.sessions ?? 10000;
  const nRoots = Math.max(1, opts.roots ?? 10);
  const nRecords = opts.records ?? 1000;
  const bigMb = opts.bigMb ?? 0;
  const nBig = bigMb > 0 ? (opts.big ?? 2) : 0;
  const out = opts.out ?? fs.mkdtempSync(path.join(os.tmpdir(), 'mgc-bench-home-'));
  const now = opts.nowMs ?? Date.now();
  const rnd = prng(opts.seed ?? 12);
  const hexr = (n) => {
    let s = '';
    while (s.length < n)
      s += Math.floor(rnd() * 0x100000000)
        .toString(16)
        .padStart(8, '0');
    return s.slice(0, n);
  };
  const id = (prefix, ms) => prefix + Math.floor(ms).toString(16).padStart(12, '0') + '7' + hexr(3) + '8' + hexr(15);
  fs.mkdirSync(out, { recursive: true });
  const home = path.join(out, 'home', '.murmur');
  fs.mkdirSync(home, { recursive: true, mode: 0o700 });
  fs.chmodSync(home, 0o700);
  const conv = path.join(home, 'conversations');
  fs.mkdirSync(conv, { mode: 0o700 });

  // ---- sessions -------------------------------------------------------------------------------
  const roots = [];
  for (let r = 0; r < nRoots; r++) {
    const root = path.join(out, 'roots', `r${String(r).padStart(3, '0')}`, '.murmur');
    fs.mkdirSync(root, { recursive: true });
    roots.push(root);
  }
  const span = 240 * DAY;
  let traceBytes = 0;
  const blobText = 'x'.repeat(2000) + '\n';
  for (let i = 0; i < nSessions; i++) {
    const root = roots[i % nRoots];
    const start = now - 2 * DAY - Math.floor(rnd() * span);
    const ses = id('ses_', start);
    const dir = path.join(root, ses);
    fs.mkdirSync(dir);
    const startId = id('evt_', start);
    const ctx = rnd() < 0.5 ? `"ctx_${hexr(32)}"` : 'null';
    let t = start;
    let txt = `{"event_type":"session_start","event_id":"${startId}","parent_id":null,"session_id":"${ses}","timestamp":${t},"capsule_name":"demo","capsule_version":"1.4.2","resumed_from":null,"context_id":${ctx},"model":"gpt-x","max_turns":40,"max_session_tokens":null,"credential_source":"config","system_prompt_sha256":"${hexr(64)}"}\n`;
    const tasks = 1 + Math.floor(rnd() * 3);
    for (let k = 0; k < tasks; k++) {
      const task = id('tsk_', (t += 5));
      const taskEvt = id('evt_', t);
      txt += `{"event_type":"task_start","event_id":"${taskEvt}","parent_id":"${startId}","session_id":"${ses}","timestamp":${t},"task_id":"${task}","context_id":"ctx_${hexr(32)}","source":"task_md","origin":"user","trust":"${rnd() < 0.8 ? 'trusted' : 'untrusted'}","lane":"user","message_parts_bytes":${100 + Math.floor(rnd() * 4000)}}\n`;
      const turns = 2 + Math.floor(rnd() * 6);
      for (let u = 0; u < turns; u++) {
        const turnEvt = id('evt_', (t += 700));
        txt += `{"event_type":"inference","event_id":"${turnEvt}","parent_id":"${taskEvt}","session_id":"${ses}","timestamp":${t},"task_id":"${task}","turn":${u},"model":"gpt-x","input_tokens":${1000 + Math.floor(rnd() * 50000)},"output_tokens":${Math.floor(rnd() * 2000)},"duration_ms":${Math.floor(rnd() * 9000)},"decision":"tool_call","stop_reason":"tool_use"}\n`;
        txt += `{"event_type":"tool_call","event_id":"${id('evt_', (t += 3))}","parent_id":"${turnEvt}","session_id":"${ses}","timestamp":${t},"task_id":"${task}","turn":${u},"tool_name":"read_file","duration_ms":${Math.floor(rnd() * 90)},"output_bytes":${Math.floor(rnd() * 90000)},"outcome":"ok"}\n`;
        if (rnd() < 0.3) {
          txt += `{"event_type":"shell","event_id":"${id('evt_', (t += 3))}","parent_id":"${turnEvt}","session_id":"${ses}","timestamp":${t},"task_id":"${task}","turn":${u},"binary":"/usr/bin/make","command":"make -j2 test","exit_code":0,"duration_ms":${Math.floor(rnd() * 60000)},"output_bytes":${Math.floor(rnd() * 9000)}}\n`;
        }
        if (rnd() < 0.1) {
          const work = id('wrk_', (t += 3));
          txt += `{"event_type":"shell_detached","event_id":"${id('evt_', t)}","parent_id":"${turnEvt}","session_id":"${ses}","timestamp":${t},"turn":${u},"task_id":"${task}","work_id":"${work}","binary":"/usr/bin/sleep","command":"sleep 600","grace_ms":10000}\n`;
          const done = rnd() < 0.8 ? 'shell_completed' : 'shell_abandoned';
          txt += `{"event_type":"${done}","event_id":"${id('evt_', (t += 400))}","parent_id":"${startId}","session_id":"${ses}","timestamp":${t},"work_id":"${work}","binary":"/usr/bin/sleep","command":"sleep 600"${done === 'shell_completed' ? ',"exit_code":0' : ''}}\n`;
        }
      }
      txt += `{"event_type":"task_end","event_id":"${id('evt_', (t += 5))}","parent_id":"${taskEvt}","session_id":"${ses}","timestamp":${t},"task_id":"${task}","status":"ok","turns":${turns}}\n`;
    }
    if (rnd() < 0.97) {
      txt += `{"event_type":"session_end","event_id":"${id('evt_', (t += 5))}","parent_id":"${startId}","session_id":"${ses}","timestamp":${t},"total_turns":${tasks * 4},"total_input_tokens":123456,"total_output_tokens":4567,"total_tool_calls":12,"total_shell_calls":3,"duration_ms":${t - start},"exit_status":"ok"}\n`;
    }
    const trace = path.join(dir, 'trace.jsonl');
    fs.writeFileSync(trace, txt);
    traceBytes += Buffer.byteLength(txt);
    fs.mkdirSync(path.join(dir, 'blobs'));
    fs.writeFileSync(path.join(dir, 'blobs', hexr(64)), blobText);
    fs.writeFileSync(path.join(dir, 'session.log'), 'started\nfinished\n');
    const m = t / 1000;
    fs.utimesSync(trace, m, m);
    fs.utimesSync(dir, m, m);
  }
  const tSessions = Number(process.hrtime.bigint() - t0) / 1e9;

  // ---- records --------------------------------------------------------------------------------
  const words = [
    'the',
    'record',
    'keeps',
    'growing',
    'café',
    'naïve',
    '日本語',
    'emoji 😀',
    'a \\"quoted\\" word',
    'C:\\\\path\\\\to',
    'tab\\there',
    'line\\nbreak',
    'retention',
    'sweep',
    'daemon',
    'conversation',
  ];
  const bodies = [];
  for (let i = 0; i < 256; i++) {
    const target = 120 + Math.floor(rnd() * 900);
    let s = '';
    while (s.length < target) s += words[Math.floor(rnd() * words.length)] + ' ';
    bodies.push(s);
  }
  const message = (ms, k) => {
    const body = bodies[k & 255];
    const r = k % 5;
    if (r === 4)
      return `{"role":"tool","content":[{"type":"tool_result","tool_call_id":"call_${k}","text":"${body}"}],"id":"${id('msg_', ms)}","is_error":false}\n`;
    return `{"role":"${r % 2 ? 'assistant' : 'user'}","content":[{"type":"text","text":"${body}"}],"id":"${id('msg_', ms)}"}\n`;
  };
  for (const s of [...STORES, 'archive']) fs.mkdirSync(path.join(conv, s), { mode: 0o700 });
  let recordBytes = 0;
  let recordMessages = 0;
  for (let i = 0; i < nRecords; i++) {
    const store = STORES[i % STORES.length];
    const created = now - 2 * DAY - Math.floor(rnd() * span);
    const dir = path.join(conv, store, id('ctx_', created));
    fs.mkdirSync(dir, { mode: 0o700 });
    const n = 10 + Math.floor(rnd() * 290);
    let ms = created;
    let txt = `{"type":"murmur.record","capsule":"${store}","created_ms":${created}}\n`;
    for (let k = 0; k < n; k++) {
      txt += message((ms += 1000 + Math.floor(rnd() * 60000)), k + i);
      if (k % 97 === 96) txt += '\n';
    }
    const file = path.join(dir, 'conversation.jsonl');
    fs.writeFileSync(file, txt, { mode: 0o600 });
    recordBytes += Buffer.byteLength(txt);
    recordMessages += n;
    fs.utimesSync(file, ms / 1000, ms / 1000);
  }
  const tRecords = Number(process.hrtime.bigint() - t0) / 1e9 - tSessions;

  // ---- big records ----------------------------------------------------------------------------
  const big = [];
  for (let b = 0; b < nBig; b++) {
    const created = now - 200 * DAY;
    const dir = path.join(conv, 'archive', `ctx_big_${b}`);
    fs.mkdirSync(dir, { mode: 0o700 });
    const file = path.join(dir, 'conversation.jsonl');
    const fd = fs.openSync(file, 'w', 0o600);
    const target = bigMb * 1024 * 1024;
    let written = fs.writeSync(fd, `{"type":"murmur.record","capsule":"archive","created_ms":${created}}\n`);
    let n = 0;
    let ms = created;
    while (written < target) {
      let chunk = '';
      for (let k = 0; k < 4000; k++, n++) chunk += message((ms += 1000), n);
      written += fs.writeSync(fd, chunk);
    }
    fs.closeSync(fd);
    big.push({ path: file, bytes: written, messages: n });
  }
  const tBig = Number(process.hrtime.bigint() - t0) / 1e9 - tSessions - tRecords;

  const config =
    `home: ${home}\n` +
    `sessions:\n` +
    roots.map((r) => `  - root: ${r}\n    retain: { max_sessions: ${nSessions + 1000}, max_age: 3650d }\n`).join('') +
    `records:\n` +
    STORES.map((s) => `  - capsule: ${s}\n    retain: { max_messages: 1000, max_age: 3650d }\n`).join('');
  fs.writeFileSync(path.join(out, 'config.yaml'), config);
  const manifest = {
    out,
    home,
    roots,
    sessions: nSessions,
    records: nRecords,
    traceBytes,
    recordBytes,
    recordMessages,
    big,
    generatedAtMs: now,
    seconds: { sessions: tSessions, records: tRecords, big: tBig },
  };
  fs.writeFileSync(path.join(out, 'manifest.json'), JSON.stringify(manifest, null, 1));
  return manifest;
}

function parseArgs(argv) {
  const o = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = argv[i + 1];
    const num = () => {
      const n = Number(v);
      if (!Number.isFinite(n) || n < 0) throw new Error(`${a} needs a number, got ${v}`);
      i++;
      return n;
    };
    if (a === '--sessions') o.sessions = num();
    else if (a === '--roots') o.roots = num();
    else if (a === '--records') o.records = num();
    else if (a === '--big-mb') o.bigMb = num();
    else if (a === '--big') o.big = num();
    else if (a === '--seed') o.seed = num();
    else if (a === '--out') {
      o.out = path.resolve(v);
      i++;
    } else
      throw new Error(
        `unknown argument ${a} (usage: --sessions N --roots R --records M --big-mb X [--big K] [--out DIR])`,
      );
  }
  return o;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(e.message);
    process.exit(2);
  }
  if (opts.out && fs.existsSync(opts.out) && fs.readdirSync(opts.out).length > 0) {
    console.error(`${opts.out} is not empty; refusing to generate into it`);
    process.exit(2);
  }
  const m = generate(opts);
  const mb = (b) => (b / 1048576).toFixed(0);
  console.log(
    `${m.out}: ${m.sessions} sessions in ${m.roots.length} roots (${mb(m.traceBytes)} MiB of traces) in ${m.seconds.sessions.toFixed(1)} s; ` +
      `${m.records} records (${mb(m.recordBytes)} MiB, ${m.recordMessages} messages) in ${m.seconds.records.toFixed(1)} s; ` +
      `${m.big.length} big records of ${mb(m.big[0]?.bytes ?? 0)} MiB in ${m.seconds.big.toFixed(1)} s`,
  );
  console.log(`config: ${path.join(m.out, 'config.yaml')}`);
}
