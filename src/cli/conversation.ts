// `murmur-gc conversation ls|rm|truncate` (placeholder wiring; implemented in its own issue).
import type { Command } from 'commander';

export function registerConversationCommands(program: Command): void {
  void program;
}
