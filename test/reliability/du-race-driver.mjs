// Run as the unprivileged user: N `du` walks (in one process) against a racer swapping a session
// directory with a symlink to a decoy outside the root that holds the same names with large
// files. Prints one JSON line: how many walks counted any of the decoy's bytes (must be 0) and
// how many measured the session itself while the racer ran.
import * as fs from 'node:fs';
import { spawn } from 'node:child_process';

const [repo, configPath, racerJson, pairsJson, decoyBytesS, itersS] = process.argv.slice(2);
const racerArgv = JSON.parse(racerJson);
const pairs = JSON.parse(pairsJson);
const decoyBytes = Number(decoyBytesS);
const iters = Number(itersS);
const { loadConfig } = await import(`${repo}/dist/config/load.js`);
const { diskUsage } = await import(`${repo}/dist/commands/du.js`);
const { createLogger } = await import(`${repo}/dist/log.js`);
const config = await loadConfig({ configPath, env: { HOME: '/nonexistent-home' }, cwd: '/' });
const log = createLogger({ level: 'silent' });

const racer = spawn(racerArgv[0], racerArgv.slice(1).concat(pairs.flat()), { stdio: 'ignore' });
let hits = 0;
let measured = 0;
let max = 0;
try {
  for (let i = 0; i < iters; i++) {
    const r = await diskUsage(config, log);
    const bytes = r.roots[0]?.bytes ?? 0;
    max = Math.max(max, bytes);
    if (bytes >= decoyBytes) hits++;
    // the session was found by the scan and measured as a session (its trace counted)
    if ((r.roots[0]?.sessions ?? 0) === 2 && (r.roots[0]?.by_kind.traces ?? 0) > 0) measured++;
  }
} finally {
  racer.kill('SIGKILL');
}
fs.writeSync(1, JSON.stringify({ iters, hits, measured, max }) + '\n');
