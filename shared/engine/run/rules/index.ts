/** Which rule answers which command. */
import type { RunCommand } from '../commands.ts';
import { type Decision, refuse } from '../decision.ts';
import { attemptEnded, executionFailed } from './attempts.ts';
import { cancelRun } from './cancel.ts';
import { awaitRun, finalizeRun, rejectPlan, startRun } from './lifecycle.ts';
import { declineReplan, replanWatchExpired } from './replans.ts';
import { proposeRevision } from './revision-proposals.ts';
import { decideRevision, revisionWaitExpired } from './revisions.ts';

export function activeDecider(d: Decision, command: RunCommand): void {
  switch (command.kind) {
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
      executionFailed(d, command);
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
    case 'DecideApproval': {
      const approval = d.draft.approvals.get(command.approvalId);
      if (approval?.kind === 'revision') {
        decideRevision(d, command, approval);
        return;
      }
      d.reply = refuse(409, 'E_NOT_IMPLEMENTED', `${command.kind} is not decided yet`);
      return;
    }
    case 'AwaitDecision':
    case 'DecisionTimedOut':
    case 'Invalidate':
    case 'CompensationEnded':
    case 'ActOnCompensation':
      d.reply = refuse(409, 'E_NOT_IMPLEMENTED', `${command.kind} is not decided yet`);
      return;
  }
}
