/**
 * People in the loop: a human gate or a low-confidence review waits on a task token held by an approval record;
 * a missing decision expires it; the decision itself is judged by RunStep (step/run-step.ts).
 * Exactly one pending approval exists per step generation and request; deciding it is the API's job (issue 4).
 *
 * A plan's `budget.maxSeconds` bounds the wait too (engine/step-seconds.ts `approvalWindow`): the approval's deadline,
 * and the task-token wait's timeout, are the run's seconds left when those end first. Expired there, the approval
 * closes saying so and the step fails as stopped by the run's budget (E_BUDGET_EXHAUSTED, scope `run`), so the run
 * ends as its `onExhausted` says (failed or paused, `budget_exhausted`) rather than at the approval's own timeout.
 */

import { approvalRequestMove, type DecisionReply } from '../engine/approval-request.ts';
import { isRunBudgetStop } from '../engine/budget-replan.ts';
import { upstreamOutputs } from '../engine/scheduling.ts';
import { IN_FLIGHT_STEP_STATUSES, letsStepsMove } from '../engine/statuses.ts';
import { transitionCondition } from '../engine/step-lifecycle.ts';
import { deadlineByBudget, timeExhausted } from '../engine/step-seconds.ts';
import { traceEntry } from '../engine/trace.ts';
import { isConflictError } from '../errors.ts';
import type { Plan, StepError } from '../plan/schema.ts';
import type { ApprovalRecord, AttemptRecord, RunRecord, StepRecord } from '../ports/store.ts';
import { recordApprovalWait } from './coordinator-metrics.ts';
import type {
  ApprovalKind,
  ApprovalRequested,
  ExpireApprovalRequest,
  ExpireResult,
  RequestApprovalRequest,
} from './coordinator-types.ts';
import { event, type Interpreter, isCurrent } from './interpreter.ts';
import { pauseRun } from './run-end.ts';
import { approvalTimeoutSeconds, stepApprovalWindow } from './step/step-records.ts';
import { afterFailure, closeRunningAttempt, failStep } from './step-follow-ups.ts';

export const APPROVAL_EXPIRED_CODE = 'E_APPROVAL_EXPIRED';
/** The terminal reason of a run paused by an approval's `pause` timeout policy. */
export const APPROVAL_EXPIRED_REASON = 'approval_expired';
// A request closed without a decision (expired) makes way for the next id; far more than any run will need.
const MAX_REQUESTS_PER_ATTEMPT = 100;

/** Deterministic approval ids: a repeated request finds its record instead of creating a second one. */
export const approvalId = (
  ref: { runId: string; stepId: string; generation: number },
  kind: string,
  attempt: number,
  n: number,
) => `${ref.runId}.${ref.stepId}.g${ref.generation}.${kind}.a${attempt}.${n}`;

const attemptsOf = async (ctx: Interpreter, step: StepRecord): Promise<AttemptRecord[]> =>
  (await ctx.deps.store.listAttempts(step.runId, step.stepId))
    .filter((a) => a.generation === step.generation)
    .sort((a, b) => a.attempt - b.attempt);

/** Tells a waiting step execution that its step no longer waits for a person: verify then fails it as stale. */
async function releaseStaleWait(ctx: Interpreter, taskToken: string): Promise<ApprovalRequested> {
  try {
    await ctx.deps.executions.sendTaskSuccess(taskToken, {
      decision: 'reject',
      comment: 'the step no longer waits for a decision',
      by: 'cairn',
    });
  } catch (error) {
    // A closed token (the wait timed out, was stopped or answered meanwhile) is what a stale wait is expected to have.
    if (!isConflictError(error)) console.error('cairn coordinator: releasing a stale approval wait failed', { error });
  }
  return {};
}

/** Answers a wait with a decision a person already recorded on its request. */
async function answerWait(
  ctx: Interpreter,
  taskToken: string,
  reply: DecisionReply,
  id: string,
): Promise<ApprovalRequested> {
  try {
    await ctx.deps.executions.sendTaskSuccess(taskToken, { ...reply });
  } catch (error) {
    // A closed token: the wait ended meanwhile (its timeout, a stop). Anything else fails the Task, whose retry (on
    // a new token) is answered the same way.
    if (!isConflictError(error)) throw error;
  }
  return { approvalId: id };
}

/**
 * Creates (once) the approval record holding the task token, the question, the step's input and upstream outputs,
 * the held result of a review and the deadline; the step shows `awaiting_approval`.
 */
export async function requestApproval(
  ctx: Interpreter,
  request: RequestApprovalRequest & { readonly kind: ApprovalKind },
): Promise<ApprovalRequested> {
  const { store, config } = ctx.deps;
  const { runId, stepId, generation, kind, taskToken } = request;
  const { run, step } = await ctx.loadStep(runId, stepId);
  const live = letsStepsMove(run.status);
  if (!isCurrent(step, generation) || !IN_FLIGHT_STEP_STATUSES.includes(step.status) || !live)
    return releaseStaleWait(ctx, taskToken);
  const loaded = await ctx.plan(run);
  const planStep = loaded.byId.get(stepId);
  const attempts = await attemptsOf(ctx, step);
  const held = kind === 'review' ? attempts.filter((a) => a.output !== undefined).at(-1) : undefined;
  const attempt = held?.attempt ?? Math.max(1, step.attempts);
  const now = ctx.now();
  const window = stepApprovalWindow(planStep, config, { run, plan: loaded }, ctx.now());
  const deadline = new Date(ctx.deps.clock().getTime() + window.seconds * 1000).toISOString();
  const title = planStep?.title ?? stepId;
  const steps = new Map((await store.getSteps(runId, step.upstream)).map((s) => [s.stepId, s]));
  let id: string | undefined;
  /** This request's record, written (or found written with this token) by this call. */
  let mine: ApprovalRecord | undefined;
  for (let n = 1; n <= MAX_REQUESTS_PER_ATTEMPT && id === undefined; n++) {
    const candidate = approvalId(step, kind, attempt, n);
    const existing = await store.getApproval(candidate);
    const move = approvalRequestMove(existing, taskToken);
    if (move.kind === 'mine') {
      id = candidate;
      mine = existing;
    } else if (move.kind === 'take-over') {
      // A retried wait (its first request's answer was lost): the same request, asked once, now on this token.
      mine = await store.moveApprovalWait(candidate, taskToken);
      if (mine) id = candidate;
      else n -= 1; // decided meanwhile: look at it again
    } else if (move.kind === 'answer') {
      // Decided while the wait was retried: its old token was gone, so the decision answers this one.
      return answerWait(ctx, taskToken, move.reply, candidate);
    } else if (move.kind === 'create') {
      const record: ApprovalRecord = {
        approvalId: candidate,
        runId,
        stepId,
        generation,
        kind,
        status: 'pending',
        question:
          kind === 'approval'
            ? (planStep?.approval?.question ?? `Approve "${title}"?`)
            : `Review the result of "${title}": its confidence is below ${planStep?.confidenceThreshold ?? 'the threshold'}`,
        input: attempts[0]?.input ?? null,
        upstreamOutputs: upstreamOutputs(step.upstream, steps),
        ...(held ? { heldOutput: held.output, heldConfidence: held.confidence ?? null } : {}),
        taskToken,
        createdAt: now,
        deadline,
      };
      if (await store.putApproval(record)) {
        id = candidate;
        mine = record;
      } else n -= 1; // someone wrote this id meanwhile: look at it again
    }
  }
  if (id === undefined || mine === undefined) return releaseStaleWait(ctx, taskToken);
  // ApprovalRequested travels with the step's write (its trace says which request it waits for), which holds only
  // while the step still waits in flight: a step a cancellation closed (before it wrote RunFinished) announces
  // nothing, and its request is expired instead. A repeat that finds that write made has announced it already.
  const waiting = `waiting for ${kind} ${id}`;
  if (step.trace.some((entry) => entry.text === waiting)) return { approvalId: id };
  const requested = event('ApprovalRequested', {
    runId,
    stepId,
    generation,
    approvalId: id,
    kind,
    deadline: mine.deadline,
  });
  const moved = await ctx.transitionStep(
    runId,
    stepId,
    transitionCondition(step.status === 'awaiting_approval' ? 'note' : 'hold', generation),
    {
      ...(step.status === 'awaiting_approval' ? {} : { status: 'awaiting_approval' as const }),
      appendTrace: [traceEntry('judge', waiting, now)],
    },
    [requested],
  );
  if (moved) return { approvalId: id };
  const current = await store.getStep(runId, stepId);
  if (isCurrent(current, generation) && current.status === 'awaiting_approval') return { approvalId: id };
  await store.decideApproval(id, { status: 'expired', decidedAt: now, comment: 'the step no longer waits' });
  return releaseStaleWait(ctx, taskToken);
}

/** No decision before the deadline: the approval expires and the step fails for good (its downstream blocked). */
export async function expireApproval(ctx: Interpreter, request: ExpireApprovalRequest): Promise<ExpireResult> {
  const { store } = ctx.deps;
  const { runId, stepId, generation } = request;
  const { run, step } = await ctx.loadStep(runId, stepId);
  if (!isCurrent(step, generation)) return { outcome: 'noop' };
  const loaded = await ctx.plan(run);
  const failedHere = step.error && (step.error.code === APPROVAL_EXPIRED_CODE || isRunBudgetStop(step.error));
  if (step.status === 'failed' && step.error && failedHere) {
    await closeRunningAttempt(ctx, step, { kind: 'expired', error: step.error });
    await afterFailure(ctx, loaded, step);
    return { outcome: 'failed' };
  }
  if (!IN_FLIGHT_STEP_STATUSES.includes(step.status)) return { outcome: 'noop' };
  const now = ctx.now();
  const pending = (await store.listRunApprovals(runId)).filter(
    (a) =>
      a.status === 'pending' &&
      a.stepId === stepId &&
      a.generation === generation &&
      (request.kind === undefined || a.kind === request.kind),
  );
  const kind = request.kind ?? pending[0]?.kind ?? 'approval';
  const planStep = loaded.byId.get(stepId);
  const ownSeconds = approvalTimeoutSeconds(planStep, ctx.deps.config);
  const budgetStop = budgetExpiry(loaded.plan, run, pending[0], ownSeconds, now, `${kind} of ${stepId}`);
  for (const approval of pending) {
    const decided = event('ApprovalDecided', {
      runId,
      stepId,
      generation,
      approvalId: approval.approvalId,
      decision: 'expired',
    });
    const expired = await store.decideApproval(
      approval.approvalId,
      {
        status: 'expired',
        decidedAt: now,
        comment: budgetStop === undefined ? 'no decision before the deadline' : `closed: ${budgetStop.message}`,
      },
      ctx.announce(runId, [decided]),
    );
    if (expired) recordApprovalWait(ctx.deps.metrics, approval, now, 'expired');
  }
  if (budgetStop !== undefined) {
    // The run's budget decides what follows (its onExhausted), not the approval's onTimeout.
    await closeRunningAttempt(ctx, step, { kind: 'expired', error: budgetStop });
    await failStep(ctx, loaded, step, budgetStop, { note: budgetStop.message });
    return { outcome: 'failed' };
  }
  const error = {
    code: APPROVAL_EXPIRED_CODE,
    message: `no decision on the ${kind} of ${stepId} within ${ownSeconds}s`,
    retryable: false,
  };
  if (planStep?.approval?.onTimeout === 'pause') {
    await pauseForPerson(ctx, step, kind, error.message);
    return { outcome: 'paused' };
  }
  // The gate's attempt ends with the wait; a repeat after a lost answer finds the step failed and closes it too.
  await closeRunningAttempt(ctx, step, { kind: 'expired', error });
  await failStep(ctx, loaded, step, error, { note: error.message });
  return { outcome: 'failed' };
}

/**
 * The failure of a wait its run's seconds budget ended (the approval's deadline was set by it), or undefined when
 * the approval's own timeout did. Without the approval (closed meanwhile), the run's seconds being spent says it.
 */
function budgetExpiry(
  plan: Plan,
  run: RunRecord,
  approval: Pick<ApprovalRecord, 'createdAt' | 'deadline'> | undefined,
  ownSeconds: number,
  now: string,
  what: string,
): StepError | undefined {
  const maxSeconds = plan.budget?.maxSeconds;
  if (maxSeconds === undefined) return undefined;
  const limit = { scope: 'run' as const, limitSeconds: maxSeconds, since: run.createdAt };
  const byBudget =
    approval === undefined
      ? Date.parse(now) - Date.parse(run.createdAt) >= maxSeconds * 1000
      : deadlineByBudget(approval, ownSeconds);
  return byBudget
    ? timeExhausted(limit, now, `no decision on the ${what} before the run's seconds ran out`)
    : undefined;
}

/**
 * The `pause` timeout policy: the step keeps waiting (its approval expired, so nobody can decide it any more) and
 * the run is left paused with the reason, for a person to replan or invalidate.
 */
async function pauseForPerson(ctx: Interpreter, step: StepRecord, kind: string, message: string): Promise<void> {
  const { runId, stepId, generation } = step;
  const now = ctx.now();
  const note = `${message}: the run is paused for a person (replan or invalidate the step to go on)`;
  if (!step.trace.some((entry) => entry.text === note))
    await ctx.deps.store.transitionStep(
      runId,
      stepId,
      { generation, from: ['awaiting_approval'] },
      { appendTrace: [traceEntry('judge', note, now)] },
    );
  await pauseRun(ctx, runId, APPROVAL_EXPIRED_REASON, { stepId, generation, kind, detail: message });
}

/**
 * How long the step's newest approval waited for its decision (a metric). The decision itself was recorded, and
 * announced as ApprovalDecided, by whoever decided it.
 */
export async function recordDecisionWait(ctx: Interpreter, step: StepRecord, decision: 'approve' | 'reject' | 'edit') {
  if (!ctx.deps.metrics) return;
  const approvals = (await ctx.deps.store.listRunApprovals(step.runId)).filter(
    (a) => a.stepId === step.stepId && a.generation === step.generation && a.status !== 'expired',
  );
  const newest = approvals.sort((a, b) => a.createdAt.localeCompare(b.createdAt)).at(-1);
  if (newest) recordApprovalWait(ctx.deps.metrics, newest, newest.decidedAt ?? ctx.now(), decision);
}
