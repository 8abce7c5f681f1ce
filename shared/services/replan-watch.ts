/**
 * The replan watch's answers (engine/replan/watch.ts says what it is for): RunStep's, AwaitDecision's and
 * DecisionExpired's for the synthetic step `~replan~<stepId>`. RunStep waits (`await`, kind `replan`) until the
 * watch's time after the failure; nothing answers that wait, so it times out, and DecisionExpired takes a failure
 * still unanswered as the replanner takes it (`handledFailures`) and declines it, which settles the run.
 */
import { DEFAULT_REPLAN_WATCH_SECONDS } from '../config/defaults.ts';
import {
  decideReplanWatch,
  REPLAN_UNANSWERED_CODE,
  type ReplanWatchMove,
  watchedStepId,
} from '../engine/replan/watch.ts';
import { isTransientPlatformError } from '../errors.ts';
import type { StepRecord } from '../ports/store.ts';
import { failureKey, releaseFailure, replanDeclines, takeFailure } from './coordinator-replan.ts';
import type { ApprovalRequested, ExpireResult, RunStepRequest, StepNext, StepRef } from './coordinator-types.ts';
import type { Interpreter } from './interpreter.ts';
import { declineFailure } from './replanner-support.ts';
import { isCancelling, pendingRevisionApproval } from './revision-approvals.ts';
import { settleRun } from './run-end.ts';
import { tryAgain, workAgainPolicy } from './write-again.ts';

const DONE: StepNext = { action: 'done', attempt: 1 };
/** The watch's decline is repeatable work, tried in place as the replanner's answer is. */
const DECLINE_POLICY = workAgainPolicy(isTransientPlatformError);

const watchSeconds = (ctx: Interpreter): number => ctx.deps.config.replanWatchSeconds ?? DEFAULT_REPLAN_WATCH_SECONDS;

interface Watched {
  readonly move: ReplanWatchMove;
  readonly step: StepRecord | undefined;
  readonly declined: boolean;
}

/** What the watch of `ref` does now, from the run, the watched step and the run's waiting revision, read now. */
async function look(ctx: Interpreter, ref: StepRef): Promise<Watched> {
  const { store } = ctx.deps;
  const stepId = watchedStepId(ref.stepId);
  const [run, step] = await Promise.all([store.getRun(ref.runId), store.getStep(ref.runId, stepId)]);
  if (!run) return { move: { kind: 'answered' }, step, declined: false };
  const failure = failureKey({ stepId, generation: ref.generation });
  const declined = replanDeclines(run).some((d) => d.failure === failure);
  const revisionPending = (await pendingRevisionApproval(ctx, ref.runId)) !== undefined;
  const move = decideReplanWatch({
    run: { moving: run.status === 'running', terminal: run.terminal !== undefined, cancelling: isCancelling(run) },
    ...(step === undefined ? {} : { step }),
    generation: ref.generation,
    declined,
    revisionPending,
    now: ctx.deps.clock().getTime(),
    watchSeconds: watchSeconds(ctx),
  });
  return { move, step, declined: declined && run.status === 'running' };
}

/** RunStep's answer for a watch: wait for the time left, or done once the failure is answered. */
export async function replanWatchNext(ctx: Interpreter, request: RunStepRequest): Promise<StepNext> {
  // Back from a wait whose token someone answered: nothing ever does, so the watch has nothing left to do.
  if (request.previous !== null) return DONE;
  const { move } = await look(ctx, request);
  if (move.kind === 'answered') return DONE;
  // Unanswered already (a watch started late): a wait of a second, and DecisionExpired declines it.
  const seconds = move.kind === 'wait' ? move.seconds : 1;
  return { action: 'await', attempt: 1, kind: 'replan', timeoutSeconds: seconds };
}

/** AwaitDecision's task for a watch: the token is held by nobody, so the wait lasts until its timeout. */
export async function requestReplanWatch(): Promise<ApprovalRequested> {
  return {};
}

/**
 * DecisionExpired of a watch: a failure the replanner left unanswered is taken and declined, and the run settles.
 * A failure the replanner holds is its own to answer. Repeatable: a repeat after a decline that landed settles the
 * run again (the decline's own settle may not have happened).
 */
export async function expireReplanWatch(ctx: Interpreter, ref: StepRef): Promise<ExpireResult> {
  const { store } = ctx.deps;
  const { move, step, declined } = await look(ctx, ref);
  if (declined) await settleRun(ctx, ref.runId);
  if (move.kind !== 'unanswered' || step === undefined) return { outcome: 'noop' };
  const failure = { runId: ref.runId, stepId: step.stepId, generation: ref.generation };
  if (!(await tryAgain(DECLINE_POLICY, () => takeFailure(store, failure)))) return { outcome: 'noop' };
  try {
    await tryAgain(DECLINE_POLICY, () =>
      declineFailure(ctx, step, {
        code: REPLAN_UNANSWERED_CODE,
        message: `the replanner did not answer the failure within ${watchSeconds(ctx)} s of it`,
      }),
    );
  } catch (error) {
    // Given back, so the machine's retry of DecisionExpired (or a late delivery to the replanner) takes it again.
    await releaseFailure(store, failure);
    throw error;
  }
  return { outcome: 'failed' };
}
