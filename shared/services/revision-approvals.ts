/**
 * Revisions that wait for a person (issue 12 §5): a revision that brings in a mutating target the previous revision
 * did not have (engine/replan/authority.ts) is not made current by the replanner. It is held in an approval of kind
 * `revision` (GET /approvals, the console's approvals page), whose decision (POST /approvals/{id}) makes it current
 * (approve) or drops it (reject: the previous revision stays, and the approval says so).
 *
 * One revision at a time: while a revision waits, no other is made (a replan finds the waiting one and waits for
 * it too), so a person's request racing a step failure never gives two current revisions. A held revision is made
 * current only if the run is still at the revision it was proposed against; else its approval is closed as stale.
 *
 * Nothing is announced for a run that has finished (its RunFinished is its last word until it reopens): the
 * approval is then written and decided unannounced, and an approved revision reopens the run (RunReopened first).
 *
 * A revision approval has the deadline of a step's approval without a timeout of its own, kept by the same timer
 * (revision-wait.ts): nobody deciding by then rejects the revision (E_APPROVAL_EXPIRED).
 *
 * A cancellation closes the run's waiting revision approvals (closeRevisionApprovals, status `expired` with the
 * reason): a cancelled run, or one cancelling with compensation, takes no revision, and a decision that comes later
 * is refused with E_RUN_CANCELLED.
 */
import { REVISION_REJECTED_CODE } from '../engine/budget-replan.ts';
import { addedMutatingTargets, revisionQuestion } from '../engine/replan/authority.ts';
import { isBeingCancelled } from '../engine/statuses.ts';
import { approvalWindow } from '../engine/step-seconds.ts';
import { ConflictError, isConflictError } from '../errors.ts';
import { REVISION_APPROVAL_STEP } from '../events/bus-rules.ts';
import type { Plan } from '../plan/schema.ts';
import { forEachInPool } from '../pool.ts';
import { stepExecutionInput, stepExecutionName } from '../ports/executions.ts';
import type { ApprovalRecord, HeldRevision, RunRecord } from '../ports/store.ts';
import { event, type Interpreter } from './interpreter.ts';
import { declineBudgetReplan, declineFailure } from './replanner-support.ts';
import { isReopenable } from './run-reopen.ts';
import { approvalTimeoutSeconds } from './step/step-records.ts';

/**
 * The task token of a revision approval when it is written: none yet. Its wait (revision-wait.ts) gives it the token
 * it waits on, so that a decision ends that wait at once; the decision itself is applied directly, not by the wait.
 */
export const NO_TASK_TOKEN = '-';
export { REVISION_APPROVAL_STEP };

/** Held revisions of one revision number after earlier ones were decided; far more than a run will see. */
const MAX_HOLDS_PER_REVISION = 100;

export const isRevisionApproval = (approval: Pick<ApprovalRecord, 'kind'>): boolean => approval.kind === 'revision';

/**
 * The wait of the n-th held proposal of revision r: an execution of the step machine for the synthetic step
 * `~revision~<r>`, generation n, whose task-token wait ends at the approval's deadline (services/revision-wait.ts),
 * the same timer a step's approval has. Its id and the approval's id follow from each other.
 */
export interface RevisionWaitRef {
  readonly runId: string;
  readonly stepId: string;
  readonly generation: number;
}
export const isRevisionWaitStepId = (stepId: string): boolean => stepId.startsWith(REVISION_APPROVAL_STEP);
export const revisionApprovalId = (ref: RevisionWaitRef): string =>
  `${ref.runId}.revision.r${ref.stepId.slice(REVISION_APPROVAL_STEP.length)}.${ref.generation}`;

/** What a released wait is answered: RunStep then finds it done (revisionWaitNext), whatever the decision was. */
export const RELEASED_WAIT = { decision: 'reject', by: 'cairn' } as const;

/**
 * Ends the wait of a revision approval that no longer waits (decided, closed): its task token is answered, so no
 * execution stays open until the deadline. A token already answered or timed out is no error.
 */
export async function releaseRevisionWait(
  ctx: Interpreter,
  approval: Pick<ApprovalRecord, 'taskToken'>,
): Promise<void> {
  if (approval.taskToken === NO_TASK_TOKEN) return;
  await releaseToken(ctx, approval.taskToken);
}

export async function releaseToken(ctx: Interpreter, taskToken: string): Promise<void> {
  try {
    await ctx.deps.executions.sendTaskSuccess(taskToken, RELEASED_WAIT);
  } catch (error) {
    // Closed already (answered by a racing release, or timed out): the wait is over, which is all this wants.
    if (isConflictError(error)) return;
    // Otherwise the wait still ends at the deadline, and then finds the approval decided and changes nothing.
    console.error('cairn coordinator: releasing a revision approval wait failed', { error });
  }
}

/** Starts (once: the execution's name is deterministic) the timer of a revision approval's deadline. */
async function startRevisionWait(ctx: Interpreter, ref: RevisionWaitRef): Promise<void> {
  await ctx.deps.executions.start('step', stepExecutionName(ref.runId, ref.stepId, ref.generation), {
    ...stepExecutionInput(ref),
  });
}

/**
 * A held revision that no person approved: the previous revision stays, and a failure the revision answered stands
 * with `why` (the run settles as for any failure the replanner declined). For a rejection and an expiry alike.
 */
export async function rejectHeldRevision(
  ctx: Interpreter,
  runId: string,
  held: HeldRevision,
  why: { code: string; message: string },
): Promise<void> {
  // A budget replan's revision not approved: no budget revision, and the run ends budget_exhausted.
  if (held.trigger === 'budget') await declineBudgetReplan(ctx, runId, why);
  if (held.failure === undefined) return;
  const failed = await ctx.deps.store.getStep(runId, held.failure.stepId);
  if (failed?.status === 'failed' && failed.generation === held.failure.generation)
    await declineFailure(ctx, failed, why);
}

/** A person's decision on a revision approval, as the API hands it over. */
export interface RevisionDecision {
  readonly approvalId: string;
  readonly runId: string;
  readonly decision: 'approve' | 'reject';
  readonly by?: string;
  readonly comment?: string;
}

/** What the replanner does with an approved revision (a rejection is rejectHeldRevision's). */
export interface RevisionActions {
  /** Makes the held revision current; 'stale' when the run's state no longer fits it. */
  approve(run: RunRecord, previous: Plan, held: HeldRevision): Promise<{ revision: number } | 'stale'>;
}

const stale = (runId: string, message: string) =>
  new ConflictError(message, { context: { runId, code: 'E_REVISION_STALE' } });

/** The comment a revision approval closed by its run's cancellation carries. */
export const CLOSED_BY_CANCEL = 'closed: the run was cancelled';

/** Whether the run is cancelled or being cancelled (marked by the cancel, or compensating first): it takes no revision. */
export const isCancelling = (run: Pick<RunRecord, 'status' | 'cancelCompensation' | 'cancelling'>): boolean =>
  run.status === 'cancelled' || isBeingCancelled(run);

/** The refusal of a revision (held, decided or proposed) for a cancelled run; one code, whoever asks. */
export const runCancelled = (runId: string, message = `run ${runId} is cancelled: it takes no revision`) =>
  new ConflictError(message, { context: { runId, code: 'E_RUN_CANCELLED' } });

/**
 * Closes the run's waiting revision approvals, unannounced (a cancelled run's RunFinished is its last word), so that
 * none stays pending in GET /approvals and none can be decided any more. Repeatable: a closed one is left as it is.
 */
export async function closeRevisionApprovals(ctx: Interpreter, runId: string, comment: string): Promise<void> {
  const { store } = ctx.deps;
  const decidedAt = ctx.now();
  const pending = (await store.listRunApprovals(runId)).filter((a) => isRevisionApproval(a) && a.status === 'pending');
  await forEachInPool(pending, async (a) => {
    const closed = await store.decideApproval(a.approvalId, { status: 'expired', decidedAt, comment });
    if (closed) await releaseRevisionWait(ctx, closed);
  });
}

/** The run's revision approval still waiting, if any. */
export async function pendingRevisionApproval(ctx: Interpreter, runId: string): Promise<ApprovalRecord | undefined> {
  const approvals = await ctx.deps.store.listRunApprovals(runId);
  return approvals.find((a) => isRevisionApproval(a) && a.status === 'pending');
}

/**
 * Holds `held` for a person's approval when it adds a mutating target, or when another revision of the run already
 * waits (that one is returned: revisions are made one at a time). Undefined: nothing to hold, make it current.
 */
export async function holdRevision(
  ctx: Interpreter,
  run: RunRecord,
  previous: Plan,
  held: HeldRevision,
): Promise<{ readonly approvalId: string } | undefined> {
  const { store, catalog, config } = ctx.deps;
  if (isCancelling(run)) throw runCancelled(run.runId);
  const waiting = await pendingRevisionApproval(ctx, run.runId);
  // A repeat of a hold whose wait did not start (the start failed) starts it now.
  if (waiting) return started(ctx, waiting);
  const targets = addedMutatingTargets(previous, held.plan, (t) => catalog.get(t)?.sideEffect);
  if (targets.length === 0) return undefined;
  const revision = held.plan.revision;
  const now = ctx.now();
  // The same deadline as a step's approval that names no timeout of its own (and the same timer: startRevisionWait),
  // or the run's seconds left when they end first; not for the budget's own revision, asked once they are spent.
  const own = approvalTimeoutSeconds(undefined, config);
  const window =
    held.trigger === 'budget'
      ? { seconds: own }
      : approvalWindow(own, { budget: previous.budget, createdAt: run.createdAt }, now);
  const deadline = new Date(ctx.deps.clock().getTime() + window.seconds * 1000).toISOString();
  const stepId = `${REVISION_APPROVAL_STEP}${revision}`;
  // A finished run says nothing until it reopens; an open one announces the request with the approval's write.
  const announce = (approvalId: string) =>
    isReopenable(run)
      ? undefined
      : ctx.announce(run.runId, [
          event('ApprovalRequested', {
            runId: run.runId,
            stepId,
            generation: revision,
            approvalId,
            kind: 'revision',
            deadline,
          }),
        ]);
  for (let n = 1; n <= MAX_HOLDS_PER_REVISION; n++) {
    const approvalId = revisionApprovalId({ runId: run.runId, stepId, generation: n });
    const existing = await store.getApproval(approvalId);
    if (existing?.status === 'pending') return started(ctx, existing);
    if (existing) continue; // decided earlier (rejected, stale): this proposal is another one
    const record: ApprovalRecord = {
      approvalId,
      runId: run.runId,
      stepId,
      generation: revision,
      kind: 'revision',
      status: 'pending',
      question: revisionQuestion(revision, targets, held.reason),
      input: {
        revision,
        targets,
        reason: held.reason,
        ...(held.objective === undefined ? {} : { objective: held.objective }),
      },
      heldRevision: { ...held, targets },
      taskToken: NO_TASK_TOKEN,
      createdAt: now,
      deadline,
    };
    if (await store.putApproval(record, announce(approvalId))) {
      // A cancellation that came between the read of the run and this write closed what it found, not this one.
      if (isCancelling(await ctx.getRun(run.runId))) {
        await closeRevisionApprovals(ctx, run.runId, CLOSED_BY_CANCEL);
        throw runCancelled(run.runId);
      }
      return started(ctx, record);
    }
    n -= 1; // written meanwhile by a concurrent proposal: look at it again
  }
  throw new ConflictError(`run ${run.runId}: too many held proposals of revision ${revision}`, {
    context: { runId: run.runId, code: 'E_REVISION_STALE' },
  });
}

/** The approval's deadline timer started; the approval's id. */
async function started(
  ctx: Interpreter,
  approval: Pick<ApprovalRecord, 'approvalId' | 'runId' | 'stepId'>,
): Promise<{ readonly approvalId: string }> {
  const n = Number(approval.approvalId.slice(approval.approvalId.lastIndexOf('.') + 1));
  await startRevisionWait(ctx, { runId: approval.runId, stepId: approval.stepId, generation: n });
  return { approvalId: approval.approvalId };
}

/**
 * Records a person's decision on a revision approval and acts on it. ConflictError E_ALREADY_DECIDED (another
 * decision won), E_RUN_CANCELLED (the run was cancelled) or E_REVISION_STALE (the run moved on): in the last two
 * the approval is closed and nothing changes.
 */
export async function settleRevisionApproval(
  ctx: Interpreter,
  decision: RevisionDecision,
  actions: RevisionActions,
): Promise<{ revision?: number }> {
  const { store } = ctx.deps;
  const approval = await store.getApproval(decision.approvalId);
  const held = approval?.heldRevision;
  if (!approval || !held || approval.status !== 'pending')
    throw new ConflictError(`approval ${decision.approvalId} was already decided (${approval?.status ?? 'unknown'})`, {
      context: { runId: decision.runId, code: 'E_ALREADY_DECIDED' },
    });
  const run = await ctx.getRun(approval.runId);
  const decidedAt = ctx.now();
  const close = async (comment: string) => {
    const closed = await store.decideApproval(approval.approvalId, { status: 'expired', decidedAt, comment });
    if (closed) await releaseRevisionWait(ctx, closed);
  };
  if (isCancelling(run)) {
    await close(CLOSED_BY_CANCEL);
    throw runCancelled(run.runId, `run ${run.runId} was cancelled: revision ${approval.generation} is not made`);
  }
  if (run.revision !== held.baseRevision) {
    const why = `the run is at revision ${run.revision} now`;
    await close(`stale: ${why}`);
    throw stale(
      run.runId,
      `revision ${approval.generation} was proposed against revision ${held.baseRevision}: ${why}`,
    );
  }
  const decided = await store.decideApproval(
    approval.approvalId,
    {
      status: decision.decision === 'approve' ? 'approved' : 'rejected',
      decidedAt,
      ...(decision.by === undefined ? {} : { decidedBy: decision.by }),
      ...(decision.comment === undefined ? {} : { comment: decision.comment }),
    },
    // Announced only while the run is open; an approved revision of a finished run announces RunReopened instead.
    isReopenable(run)
      ? undefined
      : ctx.announce(run.runId, [
          event('ApprovalDecided', {
            runId: run.runId,
            stepId: approval.stepId,
            generation: approval.generation,
            approvalId: approval.approvalId,
            decision: decision.decision,
            ...(decision.by === undefined ? {} : { by: decision.by }),
          }),
        ]),
  );
  if (!decided)
    throw new ConflictError(`approval ${decision.approvalId} was already decided`, {
      context: { runId: run.runId, code: 'E_ALREADY_DECIDED' },
    });
  // The decided record carries the token its wait holds, if the wait got that far; else the wait finds the
  // approval decided when it asks to hold it (requestRevisionWait) and ends itself.
  await releaseRevisionWait(ctx, decided);
  if (decision.decision === 'reject') {
    await rejectHeldRevision(ctx, run.runId, held, {
      code: REVISION_REJECTED_CODE,
      message: `revision ${approval.generation} (adding ${(held.targets ?? []).join(', ')}) was rejected${
        decision.by === undefined ? '' : ` by ${decision.by}`
      }: revision ${held.baseRevision} stays`,
    });
    return {};
  }
  const previous = (await ctx.plan(run)).plan;
  const made = await actions.approve(run, previous, held);
  if (made === 'stale')
    throw stale(run.runId, `revision ${approval.generation} no longer fits the run: it moved on while it waited`);
  return made;
}
