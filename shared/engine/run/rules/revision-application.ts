/**
 * A revision made current, in one decision: a finished run reopens first, then PlanRevised (revision n+1, its replan
 * record, the no-progress fingerprint of the failure it answers, a person's new objective), then what it does to the
 * step records (engine/replan/apply.ts decides which): a removed step is superseded, a changed one starts its next
 * generation, an added one gets its first; their approvals close; what is due starts and the run is looked at.
 *
 * Readiness of a new generation is read off the statuses as they stand (evolve.ts generationOf), so the moves go
 * upstream first: a step moved after its moved upstream waits for it, never for the generation it replaced.
 */
import { topologicalOrder } from '../../../plan/graph.ts';
import type { StepError } from '../../../plan/schema.ts';
import type { HeldRevision } from '../../../ports/records/approvals.ts';
import type { ReplanRecord } from '../../../ports/records/runs.ts';
import { BUDGET_ERROR_CODE } from '../../budget.ts';
import { BUDGET_REPLAN_KEY } from '../../budget-replan.ts';
import { type AppliedReplan, applyReplan } from '../../replan/apply.ts';
import { planTraceText } from '../../scheduling.ts';
import { traceEntry } from '../../trace.ts';
import type { Decision } from '../decision.ts';
import {
  closeRevisionApprovals,
  closeStepApprovals,
  REMOVED_APPROVAL_COMMENT,
  REVISED_APPROVAL_COMMENT,
} from './approval-closing.ts';
import { settle } from './ending.ts';
import { blockUnreachable, startDue } from './flow.ts';
import { reopenIfFinished } from './reopen.ts';
import { failureKey, fingerprintOf } from './replans.ts';

/** The error of a step a revision removed. */
export const SUPERSEDED_CODE = 'E_SUPERSEDED';

/** Why a revision approval closed because the run's plan moved on from the revision it was proposed against. */
export const staleRevisionComment = (revision: number): string => `stale: the run is at revision ${revision} now`;

/** Statuses a removed step keeps: it ended with its output (or its skip), or it is being undone, or it is gone. */
const KEPT_WHEN_REMOVED: ReadonlySet<string> = new Set([
  'succeeded',
  'skipped',
  'superseded',
  'compensating',
  'compensated',
  'compensation_failed',
]);

/**
 * The record of a revision made from `held`: what later replans are told it tried, and what it answered (a failure's
 * `<stepId>#<generation>`, the budget replan's `~budget`, nothing for a person's replan without a failure).
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
    ...(held.request === undefined ? {} : { request: held.request }),
    ...(held.requestedBy === undefined ? {} : { requestedBy: held.requestedBy }),
    at,
  };
}

/**
 * The fingerprint of the failure the revision answers, read before the revision's own lineage is recorded; only a
 * step still failed in that generation has one (a gate a person's replan names, or a step moved since, has none).
 */
function answeredFingerprint(d: Decision, held: HeldRevision): string | undefined {
  if (held.failure === undefined) return undefined;
  const step = d.step(held.failure.stepId);
  if (step?.status !== 'failed' || step.generation !== held.failure.generation) return undefined;
  const fingerprint = fingerprintOf(d, step.stepId);
  return (d.run.replanFingerprints ?? []).includes(fingerprint) ? undefined : fingerprint;
}

/**
 * Makes `held` current (its base is the run's revision, checked by the caller): returns the new revision's number.
 * The run is STEP_MOVING afterwards (a finished one reopened), so the revision always lands.
 */
export function makeCurrent(d: Decision, held: HeldRevision): number {
  const previous = d.plan;
  if (previous === undefined) throw new Error('makeCurrent: the run has no plan to revise');
  reopenIfFinished(d, held.reason);
  const fingerprint = answeredFingerprint(d, held);
  const applied = applyReplan(previous.plan, held.plan, d.draft.steps, { scope: held.scope });
  const revision = applied.revision.revision;
  d.emit({
    type: 'PlanRevised',
    at: d.at,
    plan: applied.revision,
    reason: held.reason,
    record: replanRecord(held, revision, d.at),
    ...(fingerprint === undefined ? {} : { fingerprint }),
    ...(held.objective === undefined ? {} : { objective: held.objective }),
    ...(held.requestedBy === undefined ? {} : { requestedBy: held.requestedBy }),
  });
  applyToSteps(d, applied);
  // Proposed against a revision that is no more: nobody may make them current now.
  closeRevisionApprovals(d, staleRevisionComment(revision));
  startDue(d);
  settle(d);
  return revision;
}

/** The step records brought in line with the revision now current (`d.plan`). */
function applyToSteps(d: Decision, applied: AppliedReplan): void {
  const view = d.plan;
  if (view === undefined) return;
  const revision = view.plan.revision;
  const removedError: StepError = {
    code: SUPERSEDED_CODE,
    message: `superseded: plan revision ${revision} no longer has this step`,
    retryable: false,
  };
  for (const id of applied.removed) {
    const step = d.step(id);
    if (step === undefined || KEPT_WHEN_REMOVED.has(step.status)) continue;
    closeStepApprovals(d, id, step.generation, REMOVED_APPROVAL_COMMENT);
    d.emit({ type: 'StepSuperseded', at: d.at, stepId: id, generation: step.generation, error: removedError });
  }
  const fresh = new Set([...applied.changed, ...applied.added]);
  const order = (topologicalOrder(view.graph) ?? view.executable).filter((id) => fresh.has(id));
  for (const id of order) {
    const trace = [traceEntry('plan', planTraceText(id, view.byId.get(id), view.plan), d.at)];
    const step = d.step(id);
    // A step the run had before (one an earlier revision dropped, brought back) goes on from its last generation.
    if (step === undefined) {
      d.emit({ type: 'StepAdded', at: d.at, stepId: id, trace });
      continue;
    }
    closeStepApprovals(d, id, step.generation, REVISED_APPROVAL_COMMENT);
    d.emit({ type: 'StepMoved', at: d.at, stepId: id, generation: step.generation + 1, trace });
  }
  // A new generation behind an upstream step that failed for good (one the revision kept) would wait for ever.
  blockUnreachable(d, order);
}
