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
}

/**
 * The input of a step execution. RunStep's payload names `next` (its previous answer) and `decision` (a person's),
 * and JSONPath needs both to exist before the first answer: they start as null.
 */
export function stepExecutionInput(ref: { runId: string; stepId: string; generation: number }) {
  return { runId: ref.runId, stepId: ref.stepId, generation: ref.generation, next: null, decision: null };
}

/** Execution names: 1..80 chars of [A-Za-z0-9-_]; deterministic from run, step and generation. */
export function stepExecutionName(runId: string, stepId: string, generation: number): string {
  const raw = `${runId}-${stepId}-g${generation}`.replace(/[^A-Za-z0-9_-]/g, '_');
  if (raw.length <= 80) return raw;
  return `${raw.slice(0, 63)}-${fnv1a(raw)}`;
}

export function runExecutionName(runId: string): string {
  const raw = `run-${runId}`.replace(/[^A-Za-z0-9_-]/g, '_');
  return raw.length <= 80 ? raw : `${raw.slice(0, 63)}-${fnv1a(raw)}`;
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
