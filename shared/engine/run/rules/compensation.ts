/**
 * The saga, decided by the one writer: a final failure inside a `segment` (or a cancellation with compensation)
 * aborts the segment; its unstarted steps close, what is in flight finishes, then its finished mutating steps are
 * undone one at a time, most recent first, each by an execution of the step machine for the synthetic step
 * `~undo~<stepId>` (engine/compensation.ts decides the order). A step without a compensation, or a compensation that
 * failed for good, holds the run for a person.
 */

import type { StepError } from '../../../plan/schema.ts';
import { stepExecutionName } from '../../../ports/executions.ts';
import type { StepRecord } from '../../../ports/records/steps.ts';
import { type CompensationMember, compensationStepId, decideCompensation } from '../../compensation.ts';
import type { Decision } from '../decision.ts';
import { pause } from './terminal-writes.ts';

/** The error an aborting segment closes its unstarted steps with: they never acted, so there is nothing to undo. */
export const SEGMENT_ABORTED_CODE = 'E_SEGMENT_ABORTED';

const SEGMENT_ABORTED: StepError = {
  code: SEGMENT_ABORTED_CODE,
  message: 'cancelled: its segment is being compensated',
  retryable: false,
};

function members(d: Decision): CompensationMember[] {
  const plan = d.plan;
  if (plan === undefined) return [];
  const executable = new Set(plan.executable);
  return plan.plan.steps
    .filter((s) => executable.has(s.id) && s.target !== null)
    .map((s) => {
      const facts = plan.target(s.target);
      return {
        id: s.id,
        segment: s.segment,
        mutating: facts?.sideEffect === 'mutating',
        compensable: facts?.compensateTarget !== undefined,
        rollbackHint: s.rollbackHint,
      };
    });
}

/** What a paused run shows for a compensation that failed: the step, what was called with what, and the error. */
export function compensationEvidence(stepId: string, step: StepRecord | undefined): Record<string, unknown> {
  const record = step?.compensation;
  return {
    stepId,
    generation: step?.generation ?? null,
    target: record?.target ?? null,
    input: record?.input ?? null,
    error: record?.error ?? null,
    attempts: record?.attempts ?? 0,
    idempotencyKey: record?.idempotencyKey ?? null,
    detail: `the compensation of step ${stepId} failed: ${record?.error?.message ?? 'unknown error'}`,
  };
}

/** Starts the compensation of a succeeded step (`round`: a person's retry of one that failed). */
export function startCompensation(d: Decision, stepId: string, round = 0, by?: string | null): void {
  const step = d.step(stepId);
  const target = d.plan?.target(d.plan.byId.get(stepId)?.target ?? null)?.compensateTarget;
  if (step === undefined || target === undefined) return;
  d.emit({
    type: 'CompensationStarted',
    at: d.at,
    stepId,
    generation: step.generation,
    target,
    round,
    execution: stepExecutionName(d.run.runId, compensationStepId(stepId, round), step.generation),
    ...(by === undefined ? {} : { by }),
  });
}

/**
 * Moves the run's compensation on by what is due now. `pending`: the run waits for it (steps in flight, a
 * compensation under way, a person to act); `none` or `done`: nothing holds the run's end.
 */
export function advanceCompensation(d: Decision): 'none' | 'pending' | 'done' {
  if (d.plan === undefined || (d.run.status !== 'running' && d.run.status !== 'paused')) return 'none';
  const steps = new Map(
    [...d.draft.steps].map(([id, s]) => [
      id,
      {
        status: s.status,
        finishedAt: s.finishedAt,
        error: s.status === 'compensation_failed' ? (s.compensation?.error ?? null) : s.error,
      },
    ]),
  );
  const decision = decideCompensation({ members: members(d), steps, cancelAll: d.run.cancelCompensation === true });
  for (const id of 'cancel' in decision ? decision.cancel : []) {
    const step = d.step(id);
    if (step !== undefined && (step.status === 'pending' || step.status === 'ready'))
      d.emit({ type: 'StepClosed', at: d.at, stepId: id, generation: step.generation, error: SEGMENT_ABORTED });
  }
  switch (decision.kind) {
    case 'none':
      return 'none';
    case 'done':
      return 'done';
    case 'wait':
      return decision.waitingFor.length === 0 ? advanceCompensation(d) : 'pending';
    case 'compensate':
      if (d.step(decision.stepId)?.status === 'succeeded') startCompensation(d, decision.stepId);
      return 'pending';
    case 'hint': {
      const step = d.step(decision.stepId);
      pause(d, 'rollback_required', {
        stepId: decision.stepId,
        generation: step?.generation ?? null,
        target: d.plan.byId.get(decision.stepId)?.target ?? null,
        rollbackHint: decision.hint,
        detail: `step ${decision.stepId} has no compensation: a person must act on its rollbackHint`,
      });
      return 'pending';
    }
    case 'failed':
      pause(d, 'compensation_failed', compensationEvidence(decision.stepId, d.step(decision.stepId)));
      return 'pending';
  }
}
