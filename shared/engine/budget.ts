/**
 * Budgets, decided without I/O: what an attempt's usage spends (tokens, and dollars as reported or priced from the
 * deployment's price table), and where a spend stands against a budget (`budget` on the plan or a step): over its
 * soft threshold (BudgetThreshold is published once per limit) or over a hard limit (the run starts no new step and
 * ends `budget_exhausted`, or asks once for a cheaper revision: budget-replan.ts; a step fails with
 * E_BUDGET_EXHAUSTED). The sums themselves are kept on the run and step records by the run's decider, once per
 * attempt (UsageCounted).
 */
import { type Budget, DEFAULT_BUDGET_WARN_AT } from '../plan/schema.ts';
import type { ModelUsage, Spend } from '../ports/capabilities.ts';
import type { RaisedLimits } from '../ports/records/runs.ts';

export type { Spend };

/** US dollars per million tokens, for one model id or capability target. */
export interface Price {
  readonly inputPerMillion: number;
  readonly outputPerMillion: number;
}

/** CAIRN_PRICES: model id or target → price. */
export type PriceTable = Readonly<Record<string, Price>>;

/** The error a step fails with when it is over its own budget, and the one a refused claim closes a step with. */
export const BUDGET_ERROR_CODE = 'E_BUDGET_EXHAUSTED';

/**
 * The usage with its cost: the reported one when there is one, else priced by the first key the table knows (the
 * model id the binding names, then the target); unpriced usage stays without a cost (it counts as $0).
 */
export function priceUsage(usage: ModelUsage, prices: PriceTable, keys: readonly (string | undefined)[]): ModelUsage {
  if (usage.costUsd !== undefined) return usage;
  const key = keys.find((k) => k !== undefined && Object.hasOwn(prices, k));
  const price = key === undefined ? undefined : prices[key];
  if (price === undefined) return usage;
  const costUsd = (usage.inputTokens * price.inputPerMillion + usage.outputTokens * price.outputPerMillion) / 1e6;
  return { ...usage, costUsd };
}

/** What one usage spends. */
export const spendOf = (usage: ModelUsage): Spend => ({
  tokens: usage.inputTokens + usage.outputTokens,
  costUsd: usage.costUsd ?? 0,
});

/** What a run or step record says it spent. */
export const spentBy = (record: { readonly usageTokens?: number; readonly usageCostUsd?: number }): Spend => ({
  tokens: record.usageTokens ?? 0,
  costUsd: record.usageCostUsd ?? 0,
});

/** Whether a usage spends anything at all (an attempt without spend writes no sums). */
export const spendsAnything = (spend: Spend): boolean => spend.tokens > 0 || spend.costUsd > 0;

export type BudgetDimension = 'tokens' | 'costUsd' | 'seconds';

/** One limit of a budget and where the spend stands against it: the evidence a budget decision carries. */
export interface BudgetFigure {
  readonly dimension: BudgetDimension;
  readonly limit: number;
  readonly spent: number;
}

export interface BudgetCheck {
  /** Every limit of the budget (seconds only when the elapsed time is known), with the spend against it. */
  readonly figures: readonly BudgetFigure[];
  /** Limits reached or passed. */
  readonly exhausted: readonly BudgetFigure[];
  /** Limits at or past their soft threshold (including the exhausted ones). */
  readonly warned: readonly BudgetFigure[];
  readonly warnAt: number;
}

const NOTHING: BudgetCheck = { figures: [], exhausted: [], warned: [], warnAt: DEFAULT_BUDGET_WARN_AT };

/**
 * Where a spend stands against a budget. `elapsedSeconds` is the wall-clock time since the run (or step) started;
 * undefined leaves time out of the check. A limit is exhausted once the spend reaches it.
 */
export function checkBudget(budget: Budget | undefined, spent: Spend, elapsedSeconds: number | undefined): BudgetCheck {
  if (budget === undefined) return NOTHING;
  const warnAt = budget.warnAt ?? DEFAULT_BUDGET_WARN_AT;
  const figures: BudgetFigure[] = [];
  if (budget.maxTokens !== undefined)
    figures.push({ dimension: 'tokens', limit: budget.maxTokens, spent: spent.tokens });
  if (budget.maxCostUsd !== undefined)
    figures.push({ dimension: 'costUsd', limit: budget.maxCostUsd, spent: spent.costUsd });
  if (budget.maxSeconds !== undefined && elapsedSeconds !== undefined)
    figures.push({ dimension: 'seconds', limit: budget.maxSeconds, spent: elapsedSeconds });
  return {
    figures,
    exhausted: figures.filter((f) => f.spent >= f.limit),
    warned: figures.filter((f) => f.spent >= f.limit * warnAt),
    warnAt,
  };
}

/** Seconds from `since` to `now` (ISO strings); undefined when either is missing or unreadable. */
export function secondsBetween(since: string | undefined, now: string): number | undefined {
  if (since === undefined) return undefined;
  const ms = Date.parse(now) - Date.parse(since);
  return Number.isFinite(ms) ? Math.max(0, ms / 1000) : undefined;
}

/** A one-line account of exhausted limits, for the terminal record and the step error. */
export function describeExhaustion(scope: string, exhausted: readonly BudgetFigure[]): string {
  const parts = exhausted.map((f) => `${f.dimension} ${round(f.spent)} of ${f.limit}`);
  return `${scope} budget exhausted: ${parts.join(', ')}`;
}

/** Sums written as decimals by the store come back as binary floats: shown to a micro-dollar. */
export const round = (n: number): number => Math.round(n * 1e6) / 1e6;

/** The limits of a plan's budget a person may raise (POST /runs/{id}/budget). */
export type RaisableLimit = 'maxTokens' | 'maxCostUsd' | 'maxSeconds';
export const RAISABLE_LIMITS: readonly RaisableLimit[] = ['maxTokens', 'maxCostUsd', 'maxSeconds'];

export type { RaisedLimits };

/**
 * The budget a run is held to: its current revision's, each limit a person raised taken at the larger of the two.
 * The raise is kept on the run, not on a revision, so a later revision (which carries its budget forward, or a budget
 * replan's own) never takes it back; a revision that sets a larger limit still has it.
 */
export function effectiveBudget(budget: Budget | undefined, raised: RaisedLimits | undefined): Budget | undefined {
  if (budget === undefined || raised === undefined) return budget;
  const out: { -readonly [K in keyof Budget]: Budget[K] } = { ...budget };
  for (const limit of RAISABLE_LIMITS) {
    const own = budget[limit];
    const more = raised[limit];
    if (own !== undefined && more !== undefined) out[limit] = Math.max(own, more);
  }
  return out;
}

/** The replans a run may make: the deployment's limit, or the larger one a person gave the run. */
export const replanCapOf = (
  run: { readonly maxReplans?: number | undefined },
  settings: { readonly maxReplans: number },
): number => Math.max(settings.maxReplans, run.maxReplans ?? 0);
