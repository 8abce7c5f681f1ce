/**
 * The Executions port on aws-local-stepfunctions: the synthesized run and step definitions run in process, with
 * every Lambda Task mapped to a local handler (the same `createHandler(deps)` the Lambda uses) and task tokens
 * emulated. Execution names are unique per machine, as in Step Functions, so a duplicate start is harmless.
 */
import './polyfills.ts';
import { randomUUID } from 'node:crypto';
import { StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import { ConflictError } from '../../shared/errors.ts';
import type { Executions, MachineName, StartResult } from '../../shared/ports/executions.ts';
import { STEP_STATES } from '../constructs/state-names.ts';
import { type LocalTask, prepareDefinition, TIMEOUT_FIELD, TOKEN_PLACEHOLDER, withToken } from './local-asl.ts';
import { type AslDefinition, PLACEHOLDER_ACCOUNT, PLACEHOLDER_REGION } from './template.ts';

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
  /** Replaces the `Backoff` Wait of the step machine (milliseconds), so retries do not sleep in tests. */
  readonly backoffMs?: number;
  /**
   * Called for every state an execution enters (what Standard workflows bill as a state transition). Costs an event
   * log per execution, so only benchmarks and diagnostics pass it.
   */
  readonly onStateEntered?: (machine: MachineName, stateName: string) => void;
  /** Called when an execution fails (default: a line on stderr). */
  readonly onError?: (error: Error, execution: LocalExecutionInfo) => void;
}

export interface LocalExecutions extends Executions {
  /** Resolves when every execution has finished or waits for a task token that only an outside answer can end. */
  idle(): Promise<void>;
  list(): LocalExecutionInfo[];
  /** Aborts every running execution and retires every token; later starts are refused. */
  close(): void;
}

interface Entry {
  info: LocalExecutionInfo;
  abort: () => void;
  /** Callback Tasks whose handler returned and whose token is still open: the execution waits for the world. */
  parked: number;
}

interface Waiter {
  readonly entry: Entry;
  readonly resolve: (output: unknown) => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
  parked: boolean;
}

/** An error as the interpreter sees it: Retry and Catch match `name`; `message` becomes the Cause. */
class AslError extends Error {
  constructor(name: string, cause: string) {
    super(cause);
    this.name = name;
  }
}

/** `States.Runtime`: a broken definition or input; Step Functions neither retries nor catches it. */
class RuntimeFailure extends AslError {
  constructor(cause: string) {
    super('States.Runtime', cause);
  }
  get isCatchable(): boolean {
    return false;
  }
  get isRetryable(): boolean {
    return false;
  }
}

/** Lambda reports a function error as errorType = the error's name, and Cause = the JSON of the error. */
function lambdaError(error: unknown): AslError {
  const errorType = error instanceof Error ? error.name : typeof error;
  const errorMessage = error instanceof Error ? error.message : String(error);
  return new AslError(errorType, JSON.stringify({ errorType, errorMessage }));
}

async function countStates(
  machine: MachineName,
  logs: AsyncIterable<{ type: string; state?: { name?: string } }>,
  onStateEntered: (machine: MachineName, stateName: string) => void,
): Promise<void> {
  try {
    for await (const event of logs) if (event.type === 'StateEntered') onStateEntered(machine, event.state?.name ?? '');
  } catch {
    // The log ends with the execution's error; the execution itself reports it.
  }
}

const toJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value ?? null));

const EXECUTION_NAME = /^[A-Za-z0-9_-]{1,80}$/;

export function createLocalExecutions(options: LocalExecutionsOptions): LocalExecutions {
  const machines = {
    run: compile('run', options.definitions.run),
    step: compile('step', options.definitions.step),
  };
  const byKey = new Map<string, Entry>();
  const byId = new Map<string, Entry>();
  const waiters = new Map<string, Waiter>();
  let closed = false;
  let changed = deferred();
  const notify = (): void => {
    changed.resolve();
    changed = deferred();
  };
  const onError =
    options.onError ??
    ((error: Error, execution: LocalExecutionInfo) => {
      process.stderr.write(`cairn: ${execution.machine} execution ${execution.name} failed: ${error.message}\n`);
    });

  function compile(machine: MachineName, definition: AslDefinition) {
    const prepared = prepareDefinition(definition);
    const tasks = prepared.tasks.map((task) => bindHandler(machine, task));
    const stateMachine = new StateMachine(prepared.definition as unknown as StateMachineDefinition);
    return { stateMachine, tasks };
  }

  function bindHandler(machine: MachineName, task: LocalTask): { task: LocalTask; handler: LocalHandler } {
    if (task.kind === 'constant') return { task, handler: async () => task.value };
    const key = options.functionOf(task.functionName);
    if (key === undefined) throw new Error(`${machine} state ${task.stateName}: unknown function ${task.functionName}`);
    const handler = options.handlers[key];
    if (!handler) throw new Error(`${machine} state ${task.stateName}: no local handler for function key ${key}`);
    return { task, handler };
  }

  const finish = (entry: Entry, status: LocalExecutionStatus, extra: Partial<LocalExecutionInfo>): void => {
    if (entry.info.status !== 'RUNNING') return;
    entry.info = { ...entry.info, status, ...extra };
    for (const [token, waiter] of waiters) {
      if (waiter.entry !== entry) continue;
      waiters.delete(token);
      clearTimeout(waiter.timer);
      waiter.reject(new RuntimeFailure(`execution ${entry.info.name} ended`));
    }
    entry.parked = 0;
    notify();
  };

  const wait = (entry: Entry, stateName: string, token: string, seconds: number): Promise<unknown> =>
    new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(
        () => {
          if (!retire(token)) return;
          reject(
            new AslError('States.Timeout', `${stateName} timed out after ${seconds} s waiting for its task token`),
          );
        },
        Math.min(seconds * 1000, 2 ** 31 - 1),
      );
      waiters.set(token, { entry, resolve, reject, timer, parked: false });
    });

  /** Takes a token out of service; false when it was not open (answered, timed out or never minted). */
  const retire = (token: string): Waiter | undefined => {
    const waiter = waiters.get(token);
    if (!waiter) return undefined;
    waiters.delete(token);
    clearTimeout(waiter.timer);
    if (waiter.parked) waiter.entry.parked -= 1;
    return waiter;
  };

  function overridesFor(machine: MachineName, entry: Entry) {
    const handlers: Record<string, (input: unknown) => Promise<unknown>> = {};
    for (const { task, handler } of machines[machine].tasks) {
      handlers[task.stateName] = async (input: unknown): Promise<unknown> => {
        if (task.kind === 'constant') return task.value;
        const parameters = input as { Payload?: unknown; [TIMEOUT_FIELD]?: unknown };
        if (task.kind === 'function') return call(handler, input);
        if (task.kind === 'invoke') {
          return { Payload: await call(handler, parameters.Payload), StatusCode: 200, ExecutedVersion: '$LATEST' };
        }
        const timeoutSeconds = parameters[TIMEOUT_FIELD];
        if (typeof timeoutSeconds !== 'number' || !Number.isInteger(timeoutSeconds) || timeoutSeconds < 1) {
          throw new RuntimeFailure(`${task.stateName}: the timeout must be a positive integer, got ${timeoutSeconds}`);
        }
        const token = `${machine}-${randomUUID()}`;
        // The waiter exists before the handler runs: a handler may answer its own token at once.
        const answer = wait(entry, task.stateName, token, timeoutSeconds);
        // It may also be settled (timeout, stop) while the handler still runs and never be awaited.
        answer.catch(() => undefined);
        // Whichever ends the Task first wins: the answer (or the timeout), or the handler failing while it waits.
        const invoked = call(handler, withToken(parameters.Payload, token)).then(
          () => {
            const waiter = waiters.get(token);
            if (waiter) {
              waiter.parked = true;
              entry.parked += 1;
              notify();
            }
            return answer;
          },
          (error: unknown) => {
            if (retire(token)) throw error;
            return answer;
          },
        );
        return Promise.race([answer, invoked]);
      };
    }
    return handlers;
  }

  const call = async (handler: LocalHandler, payload: unknown): Promise<unknown> => {
    try {
      return toJson(await handler(payload));
    } catch (error) {
      throw lambdaError(error);
    }
  };

  const executions: LocalExecutions = {
    async start(machine, name, input): Promise<StartResult> {
      if (closed) throw new Error('the local executions are closed');
      if (!EXECUTION_NAME.test(name)) throw new AslError('InvalidName', `invalid execution name "${name}"`);
      const key = `${machine}:${name}`;
      const existing = byKey.get(key);
      if (existing) return { executionId: existing.info.executionId, started: false };
      const machineName = `cairn-local-${machine}`;
      const executionId = `arn:aws:states:${PLACEHOLDER_REGION}:${PLACEHOLDER_ACCOUNT}:execution:${machineName}:${name}`;
      const entry: Entry = { info: { executionId, name, machine, status: 'RUNNING' }, abort: () => {}, parked: 0 };
      byKey.set(key, entry);
      byId.set(executionId, entry);
      const { stateMachine } = machines[machine];
      const execution = stateMachine.run(toJson(input) as Record<string, never>, {
        overrides: {
          taskResourceLocalHandlers: overridesFor(machine, entry) as never,
          ...(options.backoffMs === undefined
            ? {}
            : { waitTimeOverrides: { [STEP_STATES.backoff]: options.backoffMs } }),
        },
        context: {
          Execution: { Id: executionId, Name: name },
          StateMachine: {
            Id: `arn:aws:states:${PLACEHOLDER_REGION}:${PLACEHOLDER_ACCOUNT}:stateMachine:${machineName}`,
            Name: machineName,
          },
          Task: { Token: TOKEN_PLACEHOLDER },
        },
        noThrowOnAbort: true,
      });
      entry.abort = execution.abort;
      if (options.onStateEntered) void countStates(machine, execution.eventLogs, options.onStateEntered);
      void execution.result.then(
        (output) => finish(entry, 'SUCCEEDED', { output }),
        (error: unknown) => {
          const cause = (error instanceof Error && error.cause instanceof Error ? error.cause : error) as Error;
          finish(entry, 'FAILED', { error: { error: cause.name, cause: cause.message } });
          onError(cause, entry.info);
        },
      );
      return { executionId, started: true };
    },

    async sendTaskSuccess(taskToken, output) {
      const waiter = retire(taskToken);
      if (!waiter) throw tokenNotOpen(taskToken);
      waiter.resolve(toJson(output));
    },

    async sendTaskFailure(taskToken, error, cause) {
      const waiter = retire(taskToken);
      if (!waiter) throw tokenNotOpen(taskToken);
      waiter.reject(new AslError(error, cause));
    },

    async stop(executionId, error, cause) {
      const entry = byId.get(executionId);
      if (entry?.info.status !== 'RUNNING') return;
      // Abort first: the interpreter then ends after the current state instead of following a Catch.
      entry.abort();
      finish(entry, 'ABORTED', { error: { error, cause } });
    },

    async idle() {
      for (;;) {
        const next = changed.promise;
        if (quiet()) {
          await new Promise((resolve) => setImmediate(resolve));
          if (quiet()) return;
          continue;
        }
        await next;
      }
    },

    list() {
      return [...byKey.values()].map((entry) => entry.info);
    },

    close() {
      closed = true;
      for (const entry of byKey.values()) {
        if (entry.info.status !== 'RUNNING') continue;
        entry.abort();
        finish(entry, 'ABORTED', { error: { error: 'Closed', cause: 'the local executions were closed' } });
      }
    },
  };

  const quiet = (): boolean =>
    [...byKey.values()].every((entry) => entry.info.status !== 'RUNNING' || entry.parked > 0);

  return executions;
}

function tokenNotOpen(taskToken: string): ConflictError {
  return new ConflictError('The task token is not open: it was answered, timed out or never issued', {
    context: { reason: 'TaskTimedOut', taskToken },
  });
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((res) => {
    resolve = res;
  });
  return { promise, resolve };
}
