/** Types of spend.js for the TypeScript tests (the console itself is plain ES modules). */
export interface SpendPart {
  readonly text: string;
  readonly over: boolean;
}
export interface UsageView {
  readonly tokens: number;
  readonly costUsd: number;
}
export interface BudgetView {
  readonly maxTokens?: number;
  readonly maxCostUsd?: number;
  readonly maxSeconds?: number;
}
/** GET /runs/{id} `budgetReplan` (shared/engine/budget-replan.ts BudgetReplanView). */
export type BudgetReplanView =
  | {
      readonly trigger: string;
      readonly outcome: 'revised' | 'exhausted_again';
      readonly revision: number;
      readonly reason: string;
    }
  | { readonly trigger: string; readonly outcome: string; readonly code: string; readonly message: string };

export function spendParts(usage: UsageView | null | undefined, budget: BudgetView | null | undefined): SpendPart[];
export function spendText(usage: UsageView | null | undefined, budget: BudgetView | null | undefined): string;
export function budgetReplanText(
  replan: BudgetReplanView | null | undefined,
): { readonly text: string; readonly detail: string } | null;
