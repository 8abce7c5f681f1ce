/**
 * Where the coordinator's completion check meets the replanner: a run whose final step failure the replanner may
 * still answer is not finished, and a failure the replanner could not answer is named in the terminal evidence.
 *
 * A failure (`<stepId>#<generation>`) waits for the replanner until the replanner has answered it: a revision
 * restarts or supersedes the failed step (so the failure is gone), a pause finishes the run itself (a terminal
 * record), and a failure it cannot replan around is recorded as declined (`replanDeclines`, a set: concurrent
 * declines never overwrite each other) and then stands. If the replanner never comes, the failure's replan watch
 * declines it (engine/replan/watch.ts), and failing that the run deadline still ends the run.
 */
import type { ReplanDecline, RunRecord, StepRecord, Store } from '../ports/store.ts';
import { writeAgainWhileRetryable } from './write-again.ts';

/** The key of a step generation's final failure, as the replanner and the coordinator name it. */
export const failureKey = (step: Pick<StepRecord, 'stepId' | 'generation'>): string =>
  `${step.stepId}#${step.generation}`;

type FailureRef = Pick<StepRecord, 'runId' | 'stepId' | 'generation'>;

/**
 * Takes a failure for the replanner to answer (`handledFailures`): true for the first taker, false for a duplicate.
 * A mark whose write lost its answer (a store timeout: it may have landed) is taken back before the error goes on,
 * or the redelivery would find it and ignore the failure as a duplicate, and the run would wait for a replan that
 * never comes with nothing left open to settle it.
 */
export async function takeFailure(store: Store, ref: FailureRef): Promise<boolean> {
  try {
    return await store.markRunOnce(ref.runId, 'handledFailures', failureKey(ref));
  } catch (error) {
    await releaseFailure(store, ref);
    throw error;
  }
}

/** Gives a taken failure back so that its redelivery answers it (again while the store's failure may pass). */
export const releaseFailure = (store: Store, ref: FailureRef): Promise<void> =>
  writeAgainWhileRetryable(() => store.unmarkRunOnce(ref.runId, 'handledFailures', failureKey(ref)));

/** The declined failures of a run, parsed (a member that is not a decline is left out). */
export function replanDeclines(run: Pick<RunRecord, 'replanDeclines'>): ReplanDecline[] {
  const out: ReplanDecline[] = [];
  for (const member of run.replanDeclines ?? []) {
    try {
      const value = JSON.parse(member) as Partial<ReplanDecline>;
      if (typeof value.failure === 'string' && typeof value.stepId === 'string')
        out.push({
          failure: value.failure,
          stepId: value.stepId,
          code: String(value.code ?? 'E_UNKNOWN'),
          message: String(value.message ?? ''),
        });
    } catch {
      // not a decline: ignored
    }
  }
  return out.sort((a, b) => a.failure.localeCompare(b.failure));
}

/** The set member that records a decline: JSON with sorted keys, so a repeat is the same member. */
export const declineMember = (decline: ReplanDecline): string =>
  JSON.stringify({ code: decline.code, failure: decline.failure, message: decline.message, stepId: decline.stepId });

/**
 * Whether one of the failed steps among `expected` (the current revision's executable steps) still waits for the
 * replanner: every final failure does until the replanner declines it. A revision restarts (or supersedes) the failed
 * step, so until those writes land the failure is still there and the run still waits. Never with replanning off
 * (`maxReplans` absent or 0): then a failure decides the run as before. At the replan limit the replanner still
 * answers (it pauses the run for a person), so the limit does not matter here.
 */
export function awaitsReplan(
  run: Pick<RunRecord, 'replanDeclines'>,
  steps: ReadonlyMap<string, Pick<StepRecord, 'stepId' | 'generation' | 'status'>>,
  expected: readonly string[],
  maxReplans: number | undefined,
): boolean {
  if (maxReplans === undefined || maxReplans <= 0) return false;
  const declined = new Set(replanDeclines(run).map((d) => d.failure));
  return expected.some((id) => {
    const step = steps.get(id);
    return step?.status === 'failed' && !declined.has(failureKey(step));
  });
}

/** The failures the replanner could not replan around, with the planner's reason: terminal evidence. */
export function declinedReplans(run: Pick<RunRecord, 'replanDeclines'>): Record<string, unknown>[] {
  return replanDeclines(run).map((d) => ({ stepId: d.stepId, failure: d.failure, code: d.code, message: d.message }));
}
