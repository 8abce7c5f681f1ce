/**
 * Approvals that no longer wait for anyone close with the step generation they belonged to, whoever ended it: a
 * decision later is answered by why it closed (engine/run/rules/approvals.ts reads the comment), and the approvals
 * inbox no longer offers it. One place closes them, for every way a generation ends.
 */
import type { Decision } from '../decision.ts';

/** Why an approval of a generation an invalidation superseded closed: the new generation asks again. */
export const SUPERSEDED_APPROVAL_COMMENT = 'superseded: the step was invalidated';
/** Why an approval of a generation a plan revision restarted closed. */
export const REVISED_APPROVAL_COMMENT = 'superseded: a plan revision restarted the step';
/** Why an approval of a step a plan revision removed closed: nothing asks again. */
export const REMOVED_APPROVAL_COMMENT = 'superseded: a plan revision removed the step';
/** The comments of approvals closed because their step moved on (410 E_APPROVAL_SUPERSEDED). */
export const SUPERSEDED_APPROVAL_COMMENTS: ReadonlySet<string> = new Set([
  SUPERSEDED_APPROVAL_COMMENT,
  REVISED_APPROVAL_COMMENT,
  REMOVED_APPROVAL_COMMENT,
]);
/** Why a revision approval closed with its run's cancellation (409 E_RUN_CANCELLED). */
export const CANCELLED_REVISION_COMMENT = 'closed: the run was cancelled';

/**
 * Closes the pending approvals of `stepId` up to `generation` (a later generation's own still waits), with
 * `comment`; `announced` publishes ApprovalDecided `expired` for them.
 */
export function closeStepApprovals(
  d: Decision,
  stepId: string,
  generation: number,
  comment: string,
  announced = false,
): void {
  for (const approval of d.draft.approvals.values()) {
    if (approval.stepId !== stepId || approval.status !== 'pending' || approval.generation > generation) continue;
    d.emit({ type: 'ApprovalClosed', at: d.at, approvalId: approval.approvalId, comment, announced });
  }
}

/** Closes every pending revision approval of the run (a cancel, a revision made meanwhile). */
export function closeRevisionApprovals(d: Decision, comment: string, announced = false): void {
  for (const approval of d.draft.approvals.values()) {
    if (approval.kind !== 'revision' || approval.status !== 'pending') continue;
    d.emit({ type: 'ApprovalClosed', at: d.at, approvalId: approval.approvalId, comment, announced });
  }
}
