// A racing process that starts a session inside child workdirs while a sweep removes (or holds)
// them: what a runtime launched into a finished child workdir does, by path, with no lock.
// Protocol (one JSON line each way per sweep): the test sends `{"gc": <home>/gc, "children":
// [paths], "jitterUs": [per child]}` and then `go`; for each child, once the sweep's audit intent
// log names it (`"target":".murmur/children/<name>"`: the sweep is about to re-check and move
// it; children are raced in the order their intents appear), the racer waits that child's jitter (busy, in µs) and creates `<child>/.murmur/<ses_id>`
// with a `session_start` trace. It answers `{"results": [{child, session, created, ms}]}`:
// `created` when the mkdir succeeded (a session the sweep must not lose). With `"calibrate": true`
// it creates nothing and says in `ms` how long after its intent each child left its path.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';

const rl = readline.createInterface({ input: process.stdin });
let plan;
const now = () => Number(process.hrtime.bigint() / 1000n);
const nap = new Int32Array(new SharedArrayBuffer(4));

function sessionId() {
  const ms = Date.now().toString(16).padStart(12, '0');
  let rand = '';
  for (let i = 0; i < 20; i++) rand += Math.floor(Math.random() * 16).toString(16);
  return `ses_${ms}7${rand.slice(0, 3)}8${rand.slice(3, 18)}`;
}

/** The intent log of the sweep running now, or undefined. */
function intentLog(gc) {
  let names;
  try {
    names = fs.readdirSync(gc);
  } catch {
    return undefined;
  }
  for (const n of names) {
    if (!n.startsWith('ses_')) continue;
    const p = path.join(gc, n, 'intent.jsonl');
    if (fs.existsSync(p)) return p;
  }
  return undefined;
}

function run() {
  const results = [];
  const deadline = now() + 5_000_000;
  const pending = new Map(
    plan.children.map((c, i) => [
      `"target":".murmur/children/${path.basename(c)}"`,
      { child: c, jitter: plan.jitterUs[i] },
    ]),
  );
  // the intent log is read through one descriptor: the sweep unlinks it once its audit is
  // finished, and what it said stays readable for a racer that fell behind
  let fd;
  const buf = Buffer.alloc(1 << 20);
  while (pending.size > 0 && now() < deadline) {
    if (fd === undefined) {
      const log = intentLog(plan.gc);
      if (!log) {
        // no audit yet (the sweep is scanning): wait a little, leaving the CPU to the sweep
        Atomics.wait(nap, 0, 0, 0.2);
        continue;
      }
      try {
        fd = fs.openSync(log, 'r');
      } catch {
        continue;
      }
    }
    const text = buf.toString('latin1', 0, fs.readSync(fd, buf, 0, buf.length, 0));
    // the child whose intent appeared first among those not raced yet (the order the sweep takes them)
    let next;
    let at = Infinity;
    for (const needle of pending.keys()) {
      const k = text.indexOf(needle);
      if (k >= 0 && k < at) {
        at = k;
        next = needle;
      }
    }
    if (next === undefined) continue;
    const seenAt = now();
    const { child, jitter } = pending.get(next);
    pending.delete(next);
    if (plan.calibrate) {
      // no session: how long after its intent the child leaves its path (the window to aim at)
      let ms = -1;
      while (now() < seenAt + 200_000) {
        if (!fs.existsSync(child)) {
          ms = (now() - seenAt) / 1000;
          break;
        }
      }
      results.push({ child, session: null, created: false, ms });
      continue;
    }
    const until = seenAt + jitter;
    while (now() < until);
    const session = sessionId();
    let created = false;
    try {
      fs.mkdirSync(path.join(child, '.murmur', session));
      created = true;
      fs.writeFileSync(
        path.join(child, '.murmur', session, 'trace.jsonl'),
        JSON.stringify({
          event_type: 'session_start',
          event_id: 'evt_0',
          parent_id: null,
          session_id: session,
          timestamp: Date.now(),
        }) + '\n',
      );
    } catch {
      // the child is gone from its path (moved): nothing was started in it, or the trace could not be written
    }
    results.push({ child, session, created, ms: -1 });
  }
  if (fd !== undefined) fs.closeSync(fd);
  for (const { child } of pending.values()) results.push({ child, session: null, created: false, ms: -1 });
  process.stdout.write(JSON.stringify({ results }) + '\n');
}

rl.on('line', (line) => {
  if (line === 'go') run();
  else plan = JSON.parse(line);
});
