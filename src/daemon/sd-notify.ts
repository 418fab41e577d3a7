// Start-up notification for systemd's `Type=notify` (the shipped murmur-gc.service, docs/daemon.md).
// Guarantees:
// - Only when the service manager asked for it (NOTIFY_SOCKET set and not empty): otherwise nothing
//   is spawned and nothing is sent.
// - `READY=1` (with `MAINPID=` this process) is sent by `systemd-notify --ready --pid=<pid>`, which
//   Node needs because it has no unix datagram sockets. The caller sends it only once its signal
//   handlers are installed: systemd runs no reload (ExecReload=, the SIGHUP) before the unit is
//   ready, so a reload never reaches a process that would die of it. systemd-notify
//   waits until the manager has processed the message (its default barrier; systemd 252 has it), so the
//   message is attributed to the unit even though it comes from a short-lived child
//   (NotifyAccess=all in the unit).
// - NOTIFY_SOCKET is removed from this process's environment once read: no other child of the
//   daemon can report for it.
// - Never throws: the outcome (sent, or why not) is the promise's value, for the caller to log.
import { spawn } from 'node:child_process';

export interface NotifyOutcome {
  sent: boolean;
  /** why it was not sent (a failed spawn, systemd-notify's exit status and stderr's first line) */
  detail?: string;
}

/** After this long systemd-notify is given up on (its own barrier timeout is 5 s). */
const NOTIFY_TIMEOUT_MS = 15_000;

/**
 * Tells the service manager the daemon is ready, when one asked (NOTIFY_SOCKET); undefined when
 * none did. `command` is for tests.
 */
export function notifyReady(
  env: NodeJS.ProcessEnv = process.env,
  command = 'systemd-notify',
): Promise<NotifyOutcome> | undefined {
  const socket = env['NOTIFY_SOCKET'];
  delete env['NOTIFY_SOCKET'];
  if (socket === undefined || socket === '') return undefined;
  return new Promise<NotifyOutcome>((resolve) => {
    let stderr = '';
    const child = spawn(command, ['--ready', `--pid=${process.pid}`], {
      env: { ...env, NOTIFY_SOCKET: socket },
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: NOTIFY_TIMEOUT_MS,
    });
    child.stderr.on('data', (d: Buffer) => {
      if (stderr.length < 1024) stderr += d.toString('utf8');
    });
    child.on('error', (err) => resolve({ sent: false, detail: `${command} could not be run: ${err.message}` }));
    child.on('close', (code, signal) => {
      if (code === 0) resolve({ sent: true });
      else {
        const why = stderr.split('\n').find((l) => l.trim() !== '') ?? '';
        resolve({
          sent: false,
          detail: `${command} ${signal !== null ? `was killed by ${signal}` : `exited with ${String(code)}`}${why !== '' ? `: ${why.trim()}` : ''}`,
        });
      }
    });
    child.unref();
    (child.stderr as unknown as { unref?: () => void }).unref?.();
  });
}
