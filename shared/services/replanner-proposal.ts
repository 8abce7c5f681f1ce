/**
 * Revision n+1 as the replanner proposes it: the failure diagnosed (what failed, how, what was tried before), the
 * planner asked within the scope (around the failure, the whole plan for a person's replan, the unstarted part for a
 * budget), and the proposal as a held revision — what the run's decider makes current, holds for a person, or finds
 * stale. Planner errors go to the caller (a decline).
 */
import { effectiveBudget } from '../engine/budget.ts';
import { budgetReason, lineageOf, priorReplans, revisionReason } from '../engine/replan/reasons.ts';
import { diagnoseFailure, stepStates } from '../engine/replan.ts';
import { isModelError } from '../errors.ts';
import { plannerError } from '../planner/errors.ts';
import type { PlannerDeps } from '../planner/planner.ts';
import { proposeRevision } from '../planner/replan/revise.ts';
import type { BudgetReplanRequest, ReplanTrigger, RequestedReplan } from '../ports/plan-model.ts';
import type { HeldRevision, RunRecord, StepRecord } from '../ports/store.ts';
import type { LoadedPlan } from './interpreter.ts';
import { type TryAgainPolicy, tryAgain } from './write-again.ts';

// A model provider's transient failure is asked again, a little later, before the replan declines.
const MODEL_POLICY: TryAgainPolicy = {
  tries: 3,
  pauseMs: (tries) => 500 * tries,
  when: (error) => isModelError(error) && error.retryable,
};

export interface ProposalRequest {
  readonly run: RunRecord;
  readonly loaded: LoadedPlan;
  readonly records: readonly StepRecord[];
  /** The failure to plan around; absent for a person's replan of a run with no failed step, and a budget's. */
  readonly failed?: StepRecord;
  readonly trigger: ReplanTrigger;
  /** A person's replan: their reason and new objective. */
  readonly requested?: RequestedReplan;
  /** A budget replan: the figures, and the budget the revision gets. */
  readonly budget?: BudgetReplanRequest;
}

export interface Proposal {
  readonly held: HeldRevision;
}

export async function proposeRevisionFor(plannerDeps: PlannerDeps, request: ProposalRequest): Promise<Proposal> {
  const { run, loaded, records, failed, requested, budget: budgetRequest } = request;
  const planStep = failed && loaded.byId.get(failed.stepId);
  const diagnosis =
    failed &&
    diagnoseFailure({
      plan: loaded.plan,
      failed: { ...failed, target: planStep?.target },
      states: stepStates(records),
      trigger: request.trigger,
      lineage: lineageOf(run),
    });
  // A person's raised limits stand over the revision's own: the next revision carries them forward in its plan.
  const heldTo = effectiveBudget(loaded.plan.budget, run.raisedBudget);
  const previous = heldTo === loaded.plan.budget ? loaded.plan : { ...loaded.plan, budget: heldTo };
  const proposal = await tryAgain(MODEL_POLICY, () =>
    proposeRevision(plannerDeps, {
      previous,
      records,
      ...(diagnosis === undefined ? {} : { diagnosis }),
      replans: priorReplans(run),
      ...(requested === undefined ? {} : { requested }),
      ...(budgetRequest === undefined ? {} : { budget: budgetRequest }),
    }),
  );
  if (
    (requested ?? budgetRequest) !== undefined &&
    proposal.added.length + proposal.changed.length + proposal.removed.length === 0
  )
    throw plannerError('E_NO_CHANGE', 'the planner proposed the same plan again: there is nothing to revise');
  return {
    held: {
      baseRevision: run.revision,
      plan: proposal.revision,
      scope: proposal.scope,
      change: proposal.change,
      replaces: proposal.replaces,
      reason: budgetRequest
        ? budgetReason(budgetRequest, proposal.change)
        : revisionReason(failed, proposal.change, requested?.reason),
      ...(budgetRequest === undefined ? {} : { trigger: 'budget' as const }),
      ...(failed === undefined ? {} : { failure: { stepId: failed.stepId, generation: failed.generation } }),
      ...(requested?.objective === undefined ? {} : { objective: requested.objective }),
      ...(planStep?.target ? { failedTarget: planStep.target } : {}),
      ...(failed?.error?.code === undefined ? {} : { failedCode: failed.error.code }),
    },
  };
}
