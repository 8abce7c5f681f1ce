/**
 * Run-level coordinator actions: reject an invalid plan, fail a run whose planning crashed, start a run (revision 1,
 * step records, root steps), hold the run machine's waiter token and finalize (deadline). Cancellation is in cancellation.ts.
 */
import { initialStepRecords, inStartOrder, stepsToStart } from '../engine/scheduling.ts';
import { isBeingCancelled, isTerminalRunStatus, LIVE_RUN_STATUSES } from '../engine/statuses.ts';
import { decideTerminal } from '../engine/terminal.ts';
import { isConflictError } from '../errors.ts';
import type { Plan, StepError } from '../plan/schema.ts';
import { RUN_STATUSES } from '../plan/schema.ts';
import { validateUnlessStamped } from '../plan/stamp.ts';
import type { RunRecord, StepRecord, TerminalRecord } from '../ports/store.ts';
import { closeLeftAttempts } from './attempt-closing.ts';
import { cancelRun, recordedRequest } from './cancellation.ts';
import type {
  AwaitRunRequest,
  FailRunRequest,
  FinalizeRunRequest,
  RejectPlanRequest,
  RunOutcome,
  StartRunResult,
} from './coordinator-types.ts';
import { listRunSteps } from './initial-steps.ts';
import { describeWorkflowError, event, type Interpreter } from './interpreter.ts';
import { persistRevision } from './revisions.ts';
import { answerWaiter, CANCELLED_ERROR, failurePolicies, finishRun, settleRun, writeEnding } from './run-end.ts';
import { currentRunExecutionName } from './run-reopen.ts';
import { closeOpenSteps, startStep } from './step-follow-ups.ts';

const RUN_ENDED_ERROR = { code: 'E_RUN_ENDED', message: 'the run ended', retryable: false } as const;

const outcome = (run: RunRecord): RunOutcome => ({ runId: run.runId, status: run.status, terminal: run.terminal });

const INITIAL_PLAN_REASON = 'initial plan';

/** Fails a run that never started executing (planning failed, plan invalid); a finished run is left as it is. */
async function failBeforeStart(
  ctx: Interpreter,
  runId: string,
  reason: string,
  evidence: Record<string, unknown>,
): Promise<RunOutcome> {
  const run = await ctx.getRun(runId);
  // The word of the run's first execution about planning and starting it, which a reopened run has outlived: a
  // repeat that comes after an invalidation reopened the run (its first try's answer was lost) must not close the
  // new generations nor end the new opening. Only the first execution plans and starts; a reopening resumes.
  if ((run.reopened ?? 0) > 0) return outcome(run);
  // A repeat after a lost answer finds its own failure written: what follows the write is still to do.
  if (run.status === 'failed' && run.terminal?.reason === reason) return afterFailedBeforeStart(ctx, run);
  if (isTerminalRunStatus(run.status)) return outcome(run);
  // StartRun failing half-way (its Retry spent once the run was running) leads here too: the steps it started are
  // closed before the ending is written, as a cancellation does, so no claim that read the run as running lands,
  // and nothing of the run is announced, after its RunFinished.
  if (run.revision >= 1) await closeOpenSteps(ctx, runId, RUN_ENDED_ERROR);
  const terminal: TerminalRecord = { state: 'failed', reason, evidence, at: ctx.now() };
  const updated = await writeEnding(ctx, runId, LIVE_RUN_STATUSES, terminal);
  if (updated) return afterFailedBeforeStart(ctx, updated);
  return outcome(await ctx.getRun(runId));
}

/** What follows failBeforeStart's write, redone by a repeat: no step runs on, the waiter (if any) is answered. */
async function afterFailedBeforeStart(ctx: Interpreter, run: RunRecord): Promise<RunOutcome> {
  // StartRun failing half-way leads here too: steps it already started must not run on. (A run failed while
  // planning has no steps: the list is empty.)
  if (run.revision >= 1) await closeOpenSteps(ctx, run.runId, RUN_ENDED_ERROR);
  await answerWaiter(ctx, run);
  return outcome(run);
}

export function rejectPlan(ctx: Interpreter, request: RejectPlanRequest): Promise<RunOutcome> {
  return failBeforeStart(ctx, request.runId, 'invalid_plan', { errors: request.errors.map((e) => ({ ...e })) });
}

export function failRun(ctx: Interpreter, request: FailRunRequest): Promise<RunOutcome> {
  return failBeforeStart(ctx, request.runId, 'planning_failed', { error: describeWorkflowError(request.error) });
}

/** The plan to start with: the stored revision 1 if an earlier attempt wrote it, else the validated candidate. */
async function initialPlan(
  ctx: Interpreter,
  run: RunRecord,
): Promise<{ plan: Plan } | { errors: RejectPlanRequest['errors'] }> {
  const { store, catalog, config } = ctx.deps;
  const stored = await store.getPlanRevision(run.runId, 1);
  if (stored) return { plan: stored.plan };
  const candidate = run.candidatePlan ?? run.submittedPlan;
  if (candidate === undefined)
    return { errors: [{ code: 'E_FIELD', path: '', message: 'the run has no plan to start' }] };
  const limits = { maxSteps: config.maxSteps, maxDepth: config.maxDepth };
  const checked = validateUnlessStamped(candidate, run.planStamp, catalog, limits, 1);
  if (!checked.valid) return { errors: checked.errors };
  try {
    await persistRevision(ctx, run.runId, checked.plan, INITIAL_PLAN_REASON);
    return { plan: checked.plan };
  } catch (error) {
    if (!isConflictError(error)) throw error;
    const winner = await store.getPlanRevision(run.runId, 1);
    return winner ? { plan: winner.plan } : { plan: checked.plan };
  }
}

/**
 * Persists revision 1, creates the records of the steps with nothing to wait for, moves the run to running and starts
 * those steps, then creates the records of the others (shared/services/initial-steps.ts: whoever needs one of them
 * before it is written writes it), so that the first step does not wait for one write per step of the plan. A
 * repeat finds the revision and records in place, writes the missing ones and only (re)starts what is due (same names).
 */
export async function startRun(ctx: Interpreter, request: { runId: string }): Promise<StartRunResult> {
  const { store, config } = ctx.deps;
  const result = { deadlineSeconds: config.runDeadlineSeconds };
  let run = await ctx.getRun(request.runId);
  if (isTerminalRunStatus(run.status)) return result;
  // The records this call wrote before it won the move to `running`: no step starts before the run runs, so they
  // need not be read back (whatever moved one since, a cancel, did so with a condition startStep's writes respect).
  let fresh: StepRecord[] | undefined;
  // The records of the steps that wait for something, written once the first steps are started.
  let behind: StepRecord[] = [];
  if (run.status === 'planning') {
    const initial = await initialPlan(ctx, run);
    if ('errors' in initial) {
      await rejectPlan(ctx, { runId: run.runId, errors: initial.errors });
      return result;
    }
    const now = ctx.now();
    const records = initialStepRecords(initial.plan, { runId: run.runId, now });
    const first = records.filter((r) => r.remaining === 0);
    await store.putSteps(first);
    // Revision 1 holds the plan from now on: the run record, read by every step action, sheds its copies.
    const started = await ctx.updateRun(
      run.runId,
      ['planning'],
      { status: 'running', revision: 1, updatedAt: now },
      {
        remove: ['submittedPlan', 'candidatePlan', 'planStamp'],
        events: [
          event('RunStarted', { runId: run.runId, objective: run.objective, revision: 1, steps: records.length }),
        ],
      },
    );
    if (started) {
      run = started;
      fresh = first;
      behind = inStartOrder(records.filter((r) => r.remaining > 0));
    } else {
      run = await ctx.getRun(run.runId);
      if (run.status !== 'running') {
        // Cancelled while the records were being written: they must not wait forever.
        if (run.status === 'cancelled') await closeOpenSteps(ctx, run.runId, CANCELLED_ERROR);
        return result;
      }
    }
  }
  const steps = fresh ?? (await listRunSteps(ctx, run.runId));
  const due = new Set(stepsToStart(steps));
  // Every one is waited for, a failure too: nothing of this call goes on after it answers.
  const settled = await Promise.allSettled([
    ...steps.filter((s) => due.has(s.stepId)).map((s) => startStep(ctx, s)),
    store.putSteps(behind),
  ]);
  const failure = settled.find((r) => r.status === 'rejected');
  if (failure) throw failure.reason;
  // A plan with nothing to run settles at once (and never as complete).
  if (due.size === 0) await settleRun(ctx, run.runId);
  return result;
}

/**
 * Stores the run machine's waiter token. The token write and a finisher's terminal write hit the same item, so
 * either the finisher sees the token or this call sees the finished run and answers at once.
 */
export async function awaitRun(ctx: Interpreter, request: AwaitRunRequest): Promise<{ answered: boolean }> {
  const updated = await ctx.deps.store.updateRun(request.runId, RUN_STATUSES, {
    waiterToken: request.taskToken,
    updatedAt: ctx.now(),
  });
  if (!updated) await ctx.getRun(request.runId); // throws NotFoundError for an unknown run
  if (updated && (isTerminalRunStatus(updated.status) || updated.terminal !== undefined))
    return { answered: await answerWaiter(ctx, updated) };
  return { answered: false };
}

const DEADLINE_ERROR = { code: 'E_DEADLINE', message: 'the run deadline passed', retryable: false } as const;

/** The failures only finalizeRun writes, and the error each closes the open steps with. */
const FINALIZE_ERRORS: ReadonlyMap<string, StepError> = new Map<string, StepError>([
  ['deadline', DEADLINE_ERROR],
  ['aborted', RUN_ENDED_ERROR],
]);

/**
 * The run machine's last word. A run already finished is left as it is; one whose cancel began is cancelled. At the
 * deadline the run fails (open steps cancelled, their executions stopped) or, when only people are left to answer,
 * is left paused for them. When the
 * wait failed for another reason nothing will move the run any more, so it is decided with what is known.
 */
export async function finalizeRun(ctx: Interpreter, request: FinalizeRunRequest): Promise<RunOutcome> {
  const run = await ctx.getRun(request.runId);
  // A repeat after a lost answer finds the failure it wrote: the open steps it was to close are closed now.
  const ownFailure = run.status === 'failed' ? FINALIZE_ERRORS.get(run.terminal?.reason ?? '') : undefined;
  if (ownFailure !== undefined) await closeOpenSteps(ctx, run.runId, ownFailure);
  if (isTerminalRunStatus(run.status) || run.terminal !== undefined) return outcome(run);
  // After a reopening, only the new execution may finalize: the old one's late word must not end the new opening.
  const outlived = (run.reopened ?? 0) > 0 && typeof request.execution === 'string';
  if (outlived && request.execution !== currentRunExecutionName(run)) return outcome(run);
  if (run.status === 'planning') return failRun(ctx, { runId: run.runId, error: request.error ?? request.timedOut });
  // A cancel that died after its mark: the run ends as it was asked to, cancelled, not failed or paused for a person.
  if (isBeingCancelled(run)) return cancelRun(ctx, run.runId, recordedRequest(run));
  const loaded = await ctx.plan(run);
  const steps = await ctx.deps.store.listSteps(run.runId);
  const timedOut = request.timedOut !== undefined && request.timedOut !== null;
  const decision = decideTerminal({
    expected: loaded.graph.executableIds(),
    steps: new Map(steps.map((s) => [s.stepId, s])),
    policies: failurePolicies(loaded),
    timedOut,
    aborted:
      request.error === undefined || request.error === null
        ? 'the run machine stopped waiting before the run finished'
        : `the run's wait failed: ${describeWorkflowError(request.error).message}`,
  });
  if (decision.state === 'continue') return outcome(run);
  // A failure closes the steps before the ending is written, as a cancellation does: no step in flight succeeds, and
  // nothing of the run is announced, after its RunFinished. (A repeat after a lost answer closes them again above.)
  if (decision.state === 'failed') await closeOpenSteps(ctx, run.runId, timedOut ? DEADLINE_ERROR : RUN_ENDED_ERROR);
  else await closeLeftAttempts(ctx, steps);
  // The waiter has timed out or failed: there is no one left to answer.
  const finished = await finishRun(ctx, run.runId, decision, { answer: false });
  return outcome(finished ?? (await ctx.getRun(run.runId)));
}
