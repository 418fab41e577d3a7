// What a sweep did, or would do, item by item: the actions of the report (src/sweep/report.ts)
// and of `--json`. Types only.
import type { BudgetReason } from '../plan/budget.js';

export interface HeldAt {
  until_ms: number;
  path: string;
}

export type Action =
  /**
   * A session held by the undo window (`held`) or removed for good. `condemned_by`: the rule this
   * sweep would have held it for, when keep_free took it for good instead.
   */
  | {
      kind: 'remove_session';
      root: string;
      target: string;
      reason: 'max_age' | 'max_sessions' | BudgetReason;
      bytes: number;
      condemned_by?: 'max_age' | 'max_sessions' | 'max_bytes';
      held?: HeldAt;
    }
  | {
      kind: 'remove_record';
      record: string;
      target: string;
      reason: 'max_age' | BudgetReason;
      path: string;
      bytes: number;
      condemned_by?: 'max_age' | 'max_sessions' | 'max_bytes';
      held?: HeldAt;
    }
  /** an orphaned child workdir removed under its root's `children: { max_age }` (`age_ms`: since its last visible write) */
  | {
      kind: 'remove_orphan_workdir';
      root: string;
      target: string;
      path: string;
      reason: 'children_max_age';
      bytes: number;
      age_ms: number;
    }
  /** a child workdir or `wrk_` log that went with its parent session (`parent_session`), docs/design.md §9a */
  | {
      kind: 'remove_child_workdir' | 'remove_work_log';
      root: string;
      target: string;
      parent_session: string;
      path: string;
      reason: 'max_age' | 'max_sessions' | BudgetReason;
      bytes: number;
      held?: HeldAt;
    }
  | {
      kind: 'truncate_record';
      record: string;
      target: string;
      reason: 'max_messages';
      messages_dropped: number;
      kept: number;
      path: string;
      bytes: number;
      /** Present when a racing writer's lines had to be placed after newer ones (they are in the record). */
      concurrent_append?: { lines_out_of_order: number };
      /** The dropped lines, held by the undo window. */
      held?: HeldAt;
    }
  /**
   * A held item deleted for good: its window passed (`expired`), or keep_free needed the space.
   * `held_kind: unreadable`: an item of `<home>/gc/quarantine` whose item.json could not be read (its
   * target is then the item's entry name, its origin `?`).
   */
  | {
      kind: 'purge_quarantine';
      store: 'sessions' | 'records';
      origin: string;
      target: string;
      held_kind: 'session' | 'context' | 'truncation' | 'unreadable';
      reason: 'expired' | 'keep_free';
      path: string;
      bytes: number;
    }
  | {
      kind: 'shell_lost';
      /** the session whose trace gets the `shell_lost` line */
      target: string;
      root: string;
      work_id: string;
      /** shown bounded (src/sweep/reconcile.ts shownText: whole up to 100 characters, else its ends and length) */
      binary: string;
      /** the binary's whole length (UTF-8 bytes) */
      binary_bytes: number;
      /** shown bounded, as `binary` */
      command: string;
      /** the command's whole length (UTF-8 bytes) */
      command_bytes: number;
      detached_at_ms: number;
      task_id: string | null;
    }
  | { kind: 'repair_torn_tail'; record: string; target: string; path: string }
  | { kind: 'chmod'; path: string; from: string; to: string }
  /** code: process_interrupted for what a killed run left; io_error for a removal that failed earlier */
  | {
      kind: 'remove_debris';
      path: string;
      code: 'process_interrupted' | 'io_error' | 'runtime_debris';
      detail: string;
      bytes: number;
    };
