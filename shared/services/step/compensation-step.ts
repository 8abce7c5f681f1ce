/**
 * One compensation, run by the step executor for the synthetic step `~undo~<stepId>[~r<round>]` (the decider starts
 * it: engine/run/rules/compensation.ts): the compensation's input is evaluated in the expression sandbox over
 * `$input` and `$output` of the step it undoes, checked against the compensating capability's contract, and the
 * capability is called through its own idempotency record (`runId#stepId#generation#compensate`), so a repeat
 * replays instead of acting twice. What came of it (undone, another attempt after the step's backoff, failed for
 * good) is told to the run's decider, which moves the saga on or holds the run for a person.
 */
import { compensatedStepId } from '../../engine/compensation.ts';
import { decideRetry, retryPolicy } from '../../engine/retry.ts';
import type { CompensationEnded } from '../../engine/run/commands.ts';
import { clipMessage, joinIssues, messageOf } from '../../plan/bounded-text.ts';
import type { StepError } from '../../plan/schema.ts';
import type { StepRecord } from '../../ports/store.ts';
import { evaluatorOf } from '../coordinator-inputs.ts';
import type { RunStepRequest, StepNext, StepRef } from '../coordinator-types.ts';
import type { Interpreter } from '../interpreter.ts';
import { evaluateStepInput } from '../step-input.ts';
import { type CapabilityCaller, failureOf } from './capability-call.ts';
import { done, executionName } from './report.ts';

/** The idempotency key of a step generation's compensation: its own, apart from the step's. */
export const compensationKey = (runId: string, stepId: string, generation: number): string =>
  `${runId}#${stepId}#${generation}#compensate`;

/** The person's retry round a compensation execution belongs to (`~undo~<stepId>~r<round>`; 0: the first). */
const roundOf = (syntheticId: string): number => Number(/~r(\d+)$/.exec(syntheticId)?.[1] ?? 0);

export const COMPENSATION_ERROR_CODES = {
  missing: 'E_NO_COMPENSATION',
  input: 'E_COMPENSATION_INPUT',
  inputSchema: 'E_COMPENSATION_INPUT_SCHEMA',
  outputSchema: 'E_COMPENSATION_OUTPUT_SCHEMA',
} as const;

/** Its message quotes the compensation's input (evaluated from the plan) and contract errors: bounded. */
const permanent = (code: string, message: string): StepError => ({
  code,
  message: clipMessage(message),
  retryable: false,
});

/** Runs attempt n of the compensation the request names; a repeat of a finished one does nothing. */
export async function runCompensation(
  ctx: Interpreter,
  call: CapabilityCaller,
  request: RunStepRequest,
): Promise<StepNext> {
  const { previous } = request;
  if (previous !== null && previous.action !== 'retry') return done(previous.attempt);
  const attempt = previous?.action === 'retry' ? previous.attempt : 1;
  const stepId = compensatedStepId(request.stepId);
  const { store, catalog } = ctx.deps;
  const { run, step } = await ctx.loadStep(request.runId, stepId);
  if (step?.generation !== request.generation || step.status !== 'compensating') return done(attempt);
  const told = teller(ctx, step, request);
  const loaded = await ctx.plan(run);
  const planStep = loaded.byId.get(stepId);
  const compensation = planStep?.target ? catalog.get(planStep.target)?.compensate : undefined;
  const undo = compensation ? catalog.get(compensation.target) : undefined;
  if (!planStep || !compensation || !undo)
    return told(attempt, undefined, {
      kind: 'failed',
      error: permanent(COMPENSATION_ERROR_CODES.missing, 'no compensation'),
    });

  // The input every attempt of the step ran with is attempt 1's.
  const first = await store.getAttempt(step.runId, stepId, { generation: step.generation, attempt: 1 });
  let input: unknown;
  try {
    input = await evaluateStepInput(
      compensation.input,
      { objective: run.objective, outputs: {}, input: first?.input ?? null, output: step.output ?? null },
      evaluatorOf(ctx.deps),
    );
  } catch (error) {
    const message = `the compensation input cannot be evaluated: ${messageOf(error)}`;
    return told(attempt, undefined, { kind: 'failed', error: permanent(COMPENSATION_ERROR_CODES.input, message) });
  }
  const inputCheck = catalog.validateInput(undo.target, input);
  if (!inputCheck.ok) {
    const message = `the compensation input breaks the inputSchema of ${undo.target}: ${joinIssues(inputCheck.errors)}`;
    return told(attempt, input, { kind: 'failed', error: permanent(COMPENSATION_ERROR_CODES.inputSchema, message) });
  }

  const key = compensationKey(step.runId, stepId, step.generation);
  const stillCompensating = async () => {
    const current = await store.getStep(step.runId, stepId);
    return current?.generation === step.generation && current.status === 'compensating';
  };
  const result = await call(
    {
      runId: step.runId,
      stepId,
      generation: step.generation,
      attempt,
      target: undo.target,
      capability: undo,
      input,
      step: { title: `Compensate: ${planStep.title}` },
      objective: run.objective,
      upstreamOutputs: {},
      idempotencyKey: key,
    },
    undo.sideEffect,
    stillCompensating,
  );
  if (result.refused) return done(attempt);
  const { answer } = result;
  if (answer.ok) {
    const contract = catalog.validateOutput(undo.target, answer.output);
    if (!contract.ok) {
      const message = `the compensation output breaks the outputSchema of ${undo.target}: ${joinIssues(contract.errors)}`;
      return told(attempt, input, { kind: 'failed', error: permanent(COMPENSATION_ERROR_CODES.outputSchema, message) });
    }
    return told(
      attempt,
      input,
      { kind: 'compensated' },
      answer.output,
      `compensated by ${undo.target} (attempt ${attempt})`,
    );
  }
  const error = failureOf(answer.failure);
  const policy = retryPolicy(planStep, {
    baseSeconds: ctx.deps.config.retryBaseSeconds,
    capSeconds: ctx.deps.config.retryCapSeconds,
  });
  const next = decideRetry(attempt, error, policy);
  if (next.decision === 'retry') {
    await told(attempt, input, { kind: 'retry', error, delaySeconds: next.delaySeconds });
    return { action: 'retry', attempt: next.attempt, delaySeconds: next.delaySeconds };
  }
  return told(attempt, input, { kind: 'failed', error });
}

/** Tells the run's decider what came of a compensation attempt; the execution ends (or waits out a backoff). */
function teller(ctx: Interpreter, step: StepRecord, request: Pick<RunStepRequest, 'stepId' | 'executionId'>) {
  return async (
    attempt: number,
    input: unknown,
    outcome: CompensationEnded['outcome'],
    output?: unknown,
    note?: string,
  ): Promise<StepNext> => {
    await ctx.deps.mailbox.send(step.runId, {
      kind: 'CompensationEnded',
      stepId: step.stepId,
      generation: step.generation,
      execution: executionName(request.executionId),
      round: roundOf(request.stepId),
      attempt,
      ...(input === undefined ? {} : { input }),
      ...(output === undefined ? {} : { output }),
      outcome,
      ...(note === undefined ? {} : { trace: [{ kind: 'exec' as const, at: ctx.now(), text: note }] }),
    });
    return done(attempt);
  };
}

/** RecordFailure for a compensation execution whose RunStep failed for good: the compensation failed. */
export async function recordCompensationFailure(
  ctx: Interpreter,
  ref: StepRef & { readonly executionId?: string },
  attempt: number | undefined,
  error: StepError,
): Promise<StepNext> {
  const stepId = compensatedStepId(ref.stepId);
  const step = await ctx.deps.store.getStep(ref.runId, stepId);
  if (step?.generation !== ref.generation || step.status !== 'compensating') return done(attempt ?? 0);
  const told = teller(ctx, step, { stepId: ref.stepId, executionId: ref.executionId ?? '' });
  return told(attempt ?? Math.max(1, step.compensation?.attempts ?? 1), undefined, { kind: 'failed', error });
}
