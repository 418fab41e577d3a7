// Signals that arrive while the daemon is still starting (loading modules and its configuration).
// Guarantees: from the moment this module is evaluated — the first thing `bin.ts` does for the
// `daemon` command, before the rest of the CLI is even loaded — SIGTERM, SIGINT and SIGHUP no
// longer kill the process with their default action: they are recorded, and handed to the daemon
// once its own handlers are installed (a stop stops it cleanly, a reload reloads). Other commands
// keep the default signal behaviour.
const RECORDED = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

const pending: NodeJS.Signals[] = [];
const handlers = new Map<NodeJS.Signals, () => void>();

/** Start recording (idempotent). */
export function recordEarlySignals(): void {
  if (handlers.size > 0) return;
  for (const sig of RECORDED) {
    const fn = () => void pending.push(sig);
    handlers.set(sig, fn);
    process.on(sig, fn);
  }
}

/** True when a stop signal (SIGTERM/SIGINT) has been recorded. */
export function stopRequested(): boolean {
  return pending.some((s) => s !== 'SIGHUP');
}

/** Stop recording; returns what arrived meanwhile, in order. */
export function releaseEarlySignals(): NodeJS.Signals[] {
  for (const [sig, fn] of handlers) process.off(sig, fn);
  handlers.clear();
  return pending.splice(0);
}

// Evaluated first by bin.ts: a daemon is protected before its configuration is read.
if (process.argv.slice(2).includes('daemon')) recordEarlySignals();
