/**
 * Cancellation, in one decision: every open step closes (its execution stopped, its pending approvals closed) and
 * the run ends cancelled, naming who asked. With compensation, the run's finished mutating steps of every segment are
 * undone first, one at a time (compensation.ts), and the run ends cancelled when the last is done; meanwhile it starts
 * no attempt and takes no invalidation, revision or decision. A finished run is not cancelled again.
 */
import type { StepError } from '../../../plan/schema.ts';
import { decideTerminal, describeTerminal } from '../../terminal.ts';
import type { CancelRun } from '../commands.ts';
import type { Decision } from '../decision.ts';
import { CANCELLED_REVISION_COMMENT, closeRevisionApprovals, closeStepApprovals } from './approval-closing.ts';
import { advanceCompensation } from './compensation.ts';
import { failurePolicies, finish } from './ending.ts';
import { closeOpenSteps } from './flow.ts';

/** The error a cancellation closes open steps with. */
export const CANCELLED_ERROR: StepError = { code: 'E_CANCELLED', message: 'the run was cancelled', retryable: false };

/** Closes what a cancel closes: the open steps with their approvals, and any revision waiting for a person. */
function closeForCancel(d: Decision): void {
  const closing = [...d.draft.steps.values()].filter((s) =>
    ['pending', 'ready', 'running', 'retrying', 'awaiting_approval'].includes(s.status),
  );
  closeOpenSteps(d, CANCELLED_ERROR);
  for (const step of closing) closeStepApprovals(d, step.stepId, step.generation, CANCELLED_ERROR.message);
  closeRevisionApprovals(d, CANCELLED_REVISION_COMMENT);
}

export function cancelRun(d: Decision, command: CancelRun): void {
  const { status } = d.run;
  if (status === 'complete' || status === 'failed' || status === 'cancelled') {
    d.reply = { ok: true, value: { status } };
    return;
  }
  const moving = status === 'running' || status === 'paused';
  // A cancel with compensation is recorded by its CancelBegun (the run ends later); any other by its RunFinished.
  const begun = d.run.cancelCompensation === true || (command.compensate && moving);
  if (command.compensate && moving) {
    if (d.run.cancelCompensation !== true) d.emit({ type: 'CancelBegun', at: d.at, by: command.by });
    closeForCancel(d);
    if (advanceCompensation(d) === 'pending') {
      d.reply = { ok: true, value: { status: d.run.status } };
      return;
    }
  } else closeForCancel(d);
  const decision = decideTerminal({
    cancelled: true,
    expected: d.plan?.executable ?? [],
    steps: d.draft.steps,
    policies: failurePolicies(d),
  });
  if (decision.state === 'continue') return;
  finish(
    d,
    {
      state: 'cancelled',
      reason: 'cancelled',
      evidence: {
        ...decision.evidence,
        summary: describeTerminal(decision),
        requestedBy: d.run.cancelRequestedBy ?? command.by ?? null,
      },
    },
    begun ? undefined : command.by,
  );
  d.reply = { ok: true, value: { status: d.run.status } };
}
