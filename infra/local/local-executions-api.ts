/**
 * What the embedded Executions adapter (local-executions.ts) offers beyond the Executions port, and what it is
 * built from: the machines' definitions, a handler per Lambda function, and the runtime's options.
 */
import type { Executions, MachineName } from '../../shared/ports/executions.ts';
import type { ExecutionJournal } from './execution-journal.ts';
import type { ConcurrencyGate } from './quotas/concurrency-gate.ts';
import type { AslDefinition } from './template.ts';

export type LocalHandler = (payload: unknown) => Promise<unknown>;
export type LocalExecutionStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'ABORTED';

export interface LocalExecutionInfo {
  readonly executionId: string;
  readonly name: string;
  readonly machine: MachineName;
  readonly status: LocalExecutionStatus;
  readonly output?: unknown;
  /** Why it failed or was stopped: the ASL error name and cause. */
  readonly error?: { readonly error: string; readonly cause: string };
}

export interface LocalExecutionsOptions {
  readonly definitions: Readonly<Record<MachineName, AslDefinition>>;
  /** Function key of a Lambda ARN in the ASL (from `extractStateMachines`). */
  readonly functionOf: (resource: string) => string | undefined;
  /** Function key → handler; every function a Task calls must have one. */
  readonly handlers: Readonly<Record<string, LocalHandler>>;
  /**
   * Replaces the `Backoff` Wait of the step machine and the Tasks' waits for capacity (milliseconds), so retries do not
   * sleep in tests.
   */
  readonly backoffMs?: number;
  /** Replaces the pause of every Task's Retry (milliseconds): platform faults are retried at once (tests, chaos). */
  readonly retryIntervalMs?: number;
  /**
   * Called for every state an execution enters (what Standard workflows bill as a state transition). Costs an event
   * log per execution, so only benchmarks and diagnostics pass it.
   */
  readonly onStateEntered?: (machine: MachineName, stateName: string) => void;
  /** Called when an execution fails (default: a line on stderr). */
  readonly onError?: (error: Error, execution: LocalExecutionInfo) => void;
  /**
   * Keeps the open executions durably (the data directory): each start, state entered, token handed out and end.
   * `resume()` carries on the executions it recovered.
   */
  readonly journal?: ExecutionJournal;
  /**
   * Lambda's concurrency per function key (lambda-concurrency.ts): a Task invoking a function already running this
   * many times is throttled (`Lambda.TooManyRequestsException`, retried by the machines). Absent: no limit.
   */
  readonly concurrency?: Readonly<Record<string, number>>;
  /**
   * The account's Lambda concurrency, shared by every function a Task invokes (quotas/aws-quotas.ts): a Task that
   * finds it full is throttled (`Lambda.TooManyRequestsException`); `onThrottle` is told. Absent: no account limit.
   */
  readonly accountConcurrency?: { readonly gate: ConcurrencyGate; readonly onThrottle: () => void };
}

/** An execution carried on after a restart, and where. */
export interface ResumedExecution {
  readonly machine: MachineName;
  readonly name: string;
  /** The state it carries on from (absent: from its start). */
  readonly state?: string;
  /** What it does there: waits the rest of a Wait, waits again on its task token, or runs the state again. */
  readonly kind: 'wait' | 'token' | 'run';
  /** Milliseconds left of the wait or of the token's timeout. */
  readonly remainingMs?: number;
}

export interface LocalExecutions extends Executions {
  /** Resolves when every execution has finished or waits for a task token that only an outside answer can end. */
  idle(): Promise<void>;
  list(): LocalExecutionInfo[];
  /** Invocations refused so far by each function's concurrency limit (`concurrency`), by function key. */
  throttles(): Readonly<Record<string, number>>;
  /** Aborts every running execution and retires every token; later starts are refused. */
  close(): void;
  /** Carries on every execution the journal recovered from the state it was in (nothing without a journal). */
  resume(): ResumedExecution[];
}
