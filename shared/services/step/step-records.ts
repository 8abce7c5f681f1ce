/**
 * What a RunStep entry starts from, read once: the run, the step, one attempt if asked for and the upstream steps
 * whose outputs the step will most likely need, all in one BatchGetItem; the plan revision comes from the process's
 * cache (revisions never change). Plus the small helpers every path of a step shares.
 */
import { effectiveBudget } from '../../engine/budget.ts';
import { type ApprovalWindow, approvalWindow } from '../../engine/step-seconds.ts';
import { containsExpression } from '../../plan/expressions.ts';
import { effectiveUpstream } from '../../plan/graph.ts';
import type { PlanStep } from '../../plan/schema.ts';
import type { AttemptRecord, RunRecord, StepRecord } from '../../ports/store.ts';
import type { CoordinatorConfig, StepRef } from '../coordinator-types.ts';
import type { Interpreter, LoadedPlan } from '../interpreter.ts';
import { contextStepIds, loadStepContext, type StepContext } from '../step-input.ts';

export interface StepRecords {
  readonly run: RunRecord;
  readonly plan: LoadedPlan;
  readonly step: StepRecord | undefined;
  readonly planStep: PlanStep | undefined;
  /** The attempt asked for, if it was recorded. */
  readonly attempt: AttemptRecord | undefined;
  /** Upstream step records read along with the step (a guess; whatever is missing is read when needed). */
  readonly others: readonly StepRecord[];
}

/** Plan revisions this process last saw per run: the guess at which upstream steps to read along with the step. */
export type RevisionMemory = Map<string, number>;
const REMEMBERED_RUNS = 256;

function remember(memory: RevisionMemory, runId: string, revision: number): void {
  memory.delete(runId);
  if (memory.size >= REMEMBERED_RUNS) memory.delete(memory.keys().next().value ?? '');
  memory.set(runId, revision);
}

/** The upstream steps a step's evaluation (or an agent's brief) reads: from the revision last seen, if cached. */
function likelyContext(ctx: Interpreter, memory: RevisionMemory, ref: StepRef): string[] {
  const revision = memory.get(ref.runId);
  const loaded = revision === undefined ? undefined : ctx.cachedPlan(ref.runId, revision);
  const definition = loaded?.byId.get(ref.stepId);
  if (!loaded || !definition) return [];
  const withOutputs = needsOutputs(definition);
  return contextStepIds(loaded.graph, ref.stepId, effectiveUpstream(loaded.graph, ref.stepId), withOutputs, definition);
}

/** Whether anything of the step binds `$outputs`: its `when`, its input or its success assertion. */
export const needsOutputs = (planStep: PlanStep): boolean =>
  planStep.when !== undefined || containsExpression(planStep.input) || planStep.successCriteria?.assert !== undefined;

export async function loadStepRecords(
  ctx: Interpreter,
  memory: RevisionMemory,
  ref: StepRef,
  attempt?: number,
): Promise<StepRecords> {
  const found = await ctx.deps.store.getStepWithRun(
    ref.runId,
    ref.stepId,
    attempt === undefined ? undefined : { generation: ref.generation, attempt },
    likelyContext(ctx, memory, ref),
  );
  if (!found.run) return ctx.getRun(ref.runId).then(() => unreachable());
  remember(memory, ref.runId, found.run.revision);
  const plan = await ctx.plan(found.run);
  return {
    run: found.run,
    plan,
    step: found.step,
    planStep: plan.byId.get(ref.stepId),
    attempt: found.attempt,
    others: found.others ?? [],
  };
}

function unreachable(): never {
  throw new Error('unreachable: getRun throws NotFoundError for a run that does not exist');
}

/** `$outputs` and the direct upstream outputs, from the records read along with the step (and what is missing). */
export function stepContext(
  ctx: Interpreter,
  records: StepRecords,
  step: StepRecord,
  withOutputs: boolean,
): Promise<StepContext> {
  return loadStepContext(
    ctx.deps.store,
    records.plan.graph,
    step,
    withOutputs,
    records.others,
    records.plan.byId.get(step.stepId),
  );
}

/** How long a person may take on this step's gate or review: a positive whole number of seconds. */
export function approvalTimeoutSeconds(planStep: PlanStep | undefined, config: CoordinatorConfig): number {
  const seconds = planStep?.approval?.timeoutSeconds ?? config.approvalTimeoutSeconds ?? config.runDeadlineSeconds;
  return Math.max(1, Math.ceil(seconds));
}

/** How long a gate or review of this step waits from `now`: its own timeout, or the run's seconds left if fewer. */
export function stepApprovalWindow(
  planStep: PlanStep | undefined,
  config: CoordinatorConfig,
  records: Pick<StepRecords, 'run' | 'plan'>,
  now: string,
): ApprovalWindow {
  return approvalWindow(
    approvalTimeoutSeconds(planStep, config),
    { budget: effectiveBudget(records.plan.plan.budget, records.run.raisedBudget), createdAt: records.run.createdAt },
    now,
  );
}
