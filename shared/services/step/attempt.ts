/**
 * One attempt of a step its execution holds: the capability's answer (capability-call.ts), the verdict on the output
 * (contract, success assertion, confidence), the attempt record written once with both — on the step's item itself,
 * with its output, for a first attempt that succeeds, else as an item of its own — then reported to the run's
 * decider (report.ts), which decides what the step becomes.
 */

import {
  attemptBase,
  clipReturnedMessage,
  execNote,
  failedAttempt,
  judgeExpectation,
  withVerdict,
} from '../../engine/attempt-record.ts';
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
import { checkCriteriaSchema, decideVerdict, judgedConfidence } from '../../engine/verify.ts';
import type { PlanStep, StepError } from '../../plan/schema.ts';
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
    const { fields, inputEvidence } = attemptBase(step, n, target, startedAt, input);
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
            message: clipReturnedMessage(answer.failure.message),
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

const policyOf = (ctx: Interpreter, planStep: PlanStep) =>
  retryPolicy(planStep, { baseSeconds: ctx.deps.config.retryBaseSeconds, capSeconds: ctx.deps.config.retryCapSeconds });
