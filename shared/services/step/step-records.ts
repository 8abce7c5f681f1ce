/**
 * What a RunStep entry starts from, read once: the run, the step, one attempt if asked for and the upstream steps
 * whose outputs the step needs, all in one BatchGetItem. What it needs of the plan comes with its execution's input
 * (its brief, engine/run/step-brief.ts), so the step's path reads no plan; only an execution started without one (a
 * brief too large to send, an execution from before briefs) or one whose run was revised since reads the revision,
 * through the process's cache. Plus the small helpers every path of a step shares.
 */
import { effectiveBudget } from '../../engine/budget.ts';
import { briefContext, briefOf, type StepBrief } from '../../engine/run/step-brief.ts';
import { type ApprovalWindow, approvalWindow } from '../../engine/step-seconds.ts';
import type { PlanStep } from '../../plan/schema.ts';
import type { AttemptRecord, RunRecord, StepRecord } from '../../ports/store.ts';
import type { CoordinatorConfig, StepRef } from '../coordinator-types.ts';
import type { Interpreter } from '../interpreter.ts';
import { loadStepContext, type StepContext } from '../step-input.ts';

export interface StepRecords {
  readonly run: RunRecord;
  /** What the step needs of the run's current revision (undefined: the revision has no such step). */
  readonly brief: StepBrief | undefined;
  readonly step: StepRecord | undefined;
  readonly planStep: PlanStep | undefined;
  /** The attempt asked for, if it was recorded. */
  readonly attempt: AttemptRecord | undefined;
  /** Upstream step records read along with the step (whatever is missing is read when needed). */
  readonly others: readonly StepRecord[];
}

/** Plan revisions this process last saw per run: without a brief, the guess at which upstream steps to read. */
export type RevisionMemory = Map<string, number>;
const REMEMBERED_RUNS = 256;

function remember(memory: RevisionMemory, runId: string, revision: number): void {
  memory.delete(runId);
  if (memory.size >= REMEMBERED_RUNS) memory.delete(memory.keys().next().value ?? '');
  memory.set(runId, revision);
}

/** Without a brief: the upstream steps the step's evaluation reads, from the revision last seen, if cached. */
function likelyContext(ctx: Interpreter, memory: RevisionMemory, ref: StepRef): string[] {
  const revision = memory.get(ref.runId);
  const loaded = revision === undefined ? undefined : ctx.cachedPlan(ref.runId, revision);
  const brief = loaded === undefined ? undefined : briefOf(loaded, ref.stepId);
  return brief === undefined ? [] : briefContext(brief);
}

/**
 * The step's brief for the run as it is: the one its execution was started with while the run is at that revision,
 * else made from the revision read (through the process's cache).
 */
export async function currentBrief(
  ctx: Interpreter,
  run: RunRecord,
  stepId: string,
  sent: StepBrief | null | undefined,
): Promise<StepBrief | undefined> {
  if (sent && sent.revision === run.revision && sent.step.id === stepId) return sent;
  if (run.revision < 1) return undefined;
  return briefOf(await ctx.plan(run), stepId);
}

export async function loadStepRecords(
  ctx: Interpreter,
  memory: RevisionMemory,
  ref: StepRef,
  attempt?: number,
  sent?: StepBrief | null,
): Promise<StepRecords> {
  const found = await ctx.deps.store.getStepWithRun(
    ref.runId,
    ref.stepId,
    attempt === undefined ? undefined : { generation: ref.generation, attempt },
    sent ? briefContext(sent) : likelyContext(ctx, memory, ref),
  );
  if (!found.run) return ctx.getRun(ref.runId).then(() => unreachable());
  if (!sent) remember(memory, ref.runId, found.run.revision);
  const brief = await currentBrief(ctx, found.run, ref.stepId, sent);
  return {
    run: found.run,
    brief,
    step: found.step,
    planStep: brief?.step,
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
  return loadStepContext(ctx.deps.store, step, withOutputs ? (records.brief?.outputs ?? []) : [], records.others);
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
  records: Pick<StepRecords, 'run' | 'brief'>,
  now: string,
): ApprovalWindow {
  return approvalWindow(
    approvalTimeoutSeconds(planStep, config),
    { budget: effectiveBudget(records.brief?.budget, records.run.raisedBudget), createdAt: records.run.createdAt },
    now,
  );
}
