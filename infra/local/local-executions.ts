/**
 * The Executions port on aws-local-stepfunctions: the synthesized run and step definitions run in process, with
 * every Lambda Task mapped to a local handler (the same `createHandler(deps)` the Lambda uses) and task tokens
 * emulated. Execution names are unique per machine, as in Step Functions, so a duplicate start is harmless.
 */
import { terminalLine } from '../../shared/terminal-text.ts';
import './polyfills.ts';
import { randomUUID } from 'node:crypto';
import type { MachineName, StartResult } from '../../shared/ports/executions.ts';
import { CAPACITY_TASKS, capacityStates, STEP_STATES } from '../constructs/state-names.ts';
import { AslError, RuntimeFailure } from './asl-errors.ts';
import { checkApiPayload, checkExecutionName, checkFailureFields } from './aws-limits.ts';
import { executionKey, type OpenExecution } from './execution-journal.ts';
import { deferred, followStates, type StateEvent, tokenNotOpen } from './execution-support.ts';
import { type LocalTask, TIMEOUT_FIELD, TOKEN_PLACEHOLDER, waitEndsAt, withToken } from './local-asl.ts';
import type {
  LocalExecutionInfo,
  LocalExecutionStatus,
  LocalExecutions,
  LocalExecutionsOptions,
  LocalHandler,
  ResumedExecution,
} from './local-executions-api.ts';
import { compileMachines, invokeLambda, toJson } from './local-machines.ts';
import { checkTaskResult, takeTaskInput } from './task-payloads.ts';
import { PLACEHOLDER_ACCOUNT, PLACEHOLDER_REGION } from './template.ts';

/** The Waits `backoffMs` replaces: the step machine's Backoff and every wait for capacity. */
const SHORTENED_WAITS: ReadonlySet<string> = new Set([
  STEP_STATES.backoff,
  ...CAPACITY_TASKS.map((task) => capacityStates(task).wait),
]);

export type {
  LocalExecutionInfo,
  LocalExecutionStatus,
  LocalExecutions,
  LocalExecutionsOptions,
  LocalHandler,
  ResumedExecution,
} from './local-executions-api.ts';

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

export function createLocalExecutions(options: LocalExecutionsOptions): LocalExecutions {
  const machines = compileMachines(options);
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
      process.stderr.write(
        `${terminalLine(`cairn: ${execution.machine} execution ${execution.name} failed: ${error.message}`)}\n`,
      );
    });

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
        // Step Functions' payload limits at this Task: its input after Parameters, its result, the state's output.
        const taken = takeTaskInput(task, input);
        const result = await runTask(entry, machine, task, handler, taken.parameters);
        checkTaskResult(task, taken, result);
        return result;
      };
    }
    return handlers;
  }

  /** What the Task's resource answers: the Lambda's result, or (callback) the answer its token gets. */
  const runTask = async (
    entry: Entry,
    machine: MachineName,
    task: Exclude<LocalTask, { kind: 'constant' }>,
    handler: LocalHandler,
    input: unknown,
  ): Promise<unknown> => {
    const parameters = input as { Payload?: unknown; [TIMEOUT_FIELD]?: unknown };
    if (task.kind === 'function') return invokeLambda(handler, input);
    if (task.kind === 'invoke') {
      return { Payload: await invokeLambda(handler, parameters.Payload), StatusCode: 200, ExecutedVersion: '$LATEST' };
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
    const invoked = invokeLambda(handler, withToken(parameters.Payload, token)).then(
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
    const override = SHORTENED_WAITS.has(state) ? options.backoffMs : undefined;
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
    if (options.backoffMs !== undefined) for (const state of SHORTENED_WAITS) waits[state] = options.backoffMs;
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

  /**
   * StartExecution: the seam every start goes through (a wrapper may make it fail or repeat, as the service can).
   * AWS's checks come first: the name, then the input's size; then a duplicate name answers the execution it names.
   */
  const startExecution = async (
    machine: MachineName,
    name: string,
    input: Readonly<Record<string, unknown>>,
  ): Promise<StartResult> => {
    if (closed) throw new Error('the local executions are closed');
    checkExecutionName(name);
    checkApiPayload('input', input);
    const existing = byKey.get(`${machine}:${name}`);
    if (existing) return { executionId: existing.info.executionId, started: false };
    return { executionId: launch(machine, name, input).info.executionId, started: true };
  };

  const executions: LocalExecutions = {
    start: startExecution,

    resume() {
      const resumed: ResumedExecution[] = [];
      for (const open of journal?.recovered ?? []) {
        if (byKey.has(`${open.machine}:${open.name}`) || (open.machine !== 'run' && open.machine !== 'step')) continue;
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
      checkApiPayload('output', output);
      const waiter = retire(taskToken);
      if (!waiter) throw tokenNotOpen(taskToken);
      waiter.resolve(toJson(output));
    },

    async sendTaskFailure(taskToken, error, cause) {
      checkFailureFields(error, cause);
      const waiter = retire(taskToken);
      if (!waiter) throw tokenNotOpen(taskToken);
      waiter.reject(new AslError(error, cause));
    },

    async stop(executionId, error, cause) {
      checkFailureFields(error, cause);
      const entry = byId.get(executionId);
      if (entry?.info.status !== 'RUNNING') return;
      // Abort first: the interpreter then ends after the current state instead of following a Catch.
      entry.abort();
      finish(entry, 'ABORTED', { error: { error, cause } });
    },

    async stopNamed(machine, name, error, cause) {
      const entry = byKey.get(`${machine}:${name}`);
      if (entry !== undefined) await executions.stop(entry.info.executionId, error, cause);
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

    throttles() {
      return machines.throttles();
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
