/**
 * Budgets (`budget` on the plan and on steps): the shape is the schema's; what needs more than one field is here.
 * A budget names at least one limit, `onExhausted` is the plan's (a step over its budget fails, see
 * shared/engine/budget.ts), and a step's limit is never above the plan's (the run would stop first, so such a limit
 * says something that cannot happen). A step's `maxSeconds` bounds each of its attempts while it runs, so it is
 * never above what one step executor invocation can honour (MAX_STEP_BUDGET_SECONDS).
 */
import { MAX_STEP_BUDGET_SECONDS } from '../../config/defaults.ts';
import { child, type IssueSink, issue } from '../issues.ts';
import { budgetSchema } from '../schema.ts';
import type { StepView } from './shape.ts';

const LIMITS = ['maxTokens', 'maxCostUsd', 'maxSeconds'] as const;
type Limits = Partial<Record<(typeof LIMITS)[number], number>>;

/** The budget at `value` when it is well-formed (its E_FIELD issues are the shape rule's), else undefined. */
function readBudget(value: unknown): (Limits & { onExhausted?: string }) | undefined {
  if (value === undefined) return undefined;
  const parsed = budgetSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

function checkOne(budget: Limits, path: string, issues: IssueSink): void {
  if (LIMITS.every((limit) => budget[limit] === undefined))
    issues.push(issue('E_BUDGET', path, 'a budget names at least one of maxTokens, maxCostUsd, maxSeconds'));
}

export function checkBudgets(plan: unknown, steps: readonly StepView[], issues: IssueSink): void {
  const planBudget =
    typeof plan === 'object' && plan !== null ? readBudget((plan as { budget?: unknown }).budget) : undefined;
  if (planBudget) checkOne(planBudget, '/budget', issues);
  for (const step of steps) {
    const budget = readBudget(step.raw.budget);
    if (!budget) continue;
    const path = child(step.path, 'budget');
    checkOne(budget, path, issues);
    if (budget.onExhausted !== undefined)
      issues.push(
        issue(
          'E_BUDGET',
          child(path, 'onExhausted'),
          'onExhausted belongs to the plan budget; a step over its own fails',
        ),
      );
    if (budget.maxSeconds !== undefined && budget.maxSeconds > MAX_STEP_BUDGET_SECONDS)
      issues.push(
        issue(
          'E_BUDGET',
          child(path, 'maxSeconds'),
          `maxSeconds ${budget.maxSeconds} is above ${MAX_STEP_BUDGET_SECONDS}: one attempt of a step runs in one ` +
            'step executor invocation, which cannot outlast it; bound the whole run with the plan budget instead',
        ),
      );
    for (const limit of LIMITS) {
      const own = budget[limit];
      const whole = planBudget?.[limit];
      if (own !== undefined && whole !== undefined && own > whole)
        issues.push(
          issue(
            'E_BUDGET',
            child(path, limit),
            `${limit} ${own} is above the plan budget's ${whole}: it can never apply`,
          ),
        );
    }
  }
}
