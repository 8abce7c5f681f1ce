/**
 * A replan through the model port, held to the same standard as a first plan: the model (HTN or Bedrock) gets the
 * previous plan with each step's current status, the bounded history, the diagnosis, the scope and the earlier
 * replans; its answer is stripped of lifecycle fields, given the owned fields (objective, revision n+1), validated
 * as untrusted input (validateGenerated), held to the scope rule (checkReplan) and applied (applyReplan). Nothing
 * here writes: storing revision n+1 with a conditional put, superseding and re-generating records is the caller's.
 */

import { budgetScope } from '../../engine/budget-replan.ts';
import {
  type AppliedReplan,
  applyReplan,
  changedFields,
  checkReplan,
  type HistoryOptions,
  type HistoryStepView,
  type ReplanScope,
  replanScope,
  requestScope,
  type StepStates,
  stateOf,
  stepStates,
  summarizeHistory,
  withoutLifecycle,
} from '../../engine/replan.ts';
import { type Budget, type Plan, type PlanStep, planJsonSchema } from '../../plan/schema.ts';
import { DEFAULT_LIMITS, type PlanLimits, validateGenerated } from '../../plan/validate.ts';
import type {
  BudgetReplanRequest,
  PlanDiagnosis,
  PlanModelRequest,
  PriorReplan,
  ReplanChange,
  ReplanProposal,
  RequestedReplan,
} from '../../ports/plan-model.ts';
import { plannerError } from '../errors.ts';
import { invalidPlan, type PlannerDeps } from '../planner.ts';
import { withBoundedRationale } from '../rationale.ts';

export interface RevisionRequest {
  /** The current revision. */
  readonly previous: Plan;
  /** The run's step records (status, output, error, attempts), for the statuses and the history. */
  readonly records: readonly HistoryStepView[];
  /** The failure to plan around; absent only for a person's replan of a run with no failure. */
  readonly diagnosis?: PlanDiagnosis;
  /**
   * A person's replan: the model is told the reason (and the new objective), and the scope is the whole plan
   * (requestScope: finished steps may change and then run again, none may be dropped).
   */
  readonly requested?: RequestedReplan;
  /**
   * A budget replan: the plan's budget ran out; the scope is what has not run (budgetScope), the model is told the
   * figures and the allowance, and the revision carries `budget.revised`.
   */
  readonly budget?: BudgetReplanRequest;
  /** The failed steps the scope grows from; default: the diagnosed step. */
  readonly failedStepIds?: readonly string[];
  /** The run's earlier replans, oldest first. */
  readonly replans?: readonly PriorReplan[];
  readonly history?: HistoryOptions;
}

export interface RevisionOutcome extends AppliedReplan {
  readonly scope: ReplanScope;
  /** What the replan changed (told by the model, or read from the plans). */
  readonly change: ReplanChange;
  /** New step id → the id it took over from: the lineage to record with the revision. */
  readonly replaces: Readonly<Record<string, string>>;
  /** The model that proposed it (its name). */
  readonly model: string;
}

/** The previous plan as the model sees it: each step's current status (and error), no outputs (those are in the history). */
export function annotatePlan(plan: Plan, states: StepStates): Plan {
  return {
    ...plan,
    steps: plan.steps.map((step): PlanStep => {
      const state = stateOf(states, step.id);
      return {
        ...withoutLifecycle(step),
        status: state?.status ?? 'pending',
        result: null,
        error: state?.status === 'failed' && state.error ? structuredClone(state.error) : null,
      };
    }),
  };
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The candidate without lifecycle fields and with the fields the application owns: the revision number, the
 * objective, and the budget (the previous revision's, or a budget replan's revised one: a model never sets its own
 * limits, or a cheaper plan could be had by raising them).
 */
function owned(candidate: unknown, previous: Plan, objective: string, budget: Budget | undefined): unknown {
  if (!isRecord(candidate)) return candidate;
  const steps = Array.isArray(candidate.steps)
    ? candidate.steps.map((step: unknown) => {
        if (!isRecord(step)) return step;
        const { status: _s, result: _r, error: _e, ...definition } = step;
        return definition;
      })
    : candidate.steps;
  // A rationale copied from the previous revision says nothing about this one: only a new one is kept.
  const { rationale, budget: _proposed, ...rest } = candidate;
  const own = rationale !== undefined && rationale !== previous.rationale ? { rationale } : {};
  return withBoundedRationale({
    ...rest,
    ...own,
    ...(budget === undefined ? {} : { budget: structuredClone(budget) }),
    steps,
    revision: previous.revision + 1,
    objective,
  });
}

const SUBSTITUTION_FIELDS: ReadonlySet<string> = new Set(['target', 'inputSchema', 'outputSchema']);

/** A substitution when the failed step only changed target (and the contracts that come with it); else a rewrite. */
export function inferChange(previous: Plan, next: Plan, failedStepId: string): ReplanChange {
  const before = previous.steps.find((s) => s.id === failedStepId);
  const after = next.steps.find((s) => s.id === failedStepId);
  if (before?.target && after?.target && before.target !== after.target) {
    const fields = changedFields(before, after);
    if (fields.every((f) => SUBSTITUTION_FIELDS.has(f)))
      return { kind: 'substitute', stepId: failedStepId, from: before.target, to: after.target };
  }
  return { kind: 'rewrite' };
}

export async function proposeRevision(deps: PlannerDeps, request: RevisionRequest): Promise<RevisionOutcome> {
  const { model, catalog } = deps;
  const limits: PlanLimits = { ...DEFAULT_LIMITS, ...deps.limits };
  const { previous, diagnosis, requested, budget } = request;
  const failedIds = request.failedStepIds ?? (diagnosis === undefined ? [] : [diagnosis.stepId]);
  if (requested === undefined && diagnosis === undefined && budget === undefined)
    throw plannerError(
      'E_REPLAN_REQUEST',
      'a replan needs a failure to plan around, a person asking for it or an exhausted budget',
    );
  const states = stepStates(request.records);
  const scope =
    requested !== undefined
      ? requestScope(previous, failedIds, requested.objective)
      : budget !== undefined
        ? budgetScope(previous, states)
        : replanScope(previous, failedIds);
  const objective = requested?.objective ?? previous.objective;
  const modelRequest: PlanModelRequest = {
    objective,
    catalog: catalog.capabilities(),
    planSchema: planJsonSchema(),
    limits,
    previousPlan: annotatePlan(previous, states),
    history: summarizeHistory(previous, request.records, request.history),
    ...(diagnosis === undefined ? {} : { diagnosis }),
    scope,
    ...(request.replans === undefined ? {} : { replans: request.replans }),
    ...(requested === undefined ? {} : { requested }),
    ...(budget === undefined ? {} : { budget }),
  };
  const proposal: ReplanProposal = model.proposeReplan
    ? await model.proposeReplan(modelRequest)
    : { plan: await model.proposePlan(modelRequest) };
  const source = `model ${model.name}`;
  const ownBudget = budget?.revised ?? previous.budget;
  const result = validateGenerated(owned(proposal.plan, previous, objective, ownBudget), catalog, limits);
  if (!result.valid) throw invalidPlan(source, result.errors);
  const issues = checkReplan(previous, result.plan, scope, states);
  if (issues.length > 0)
    throw plannerError(
      'E_REPLAN_REJECTED',
      `the replan from ${source} breaks the scope rule: ${issues
        .slice(0, 5)
        .map((i) => i.message)
        .join('; ')}${issues.length > 5 ? `; and ${issues.length - 5} more` : ''}`,
      { source, issues },
    );
  const applied = applyReplan(previous, result.plan, states, { scope });
  return {
    ...applied,
    scope,
    change:
      proposal.change ??
      (diagnosis === undefined ? { kind: 'rewrite' } : inferChange(previous, result.plan, diagnosis.stepId)),
    replaces: proposal.replaces ?? {},
    model: model.name,
  };
}
