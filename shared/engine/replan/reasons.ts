/**
 * What a replan tells and is told, decided from the run's record: the earlier replans the planner hears of, the step
 * a person's replan revises around, and the reason a revision is stored and published with. Pure: the replanner
 * service reads the records and asks the planner; these decide what it says.
 */
import type { BudgetReplanRequest, PriorReplan, ReplanChange } from '../../ports/plan-model.ts';
import type { RunRecord, StepRecord } from '../../ports/store.ts';
import { type LineageMap, mergeLineage } from './fingerprint.ts';
import { clipText } from './step-definition.ts';

/** A gate left waiting by its `pause` timeout policy: what a person's replan diagnoses. */
const APPROVAL_EXPIRED_CODE = 'E_APPROVAL_EXPIRED';
const APPROVAL_EXPIRED_REASON = 'approval_expired';

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
 * The step a manual replan revises around: the first failed step of the current revision (plan order), else the
 * gate the run was paused for by its `pause` timeout policy (still waiting, its approval expired), given that error.
 */
export function replanTarget(
  run: RunRecord,
  executableIds: readonly string[],
  records: readonly StepRecord[],
): StepRecord | undefined {
  const byId = new Map(records.map((r) => [r.stepId, r]));
  const steps = executableIds.flatMap((id) => byId.get(id) ?? []);
  const failed = steps.find((s) => s.status === 'failed');
  if (failed) return failed;
  if (run.terminal?.reason !== APPROVAL_EXPIRED_REASON) return undefined;
  const gate = byId.get(String(run.terminal.evidence.stepId));
  if (gate?.status !== 'awaiting_approval') return undefined;
  const message = String(run.terminal.evidence.detail ?? 'no decision before the approval deadline');
  return { ...gate, error: { code: APPROVAL_EXPIRED_CODE, message, retryable: false } };
}
