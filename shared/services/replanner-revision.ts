/**
 * Making revision n+1 for the replanner (replanner.ts): the planner proposes it (around a failure, as a person
 * asked, or for a budget), it is held for a person's approval when it adds a mutating target, else stored and made
 * current (commit), and finishRevision brings the step records in line. Answering a failure (taking it, the
 * budget and no-progress decision, declines, racing replans) stays in replanner.ts.
 */
import { diagnoseFailure, revisionApplication, stepStates } from '../engine/replan.ts';
import { STEP_MOVING_RUN_STATUSES } from '../engine/statuses.ts';
import { isConflictError } from '../errors.ts';
import type { Plan } from '../plan/schema.ts';
import { plannerError } from '../planner/errors.ts';
import type { PlannerDeps } from '../planner/planner.ts';
import type { RevisionOutcome } from '../planner/replan/revise.ts';
import type { BudgetReplanRequest, ReplanTrigger, RequestedReplan } from '../ports/plan-model.ts';
import type { HeldRevision, RevisionApplication, RunRecord, StepRecord } from '../ports/store.ts';
import { listRunSteps } from './initial-steps.ts';
import { event, type Interpreter, type LoadedPlan } from './interpreter.ts';
import { finishRevision } from './replanner-apply.ts';
import {
  budgetReason,
  fingerprintOf,
  isOwnStoredRevision,
  lineageOf,
  priorReplans,
  proposeWithRetry,
  replanRecord,
  revisionReason,
  withPlatformRetries,
} from './replanner-support.ts';
import { holdRevision } from './revision-approvals.ts';
import { persistRevision } from './revisions.ts';
import { isReopenable, reopenRun } from './run-reopen.ts';

export interface Attempt {
  readonly run: RunRecord;
  readonly loaded: LoadedPlan;
  readonly records: readonly StepRecord[];
  /** The failure to plan around; absent for a person's replan of a run with no failed step. */
  readonly failed?: StepRecord;
  readonly trigger: ReplanTrigger;
  /** A person's replan: their reason and new objective. */
  readonly requested?: RequestedReplan;
  /** A budget replan: the figures, and the budget the revision gets. */
  readonly budget?: BudgetReplanRequest;
}

/** Revision n+1 made current: what finishing it takes. */
export interface Made {
  readonly revision: number;
  readonly plan: Plan;
  readonly application: RevisionApplication;
}

export type Revised = Made | { readonly approvalId: string } | 'lost' | 'ended';

export const isMade = (result: Revised): result is Made => typeof result === 'object' && 'application' in result;

export interface RevisionMakerDeps {
  readonly ctx: Interpreter;
  readonly plannerDeps: PlannerDeps;
}

export interface RevisionMaker {
  makeRevision(attempt: Attempt): Promise<Revised>;
  commit(
    run: RunRecord,
    proposal: Pick<RevisionOutcome, 'revision' | 'added' | 'removed' | 'changed' | 'kept'>,
    held: HeldRevision,
    records: readonly StepRecord[],
    mayBeOwn: boolean,
  ): Promise<Revised>;
  finish(runId: string, made: Made, records: readonly StepRecord[]): Promise<void>;
  revise(attempt: Attempt): Promise<Revised>;
}

export function createRevisionMaker(deps: RevisionMakerDeps): RevisionMaker {
  const { ctx, plannerDeps } = deps;
  const { store } = ctx.deps;

  /**
   * Proposes revision n+1 (around `attempt.failed`, or as a person asked), then makes it current (commit), or holds
   * it for a person's approval when it adds a mutating target; finishRevision then brings the step records in line.
   * Planner errors propagate.
   */
  async function makeRevision(attempt: Attempt): Promise<Revised> {
    const { run, loaded, records, failed, requested, budget } = attempt;
    const planStep = failed && loaded.byId.get(failed.stepId);
    const diagnosis =
      failed &&
      diagnoseFailure({
        plan: loaded.plan,
        failed: { ...failed, target: planStep?.target },
        states: stepStates(records),
        trigger: attempt.trigger,
        lineage: lineageOf(run),
      });
    const proposal = await proposeWithRetry(plannerDeps, {
      previous: loaded.plan,
      records,
      ...(diagnosis === undefined ? {} : { diagnosis }),
      replans: priorReplans(run),
      ...(requested === undefined ? {} : { requested }),
      ...(budget === undefined ? {} : { budget }),
    });
    if (
      (requested ?? budget) !== undefined &&
      proposal.added.length + proposal.changed.length + proposal.removed.length === 0
    )
      throw plannerError('E_NO_CHANGE', 'the planner proposed the same plan again: there is nothing to revise');
    const held: HeldRevision = {
      baseRevision: run.revision,
      plan: proposal.revision,
      scope: proposal.scope,
      change: proposal.change,
      replaces: proposal.replaces,
      reason: budget
        ? budgetReason(budget, proposal.change)
        : revisionReason(failed, proposal.change, requested?.reason),
      ...(budget === undefined ? {} : { trigger: 'budget' as const }),
      ...(failed === undefined ? {} : { failure: { stepId: failed.stepId, generation: failed.generation } }),
      ...(requested?.objective === undefined ? {} : { objective: requested.objective }),
      ...(planStep?.target ? { failedTarget: planStep.target } : {}),
      ...(failed?.error?.code === undefined ? {} : { failedCode: failed.error.code }),
    };
    const hold = await holdRevision(ctx, run, loaded.plan, held);
    if (hold !== undefined) return { approvalId: hold.approvalId };
    // Only a failure's own answer may take a stored revision for its own: a person's replans of one run may propose
    // the same revision with the same reason at once, and exactly one of them may make it.
    return commit(run, proposal, held, records, requested === undefined);
  }

  /**
   * Stores revision n+1, reopens a finished run, and makes the revision current (with the PriorReplan record, what
   * the revision does to the step records, and for a new objective the run's objective). `mayBeOwn`: revision n+1
   * found stored may be this answer's own from an earlier try (isOwnStoredRevision).
   */
  async function commit(
    run: RunRecord,
    proposal: Pick<RevisionOutcome, 'revision' | 'added' | 'removed' | 'changed' | 'kept'>,
    held: HeldRevision,
    records: readonly StepRecord[],
    mayBeOwn: boolean,
  ): Promise<Revised> {
    const revision = proposal.revision.revision;
    const { reason } = held;
    try {
      await persistRevision(ctx, run.runId, proposal.revision, reason);
    } catch (error) {
      if (!isConflictError(error)) throw error;
      const own = mayBeOwn && (await isOwnStoredRevision(store, run.runId, proposal.revision, reason));
      if (!own) return 'lost';
    }
    // A person's replan of a finished run opens it again (a new run execution waits for it).
    if (isReopenable(run)) await reopenRun(ctx, run, reason);
    const record = replanRecord(held, revision, ctx.now());
    const failed = held.failure && records.find((r) => r.stepId === held.failure?.stepId);
    const fingerprints = failed ? [fingerprintOf(run, failed)] : [];
    const application = revisionApplication(proposal, records);
    // PlanRevised travels with the write that makes the revision current, which only an open run takes: a run
    // cancelled meanwhile has nothing published after its RunFinished.
    const updated = await ctx.updateRun(
      run.runId,
      STEP_MOVING_RUN_STATUSES,
      {
        revision,
        replans: run.replans + 1,
        replanFingerprints: [...new Set([...(run.replanFingerprints ?? []), ...fingerprints])],
        replanLog: [...(run.replanLog ?? []), { ...record, application }],
        ...(held.objective === undefined ? {} : { objective: held.objective }),
        updatedAt: ctx.now(),
      },
      { events: [event('PlanRevised', { runId: run.runId, revision, reason })] },
    );
    // Cancelled or out of time meanwhile: the stored revision stays for audit, nothing more happens.
    if (!updated) return 'ended';
    return { revision, plan: proposal.revision, application };
  }

  /**
   * Brings the step records in line with a revision made current; a platform error on the way is tried again, from
   * the records as they are then (a person's replan or decision has no redelivery to finish it).
   */
  async function finish(runId: string, made: Made, records: readonly StepRecord[]): Promise<void> {
    await withPlatformRetries(async (tries) => {
      const current = tries === 1 ? records : await listRunSteps(ctx, runId);
      await finishRevision(ctx, runId, made.plan, made.application, current);
    });
  }

  /** Revision n+1 made current (or held for approval) and the step records brought in line. */
  async function revise(attempt: Attempt): Promise<Revised> {
    const made = await makeRevision(attempt);
    if (isMade(made)) await finish(attempt.run.runId, made, attempt.records);
    return made;
  }

  return { makeRevision, commit, finish, revise };
}
