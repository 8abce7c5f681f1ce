/**
 * The time dimension of budgets while a step's attempt runs, decided without I/O. Tokens and dollars are known only
 * once a capability answers, so they are judged after the attempt (budget.ts); seconds pass during it, so they bound
 * it: an attempt gets what is left of its step's `maxSeconds` (counted from the claim, over all of the step's
 * attempts and the backoff waits between them) and of its run's (counted from the run's creation), whichever ends
 * first, and is abandoned there with E_BUDGET_EXHAUSTED and the figures.
 *
 * Why the step's seconds cover all of its attempts: a budget is a hard limit on what the step may use (docs/plan-format.md,
 * "Budgets and usage"), and tokens and dollars are summed over attempts too; a limit per attempt would let retries
 * spend `maxRetries + 1` times the budget. Why the run's seconds abandon a running attempt, where tokens and dollars
 * let the steps in flight finish: their spend is made by the time the capability answers, but time is the very
 * thing a long call keeps spending, so letting it finish would make the run's limit as long as the slowest call.
 */
import type { Budget, StepError } from '../plan/schema.ts';
import { BUDGET_ERROR_CODE, type BudgetFigure, describeExhaustion, round, secondsBetween } from './budget.ts';
import type { AttemptOutcome } from './step-lifecycle.ts';

/** Whose `maxSeconds` bounds the attempt: the step's own budget or the run's (the plan's). */
export type TimeScope = 'step' | 'run';

export interface AttemptTimeLimit {
  readonly scope: TimeScope;
  /** The budget's `maxSeconds`. */
  readonly limitSeconds: number;
  /** When its seconds began to count: the step's claim, or the run's creation (ISO). */
  readonly since: string;
}

export interface TimeBudgets {
  readonly step?: Budget | undefined;
  /** When the step was claimed (its `startedAt`); without it the step's seconds are not counted. */
  readonly stepStartedAt?: string | undefined;
  readonly run?: Budget | undefined;
  readonly runCreatedAt: string;
}

/** Milliseconds left of a limit at `now` (0 when it is spent, or when `since` cannot be read). */
export function remainingMs(limit: AttemptTimeLimit, now: string): number {
  const elapsed = secondsBetween(limit.since, now);
  if (elapsed === undefined) return 0;
  return Math.max(0, Math.round((limit.limitSeconds - elapsed) * 1000));
}

/** The limit that ends first at `now`, or undefined when neither the step nor the run has `maxSeconds`. */
export function attemptTimeLimit(budgets: TimeBudgets, now: string): AttemptTimeLimit | undefined {
  const limits: AttemptTimeLimit[] = [];
  if (budgets.step?.maxSeconds !== undefined && budgets.stepStartedAt !== undefined)
    limits.push({ scope: 'step', limitSeconds: budgets.step.maxSeconds, since: budgets.stepStartedAt });
  if (budgets.run?.maxSeconds !== undefined)
    limits.push({ scope: 'run', limitSeconds: budgets.run.maxSeconds, since: budgets.runCreatedAt });
  // On a tie the step's own limit is named: it is the one the step's author set for it.
  return limits.reduce<AttemptTimeLimit | undefined>(
    (first, limit) => (first === undefined || remainingMs(limit, now) < remainingMs(first, now) ? limit : first),
    undefined,
  );
}

/** The figure a time decision carries as evidence: the limit and the seconds elapsed under it at `now`. */
export function secondsFigure(limit: AttemptTimeLimit, now: string): BudgetFigure {
  return { dimension: 'seconds', limit: limit.limitSeconds, spent: round(secondsBetween(limit.since, now) ?? 0) };
}

/**
 * The error of an attempt its time limit stopped (`why`: what was not done, or was abandoned). Its details hold the
 * scope and the figures, in the shape `stepBudgetOutcome` gives a step over its tokens or dollars.
 */
export function timeExhausted(
  limit: AttemptTimeLimit,
  now: string,
  why: string,
  extra: Readonly<Record<string, number>> = {},
): StepError {
  const figure = secondsFigure(limit, now);
  return {
    code: BUDGET_ERROR_CODE,
    message: `${describeExhaustion(limit.scope, [figure])}; ${why}`,
    retryable: false,
    details: { scope: limit.scope, exhausted: [{ ...figure }], ...extra },
  };
}

/**
 * A retry is not scheduled when its backoff would end with no time left: the step fails now, instead of waiting the
 * backoff out only to find the budget spent (docs/plan-format.md: retries do not extend past the budget).
 */
export function boundRetry(outcome: AttemptOutcome, limit: AttemptTimeLimit | undefined, now: string): AttemptOutcome {
  if (outcome.kind !== 'retry' || limit === undefined) return outcome;
  if (remainingMs(limit, now) > outcome.delaySeconds * 1000) return outcome;
  const why = `no time is left for attempt ${outcome.attempt} after a backoff of ${outcome.delaySeconds}s`;
  return {
    kind: 'fail',
    why: 'permanent',
    error: timeExhausted(limit, now, why, { backoffSeconds: outcome.delaySeconds }),
  };
}

/**
 * How long a person's decision may be waited for: the approval's own timeout, or what is left of the run's
 * `maxSeconds` when that ends first (`byBudget`). A run whose only open work is people's decisions spends its
 * seconds too, so its wait ends at the budget's limit, kept by the same timer as the approval's own deadline (the
 * step machine's task-token wait): nothing else would notice the limit passing while nothing runs.
 */
export interface ApprovalWindow {
  /** A positive whole number of seconds (the task-token wait takes no fractions). */
  readonly seconds: number;
  readonly byBudget: boolean;
}

export function approvalWindow(
  timeoutSeconds: number,
  run: { readonly budget?: Budget | undefined; readonly createdAt: string },
  now: string,
): ApprovalWindow {
  const own = { seconds: Math.max(1, Math.ceil(timeoutSeconds)), byBudget: false };
  const maxSeconds = run.budget?.maxSeconds;
  if (maxSeconds === undefined) return own;
  const left = maxSeconds - (secondsBetween(run.createdAt, now) ?? 0);
  if (left >= own.seconds) return own;
  return { seconds: Math.max(1, Math.ceil(left)), byBudget: true };
}

/**
 * Whether an approval's deadline was set by its run's seconds budget rather than its own timeout: the deadline
 * comes before the end of its own timeout counted from its creation.
 */
export function deadlineByBudget(
  approval: { readonly createdAt: string; readonly deadline: string },
  timeoutSeconds: number,
): boolean {
  const own = Date.parse(approval.createdAt) + Math.max(1, Math.ceil(timeoutSeconds)) * 1000;
  return Date.parse(approval.deadline) < own;
}
