// A dry run with nothing to sweep, answered without the pipeline, reports what the pipeline
// reports: the same fields in the same order, the same message, one `lock` step.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/log.js';
import { runSweep } from '../../src/sweep/pipeline.js';
import { dryRunIfNothing } from '../../src/sweep/nothing.js';
import type { SweepReport } from '../../src/sweep/report.js';
import { rmrf, tempDir } from '../helpers/fixtures.js';

let dir: string;
beforeAll(() => {
  dir = tempDir('nothing');
});
afterAll(() => rmrf(dir));

/** The report without what depends on the clock. */
function timeless(r: SweepReport): string {
  return JSON.stringify({ ...r, started_ms: 0, duration_ms: 0, steps: r.steps?.map((s) => ({ ...s, ms: 0 })) });
}

describe('dry run with nothing to sweep', () => {
  it('is the report the pipeline makes, and is answered only when there is nothing', async () => {
    const user = path.join(dir, 'user');
    fs.mkdirSync(user, { mode: 0o700 });
    const config = await loadConfig({ env: { HOME: user, XDG_CONFIG_HOME: user }, cwd: dir });
    const fast = await dryRunIfNothing(config);
    const full = await runSweep({ config, dryRun: true, log: createLogger({ level: 'silent' }) });
    expect(fast).toBeDefined();
    expect(timeless(fast!)).toBe(timeless(full));
    expect(fast!.message).toContain('nothing to sweep');

    fs.mkdirSync(config.home, { mode: 0o700 });
    expect(await dryRunIfNothing(config)).toBeUndefined();
  });
});
