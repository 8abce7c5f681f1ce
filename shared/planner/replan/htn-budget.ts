/**
 * The embedded planner's answer to a budget replan (`budget.onExhausted: "replan"`): deterministic, and it reads
 * only what it can trust, the plan, the steps' statuses and the allowance the engine grants (it knows no prices and
 * reads no free text). Of the steps in scope (those that have not run):
 *
 * 1. the optional ones are dropped: a step whose failure the plan accepts (`onFailure: "continue"`) is one the run
 *    can complete without, so it goes when nothing left waits for it (repeatedly: dropping one can free another);
 * 2. the rest are capped: each gets a step budget of an equal share of the allowance on every dimension that has one
 *    (tokens, dollars; a step's own lower limit is kept), so a step that would spend more fails on its own budget
 *    (and may be replanned as any failure) instead of exhausting the run's budget a second time;
 * 3. nothing to drop or cap (no step left to run, or each already within its share) is E_NO_CHANGE: the run ends
 *    `budget_exhausted`, as it would under `onExhausted: "fail"`.
 */
import { buildGraph } from '../../plan/graph.ts';
import type { Budget, Plan, PlanStep } from '../../plan/schema.ts';
import type { BudgetReplanRequest, PlanModelRequest, ReplanScope } from '../../ports/plan-model.ts';
import { plannerError } from '../errors.ts';
import { boundRationale } from '../rationale.ts';

export interface HtnBudgetResult {
  readonly plan: Plan;
  readonly change: { readonly kind: 'budget'; readonly dropped: string[]; readonly capped: string[] };
  readonly replaces: Readonly<Record<string, string>>;
  readonly scope: ReplanScope;
}

/** Optional steps in scope that nothing left waits for, dropped until none is left to drop; empty groups go too. */
function dropOptional(
  steps: readonly PlanStep[],
  inScope: ReadonlySet<string>,
): { kept: PlanStep[]; dropped: string[] } {
  let kept = [...steps];
  const dropped: string[] = [];
  for (;;) {
    const waitedFor = new Set(kept.flatMap((s) => s.dependsOn));
    const parents = new Set(kept.flatMap((s) => (s.parentId === undefined ? [] : [s.parentId])));
    const droppable = kept.filter(
      (s) =>
        inScope.has(s.id) &&
        !waitedFor.has(s.id) &&
        (s.target === null ? !parents.has(s.id) : s.onFailure === 'continue'),
    );
    if (droppable.length === 0) return { kept, dropped };
    const gone = new Set(droppable.map((s) => s.id));
    for (const s of droppable) if (s.target !== null) dropped.push(s.id);
    kept = kept.filter((s) => !gone.has(s.id));
  }
}

const LIMITS = [
  ['tokens', 'maxTokens'],
  ['costUsd', 'maxCostUsd'],
] as const;

/** An equal share of each allowance per step: whole tokens, micro-dollars, never below the smallest a limit takes. */
function shares(allowance: BudgetReplanRequest['allowance'], count: number): Budget {
  const share: { maxTokens?: number; maxCostUsd?: number } = {};
  const tokens = allowance.tokens;
  if (tokens !== undefined) share.maxTokens = Math.max(1, Math.floor(tokens / count));
  const cost = allowance.costUsd;
  if (cost !== undefined) share.maxCostUsd = Math.max(1e-6, Math.floor((cost / count) * 1e6) / 1e6);
  return share;
}

/** The step with each limit at most its share; undefined when it is within its share already. */
function capped(step: PlanStep, share: Budget): PlanStep | undefined {
  const budget: { -readonly [K in keyof Budget]: Budget[K] } = { ...step.budget };
  let changed = false;
  for (const [, field] of LIMITS) {
    const limit = share[field];
    const own = budget[field];
    if (limit === undefined || (own !== undefined && own <= limit)) continue;
    budget[field] = limit;
    changed = true;
  }
  return changed ? { ...step, budget } : undefined;
}

function describe(
  request: BudgetReplanRequest,
  dropped: readonly string[],
  cappedIds: readonly string[],
  share: Budget,
) {
  const spent = request.exhausted.map((f) => `${f.dimension} ${f.spent} of ${f.limit}`).join(', ');
  const parts = [`HTN budget replan: the run's budget is exhausted (${spent})`];
  if (dropped.length > 0) parts.push(`dropped ${dropped.join(', ')} (onFailure continue: the run completes without)`);
  if (cappedIds.length > 0) {
    const limits = LIMITS.flatMap(([dimension, field]) =>
      share[field] === undefined ? [] : [`${dimension} ${share[field]}`],
    ).join(', ');
    parts.push(`capped ${cappedIds.join(', ')} at ${limits} each (an equal share of what the revision may spend)`);
  }
  return boundRationale(`${parts.join('; ')}.`);
}

/** The cheaper revision of `request.previousPlan` for `request.budget` (see the module comment). */
export function htnBudgetReplan(request: PlanModelRequest): HtnBudgetResult {
  const { previousPlan: previous, budget, scope } = request;
  if (previous === undefined || budget === undefined || scope === undefined)
    throw plannerError('E_REPLAN_REQUEST', 'a budget replan needs the previous plan, the budget figures and the scope');
  const inScope = new Set(scope.steps);
  const { kept, dropped } = dropOptional(previous.steps, inScope);
  const toRun = buildGraph(kept)
    .executableIds()
    .filter((id) => inScope.has(id));
  const share = shares(budget.allowance, Math.max(1, toRun.length));
  const cappedIds: string[] = [];
  const steps = kept.map((step): PlanStep => {
    const definition: PlanStep = { ...step, status: 'pending', result: null, error: null };
    if (!toRun.includes(step.id)) return definition;
    const cheaper = capped(definition, share);
    if (cheaper === undefined) return definition;
    cappedIds.push(step.id);
    return cheaper;
  });
  if (dropped.length + cappedIds.length === 0)
    throw plannerError(
      'E_NO_CHANGE',
      toRun.length === 0
        ? 'no step is left to run: there is nothing to make cheaper'
        : `every step left to run (${toRun.join(', ')}) is within its share of the allowance already`,
    );
  const rationale = describe(budget, dropped, cappedIds, share);
  const plan: Plan = {
    ...previous,
    revision: previous.revision + 1,
    budget: budget.revised,
    steps,
    ...(rationale === undefined ? {} : { rationale }),
  };
  return { plan, change: { kind: 'budget', dropped, capped: cappedIds }, replaces: {}, scope };
}
