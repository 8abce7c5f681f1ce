/**
 * What follows a step's transition, shared by every path that makes one: starting a step, releasing its dependents
 * exactly once per edge, blocking the downstream closure of a failure, failing a step for good, closing the open
 * steps of a run that ended, moving an aborting segment's compensation on. Each is safe to repeat: a retried or duplicated action runs it again and changes
 * nothing twice.
 */
import { dependentsOf, FIRST_GENERATION, isStartable, stepsToBlock } from '../engine/scheduling.ts';
import { IN_FLIGHT_STEP_STATUSES, isOpenStepStatus, letsStepsMove, OPEN_STEP_STATUSES } from '../engine/statuses.ts';
import { type AttemptEnding, transitionCondition } from '../engine/step-lifecycle.ts';
import { traceEntry } from '../engine/trace.ts';
import { downstreamClosure, effectiveUpstream } from '../plan/graph.ts';
import type { StepError, StepStatus } from '../plan/schema.ts';
import { forEachInPool, mapInPool } from '../pool.ts';
import { stepExecutionInput, stepExecutionName } from '../ports/executions.ts';
import type { ApprovalRecord, StepRecord } from '../ports/store.ts';
import { closeAttemptOf, closeLeftAttempts } from './attempt-closing.ts';
import { advanceCompensation } from './compensation.ts';
import { recordStepDuration } from './coordinator-metrics.ts';
import { listRunSteps, withMissingSteps, writeMissingStep } from './initial-steps.ts';
import { event, type Interpreter, type LoadedPlan } from './interpreter.ts';
import { checkRunEnd, pauseRun, recordEnded, settleRun, startReplanWatch } from './run-end.ts';

export const BLOCKED_CODE = 'E_BLOCKED';

/** A failure's downstream is read item by item up to this size, beyond it with one listing of the run's steps. */
const DOWNSTREAM_READ_LIMIT = 100;

type StepRef = Pick<StepRecord, 'runId' | 'stepId' | 'generation'>;

/** Starts a step whose upstream is done: pending → ready (one writer wins), then its execution (name per generation). */
export async function startStep(ctx: Interpreter, step: StepRecord): Promise<void> {
  if (!isStartable(step)) return;
  const { store, executions } = ctx.deps;
  if (step.status === 'pending') {
    const moved = await store.transitionStep(
      step.runId,
      step.stepId,
      { generation: step.generation, from: ['pending'] },
      { status: 'ready' },
    );
    if (!moved) {
      // Someone else moved it: if it is ready, the winner starts it, and starting again is harmless (same name)
      // and covers a winner that crashed in between.
      const current = await store.getStep(step.runId, step.stepId);
      if (current?.generation !== step.generation || current.status !== 'ready') return;
    }
  }
  await executions.start('step', stepExecutionName(step.runId, step.stepId, step.generation), stepExecutionInput(step));
}

/**
 * Counts a finished (succeeded or skipped) step against each dependent once; the count reaching zero starts it.
 * Returns each dependent's record as this call left it.
 *
 * The write comes first and the read only when it lost: the dependent's generation is taken to be the first one (a
 * lost condition reads the step and retries with its real generation), and a dependent that waits for this step
 * alone is counted and moved to `ready` by one write. A lost condition can also mean the edge was counted before (a
 * repeat, a crash): then the dependent is read and started if it is due, exactly as on the first pass.
 */
export async function releaseDependents(ctx: Interpreter, loaded: LoadedPlan, step: StepRef): Promise<StepRecord[]> {
  const { store } = ctx.deps;
  const { runId, stepId, generation } = step;
  const records = await mapInPool(
    dependentsOf(loaded.graph, stepId),
    async (dependentId): Promise<StepRecord | undefined> => {
      const only = effectiveUpstream(loaded.graph, dependentId).length === 1;
      let current = only
        ? await store.releaseLastDependency(runId, dependentId, FIRST_GENERATION, stepId, generation)
        : await store.releaseDependency(runId, dependentId, FIRST_GENERATION, stepId, generation);
      if (!current) {
        // Missing: StartRun has not written it yet; it is written here with this edge counted. Otherwise the
        // dependent may be in a later generation: an invalidation that moved this step too counts only its next
        // generation's release there (the store refuses this one), one that left this step out counts this one.
        const dependent =
          (await store.getStep(runId, dependentId)) ?? (await writeMissingStep(ctx, runId, dependentId, stepId));
        if (!dependent?.upstream.includes(stepId)) return dependent;
        current = dependent.released.includes(stepId)
          ? dependent
          : ((await store.releaseDependency(runId, dependentId, dependent.generation, stepId, generation)) ??
            (await store.getStep(runId, dependentId)));
      }
      if (current) await startStep(ctx, current);
      return current;
    },
  );
  return records.filter((r): r is StepRecord => r !== undefined);
}

/**
 * Releases the dependents of a step that finished well. When none of them is left open (the step is a sink, or
 * what follows it was blocked by a failure elsewhere), the step ended a line of work and may have been the run's
 * last: it is recorded on the run's frontier. A step that hands over to an open dependent writes nothing more: that
 * dependent finishes later and records then, so the end is never missed.
 */
export async function afterSuccess(ctx: Interpreter, loaded: LoadedPlan, step: StepRef): Promise<void> {
  const dependents = await releaseDependents(ctx, loaded, step);
  // A step of a segment may be the last one its aborting segment's compensation waits for.
  if (loaded.byId.get(step.stepId)?.segment !== undefined) await advanceCompensation(ctx, step.runId);
  if (dependents.every((d) => !isOpenStepStatus(d.status))) await checkRunEnd(ctx, loaded, step.runId, [step]);
}

/**
 * Marks every not-yet-claimed step downstream of a failed step `blocked` (not failed: the failure is the cause).
 * Returns every step of that downstream that is blocked now, whoever blocked it (for a repeat too).
 */
export async function blockDownstream(
  ctx: Interpreter,
  loaded: LoadedPlan,
  runId: string,
  failedId: string,
  failedGeneration?: number,
): Promise<StepRef[]> {
  const downstream = new Set(downstreamClosure(loaded.graph, failedId));
  if (downstream.size === 0) return [];
  // One StartRun has not written yet would be written pending after this: it is written (and blocked) now.
  const steps = await withMissingSteps(ctx, runId, await readDownstream(ctx, runId, downstream), downstream);
  const byId = new Map(steps.map((s) => [s.stepId, s]));
  const now = ctx.now();
  const blocked: StepRef[] = steps.filter((s) => downstream.has(s.stepId) && s.status === 'blocked');
  // A dependent an invalidation moved with the failed step waits for its next generation: a late repeat of this
  // failure's follow-ups (read before the move) must not block it.
  const toBlock = waitingSteps(loaded, failedId, failedGeneration, steps);
  // A finished run's open steps are new generations of an invalidation that a look at the run finished under it (it
  // read the steps before they moved); the invalidation reopens the run and blocks what cannot run itself. Blocked
  // now, by a repeat of this failure's follow-ups, they would be announced after the run's RunFinished.
  if (toBlock.length === 0 || !letsStepsMove((await ctx.getRun(runId)).status)) return blocked;
  const lost: StepRecord[] = [];
  await forEachInPool(toBlock, async (id) => {
    const step = byId.get(id);
    if (!step) return;
    const moved = await blockFor(ctx, step, failedId, now);
    if (moved) blocked.push(moved);
    else lost.push(step);
  });
  if (lost.length > 0) blocked.push(...(await blockMovedOn(ctx, loaded, runId, failedId, failedGeneration, lost)));
  return blocked;
}

/** The downstream's records: item by item up to a size, beyond it one listing of the run's steps. */
const readDownstream = (ctx: Interpreter, runId: string, downstream: ReadonlySet<string>): Promise<StepRecord[]> =>
  downstream.size > DOWNSTREAM_READ_LIMIT
    ? ctx.deps.store.listSteps(runId)
    : ctx.deps.store.getSteps(runId, [...downstream]);

/** The unclaimed steps of `records` that wait for this failure (given its generation, not for a later one). */
const waitingSteps = (
  loaded: LoadedPlan,
  failedId: string,
  failedGeneration: number | undefined,
  records: readonly StepRecord[],
): string[] =>
  stepsToBlock(
    loaded.graph,
    failedId,
    new Map<string, StepStatus>(records.map((s) => [s.stepId, s.status])),
    failedGeneration === undefined
      ? undefined
      : { generation: failedGeneration, records: new Map(records.map((s) => [s.stepId, s])) },
  );

/**
 * The blocks that lost their generation condition: an invalidation moved those steps meanwhile. A new generation
 * that still waits for the failed step (an invalidation that had read it still running, and saw nothing failed, does
 * not block it) is blocked, as long as that step is still failed. One that waits for the failed step's next
 * generation (the invalidation moved that step too, maybe not yet) is left to it: what waits for it is worked out
 * again from the records as they are now, since the first read may have been of the generations before the move.
 */
async function blockMovedOn(
  ctx: Interpreter,
  loaded: LoadedPlan,
  runId: string,
  failedId: string,
  failedGeneration: number | undefined,
  lost: readonly StepRecord[],
): Promise<StepRef[]> {
  const downstream = new Set(downstreamClosure(loaded.graph, failedId));
  const records = (await readDownstream(ctx, runId, downstream)).filter((s) => downstream.has(s.stepId));
  const waiting = new Set(waitingSteps(loaded, failedId, failedGeneration, records));
  const current = new Map(records.map((s) => [s.stepId, s]));
  const later = lost.flatMap((step) => {
    const moved = current.get(step.stepId);
    return moved !== undefined && moved.generation > step.generation && waiting.has(moved.stepId) ? [moved] : [];
  });
  if (later.length === 0 || !(await stillFailed(ctx, runId, failedId))) return [];
  const now = ctx.now();
  const blocked = await mapInPool(later, (step) => blockFor(ctx, step, failedId, now));
  return blocked.filter((s): s is StepRecord => s !== undefined);
}

/** Blocks the step in its generation, if it is still unclaimed there, announcing StepBlocked with the write. */
function blockFor(ctx: Interpreter, step: StepRecord, failedId: string, now: string): Promise<StepRecord | undefined> {
  const { runId, stepId, generation } = step;
  const error: StepError = {
    code: BLOCKED_CODE,
    message: `blocked: upstream step ${failedId} failed`,
    retryable: false,
    details: { blockedBy: failedId },
  };
  return ctx.transitionStep(
    runId,
    stepId,
    transitionCondition('block', generation),
    { status: 'blocked', error, finishedAt: now, appendTrace: [traceEntry('fail', error.message, now)] },
    [event('StepBlocked', { runId, stepId, generation, blockedBy: [failedId], blockedByCount: 1 })],
  );
}

/** The failed step has not moved on (an invalidation of it too would start its downstream anew). */
const stillFailed = async (ctx: Interpreter, runId: string, stepId: string): Promise<boolean> =>
  (await ctx.deps.store.getStep(runId, stepId))?.status === 'failed';

/**
 * Fails a step for good (from wherever it is in flight, or unclaimed for a claim-time failure), then blocks its
 * downstream closure and settles the run. Returns whether this call made the transition.
 */
export async function failStep(
  ctx: Interpreter,
  loaded: LoadedPlan,
  step: StepRecord,
  error: StepError,
  options: { attempts?: number; from?: readonly StepStatus[]; claimedBy?: string; note: string },
): Promise<boolean> {
  const { store } = ctx.deps;
  const now = ctx.now();
  const attempts = Math.max(step.attempts, options.attempts ?? 0);
  const { runId, stepId, generation } = step;
  const failed = await ctx.transitionStep(
    step.runId,
    step.stepId,
    {
      generation: step.generation,
      from: options.from ?? IN_FLIGHT_STEP_STATUSES,
      ...(options.claimedBy === undefined ? {} : { unclaimed: true }),
    },
    {
      status: 'failed',
      error,
      attempts,
      finishedAt: now,
      // Appended, not rewritten: a failed step keeps its whole trace under every retention.
      appendTrace: [traceEntry('fail', options.note, now)],
      ...(options.claimedBy === undefined ? {} : { claimedBy: options.claimedBy }),
    },
    [event('StepFailed', { runId, stepId, generation, attempts, error, final: true })],
  );
  if (failed) {
    recordStepDuration(ctx.deps.metrics, failed, loaded.byId.get(stepId)?.target, 'failed');
    // A gate that failed another way (its wait failed, the run ended) must not stay decidable.
    if (step.status === 'awaiting_approval') await expireApprovals(ctx, runId, new Set([stepId]), error.message);
  }
  const current = failed ?? (await store.getStep(step.runId, step.stepId));
  if (current?.generation === step.generation && current.status === 'failed') await afterFailure(ctx, loaded, current);
  return failed !== undefined;
}

/** What follows a step's final failure (also redone by a repeated call): downstream blocked, the run settled. */
export async function afterFailure(ctx: Interpreter, loaded: LoadedPlan, step: StepRecord): Promise<void> {
  const planStep = loaded.byId.get(step.stepId);
  // `onFailure: continue`: the failure is accepted, dependents go on and read its output as null.
  if (planStep?.onFailure === 'continue') return afterSuccess(ctx, loaded, step);
  const blocked = await blockDownstream(ctx, loaded, step.runId, step.stepId, step.generation);
  // A final failure in a segment aborts it: its finished mutating steps are compensated (services/compensation.ts).
  if (planStep?.segment !== undefined) await advanceCompensation(ctx, step.runId);
  if (planStep?.onFailure === 'pause')
    await pauseRun(ctx, step.runId, 'failure_paused', {
      stepId: step.stepId,
      generation: step.generation,
      error: step.error ?? null,
      detail: `step ${step.stepId} failed and its onFailure policy is pause: a person decides what happens next`,
    });
  // The run waits for the replanner's answer to this failure: its watch ends the wait if no answer comes.
  await startReplanWatch(ctx, loaded, step);
  if (planStep?.onFailure === 'fail-run') {
    // The run fails now, whatever else is open. As for a cancellation, the open steps are closed first, so nothing
    // of the run moves or is announced after its RunFinished; the terminal decision then says failed.
    await closeOpenSteps(ctx, step.runId, FAIL_RUN_ERROR(step.stepId));
    await recordEnded(ctx, step.runId, [step, ...blocked]);
    await settleRun(ctx, step.runId);
    return;
  }
  await checkRunEnd(ctx, loaded, step.runId, [step, ...blocked]);
}

/** The error a run failed by a step's `onFailure: fail-run` closes its open steps with. */
const FAIL_RUN_ERROR = (stepId: string): StepError => ({
  code: 'E_RUN_FAILED',
  message: `the run failed: step ${stepId} failed under onFailure fail-run`,
  retryable: false,
});

/**
 * Ends every open step of a run that matches `which` (cancelled, error `code`) and stops the executions that claimed
 * them. Pending approvals of those steps expire.
 */
export async function closeOpenSteps(
  ctx: Interpreter,
  runId: string,
  error: StepError,
  which: (step: StepRecord) => boolean = () => true,
): Promise<void> {
  const { store, executions } = ctx.deps;
  const now = ctx.now();
  // A record StartRun has not written yet would be written pending after this: it is written (and closed) now.
  const listed = (await listRunSteps(ctx, runId)).filter(which);
  const steps = listed.filter((s) => isOpenStepStatus(s.status));
  const ended: StepRecord[] = [];
  await forEachInPool(steps, async (step) => {
    const closed = await store.transitionStep(
      runId,
      step.stepId,
      { generation: step.generation, from: [...OPEN_STEP_STATUSES] },
      { status: 'cancelled', error, finishedAt: now, appendTrace: [traceEntry('fail', error.message, now)] },
    );
    if (closed) ended.push(closed);
    const claimedBy = (closed ?? step).claimedBy;
    if (closed && claimedBy) await closeRunningAttempt(ctx, closed, { kind: 'cancelled', error });
    if (closed && claimedBy) {
      try {
        await executions.stop(claimedBy, error.code, error.message);
      } catch (stopError) {
        // Already finished or stopped: nothing left to stop.
        console.error('cairn coordinator: stopping a step execution failed', { runId, claimedBy, stopError });
      }
    }
  });
  await expireApprovals(ctx, runId, new Set(steps.map((s) => s.stepId)), error.message);
  if (ended.length > 0) await recordEnded(ctx, runId, ended);
  // A repeat after a failed first try (an attempt's write throttled, its answer lost) finds the steps that try closed
  // no longer open: their running attempts are closed now (after the open steps, which matter more, are closed).
  await closeLeftAttempts(
    ctx,
    listed.filter((s) => !isOpenStepStatus(s.status)),
  );
}

/**
 * Pending approvals of steps that no longer wait for a person expire, so nobody can decide them any more. Given
 * generations (step id → the latest generation that no longer waits), a later generation's approval is left alone.
 */
export async function expireApprovals(
  ctx: Interpreter,
  runId: string,
  stepIds: ReadonlySet<string> | ReadonlyMap<string, number>,
  comment: string,
) {
  const { store } = ctx.deps;
  const now = ctx.now();
  const closes = (a: ApprovalRecord): boolean => {
    if (!stepIds.has(a.stepId)) return false;
    const upTo = stepIds instanceof Map ? stepIds.get(a.stepId) : undefined;
    return upTo === undefined || a.generation <= upTo;
  };
  const pending = (await store.listRunApprovals(runId)).filter((a) => a.status === 'pending' && closes(a));
  await forEachInPool(pending, async (a) => {
    await store.decideApproval(a.approvalId, { status: 'expired', decidedAt: now, comment });
  });
}

/**
 * Closes the step's current attempt if it is still recorded `running` (a gate waiting for a person: the only attempt
 * recorded before it ends), as the pure `closeAttempt` says. Without it a gate cancelled with its run, or superseded
 * by a new generation, would show an attempt running for good.
 */
export async function closeRunningAttempt(
  ctx: Interpreter,
  step: Pick<StepRecord, 'runId' | 'stepId' | 'generation' | 'attempts'>,
  ending: AttemptEnding,
): Promise<void> {
  await closeAttemptOf(ctx, step, { generation: step.generation, attempt: Math.max(1, step.attempts) }, ending);
}
