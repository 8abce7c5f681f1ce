/**
 * A person's answer to a compensation that failed for good (the run paused `compensation_failed`, with the
 * evidence): retry it, or say it was undone by hand, with a note. Either moves the step out of
 * `compensation_failed` in one conditional write (of two people acting at once, one wins; the other gets a
 * conflict), reopens the paused run (a new run execution waits for it again) and carries the saga on:
 *
 * - retry: `compensation_failed` → `compensating`, and the compensation's execution starts again under a new name
 *   (`~undo~<stepId>~r<n>`, the first one has ended) with the same idempotency key: a failed call left no record,
 *   so the capability is called again, and its end asks for the next compensation as before;
 * - resolve: `compensation_failed` → `compensated` with the note and who gave it; the next compensation, in reverse
 *   completion order, starts, or the run ends (failed, or cancelled for a cancellation with compensation).
 */
import { type CompensationAction, checkCompensationAction, compensationStepId } from '../engine/compensation.ts';
import { transitionCondition } from '../engine/step-lifecycle.ts';
import { traceEntry } from '../engine/trace.ts';
import { ConflictError, NotFoundError } from '../errors.ts';
import { stepExecutionInput, stepExecutionName } from '../ports/executions.ts';
import type { RunRecord, StepRecord } from '../ports/store.ts';
import { advanceCompensation } from './compensation.ts';
import { event, type Interpreter } from './interpreter.ts';
import { reopenRun } from './run-reopen.ts';

/** The code of a person's action on a step whose compensation has not failed (409). */
export const NOT_COMPENSATION_FAILED_CODE = 'E_NOT_COMPENSATION_FAILED';

export interface CompensationActionRequest {
  readonly runId: string;
  readonly stepId: string;
  readonly action: CompensationAction;
  /** Who acts (a JWT `sub`, or `local-token`); recorded on the step's compensation. */
  readonly requestedBy?: string;
}

export interface CompensationActionResult {
  readonly runId: string;
  readonly stepId: string;
  /** The step's status after the action: `compensating` (a retry under way) or `compensated` (resolved). */
  readonly status: StepRecord['status'];
  /** Whether the paused run was reopened by this action. */
  readonly reopened: boolean;
}

export async function actOnCompensation(
  ctx: Interpreter,
  request: CompensationActionRequest,
): Promise<CompensationActionResult> {
  const { runId, stepId, action } = request;
  const run = await ctx.deps.store.getRun(runId);
  if (!run) throw new NotFoundError(`run ${runId} does not exist`, { context: { runId } });
  const step = await ctx.deps.store.getStep(runId, stepId);
  if (!step) throw new NotFoundError(`run ${runId} has no step ${stepId}`, { context: { runId, stepId } });
  const check = checkCompensationAction(step.status);
  if (!check.ok) throw notFailed(runId, stepId, check.reason);
  if (run.status === 'cancelled' || run.status === 'complete')
    throw notFailed(runId, stepId, `the run is ${run.status}`);

  const moved = await moveStep(ctx, step, action, request.requestedBy ?? null);
  if (!moved) {
    const current = await ctx.deps.store.getStep(runId, stepId);
    throw notFailed(runId, stepId, `the step is ${current?.status ?? 'gone'}: someone else acted first`);
  }
  const reopened = await reopenHeld(ctx, run, stepId, action);
  if (action.kind === 'retry') {
    const round = moved.compensation?.round ?? 1;
    await ctx.deps.executions.start(
      'step',
      stepExecutionName(runId, compensationStepId(stepId, round), moved.generation),
      stepExecutionInput({ runId, stepId: compensationStepId(stepId, round), generation: moved.generation }),
    );
  } else {
    await advanceCompensation(ctx, runId);
  }
  return { runId, stepId, status: moved.status, reopened };
}

const notFailed = (runId: string, stepId: string, reason: string) =>
  new ConflictError(`the compensation of step ${stepId} cannot be retried or resolved: ${reason}`, {
    context: { runId, stepId, code: NOT_COMPENSATION_FAILED_CODE },
  });

/** compensation_failed → compensating (a retry) or compensated (resolved by hand): one writer wins. */
function moveStep(
  ctx: Interpreter,
  step: StepRecord,
  action: CompensationAction,
  by: string | null,
): Promise<StepRecord | undefined> {
  const { runId, stepId, generation } = step;
  const now = ctx.now();
  const previous = step.compensation;
  const target = previous?.target ?? 'unknown';
  const base = {
    target,
    attempts: previous?.attempts ?? 0,
    idempotencyKey: previous?.idempotencyKey ?? '',
    startedAt: previous?.startedAt ?? now,
    ...(previous?.input === undefined ? {} : { input: previous.input }),
  };
  if (action.kind === 'retry') {
    const round = (previous?.round ?? 0) + 1;
    return ctx.transitionStep(
      runId,
      stepId,
      transitionCondition('retryCompensation', generation),
      {
        status: 'compensating',
        // The failed round's error stays in the trace and the events; the record describes the round under way.
        compensation: { ...base, attempts: 0, round, retriedBy: by, startedAt: now },
        appendTrace: [traceEntry('exec', `compensation retried by ${by ?? 'a person'} (round ${round})`, now)],
      },
      [event('StepCompensation', { runId, stepId, generation, state: 'compensating', target, by })],
    );
  }
  return ctx.transitionStep(
    runId,
    stepId,
    transitionCondition('resolveCompensation', generation),
    {
      status: 'compensated',
      compensation: {
        ...base,
        ...(previous?.round === undefined ? {} : { round: previous.round }),
        error: previous?.error ?? null,
        resolution: { by, note: action.note, at: now },
        finishedAt: now,
      },
      appendTrace: [traceEntry('exec', `compensation resolved by hand by ${by ?? 'a person'}: ${action.note}`, now)],
    },
    [event('StepCompensation', { runId, stepId, generation, state: 'compensated', target, by })],
  );
}

/** Reopens the run when it is held for this failure (paused `compensation_failed`); a live run goes on as it is. */
async function reopenHeld(
  ctx: Interpreter,
  run: RunRecord,
  stepId: string,
  action: CompensationAction,
): Promise<boolean> {
  const current = (await ctx.deps.store.getRun(run.runId)) ?? run;
  if (current.status !== 'paused' || current.terminal?.reason !== 'compensation_failed') return false;
  const reason =
    action.kind === 'retry'
      ? `the compensation of step ${stepId} is retried`
      : `the compensation of step ${stepId} was resolved by hand`;
  return (await reopenRun(ctx, current, reason)).reopened;
}
