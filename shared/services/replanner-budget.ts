/**
 * The replanner's answer to a budget replan (BudgetExhausted under `budget.onExhausted: "replan"`, routed by
 * BUS_RULES): taken once per run (`handledFailures` holds BUDGET_REPLAN_KEY, so a redelivery or the exhaustion of a
 * later revision changes nothing), then the same path a failure's answer takes (replanner.ts `revise`: the model
 * proposes, the revision is validated, held to its scope, stored, made current and applied), with the figures and
 * the engine's revised budget (engine/budget-replan.ts) instead of a failure. What the run does meanwhile is the
 * run's end's to decide (it waits, see run-end.ts): whatever happens here ends in a revision made current or a
 * decline recorded (`replanDeclines`, member BUDGET_REPLAN_KEY) followed by a look at the run, which then ends
 * `budget_exhausted`. A mark taken for nothing (the run ended, or is not over budget) is given back.
 */
import { secondsBetween, spentBy } from '../engine/budget.ts';
import {
  BUDGET_REPLAN_KEY,
  budgetReplanRequest,
  budgetReplanState,
  decideBudgetExhaustion,
} from '../engine/budget-replan.ts';
import { isTransientPlatformError } from '../errors.ts';
import type { BudgetReplanRequest } from '../ports/plan-model.ts';
import type { RunRecord, StepRecord } from '../ports/store.ts';
import { runBudgetState } from './budget-state.ts';
import { replanDeclines } from './coordinator-replan.ts';
import { listRunSteps } from './initial-steps.ts';
import type { Interpreter, LoadedPlan } from './interpreter.ts';
import type { ReplanOutcome } from './replanner-contract.ts';
import { declineBudgetReplan, describeReplanError, withPlatformRetries } from './replanner-support.ts';
import { pendingRevisionApproval } from './revision-approvals.ts';
import { writeAgainWhileRetryable } from './write-again.ts';

/** Tries against revisions that keep moving under the answer (each lost race means another replan won). */
const RACE_TRIES = 8;

/** What replanner.ts's `revise` is handed for a budget replan. */
export interface BudgetAttempt {
  readonly run: RunRecord;
  readonly loaded: LoadedPlan;
  readonly records: readonly StepRecord[];
  readonly trigger: 'budget';
  readonly budget: BudgetReplanRequest;
}

/** What `revise` made of it: a revision current, held for a person, lost to another replan, or the run ended. */
type BudgetRevised = 'lost' | 'ended' | { readonly approvalId: string } | { readonly revision: number };

export interface BudgetAnswerDeps {
  readonly ctx: Interpreter;
  readonly maxReplans: number;
  readonly raceDelay: (tries: number) => Promise<void>;
  readonly revise: (attempt: BudgetAttempt) => Promise<BudgetRevised>;
}

export function budgetAnswer(deps: BudgetAnswerDeps): (ref: { readonly runId: string }) => Promise<ReplanOutcome> {
  const { ctx, maxReplans } = deps;
  const { store } = ctx.deps;
  const release = (runId: string) =>
    writeAgainWhileRetryable(() => store.unmarkRunOnce(runId, 'handledFailures', BUDGET_REPLAN_KEY));

  /** One try: the revision, a decline, or 'lost' (another replan made revision n+1 first: look again). */
  async function tryOnce(runId: string): Promise<ReplanOutcome | 'lost'> {
    const run = await store.getRun(runId);
    if (!run || run.revision < 1) return { outcome: 'ignored', why: 'stale' };
    if (run.status !== 'running' || run.terminal !== undefined) return { outcome: 'ignored', why: 'run_ended' };
    const loaded = await ctx.plan(run);
    const now = ctx.now();
    const state = runBudgetState(loaded.plan, run, now);
    const budget = loaded.plan.budget;
    if (state === undefined || budget === undefined) return { outcome: 'ignored', why: 'stale' };
    const replan = budgetReplanState(run.replanLog, replanDeclines(run));
    const next = decideBudgetExhaustion({ policy: budget.onExhausted, replan, replansLeft: maxReplans - run.replans });
    if (next.action !== 'replan') {
      // Used already, or another policy: nothing to answer. Out of replans since the run asked: declined, so the
      // run that waits for this answer ends.
      if (replan.kind !== 'none' || next.action !== 'fail' || next.replan?.outcome !== 'declined')
        return { outcome: 'ignored', why: 'duplicate' };
      await declineBudgetReplan(ctx, runId, next.replan);
      return { outcome: 'declined', code: next.replan.code, message: next.replan.message };
    }
    const waiting = await pendingRevisionApproval(ctx, runId);
    if (waiting) {
      // Revisions are made one at a time, and the one waiting was not made for the budget.
      const why = { code: 'E_REVISION_PENDING', message: `revision approval ${waiting.approvalId} is undecided` };
      await declineBudgetReplan(ctx, runId, why);
      return { outcome: 'declined', ...why };
    }
    const records = await listRunSteps(ctx, runId);
    const request = budgetReplanRequest(budget, spentBy(run), secondsBetween(run.createdAt, now));
    let result: BudgetRevised;
    try {
      result = await deps.revise({ run, loaded, records, trigger: 'budget', budget: request });
    } catch (error) {
      if (isTransientPlatformError(error)) throw error;
      const why = describeReplanError(error);
      if (why.code === 'E_REPLAN_FAILED') console.error('cairn replanner: budget replan failed', { runId, error });
      await declineBudgetReplan(ctx, runId, why);
      return { outcome: 'declined', ...why };
    }
    if (result === 'lost') return 'lost';
    if (result === 'ended') return { outcome: 'ignored', why: 'run_ended' };
    if ('approvalId' in result) return { outcome: 'awaiting_approval', approvalId: result.approvalId };
    return { outcome: 'revised', revision: result.revision };
  }

  async function answer(runId: string): Promise<ReplanOutcome> {
    for (let tries = 1; tries <= RACE_TRIES; tries++) {
      const outcome = await tryOnce(runId);
      if (outcome !== 'lost') return outcome;
      await deps.raceDelay(tries);
    }
    const why = { code: 'E_REPLAN_RACE', message: `other replans kept revising the plan (${RACE_TRIES} tries)` };
    await declineBudgetReplan(ctx, runId, why);
    return { outcome: 'declined', ...why };
  }

  /** Taken (true) for the first caller; a mark whose write lost its answer is given back before the error goes on. */
  async function take(runId: string): Promise<boolean> {
    try {
      return await store.markRunOnce(runId, 'handledFailures', BUDGET_REPLAN_KEY);
    } catch (error) {
      await release(runId);
      throw error;
    }
  }

  return async ({ runId }) => {
    if (maxReplans === 0) return { outcome: 'ignored', why: 'disabled' };
    if (!(await withPlatformRetries(() => take(runId)))) return { outcome: 'ignored', why: 'duplicate' };
    try {
      const outcome = await withPlatformRetries(() => answer(runId));
      // Nothing answered (the run ended, or is not over budget): the once is not spent. A used or declined replan
      // is known from the run's replan log and declines, whatever the mark says.
      if (outcome.outcome === 'ignored') await release(runId);
      return outcome;
    } catch (error) {
      // Taken but not answered: the redelivery must answer it, or the run waits for an answer that never comes.
      await release(runId);
      throw error;
    }
  };
}
