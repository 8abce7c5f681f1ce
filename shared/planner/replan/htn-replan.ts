/**
 * The embedded planner's replan: deterministic, so replanning is testable without a model. For the failed step it
 * tries, in order:
 *
 * 1. substitution: the failed step's target swapped for a catalog `alternatives` target with the same contracts
 *    that this step's lineage has not tried yet (the target that just failed and every target earlier replans
 *    moved away from count as tried); nothing else changes;
 * 2. another method for a compound task that contains the failed step, innermost first: the previous plan is
 *    decomposed again with the method used there excluded (plus every method earlier replans excluded); frozen
 *    steps are taken verbatim from the previous plan, a step of the failed lineage that would run a tried target
 *    again gets an untried alternative or the method is passed over, and a candidate that breaks the scope rule
 *    (checkReplan) or changes nothing is passed over too;
 * 3. otherwise a PlannerError E_NO_ALTERNATIVE.
 *
 * A budget replan (the plan's budget ran out) is answered by htn-budget.ts: the steps not yet run made cheaper.
 *
 * A person's replan with a new objective, or of a run with no failed step, decomposes the (new) objective again
 * instead: the whole plan may change (requestScope), finished steps the decomposition no longer has are kept as
 * they were. The method library reads no free text: a reason alone (no new objective, no failed step) and a
 * decomposition that changes nothing are E_NO_CHANGE.
 *
 * The candidate has every step pending (no lifecycle data) and revision n+1; the planner validates it as usual.
 */

import { canonicalJson, stepsById } from '../../engine/replan/step-definition.ts';
import {
  checkReplan,
  diffPlans,
  isFinishedStatus,
  mergeLineage,
  pendingPlan,
  replanScope,
  requestScope,
  stepLineage,
} from '../../engine/replan.ts';
import { isPlannerError } from '../../errors.ts';
import { buildGraph } from '../../plan/graph.ts';
import type { Capability, Plan, PlanStep, StepStatus } from '../../plan/schema.ts';
import type { PlanModelRequest, ReplanChange, ReplanScope } from '../../ports/plan-model.ts';
import { plannerError, plannerErrorCode } from '../errors.ts';
import { type Decomposition, decompose } from '../htn/engine.ts';
import { DEMO_METHODS } from '../htn/methods/demo.ts';
import type { Method, MethodChoice } from '../htn/types.ts';
import { boundRationale } from '../rationale.ts';
import { htnBudgetReplan } from './htn-budget.ts';

export interface HtnReplanResult {
  /** The candidate revision: previous revision + 1, every step pending. */
  readonly plan: Plan;
  readonly change: ReplanChange;
  /** New step id → the failed step it takes over from (empty unless a method dropped the failed step's id). */
  readonly replaces: Readonly<Record<string, string>>;
  readonly scope: ReplanScope;
}

type Exclusion = { readonly path: string; readonly method: string };

interface Context {
  readonly request: PlanModelRequest;
  readonly previous: Plan;
  readonly failed: PlanStep;
  readonly scope: ReplanScope;
  readonly states: ReadonlyMap<string, StepStatus>;
  readonly catalog: ReadonlyMap<string, Capability>;
  readonly lineageOf: (id: string) => string;
  /** Lineage → targets it already ran and saw fail, in the order they were tried. */
  readonly tried: ReadonlyMap<string, readonly string[]>;
  readonly methods: readonly Method[];
}

function triedTargets(
  request: PlanModelRequest,
  failed: PlanStep,
  lineageOf: (id: string) => string,
): Map<string, string[]> {
  const tried = new Map<string, string[]>();
  const add = (stepId: string, target: string | null | undefined) => {
    if (!target) return;
    const lineage = lineageOf(stepId);
    const list = tried.get(lineage) ?? [];
    if (!list.includes(target)) list.push(target);
    tried.set(lineage, list);
  };
  for (const replan of request.replans ?? []) {
    add(replan.stepId, replan.target);
    if (replan.change.kind === 'substitute') add(replan.change.stepId, replan.change.from);
  }
  add(failed.id, request.diagnosis?.target);
  add(failed.id, failed.target);
  return tried;
}

const sameContracts = (step: PlanStep, capability: Capability): boolean =>
  canonicalJson(step.inputSchema) === canonicalJson(capability.inputSchema) &&
  canonicalJson(step.outputSchema) === canonicalJson(capability.outputSchema);

/** The first untried alternative with the step's contracts: alternatives of its target, then of earlier targets. */
function untriedAlternative(ctx: Context, step: PlanStep): Capability | undefined {
  if (step.target === null) return undefined;
  const tried = ctx.tried.get(ctx.lineageOf(step.id)) ?? [];
  const sources = [step.target, ...tried];
  for (const source of sources)
    for (const alternative of ctx.catalog.get(source)?.alternatives ?? []) {
      if (alternative === step.target || tried.includes(alternative)) continue;
      const capability = ctx.catalog.get(alternative);
      if (capability && sameContracts(step, capability)) return capability;
    }
  return undefined;
}

const substituted = (step: PlanStep, capability: Capability): PlanStep => ({
  ...step,
  target: capability.target,
  inputSchema: structuredClone(capability.inputSchema),
  outputSchema: structuredClone(capability.outputSchema),
});

function trySubstitution(ctx: Context): HtnReplanResult | undefined {
  const alternative = untriedAlternative(ctx, ctx.failed);
  if (!alternative) return undefined;
  const base = pendingPlan(ctx.previous);
  const plan: Plan = {
    ...base,
    revision: ctx.previous.revision + 1,
    ...rationale(
      ctx,
      `substituted ${alternative.target} for it: a catalog alternative of ${ctx.failed.target} with the same ` +
        'contracts that this step has not tried; nothing else changes',
    ),
    steps: base.steps.map((s) => (s.id === ctx.failed.id ? substituted(s, alternative) : s)),
  };
  if (checkReplan(ctx.previous, plan, ctx.scope, ctx.states).length > 0) return undefined;
  const change: ReplanChange = {
    kind: 'substitute',
    stepId: ctx.failed.id,
    from: ctx.failed.target ?? '',
    to: alternative.target,
  };
  return { plan, change, replaces: {}, scope: ctx.scope };
}

function decomposeWith(ctx: Context, excludeMethods: readonly Exclusion[]): Decomposition | undefined {
  try {
    return decompose({
      objective: ctx.previous.objective,
      catalog: ctx.request.catalog,
      limits: ctx.request.limits,
      methods: ctx.methods,
      options: { excludeMethods },
    });
  } catch (error) {
    if (isPlannerError(error) && plannerErrorCode(error) === 'E_NO_METHOD') return undefined;
    throw error;
  }
}

/** The decomposed plan with frozen steps taken from the previous plan and tried targets of a lineage swapped. */
function mergeCandidate(ctx: Context, decomposed: Plan): Plan | undefined {
  const inScope = new Set(ctx.scope.steps);
  const previousSteps = stepsById(ctx.previous);
  const steps: PlanStep[] = [];
  for (const fresh of decomposed.steps) {
    const old = previousSteps.get(fresh.id);
    if (old !== undefined && !inScope.has(fresh.id)) {
      steps.push(old);
      continue;
    }
    const tried = ctx.tried.get(ctx.lineageOf(fresh.id)) ?? [];
    if (fresh.target === null || !tried.includes(fresh.target)) {
      steps.push(fresh);
      continue;
    }
    const alternative = untriedAlternative(ctx, fresh);
    if (!alternative) return undefined;
    steps.push(substituted(fresh, alternative));
  }
  return pendingPlan({ ...ctx.previous, revision: ctx.previous.revision + 1, steps });
}

const contains = (path: string, id: string): boolean => path === '' || id === path || id.startsWith(`${path}.`);

function replacements(ctx: Context, plan: Plan, path: string): Record<string, string> {
  if (plan.steps.some((s) => s.id === ctx.failed.id)) return {};
  const before = new Set(ctx.previous.steps.map((s) => s.id));
  const out: Record<string, string> = {};
  for (const id of buildGraph(plan.steps).executableIds())
    if (!before.has(id) && contains(path, id)) out[id] = ctx.failed.id;
  return out;
}

function tryMethods(ctx: Context): HtnReplanResult | undefined {
  const excluded: Exclusion[] = [];
  for (const replan of ctx.request.replans ?? [])
    if (replan.change.kind === 'method') excluded.push({ path: replan.change.path, method: replan.change.from });
  const current = decomposeWith(ctx, excluded);
  // Only a plan this library made (with these exclusions) tells which method built which subtree.
  if (
    !current ||
    canonicalJson(current.plan.steps.map((s) => s.id)) !== canonicalJson(ctx.previous.steps.map((s) => s.id))
  )
    return undefined;
  const candidates = current.choices
    .filter((choice) => contains(choice.path, ctx.failed.id))
    .sort((a, b) => b.path.length - a.path.length);
  for (const choice of candidates) {
    const found = tryMethod(ctx, choice, excluded);
    if (found) return found;
  }
  return undefined;
}

function tryMethod(ctx: Context, choice: MethodChoice, excluded: readonly Exclusion[]): HtnReplanResult | undefined {
  const decomposition = decomposeWith(ctx, [...excluded, { path: choice.path, method: choice.method }]);
  if (!decomposition) return undefined;
  const plan = mergeCandidate(ctx, decomposition.plan);
  if (!plan || checkReplan(ctx.previous, plan, ctx.scope, ctx.states).length > 0) return undefined;
  const diff = diffPlans(ctx.previous, plan);
  if (diff.added.length + diff.removed.length + diff.changed.length === 0) return undefined;
  const chosen = decomposition.choices.find((c) => c.path === choice.path);
  const to = chosen?.method;
  const reasoned: Plan = {
    ...plan,
    ...rationale(
      ctx,
      `${choice.path || 'the objective'} (${choice.task}) is decomposed by method ${to ?? '?'} instead of ` +
        `${choice.method}${chosen?.why ? `, because ${chosen.why}` : ''}`,
    ),
  };
  const change: ReplanChange = {
    kind: 'method',
    path: choice.path,
    task: choice.task,
    from: choice.method,
    ...(to === undefined ? {} : { to }),
  };
  return { plan: reasoned, change, replaces: replacements(ctx, plan, choice.path), scope: ctx.scope };
}

/** The revision's own rationale (never the previous revision's): the failure it answers and what it changed. */
function rationale(ctx: Context, what: string): Pick<Plan, 'rationale'> {
  const diagnosis = ctx.request.diagnosis;
  const failure = `step ${ctx.failed.id} (${ctx.failed.target}) failed${diagnosis ? ` with ${diagnosis.code}` : ''}`;
  const text = boundRationale(`HTN replan: ${failure}; ${what}.`);
  return text === undefined ? {} : { rationale: text };
}

/** A person's replan: the (new) objective decomposed again, finished steps it drops kept (module comment). */
function requestedReplan(request: PlanModelRequest, previous: Plan, methods: readonly Method[]): HtnReplanResult {
  const objective = request.requested?.objective;
  if (objective === undefined)
    throw plannerError(
      'E_NO_CHANGE',
      'the HTN planner reads no free text: a reason alone, with no failed step to plan around, changes nothing; ' +
        'give a new objective (or configure a planning model)',
    );
  const scope = request.scope ?? requestScope(previous, [], objective);
  const decomposed = decompose({
    objective,
    catalog: request.catalog,
    limits: request.limits,
    methods,
    options: {},
  }).plan;
  const ids = new Set(decomposed.steps.map((s) => s.id));
  const keptFinished = previous.steps.filter(
    (s) => s.target !== null && !ids.has(s.id) && isFinishedStatus(s.status ?? undefined),
  );
  const plan = pendingPlan({
    ...previous,
    objective,
    revision: previous.revision + 1,
    steps: [...decomposed.steps, ...keptFinished],
  });
  const diff = diffPlans(previous, plan);
  if (diff.added.length + diff.removed.length + diff.changed.length === 0)
    throw plannerError(
      'E_NO_CHANGE',
      'the HTN planner makes the same plan again: it reads no free text, so give a new objective (or configure a ' +
        'planning model) to change the plan',
      { objective },
    );
  return { plan, change: { kind: 'rewrite' }, replaces: {}, scope };
}

/** Replans `request.previousPlan` around `request.diagnosis` (see the module comment). */
export function htnReplan(request: PlanModelRequest, methods: readonly Method[] = DEMO_METHODS): HtnReplanResult {
  if (request.budget !== undefined) return htnBudgetReplan(request);
  const { previousPlan: previous, diagnosis } = request;
  if (previous !== undefined && request.requested !== undefined) {
    const failedStep = diagnosis && previous.steps.find((s) => s.id === diagnosis.stepId);
    // A person's reason alone around a failure: the failure's own alternatives first, as an automatic replan.
    if (request.requested.objective !== undefined || failedStep === undefined || failedStep.target === null)
      return requestedReplan(request, previous, methods);
  }
  if (previous === undefined || diagnosis === undefined)
    throw plannerError('E_REPLAN_REQUEST', 'a replan needs the previous plan and the failure diagnosis');
  const failed = previous.steps.find((s) => s.id === diagnosis.stepId);
  if (failed === undefined || failed.target === null)
    throw plannerError('E_REPLAN_REQUEST', `the previous plan has no executable step ${diagnosis.stepId}`, {
      stepId: diagnosis.stepId,
    });
  const lineage = mergeLineage(...(request.replans ?? []).map((r) => r.replaces));
  const lineageOf = (id: string): string => stepLineage(id, lineage);
  const states = new Map<string, StepStatus>();
  for (const step of previous.steps) if (step.status !== undefined) states.set(step.id, step.status);
  const ctx: Context = {
    request,
    previous,
    failed,
    scope: replanScope(previous, [...(request.scope?.failed ?? []), failed.id]),
    states,
    catalog: new Map(request.catalog.map((c) => [c.target, c])),
    lineageOf,
    tried: triedTargets(request, failed, lineageOf),
    methods,
  };
  const found = trySubstitution(ctx) ?? tryMethods(ctx);
  if (found) return found;
  const tried = ctx.tried.get(lineageOf(failed.id)) ?? [];
  throw plannerError(
    'E_NO_ALTERNATIVE',
    `no alternative for step ${failed.id}: no untried catalog alternative of ${tried.join(', ')} with the same ` +
      'contracts, and no other method for a task that contains it keeps the finished and frozen steps',
    { stepId: failed.id, target: failed.target, tried },
  );
}
