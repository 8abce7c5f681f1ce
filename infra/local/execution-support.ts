/**
 * Small pieces of the embedded Executions adapter (local-executions.ts): following an execution's event log, the
 * error for a task token that is no longer open, and a promise resolved from outside.
 */
import { ConflictError } from '../../shared/errors.ts';

/** An event of aws-local-stepfunctions' execution log, as far as the adapter reads it. */
export type StateEvent = { type: string; timestamp: number; state?: { name?: string; input?: unknown } };

export async function followStates(
  logs: AsyncIterable<StateEvent>,
  onEntered: (event: StateEvent) => void,
): Promise<void> {
  try {
    for await (const event of logs) if (event.type === 'StateEntered') onEntered(event);
  } catch {
    // The log ends with the execution's error; the execution itself reports it.
  }
}

/** Answering a token that was answered, timed out or never issued (what SendTaskSuccess calls TaskTimedOut). */
export function tokenNotOpen(taskToken: string): ConflictError {
  return new ConflictError('The task token is not open: it was answered, timed out or never issued', {
    context: { reason: 'TaskTimedOut', taskToken },
  });
}

export function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((res) => {
    resolve = res;
  });
  return { promise, resolve };
}
