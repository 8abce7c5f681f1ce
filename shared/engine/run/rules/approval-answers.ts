/**
 * What a person is answered when their decision names an approval that no longer waits for one: the same decision
 * sent again by whoever made it is taken as the repeat it is; anything else is refused by why the approval stopped
 * waiting (its close comment, see approval-closing.ts) or by the decision it already holds. Kept apart from the rules
 * that take decisions so that every kind of approval (a gate, a review, a held revision) answers alike.
 */

import type { ApprovalRecord } from '../../../ports/records/approvals.ts';
import { recordedReply } from '../../approval-request.ts';
import type { DecideApproval } from '../commands.ts';
import { type Reply, refuse } from '../decision.ts';
import {
  CANCELLED_REVISION_COMMENT,
  REMOVED_APPROVAL_COMMENT,
  SUPERSEDED_APPROVAL_COMMENTS,
} from './approval-closing.ts';

/** The status a decision leaves its approval in. */
export const DECIDED_STATUS = { approve: 'approved', reject: 'rejected', edit: 'edited' } as const;

/** A rejection carries no output: whatever came with it is not kept. */
export const decidedOutput = (command: Pick<DecideApproval, 'decision' | 'output'>): unknown =>
  command.decision === 'reject' ? undefined : command.output;

/** Whether the approval records exactly this decision by this person (a repeat of the request that made it). */
export function isSameDecision(approval: ApprovalRecord, command: DecideApproval): boolean {
  return (
    approval.status === DECIDED_STATUS[command.decision] &&
    approval.decidedBy === command.by &&
    approval.comment === command.comment &&
    JSON.stringify(approval.output) === JSON.stringify(decidedOutput(command))
  );
}

/**
 * The refusal of a decision on an approval that is no longer pending: closed because its step moved on (410
 * superseded: the new generation asks again, or nothing does), closed with its run's cancellation (a revision: 409),
 * closed for lack of a decision in time or of anything waiting (410 expired), or decided already (409, with the
 * recorded decision).
 */
export function answerClosed(approval: ApprovalRecord): Reply {
  if (approval.status !== 'expired')
    return refuse(409, 'E_ALREADY_DECIDED', `the approval was already decided (${approval.status})`, {
      decision: recordedReply(approval) ?? null,
      decidedAt: approval.decidedAt ?? null,
    });
  const comment = approval.comment ?? '';
  if (approval.kind === 'revision' && comment === CANCELLED_REVISION_COMMENT)
    return refuse(409, 'E_RUN_CANCELLED', 'the run was cancelled: its revision is not made');
  if (comment === REMOVED_APPROVAL_COMMENT)
    return refuse(410, 'E_APPROVAL_SUPERSEDED', 'a plan revision removed the step: nothing asks again');
  if (SUPERSEDED_APPROVAL_COMMENTS.has(comment))
    return refuse(410, 'E_APPROVAL_SUPERSEDED', 'the step started a new generation: it asks again');
  return refuse(410, 'E_APPROVAL_EXPIRED', 'the approval expired before a decision was made');
}
