/**
 * Step Functions, as cairn uses it: start executions with deterministic names and answer task tokens. The AWS
 * adapter calls the SFN API; the embedded adapter runs the same ASL with aws-local-stepfunctions.
 */
export type MachineName = 'run' | 'step';

export interface StartResult {
  readonly executionId: string;
  /** false when an execution with this name already existed (a duplicate start is harmless). */
  readonly started: boolean;
}

export interface Executions {
  start(machine: MachineName, name: string, input: Readonly<Record<string, unknown>>): Promise<StartResult>;
  sendTaskSuccess(taskToken: string, output: unknown): Promise<void>;
  sendTaskFailure(taskToken: string, error: string, cause: string): Promise<void>;
  stop(executionId: string, error: string, cause: string): Promise<void>;
  /** Stops the execution of `machine` named `name` (one that does not exist, or has ended, is no error). */
  stopNamed(machine: MachineName, name: string, error: string, cause: string): Promise<void>;
}

/**
 * The input of a step execution. RunStep's payload names `next` (its previous answer), `decision` (a person's) and
 * `brief` (what the step needs of its plan, engine/run/step-brief.ts), and JSONPath needs each to exist: they start
 * as null (a null brief: the execution reads the plan).
 */
export function stepExecutionInput<Brief extends object = never>(
  ref: { runId: string; stepId: string; generation: number },
  brief: Brief | null = null,
) {
  return { runId: ref.runId, stepId: ref.stepId, generation: ref.generation, next: null, decision: null, brief };
}

/** Step Functions' rule for execution names. */
export const EXECUTION_NAME_PATTERN = /^[A-Za-z0-9_-]{1,80}$/;
const MAX_NAME = 80;

/**
 * An id as execution-name text, injectively: letters, digits and `-` stay, any other character becomes `_` and its
 * code in hex (`.` → `_2e`, `_` → `_5f`; above U+00FF `_u` and six digits). `_` only ever starts an escape of fixed
 * length, so two different ids never give the same text (`a.b` and `a_b` did, when both became `a_b`).
 */
export function nameSafe(id: string): string {
  let out = '';
  for (const char of id) {
    if (/[A-Za-z0-9-]/.test(char)) {
      out += char;
      continue;
    }
    const code = char.codePointAt(0) ?? 0;
    out += code <= 0xff ? `_${code.toString(16).padStart(2, '0')}` : `_u${code.toString(16).padStart(6, '0')}`;
  }
  return out;
}

/** A name over 80 characters keeps its first 63 and a 64-bit hash of the whole: distinct in practice. */
const withinLimit = (raw: string): string => (raw.length <= MAX_NAME ? raw : `${raw.slice(0, 63)}-${fnv1a(raw)}`);

/**
 * The step execution of one generation: deterministic from run, step and generation, so a duplicate start is
 * harmless; distinct for distinct steps of a run (the generation follows the last `-g`, which no digit contains).
 */
export function stepExecutionName(runId: string, stepId: string, generation: number): string {
  return withinLimit(`${nameSafe(runId)}-${nameSafe(stepId)}-g${generation}`);
}

/**
 * An execution that judges a person's decision the generation's waiting execution was never answered with (its wait
 * timed out first): the `n`-th of the generation. A name ending in `-d<n>` never ends in a generation's `-g<n>`, so
 * it collides with no step execution.
 */
export function decisionExecutionName(runId: string, stepId: string, generation: number, n: number): string {
  return withinLimit(`${nameSafe(runId)}-${nameSafe(stepId)}-g${generation}-d${n}`);
}

export function runExecutionName(runId: string): string {
  return withinLimit(`run-${nameSafe(runId)}`);
}

/** 32-bit FNV-1a as 16 hex chars (two seeds): a stable, collision-resistant-enough suffix for long names. */
function fnv1a(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193);
  }
  return (a >>> 0).toString(16).padStart(8, '0') + (b >>> 0).toString(16).padStart(8, '0');
}
