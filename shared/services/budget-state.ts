/**
 * Where a run stands against its plan's budget, read from the run record's sums (Store.addUsage) and the time since
 * the run was created: what the claim decision, the run's end and the step runner ask. Once it is exhausted with
 * nothing in flight, the run's end announces it (BudgetExhausted, once per revision) and asks the one decision of
 * engine/budget-replan.ts what follows: fail, pause, or wait for the budget replan the announcement asks for.
 */
import {
  type BudgetFigure,
  checkBudget,
  describeExhaustion,
  round,
  secondsBetween,
  spentBy,
} from '../engine/budget.ts';
import { type BudgetExhaustion, budgetReplanState, decideBudgetExhaustion } from '../engine/budget-replan.ts';
import type { Plan } from '../plan/schema.ts';
import type { RunRecord } from '../ports/store.ts';
import { replanDeclines } from './coordinator-replan.ts';
import { event, type Interpreter } from './interpreter.ts';

export interface RunBudgetState {
  /** One line: the exhausted limits and their figures. */
  readonly detail: string;
  /** The figures a terminal record carries as evidence. */
  readonly evidence: Readonly<Record<string, unknown>>;
  /** The exhausted limits (spend rounded to a micro-dollar). */
  readonly exhausted: readonly BudgetFigure[];
}

/** The run's budget when it is exhausted now, else undefined (no budget, or spend and time within it). */
export function runBudgetState(plan: Plan, run: RunRecord, now: string): RunBudgetState | undefined {
  if (plan.budget === undefined) return undefined;
  const spent = spentBy(run);
  const check = checkBudget(plan.budget, spent, secondsBetween(run.createdAt, now));
  if (check.exhausted.length === 0) return undefined;
  const { maxTokens, maxCostUsd, maxSeconds } = plan.budget;
  const exhausted = check.exhausted.map((f) => ({ ...f, spent: round(f.spent) }));
  return {
    detail: describeExhaustion('run', check.exhausted),
    evidence: {
      limits: { maxTokens, maxCostUsd, maxSeconds },
      usage: { tokens: spent.tokens, costUsd: round(spent.costUsd) },
      exhausted,
    },
    exhausted,
  };
}

/** The announcement of revision n's exhaustion: its id is fixed, so racing ends of the run announce it once. */
const exhaustionId = (revision: number): string => `budget-exhausted-r${revision}`;

/**
 * A run whose budget is exhausted and that has nothing in flight: BudgetExhausted is announced (once per revision;
 * under `replan` it is what asks the replanner, BUS_RULES) and the decision says what the run does now.
 */
export async function announceExhaustion(
  ctx: Interpreter,
  run: RunRecord,
  plan: Plan,
  state: RunBudgetState,
): Promise<BudgetExhaustion> {
  const policy = plan.budget?.onExhausted;
  const maxReplans = Math.max(0, Math.floor(ctx.deps.config.maxReplans ?? 0));
  const next = decideBudgetExhaustion({
    policy,
    replan: budgetReplanState(run.replanLog, replanDeclines(run)),
    replansLeft: maxReplans - run.replans,
  });
  await ctx.deps.store.announce({
    id: exhaustionId(run.revision),
    runId: run.runId,
    at: ctx.now(),
    events: [
      event('BudgetExhausted', {
        runId: run.runId,
        revision: run.revision,
        onExhausted: policy ?? 'fail',
        exhausted: state.exhausted.map((f) => ({ ...f })),
      }),
    ],
  });
  return next;
}
