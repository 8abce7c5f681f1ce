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
import { type ExecutionJournal, executionKey, type OpenExecution } from './execution-journal.ts';
import {
  type LocalTask,
  prepareDefinition,
  startingAt,
  TIMEOUT_FIELD,
  TOKEN_PLACEHOLDER,
  waitEndsAt,
  withToken,
} from './local-asl.ts';
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
  /** Aborts every running execution and retires every token; later starts are refused. */
  close(): void;
  /** Carries on every execution the journal recovered from the state it was in (nothing without a journal). */
  resume(): ResumedExecution[];
}

interface Entry {
  info: LocalExecutionInfo;
  abort: () => void;
  /** Callback Tasks whose handler returned and whose token is still open: the execution waits for the world. */
  parked: number;
  /** The journal's count of states entered, and the state entered last (journaled executions only). */
  seq: number;
  current?: string;
  /** Resolved when the journal has seen the next state entered. */
  entered?: () => void;
  /** A token handed out before a restart: the first entry of its state waits on it again instead of a new one. */
  resumeToken?: { readonly state: string; readonly token: string; readonly until: number };
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

type StateEvent = { type: string; timestamp: number; state?: { name?: string; input?: unknown } };

async function followStates(logs: AsyncIterable<StateEvent>, onEntered: (event: StateEvent) => void): Promise<void> {
  try {
    for await (const event of logs) if (event.type === 'StateEntered') onEntered(event);
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
    // The same machine entered at another state: how a resumed execution carries on (built when first needed).
    const variants = new Map<string, StateMachine>();
    const at = (state: string | undefined): StateMachine => {
      if (state === undefined || state === prepared.definition.StartAt) return stateMachine;
      let variant = variants.get(state);
      if (!variant) {
        // Validated as a whole above; entered elsewhere, the states before `state` are unreachable, which the
        // validator would refuse.
        variant = new StateMachine(startingAt(prepared.definition, state) as unknown as StateMachineDefinition, {
          validationOptions: { noValidate: true },
        });
        variants.set(state, variant);
      }
      return variant;
    };
    const { retryIntervalMs } = options;
    const retryIntervals =
      retryIntervalMs === undefined
        ? undefined
        : Object.fromEntries(
            Object.entries(prepared.definition.States)
              .filter(([, state]) => Array.isArray((state as { Retry?: unknown }).Retry))
              .map(([name]) => [name, retryIntervalMs]),
          );
    return { stateMachine, tasks, definition: prepared.definition, at, retryIntervals };
  }

  function bindHandler(machine: MachineName, task: LocalTask): { task: LocalTask; handler: LocalHandler } {
    if (task.kind === 'constant') return { task, handler: async () => task.value };
    const key = options.functionOf(task.functionName);
    if (key === undefined) throw new Error(`${machine} state ${task.stateName}: unknown function ${task.functionName}`);
    const handler = options.handlers[key];
    if (!handler) throw new Error(`${machine} state ${task.stateName}: no local handler for function key ${key}`);
    return { task, handler };
  }

  const { journal } = options;
  const finish = (entry: Entry, status: LocalExecutionStatus, extra: Partial<LocalExecutionInfo>): void => {
    if (entry.info.status !== 'RUNNING') return;
    entry.info = { ...entry.info, status, ...extra };
    // Closing the stack aborts what runs; those executions carry on at the next boot.
    if (!closed) journal?.append({ t: 'end', key: executionKey(entry.info.machine, entry.info.name) });
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
        const resumed = entry.resumeToken?.state === task.stateName ? entry.resumeToken : undefined;
        if (resumed) {
          entry.resumeToken = undefined;
          // Its handler ran before the restart and the world holds this token (an approval, the run's waiter): wait
          // on it again for what is left of its timeout.
          const remainingSeconds = Math.max(0, resumed.until - Date.now()) / 1000;
          const answer = wait(entry, task.stateName, resumed.token, remainingSeconds);
          park(entry, resumed.token);
          return answer;
        }
        const token = `${machine}-${randomUUID()}`;
        const until = Date.now() + timeoutSeconds * 1000;
        // The waiter exists before the handler runs: a handler may answer its own token at once.
        const answer = wait(entry, task.stateName, token, timeoutSeconds);
        // It may also be settled (timeout, stop) while the handler still runs and never be awaited.
        answer.catch(() => undefined);
        // Whichever ends the Task first wins: the answer (or the timeout), or the handler failing while it waits.
        const invoked = call(handler, withToken(parameters.Payload, token)).then(
          () => {
            if (park(entry, token) && journal) void journalToken(entry, task.stateName, token, until);
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

  /** The execution now waits on `token` for the world (its handler returned): false when the token is closed. */
  const park = (entry: Entry, token: string): boolean => {
    const waiter = waiters.get(token);
    if (!waiter) return false;
    waiter.parked = true;
    entry.parked += 1;
    notify();
    return true;
  };

  /** Records the token a callback state waits on, once the journal has recorded entering that state. */
  const journalToken = async (entry: Entry, state: string, token: string, until: number): Promise<void> => {
    while (entry.current !== state && entry.info.status === 'RUNNING')
      await new Promise<void>((resolve) => {
        entry.entered = resolve;
      });
    if (!waiters.has(token)) return;
    const key = executionKey(entry.info.machine, entry.info.name);
    journal?.append({ t: 'parked', key, state, seq: entry.seq, token, until });
  };

  /** Journals (and counts) each state an execution enters, with the raw input that enters it again. */
  const onEntered = (entry: Entry, event: StateEvent): void => {
    const state = event.state?.name ?? '';
    options.onStateEntered?.(entry.info.machine, state);
    if (!journal) return;
    entry.seq += 1;
    entry.current = state;
    const definition = machines[entry.info.machine].definition.States[state];
    const override = state === STEP_STATES.backoff ? options.backoffMs : undefined;
    const waitUntil = definition ? waitEndsAt(definition, event.state?.input, event.timestamp, override) : undefined;
    const key = executionKey(entry.info.machine, entry.info.name);
    journal.append({
      t: 'state',
      key,
      state,
      seq: entry.seq,
      input: event.state?.input ?? null,
      ...(waitUntil === undefined ? {} : { waitUntil }),
    });
    const entered = entry.entered;
    entry.entered = undefined;
    entered?.();
  };

  /** Runs an execution: from its start, or (resumed) from the state the journal says it was in. */
  const launch = (machine: MachineName, name: string, input: unknown, from?: OpenExecution): Entry => {
    const key = `${machine}:${name}`;
    const machineName = `cairn-local-${machine}`;
    const executionId = `arn:aws:states:${PLACEHOLDER_REGION}:${PLACEHOLDER_ACCOUNT}:execution:${machineName}:${name}`;
    const entry: Entry = {
      info: { executionId, name, machine, status: 'RUNNING' },
      abort: () => {},
      parked: 0,
      seq: from?.last ? from.last.seq - 1 : 0,
    };
    if (from?.parked && from.last && from.parked.seq === from.last.seq) entry.resumeToken = from.parked;
    byKey.set(key, entry);
    byId.set(executionId, entry);
    if (!from) journal?.append({ t: 'start', machine, name, input });
    const compiled = machines[machine];
    const waits: Record<string, number> = {};
    if (options.backoffMs !== undefined) waits[STEP_STATES.backoff] = options.backoffMs;
    const resumedWait = from?.last?.waitUntil;
    if (from?.last && resumedWait !== undefined) {
      // The Wait it was in waits only what is left of it, once; a later entry of the same state waits in full.
      const state = from.last.state;
      const later = waits[state];
      let first = true;
      Object.defineProperty(waits, state, {
        enumerable: true,
        get: () => {
          if (!first) return later;
          first = false;
          return Math.max(0, resumedWait - Date.now());
        },
      });
    }
    const execution = compiled.at(from?.last?.state).run(toJson(from?.last ? from.last.input : input) as never, {
      overrides: {
        taskResourceLocalHandlers: overridesFor(machine, entry) as never,
        ...(Object.keys(waits).length === 0 ? {} : { waitTimeOverrides: waits }),
        ...(compiled.retryIntervals === undefined ? {} : { retryIntervalOverrides: compiled.retryIntervals }),
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
    if (options.onStateEntered || journal)
      void followStates(execution.eventLogs as AsyncIterable<StateEvent>, (event) => onEntered(entry, event));
    void execution.result.then(
      (output) => finish(entry, 'SUCCEEDED', { output }),
      (error: unknown) => {
        const cause = (error instanceof Error && error.cause instanceof Error ? error.cause : error) as Error;
        finish(entry, 'FAILED', { error: { error: cause.name, cause: cause.message } });
        onError(cause, entry.info);
      },
    );
    return entry;
  };

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
      const existing = byKey.get(`${machine}:${name}`);
      if (existing) return { executionId: existing.info.executionId, started: false };
      return { executionId: launch(machine, name, input).info.executionId, started: true };
    },

    resume() {
      const resumed: ResumedExecution[] = [];
      for (const open of journal?.recovered ?? []) {
        if (byKey.has(`${open.machine}:${open.name}`) || !(open.machine in machines)) continue;
        launch(open.machine, open.name, open.input, open);
        const { machine, name, parked } = open;
        const state = open.last?.state;
        const now = Date.now();
        if (parked && parked.seq === open.last?.seq)
          resumed.push({ machine, name, state, kind: 'token', remainingMs: Math.max(0, parked.until - now) });
        else if (open.last?.waitUntil !== undefined)
          resumed.push({ machine, name, state, kind: 'wait', remainingMs: Math.max(0, open.last.waitUntil - now) });
        else resumed.push({ machine, name, ...(state === undefined ? {} : { state }), kind: 'run' });
      }
      return resumed;
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
