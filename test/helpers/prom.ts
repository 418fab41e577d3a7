// Reads Prometheus text format with a maintained parser (parse-prometheus-text-format, the one
// prom-client users test with), plus the checks it does not make itself: every family typed and
// documented, no family twice, no sample lost to a duplicate series, every value a finite number.
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { expect } from 'vitest';

export interface PromSample {
  labels: Record<string, string>;
  value: number;
}

export function parseProm(text: string): Map<string, { type: string; help: string; samples: PromSample[] }> {
  const families = parsePrometheusTextFormat(text);
  const out = new Map<string, { type: string; help: string; samples: PromSample[] }>();
  let samples = 0;
  for (const f of families) {
    expect(out.has(f.name), `family ${f.name} appears once`).toBe(false);
    expect(f.name).toMatch(/^[a-zA-Z_:][a-zA-Z0-9_:]*$/);
    expect(f.help, `${f.name} has HELP`).not.toBe('');
    expect(f.type, `${f.name} has TYPE`).not.toBe('UNTYPED');
    const list = f.metrics.map((m) => {
      const value = Number(m.value);
      expect(m.value, `${f.name} value`).toMatch(/^-?[0-9.e+-]+$/);
      expect(Number.isFinite(value)).toBe(true);
      return { labels: m.labels ?? {}, value };
    });
    samples += list.length;
    out.set(f.name, { type: f.type, help: f.help, samples: list });
  }
  const lines = text.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
  expect(samples, 'every sample line is its own series').toBe(lines.length);
  return out;
}

/** The value of one series (labels must match exactly), or undefined. */
export function promValue(
  m: ReturnType<typeof parseProm>,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const want = JSON.stringify(Object.entries(labels).sort());
  return m.get(name)?.samples.find((s) => JSON.stringify(Object.entries(s.labels).sort()) === want)?.value;
}
