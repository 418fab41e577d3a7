// status's words: times formatted like every other time it prints.
import { describe, expect, it } from 'vitest';
import { judgeDaemon } from '../../src/commands/status.js';

const T0 = 1_750_000_000_000;

describe('status words', () => {
  it('a stopped daemon is "stopped at" a formatted UTC time, not an ISO string', async () => {
    const v = await judgeDaemon(
      { pid: 1, start_time: null, started_ms: T0 - 60_000, stopped_ms: T0, config: null, schedule: null } as never,
      T0 + 180_000,
    );
    expect(v.why).toBe('the daemon (pid 1) stopped at 2025-06-15 15:06:40 UTC (3 min ago)');
  });
});
