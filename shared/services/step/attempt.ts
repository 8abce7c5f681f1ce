/**
 * One attempt of a step its execution holds: the capability's answer (capability-call.ts), the verdict on the output
 * (contract, success assertion, confidence), the attempt record written once with both — on the step's item itself,
 * with its output, for a first attempt that succeeds, else as an item of its own — then reported to the run's
 * decider (report.ts), which decides what the step becomes.
 */

import { effectiveBudget } from '../../engine/budget.ts';
import { retryPolicy } from '../../engine/retry.ts';
import { letsAttemptsStart } from '../../engine/run/rules/flow.ts';
import { IN_FLIGHT_STEP_STATUSES } from '../../engine/statuses.ts';
import { attemptRecordPlace, decideAttemptOutcome } from '../../engine/step-lifecycle.ts';
import {
  type AttemptTimeLimit,
  attemptTimeLimit,
  boundRetry,
  remainingMs,
  timeExhausted,
} from '../../engine/step-seconds.ts';
import {
  checkCriteriaSchema,
  decideExpectedFailure,
  decideVerdict,
  judgedConfidence,
  type Verdict,
} from '../../engine/verify.ts';
import type { PlanStep, StepError, StepExpectation } from '../../plan/schema.ts';
import type { CapabilityCall } from '../../ports/capabilities.ts';
import type { AttemptRecord, StepRecord } from '../../ports/store.ts';
import { evaluateAssertion, evaluatorOf } from '../coordinator-inputs.ts';
import type { StepNext } from '../coordinator-types.ts';
import { type Interpreter, isCurrent } from '../interpreter.ts';
import { attemptSpends, claimRefusal, runBudgetStop, stepBudgetOutcome } from './budget-keeping.ts';
import type { CallTimeLimit, CapabilityCaller } from './capability-call.ts';
import { idempotencyKey } from './idempotent-call.ts';
import { done, type InFlight, report, tell } from './report.ts';
import { stepContext } from './step-records.ts';

/** Inputs larger than this are not copied onto the attempt record (its size is noted instead). */
export const MAX_RECORDED_INPUT_BYTES = 100_000;
const MAX_RETURNED_MESSAGE = 1000;

const clip = (text: string): string =>
  text.length > MAX_RETURNED_MESSAGE ? `${text.slice(0, MAX_RETURNED_MESSAGE - 1)}…` : text;

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
  const timeLimit = attemptTimeLimit(
    {
      step: planStep.budget,
      stepStartedAt: step.startedAt,
      run: effectiveBudget(records.brief?.budget, records.run.raisedBudget),
      runCreatedAt: records.run.createdAt,
    },
    ctx.now(),
  );
  if (recorded !== undefined && recorded.outcome !== 'running') {
    attempt = recorded;
  } else if (refusal !== undefined) {
    attempt = failedAttempt(
      { step, n, target, startedAt, finishedAt: ctx.now() },
      input,
      {},
      runBudgetStop(`not made: ${refusal}`),
    );
  } else if (timeLimit !== undefined && remainingMs(timeLimit, ctx.now()) === 0) {
    attempt = failedAttempt(
      { step, n, target, startedAt, finishedAt: ctx.now() },
      input,
      {},
      timeExhausted(timeLimit, ctx.now(), `attempt ${n} was not made`),
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
    const called = await call(
      request,
      capability.sideEffect,
      () => stillInFlight(ctx, step),
      timeLimit === undefined ? undefined : abandonAt(ctx, timeLimit, `attempt ${n} of ${target}`),
    );
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
          confidence: judgedConfidence(target, attempt.confidence),
          confidenceThreshold: planStep.confidenceThreshold,
        })
      : undefined;
  const outcome = boundRetry(
    decideAttemptOutcome(n, verdict ? { verdict } : { error: attempt.error as StepError }, policyOf(ctx, planStep)),
    timeLimit,
    ctx.now(),
  );
  const record = withVerdict(attempt, verdict, records.run.revision);
  const decided = stepBudgetOutcome(outcome, planStep, step, undefined, ctx.now());
  if (recorded === undefined) {
    const place = attemptRecordPlace({
      number: n,
      outcome: decided,
      spends: attemptSpends(record),
      chars: JSON.stringify(record).length,
    });
    // A first attempt that succeeds rides on its step's item with its output: one write, read by every dependent.
    if (place === 'with-success') {
      const carried = await ctx.deps.store.transitionStep(
        step.runId,
        step.stepId,
        { generation: step.generation, from: IN_FLIGHT_STEP_STATUSES },
        { attemptRecord: record, output: record.output ?? null, confidence: record.confidence ?? null },
      );
      if (carried !== undefined)
        return report(ctx, flight, { attempt: n, outcome: decided, note: execNote(attempt), record, written: true });
    }
  }
  if (recorded === undefined || recorded.outcome === 'running') {
    if (!(await ctx.deps.store.putAttempt(record))) {
      // Another copy of this RunStep (a duplicated or repeated invocation) recorded the attempt first: its record
      // is the attempt's outcome, whatever this copy's call answered, so the step and its attempts agree.
      const first = await ctx.deps.store.getAttempt(step.runId, step.stepId, {
        generation: step.generation,
        attempt: n,
      });
      if (first && first.outcome !== 'running') return runAttempt(ctx, call, flight, n, input, first);
    }
  }
  return report(ctx, flight, { attempt: n, outcome: decided, note: execNote(attempt), record });
}

/** The call's bound: what is left of the limit when it starts; past it the call is abandoned with the figures. */
function abandonAt(ctx: Interpreter, limit: AttemptTimeLimit, what: string): CallTimeLimit {
  return {
    remainingMs: () => remainingMs(limit, ctx.now()),
    failure: () => {
      const error = timeExhausted(limit, ctx.now(), `${what} was abandoned at the limit (its work may still finish)`);
      return { code: error.code, message: error.message, retryable: false, details: error.details };
    },
  };
}

/**
 * The gate right before a side effect, read consistently: the step is still this execution's and in flight, and its
 * run still lets attempts start. A cancellation marks the run before it closes the open steps, so a side effect not
 * started when a cancel began is never made.
 */
async function stillInFlight(ctx: Interpreter, claimed: StepRecord): Promise<boolean> {
  const { run, step } = await ctx.loadStep(claimed.runId, claimed.stepId);
  return (
    letsAttemptsStart(run) &&
    isCurrent(step, claimed.generation) &&
    step.claimedBy === claimed.claimedBy &&
    IN_FLIGHT_STEP_STATUSES.includes(step.status)
  );
}

/** The gate refused: the run stopped letting attempts start, and the side effect was not made: no attempt ran. */
async function notStarted(ctx: Interpreter, step: StepRecord, n: number): Promise<StepNext> {
  const note = `attempt ${n} not started: the run had stopped, so its side effect was not made`;
  await tell(ctx, step, n, { kind: 'notStarted', note }, note);
  return done(n);
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
