/**
 * The run machine's words: the run starts with its revision 1, or fails before it starts (its plan could not be
 * made, or is invalid); the machine's wait gets its task token; the wait ends (the deadline, or a failure of the wait)
 * and what is still open is decided. A word from a run execution the run has outlived (a reopening started a new
 * one) changes nothing.
 */
import type { StepError } from '../../../plan/schema.ts';
import { decideTerminal, describeTerminal } from '../../terminal.ts';
import type { AwaitRun, FinalizeRun, RejectPlan, StartRun } from '../commands.ts';
import type { Decision } from '../decision.ts';
import { cancelRun } from './cancel.ts';
import { failurePolicies, finish, isLive } from './ending.ts';
import { closeOpenSteps, startDue } from './flow.ts';

export const RUN_ENDED_ERROR: StepError = { code: 'E_RUN_ENDED', message: 'the run ended', retryable: false };
export const DEADLINE_ERROR: StepError = { code: 'E_DEADLINE', message: 'the run deadline passed', retryable: false };

/** The word comes from a run execution the run has outlived. */
const outlived = (d: Decision, opening: number): boolean => (d.run.reopened ?? 0) !== opening;

/** A queued run starts; a repeat, or a run cancelled while it waited, decides nothing. */
export function admitRun(d: Decision): void {
  if (d.run.status !== 'queued') return;
  d.emit({ type: 'RunAdmitted', at: d.at });
}

export function startRun(d: Decision, command: StartRun): void {
  if (d.run.status !== 'planning') return;
  d.emit({ type: 'RunStarted', at: d.at, plan: command.plan });
  startDue(d);
}

export function rejectPlan(d: Decision, command: RejectPlan): void {
  if (outlived(d, command.opening) || !isLive(d)) return;
  if (d.run.revision >= 1) closeOpenSteps(d, RUN_ENDED_ERROR);
  finish(d, { state: 'failed', reason: command.reason, evidence: { ...command.evidence } });
}

export function awaitRun(d: Decision, command: AwaitRun): void {
  if (outlived(d, command.opening)) return;
  d.emit({ type: 'WaiterSet', at: d.at, token: command.token });
}

/**
 * The wait ended. At the deadline the run fails with its open steps closed, or, when only people are left to
 * answer, is left paused for them; a failed wait decides the run with what is known. A run whose compensating cancel
 * is under way stays with it.
 */
export function finalizeRun(d: Decision, command: FinalizeRun): void {
  if (!isLive(d) || d.run.terminal !== undefined || outlived(d, command.opening)) return;
  if (d.run.status === 'planning') {
    const error =
      command.error ??
      (command.timedOut ? 'the run deadline passed while it was being planned' : 'the run machine stopped');
    rejectPlan(d, {
      ...command,
      kind: 'RejectPlan',
      reason: 'planning_failed',
      evidence: { error: { message: error } },
    });
    return;
  }
  if (d.run.cancelCompensation === true) {
    cancelRun(d, { kind: 'CancelRun', at: d.at, compensate: true, by: d.run.cancelRequestedBy ?? null });
    return;
  }
  const plan = d.plan;
  if (plan === undefined) return;
  const decision = decideTerminal({
    expected: plan.executable,
    steps: d.draft.steps,
    policies: failurePolicies(d),
    timedOut: command.timedOut,
    aborted:
      command.error === undefined
        ? 'the run machine stopped waiting before the run finished'
        : `the run's wait failed: ${command.error}`,
  });
  if (decision.state === 'continue') return;
  if (decision.state === 'failed') closeOpenSteps(d, command.timedOut ? DEADLINE_ERROR : RUN_ENDED_ERROR);
  finish(d, {
    state: decision.state,
    reason: decision.reason,
    evidence: { ...decision.evidence, summary: describeTerminal(decision) },
  });
}
