/**
 * How a run ends: steps that end a line of work are recorded on the run's frontier, whoever completes it looks at
 * the run as a whole (`settleRun`, with the one terminal decision of engine/terminal.ts), and a decision is written
 * with its RunFinished announcement (`finishRun`, or `pauseRun` for a person) and answered to the run machine's
 * waiting task token (`answerWaiter`). Each is safe to repeat.
 */

import { compensationPending, decideCompensation } from '../engine/compensation.ts';
import { replanWatchStepId } from '../engine/replan/watch.ts';
import {
  isBeingCancelled,
  isTerminalRunStatus,
  LIVE_RUN_STATUSES,
  letsStepsMove,
  STEP_MOVING_RUN_STATUSES,
} from '../engine/statuses.ts';
import { decideTerminal, describeTerminal, type TerminalDecision } from '../engine/terminal.ts';
import { isConflictError } from '../errors.ts';
import type { FailurePolicy } from '../plan/schema.ts';
import { stepExecutionInput, stepExecutionName } from '../ports/executions.ts';
import type { RunRecord, StepRecord, TerminalRecord } from '../ports/store.ts';
import { closeLeftAttempts } from './attempt-closing.ts';
import { announceExhaustion, runBudgetState } from './budget-state.ts';
import { compensationInput } from './compensation-view.ts';
import { awaitsReplan, declinedReplans } from './coordinator-replan.ts';
import { event, type Interpreter, type LoadedPlan } from './interpreter.ts';

type StepRef = Pick<StepRecord, 'runId' | 'stepId' | 'generation'>;

/** The error a cancellation closes open steps with. */
export const CANCELLED_ERROR = { code: 'E_CANCELLED', message: 'the run was cancelled', retryable: false } as const;

/** The frontier key of a step generation. */
const frontierKey = (step: StepRef): string => `${step.stepId}#${step.generation}`;

/**
 * Records steps that ended a line of work on the run's frontier; once every sink of the plan (a step nothing waits
 * for) is on it, the run may be over and is looked at as a whole (settleRun), by whoever completed the set — not by
 * every step, and not by every sink. A later generation of a sink makes an extra look, never a missed one.
 */
export async function checkRunEnd(
  ctx: Interpreter,
  loaded: LoadedPlan,
  runId: string,
  ended: readonly StepRef[],
): Promise<void> {
  const frontier = await recordEnded(ctx, runId, ended);
  const settled = new Set(frontier.map((key) => key.slice(0, key.lastIndexOf('#'))));
  if (loaded.sinks.every((sink) => settled.has(sink))) await settleRun(ctx, runId);
}

/**
 * Puts steps that ended on the run's frontier without a look at the run (closed with their ended run, failed
 * under `fail-run`): were the run reopened later, a sink missing from it would keep every later look from
 * happening, and the reopened run would stay open once its new generations ended. Returns the frontier.
 */
export function recordEnded(ctx: Interpreter, runId: string, ended: readonly StepRef[]): Promise<readonly string[]> {
  return ctx.deps.store.recordFrontier(runId, ended.map(frontierKey));
}

/** How many frontier keys one write takes off: a request stays small however many steps a move ended. */
const FORGET_SLICE = 500;

/**
 * Takes generations a move ended off the run's frontier. Left on it, a moved sink would count as settled while its
 * new generation is open, and every step that ends after the move would look at the whole run (a 2,000-step
 * invalidation made 2,000 reads of 2,000 steps). A forget that fails, or an old key recorded late, costs only such
 * extra looks: never a missed one.
 */
export async function forgetEnded(ctx: Interpreter, runId: string, ended: readonly StepRef[]): Promise<void> {
  const keys = ended.map(frontierKey);
  for (let at = 0; at < keys.length; at += FORGET_SLICE)
    await ctx.deps.store.forgetFrontier(runId, keys.slice(at, at + FORGET_SLICE));
}

/** Answers the run machine's wait; a token already answered or expired is no error (someone else finished). */
export async function answerWaiter(ctx: Interpreter, run: RunRecord | undefined): Promise<boolean> {
  if (!run?.waiterToken) return false;
  try {
    await ctx.deps.executions.sendTaskSuccess(run.waiterToken, { finished: true });
    return true;
  } catch (error) {
    // A closed token (answered, timed out, execution over) is a ConflictError: the waiter has moved on.
    if (!isConflictError(error))
      console.error('cairn coordinator: answering the run waiter failed', { runId: run.runId, error });
    return false;
  }
}

/** Writes a terminal decision on a live run (one writer wins), publishes RunFinished and answers the waiter. */
export async function finishRun(
  ctx: Interpreter,
  runId: string,
  decision: Exclude<TerminalDecision, { state: 'continue' }>,
  options: { from?: readonly RunRecord['status'][]; answer?: boolean; evidence?: Record<string, unknown> } = {},
): Promise<RunRecord | undefined> {
  const now = ctx.now();
  const terminal: TerminalRecord = {
    state: decision.state,
    reason: decision.reason,
    evidence: { ...decision.evidence, ...options.evidence, summary: describeTerminal(decision) },
    at: now,
  };
  const updated = await writeEnding(ctx, runId, options.from ?? LIVE_RUN_STATUSES, terminal);
  if (updated && options.answer !== false) await answerWaiter(ctx, updated);
  return updated;
}

/**
 * The one write every ending makes: the run takes the terminal record's state, from one of `from` (one writer wins),
 * and RunFinished travels with it. Answering the waiter is the caller's next step.
 */
export function writeEnding(
  ctx: Interpreter,
  runId: string,
  from: readonly RunRecord['status'][],
  terminal: TerminalRecord,
): Promise<RunRecord | undefined> {
  return ctx.updateRun(
    runId,
    from,
    { status: terminal.state, terminal, updatedAt: terminal.at },
    { events: [event('RunFinished', { runId, state: terminal.state, reason: terminal.reason })] },
  );
}

/** Pauses that hold a run for a person (pauseRun's reasons): nothing but a reopening moves such a run on. */
const HELD_REASONS: ReadonlySet<string> = new Set([
  'max_replans',
  'no_progress',
  'approval_expired',
  'budget_exhausted',
  'rollback_required',
  'compensation_failed',
  'failure_paused',
]);

/** Why a run is held for a person: pauseRun's reasons. */
export type HeldReason =
  | 'max_replans'
  | 'no_progress'
  | 'approval_expired'
  | 'budget_exhausted'
  | 'rollback_required'
  | 'compensation_failed'
  | 'failure_paused';

/** Whether the run already holds this pause: a repeat's own earlier write (its answer lost), or an equal one. */
export const holdsPause = (run: RunRecord, reason: HeldReason): boolean =>
  run.status === 'paused' && run.terminal?.state === 'paused' && run.terminal.reason === reason;

/**
 * Leaves a live run paused for a person, with a terminal record saying why (the replan limit, no progress, an
 * approval's timeout under the `pause` policy, a compensation that failed or a rollbackHint to act on): RunFinished
 * (state paused) is published and the waiter answered. Open steps are left as they are. A run that already holds a
 * terminal record keeps it; when that record is this same pause, the repeat still answers the waiter, since the
 * earlier call may have lost its answer between the write and the answer (the write is not made again).
 */
export async function pauseRun(
  ctx: Interpreter,
  runId: string,
  reason: HeldReason,
  evidence: Record<string, unknown>,
): Promise<RunRecord | undefined> {
  const run = await ctx.deps.store.getRun(runId);
  if (!run) return undefined;
  if (holdsPause(run, reason)) {
    await answerWaiter(ctx, run);
    return run;
  }
  if (run.terminal !== undefined || !letsStepsMove(run.status)) return undefined;
  const terminal: TerminalRecord = { state: 'paused', reason, evidence, at: ctx.now() };
  const updated = await writeEnding(ctx, runId, STEP_MOVING_RUN_STATUSES, terminal);
  if (updated) await answerWaiter(ctx, updated);
  return updated;
}

const policyMaps = new WeakMap<LoadedPlan, ReadonlyMap<string, FailurePolicy | undefined>>();

/** The `onFailure` policy of each step of a plan revision (computed once per loaded revision). */
export function failurePolicies(loaded: LoadedPlan): ReadonlyMap<string, FailurePolicy | undefined> {
  let policies = policyMaps.get(loaded);
  if (!policies) {
    policies = new Map(loaded.plan.steps.filter((s) => s.onFailure !== undefined).map((s) => [s.id, s.onFailure]));
    policyMaps.set(loaded, policies);
  }
  return policies;
}

/** Whether the replanner answers a final failure of the step: under the default policy or `replan`. */
export const isReplannable = (policies: ReadonlyMap<string, FailurePolicy | undefined>, stepId: string): boolean => {
  const policy = policies.get(stepId);
  return policy === undefined || policy === 'retry-then-fail' || policy === 'replan';
};

/** Whether the run waits for the replanner's answer to this final failure: the steps settleRun's awaitsReplan looks at. */
export function awaitsReplanAnswer(ctx: Interpreter, loaded: LoadedPlan, step: StepRecord): boolean {
  if ((ctx.deps.config.maxReplans ?? 0) <= 0) return false;
  if (loaded.byId.get(step.stepId)?.segment !== undefined) return false;
  return isReplannable(failurePolicies(loaded), step.stepId);
}

/**
 * Starts the replan watch of `step`'s final failure (engine/replan/watch.ts) when the run waits for the replanner's
 * answer to it: the watch ends that wait if no answer comes. Named from run, synthetic step and generation, so a
 * repeated follow-up starts nothing twice. (The watch's own answers are replan-watch.ts's.)
 */
export async function startReplanWatch(ctx: Interpreter, loaded: LoadedPlan, step: StepRecord): Promise<void> {
  if (!awaitsReplanAnswer(ctx, loaded, step)) return;
  const ref = { runId: step.runId, stepId: replanWatchStepId(step.stepId), generation: step.generation };
  await ctx.deps.executions.start(
    'step',
    stepExecutionName(ref.runId, ref.stepId, ref.generation),
    stepExecutionInput(ref),
  );
}

/** Decides whether the run is finished now and, if so, records it. Safe to call after any step transition. */
export async function settleRun(ctx: Interpreter, runId: string): Promise<void> {
  const run = await ctx.deps.store.getRun(runId);
  if (!run || run.status === 'planning') return;
  if (isTerminalRunStatus(run.status)) {
    // A repeat after a crash between writing the terminal state and answering the waiter: answer again. A cancelled
    // run too: a cancellation with compensation ends here, and nobody else answers for it (a closed token is no error).
    await answerWaiter(ctx, run);
    return;
  }
  // Held for a person (replan limit, no progress, an approval's timeout): only a person moves it on, by reopening
  // it (which drops the record); a step that finishes meanwhile does not decide it. A run paused at its deadline
  // still finishes when the person it waits for decides.
  if (run.terminal !== undefined && HELD_REASONS.has(run.terminal.reason)) {
    await answerWaiter(ctx, run);
    return;
  }
  const loaded = await ctx.plan(run);
  const steps = await ctx.deps.store.listSteps(runId);
  const expected = loaded.graph.executableIds();
  const byId = new Map(steps.map((s) => [s.stepId, s]));
  // Compensation under way (or due, or waiting for the segment's steps in flight): the run is not over yet; the
  // compensation's end settles it again.
  const compensation = decideCompensation(compensationInput(ctx, run, loaded, byId));
  if (compensationPending(compensation)) return;
  // A cancellation marks the run before it closes the steps: the mark, not a step it closed, says the run is being
  // cancelled (a reopen clears the mark and keeps the closed step, whose run must not end cancelled for it).
  const cancelling = run.cancelCompensation === true || run.cancelling === true;
  // Over budget, the steps already in flight finish first (no new one starts: the claim refuses); then the run ends.
  const budget = runBudgetState(loaded.plan, run, ctx.now());
  const inFlight = steps.some((s) => s.status === 'running' || s.status === 'retrying');
  // A cancel begun and not through its close: ended now, the run would announce a step in flight ending after its
  // RunFinished. The cancel closes that step and ends the run; had it died, the step's own end looks again, or a
  // claim or a retry the mark refuses finishes the cancel.
  if (isBeingCancelled(run) && inFlight) return;
  const stopping = budget !== undefined && !inFlight ? { budgetExhausted: budget.detail } : {};
  const policies = failurePolicies(loaded);
  const decision = decideTerminal({ expected, steps: byId, cancelled: cancelling, policies, ...stopping });
  if (decision.state === 'continue') return;
  if (decision.reason === 'budget_exhausted' && budget !== undefined) {
    const next = await announceExhaustion(ctx, run, loaded.plan, budget);
    if (next.action === 'replan') return; // the replanner's answer settles the run again
    const replan = next.action === 'fail' ? next.replan : undefined;
    const evidence = { budget: budget.evidence, ...(replan === undefined ? {} : { budgetReplan: replan }) };
    await closeLeftAttempts(ctx, steps);
    if (next.action === 'pause')
      await pauseRun(ctx, runId, 'budget_exhausted', {
        ...decision.evidence,
        summary: describeTerminal(decision),
        ...evidence,
      });
    else await finishRun(ctx, runId, decision, { from: STEP_MOVING_RUN_STATUSES, evidence });
    return;
  }
  // A final failure the replanner may still answer: the run goes on (failed step `failed`, downstream `blocked`).
  // A failure inside a segment is answered by the segment's compensation instead, and a step whose onFailure says
  // what its failure does is not replanned.
  const replannable = expected.filter(
    (id) => loaded.byId.get(id)?.segment === undefined && isReplannable(policies, id),
  );
  if (decision.state === 'failed' && awaitsReplan(run, byId, replannable, ctx.deps.config.maxReplans)) return;
  // The run ends now: no attempt of a generation that ended in flight may stay `running` in it (its closer's write may
  // have failed, or it looked before the claim). The ending is written only once they are closed, so whoever settles
  // the run again repeats a sweep that failed.
  await closeLeftAttempts(ctx, steps);
  const declined = declinedReplans(run);
  const compensated = compensation.kind === 'done' ? compensation.compensated : [];
  await finishRun(ctx, runId, decision, {
    from: STEP_MOVING_RUN_STATUSES,
    evidence: {
      ...(declined.length === 0 ? {} : { replans: declined }),
      ...(compensated.length === 0 ? {} : { compensated }),
      // A cancellation with compensation ends here, after the last compensation: it names who asked, as cancelRun does.
      ...(run.cancelCompensation === true && decision.state === 'cancelled'
        ? { requestedBy: run.cancelRequestedBy ?? null }
        : {}),
    },
  });
}
