/**
 * RunStep: the one call the step machine makes per step on the happy path. The run's decider started this execution
 * for the step's generation (its name is on the step: `claimedBy`); RunStep evaluates the step's `when` and input,
 * makes the attempt (the capability's call, its verification, the attempt's evidence) and tells the decider what
 * came of it; the state machine keeps what it does well — the backoff between attempts and the wait for a person —
 * and RunStep's answer (`StepNext`) says which comes next.
 *
 * Every entry is idempotent: an attempt is recorded once, a side-effecting call goes through its idempotency record,
 * and the decider counts each attempt's word once. A retried invocation (a throttle, a timeout, a lost answer)
 * carries on from what the records say. A step that is no longer this execution's (its run ended, it moved on)
 * makes RunStep end without doing anything.
 */

import { CLAIM_ERROR_CODES, claimEvaluates } from '../../engine/claim.ts';
import { isCompensationStepId } from '../../engine/compensation.ts';
import { letsAttemptsStart } from '../../engine/run/rules/flow.ts';
import { IN_FLIGHT_STEP_STATUSES } from '../../engine/statuses.ts';
import type { HumanDecision } from '../../engine/verify.ts';
import { isExpressionLimitError } from '../../errors.ts';
import type { StepError } from '../../plan/schema.ts';
import type { CapabilityRegistry } from '../../ports/capabilities.ts';
import type { StepRecord } from '../../ports/store.ts';
import { evaluatorOf, prepareClaim } from '../coordinator-inputs.ts';
import type { CoordinatorDeps, RunStepRequest, StepNext, StepRef } from '../coordinator-types.ts';
import { createInterpreter, type Interpreter, kindOf } from '../interpreter.ts';
import { evaluateStepInput } from '../step-input.ts';
import { runAttempt } from './attempt.ts';
import { type CapabilityCallConfig, type CapabilityCaller, createCapabilityCaller } from './capability-call.ts';
import { runCompensation } from './compensation-step.ts';
import { awaitGate, awaitPerson, judge } from './gate.ts';
import { done, executionName, type InFlight, tell } from './report.ts';
import { loadStepRecords, type RevisionMemory, type StepRecords, stepContext } from './step-records.ts';

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
      const ref: StepRef = { runId: request.runId, stepId: request.stepId, generation: request.generation };
      const execution = executionName(request.executionId);
      const { previous, brief } = request;
      if (previous === null) {
        const records = await loadStepRecords(ctx, memory, ref, 1, brief);
        const flight = inFlight(records, execution);
        return flight === undefined ? done(attemptsMadeBy(records.step, ref, execution)) : enter(ctx, call, flight);
      }
      if (previous.action === 'retry') {
        // Attempt 1 holds the input every attempt of the generation runs with. The attempt to run may be recorded
        // already (this entry is a repeat: its Task was retried after the record was written): it goes on from there.
        const [records, recorded] = await Promise.all([
          loadStepRecords(ctx, memory, ref, 1, brief),
          ctx.deps.store.getAttempt(ref.runId, ref.stepId, { generation: ref.generation, attempt: previous.attempt }),
        ]);
        const flight = inFlight(records, execution);
        if (flight === undefined) return done(previous.attempt);
        if (recorded && recorded.outcome !== 'running')
          return runAttempt(ctx, call, flight, previous.attempt, recorded.input, recorded);
        if (!letsAttemptsStart(records.run)) return done(previous.attempt);
        const input = await inputOf(ctx, records, flight);
        if (input instanceof InputLimit) return failBeforeCall(ctx, flight, previous.attempt, input.error);
        return runAttempt(ctx, call, flight, previous.attempt, input, recorded);
      }
      if (previous.action === 'await') {
        const records = await loadStepRecords(ctx, memory, ref, previous.attempt, brief);
        const flight = inFlight(records, execution);
        if (flight === undefined) return done(previous.attempt);
        return judge(ctx, flight, previous.attempt, records.attempt, request.decision ?? NO_DECISION);
      }
      return done(previous.attempt);
    },
  };
}

/** The step, still this generation's, held by this execution and in flight: the only one RunStep works on. */
function inFlight(records: StepRecords, execution: string): InFlight | undefined {
  const { step, planStep } = records;
  if (!step || !planStep || step.claimedBy !== execution || !IN_FLIGHT_STEP_STATUSES.includes(step.status))
    return undefined;
  return { records, step, planStep };
}

/** The attempts a generation made under this execution, once it is no longer in flight (0: none, or not its own). */
function attemptsMadeBy(step: StepRecord | undefined, ref: StepRef, execution: string): number {
  return step?.generation === ref.generation && step.claimedBy === execution ? step.attempts : 0;
}

/**
 * The first entry: the step's `when` and input decide whether it runs (skipped, failed before any attempt); a gate
 * waits for a person, any other step makes its first attempt. A repeat of this entry (its Task retried) finds attempt
 * 1 recorded and carries on from it.
 */
async function enter(ctx: Interpreter, call: CapabilityCaller, flight: InFlight): Promise<StepNext> {
  const { records, step, planStep } = flight;
  const human = kindOf(planStep) === 'human';
  const recorded = records.attempt;
  if (step.status === 'awaiting_approval')
    return awaitPerson(ctx, flight, Math.max(1, step.attempts), human ? 'approval' : 'review');
  if (recorded !== undefined && human) return awaitPerson(ctx, flight, 1, 'approval');
  if (recorded !== undefined && recorded.outcome !== 'running')
    return runAttempt(ctx, call, flight, 1, recorded.input, recorded);
  if (!letsAttemptsStart(records.run)) return done(0);
  const context = await stepContext(ctx, records, step, claimEvaluates(planStep));
  const prepared = await prepareClaim(ctx, planStep, { objective: records.run.objective, outputs: context.outputs });
  if (prepared.outcome === 'fail') {
    await tell(ctx, step, 0, { kind: 'rejected', error: prepared.error }, prepared.error.message);
    return done(0);
  }
  if (prepared.outcome === 'skip') {
    await tell(ctx, step, 0, { kind: 'skipped', reason: prepared.reason }, `skipped: ${prepared.reason}`);
    return done(0);
  }
  if (human) return awaitGate(ctx, flight, prepared.input);
  return runAttempt(ctx, call, flight, 1, prepared.input);
}

/** An input evaluated again (for a later attempt) that hit a bound of the sandbox: the attempt fails for good. */
class InputLimit {
  constructor(readonly error: StepError) {}
}

/**
 * The input an attempt runs with: what attempt 1 recorded, else evaluated again (nothing recorded it, or it was too
 * large to record). A bound hit on the way is the same E_EXPRESSION_LIMIT as at the first entry.
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

/** An attempt that failed before its call (its input hit a bound): told as the attempt's failure. */
async function failBeforeCall(ctx: Interpreter, flight: InFlight, n: number, error: StepError): Promise<StepNext> {
  await tell(ctx, flight.step, n, { kind: 'failed', error }, `attempt ${n} failed: ${error.code} ${error.message}`);
  return done(n);
}
