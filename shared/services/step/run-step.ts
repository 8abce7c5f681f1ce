/**
 * RunStep: the one call the step machine makes per step on the happy path. Claim, capability call, verification,
 * completion and the release of dependents happen in this one invocation; the state machine keeps what it does well
 * — the backoff wait between attempts and the task-token wait for a person — and RunStep's answer (`StepNext`) says
 * which comes next. The coordinator's RecordFailure (a RunStep that crashed for good, a failed wait) ends in the same
 * decision through `recordFailedAttempt` (failed-attempt.ts).
 *
 * Every entry is idempotent: the claim is conditional on the execution, an attempt is recorded once, a
 * side-effecting call goes through its idempotency record, completion and release are conditional writes. So a
 * retried invocation (a throttle, a timeout, a lost answer) carries on from what the records say.
 */

import { isCompensationStepId } from '../../engine/compensation.ts';
import { isReplanWatchStepId } from '../../engine/replan/watch.ts';
import { isTerminalStepStatus, leftOpenByCancel, letsAttemptsStart } from '../../engine/statuses.ts';
import {
  closeAttempt,
  decideAttemptOutcome,
  decideClaim,
  orphanedAttemptEnding,
  transitionCondition,
} from '../../engine/step-lifecycle.ts';
import { traceEntry } from '../../engine/trace.ts';
import { candidateOutput, decideVerdict, type HumanDecision } from '../../engine/verify.ts';
import { isExpressionLimitError } from '../../errors.ts';
import type { StepError } from '../../plan/schema.ts';
import type { CapabilityRegistry } from '../../ports/capabilities.ts';
import type { AttemptRecord, StepRecord } from '../../ports/store.ts';
import { closeAttemptOf } from '../attempt-closing.ts';
import { finishBegunCancel } from '../cancellation.ts';
import { recordDecisionWait } from '../coordinator-approval.ts';
import {
  CLAIM_ERROR_CODES,
  checkCriteriaSchema,
  claimEvaluates,
  evaluateAssertion,
  evaluatorOf,
  prepareClaim,
} from '../coordinator-inputs.ts';
import type { CoordinatorDeps, RunStepRequest, StepNext, StepRef } from '../coordinator-types.ts';
import { createInterpreter, event, type Interpreter, isCurrent, kindOf } from '../interpreter.ts';
import { replanWatchNext } from '../replan-watch.ts';
import { isRevisionWaitStepId } from '../revision-approvals.ts';
import { revisionWaitNext } from '../revision-wait.ts';
import { afterFailure, afterSuccess, failStep } from '../step-follow-ups.ts';
import { evaluateStepInput } from '../step-input.ts';
import { runAttempt } from './attempt.ts';
import { claimRefusal, refuseClaim } from './budget-keeping.ts';
import { type CapabilityCallConfig, type CapabilityCaller, createCapabilityCaller } from './capability-call.ts';
import { runCompensation } from './compensation-step.ts';
import { policyOf, recordFailedAttempt } from './failed-attempt.ts';
import { done, follow, type InFlight } from './outcome.ts';
import {
  loadStepRecords,
  type RevisionMemory,
  type StepRecords,
  stepApprovalWindow,
  stepContext,
} from './step-records.ts';

export interface StepRunnerDeps extends CoordinatorDeps {
  readonly registry: CapabilityRegistry;
  readonly capabilityCall?: CapabilityCallConfig;
}

export interface StepRunner {
  runStep(request: RunStepRequest): Promise<StepNext>;
}

/** What a wait that ended without a usable decision (a stale wait released by cairn) counts as. */
const NO_DECISION: HumanDecision = { decision: 'reject', comment: 'no decision was given', by: 'cairn' };

export function createStepRunner(deps: StepRunnerDeps): StepRunner {
  const ctx = createInterpreter(deps);
  const memory: RevisionMemory = new Map();
  const call = createCapabilityCaller({
    store: deps.store,
    registry: deps.registry,
    clock: deps.clock,
    config: deps.capabilityCall,
  });
  return {
    async runStep(request) {
      if (isCompensationStepId(request.stepId)) return runCompensation(ctx, call, request);
      if (isRevisionWaitStepId(request.stepId)) return revisionWaitNext(ctx, request);
      if (isReplanWatchStepId(request.stepId)) return replanWatchNext(ctx, request);
      const ref: StepRef = { runId: request.runId, stepId: request.stepId, generation: request.generation };
      const { previous } = request;
      if (previous === null)
        return enter(ctx, call, await loadStepRecords(ctx, memory, ref), ref.generation, request.executionId);
      if (previous.action === 'retry') {
        // Attempt 1 holds the input every attempt of the generation runs with. The attempt to run may be recorded
        // already (this entry is a repeat: its Task was retried after the record was written): it goes on from there.
        const [records, recorded] = await Promise.all([
          loadStepRecords(ctx, memory, ref, 1),
          ctx.deps.store.getAttempt(ref.runId, ref.stepId, { generation: ref.generation, attempt: previous.attempt }),
        ]);
        const flight = inFlight(records, request.executionId);
        if (!flight) return endedBefore(ctx, call, records, request.executionId, previous.attempt);
        if (recorded && recorded.outcome !== 'running')
          return runAttempt(ctx, call, flight, previous.attempt, recorded.input, recorded);
        // No new attempt once a cancel has begun (as no claim): the cancel, which may have died, is finished instead.
        if (!letsAttemptsStart(records.run))
          return finishBegunCancel(ctx, ref.runId).then(() => done(previous.attempt));
        const input = await inputOf(ctx, records, flight);
        if (input instanceof InputLimit) return recordFailedAttempt(ctx, ref, previous.attempt, input.error);
        return runAttempt(ctx, call, flight, previous.attempt, input, recorded);
      }
      if (previous.action === 'await') {
        const records = await loadStepRecords(ctx, memory, ref, previous.attempt);
        const flight = inFlight(records, request.executionId);
        if (!flight) return endedBefore(ctx, call, records, request.executionId, previous.attempt);
        return judge(ctx, flight, previous.attempt, records.attempt, request.decision ?? NO_DECISION);
      }
      return done(previous.attempt);
    },
  };
}

/** The step, still this generation's, claimed by this execution and not finished: the only one RunStep may move. */
function inFlight(records: StepRecords, executionId: string): InFlight | undefined {
  const { step, planStep } = records;
  if (!step || !planStep || step.claimedBy !== executionId || isTerminalStepStatus(step.status)) return undefined;
  return { records, step, planStep };
}

/**
 * Not in flight any more. If this execution ended the step, this is its Task retried after the end was written
 * (the follow-ups threw: a throttled release, a refused start): the follow-ups are redone, or a dependent waits for
 * a release that never comes and the run stays open with nothing left to move it.
 */
function endedBefore(
  ctx: Interpreter,
  call: CapabilityCaller,
  records: StepRecords,
  executionId: string,
  attempt: number,
): Promise<StepNext> | StepNext {
  const { step } = records;
  if (step?.claimedBy !== executionId || !isTerminalStepStatus(step.status)) return done(attempt);
  return resume(ctx, call, records, step, executionId);
}

/** The first entry: claim the step (or find it claimed by this execution, a retried task, and carry on). */
async function enter(
  ctx: Interpreter,
  call: CapabilityCaller,
  records: StepRecords,
  generation: number,
  executionId: string,
): Promise<StepNext> {
  const { run, step, planStep } = records;
  const refusal = claimRefusal(records, ctx.now());
  const decision = decideClaim(step, generation, executionId, letsAttemptsStart(run), refusal);
  if (decision.kind === 'ignore' || !step || !planStep) {
    // Refused by a cancel that has not closed the step: it may have died after its mark, so this claim finishes it.
    if (step && leftOpenByCancel(run, step, generation)) await finishBegunCancel(ctx, run.runId);
    return done(0);
  }
  if (decision.kind === 'resume') return resume(ctx, call, records, step, executionId);
  if (decision.kind === 'refuse') {
    await refuseClaim(ctx, records, step, executionId, decision.reason);
    return done(0);
  }

  const { runId, stepId } = step;
  const context = await stepContext(ctx, records, step, claimEvaluates(planStep));
  const prepared = await prepareClaim(ctx, planStep, { objective: run.objective, outputs: context.outputs });
  const now = ctx.now();
  if (prepared.outcome === 'fail') {
    const won = await failStep(ctx, records.plan, step, prepared.error, {
      from: transitionCondition('reject', generation).from,
      claimedBy: executionId,
      note: prepared.error.message,
    });
    return won ? done(0) : reenter(ctx, call, records, executionId);
  }
  if (prepared.outcome === 'skip') {
    const skipped = await ctx.transitionStep(
      runId,
      stepId,
      transitionCondition('skip', generation),
      {
        status: 'skipped',
        claimedBy: executionId,
        finishedAt: now,
        appendTrace: [traceEntry('judge', `skipped: ${prepared.reason}`, now)],
      },
      [event('StepSkipped', { runId, stepId, generation, reason: prepared.reason })],
    );
    if (!skipped) return reenter(ctx, call, records, executionId);
    await afterSuccess(ctx, records.plan, skipped);
    return done(0);
  }
  const claimed = await ctx.transitionStep(
    runId,
    stepId,
    transitionCondition('claim', generation),
    {
      status: 'running',
      claimedBy: executionId,
      attempts: 1,
      startedAt: now,
      appendTrace: [traceEntry('exec', `claimed by ${executionId}`, now)],
    },
    [event('StepStarted', { runId, stepId, generation, target: planStep.target, attempt: 1 })],
  );
  if (!claimed) return reenter(ctx, call, records, executionId);
  const flight: InFlight = { records, step: claimed, planStep };
  if (kindOf(planStep) === 'human') return awaitGate(ctx, flight, prepared.input, executionId);
  return runAttempt(ctx, call, flight, 1, prepared.input);
}

/** Lost the claim's condition: someone moved the step; if it was this execution (a repeat), carry on. */
async function reenter(ctx: Interpreter, call: CapabilityCaller, records: StepRecords, executionId: string) {
  const { step } = records;
  if (!step) return done(0);
  const current = await ctx.deps.store.getStep(step.runId, step.stepId);
  if (!isCurrent(current, step.generation) || current.claimedBy !== executionId) return done(0);
  return resume(ctx, call, records, current, executionId);
}

/** This execution claimed the step before (its task was retried): redo whatever the record says is missing. */
async function resume(
  ctx: Interpreter,
  call: CapabilityCaller,
  records: StepRecords,
  step: StepRecord,
  executionId: string,
): Promise<StepNext> {
  const planStep = records.planStep;
  if (!planStep) return done(0);
  if (step.status === 'skipped' || step.status === 'succeeded') {
    await afterSuccess(ctx, records.plan, step);
    return done(step.attempts);
  }
  if (step.status === 'failed') {
    await afterFailure(ctx, records.plan, step);
    return done(step.attempts);
  }
  if (isTerminalStepStatus(step.status)) return done(step.attempts);
  const n = Math.max(1, step.attempts);
  const human = kindOf(planStep) === 'human';
  const flight: InFlight = { records, step, planStep };
  if (step.status === 'awaiting_approval') return awaitPerson(ctx, flight, n, human ? 'approval' : 'review');
  const recorded = await ctx.deps.store.getAttempt(step.runId, step.stepId, {
    generation: step.generation,
    attempt: n,
  });
  if (human) return recorded ? awaitPerson(ctx, flight, n, 'approval') : awaitGate(ctx, flight, undefined, executionId);
  const first =
    n === 1
      ? recorded
      : await ctx.deps.store.getAttempt(step.runId, step.stepId, { generation: step.generation, attempt: 1 });
  const input = first?.input !== undefined ? first.input : await inputOf(ctx, records, flight);
  if (input instanceof InputLimit) return recordFailedAttempt(ctx, step, n, input.error);
  return runAttempt(ctx, call, flight, n, input, recorded);
}

/** An input evaluated again (for a later attempt) that hit a bound of the sandbox: the attempt fails for good. */
class InputLimit {
  constructor(readonly error: StepError) {}
}

/**
 * The input an attempt runs with: what attempt 1 recorded, else evaluated again (nothing recorded it, or it was too
 * large to record). A bound hit on the way is the same E_EXPRESSION_LIMIT as at the claim, as a failed attempt.
 */
async function inputOf(ctx: Interpreter, records: StepRecords, flight: InFlight): Promise<unknown> {
  if (records.attempt?.attempt === 1 && records.attempt.input !== undefined) return records.attempt.input;
  const context = await stepContext(ctx, records, flight.step, claimEvaluates(flight.planStep));
  try {
    return await evaluateStepInput(
      flight.planStep.input,
      { objective: records.run.objective, outputs: context.outputs },
      evaluatorOf(ctx.deps),
    );
  } catch (error) {
    if (!isExpressionLimitError(error)) throw error;
    return new InputLimit({ code: CLAIM_ERROR_CODES.expressionLimit, message: error.message, retryable: false });
  }
}

/** A human gate has no capability: its attempt 1 records the evaluated input the approver sees. */
async function awaitGate(ctx: Interpreter, flight: InFlight, input: unknown, executionId: string): Promise<StepNext> {
  const { step, planStep } = flight;
  const again = input === undefined ? await inputOf(ctx, flight.records, flight).catch(() => null) : input;
  const evaluated = again instanceof InputLimit ? null : again;
  const record: AttemptRecord = {
    runId: step.runId,
    stepId: step.stepId,
    generation: step.generation,
    attempt: 1,
    target: planStep.target ?? '',
    startedAt: ctx.now(),
    outcome: 'running',
    input: evaluated,
    revision: flight.records.run.revision,
    evidence: { gate: true, executionId },
  };
  await ctx.deps.store.putAttempt(record);
  // Whoever closed the step since the claim (its run ended, a new generation superseded it) may have looked for this
  // record before it landed: the step is read after it, so one of the two sees the other and the attempt is closed.
  const ending = orphanedAttemptEnding(await ctx.deps.store.getStep(step.runId, step.stepId), record);
  if (ending !== undefined) {
    await closeAttemptOf(ctx, step, { generation: step.generation, attempt: 1 }, ending);
    return done(1);
  }
  return awaitPerson(ctx, flight, 1, 'approval');
}

const awaitPerson = (ctx: Interpreter, flight: InFlight, n: number, kind: 'approval' | 'review'): StepNext => ({
  action: 'await',
  attempt: n,
  kind,
  timeoutSeconds: stepApprovalWindow(flight.planStep, ctx.deps.config, flight.records, ctx.now()).seconds,
});

/**
 * A person's decision on a gate or a review: the output it leaves (an approval, the held result, an edit) is
 * verified like any other; a rejection fails the step.
 */
async function judge(
  ctx: Interpreter,
  flight: InFlight,
  n: number,
  record: AttemptRecord | undefined,
  decision: HumanDecision,
): Promise<StepNext> {
  const { records, step, planStep } = flight;
  const target = planStep.target ?? '';
  const result =
    record && record.outcome !== 'failed' && record.output !== undefined ? { output: record.output } : undefined;
  const candidate = candidateOutput({ kind: kindOf(planStep), decision, result });
  let verdict = candidate.ok ? undefined : candidate.verdict;
  if (candidate.ok) {
    const context = await stepContext(ctx, records, step, planStep.successCriteria?.assert !== undefined);
    verdict = decideVerdict({
      decision,
      contract: ctx.deps.catalog.validateOutput(target, candidate.output),
      criteria: checkCriteriaSchema(planStep, candidate.output),
      assertion: await evaluateAssertion(
        evaluatorOf(ctx.deps),
        planStep,
        { objective: records.run.objective, outputs: context.outputs },
        candidate.output,
      ),
      confidence: record?.confidence,
      confidenceThreshold: planStep.confidenceThreshold,
    });
  }
  const outcome = decideAttemptOutcome(n, { verdict: verdict ?? { verdict: 'pass' } }, policyOf(ctx, flight));
  const now = ctx.now();
  if (outcome.kind === 'succeed' && candidate.ok && candidate.source !== 'result') {
    // A passing decision is the attempt's ending whatever was recorded before (as the step's success is).
    const open: AttemptRecord = {
      ...(record ?? { runId: step.runId, stepId: step.stepId, generation: step.generation, attempt: n, target }),
      startedAt: record?.startedAt ?? now,
      outcome: 'running',
      revision: record?.revision ?? records.run.revision,
      evidence: record?.evidence ?? {},
    };
    const ending = { kind: 'decided', decision, verdict: 'pass', output: candidate.output } as const;
    const decided = closeAttempt(open, ending, now);
    if (decided && record) await ctx.deps.store.updateAttempt(decided);
    else if (decided) await ctx.deps.store.putAttempt(decided);
  } else if (record && (outcome.kind === 'fail' || outcome.kind === 'retry')) {
    // A rejection (or a decision that failed verification) ends the gate's attempt as well as the step.
    const error = verdict?.verdict === 'fail' ? verdict.error : undefined;
    const closed = closeAttempt(
      record,
      { kind: 'decided', decision, verdict: 'fail', ...(error ? { error } : {}) },
      now,
    );
    if (closed) await ctx.deps.store.updateAttempt(closed);
  }
  await recordDecisionWait(ctx, step, decision.decision);
  const by = decision.by ? ` by ${decision.by}` : '';
  const said = `${decision.decision}${by}`;
  const note =
    verdict?.verdict === 'fail' ? `${said}: fail ${verdict.error.code} ${verdict.error.message}` : `${said}: pass`;
  return follow(ctx, flight, {
    attempt: n,
    outcome,
    note,
    result: { output: candidate.ok ? candidate.output : null, confidence: record?.confidence ?? null },
    decision,
  });
}
