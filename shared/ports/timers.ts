/**
 * Waking a run later: a command delivered to its mailbox at a given time (a replan watch, a held revision's
 * deadline). Deployed, a timer is durable (an execution of the timer state machine, or a one-time schedule);
 * embedded, the stack's clock. Scheduling the same name twice is harmless.
 */
import type { RunCommand } from '../engine/run/commands.ts';

export interface Timers {
  schedule(runId: string, name: string, at: string, command: RunCommand): Promise<void>;
}
