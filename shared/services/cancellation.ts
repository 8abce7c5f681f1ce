/**
 * Cancelling a run, plain or with compensation, in one sequence: the run is marked (`cancelling`, and
 * `cancelCompensation` when the segments are undone first), then its open steps are closed and its revision approval
 * with them, then the run ends `cancelled` with RunFinished (or, with compensation, when the last compensation ends).
 * The mark comes first: no claim, no gate before a side effect and no invalidation lets anything start once it is
 * written (engine/statuses.ts, isBeingCancelled).
 *
 * Every part is safe to repeat, so a cancel that died after its mark (a store failure while closing, a client that
 * gave up) is finished by the next one: a repeated request, or the run's own machinery, since a claim, a retry or a
 * side effect the mark refuses finishes the cancel as its requester asked (`finishBegunCancel`: the request is on the
 * run with the mark).
 */

import { isBeingCancelled, LIVE_RUN_STATUSES, letsStepsMove, STEP_MOVING_RUN_STATUSES } from '../engine/statuses.ts';
import { decideTerminal } from '../engine/terminal.ts';
import { isRetryable } from '../errors.ts';
import type { RunRecord } from '../ports/store.ts';
import { advanceCompensation } from './compensation.ts';
import type { RunOutcome } from './coordinator-types.ts';
import type { Interpreter } from './interpreter.ts';
import { CLOSED_BY_CANCEL, closeRevisionApprovals } from './revision-approvals.ts';
import { answerWaiter, CANCELLED_ERROR, finishRun } from './run-end.ts';
import { closeOpenSteps } from './step-follow-ups.ts';
import { tryAgain, workAgainPolicy } from './write-again.ts';

/** What a cancellation was asked for: who asked (null in the record when unsaid) and whether it undoes first. */
export interface CancelRequest {
  readonly requestedBy?: string | undefined;
  readonly compensate?: boolean | undefined;
}

const outcome = (run: RunRecord): RunOutcome => ({ runId: run.runId, status: run.status, terminal: run.terminal });

/**
 * Cancels a live run: marked, open steps cancelled and their executions stopped, then the run cancelled with
 * RunFinished, then the waiter answered. Steps go first: a closed step can no longer be claimed, start an attempt,
 * pass the gate before a side effect or announce anything, so once RunFinished is written nothing of the run moves
 * or is published any more. (A decision on the steps made meanwhile by someone else, see settleRun, ends it cancelled
 * too.) The terminal evidence names who asked first (`requestedBy`; null when the caller did not say, a direct
 * coordinator call). A revision waiting for a person's approval is closed with the steps: a cancelled run takes no
 * revision.
 */
export async function cancelRun(ctx: Interpreter, runId: string, request: CancelRequest = {}): Promise<RunOutcome> {
  let run = await ctx.getRun(runId);
  if (run.status === 'complete' || run.status === 'failed') return outcome(run);
  if (request.compensate === true && letsStepsMove(run.status)) {
    const compensating = await cancelWithCompensation(ctx, run, request.requestedBy);
    if (compensating) return outcome(compensating);
    run = await ctx.getRun(runId);
  }
  if (run.status !== 'cancelled') {
    const steps = await ctx.deps.store.listSteps(runId);
    const decision = decideTerminal({
      cancelled: true,
      expected: steps.map((s) => s.stepId),
      steps: new Map(steps.map((s) => [s.stepId, s])),
    });
    if (decision.state === 'continue') return outcome(run);
    // Marked first: a generation started after the close below lists the steps (an invalidation, a late release)
    // reads the mark when it loads and is never claimed, so no attempt starts and nothing is announced after the end.
    const marked = (await markCancelling(ctx, run, request)) ?? run;
    await closeForCancel(ctx, runId);
    const cancelled = await finishRun(ctx, runId, decision, {
      evidence: { requestedBy: marked.cancelRequestedBy ?? request.requestedBy ?? null },
    });
    if (cancelled) {
      // A generation started between the two (a replan, an invalidation) is closed too.
      await closeOpenSteps(ctx, runId, CANCELLED_ERROR);
      return outcome(cancelled);
    }
    run = await ctx.getRun(runId);
    if (run.status !== 'cancelled') return outcome(run);
  }
  // A repeat (or a lost race with another cancel): whatever an earlier call did not get to is done now.
  await closeForCancel(ctx, runId);
  await answerWaiter(ctx, run);
  return outcome(run);
}

/**
 * A person's cancel (the API): tried in place while its failure may pass (a throttle, a timeout), as an invalidation
 * is, each try carrying on from what the tries before it wrote. One that still fails leaves the run marked: the next
 * claim, retry or side effect the mark refuses finishes it (finishBegunCancel), or the run's deadline does.
 */
export const requestCancel = (ctx: Interpreter, runId: string, request: CancelRequest = {}): Promise<RunOutcome> =>
  tryAgain(workAgainPolicy(isRetryable), () => cancelRun(ctx, runId, request));

/**
 * Finishes a cancellation that has begun (the run marked, not ended): the cancel is repeated as its requester asked.
 * For whoever finds such a run by chance (a claim, a retry or a side effect the mark refused): the cancel may have died
 * between its mark and its end, and nothing else would move the run before its deadline.
 */
export async function finishBegunCancel(ctx: Interpreter, runId: string): Promise<void> {
  const run = await ctx.deps.store.getRun(runId);
  if (!run || !isBeingCancelled(run)) return;
  await cancelRun(ctx, runId, recordedRequest(run));
}

/** The cancellation as it was asked for, from what its mark wrote on the run. */
export const recordedRequest = (run: RunRecord): CancelRequest => ({
  requestedBy: run.cancelRequestedBy,
  compensate: run.cancelCompensation === true,
});

/**
 * The mark, in one write: `cancelling`, `cancelCompensation` when the segments are undone first, and the first
 * requester (a repeat, or a second person, finds them on record). Nothing is written when the run already carries
 * what was asked. Returns the run as marked, or undefined when it was not live any more (`from`).
 */
async function markCancelling(
  ctx: Interpreter,
  run: RunRecord,
  request: CancelRequest,
  from: readonly RunRecord['status'][] = LIVE_RUN_STATUSES,
): Promise<RunRecord | undefined> {
  const compensate = request.compensate === true;
  if (run.cancelling === true && (!compensate || run.cancelCompensation === true)) return run;
  const requestedBy =
    run.cancelRequestedBy === undefined && request.requestedBy !== undefined
      ? { cancelRequestedBy: request.requestedBy }
      : {};
  return ctx.updateRun(run.runId, from, {
    cancelling: true,
    ...(compensate ? { cancelCompensation: true } : {}),
    ...requestedBy,
    updatedAt: ctx.now(),
  });
}

/** What every cancellation closes once the run is marked: the open steps, and a revision waiting for a person. */
async function closeForCancel(ctx: Interpreter, runId: string): Promise<void> {
  await closeOpenSteps(ctx, runId, CANCELLED_ERROR);
  await closeRevisionApprovals(ctx, runId, CLOSED_BY_CANCEL);
}

/**
 * A cancellation that undoes first (`compensate: true`): the run is marked as any cancellation is, its open steps are
 * closed, and its segments' finished mutating steps are compensated (services/compensation.ts) while the run stays
 * live; the last compensation's end settles it `cancelled`, or a compensation that fails pauses it for a person.
 * Returns the run while compensation goes on, undefined when there was nothing to compensate.
 */
async function cancelWithCompensation(
  ctx: Interpreter,
  run: RunRecord,
  requestedBy: string | undefined,
): Promise<RunRecord | undefined> {
  const marked = await markCancelling(ctx, run, { requestedBy, compensate: true }, STEP_MOVING_RUN_STATUSES);
  if (!marked) return undefined;
  await closeForCancel(ctx, run.runId);
  const progress = await advanceCompensation(ctx, run.runId);
  if (progress === 'none') return undefined;
  return ctx.getRun(run.runId);
}
