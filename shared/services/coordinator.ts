/**
 * The coordinator: the run machine's decision points, the step machine's waits for people and its record of a
 * crashed attempt, plus cancellation for the API. Each action is idempotent under a retry, a crash or a duplicate invocation: state
 * changes are single-item conditional writes through the Store port, and a lost condition means someone else did
 * it, so the action re-reads and carries on with the follow-ups (or does nothing).
 *
 * Split by concern: coordinator-run.ts (run actions), cancellation.ts (cancel), coordinator-approval.ts (approvals and reviews),
 * step-follow-ups.ts (what follows a step transition), run-end.ts (how a run ends); a step's own path is in step/.
 */

import { isReplanWatchStepId } from '../engine/replan/watch.ts';
import { isTransientPlatformError } from '../errors.ts';
import { requestCancel } from './cancellation.ts';
import { actOnCompensation } from './compensation-actions.ts';
import { expireApproval, requestApproval } from './coordinator-approval.ts';
import { awaitRun, failRun, finalizeRun, rejectPlan, startRun } from './coordinator-run.ts';
import type { Coordinator, CoordinatorDeps } from './coordinator-types.ts';
import { createInterpreter } from './interpreter.ts';
import { expireReplanWatch, requestReplanWatch } from './replan-watch.ts';
import { isRevisionWaitStepId } from './revision-approvals.ts';
import { expireRevisionWait, requestRevisionWait } from './revision-wait.ts';
import { recordFailedAttempt } from './step/failed-attempt.ts';
import { tryAgain, workAgainPolicy } from './write-again.ts';

export type * from './coordinator-types.ts';

const START_POLICY = workAgainPolicy(isTransientPlatformError);

export function createCoordinator(deps: CoordinatorDeps): Coordinator {
  const ctx = createInterpreter(deps);
  return {
    rejectPlan: (request) => rejectPlan(ctx, request),
    failRun: (request) => failRun(ctx, request),
    // Tried in place as well as by the Task's Retry: past both, the run machine fails the run (FailRun) though its
    // steps may be running, and every part of StartRun is safe to repeat.
    startRun: (request) => tryAgain(START_POLICY, () => startRun(ctx, request)),
    awaitRun: (request) => awaitRun(ctx, request),
    finalizeRun: (request) => finalizeRun(ctx, request),
    recordFailure: (request) => recordFailedAttempt(ctx, request, request.attempt, request.error),
    // A revision approval's deadline keeps a wait of its own (revision-wait.ts), a replan watch its time
    // (replan-watch.ts); a step's approval, the step's.
    requestApproval: (request) => {
      if (isReplanWatchStepId(request.stepId) || request.kind === 'replan') return requestReplanWatch();
      if (isRevisionWaitStepId(request.stepId)) return requestRevisionWait(ctx, request);
      return requestApproval(ctx, { ...request, kind: request.kind });
    },
    expireApproval: (request) => {
      if (isReplanWatchStepId(request.stepId)) return expireReplanWatch(ctx, request);
      if (isRevisionWaitStepId(request.stepId)) return expireRevisionWait(ctx, request);
      return expireApproval(ctx, request);
    },
    cancelRun: (runId, options) => requestCancel(ctx, runId, options),
    actOnCompensation: (request) => actOnCompensation(ctx, request),
  };
}
