/**
 * The replanner proposes; the run's decider decides. It answers a final failure the decider asked about (the run's
 * `handledFailures` names it), an exhausted budget under `onExhausted: "replan"`, and a person's replan: the planner
 * (the HTN method library, or a model) proposes revision n+1 within the failure's scope, and the proposal goes to the
 * run's mailbox (ProposeRevision). Whether it is made current, held for a person (it adds a mutating target), or is
 * stale by then (another revision, a cancel) is the decider's word (engine/run/rules/revision-proposals.ts). A
 * planner that finds nothing to propose declines (DeclineReplan): the failure stands.
 */

import { effectiveBudget, secondsBetween, spentBy } from '../engine/budget.ts';
import { budgetReplanRequest, isRunBudgetStop } from '../engine/budget-replan.ts';
import { addedMutatingTargets } from '../engine/replan/authority.ts';
import { triggerFor } from '../engine/replan/diagnosis.ts';
import { replanTarget } from '../engine/replan/reasons.ts';
import { withPlannedSteps } from '../engine/run/planned.ts';
import { failureKey } from '../engine/run/rules/replans.ts';
import { ConflictError, isTransientPlatformError } from '../errors.ts';
import { describeReplanError } from '../planner/errors.ts';
import type { RequestedReplan } from '../ports/plan-model.ts';
import type { HeldRevision, RunRecord, StepRecord } from '../ports/store.ts';
import { createInterpreter, type LoadedPlan } from './interpreter.ts';
import { withReadsTriedAgain } from './read-again.ts';
import type { Replanner, ReplannerDeps, ReplanOutcome, StepFailedRef } from './replanner-contract.ts';
import { type Proposal, proposeRevisionFor } from './replanner-proposal.ts';

export type { Replanner, ReplannerDeps, ReplanOutcome, StepFailedRef } from './replanner-contract.ts';

/** `~budget`: the budget replan's key among a run's failures. */
const BUDGET_KEY = '~budget';

export function createReplanner(given: ReplannerDeps): Replanner {
  const deps = { ...given, store: withReadsTriedAgain(given.store) };
  const ctx = createInterpreter(deps);
  const { store, mailbox } = deps;
  const maxReplans = Math.max(0, Math.floor(deps.config.maxReplans ?? 0));
  const plannerDeps = {
    model: deps.model,
    catalog: deps.catalog,
    limits: { maxSteps: deps.config.maxSteps, maxDepth: deps.config.maxDepth },
  };
  const sideEffectOf = (target: string) => deps.catalog.get(target)?.sideEffect;

  /** The run as it is now, with its plan and steps (an event is announced once its batch's records are written). */
  async function read(
    runId: string,
  ): Promise<{ run: RunRecord; loaded: LoadedPlan; records: StepRecord[] } | undefined> {
    const run = await store.getRun(runId);
    if (!run || run.revision < 1) return undefined;
    const [loaded, stored] = await Promise.all([ctx.plan(run), store.listSteps(runId)]);
    return { run, loaded, records: withPlannedSteps(run, loaded.plan, stored) };
  }

  /** Sends the proposal to the decider; its answer is the outcome. */
  async function propose(
    runId: string,
    trigger: 'failure' | 'request' | 'budget',
    proposal: Proposal,
    previous: LoadedPlan,
    by?: string,
  ): Promise<ReplanOutcome> {
    const reply = await mailbox.ask(runId, {
      kind: 'ProposeRevision',
      trigger,
      revision: proposal.held,
      mutatingTargets: addedMutatingTargets(previous.plan, proposal.held.plan, sideEffectOf),
      ...(by === undefined ? {} : { by }),
    });
    if (!reply.ok) throw new ConflictError(reply.message, { context: { runId, code: reply.code } });
    return reply.value as unknown as ReplanOutcome;
  }

  /** The planner found no revision: the failure (or the budget's exhaustion) stands. */
  async function decline(runId: string, failure: string, error: unknown): Promise<ReplanOutcome> {
    if (isTransientPlatformError(error)) throw error;
    const why = describeReplanError(error);
    if (why.code === 'E_REPLAN_FAILED') console.error('cairn replanner: replanning failed', { runId, failure, error });
    await mailbox.send(runId, { kind: 'DeclineReplan', failure, ...why });
    return { outcome: 'declined', ...why };
  }

  const replanner: Replanner = {
    async onStepFailed(ref: StepFailedRef) {
      if (maxReplans === 0) return { outcome: 'ignored', why: 'disabled' };
      const failure = failureKey(ref);
      const found = await read(ref.runId);
      // Only a failure the decider asked about, still failed in that generation and not answered yet.
      if (found === undefined || !(found.run.handledFailures ?? []).includes(failure))
        return { outcome: 'ignored', why: 'stale' };
      if ((found.run.replanLog ?? []).some((r) => r.failure === failure))
        return { outcome: 'ignored', why: 'duplicate' };
      const failed = found.records.find((r) => r.stepId === ref.stepId);
      if (failed?.generation !== ref.generation || failed.status !== 'failed' || isRunBudgetStop(failed.error))
        return { outcome: 'ignored', why: 'stale' };
      let proposal: Proposal;
      try {
        proposal = await proposeRevisionFor(plannerDeps, {
          ...found,
          failed,
          trigger: triggerFor(failed.error?.code ?? 'E_UNKNOWN'),
        });
      } catch (error) {
        return decline(ref.runId, failure, error);
      }
      return propose(ref.runId, 'failure', proposal, found.loaded);
    },

    async onBudgetExhausted({ runId }) {
      if (maxReplans === 0) return { outcome: 'ignored', why: 'disabled' };
      const found = await read(runId);
      const budget = effectiveBudget(found?.loaded.plan.budget, found?.run.raisedBudget);
      if (found === undefined || budget === undefined || budget.onExhausted !== 'replan')
        return { outcome: 'ignored', why: 'stale' };
      if ((found.run.replanLog ?? []).some((r) => r.failure === BUDGET_KEY))
        return { outcome: 'ignored', why: 'duplicate' };
      const request = budgetReplanRequest(budget, spentBy(found.run), secondsBetween(found.run.createdAt, ctx.now()));
      let proposal: Proposal;
      try {
        proposal = await proposeRevisionFor(plannerDeps, { ...found, trigger: 'budget', budget: request });
      } catch (error) {
        return decline(runId, BUDGET_KEY, error);
      }
      return propose(runId, 'budget', proposal, found.loaded);
    },

    async onLimitRaised({ runId }) {
      if (maxReplans === 0) return { outcome: 'ignored', why: 'disabled' };
      const found = await read(runId);
      if (found === undefined) return { outcome: 'ignored', why: 'stale' };
      const asked = new Set(found.run.handledFailures ?? []);
      let last: ReplanOutcome = { outcome: 'ignored', why: 'stale' };
      // One after the other: each answer is a revision n+1, and the next is proposed against the run it leaves.
      for (const step of found.records)
        if (step.status === 'failed' && asked.has(failureKey(step)))
          last = await replanner.onStepFailed({ runId, stepId: step.stepId, generation: step.generation });
      return last;
    },

    async replanRun({ runId, reason, objective, request, requestedBy }) {
      const found = await read(runId);
      if (found === undefined)
        throw new ConflictError(`run ${runId} has no plan to revise`, {
          context: { runId, code: 'E_NOT_REPLANNABLE' },
        });
      const requested: RequestedReplan = { reason, ...(objective === undefined ? {} : { objective }) };
      const failed = replanTarget(found.run, found.loaded.graph.executableIds(), found.records);
      const proposal = await proposeRevisionFor(plannerDeps, {
        ...found,
        ...(failed === undefined ? {} : { failed }),
        trigger: 'manual',
        requested,
      });
      const asked = request === undefined ? proposal : { held: { ...proposal.held, request } };
      const outcome = await propose(runId, 'request', asked, found.loaded, requestedBy);
      if (outcome.outcome === 'revised') return { runId, revision: outcome.revision };
      if (outcome.outcome === 'awaiting_approval') return { runId, approvalId: outcome.approvalId };
      if (outcome.outcome === 'declined')
        throw new ConflictError(outcome.message, { context: { runId, code: outcome.code } });
      return { runId };
    },
  };
  return replanner;
}

/** A held revision's parts, for tests and callers that build one by hand. */
export type { HeldRevision };
