// Run as the unprivileged user: N real sweeps (in one process) against a racer swapping 0000
// entries with symlinks to canaries outside the home, and on (up to 4 N in all) while fewer than
// MIN repairs were made: on a loaded machine the racer holds the names longer, so a sweep meets
// the real entries less often. Prints one JSON line of figures.
import * as fs from 'node:fs';
import { spawn } from 'node:child_process';

const [repo, home, racerJson, pairsJson, canariesJson, itersS, minS] = process.argv.slice(2);
const racerArgv = JSON.parse(racerJson);
const pairs = JSON.parse(pairsJson); // [[realName, swapName, mode]]
const canaries = JSON.parse(canariesJson); // [[path, mode]]
const iters = Number(itersS);
const minRepairs = Number(minS ?? 0);
const { loadConfig } = await import(`${repo}/dist/config/load.js`);
const { runSweep } = await import(`${repo}/dist/sweep/pipeline.js`);
const { createLogger } = await import(`${repo}/dist/log.js`);
const config = await loadConfig({ home, env: { HOME: '/nonexistent-home' }, cwd: '/' });
const log = createLogger({ level: 'silent' });

const racer = spawn(racerArgv[0], racerArgv.slice(1).concat(pairs.flatMap((p) => [p[0], p[1]])), { stdio: 'ignore' });
const stopped = () => {
  for (let i = 0; i < 2000; i++) {
    const st = fs.readFileSync(`/proc/${racer.pid}/stat`, 'latin1');
    if (/\) [Tt] /.test(st)) return;
  }
};
let hits = 0;
let repaired = 0;
let refused = 0;
const codes = {};
let i = 0; // sweeps made
try {
  process.kill(racer.pid, 'SIGSTOP');
  stopped();
  for (; i < iters || (repaired < minRepairs && i < 4 * iters); i++) {
    // Racer stopped: make the real entries unopenable again (whichever name they sit at).
    for (const [a, b] of pairs) for (const n of [a, b]) if (!fs.lstatSync(n).isSymbolicLink()) fs.chmodSync(n, 0);
    process.kill(racer.pid, 'SIGCONT');
    const rep = await runSweep({ config, dryRun: false, log });
    process.kill(racer.pid, 'SIGSTOP');
    stopped();
    repaired += rep.actions.filter((a) => a.kind === 'chmod').length;
    for (const e of [...rep.errors, ...rep.skipped]) codes[e.code] = (codes[e.code] ?? 0) + 1;
    refused += rep.skipped.filter((e) => e.code === 'changed_since_scan').length;
    for (const [p, mode] of canaries) {
      if ((fs.statSync(p).mode & 0o7777) !== mode) {
        hits++;
        fs.chmodSync(p, mode);
      }
    }
  }
} finally {
  racer.kill('SIGKILL');
}
process.stdout.write(JSON.stringify({ iters: i, hits, repaired, refused, codes }) + '\n');
