// `murmur-gc daemon|status|history` (placeholder wiring; implemented in its own issue).
import type { Command } from 'commander';

export function registerDaemonCommands(program: Command): void {
  void program;
}
