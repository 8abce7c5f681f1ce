/**
 * The machines of the embedded Executions adapter (local-executions.ts), compiled once: each synthesized definition
 * made runnable by aws-local-stepfunctions (local-asl.ts), every Lambda Task bound to its local handler behind the
 * function's concurrency limit, and the synchronous Lambda invocation with its 6 MB limits each way.
 */
import { StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import type { MachineName } from '../../shared/ports/executions.ts';
import { AslError, lambdaError } from './asl-errors.ts';
import { evaluatePlainJsonPaths } from './asl-json-path.ts';
import { checkLambdaRequest, checkLambdaResponse } from './aws-limits.ts';
import { accountThrottled, type ConcurrencyLimit, limitConcurrency } from './lambda-concurrency.ts';
import { type LocalTask, prepareDefinition, startingAt } from './local-asl.ts';
import type { LocalExecutionsOptions, LocalHandler } from './local-executions-api.ts';
import { loopTurns } from './loop-turns.ts';
import type { AslDefinition } from './template.ts';

evaluatePlainJsonPaths();

/** A copy of a value as JSON carries it between states and services. */
export const toJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value ?? null));

export interface BoundTask {
  readonly task: LocalTask;
  readonly handler: LocalHandler;
}

export interface CompiledMachine {
  readonly stateMachine: StateMachine;
  readonly tasks: readonly BoundTask[];
  readonly definition: AslDefinition;
  /** The same machine entered at another state: how a resumed execution carries on (built when first needed). */
  readonly at: (state: string | undefined) => StateMachine;
  /** Every Retry's pause replaced (options.retryIntervalMs), by state name; undefined to keep the definition's. */
  readonly retryIntervals: Record<string, number> | undefined;
}

export interface LocalMachines {
  readonly run: CompiledMachine;
  readonly step: CompiledMachine;
  /** Invocations refused so far by each function's concurrency limit, by function key. */
  throttles(): Readonly<Record<string, number>>;
}

export function compileMachines(options: LocalExecutionsOptions): LocalMachines {
  // One concurrency count per function, whichever machine's Task invokes it.
  const limited = new Map<string, ConcurrencyLimit>();

  function bindHandler(machine: MachineName, task: LocalTask): BoundTask {
    if (task.kind === 'constant') return { task, handler: async () => task.value };
    const key = options.functionOf(task.functionName);
    if (key === undefined) throw new Error(`${machine} state ${task.stateName}: unknown function ${task.functionName}`);
    const own = options.handlers[key];
    if (!own) throw new Error(`${machine} state ${task.stateName}: no local handler for function key ${key}`);
    const limit = options.concurrency?.[key];
    let handler = own;
    if (limit !== undefined) {
      let throttled = limited.get(key);
      if (!throttled) {
        throttled = limitConcurrency(key, limit, own);
        limited.set(key, throttled);
      }
      handler = throttled.invoke;
    }
    return { task, handler: withinAccount(handler) };
  }

  /** The account's concurrency around a function's own: a Task finding it full is throttled, nothing runs. */
  function withinAccount(handler: LocalHandler): LocalHandler {
    const account = options.accountConcurrency;
    if (account === undefined) return handler;
    return async (payload) => {
      const leave = account.gate.tryEnter();
      if (leave === undefined) {
        account.onThrottle();
        throw accountThrottled(account.gate.limit);
      }
      try {
        return await handler(payload);
      } finally {
        leave();
      }
    };
  }

  function compile(machine: MachineName, definition: AslDefinition): CompiledMachine {
    const prepared = prepareDefinition(definition);
    const tasks = prepared.tasks.map((task) => bindHandler(machine, task));
    const stateMachine = new StateMachine(prepared.definition as unknown as StateMachineDefinition);
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

  return {
    run: compile('run', options.definitions.run),
    step: compile('step', options.definitions.step),
    throttles: () => Object.fromEntries([...limited].map(([key, limit]) => [key, limit.throttled()])),
  };
}

/** A synchronous Lambda invocation: 6 MB each way; an error the platform raised (throttle, limit) stays as it is. */
export async function invokeLambda(handler: LocalHandler, payload: unknown): Promise<unknown> {
  checkLambdaRequest(payload);
  // An invocation lets the loop poll once the current slice is spent (loop-turns.ts).
  const waiting = loopTurns.turn();
  if (waiting !== undefined) await waiting;
  let response: unknown;
  try {
    response = await handler(payload);
  } catch (error) {
    throw error instanceof AslError ? error : lambdaError(error);
  }
  checkLambdaResponse(response);
  return toJson(response);
}
