/**
 * The replanner's small pieces: what a run's earlier replans tell the next one (PriorReplan records, lineage,
 * fingerprints), the reason text of a revision, asking the model with a bounded retry of transient model errors,
 * recording a failure the replanner could not replan around, and the step a person's replan revises around.
 */
import { BUDGET_ERROR_CODE } from '../engine/budget.ts';
import { BUDGET_REPLAN_KEY } from '../engine/budget-replan.ts';
import { clipText } from '../engine/replan/step-definition.ts';
import { failureFingerprint, type LineageMap, mergeLineage, stepLineage } from '../engine/replan.ts';
import { traceEntry } from '../engine/trace.ts';
import { isModelError, isPlannerError, isTransientPlatformError } from '../errors.ts';
import type { Plan } from '../plan/schema.ts';
import { plannerErrorCode } from '../planner/errors.ts';
import type { PlannerDeps } from '../planner/planner.ts';
import { proposeRevision, type RevisionOutcome, type RevisionRequest } from '../planner/replan/revise.ts';
import type { BudgetReplanRequest, PriorReplan, ReplanChange } from '../ports/plan-model.ts';
import type { HeldRevision, ReplanRecord, RunRecord, StepRecord, Store } from '../ports/store.ts';
import { APPROVAL_EXPIRED_CODE, APPROVAL_EXPIRED_REASON } from './coordinator-approval.ts';
import { declineMember, failureKey } from './coordinator-replan.ts';
import type { Interpreter, LoadedPlan } from './interpreter.ts';
import { settleRun } from './run-end.ts';
import { type TryAgainPolicy, tryAgain, WORK_TRIES, workAgainPolicy } from './write-again.ts';

/** Characters of a planner's reason kept in a decline (it ends up in the terminal evidence). */
const DECLINE_MESSAGE_CHARS = 1000;
const MODEL_POLICY: TryAgainPolicy = {
  tries: 3,
  pauseMs: (tries) => 500 * tries,
  when: (error) => isModelError(error) && error.retryable,
};

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Tries, in one invocation, of an answer (or of finishing a revision) that a platform error interrupted: the shared
 * policy of repeatable work (write-again.ts), as a run's invalidation is tried. An answer has three deliveries at
 * most behind it, and the run waits for it (awaitsReplan) with nothing else open to end it.
 */
export const PLATFORM_TRIES = WORK_TRIES;
const PLATFORM_POLICY = workAgainPolicy(isTransientPlatformError);

/** `action` again, a little later each time, while it fails with a platform error (PLATFORM_TRIES in all). */
export function withPlatformRetries<T>(action: (tries: number) => Promise<T>): Promise<T> {
  return tryAgain(PLATFORM_POLICY, action);
}

/**
 * Whether revision `plan.revision`, found stored, is the one this answer to a failure proposed: an earlier try
 * stored it and threw before the write that makes it current (a store timeout whose write landed). One failure is
 * answered by one holder of its `handledFailures` mark at a time, and the reason names the failed step, so the same
 * reason and plan at a revision the run has not reached yet can only be that earlier try's: the repeat makes it
 * current instead of losing to itself.
 */
export async function isOwnStoredRevision(store: Store, runId: string, plan: Plan, reason: string): Promise<boolean> {
  const stored = await store.getPlanRevision(runId, plan.revision);
  if (stored?.reason !== reason || JSON.stringify(stored.plan) !== JSON.stringify(plan)) return false;
  const run = await store.getRun(runId);
  return run !== undefined && run.revision < plan.revision;
}

/** The run's earlier replans around a failure as the planner is told them, oldest first. */
export function priorReplans(run: Pick<RunRecord, 'replanLog'>): PriorReplan[] {
  // A person's replan with no failure (stepId '') tried nothing that failed.
  return (run.replanLog ?? [])
    .filter((r) => r.stepId !== '')
    .map((r) => ({
      revision: r.revision,
      stepId: r.stepId,
      ...(r.target === undefined ? {} : { target: r.target }),
      code: r.code,
      change: r.change,
      ...(r.replaces === undefined ? {} : { replaces: r.replaces }),
    }));
}

export const lineageOf = (run: Pick<RunRecord, 'replanLog'>): LineageMap =>
  mergeLineage(...(run.replanLog ?? []).map((r) => r.replaces));

/** The no-progress fingerprint of a failed step's current failure. */
export function fingerprintOf(run: Pick<RunRecord, 'replanLog'>, step: StepRecord): string {
  return failureFingerprint({
    lineage: stepLineage(step.stepId, lineageOf(run)),
    code: step.error?.code ?? 'E_UNKNOWN',
    message: step.error?.message ?? '',
  });
}

/** One line: what a replan changed. */
export function describeChange(change: ReplanChange): string {
  switch (change.kind) {
    case 'substitute':
      return `${change.stepId} now runs ${change.to} instead of ${change.from}`;
    case 'method':
      return `another method for ${change.path || 'the objective'} (${change.from} → ${change.to ?? 'another'})`;
    case 'budget': {
      const parts = [
        change.dropped.length > 0 ? `dropped ${change.dropped.join(', ')}` : '',
        change.capped.length > 0 ? `capped ${change.capped.join(', ')}` : '',
      ].filter(Boolean);
      return `a cheaper plan (${parts.join('; ') || 'rewritten'})`;
    }
    default:
      return 'the plan was rewritten around it';
  }
}

/** The reason stored with revision n+1 and published with PlanRevised. */
export function revisionReason(step: StepRecord | undefined, change: ReplanChange, manual: string | undefined): string {
  const failure = step === undefined ? undefined : `${step.stepId} failed (${step.error?.code ?? 'E_UNKNOWN'})`;
  if (manual === undefined) return `replan: ${failure ?? 'no failure'}; ${describeChange(change)}`;
  const head = `manual replan (${clipText(manual, 200)})`;
  return failure === undefined
    ? `${head}; ${describeChange(change)}`
    : `${head}: ${failure}; ${describeChange(change)}`;
}

/** The reason stored with a budget replan's revision: the exhausted limits and what the revision changed. */
export function budgetReason(budget: BudgetReplanRequest, change: ReplanChange): string {
  const spent = budget.exhausted.map((f) => `${f.dimension} ${f.spent} of ${f.limit}`).join(', ');
  return `budget replan: run budget exhausted (${spent}); ${describeChange(change)}`;
}

/**
 * The record of a revision made from `held`: what later replans are told it tried, and what it answered (a failure's
 * `<stepId>#<generation>`, the budget replan's BUDGET_REPLAN_KEY, nothing for a person's replan without a failure).
 */
export function replanRecord(held: HeldRevision, revision: number, at: string): ReplanRecord {
  const budget = held.trigger === 'budget';
  const failure = budget ? BUDGET_REPLAN_KEY : held.failure && failureKey(held.failure);
  const code = budget
    ? BUDGET_ERROR_CODE
    : held.failure === undefined
      ? 'E_REQUESTED'
      : (held.failedCode ?? 'E_UNKNOWN');
  return {
    revision,
    stepId: held.failure?.stepId ?? '',
    ...(held.failedTarget ? { target: held.failedTarget } : {}),
    code,
    change: held.change,
    ...(Object.keys(held.replaces).length === 0 ? {} : { replaces: { ...held.replaces } }),
    ...(failure === undefined ? {} : { failure }),
    reason: held.reason,
    at,
  };
}

/** The planner's answer, asking again (a little later) while the model provider reports a transient failure. */
export function proposeWithRetry(deps: PlannerDeps, request: RevisionRequest): Promise<RevisionOutcome> {
  return tryAgain(MODEL_POLICY, () => proposeRevision(deps, request));
}

/** A planner or model failure as the code and message a decline records. */
export function describeReplanError(error: unknown): { code: string; message: string } {
  const message = error instanceof Error ? error.message : String(error);
  const code = isPlannerError(error)
    ? (plannerErrorCode(error) ?? 'E_PLANNER')
    : isModelError(error)
      ? 'E_MODEL'
      : 'E_REPLAN_FAILED';
  return { code, message: clipText(message, DECLINE_MESSAGE_CHARS) };
}

/**
 * No revision for this failure: it stands. The decline is recorded once (a set member, so concurrent declines
 * never overwrite each other), noted on the step's trace, and the run is settled: it ends `failed` once nothing
 * else is open, its terminal evidence naming the root cause and the planner's reason.
 */
export async function declineFailure(
  ctx: Interpreter,
  step: StepRecord,
  why: { code: string; message: string },
): Promise<void> {
  const { store } = ctx.deps;
  const failure = failureKey(step);
  const added = await store.markRunOnce(
    step.runId,
    'replanDeclines',
    declineMember({ failure, stepId: step.stepId, ...why }),
  );
  if (added) {
    const now = ctx.now();
    await store.transitionStep(
      step.runId,
      step.stepId,
      { generation: step.generation, from: ['failed'] },
      { appendTrace: [traceEntry('plan', `no replan: ${why.code} ${why.message}`, now)] },
    );
  }
  await settleRun(ctx, step.runId);
}

/**
 * The step a manual replan revises around: the first failed step of the current revision (plan order), else the
 * gate the run was paused for by its `pause` timeout policy (still waiting, its approval expired), given that error.
 */
export function replanTarget(
  run: RunRecord,
  loaded: LoadedPlan,
  records: readonly StepRecord[],
): StepRecord | undefined {
  const byId = new Map(records.map((r) => [r.stepId, r]));
  const steps = loaded.graph.executableIds().flatMap((id) => byId.get(id) ?? []);
  const failed = steps.find((s) => s.status === 'failed');
  if (failed) return failed;
  if (run.terminal?.reason !== APPROVAL_EXPIRED_REASON) return undefined;
  const gate = byId.get(String(run.terminal.evidence.stepId));
  if (gate?.status !== 'awaiting_approval') return undefined;
  const message = String(run.terminal.evidence.detail ?? 'no decision before the approval deadline');
  return { ...gate, error: { code: APPROVAL_EXPIRED_CODE, message, retryable: false } };
}

/**
 * No budget revision: recorded once (a set member, as a failure's decline), then the run is looked at again; it
 * ends `failed`, reason `budget_exhausted`, the decline in its evidence.
 */
export async function declineBudgetReplan(
  ctx: Interpreter,
  runId: string,
  why: { code: string; message: string },
): Promise<void> {
  await ctx.deps.store.markRunOnce(
    runId,
    'replanDeclines',
    declineMember({ failure: BUDGET_REPLAN_KEY, stepId: '', ...why }),
  );
  await settleRun(ctx, runId);
}
