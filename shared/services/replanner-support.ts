import { clipText } from '../engine/replan/step-definition.ts';
import { failureFingerprint, type LineageMap, mergeLineage, stepLineage } from '../engine/replan.ts';
import { isModelError, isPlannerError } from '../errors.ts';
import { plannerErrorCode } from '../planner/errors.ts';
import type { PlannerDeps } from '../planner/planner.ts';
import { proposeRevision, type RevisionOutcome, type RevisionRequest } from '../planner/replan/revise.ts';
import type { BudgetReplanRequest, PriorReplan, ReplanChange } from '../ports/plan-model.ts';
import type { RunRecord, StepRecord } from '../ports/store.ts';

/** A gate left waiting by its `pause` timeout policy: what a person's replan diagnoses. */
const APPROVAL_EXPIRED_CODE = 'E_APPROVAL_EXPIRED';
const APPROVAL_EXPIRED_REASON = 'approval_expired';

import type { LoadedPlan } from './interpreter.ts';
import { type TryAgainPolicy, tryAgain } from './write-again.ts';

/** Characters of a planner's reason kept in a decline (it ends up in the terminal evidence). */
const DECLINE_MESSAGE_CHARS = 1000;
const MODEL_POLICY: TryAgainPolicy = {
  tries: 3,
  pauseMs: (tries) => 500 * tries,
  when: (error) => isModelError(error) && error.retryable,
};

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

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
