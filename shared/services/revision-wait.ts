/**
 * The deadline of a revision approval (revision-approvals.ts), kept by the same timer as a step's approval: an
 * execution of the step machine for the synthetic step `~revision~<r>` (generation n: the n-th held proposal of
 * revision r), started when the approval is written. RunStep answers it `await` (kind `revision`) for the time left
 * until the approval's deadline; AwaitDecision's task-token wait then times out there, and DecisionExpired expires
 * the approval here: the revision is rejected as a person's rejection would (rejectHeldRevision), with
 * E_APPROVAL_EXPIRED, and the run goes on or ends as it does then. The expiry's ApprovalDecided takes the replanner
 * (RevisionExpiredToReplanner) to the failures that waited with the revision, as a person's decision does.
 *
 * The wait gives the approval its task token (Store.holdApprovalToken) while the approval is pending, so that a
 * decision, or the approval's closing, answers it at once (releaseRevisionWait) and no execution lingers until the
 * deadline. Decided before the token is held: the wait ends itself here.
 */
import { deadlineByBudget } from '../engine/step-seconds.ts';
import type { ApprovalRecord, HeldRevision } from '../ports/store.ts';
import { APPROVAL_EXPIRED_CODE } from './coordinator-approval.ts';
import type { ApprovalRequested, ExpireResult, RunStepRequest, StepNext, StepRef } from './coordinator-types.ts';
import { event, type Interpreter } from './interpreter.ts';
import {
  isCancelling,
  isRevisionApproval,
  rejectHeldRevision,
  releaseToken,
  revisionApprovalId,
} from './revision-approvals.ts';
import { isReopenable } from './run-reopen.ts';
import { approvalTimeoutSeconds } from './step/step-records.ts';

/** The comment of a revision approval that nobody decided before its deadline. */
export const REVISION_EXPIRED_COMMENT = 'no decision before the deadline';
/** The same when the deadline was the run's seconds budget running out (engine/step-seconds.ts approvalWindow). */
export const REVISION_BUDGET_COMMENT = "closed: no decision before the run's budget.maxSeconds ran out";

const DONE: StepNext = { action: 'done', attempt: 1 };

async function revisionApproval(ctx: Interpreter, ref: StepRef): Promise<ApprovalRecord | undefined> {
  const approval = await ctx.deps.store.getApproval(revisionApprovalId(ref));
  return approval !== undefined && isRevisionApproval(approval) ? approval : undefined;
}

/** RunStep's answer for a revision approval's wait: the time left until its deadline, or done once it is decided. */
export async function revisionWaitNext(ctx: Interpreter, request: RunStepRequest): Promise<StepNext> {
  // Back from the wait: the approval was decided meanwhile, or the wait was released (see requestRevisionWait).
  if (request.previous !== null) return DONE;
  const approval = await revisionApproval(ctx, request);
  if (approval?.status !== 'pending') return DONE;
  const left = Date.parse(approval.deadline) - ctx.deps.clock().getTime();
  // Step Functions takes a positive whole number of seconds; a deadline already passed expires at once.
  return { action: 'await', attempt: 1, kind: 'revision', timeoutSeconds: Math.max(1, Math.ceil(left / 1000)) };
}

/** AwaitDecision's task: the wait holds while the approval is pending and its run takes revisions, else ends. */
export async function requestRevisionWait(
  ctx: Interpreter,
  request: StepRef & { readonly taskToken: string },
): Promise<ApprovalRequested> {
  const approval = await revisionApproval(ctx, request);
  const run = approval && (await ctx.deps.store.getRun(approval.runId));
  if (
    approval?.status === 'pending' &&
    run !== undefined &&
    !isCancelling(run) &&
    (approval.taskToken === request.taskToken ||
      (await ctx.deps.store.holdApprovalToken(approval.approvalId, request.taskToken)))
  )
    return { approvalId: approval.approvalId };
  await releaseToken(ctx, request.taskToken);
  return {};
}

/**
 * DecisionExpired of a revision approval's wait: the approval expires (announced while its run is open) and its
 * revision is rejected. Repeatable: a repeat finds the approval expired by this and finishes the rejection.
 */
export async function expireRevisionWait(ctx: Interpreter, ref: StepRef): Promise<ExpireResult> {
  const { store } = ctx.deps;
  const approval = await revisionApproval(ctx, ref);
  const held = approval?.heldRevision;
  if (!approval || !held) return { outcome: 'noop' };
  const expiredHere =
    approval.status === 'expired' &&
    (approval.comment === REVISION_EXPIRED_COMMENT || approval.comment === REVISION_BUDGET_COMMENT);
  if (approval.status !== 'pending' && !expiredHere) return { outcome: 'noop' };
  const run = await ctx.getRun(approval.runId);
  if (approval.status === 'pending') {
    const decided = event('ApprovalDecided', {
      runId: run.runId,
      stepId: approval.stepId,
      generation: approval.generation,
      approvalId: approval.approvalId,
      decision: 'expired',
    });
    // A deadline the run's seconds brought forward says so; the run then ends budget_exhausted as it settles.
    const byBudget =
      held.trigger !== 'budget' &&
      held.plan.budget?.maxSeconds !== undefined &&
      deadlineByBudget(approval, approvalTimeoutSeconds(undefined, ctx.deps.config));
    const expired = await store.decideApproval(
      approval.approvalId,
      {
        status: 'expired',
        decidedAt: ctx.now(),
        comment: byBudget ? REVISION_BUDGET_COMMENT : REVISION_EXPIRED_COMMENT,
      },
      // A finished run says nothing until it reopens (revision-approvals.ts).
      isReopenable(run) ? undefined : ctx.announce(run.runId, [decided]),
    );
    // A person's decision won the race: theirs stands.
    if (!expired) return { outcome: 'noop' };
  }
  await rejectHeldRevision(ctx, run.runId, held, revisionExpiry(approval, held));
  return { outcome: 'failed' };
}

/** Why a revision that nobody approved in time is not made (one code: an approval's expiry). */
export const revisionExpiry = (approval: Pick<ApprovalRecord, 'generation' | 'deadline'>, held: HeldRevision) => ({
  code: APPROVAL_EXPIRED_CODE,
  message: `revision ${approval.generation} (adding ${(held.targets ?? []).join(', ')}) had no decision before its deadline (${approval.deadline}): revision ${held.baseRevision} stays`,
});
