/**
 * The compensation driver (saga): loads the run, asks engine/compensation.ts what comes next for its aborting
 * segments and does it — cancels their unclaimed steps, starts the next compensation, or pauses the run for a
 * person (a rollbackHint to act on, a compensation that failed). Asked again by whoever ends a piece of the work: a
 * segment's step settling (step-follow-ups.ts), a compensation ending (step/compensation-step.ts), a cancellation
 * with compensation (coordinator-run.ts). Every action is a conditional write or an execution with a deterministic
 * name, so asking twice, or from two places at once, does each thing once.
 *
 * A compensation runs as its own execution of the step machine (synthetic step id `~undo~<stepId>`, same
 * generation): the executor that has the capability bindings calls it, with the step machine's backoff between
 * attempts and its own idempotency key. One at a time, most recent completion first: the next starts when one ends.
 */
import { compensationStepId, decideCompensation } from '../engine/compensation.ts';
import { letsStepsMove } from '../engine/statuses.ts';
import { transitionCondition } from '../engine/step-lifecycle.ts';
import { traceEntry } from '../engine/trace.ts';
import type { StepError } from '../plan/schema.ts';
import { forEachInPool } from '../pool.ts';
import { stepExecutionInput, stepExecutionName } from '../ports/executions.ts';
import type { StepRecord } from '../ports/store.ts';
import { compensationInput } from './compensation-view.ts';
import { listRunSteps } from './initial-steps.ts';
import { event, type Interpreter, type LoadedPlan } from './interpreter.ts';
import { pauseRun, settleRun } from './run-end.ts';
import { idempotencyKey } from './step/idempotent-call.ts';

/** The error an aborting segment closes its unclaimed steps with: they never acted, so nothing to undo. */
export const SEGMENT_ABORTED_CODE = 'E_SEGMENT_ABORTED';

/** The idempotency key of a step generation's compensation: its own, apart from the step's. */
export const compensationKey = (runId: string, stepId: string, generation: number): string =>
  `${idempotencyKey(runId, stepId, generation)}#compensate`;

export type CompensationProgress = 'none' | 'wait' | 'held' | 'done';

/** How often one call re-reads after cancelling steps (each pass cancels some or finds them claimed). */
const MAX_PASSES = 4;

/**
 * Moves the run's compensation on by one step. 'done' (everything due is compensated) settles the run: a step the
 * segment cancelled never reaches the run's frontier, so the end is looked at here.
 */
export async function advanceCompensation(ctx: Interpreter, runId: string): Promise<CompensationProgress> {
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const run = await ctx.deps.store.getRun(runId);
    if (!run || run.revision < 1 || !letsStepsMove(run.status)) return 'none';
    const loaded = await ctx.plan(run);
    const steps = new Map((await listRunSteps(ctx, runId)).map((s) => [s.stepId, s]));
    const decision = decideCompensation(compensationInput(ctx, run, loaded, steps));
    const cancel = 'cancel' in decision ? decision.cancel : [];
    if (cancel.length > 0) await cancelUnclaimed(ctx, steps, cancel);
    switch (decision.kind) {
      case 'none':
        return 'none';
      case 'done':
        await settleRun(ctx, runId);
        return 'done';
      case 'wait':
        if (decision.waitingFor.length === 0) continue; // only cancellations were due: look again
        return 'wait';
      case 'compensate': {
        const step = steps.get(decision.stepId);
        if (step) await startCompensation(ctx, loaded, step);
        return 'wait';
      }
      case 'hint': {
        const step = steps.get(decision.stepId);
        await pauseRun(ctx, runId, 'rollback_required', {
          stepId: decision.stepId,
          generation: step?.generation ?? null,
          target: loaded.byId.get(decision.stepId)?.target ?? null,
          rollbackHint: decision.hint,
          output: step?.output ?? null,
          detail: `step ${decision.stepId} has no compensation: a person must act on its rollbackHint`,
        });
        return 'held';
      }
      case 'failed': {
        const step = steps.get(decision.stepId);
        await pauseRun(ctx, runId, 'compensation_failed', compensationEvidence(decision.stepId, step));
        return 'held';
      }
    }
  }
  return 'wait';
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

/** Closes unclaimed steps of an aborting segment (pending, ready): they never acted. */
async function cancelUnclaimed(ctx: Interpreter, steps: ReadonlyMap<string, StepRecord>, ids: readonly string[]) {
  const now = ctx.now();
  await forEachInPool(ids, async (id) => {
    const step = steps.get(id);
    if (!step) return;
    const error: StepError = {
      code: SEGMENT_ABORTED_CODE,
      message: 'cancelled: its segment is being compensated',
      retryable: false,
    };
    await ctx.transitionStep(
      step.runId,
      id,
      { generation: step.generation, from: ['pending', 'ready'], unclaimed: true },
      { status: 'cancelled', error, finishedAt: now, appendTrace: [traceEntry('fail', error.message, now)] },
    );
  });
}

/**
 * succeeded → compensating (one writer wins) and the compensation's execution started; a step already compensating
 * gets its execution started again, which is harmless (same name) and covers a starter that crashed in between.
 */
async function startCompensation(ctx: Interpreter, loaded: LoadedPlan, step: StepRecord): Promise<void> {
  const { runId, stepId, generation } = step;
  const target = compensationTarget(ctx, loaded, stepId);
  if (target === undefined) return;
  if (step.status === 'succeeded') {
    const now = ctx.now();
    const moved = await ctx.transitionStep(
      runId,
      stepId,
      transitionCondition('compensate', generation),
      {
        status: 'compensating',
        compensation: {
          target,
          attempts: 0,
          idempotencyKey: compensationKey(runId, stepId, generation),
          startedAt: now,
        },
        appendTrace: [traceEntry('exec', `compensating with ${target}`, now)],
      },
      [event('StepCompensation', { runId, stepId, generation, state: 'compensating', target })],
    );
    if (!moved) {
      const current = await ctx.deps.store.getStep(runId, stepId);
      if (current?.generation !== generation || current.status !== 'compensating') return;
    }
  } else if (step.status !== 'compensating') return;
  const synthetic = compensationStepId(stepId);
  await ctx.deps.executions.start(
    'step',
    stepExecutionName(runId, synthetic, generation),
    stepExecutionInput({ runId, stepId: synthetic, generation }),
  );
}

/** The target that compensates a plan step: its capability's `compensate.target`. */
export function compensationTarget(ctx: Interpreter, loaded: LoadedPlan, stepId: string): string | undefined {
  const target = loaded.byId.get(stepId)?.target;
  return target ? ctx.deps.catalog.get(target)?.compensate?.target : undefined;
}
