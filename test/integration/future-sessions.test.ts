// Session names minted in the future (`ses_ffff…`) rank first for max_sessions, as in the runtime,
// and push real sessions out: the ranking stays, and every sweep says so once per root
// (`future_session_id`) in its report, its --json and its log.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as f from '../helpers/fixtures.js';

interface Report {
  actions: { kind: string; target?: string; root?: string; reason?: string }[];
  skipped: { target: string; code: string; detail: string }[];
  errors: unknown[];
}

let T: string;
const now = Date.now();

beforeEach(() => {
  T = f.tempDir('future-sessions');
});
afterEach(() => f.rmrf(T));

describe('future-dated session names', () => {
  it('keep their rank under max_sessions and are warned about once per root, every sweep', () => {
    const roots = [path.join(T, 'a', '.murmur'), path.join(T, 'b', '.murmur')];
    const real = [1, 2, 3, 4].map((d) => f.idAt('ses_', now - (10 - d) * f.DAY));
    const planted = ['ses_ffffffffffff7000000000000000000a', 'ses_fffffffffffe7000000000000000000b'];
    for (const id of real) f.writeSession(roots[0]!, { sessionId: id, end: true });
    for (const id of planted) f.writeSession(roots[0]!, { sessionId: id, end: true, mtimeMs: now - 3 * f.DAY });
    // a root without any: no warning for it
    for (const id of real) f.writeSession(roots[1]!, { sessionId: id, end: true });
    const cfg = f.writeConfig(
      T,
      roots
        .map((r) => `sessions:\n  - root: ${r}\n    retain: { max_sessions: 3 }\n`)
        .join('')
        .replace(/\nsessions:\n/g, '\n'),
    );
    for (const dry of [true, false]) {
      const r = f.runCli(['--json', '--config', cfg, ...(dry ? ['--dry-run'] : [])], T);
      expect(r.status, r.stderr).toBe(0);
      const rep = JSON.parse(r.stdout) as Report;
      const warned = rep.skipped.filter((s) => s.code === 'future_session_id');
      expect(warned).toHaveLength(1);
      expect(warned[0]).toMatchObject({ target: roots[0] });
      expect(warned[0]?.detail).toContain(planted[0]);
      expect(warned[0]?.detail).toContain('2 session names');
      expect(warned[0]?.detail).toContain(`(the first-ranked: ${planted[0]}, minted 10889-08-02 05:31:50 UTC)`);
      // the runtime's ranking: the two planted names and the newest real one stay
      const removed = rep.actions
        .filter((a) => a.kind === 'remove_session' && a.root === roots[0])
        .map((a) => a.target);
      expect(removed.sort()).toEqual(real.slice(0, 3).sort());
      expect(r.stderr).toContain('future_session_id');
    }
    expect(fs.readdirSync(roots[0]!).sort()).toEqual([real[3], ...planted].sort());
    // the next sweep warns again (once), the planted names still there
    const again = f.runCli(['--json', '--config', cfg], T);
    expect((JSON.parse(again.stdout) as Report).skipped.filter((s) => s.code === 'future_session_id')).toHaveLength(1);
  });
});
