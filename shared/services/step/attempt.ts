/**
 * One attempt of a claimed step, and what follows it: the capability's answer (capability-call.ts), the verdict on
 * the output (contract, success assertion, confidence), the attempt record written once with both, then the step's
 * transition the engine decides (succeed, hold for a review, retry after a backoff, fail for good).
 */

import { BUDGET_ERROR_CODE } from '../../engine/budget.ts';
import { retryPolicy } from '../../engine/retry.ts';
import { IN_FLIGHT_STEP_STATUSES, letsStepsMove } from '../../engine/statuses.ts';
import { type AttemptOutcome, decideAttemptOutcome, transitionCondition } from '../../engine/step-lifecycle.ts';
import { appendAndRetain, traceEntry } from '../../engine/trace.ts';
import { decideExpectedFailure, decideVerdict, type HumanDecision, type Verdict } from '../../engine/verify.ts';
import type { PlanStep, StepError, StepExpectation } from '../../plan/schema.ts';
import type { CapabilityCall } from '../../ports/capabilities.ts';
import type { AttemptRecord, StepRecord, TraceEntry } from '../../ports/store.ts';
import { checkCriteriaSchema, evaluateAssertion, evaluatorOf } from '../coordinator-inputs.ts';
import { recordStepDuration } from '../coordinator-metrics.ts';
import type { StepNext } from '../coordinator-types.ts';
import { event, type Interpreter, isCurrent } from '../interpreter.ts';
import { afterSuccess, failStep } from '../step-follow-ups.ts';
import { afterSpend, claimRefusal, countUsage, stepBudgetOutcome } from './budget-keeping.ts';
import type { CapabilityCaller } from './capability-call.ts';
import { idempotencyKey } from './idempotent-call.ts';
import { approvalTimeoutSeconds, type StepRecords, stepContext } from './step-records.ts';

/** Inputs larger than this are not copied onto the attempt record (its size is noted instead). */
export const MAX_RECORDED_INPUT_BYTES = 100_000;
const MAX_RETURNED_MESSAGE = 1000;

const clip = (text: string): string =>
  text.length > MAX_RETURNED_MESSAGE ? `${text.slice(0, MAX_RETURNED_MESSAGE - 1)}…` : text;

/** The step in flight and what it is checked against. */
export interface InFlight {
  readonly records: StepRecords;
  readonly step: StepRecord;
  readonly planStep: PlanStep;
}

export const done = (attempt: number): StepNext => ({ action: 'done', attempt });

/** Runs attempt `n` with `input` (a repeat finds the attempt recorded and goes on from its outcome). */
export async function runAttempt(
  ctx: Interpreter,
  call: CapabilityCaller,
  flight: InFlight,
  n: number,
  input: unknown,
  recorded?: AttemptRecord,
): Promise<StepNext> {
  const { records, step, planStep } = flight;
  const { catalog } = ctx.deps;
  const target = planStep.target ?? '';
  const capability = catalog.get(target);
  const context = await stepContext(ctx, records, step, planStep.successCriteria?.assert !== undefined);
  const startedAt = recorded?.startedAt ?? ctx.now();
  let attempt: AttemptRecord;
  // A later attempt is a new spend: once the run's budget is spent it is not made.
  const refusal = n > 1 ? claimRefusal(records, ctx.now()) : undefined;
  if (recorded !== undefined && recorded.outcome !== 'running') {
    attempt = recorded;
  } else if (refusal !== undefined) {
    attempt = failedAttempt(
      { step, n, target, startedAt, finishedAt: ctx.now() },
      input,
      {},
      {
        code: BUDGET_ERROR_CODE,
        message: `not made: ${refusal}`,
        retryable: false,
      },
    );
  } else if (!capability) {
    attempt = failedAttempt(
      { step, n, target, startedAt, finishedAt: ctx.now() },
      input,
      {},
      {
        code: 'E_UNKNOWN_TARGET',
        message: `${target} is not in the capability catalog`,
        retryable: false,
      },
    );
  } else {
    const request: CapabilityCall = {
      runId: step.runId,
      stepId: step.stepId,
      generation: step.generation,
      attempt: n,
      target,
      capability,
      input,
      step: {
        title: planStep.title,
        ...(planStep.description === undefined ? {} : { description: planStep.description }),
        ...(planStep.successCriteria === undefined ? {} : { successCriteria: planStep.successCriteria }),
      },
      objective: records.run.objective,
      upstreamOutputs: context.direct,
      idempotencyKey: idempotencyKey(step.runId, step.stepId, step.generation),
    };
    const called = await call(request, capability.sideEffect, () => stillInFlight(ctx, step));
    if (called.refused) return notStarted(ctx, step, n);
    const { answer, replayed } = called;
    const evidence = {
      sideEffect: capability.sideEffect,
      ...(capability.sideEffect === 'none' ? {} : { idempotencyKey: request.idempotencyKey, replayed }),
      ...answer.evidence,
    };
    const { fields, inputEvidence } = base(step, n, target, startedAt, input);
    const usage = answer.usage === undefined ? {} : { usage: answer.usage };
    attempt = answer.ok
      ? {
          ...fields,
          ...usage,
          outcome: 'succeeded',
          finishedAt: ctx.now(),
          output: answer.output,
          confidence: answer.confidence ?? null,
          evidence: { ...evidence, ...inputEvidence, ...(answer.note === undefined ? {} : { note: answer.note }) },
        }
      : {
          ...failedAttempt({ step, n, target, startedAt, finishedAt: ctx.now() }, input, evidence, {
            code: answer.failure.code,
            message: clip(answer.failure.message),
            retryable: answer.failure.retryable,
            ...(answer.failure.details === undefined
              ? {}
              : { details: answer.failure.details as StepError['details'] }),
          }),
          ...usage,
        };
  }
  const expected = planStep.expect === undefined ? undefined : judgeExpectation(planStep.expect, attempt);
  if (expected) attempt = expected.attempt;
  const verdict = expected
    ? expected.verdict
    : attempt.outcome === 'succeeded'
      ? decideVerdict({
          contract: catalog.validateOutput(target, attempt.output),
          criteria: checkCriteriaSchema(planStep, attempt.output),
          assertion: await evaluateAssertion(
            evaluatorOf(ctx.deps),
            planStep,
            { objective: records.run.objective, outputs: context.outputs },
            attempt.output,
          ),
          confidence: attempt.confidence,
          confidenceThreshold: planStep.confidenceThreshold,
        })
      : undefined;
  const outcome = decideAttemptOutcome(
    n,
    verdict ? { verdict } : { error: attempt.error as StepError },
    policyOf(ctx, planStep),
  );
  if (recorded === undefined || recorded.outcome === 'running') {
    if (!(await ctx.deps.store.putAttempt(withVerdict(attempt, verdict, records.run.revision)))) {
      // Another copy of this RunStep (a duplicated or repeated invocation) recorded the attempt first: its record
      // is the attempt's outcome, whatever this copy's call answered, so the step and its attempts agree.
      const first = await ctx.deps.store.getAttempt(step.runId, step.stepId, {
        generation: step.generation,
        attempt: n,
      });
      if (first && first.outcome !== 'running') return runAttempt(ctx, call, flight, n, input, first);
    }
  }
  // Counted once the attempt is recorded (a repeat of this entry finds it recorded and counts it, once).
  const sums = await countUsage(ctx, records, planStep, attempt);
  const decided = stepBudgetOutcome(outcome, planStep, step, sums?.step, ctx.now());
  return follow(ctx, flight, n, decided, execNote(attempt), {
    output: attempt.output,
    confidence: attempt.confidence ?? null,
  });
}

/**
 * The gate right before a side effect, read consistently: the step is still this execution's and in flight, and its
 * run still lets steps move. A cancellation closes the open steps before it finishes the run, so either read sees it.
 */
async function stillInFlight(ctx: Interpreter, claimed: StepRecord): Promise<boolean> {
  const { run, step } = await ctx.loadStep(claimed.runId, claimed.stepId);
  return (
    letsStepsMove(run.status) &&
    isCurrent(step, claimed.generation) &&
    step.claimedBy === claimed.claimedBy &&
    IN_FLIGHT_STEP_STATUSES.includes(step.status)
  );
}

/** The gate refused: the run stopped between the claim and the side effect, which was not made; no attempt ran. */
async function notStarted(ctx: Interpreter, step: StepRecord, n: number): Promise<StepNext> {
  await ctx.transitionStep(step.runId, step.stepId, transitionCondition('evidence', step.generation), {
    appendTrace: [
      traceEntry('exec', `attempt ${n} not started: the run had stopped, so its side effect was not made`, ctx.now()),
    ],
  });
  return done(n);
}

/**
 * The step was cancelled while attempt `n` ran (the run was cancelled, or ended at its deadline): it stays cancelled,
 * and what the attempt really did is written onto it as evidence — its output when it succeeded, else the note — so
 * the step, its attempt record and any side effect agree. Nothing is announced: the run has finished.
 */
async function recordLate(
  ctx: Interpreter,
  claimed: StepRecord,
  current: StepRecord | undefined,
  n: number,
  note: string,
  kept?: { readonly output: unknown; readonly confidence: number | null },
): Promise<void> {
  if (!isCurrent(current, claimed.generation) || current.status !== 'cancelled') return;
  if (current.claimedBy !== claimed.claimedBy) return;
  const text = `${note} — after the step was cancelled (${current.error?.code ?? 'cancelled'}); it stays cancelled`;
  if (current.trace.some((entry) => entry.text === text)) return; // a repeat: written already
  await ctx.transitionStep(current.runId, current.stepId, transitionCondition('evidence', current.generation), {
    attempts: Math.max(current.attempts, n),
    ...(kept === undefined ? {} : { output: kept.output, confidence: kept.confidence }),
    appendTrace: [traceEntry('exec', text, ctx.now())],
  });
}

/** The fields every attempt record has; an input too large to copy is noted by its size instead. */
function base(step: StepRecord, n: number, target: string, startedAt: string, input: unknown) {
  const text = JSON.stringify(input) ?? 'null';
  const bytes = Buffer.byteLength(text, 'utf8');
  const recordInput = bytes <= MAX_RECORDED_INPUT_BYTES;
  return {
    fields: {
      runId: step.runId,
      stepId: step.stepId,
      generation: step.generation,
      attempt: n,
      target,
      startedAt,
      ...(recordInput ? { input } : {}),
    },
    inputEvidence: recordInput ? {} : { inputBytes: bytes, inputRecorded: false },
  };
}

function failedAttempt(
  at: { step: StepRecord; n: number; target: string; startedAt: string; finishedAt: string },
  input: unknown,
  evidence: Record<string, unknown>,
  error: StepError,
): AttemptRecord {
  const { fields, inputEvidence } = base(at.step, at.n, at.target, at.startedAt, input);
  return {
    ...fields,
    outcome: 'failed',
    finishedAt: at.finishedAt,
    error,
    evidence: { ...evidence, ...inputEvidence },
  };
}

/**
 * A step that expects its capability to fail: a matching failure becomes the attempt's success, the failure its
 * output (`{ failure: { code, message } }`, what dependents read) and its evidence (`expectedFailure`); a success
 * gets a failing verdict; another failure is left as it is. An attempt recorded as met already (a repeat) stays met.
 */
function judgeExpectation(
  expectation: StepExpectation,
  attempt: AttemptRecord,
): { attempt: AttemptRecord; verdict: Verdict | undefined } {
  if (attempt.evidence.expectedFailure !== undefined) return { attempt, verdict: { verdict: 'pass' } };
  const decided = decideExpectedFailure(
    expectation,
    attempt.outcome === 'succeeded'
      ? { ok: true, output: attempt.output }
      : { ok: false, error: attempt.error ?? { code: 'E_UNKNOWN', message: 'no error was recorded' } },
  );
  if (decided.kind === 'other') return { attempt, verdict: undefined };
  if (decided.kind === 'unmet') return { attempt, verdict: decided.verdict };
  const { error: _met, ...rest } = attempt;
  return {
    attempt: {
      ...rest,
      outcome: 'succeeded',
      output: { failure: decided.evidence.failure },
      evidence: { ...attempt.evidence, expectedFailure: decided.evidence },
    },
    verdict: { verdict: 'pass' },
  };
}

/** The record as written: the plan revision it ran under and its verdict (a failed call is a `fail`). */
const withVerdict = (attempt: AttemptRecord, verdict: Verdict | undefined, revision: number): AttemptRecord =>
  verdict === undefined
    ? { ...attempt, revision, verdict: 'fail' }
    : { ...attempt, revision, verdict: verdict.verdict, evidence: { ...attempt.evidence, verdict: verdict.verdict } };

function execNote(attempt: AttemptRecord): string {
  const via = String(attempt.evidence.binding ?? 'binding');
  const met = attempt.evidence.expectedFailure as { failure?: { code: string; message: string } } | undefined;
  if (met?.failure)
    return `attempt ${attempt.attempt} of ${attempt.target} failed as expected: ${met.failure.code} ${met.failure.message}`;
  if (attempt.outcome === 'failed') {
    const kind = attempt.error?.retryable === false ? 'permanent' : 'retryable';
    return `attempt ${attempt.attempt} of ${attempt.target} failed (${kind}): ${attempt.error?.code} ${attempt.error?.message}`;
  }
  const parts = [
    `attempt ${attempt.attempt}: ${attempt.target} via ${via} succeeded`,
    attempt.evidence.replayed === true
      ? `(replayed the recorded result of ${String(attempt.evidence.idempotencyKey)}: not called twice)`
      : `in ${String(attempt.evidence.durationMs)} ms`,
    attempt.confidence === null || attempt.confidence === undefined ? '' : `confidence ${attempt.confidence}`,
    typeof attempt.evidence.note === 'string' ? `— ${attempt.evidence.note}` : '',
  ];
  return parts.filter((p) => p.length > 0).join(' ');
}

const policyOf = (ctx: Interpreter, planStep: PlanStep) =>
  retryPolicy(planStep, { baseSeconds: ctx.deps.config.retryBaseSeconds, capSeconds: ctx.deps.config.retryCapSeconds });

/**
 * Writes what the engine decided after attempt `n`, and performs its effects; then a run over its budget is looked
 * at (it ends once nothing is in flight).
 */
export async function follow(
  ctx: Interpreter,
  flight: InFlight,
  n: number,
  outcome: AttemptOutcome,
  note: string,
  result: { readonly output: unknown; readonly confidence: number | null },
  decision?: HumanDecision,
): Promise<StepNext> {
  const next = await followOutcome(ctx, flight, n, outcome, note, result, decision);
  await afterSpend(ctx, flight.records);
  return next;
}

async function followOutcome(
  ctx: Interpreter,
  flight: InFlight,
  n: number,
  outcome: AttemptOutcome,
  note: string,
  result: { readonly output: unknown; readonly confidence: number | null },
  decision?: HumanDecision,
): Promise<StepNext> {
  const { records, step, planStep } = flight;
  const now = ctx.now();
  const { runId, stepId, generation } = step;
  switch (outcome.kind) {
    case 'succeed':
      return succeed(ctx, flight, n, result, [traceEntry(decision ? 'judge' : 'exec', note, now)]);
    case 'review':
      return {
        action: 'await',
        attempt: n,
        kind: 'review',
        timeoutSeconds: approvalTimeoutSeconds(planStep, ctx.deps.config),
      };
    case 'retry': {
      const next: StepNext = { action: 'retry', attempt: outcome.attempt, delaySeconds: outcome.delaySeconds };
      // A repeat of a failure already recorded: the same answer, nothing written twice.
      if (step.status === 'retrying' && step.attempts === n) return next;
      const text = `${note}; attempt ${outcome.attempt} in ${outcome.delaySeconds}s`;
      const retrying = await ctx.transitionStep(
        runId,
        stepId,
        transitionCondition('retry', generation),
        { status: 'retrying', attempts: n, error: outcome.error, appendTrace: [traceEntry('fail', text, now)] },
        [
          event('StepRetrying', {
            runId,
            stepId,
            generation,
            attempt: outcome.attempt,
            delaySeconds: outcome.delaySeconds,
            error: outcome.error,
          }),
        ],
      );
      if (retrying) return next;
      const current = await ctx.deps.store.getStep(runId, stepId);
      if (isCurrent(current, generation) && current.status === 'retrying' && current.attempts === n) return next;
      await recordLate(ctx, step, current, n, note);
      return done(n);
    }
    case 'fail': {
      const by = decision?.by ? ` by ${decision.by}` : '';
      const why = decision
        ? `${decision.decision}${by}`
        : outcome.why === 'permanent'
          ? 'permanent error'
          : `after ${n} attempt(s)`;
      const failed = await failStep(ctx, records.plan, step, outcome.error, {
        attempts: n,
        note: `failed (${why}): ${outcome.error.code} ${outcome.error.message}`,
      });
      if (!failed) await recordLate(ctx, step, await ctx.deps.store.getStep(runId, stepId), n, note);
      return done(n);
    }
  }
}

/**
 * A verified result: the step succeeds with the attempt's output, only if it is still this generation (a superseded
 * generation's late result never overwrites), trace retention applies, dependents are released once per edge and
 * the run's end is checked. A repeat finds the step succeeded and only redoes the follow-ups.
 */
async function succeed(
  ctx: Interpreter,
  flight: InFlight,
  n: number,
  result: { readonly output: unknown; readonly confidence: number | null },
  notes: readonly TraceEntry[],
): Promise<StepNext> {
  const { records, step, planStep } = flight;
  const { store, config } = ctx.deps;
  const { runId, stepId, generation } = step;
  const now = ctx.now();
  const { confidence } = result;
  const judged = traceEntry(
    'judge',
    `succeeded with attempt ${n}${confidence === null ? '' : ` (confidence ${confidence})`}`,
    now,
  );
  const attempts = Math.max(step.attempts, n);
  const succeeded = await ctx.transitionStep(
    runId,
    stepId,
    transitionCondition('succeed', generation),
    {
      status: 'succeeded',
      output: result.output,
      confidence,
      attempts,
      error: null,
      finishedAt: now,
      trace: appendAndRetain(step.trace, [...notes, judged], 'succeeded', config.traceRetention),
    },
    [event('StepSucceeded', { runId, stepId, generation, attempts, confidence })],
  );
  if (succeeded) {
    recordStepDuration(ctx.deps.metrics, succeeded, planStep.target, 'succeeded');
  } else {
    const current = await store.getStep(runId, stepId);
    if (!isCurrent(current, generation) || current.status !== 'succeeded') {
      await recordLate(ctx, step, current, n, notes.map((entry) => entry.text).join('; '), result);
      return done(n);
    }
  }
  await afterSuccess(ctx, records.plan, step);
  return done(n);
}
