/**
 * The budget replan (`budget.onExhausted: "replan"`), decided without I/O: once the plan's budget is exhausted and
 * nothing is in flight any more, the run asks the replanner, at most once per run, for a cheaper revision of the
 * steps that have not run; until it answers the run waits. A second exhaustion, a replan that is declined (no
 * cheaper plan, an invalid or rejected one, the replan limit) or replanning being off ends the run as `fail` does:
 * `failed`, reason `budget_exhausted`, the figures and what became of the replan as evidence.
 *
 * The revision's budget is the engine's, never the planner's. The run's spend is not reset (it is money and tokens
 * already gone, and every sum counts every attempt of every revision), so a revision with the same limits would be
 * exhausted before its first step; and a planner that may set its own limit is not asked for a cheaper plan, it is
 * asked for a bigger budget. So the revision gets what was spent plus a fixed allowance, a share
 * (BUDGET_REPLAN_ALLOWANCE) of each original limit, and the planner is told that allowance: it is what the steps
 * not yet run may spend in all. A run under `replan` therefore spends at most about 1.5 times its limits (plus what
 * attempts in flight overshoot), once.
 */
import { buildGraph } from '../plan/graph.ts';
import type { Budget, BudgetExhaustedPolicy, Plan, StepError } from '../plan/schema.ts';
import type { BudgetReplanRequest, ReplanScope } from '../ports/plan-model.ts';
import { BUDGET_ERROR_CODE, type BudgetFigure, checkBudget, round, type Spend } from './budget.ts';
import { replanScope } from './replan/scope.ts';
import { type StepStates, stateOf } from './replan/step-definition.ts';

/**
 * The key a budget replan is known by where a failure's `<stepId>#<generation>` would be (taken, made, declined):
 * no plan step id holds `~`.
 */
export const BUDGET_REPLAN_KEY = '~budget';

/** The share of each original limit a budget revision may spend beyond what was spent when it was asked for. */
export const BUDGET_REPLAN_ALLOWANCE = 0.5;

/**
 * `details` of the error a step stopped by the run's budget carries (a refused claim or retry, or an attempt the
 * plan's maxSeconds abandoned, engine/step-seconds.ts): not a failure of its own.
 */
export const RUN_BUDGET_STOP = { scope: 'run' } as const;

/** Whether a step was stopped by the run's budget (rather than failing on its own, or over its own budget). */
export function isRunBudgetStop(error: StepError | null | undefined): boolean {
  const details = error?.details;
  return (
    error?.code === BUDGET_ERROR_CODE &&
    typeof details === 'object' &&
    details !== null &&
    !Array.isArray(details) &&
    details.scope === RUN_BUDGET_STOP.scope
  );
}

const LIMIT_FIELD = { tokens: 'maxTokens', costUsd: 'maxCostUsd', seconds: 'maxSeconds' } as const;

/** A raised limit, in the unit the plan format takes: whole tokens, micro-dollars, whole seconds (rounded up). */
function raised(figure: BudgetFigure): number {
  const target = Math.max(figure.limit, figure.spent + figure.limit * BUDGET_REPLAN_ALLOWANCE);
  if (figure.dimension === 'costUsd') return Math.ceil(target * 1e6) / 1e6;
  return Math.ceil(target);
}

/**
 * What a budget replan asks: the figures, the budget revision n+1 gets (each limit at least what was spent plus the
 * allowance; one that still has that much left stays as it was) and the allowance per dimension.
 */
export function budgetReplanRequest(
  budget: Budget,
  spent: Spend,
  elapsedSeconds: number | undefined,
): BudgetReplanRequest {
  const check = checkBudget(budget, spent, elapsedSeconds);
  const revised: { -readonly [K in keyof Budget]: Budget[K] } = { ...budget };
  const allowance: Partial<Record<BudgetFigure['dimension'], number>> = {};
  for (const figure of check.figures) {
    const limit = raised(figure);
    revised[LIMIT_FIELD[figure.dimension]] = limit;
    allowance[figure.dimension] = round(Math.max(0, limit - figure.spent));
  }
  const view = (f: BudgetFigure) => ({ ...f, spent: round(f.spent) });
  return {
    trigger: 'budget',
    figures: check.figures.map(view),
    exhausted: check.exhausted.map(view),
    revised,
    allowance,
  };
}

/** What became of the run's budget replan, read from its replan log and declines. */
export type BudgetReplanState =
  | { readonly kind: 'none' }
  | { readonly kind: 'made'; readonly revision: number }
  | { readonly kind: 'declined'; readonly code: string; readonly message: string };

export function budgetReplanState(
  log: readonly { readonly failure?: string; readonly revision: number }[] | undefined,
  declines: readonly { readonly failure: string; readonly code: string; readonly message: string }[],
): BudgetReplanState {
  const made = log?.find((r) => r.failure === BUDGET_REPLAN_KEY);
  if (made) return { kind: 'made', revision: made.revision };
  const declined = declines.find((d) => d.failure === BUDGET_REPLAN_KEY);
  return declined ? { kind: 'declined', code: declined.code, message: declined.message } : { kind: 'none' };
}

export interface BudgetExhaustionInput {
  /** The current revision's `budget.onExhausted` (absent: `fail`). */
  readonly policy: BudgetExhaustedPolicy | undefined;
  readonly replan: BudgetReplanState;
  /** Replans the run may still make: the replan limit minus the replans made (0 or less with replanning off). */
  readonly replansLeft: number;
}

/**
 * The codes of a budget revision a person did not let run (it added a mutating target and waited for approval,
 * services/revision-approvals.ts): rejected, or nobody decided before the approval's deadline.
 */
export const REVISION_REJECTED_CODE = 'E_REVISION_REJECTED';
export const REVISION_EXPIRED_CODE = 'E_APPROVAL_EXPIRED';

/** Why no budget revision was made: the planner or the engine declined it, or its approval was rejected or expired. */
export type BudgetReplanNotMade = 'declined' | 'rejected' | 'expired';

/** What became of the budget replan, for the terminal evidence of a run that ends `budget_exhausted` under `replan`. */
export type BudgetReplanEvidence =
  | { readonly revision: number; readonly outcome: 'exhausted_again' }
  | { readonly outcome: BudgetReplanNotMade; readonly code: string; readonly message: string };

/** The outcome a decline's code names: a revision held for approval and not approved says how it ended. */
export function notMadeOutcome(code: string): BudgetReplanNotMade {
  if (code === REVISION_REJECTED_CODE) return 'rejected';
  if (code === REVISION_EXPIRED_CODE) return 'expired';
  return 'declined';
}

export type BudgetExhaustion =
  | { readonly action: 'fail'; readonly replan?: BudgetReplanEvidence }
  | { readonly action: 'pause' }
  /** Ask for the budget replan (asking again is harmless) and wait for its answer: the run does not end now. */
  | { readonly action: 'replan' };

/** What a run whose plan budget is exhausted, with nothing in flight, does now. */
export function decideBudgetExhaustion(input: BudgetExhaustionInput): BudgetExhaustion {
  if (input.policy === 'pause') return { action: 'pause' };
  if (input.policy !== 'replan') return { action: 'fail' };
  const { replan } = input;
  if (replan.kind === 'made')
    return { action: 'fail', replan: { revision: replan.revision, outcome: 'exhausted_again' } };
  if (replan.kind === 'declined')
    return {
      action: 'fail',
      replan: { outcome: notMadeOutcome(replan.code), code: replan.code, message: replan.message },
    };
  if (input.replansLeft <= 0)
    return {
      action: 'fail',
      replan: {
        outcome: 'declined',
        code: 'E_REPLAN_LIMIT',
        message: 'no replan is left to the run (replanning is off, or its replan limit is reached)',
      },
    };
  return { action: 'replan' };
}

/**
 * The steps a budget replan may change: the steps the budget stopped (not started yet: pending or ready, or closed
 * or failed by the run's budget) and what is downstream of them. Finished steps, and steps that failed on their own,
 * are frozen: the revision is about what has not run.
 */
export function budgetScope(plan: Pick<Plan, 'steps'>, states: StepStates): ReplanScope {
  const stopped = buildGraph(plan.steps)
    .executableIds()
    .filter((id) => {
      const state = stateOf(states, id);
      const status = state?.status ?? 'pending';
      return status === 'pending' || status === 'ready' || isRunBudgetStop(state?.error);
    });
  return replanScope(plan, stopped);
}

/**
 * The budget replan as a run view shows it (GET /runs/{id}, the console): the trigger, what became of it and why.
 * A revision made says which one and its reason (the exhausted figures and what it changed); once the run ended
 * over that revision's budget too, `exhausted_again`. Not made: declined, rejected or expired, with the code.
 */
export type BudgetReplanView =
  | {
      readonly trigger: 'budget';
      readonly outcome: 'revised' | 'exhausted_again';
      readonly revision: number;
      readonly reason: string;
    }
  | {
      readonly trigger: 'budget';
      readonly outcome: BudgetReplanNotMade;
      readonly code: string;
      readonly message: string;
    };

export function budgetReplanView(
  log: readonly { readonly failure?: string; readonly revision: number; readonly reason: string }[] | undefined,
  declines: readonly { readonly failure: string; readonly code: string; readonly message: string }[],
  terminalEvidence: Readonly<Record<string, unknown>> | undefined,
): BudgetReplanView | undefined {
  const made = log?.find((r) => r.failure === BUDGET_REPLAN_KEY);
  if (made) {
    const ended = terminalEvidence?.budgetReplan as { readonly outcome?: unknown } | undefined;
    const outcome = ended?.outcome === 'exhausted_again' ? 'exhausted_again' : 'revised';
    return { trigger: 'budget', outcome, revision: made.revision, reason: made.reason };
  }
  const declined = declines.find((d) => d.failure === BUDGET_REPLAN_KEY);
  if (!declined) return undefined;
  const { code, message } = declined;
  return { trigger: 'budget', outcome: notMadeOutcome(code), code, message };
}
