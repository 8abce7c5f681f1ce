/**
 * One compensation, run by the step executor for the synthetic step `~undo~<stepId>` (see services/compensation.ts):
 * the compensation's input is evaluated in the expression sandbox over `$input` and `$output` of the step it undoes,
 * checked against the compensating capability's contract, and the capability is called through its own
 * idempotency record (`runId#stepId#generation#compensate`), so a repeat replays instead of acting twice. A
 * retryable failure goes back to the step machine's backoff (the step's own retry policy); a final one marks the
 * step `compensation_failed` and pauses the run for a person, with the evidence. An answer moves the step to
 * `compensated` and the driver on to the next compensation.
 */
import { compensatedStepId } from '../../engine/compensation.ts';
import { decideRetry, retryPolicy } from '../../engine/retry.ts';
import { transitionCondition } from '../../engine/step-lifecycle.ts';
import { traceEntry } from '../../engine/trace.ts';
import { clipMessage, joinIssues, messageOf } from '../../plan/bounded-text.ts';
import type { StepError } from '../../plan/schema.ts';
import type { CompensationRecord, StepRecord } from '../../ports/store.ts';
import { advanceCompensation, compensationEvidence, compensationKey } from '../compensation.ts';
import { evaluatorOf } from '../coordinator-inputs.ts';
import type { RunStepRequest, StepNext, StepRef } from '../coordinator-types.ts';
import { event, type Interpreter } from '../interpreter.ts';
import { pauseRun, settleRun } from '../run-end.ts';
import { evaluateStepInput } from '../step-input.ts';
import { type CapabilityCaller, failureOf } from './capability-call.ts';
import { done } from './outcome.ts';

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
  if (step?.generation !== request.generation || step.status !== 'compensating') {
    // A repeat after the end was written but what follows it was lost (a store answer): the next compensation, or
    // the run's end; a run that already ended (the last compensation of a cancel) still has its waiter answered.
    if (step?.generation === request.generation && step.status === 'compensated') {
      if ((await advanceCompensation(ctx, step.runId)) === 'none') await settleRun(ctx, step.runId);
    }
    return done(attempt);
  }
  const loaded = await ctx.plan(run);
  const planStep = loaded.byId.get(stepId);
  const compensation = planStep?.target ? catalog.get(planStep.target)?.compensate : undefined;
  const undo = compensation ? catalog.get(compensation.target) : undefined;
  if (!planStep || !compensation || !undo)
    return finishFailed(ctx, step, attempt, undefined, permanent(COMPENSATION_ERROR_CODES.missing, 'no compensation'));

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
    return finishFailed(ctx, step, attempt, undefined, permanent(COMPENSATION_ERROR_CODES.input, message));
  }
  const inputCheck = catalog.validateInput(undo.target, input);
  if (!inputCheck.ok) {
    const message = `the compensation input breaks the inputSchema of ${undo.target}: ${joinIssues(inputCheck.errors)}`;
    return finishFailed(ctx, step, attempt, input, permanent(COMPENSATION_ERROR_CODES.inputSchema, message));
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
      return finishFailed(ctx, step, attempt, input, permanent(COMPENSATION_ERROR_CODES.outputSchema, message));
    }
    const now = ctx.now();
    const moved = await ctx.transitionStep(
      step.runId,
      stepId,
      transitionCondition('compensated', step.generation),
      {
        status: 'compensated',
        compensation: { ...record(step, undo.target, key, attempt, input), output: answer.output, finishedAt: now },
        appendTrace: [traceEntry('exec', `compensated by ${undo.target} (attempt ${attempt})`, now)],
      },
      [
        event('StepCompensation', {
          runId: step.runId,
          stepId,
          generation: step.generation,
          state: 'compensated',
          target: undo.target,
        }),
      ],
    );
    if (moved) await advanceCompensation(ctx, step.runId);
    return done(attempt);
  }
  const error = failureOf(answer.failure);
  const policy = retryPolicy(planStep, {
    baseSeconds: ctx.deps.config.retryBaseSeconds,
    capSeconds: ctx.deps.config.retryCapSeconds,
  });
  const next = decideRetry(attempt, error, policy);
  if (next.decision === 'retry') return { action: 'retry', attempt: next.attempt, delaySeconds: next.delaySeconds };
  return finishFailed(ctx, step, attempt, input, error);
}

const record = (
  step: StepRecord,
  target: string,
  key: string,
  attempts: number,
  input: unknown,
): CompensationRecord => ({
  ...step.compensation,
  target,
  idempotencyKey: key,
  startedAt: step.compensation?.startedAt ?? step.updatedAt,
  attempts,
  ...(input === undefined ? {} : { input }),
});

/** compensating → compensation_failed, with the evidence; the run pauses for a person. */
async function finishFailed(
  ctx: Interpreter,
  step: StepRecord,
  attempt: number,
  input: unknown,
  error: StepError,
): Promise<StepNext> {
  const now = ctx.now();
  const target = step.compensation?.target ?? 'unknown';
  const key = compensationKey(step.runId, step.stepId, step.generation);
  const moved = await ctx.transitionStep(
    step.runId,
    step.stepId,
    transitionCondition('compensationFailed', step.generation),
    {
      status: 'compensation_failed',
      compensation: { ...record(step, target, key, attempt, input), error, finishedAt: now },
      appendTrace: [traceEntry('fail', `compensation failed: ${error.code} ${error.message}`, now)],
    },
    [
      event('StepCompensation', {
        runId: step.runId,
        stepId: step.stepId,
        generation: step.generation,
        state: 'compensation_failed',
        target,
        error,
      }),
    ],
  );
  const current = moved ?? (await ctx.deps.store.getStep(step.runId, step.stepId));
  if (current?.generation === step.generation && current.status === 'compensation_failed')
    await pauseRun(ctx, step.runId, 'compensation_failed', compensationEvidence(step.stepId, current));
  return done(attempt);
}

/** RecordFailure for a compensation execution whose RunStep failed for good: the compensation failed. */
export async function recordCompensationFailure(
  ctx: Interpreter,
  ref: StepRef,
  attempt: number | undefined,
  error: StepError,
): Promise<StepNext> {
  const stepId = compensatedStepId(ref.stepId);
  const step = await ctx.deps.store.getStep(ref.runId, stepId);
  if (step?.generation !== ref.generation || step.status !== 'compensating') return done(attempt ?? 0);
  return finishFailed(ctx, step, attempt ?? Math.max(1, step.compensation?.attempts ?? 1), undefined, error);
}
