/**
 * Step Functions' 256 KB rule at a Task of the embedded runtime: the state's input after Parameters, the task's
 * result (what the Lambda or the task token answered) and the state's output (the result put at its ResultPath in
 * the raw state input) each fail the execution with `States.DataLimitExceeded` when over the limit, as on AWS. The
 * raw state input reaches the Task through a hidden Parameters field (local-asl.ts), taken off here before anything
 * else sees the parameters.
 */
import { checkStatePayload } from './aws-limits.ts';
import { type LocalTask, STATE_INPUT_FIELD, TIMEOUT_FIELD } from './local-asl.ts';

type Task = Exclude<LocalTask, { kind: 'constant' }>;

export interface TaskInput {
  /** The Parameters' output as the Task's resource receives it (hidden fields taken off, but the timeout). */
  readonly parameters: unknown;
  /** The raw state input, when the runtime can size the state's output. */
  readonly stateInput?: unknown;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Takes the hidden state input off a Task's parameters and checks the parameters' size. */
export function takeTaskInput(task: Task, input: unknown): TaskInput {
  if (!isRecord(input) || !(STATE_INPUT_FIELD in input)) {
    checkStatePayload(task.stateName, 'input', input);
    return { parameters: input };
  }
  const { [STATE_INPUT_FIELD]: stateInput, ...parameters } = input;
  // The callback's timeout travels in Parameters only here; on AWS it is a field of the state, not of its input.
  const { [TIMEOUT_FIELD]: _timeout, ...sized } = parameters;
  checkStatePayload(task.stateName, 'input', sized);
  return { parameters, stateInput };
}

/** Checks a Task's result, and the state output it makes, against the state payload limit. */
export function checkTaskResult(task: Task, taken: TaskInput, result: unknown): void {
  checkStatePayload(task.stateName, 'result', result);
  if (!task.output || !('stateInput' in taken)) return;
  const output = atResultPath(taken.stateInput, result, task.output.resultPath);
  if (output.known) checkStatePayload(task.stateName, 'output', output.value);
}

/** The state output ResultPath makes of the raw input and the result; unknown for paths other than `$.a.b`. */
export function atResultPath(
  input: unknown,
  result: unknown,
  resultPath: string | null,
): { known: true; value: unknown } | { known: false } {
  if (resultPath === null) return { known: true, value: input };
  if (resultPath === '$') return { known: true, value: result };
  if (!/^\$(\.[A-Za-z0-9_]+)+$/.test(resultPath) || !isRecord(input)) return { known: false };
  const names = resultPath.slice(2).split('.');
  const root: Record<string, unknown> = { ...input };
  let at = root;
  for (const name of names.slice(0, -1)) {
    const next = at[name];
    const copy: Record<string, unknown> = isRecord(next) ? { ...next } : {};
    at[name] = copy;
    at = copy;
  }
  at[names[names.length - 1] as string] = result;
  return { known: true, value: root };
}
