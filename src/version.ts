// The package version, read once from package.json next to dist/ (used in audit session_start).
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const pkg = require('../package.json') as { version: string };

export const VERSION: string = pkg.version;

/** The on-disk formats of the Murmur runtime this build reads and writes (`murmur-gc --version`). */
export const RUNTIME_FORMATS: readonly string[] = [
  'session traces <root>/ses_*/trace.jsonl (observability schema: session_start … session_end, shell_detached/shell_lost, retention)',
  'conversation records <home>/conversations/<store>/<ctx>/conversation.jsonl (header line with capsule and truncated marker, message lines)',
  'running records <home>/running/*.json (pid, start time token, workdir)',
  'manifests murmur.yaml (trace.retain, context.retain: max_sessions, max_age, max_messages)',
];

/** `murmur-gc --version`: version, Node version, runtime formats understood. */
export function versionText(nodeVersion: string = process.version): string {
  return [
    `murmur-gc ${VERSION}`,
    `node ${nodeVersion}`,
    'runtime formats understood:',
    ...RUNTIME_FORMATS.map((f) => `  ${f}`),
  ].join('\n');
}
