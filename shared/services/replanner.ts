/**
 * The replanner (issue 4): answers a final step failure (StepFailed with `final: true`, routed by BUS_RULES), an
 * exhausted plan budget under `onExhausted: "replan"` (once per run, replanner-budget.ts, through `revise` with the
 * figures instead of a failure) and a person's `POST /runs/{id}/replan` with a bounded, scoped revision of the plan.
 *
 * A failure: taken once (`handledFailures`: a duplicate or reordered event changes nothing), then the budget and
 * no-progress decision (the run paused for a person, with the reason), else the planner (HTN, or Bedrock when
 * configured) proposes revision n+1 within the failed step's scope, validated and held to the scope rule. It is
 * stored with a conditional write (of two racing replans one wins; the loser looks again and stops unless its own
 * failure still stands), the run moves to it (revision, replans, fingerprint, the PriorReplan record), removed steps
 * are superseded, changed ones start a new generation, added ones get a record, and what is due starts. No
 * alternative, or a revision that is invalid or breaks the scope: the failure stands and the run ends `failed`.
 *
 * A person's replan (`POST /runs/{id}/replan {reason, objective?}`) works on any run with a plan that is not
 * cancelled: the planner gets the reason and the new objective, and may change the whole plan (requestScope:
 * finished steps kept as they were keep their outputs, changed ones run again); its failed step (or a gate left
 * waiting by its `pause` timeout policy), if any, is diagnosed for the planner. It reopens a finished run, and is
 * refused (409) for a cancelled run and at the replan limit.
 *
 * A revision that brings in a mutating target the previous revision did not have is not made current: it waits for
 * a person's approval (revision-approvals.ts), and is made then, if the run has not moved on meanwhile.
 *
 * Making a revision current is repeatable: the write that makes it current records what it does to the step
 * records (its application), and finishRevision writes only what has not landed; a platform error after that write
 * is never a decline: it is tried again here (PLATFORM_TRIES), then by the failure's redelivery (resumeRevision).
 */

import { BUDGET_ERROR_CODE } from '../engine/budget.ts';
import { isRunBudgetStop } from '../engine/budget-replan.ts';
import { triggerFor } from '../engine/replan/diagnosis.ts';
import { applyReplan, checkReplan, decideReplan, stepStates } from '../engine/replan.ts';
import { letsStepsMove } from '../engine/statuses.ts';
import { ConflictError, isConflictError, isTransientPlatformError } from '../errors.ts';
import type { RequestedReplan } from '../ports/plan-model.ts';
import type { StepRecord } from '../ports/store.ts';
import { failureKey, releaseFailure, replanDeclines, takeFailure } from './coordinator-replan.ts';
import { listRunSteps } from './initial-steps.ts';
import { createInterpreter } from './interpreter.ts';
import { withReadsTriedAgain } from './read-again.ts';
import { finishRevision } from './replanner-apply.ts';
import { budgetAnswer } from './replanner-budget.ts';
import type { Replanner, ReplannerDeps, ReplanOutcome, StepFailedRef } from './replanner-contract.ts';
import { type Attempt, createRevisionMaker, isMade, type Revised } from './replanner-revision.ts';
import {
  declineFailure,
  describeReplanError,
  fingerprintOf,
  replanTarget,
  sleep,
  withPlatformRetries,
} from './replanner-support.ts';
import {
  isCancelling,
  pendingRevisionApproval,
  rejectHeldRevision,
  runCancelled,
  settleRevisionApproval,
} from './revision-approvals.ts';
import { revisionExpiry } from './revision-wait.ts';
import { failurePolicies, isReplannable, pauseRun } from './run-end.ts';

export type { Replanner, ReplannerDeps, ReplanOutcome, StepFailedRef } from './replanner-contract.ts';

/** Tries of one failure against revisions that keep moving under it (each lost race means another replan won). */
const RACE_TRIES = 8;
const DEFAULT_RACE_DELAY_MS = 100;

export { PLATFORM_TRIES } from './replanner-support.ts';

export function createReplanner(given: ReplannerDeps): Replanner {
  const deps = { ...given, store: withReadsTriedAgain(given.store) };
  const ctx = createInterpreter(deps);
  const { store } = deps;
  const maxReplans = Math.max(0, Math.floor(deps.config.maxReplans ?? 0));
  const plannerDeps = {
    model: deps.model,
    catalog: deps.catalog,
    limits: { maxSteps: deps.config.maxSteps, maxDepth: deps.config.maxDepth },
  };
  const raceDelayMs = deps.raceDelayMs ?? DEFAULT_RACE_DELAY_MS;
  const raceDelay = (tries: number) => sleep(raceDelayMs * tries);

  const { makeRevision, commit, finish, revise } = createRevisionMaker({ ctx, plannerDeps });

  /**
   * The revision an earlier try of this answer made current, finished: the write that made it current recorded what
   * it does to the step records, and some of those writes may not have landed (a throttle, a store timeout). The
   * failed step may already have its new generation, so this is looked up before the failure itself.
   */
  async function resumeRevision(ref: StepFailedRef): Promise<ReplanOutcome | undefined> {
    const run = await store.getRun(ref.runId);
    const key = failureKey(ref);
    const made = run?.replanLog?.find((r) => r.failure === key);
    if (!run || !made) return undefined;
    if (!letsStepsMove(run.status)) return { outcome: 'ignored', why: 'run_ended' };
    if (made.revision !== run.revision || made.application === undefined)
      return { outcome: 'ignored', why: 'duplicate' };
    const loaded = await ctx.plan(run);
    await finishRevision(ctx, run.runId, loaded.plan, made.application, await listRunSteps(ctx, run.runId));
    return { outcome: 'revised', revision: made.revision };
  }

  /** Reads the run as it is now; undefined when the failure is gone (a newer generation, a newer revision). */
  async function current(ref: StepFailedRef): Promise<(Omit<Attempt, 'trigger'> & { failed: StepRecord }) | undefined> {
    const run = await store.getRun(ref.runId);
    if (!run || run.revision < 1) return undefined;
    const records = await listRunSteps(ctx, ref.runId);
    const failed = records.find((r) => r.stepId === ref.stepId);
    if (!failed || failed.generation !== ref.generation || failed.status !== 'failed') return undefined;
    const loaded = await ctx.plan(run);
    return loaded.byId.has(ref.stepId) ? { run, loaded, records, failed } : undefined;
  }

  async function answer(ref: StepFailedRef): Promise<ReplanOutcome> {
    const resumed = await resumeRevision(ref);
    if (resumed) return resumed;
    for (let tries = 1; tries <= RACE_TRIES; tries++) {
      const found = await current(ref);
      if (!found) return { outcome: 'ignored', why: 'stale' };
      const { run, failed } = found;
      const planStep = found.loaded.byId.get(failed.stepId);
      const why = isRunBudgetStop(failed.error)
        ? { code: BUDGET_ERROR_CODE, message: 'stopped by the run budget: its onExhausted decides, not a replan' }
        : planStep?.segment !== undefined
          ? // A failure inside a segment is answered by compensating the segment, not by revising the plan around it.
            { code: 'E_SEGMENT_COMPENSATED', message: `segment ${planStep.segment} is compensated instead` }
          : !isReplannable(failurePolicies(found.loaded), failed.stepId)
            ? { code: 'E_FAILURE_POLICY', message: `the step's onFailure policy is ${planStep?.onFailure}` }
            : undefined;
      if (why !== undefined) {
        await declineFailure(ctx, failed, why);
        return { outcome: 'declined', ...why };
      }
      if (run.status !== 'running' || run.terminal !== undefined || isCancelling(run)) {
        // Finished, paused for a person or being cancelled: the failure stands until someone replans or invalidates.
        await declineFailure(ctx, failed, { code: 'E_RUN_NOT_RUNNING', message: `the run was ${run.status}` });
        return { outcome: 'ignored', why: 'run_ended' };
      }
      const fingerprint = fingerprintOf(run, failed);
      const decision = decideReplan({
        replansSoFar: run.replans,
        maxReplans,
        fingerprint,
        previousFingerprints: run.replanFingerprints ?? [],
      });
      if (decision.action === 'pause') {
        await pauseRun(ctx, run.runId, decision.reason, {
          stepId: failed.stepId,
          generation: failed.generation,
          error: failed.error ?? null,
          fingerprint,
          replans: run.replans,
          maxReplans,
          detail: decision.detail,
        });
        return { outcome: 'paused', reason: decision.reason };
      }
      let result: Revised;
      try {
        result = await makeRevision({ ...found, trigger: triggerFor(failed.error?.code ?? 'E_UNKNOWN') });
      } catch (error) {
        // A platform error on the way (a throttled or timed-out store call) is no answer from the planner: the
        // retry answers the failure, finding whatever of this try landed.
        if (isTransientPlatformError(error)) throw error;
        if (isConflictError(error) && error.context.code === 'E_RUN_CANCELLED')
          return { outcome: 'ignored', why: 'run_ended' };
        const why = describeReplanError(error);
        if (why.code === 'E_REPLAN_FAILED') console.error('cairn replanner: replanning failed', { ref, error });
        await declineFailure(ctx, failed, why);
        return { outcome: 'declined', ...why };
      }
      if (result === 'ended') return { outcome: 'ignored', why: 'run_ended' };
      // Held for a person: the failure waits for their decision (the run with it), unanswered until then.
      if (typeof result === 'object' && 'approvalId' in result)
        return { outcome: 'awaiting_approval', approvalId: result.approvalId };
      if (isMade(result)) {
        // Current now: whatever throws from here on is the retry's to finish (resumeRevision), never a decline.
        await finishRevision(ctx, run.runId, result.plan, result.application, found.records);
        return { outcome: 'revised', revision: result.revision };
      }
      await raceDelay(tries);
    }
    // Still losing: the failure stands rather than keeping the run waiting for an answer that does not come.
    const found = await current(ref);
    if (found)
      await declineFailure(ctx, found.failed, {
        code: 'E_REPLAN_RACE',
        message: `other replans kept revising the plan (${RACE_TRIES} tries)`,
      });
    return { outcome: 'ignored', why: 'lost_race' };
  }

  /** Answers every final failure of the run's current revision that is neither answered nor declined yet. */
  async function answerOutstanding(runId: string): Promise<void> {
    if (maxReplans === 0) return;
    const run = await store.getRun(runId);
    if (!run || run.revision < 1 || run.status !== 'running') return;
    const loaded = await ctx.plan(run);
    const declined = new Set(replanDeclines(run).map((d) => d.failure));
    const records = await listRunSteps(ctx, runId);
    for (const step of records)
      if (step.status === 'failed' && loaded.byId.has(step.stepId) && !declined.has(failureKey(step)))
        await answer({ runId, stepId: step.stepId, generation: step.generation });
  }

  /** What a person's replan revises, read now; ConflictError when the run's state says no. */
  async function replannable(runId: string): Promise<Omit<Attempt, 'trigger'>> {
    const run = await ctx.getRun(runId);
    if (isCancelling(run)) throw runCancelled(runId, `run ${runId} is cancelled: a cancelled run is not replanned`);
    if (run.status === 'planning' || run.revision < 1)
      throw new ConflictError(`run ${runId} is ${run.status}: it has no plan to revise`, {
        context: { runId, code: 'E_NOT_REPLANNABLE' },
      });
    if (run.replans >= maxReplans)
      throw new ConflictError(
        `run ${runId} has reached its replan limit: ${run.replans} of ${maxReplans} replans made`,
        { context: { runId, code: 'E_REPLAN_LIMIT', replans: run.replans, maxReplans } },
      );
    const waiting = await pendingRevisionApproval(ctx, runId);
    if (waiting)
      throw new ConflictError(
        `run ${runId} has revision ${waiting.generation} waiting for approval ${waiting.approvalId}: decide it first`,
        { context: { runId, code: 'E_REVISION_PENDING', approvalId: waiting.approvalId } },
      );
    const loaded = await ctx.plan(run);
    const records = await listRunSteps(ctx, runId);
    const failed = replanTarget(run, loaded, records);
    return { run, loaded, records, ...(failed === undefined ? {} : { failed }) };
  }

  return {
    async onStepFailed(ref) {
      if (maxReplans === 0) return { outcome: 'ignored', why: 'disabled' };
      // Taking is tried in place too: a delivery spent on a throttled mark is one of only three.
      if (!(await withPlatformRetries(() => takeFailure(store, ref)))) return { outcome: 'ignored', why: 'duplicate' };
      try {
        // Every answer is idempotent: a platform error on the way is tried again here before the redelivery's turn.
        return await withPlatformRetries(() => answer(ref));
      } catch (error) {
        // Taken but not answered (a throttled read or write on the way): the redelivery must answer it, else the
        // run waits for a replan that never comes (awaitsReplan) with nothing left open to settle it.
        await releaseFailure(store, ref);
        throw error;
      }
    },

    onBudgetExhausted: budgetAnswer({
      ctx,
      maxReplans,
      raceDelay,
      revise: (attempt) => revise(attempt),
    }),

    async checkReplan(runId) {
      await replannable(runId);
    },

    async replanRun({ runId, reason, objective }) {
      const found = await replannable(runId);
      const requested: RequestedReplan = { reason, ...(objective === undefined ? {} : { objective }) };
      const result = await revise({ ...found, trigger: 'manual', requested });
      if (typeof result !== 'object') return { runId };
      return 'approvalId' in result ? { runId, approvalId: result.approvalId } : { runId, revision: result.revision };
    },

    async onRevisionExpired({ runId, approvalId }) {
      const approval = await store.getApproval(approvalId);
      if (approval?.heldRevision === undefined || approval.status !== 'expired') return;
      await rejectHeldRevision(ctx, runId, approval.heldRevision, revisionExpiry(approval, approval.heldRevision));
      await answerOutstanding(runId);
    },

    async decideRevision(decision) {
      try {
        return await settleRevisionApproval(ctx, decision, {
          async approve(run, plan, held) {
            const records = await listRunSteps(ctx, run.runId);
            const states = stepStates(records);
            const issues = checkReplan(plan, held.plan, held.scope, states);
            if (issues.length > 0) return 'stale';
            const applied = applyReplan(plan, held.plan, states, { scope: held.scope });
            const made = await commit(run, applied, held, records, false);
            if (!isMade(made)) return 'stale';
            await finish(run.runId, made, records);
            return { revision: made.revision };
          },
        });
      } finally {
        // Failures that came while the revision waited waited with it: they are answered now.
        await answerOutstanding(decision.runId);
      }
    },
  };
}
