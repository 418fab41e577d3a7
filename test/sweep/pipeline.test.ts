// The sweep's steps: each has its own name (the report's `steps`) and its own words for the
// progress line, declared with the step, so a new step cannot show up as a bare name.
import { describe, expect, it } from 'vitest';
import { SWEEP_STEPS } from '../../src/sweep/pipeline.js';

describe('the sweep steps', () => {
  it('each has a distinct name and a distinct label in words', () => {
    const names = SWEEP_STEPS.map((s) => s.name);
    const labels = SWEEP_STEPS.map((s) => s.label);
    expect(new Set(names).size).toBe(names.length);
    expect(new Set(labels).size).toBe(labels.length);
    for (const s of SWEEP_STEPS) {
      expect(s.label, s.name).toMatch(/^[a-z][a-z ]+[a-z]$/);
      expect(s.label, s.name).not.toContain('_');
    }
    expect(SWEEP_STEPS.find((s) => s.name === 'quarantine')?.label).toBe('purging the undo window');
    expect(SWEEP_STEPS.find((s) => s.name === 'budget')?.label).toBe('keeping the disk budgets');
  });
});
