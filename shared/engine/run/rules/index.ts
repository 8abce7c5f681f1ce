/** Which rule answers which command. */
import type { RunCommand } from '../commands.ts';
import type { Decision } from '../decision.ts';
import { awaitDecision, decideApproval, decisionTimedOut, gateFailed } from './approvals.ts';
import { attemptEnded, executionFailed } from './attempts.ts';
import { raiseBudget } from './budget-raise.ts';
import { cancelRun } from './cancel.ts';
import { actOnCompensation, compensationEnded } from './compensation-actions.ts';
import { invalidate } from './invalidate.ts';
import { admitRun, awaitRun, finalizeRun, rejectPlan, startRun } from './lifecycle.ts';
import { declineReplan, replanWatchExpired } from './replans.ts';
import { proposeRevision } from './revision-proposals.ts';
import { revisionWaitExpired } from './revisions.ts';
import { retryStarts, startsThrottled } from './start-pacing.ts';

export function activeDecider(d: Decision, command: RunCommand): void {
  switch (command.kind) {
    case 'AdmitRun':
      admitRun(d);
      return;
    case 'StartRun':
      startRun(d, command);
      return;
    case 'RejectPlan':
      rejectPlan(d, command);
      return;
    case 'AwaitRun':
      awaitRun(d, command);
      return;
    case 'FinalizeRun':
      finalizeRun(d, command);
      return;
    case 'AttemptEnded':
      attemptEnded(d, command);
      return;
    case 'ExecutionFailed':
      if (d.step(command.stepId)?.status === 'awaiting_approval') gateFailed(d, command);
      else executionFailed(d, command);
      return;
    case 'CancelRun':
      cancelRun(d, command);
      return;
    case 'DeclineReplan':
      declineReplan(d, command);
      return;
    case 'ReplanWatchExpired':
      replanWatchExpired(d, command);
      return;
    case 'ProposeRevision':
      proposeRevision(d, command);
      return;
    case 'RevisionWaitExpired':
      revisionWaitExpired(d, command);
      return;
    case 'Invalidate':
      invalidate(d, command);
      return;
    case 'AwaitDecision':
      awaitDecision(d, command);
      return;
    case 'DecisionTimedOut':
      decisionTimedOut(d, command);
      return;
    case 'DecideApproval':
      decideApproval(d, command);
      return;
    case 'CompensationEnded':
      compensationEnded(d, command);
      return;
    case 'ActOnCompensation':
      actOnCompensation(d, command);
      return;
    case 'RaiseBudget':
      raiseBudget(d, command);
      return;
    case 'StartsThrottled':
      startsThrottled(d, command);
      return;
    case 'RetryStarts':
      retryStarts(d, command);
      return;
  }
}
