/**
 * What the embedded runtime must know about each Task of a synthesized definition, and the few mechanical rewrites
 * that make aws-local-stepfunctions behave as Step Functions does:
 * - it evaluates `TimeoutSecondsPath` against the Task's Parameters output instead of the state input, so the path
 *   is moved into Parameters (a hidden field) and callback Tasks are timed by the local runtime, which also retires
 *   the timed-out token exactly as Step Functions does;
 * - it treats a falsy Pass `Result` (`null`, `false`, `0`, `""`) as absent and passes the input through, so such Pass
 *   states run as a Task that returns the constant.
 * The states, their names, paths, Retry and Catch are left exactly as synthesized.
 */
import type { AslDefinition, AslState } from './synth.ts';

export const TIMEOUT_FIELD = 'cairnLocalTimeoutSeconds';
/** A hidden Parameters field that hands a Task its raw state input too, so the runtime can size the state's output. */
export const STATE_INPUT_FIELD = 'cairnLocalStateInput';
/** What `$$.Task.Token` resolves to; the runtime replaces it in the payload with a freshly minted token. */
export const TOKEN_PLACEHOLDER = 'cairn-local-task-token';
/** setTimeout's ceiling (2^31 - 1 ms): the interpreter's own timer for callback Tasks must never fire first. */
export const MAX_TIMER_SECONDS = 2_147_483;
const CONSTANT_RESOURCE = 'arn:aws:lambda:us-east-1:123456789012:function:cairn-local-constant';

/**
 * Where a Task's state output comes from, for sizing it (aws-limits.ts): its ResultPath (null: the input passes
 * through; absent: the result replaces it). Absent when the runtime cannot compute it (InputPath, ResultSelector or
 * OutputPath, which no synthesized Task uses): then only the Task's input and result are sized.
 */
export interface TaskOutputShape {
  readonly resultPath: string | null;
}

export type LocalTask =
  | {
      readonly stateName: string;
      readonly kind: 'callback' | 'invoke' | 'function';
      readonly functionName: string;
      readonly output?: TaskOutputShape;
    }
  | { readonly stateName: string; readonly kind: 'constant'; readonly value: unknown };

export interface PreparedDefinition {
  readonly definition: AslDefinition;
  readonly tasks: readonly LocalTask[];
}

const CALLBACK_SUFFIX = ':states:::lambda:invoke.waitForTaskToken';
const INVOKE_SUFFIX = ':states:::lambda:invoke';
const LAMBDA_ARN = /^arn:[a-z-]+:lambda:[^:]*:[^:]*:function:.+$/;

export function prepareDefinition(definition: AslDefinition): PreparedDefinition {
  const tasks: LocalTask[] = [];
  const states: Record<string, AslState> = {};
  for (const [stateName, state] of Object.entries(definition.States)) {
    if (state.Type === 'Parallel' || state.Type === 'Map') {
      throw new Error(`state ${stateName}: ${state.Type} states are not supported by the embedded runtime`);
    }
    if (state.Type === 'Pass' && 'Result' in state && !state.Result) {
      const { Result: value, ...rest } = state;
      states[stateName] = { ...rest, Type: 'Task', Resource: CONSTANT_RESOURCE };
      tasks.push({ stateName, kind: 'constant', value });
      continue;
    }
    if (state.Type !== 'Task') {
      states[stateName] = state;
      continue;
    }
    const resource = String(state.Resource);
    const output = outputShape(state);
    const shaped = output ? { output } : {};
    if (resource.endsWith(CALLBACK_SUFFIX)) {
      tasks.push({ stateName, kind: 'callback', functionName: functionNameOf(stateName, state), ...shaped });
      states[stateName] = withStateInput(moveTimeoutIntoParameters(stateName, state));
    } else if (resource.endsWith(INVOKE_SUFFIX)) {
      tasks.push({ stateName, kind: 'invoke', functionName: functionNameOf(stateName, state), ...shaped });
      states[stateName] = withStateInput(state);
    } else if (LAMBDA_ARN.test(resource) && isRecord(state.Parameters)) {
      tasks.push({ stateName, kind: 'function', functionName: resource, ...shaped });
      states[stateName] = withStateInput(state);
    } else if (LAMBDA_ARN.test(resource)) {
      tasks.push({ stateName, kind: 'function', functionName: resource });
      states[stateName] = state;
    } else {
      throw new Error(`state ${stateName}: resource ${resource} is not a Lambda the embedded runtime can run`);
    }
  }
  return { definition: { ...definition, States: states }, tasks };
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function outputShape(state: AslState): TaskOutputShape | undefined {
  if ('InputPath' in state || 'ResultSelector' in state || 'OutputPath' in state) return undefined;
  if (!isRecord(state.Parameters)) return undefined;
  const resultPath = state.ResultPath === undefined ? '$' : state.ResultPath;
  return resultPath === null || typeof resultPath === 'string' ? { resultPath } : undefined;
}

/** The Task's Parameters also carry its raw state input (stripped before the handler sees them). */
function withStateInput(state: AslState): AslState {
  if (!isRecord(state.Parameters)) return state;
  return { ...state, Parameters: { ...state.Parameters, [`${STATE_INPUT_FIELD}.$`]: '$' } };
}

function parametersOf(stateName: string, state: AslState): Record<string, unknown> {
  const parameters = state.Parameters;
  if (typeof parameters !== 'object' || parameters === null || Array.isArray(parameters)) {
    throw new Error(`state ${stateName}: a lambda:invoke Task needs Parameters`);
  }
  return parameters as Record<string, unknown>;
}

function functionNameOf(stateName: string, state: AslState): string {
  const name = parametersOf(stateName, state).FunctionName;
  if (typeof name !== 'string') throw new Error(`state ${stateName}: FunctionName must be a static string`);
  return name;
}

function moveTimeoutIntoParameters(stateName: string, state: AslState): AslState {
  const { TimeoutSeconds, TimeoutSecondsPath, ...rest } = state;
  const parameters = { ...parametersOf(stateName, state) };
  if (typeof TimeoutSecondsPath === 'string') parameters[`${TIMEOUT_FIELD}.$`] = TimeoutSecondsPath;
  else if (typeof TimeoutSeconds === 'number') parameters[TIMEOUT_FIELD] = TimeoutSeconds;
  else throw new Error(`state ${stateName}: a callback Task must have TimeoutSeconds or TimeoutSecondsPath`);
  return { ...rest, TimeoutSeconds: MAX_TIMER_SECONDS, Parameters: parameters };
}

/** Replaces the token placeholder wherever the payload template put `$$.Task.Token`. */
export function withToken(value: unknown, token: string): unknown {
  if (value === TOKEN_PLACEHOLDER) return token;
  if (Array.isArray(value)) return value.map((item) => withToken(item, token));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, withToken(item, token)]));
  }
  return value;
}

/** The same definition entered at `state`: a resumed execution carries on there (the states are unchanged). */
export function startingAt(definition: AslDefinition, state: string): AslDefinition {
  if (!(state in definition.States)) throw new Error(`the definition has no state ${state}`);
  return { ...definition, StartAt: state };
}

/** Reads a `$.a.b` path (the only kind a synthesized SecondsPath uses); undefined for anything else. */
function simplePath(path: string, input: unknown): unknown {
  if (!/^\$(\.[A-Za-z0-9_]+)+$/.test(path)) return undefined;
  let value = input;
  for (const part of path.slice(2).split('.')) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/**
 * When a relative Wait state entered at `enteredAt` (epoch ms) with this raw input ends: what a restart needs to wait
 * only the rest of it. Undefined for other states, and for absolute waits (Timestamp), which end on their own date.
 */
export function waitEndsAt(
  state: AslState,
  input: unknown,
  enteredAt: number,
  overrideMs: number | undefined,
): number | undefined {
  if (state.Type !== 'Wait') return undefined;
  if (overrideMs !== undefined) return enteredAt + overrideMs;
  if (typeof state.Seconds === 'number') return enteredAt + state.Seconds * 1000;
  if (typeof state.SecondsPath === 'string' && state.InputPath === undefined) {
    const seconds = simplePath(state.SecondsPath, input);
    if (typeof seconds === 'number' && seconds >= 0) return enteredAt + seconds * 1000;
  }
  return undefined;
}
