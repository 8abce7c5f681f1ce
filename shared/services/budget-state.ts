/**
 * Where a run stands against its plan's budget, read from the run record's sums (Store.addUsage) and the time since
 * the run was created: what the claim decision, the run's end and the step runner ask.
 */
import { checkBudget, describeExhaustion, round, secondsBetween, spentBy } from '../engine/budget.ts';
import type { Plan } from '../plan/schema.ts';
import type { RunRecord } from '../ports/store.ts';

export interface RunBudgetState {
  /** One line: the exhausted limits and their figures. */
  readonly detail: string;
  /** The figures a terminal record carries as evidence. */
  readonly evidence: Readonly<Record<string, unknown>>;
}

/** The run's budget when it is exhausted now, else undefined (no budget, or spend and time within it). */
export function runBudgetState(plan: Plan, run: RunRecord, now: string): RunBudgetState | undefined {
  if (plan.budget === undefined) return undefined;
  const spent = spentBy(run);
  const check = checkBudget(plan.budget, spent, secondsBetween(run.createdAt, now));
  if (check.exhausted.length === 0) return undefined;
  const { maxTokens, maxCostUsd, maxSeconds } = plan.budget;
  return {
    detail: describeExhaustion('run', check.exhausted),
    evidence: {
      limits: { maxTokens, maxCostUsd, maxSeconds },
      usage: { tokens: spent.tokens, costUsd: round(spent.costUsd) },
      exhausted: check.exhausted.map((f) => ({ ...f, spent: round(f.spent) })),
    },
  };
}
