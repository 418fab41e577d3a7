// Iteration counts for the reliability suite: reduced under `npm test`, full under
// `npm run test:soak` (MURMUR_GC_SOAK=1). Each test prints its figures so the soak run can be quoted.
export const SOAK = process.env['MURMUR_GC_SOAK'] === '1';

/** `reduced` in the default run, `full` in the soak run. */
export function count(reduced: number, full: number): number {
  return SOAK ? full : reduced;
}

/** One line of figures on stderr (ids, counts and timings only). */
export function figures(name: string, data: Record<string, number | string | boolean>): void {
  process.stderr.write(
    `[reliability] ${name}: ${Object.entries(data)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')}${SOAK ? ' (soak)' : ''}\n`,
  );
}
