/**
 * Reopening a finished run (invalidation, a manual replan): the run goes back to `running`, its terminal record
 * moves to `previousTerminals`, `reopened` counts up, and a new run execution `run-<id>-o<n>` starts with
 * `{ runId, resume: true }`: the run machine's ResumeOrPlan skips planning and waits again, with a fresh deadline.
 * Each opening of a run has its own execution name, so the coordinator can tell the current execution's last
 * word from that of an execution the run has outlived.
 */

import { runExecutionName } from '../ports/executions.ts';
import type { RunRecord } from '../ports/store.ts';
import { event, type Interpreter } from './interpreter.ts';

/** Finished and may be reopened: complete, failed, or left paused by its run machine (a terminal record). */
export const isReopenable = (run: Pick<RunRecord, 'status' | 'terminal'>): boolean =>
  run.status === 'complete' || run.status === 'failed' || (run.status === 'paused' && run.terminal !== undefined);

/** The run execution of the run's current opening: `run-<id>` first, `run-<id>-o<n>` after the n-th reopening. */
export function currentRunExecutionName(run: Pick<RunRecord, 'runId' | 'reopened'>): string {
  const reopened = run.reopened ?? 0;
  return reopened > 0 ? runExecutionName(`${run.runId}-o${reopened}`) : runExecutionName(run.runId);
}

/**
 * Starts the run execution of the run's current opening (after a reopening), or does nothing for a run never
 * reopened (its first execution runs). The name and input are deterministic, so a repeat is harmless.
 */
export async function ensureRunExecution(ctx: Interpreter, run: RunRecord): Promise<void> {
  if ((run.reopened ?? 0) === 0) return;
  await ctx.deps.executions.start('run', currentRunExecutionName(run), {
    runId: run.runId,
    resume: true,
    started: { deadlineSeconds: ctx.deps.config.runDeadlineSeconds },
  });
}

/**
 * Reopens a finished run (one conditional write: of concurrent reopeners one wins) and starts its new run
 * execution. Returns the run as it is afterwards and whether this call reopened it; a run that was not finished
 * comes back unchanged.
 */
export async function reopenRun(
  ctx: Interpreter,
  run: RunRecord,
  reason: string,
): Promise<{ readonly run: RunRecord; readonly reopened: boolean }> {
  if (!isReopenable(run)) return { run, reopened: false };
  const reopened = (run.reopened ?? 0) + 1;
  const now = ctx.now();
  let updated: RunRecord | undefined;
  try {
    updated = await ctx.updateRun(
      run.runId,
      [run.status],
      {
        status: 'running',
        reopened,
        previousTerminals: [...(run.previousTerminals ?? []), ...(run.terminal ? [run.terminal] : [])],
        updatedAt: now,
      },
      // The old waiter was answered when the run finished; the new execution brings its own. A cancel that lost the
      // race to the end leaves its mark: the reopened run is not being cancelled.
      {
        remove: ['terminal', 'waiterToken', 'cancelling'],
        events: [event('RunReopened', { runId: run.runId, reopened, reason })],
      },
    );
  } catch (error) {
    // No answer (a store timeout): the reopening may have landed all the same. If it is this call's, what follows
    // it is this call's to do: a caller's retry finds the run running, reopens nothing, and the new opening would
    // have no run execution; a caller that gives up would leave the run running with nothing open to finish it.
    const landed = await ctx.deps.store.getRun(run.runId).catch(() => undefined);
    if (landed?.status !== 'running' || landed.reopened !== reopened || landed.updatedAt !== now) throw error;
    updated = landed;
  }
  if (!updated) return { run: await ctx.getRun(run.runId), reopened: false };
  await ensureRunExecution(ctx, updated);
  return { run: updated, reopened: true };
}

/** Reopens the run if it is finished; true when this call reopened it. */
export async function reopenIfFinished(ctx: Interpreter, run: RunRecord, reason: string): Promise<boolean> {
  return isReopenable(run) && (await reopenRun(ctx, run, reason)).reopened;
}
