/**
 * Revisions that wait for a person: a revision that adds a mutating target the plan did not have is held in an
 * approval of kind `revision` (revision-proposals.ts), which a person approves (the revision is made current if the
 * run is still where it was proposed) or rejects (what it answered stands), or which expires at its deadline (the
 * shell's timer: RevisionWaitExpired). One waits at a time: once it is decided, every failure still standing
 * unanswered is asked about again, since a failure's answer that came while it waited was not made.
 *
 * Decisions are answered as the API answers them (409 decided or cancelled or stale, 410 expired, 422 an edit).
 */
import type { ApprovalRecord, HeldRevision } from '../../../ports/records/approvals.ts';
import { BUDGET_REPLAN_KEY, REVISION_EXPIRED_CODE, REVISION_REJECTED_CODE } from '../../budget-replan.ts';
import { deadlineByBudget } from '../../step-seconds.ts';
import type { DecideApproval, RevisionWaitExpired } from '../commands.ts';
import { type Decision, type Reply, refuse } from '../decision.ts';
import { CANCELLED_REVISION_COMMENT } from './approval-closing.ts';
import { replanDeclines, settle } from './ending.ts';
import { askReplan, declineReplan, failureKey } from './replans.ts';
import { makeCurrent, staleRevisionComment } from './revision-application.ts';
import {
  answer,
  ignored,
  isFinished,
  ownWindow,
  pendingRevision,
  staleness,
  takesNoRevision,
  type Why,
} from './revision-proposals.ts';

export { NO_TASK_TOKEN, pendingRevision, proposeRevision, replanRefusal } from './revision-proposals.ts';

/** Why a held revision closed at its deadline. */
export const REVISION_EXPIRED_COMMENT = 'no decision before the deadline';
/** The same when the deadline was the run's seconds budget running out (engine/step-seconds.ts approvalWindow). */
export const REVISION_BUDGET_COMMENT = "closed: no decision before the run's budget.maxSeconds ran out";
/** Why a held revision closed when it was approved: the steps' statuses no longer let it keep to its scope. */
export const UNFIT_REVISION_COMMENT = 'stale: the run moved on while it waited';

/**
 * A person's decision on a held revision (DecideApproval on an approval of kind `revision`), answered as the API
 * answers it: approve makes it current if the run is still where it was proposed, reject drops it.
 */
export function decideRevision(d: Decision, command: DecideApproval, approval: ApprovalRecord): void {
  const held = approval.heldRevision;
  if (approval.status !== 'pending' || held === undefined) {
    d.reply = answeredAlready(approval);
    return;
  }
  if (command.decision === 'edit' || command.output !== undefined) {
    d.reply = refuse(422, 'E_INVALID_OUTPUT', 'a plan revision is approved or rejected, never edited');
    return;
  }
  if (Date.parse(d.at) > Date.parse(approval.deadline)) {
    expire(d, approval, held);
    d.reply = refuse(410, 'E_APPROVAL_EXPIRED', 'the approval expired before a decision was made');
    return;
  }
  const close = (comment: string) =>
    d.emit({ type: 'ApprovalClosed', at: d.at, approvalId: approval.approvalId, comment, announced: false });
  if (takesNoRevision(d.run)) {
    close(CANCELLED_REVISION_COMMENT);
    d.reply = refuse(
      409,
      'E_RUN_CANCELLED',
      `run ${d.run.runId} was cancelled: revision ${approval.generation} is not made`,
    );
    return;
  }
  // A rejection only needs the run to be where the revision was proposed; an approval needs it to fit as well.
  const stale = command.decision === 'approve' || held.baseRevision !== d.run.revision ? staleness(d, held) : undefined;
  if (stale !== undefined) {
    // The failure it answered waited with it: it is asked about again, against the run as it is now.
    close(held.baseRevision === d.run.revision ? UNFIT_REVISION_COMMENT : staleRevisionComment(d.run.revision));
    d.reply = stale;
    askOutstanding(d);
    return;
  }
  const approved = command.decision === 'approve';
  d.emit({
    type: 'ApprovalDecided',
    at: d.at,
    approvalId: approval.approvalId,
    status: approved ? 'approved' : 'rejected',
    by: command.by,
    ...(command.comment === undefined ? {} : { comment: command.comment }),
    announced: !isFinished(d),
  });
  if (approved) {
    const revision = makeCurrent(d, held);
    d.reply = answer({ approvalId: approval.approvalId, status: 'approved', revision });
  } else {
    const adding = (held.targets ?? []).join(', ');
    rejectHeld(d, held, {
      code: REVISION_REJECTED_CODE,
      message: `revision ${approval.generation} (adding ${adding}) was rejected by ${command.by}: revision ${held.baseRevision} stays`,
    });
    d.reply = answer({ approvalId: approval.approvalId, status: 'rejected' });
  }
  askOutstanding(d);
}

/** The answer to a decision on a revision approval that no longer waits: why it does not. */
function answeredAlready(approval: ApprovalRecord): Reply {
  if (approval.comment === CANCELLED_REVISION_COMMENT)
    return refuse(409, 'E_RUN_CANCELLED', 'the run was cancelled: its revision is not made');
  if (approval.status === 'expired')
    return refuse(410, 'E_APPROVAL_EXPIRED', 'the approval expired before a decision was made');
  return refuse(409, 'E_ALREADY_DECIDED', `the approval was already decided (${approval.status})`);
}

/** The held revision's deadline passed (the shell's timer): undecided, it closes and its revision is dropped. */
export function revisionWaitExpired(d: Decision, command: RevisionWaitExpired): void {
  const approval = d.draft.approvals.get(command.approvalId);
  const held = approval?.heldRevision;
  if (approval?.kind !== 'revision' || approval.status !== 'pending' || held === undefined) {
    d.reply = ignored('decided');
    return;
  }
  expire(d, approval, held);
}

/** Closes an undecided held revision at its deadline, drops it (E_APPROVAL_EXPIRED), and asks about what stands. */
function expire(d: Decision, approval: ApprovalRecord, held: HeldRevision): void {
  // A deadline the run's seconds brought forward says so: the run then ends budget_exhausted as it is looked at.
  const byBudget =
    held.trigger !== 'budget' && held.plan.budget?.maxSeconds !== undefined && deadlineByBudget(approval, ownWindow(d));
  d.emit({
    type: 'ApprovalClosed',
    at: d.at,
    approvalId: approval.approvalId,
    comment: byBudget ? REVISION_BUDGET_COMMENT : REVISION_EXPIRED_COMMENT,
    announced: !isFinished(d),
  });
  rejectHeld(d, held, {
    code: REVISION_EXPIRED_CODE,
    message: `revision ${approval.generation} (adding ${(held.targets ?? []).join(', ')}) had no decision before its deadline (${approval.deadline}): revision ${held.baseRevision} stays`,
  });
  askOutstanding(d);
}

/**
 * A held revision nobody let run: the previous revision stays, and what it answered stands with `why`: the budget
 * replan (the run ends `budget_exhausted`), or the failure if it is still failed in that generation.
 */
function rejectHeld(d: Decision, held: HeldRevision, why: Why): void {
  if (held.trigger === 'budget') declineReplan(d, { failure: BUDGET_REPLAN_KEY, ...why });
  const failure = held.failure;
  if (failure !== undefined) {
    const step = d.step(failure.stepId);
    if (step?.status === 'failed' && step.generation === failure.generation)
      declineReplan(d, { failure: failureKey(failure), ...why });
  }
  settle(d);
}

/**
 * Once no revision waits for a person any more, every failure of the current revision that stands unanswered is
 * asked about again (a failure's answer that came while the revision was held was not made): the replanner answers
 * it against the run as it is now, or the limits pause the run.
 */
export function askOutstanding(d: Decision): void {
  if (d.plan === undefined || pendingRevision(d.draft.approvals) !== undefined) return;
  const declined = new Set(replanDeclines(d).map((x) => x.failure));
  const answered = new Set((d.run.replanLog ?? []).flatMap((r) => (r.failure === undefined ? [] : [r.failure])));
  for (const id of d.plan.executable) {
    const step = d.step(id);
    if (step?.status !== 'failed') continue;
    const key = failureKey(step);
    if (!declined.has(key) && !answered.has(key)) askReplan(d, id, true);
  }
}
