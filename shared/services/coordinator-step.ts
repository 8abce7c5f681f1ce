/**
 * Step-level coordinator actions of the step machine: claim a generation (only one claimant ever runs it), record
 * a failed attempt (retry with backoff or fail for good), complete a verified step (release its dependents).
 */
import { decideRetry, retryPolicy } from '../engine/retry.ts';
import { CLAIMABLE_STEP_STATUSES, IN_FLIGHT_STEP_STATUSES, isTerminalStepStatus } from '../engine/statuses.ts';
import { appendAndRetain, traceEntry } from '../engine/trace.ts';
import { VERIFY_ERROR_CODES } from '../engine/verify.ts';
import type { PlanStep, StepError } from '../plan/schema.ts';
import type { AttemptRecord, StepRecord } from '../ports/store.ts';
import { type Ctx, event, isCurrent, kindOf, type LoadedPlan } from './coordinator-context.ts';
import { afterFailure, afterSuccess, failStep } from './coordinator-flow.ts';
import { bindingsFor, claimEvaluates, prepareClaim } from './coordinator-inputs.ts';
import { recordStepDuration } from './coordinator-metrics.ts';
import type {
  ClaimResult,
  ClaimStepRequest,
  CompleteResult,
  CompleteStepRequest,
  CoordinatorConfig,
  FailureDecision,
  RecordFailureRequest,
  StepRef,
} from './coordinator-types.ts';

/** How long a person may take on this step's gate or review: a positive whole number of seconds. */
export function approvalTimeoutSeconds(planStep: PlanStep | undefined, config: CoordinatorConfig): number {
  const seconds = planStep?.approval?.timeoutSeconds ?? config.runDeadlineSeconds;
  return Math.max(1, Math.ceil(seconds));
}

/** The attempt record of one attempt of one generation, if it was written. */
export function findAttempt(
  ctx: Ctx,
  ref: { runId: string; stepId: string; generation: number },
  attempt: number,
): Promise<AttemptRecord | undefined> {
  return ctx.deps.store.getAttempt(ref.runId, ref.stepId, { generation: ref.generation, attempt });
}

/** A human gate has no executor: the claim records its attempt (with the evaluated input the approver sees). */
async function recordGateAttempt(ctx: Ctx, step: StepRecord, planStep: PlanStep, input: unknown, executionId: string) {
  await ctx.deps.store.putAttempt({
    runId: step.runId,
    stepId: step.stepId,
    generation: step.generation,
    attempt: 1,
    target: planStep.target ?? '',
    startedAt: ctx.now(),
    outcome: 'running',
    input,
    evidence: { gate: true, executionId },
  });
}

/**
 * Claims a generation for one step execution: evaluates `when` (false → skipped, dependents released) and the
 * input (invalid → failed for good, downstream blocked), then one conditional write decides who runs it.
 */
export async function claimStep(ctx: Ctx, request: ClaimStepRequest): Promise<ClaimResult> {
  const { store, config } = ctx.deps;
  const { runId, stepId, generation, executionId } = request;
  const { run, step } = await ctx.loadStep(runId, stepId);
  const loaded = await ctx.plan(run);
  const planStep = loaded.byId.get(stepId);
  const kind = kindOf(planStep);
  const base = { kind, approvalTimeoutSeconds: approvalTimeoutSeconds(planStep, config) };
  const duplicate: ClaimResult = { ...base, outcome: 'duplicate', attempt: 0 };
  if (!isCurrent(step, generation) || planStep === undefined) return duplicate;
  if (step.claimedBy !== undefined)
    return step.claimedBy === executionId ? resumeClaim(ctx, loaded, step, planStep, base, executionId) : duplicate;
  if (!CLAIMABLE_STEP_STATUSES.includes(step.status)) return duplicate;
  // A finished or cancelled run starts nothing new; its open steps are closed by whoever finished it.
  if (run.status !== 'running' && run.status !== 'paused') return duplicate;

  const bindings = await bindingsFor(ctx, run, loaded, step, claimEvaluates(planStep));
  const prepared = await prepareClaim(ctx, planStep, bindings);
  const now = ctx.now();
  const condition = { generation, from: CLAIMABLE_STEP_STATUSES, unclaimed: true };
  if (prepared.outcome === 'fail') {
    const won = await failStep(ctx, loaded, step, prepared.error, {
      from: CLAIMABLE_STEP_STATUSES,
      claimedBy: executionId,
      note: prepared.error.message,
    });
    return won
      ? { ...base, outcome: 'failed', attempt: 0 }
      : rereadClaim(ctx, loaded, step, planStep, base, executionId);
  }
  if (prepared.outcome === 'skip') {
    const skipped = await store.transitionStep(runId, stepId, condition, {
      status: 'skipped',
      claimedBy: executionId,
      finishedAt: now,
      appendTrace: [traceEntry('judge', `skipped: ${prepared.reason}`, now)],
    });
    if (!skipped) return rereadClaim(ctx, loaded, step, planStep, base, executionId);
    await ctx.emit(runId, [event('StepSkipped', { runId, stepId, generation, reason: prepared.reason })]);
    return resumeClaim(ctx, loaded, skipped, planStep, base, executionId);
  }
  const claimed = await store.transitionStep(runId, stepId, condition, {
    status: 'running',
    claimedBy: executionId,
    attempts: 1,
    startedAt: now,
    appendTrace: [traceEntry('exec', `claimed by ${executionId}`, now)],
  });
  if (!claimed) return rereadClaim(ctx, loaded, step, planStep, base, executionId);
  if (kind === 'human') await recordGateAttempt(ctx, claimed, planStep, prepared.input, executionId);
  await ctx.emit(runId, [event('StepStarted', { runId, stepId, generation, target: planStep.target, attempt: 1 })]);
  return { ...base, outcome: 'claimed', attempt: 1 };
}

type ClaimBase = Pick<ClaimResult, 'kind' | 'approvalTimeoutSeconds'>;

async function rereadClaim(
  ctx: Ctx,
  loaded: LoadedPlan,
  step: StepRecord,
  planStep: PlanStep,
  base: ClaimBase,
  executionId: string,
): Promise<ClaimResult> {
  const current = await ctx.deps.store.getStep(step.runId, step.stepId);
  if (!isCurrent(current, step.generation) || current.claimedBy !== executionId)
    return { ...base, outcome: 'duplicate', attempt: 0 };
  return resumeClaim(ctx, loaded, current, planStep, base, executionId);
}

/** The same execution claiming again (a retried task): the same answer, and any follow-up it missed. */
async function resumeClaim(
  ctx: Ctx,
  loaded: LoadedPlan,
  step: StepRecord,
  planStep: PlanStep,
  base: ClaimBase,
  executionId: string,
): Promise<ClaimResult> {
  if (step.status === 'skipped') {
    await afterSuccess(ctx, loaded, step);
    return { ...base, outcome: 'skipped', attempt: 0 };
  }
  if (step.status === 'failed' && step.attempts === 0) {
    await afterFailure(ctx, loaded, step);
    return { ...base, outcome: 'failed', attempt: 0 };
  }
  if (isTerminalStepStatus(step.status)) return { ...base, outcome: 'duplicate', attempt: 0 };
  if (base.kind === 'human' && (await findAttempt(ctx, step, 1)) === undefined) {
    const run = await ctx.getRun(step.runId);
    const bindings = await bindingsFor(ctx, run, loaded, step, claimEvaluates(planStep));
    const prepared = await prepareClaim(ctx, planStep, bindings);
    await recordGateAttempt(ctx, step, planStep, prepared.outcome === 'run' ? prepared.input : null, executionId);
  }
  return { ...base, outcome: 'claimed', attempt: Math.max(1, step.attempts) };
}

/**
 * A failed attempt: retry (status `retrying`, backoff) while the error is retryable and attempts remain, else the
 * step fails for good with the error, its downstream is blocked and the run may be settled.
 */
export async function recordFailure(ctx: Ctx, request: RecordFailureRequest): Promise<FailureDecision> {
  const { store, config } = ctx.deps;
  const { runId, stepId, generation, error } = request;
  const attempt = request.attempt ?? (await knownAttempt(ctx, request));
  const { run, step, attempt: record } = await ctx.loadStep(runId, stepId, { generation, attempt });
  const failed: FailureDecision = { decision: 'failed' };
  if (!isCurrent(step, generation)) return failed;
  const loaded = await ctx.plan(run);
  if (step.status === 'failed') {
    // A repeat: the failure is written; make sure its follow-ups happened.
    await afterFailure(ctx, loaded, step);
    return failed;
  }
  if (isTerminalStepStatus(step.status) || step.attempts > attempt) return failed;
  await markAttemptFailed(ctx, error, record);
  const planStep = loaded.byId.get(stepId);
  const policy = retryPolicy(planStep ?? {}, {
    baseSeconds: config.retryBaseSeconds,
    capSeconds: config.retryCapSeconds,
  });
  const decision = decideRetry(attempt, error, policy);
  if (decision.decision === 'retry') {
    // A repeat of a failure already recorded: the same answer, nothing written twice.
    if (step.status === 'retrying' && step.attempts === attempt) return decision;
    const now = ctx.now();
    const note = `attempt ${attempt} failed: ${error.code} ${error.message}; attempt ${decision.attempt} in ${decision.delaySeconds}s`;
    const retrying = await store.transitionStep(
      runId,
      stepId,
      { generation, from: IN_FLIGHT_STEP_STATUSES },
      { status: 'retrying', attempts: attempt, error, appendTrace: [traceEntry('fail', note, now)] },
    );
    if (retrying) {
      await ctx.emit(runId, [
        event('StepRetrying', {
          runId,
          stepId,
          generation,
          attempt: decision.attempt,
          delaySeconds: decision.delaySeconds,
          error,
        }),
      ]);
      return decision;
    }
    const current = await store.getStep(runId, stepId);
    return isCurrent(current, generation) && current.status === 'retrying' && current.attempts === attempt
      ? decision
      : failed;
  }
  const why = decision.reason === 'permanent' ? 'permanent error' : `after ${attempt} attempt(s)`;
  await failStep(ctx, loaded, step, error, {
    attempts: attempt,
    note: `failed (${why}): ${error.code} ${error.message}`,
  });
  return failed;
}

/** The attempt a failure without a number speaks for: the step's newest (a crash of RunStep before it said). */
async function knownAttempt(ctx: Ctx, ref: StepRef): Promise<number> {
  const step = await ctx.deps.store.getStep(ref.runId, ref.stepId);
  return Math.max(1, step?.generation === ref.generation ? step.attempts : 1);
}

/** Evidence: an attempt the executor did not close itself (it crashed; a verify failure) is marked failed. */
async function markAttemptFailed(ctx: Ctx, error: StepError, record: AttemptRecord | undefined) {
  if (!record || record.outcome === 'failed') return;
  await ctx.deps.store.updateAttempt({ ...record, outcome: 'failed', finishedAt: ctx.now(), error });
}

/**
 * A verified result: the step succeeds with the attempt's output (only if it is still this generation: a
 * superseded generation's late result never overwrites), trace retention applies, dependents are released once
 * per edge and the run may be settled. A repeat finds the step succeeded and only redoes the follow-ups.
 */
export async function completeStep(ctx: Ctx, request: CompleteStepRequest): Promise<CompleteResult> {
  const { store, config } = ctx.deps;
  const { runId, stepId, generation, attempt } = request;
  const { run, step, attempt: record } = await ctx.loadStep(runId, stepId, { generation, attempt });
  if (!isCurrent(step, generation)) return { status: 'superseded' };
  const loaded = await ctx.plan(run);
  if (step.status === 'succeeded') {
    await afterSuccess(ctx, loaded, step);
    return { status: 'succeeded' };
  }
  if (!IN_FLIGHT_STEP_STATUSES.includes(step.status)) return { status: step.status };
  if (record?.output === undefined) {
    const error = {
      code: VERIFY_ERROR_CODES.noResult,
      message: `attempt ${attempt} has no recorded output to complete with`,
      retryable: false,
    };
    await failStep(ctx, loaded, step, error, { attempts: attempt, note: error.message });
    return { status: 'failed' };
  }
  const now = ctx.now();
  const confidence = record.confidence ?? null;
  const note = `succeeded with attempt ${attempt}${confidence === null ? '' : ` (confidence ${confidence})`}`;
  const succeeded = await store.transitionStep(
    runId,
    stepId,
    { generation, from: IN_FLIGHT_STEP_STATUSES },
    {
      status: 'succeeded',
      output: record.output,
      confidence,
      attempts: Math.max(step.attempts, attempt),
      error: null,
      finishedAt: now,
      trace: appendAndRetain(step.trace, [traceEntry('judge', note, now)], 'succeeded', config.traceRetention),
    },
  );
  if (!succeeded) {
    const current = await store.getStep(runId, stepId);
    if (!isCurrent(current, generation) || current.status !== 'succeeded')
      return { status: current?.status ?? 'superseded' };
  } else {
    await ctx.emit(runId, [
      event('StepSucceeded', { runId, stepId, generation, attempts: succeeded.attempts, confidence }),
    ]);
    recordStepDuration(ctx.deps.metrics, succeeded, loaded.byId.get(stepId)?.target, 'succeeded');
    if (record.outcome !== 'succeeded')
      await store.updateAttempt({ ...record, outcome: 'succeeded', finishedAt: record.finishedAt ?? now });
  }
  await afterSuccess(ctx, loaded, step);
  return { status: 'succeeded' };
}
