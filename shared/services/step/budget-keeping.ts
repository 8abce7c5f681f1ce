/**
 * Budgets on the step execution's side: a later attempt is not made once the run's budget is spent, and the route a
 * step's own budget leaves (a step over it fails for good). The decider counts the spend and decides the same from
 * its own sums (engine/run/rules/budget.ts); the execution only needs to know where its state machine goes.
 */
import {
  BUDGET_ERROR_CODE,
  checkBudget,
  describeExhaustion,
  effectiveBudget,
  round,
  secondsBetween,
  spendOf,
  spendsAnything,
  spentBy,
} from '../../engine/budget.ts';
import { RUN_BUDGET_STOP } from '../../engine/budget-replan.ts';
import type { AttemptOutcome } from '../../engine/step-lifecycle.ts';
import type { PlanStep, StepError } from '../../plan/schema.ts';
import type { AttemptRecord, StepRecord } from '../../ports/store.ts';
import type { StepRecords } from './step-records.ts';

/** Whether an attempt spent anything that counts against a budget (model usage with a price or tokens). */
export const attemptSpends = (attempt: AttemptRecord): boolean =>
  attempt.usage !== undefined && spendsAnything(spendOf(attempt.usage));

/**
 * A step over its own budget (tokens, cost, or seconds since it started) fails for good with E_BUDGET_EXHAUSTED,
 * whatever its attempt answered: the limit is hard, and no further attempt may spend more.
 */
export function stepBudgetOutcome(
  outcome: AttemptOutcome,
  planStep: PlanStep,
  step: StepRecord,
  spent: { tokens: number; costUsd: number } | undefined,
  now: string,
): AttemptOutcome {
  if (planStep.budget === undefined || outcome.kind === 'fail') return outcome;
  const used = spent ?? spentBy(step);
  const { exhausted } = checkBudget(planStep.budget, used, secondsBetween(step.startedAt, now));
  if (exhausted.length === 0) return outcome;
  const error: StepError = {
    code: BUDGET_ERROR_CODE,
    message: describeExhaustion('step', exhausted),
    retryable: false,
    details: { exhausted: exhausted.map((f) => ({ ...f, spent: round(f.spent) })) },
  };
  return { kind: 'fail', error, why: 'permanent' };
}

/** The error of a step the run's budget stopped (a budget replan may run it again: engine/budget-replan.ts). */
export const runBudgetStop = (message: string): StepError => ({
  code: BUDGET_ERROR_CODE,
  message,
  retryable: false,
  details: { ...RUN_BUDGET_STOP },
});

/** Why the run's budget refuses a new attempt now, or undefined. */
export function claimRefusal(records: StepRecords, now: string): string | undefined {
  // A person's raised limits count here as in the decider: a run given more room makes its attempts again.
  const budget = effectiveBudget(records.brief?.budget, records.run.raisedBudget);
  if (budget === undefined) return undefined;
  const { exhausted } = checkBudget(budget, spentBy(records.run), secondsBetween(records.run.createdAt, now));
  return exhausted.length === 0 ? undefined : describeExhaustion('run', exhausted);
}
