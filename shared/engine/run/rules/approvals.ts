/**
 * People in the loop: a gate (a human step's attempt 1) or a review of a low-confidence result waits on the step
 * machine's task token, held by an approval record; a person decides it; a wait nobody answered in time closes it
 * and fails the step (or leaves the run paused, under `approval.onTimeout: "pause"`).
 *
 * The answer a person gets is the truth. A decision answered OK is recorded, and its step is judged by it: through
 * the token it waited on (the shell answers it from ApprovalDecided), or, when that wait timed out before the token
 * could be answered, by a new execution of the step that judges the recorded decision (DecisionRedelivered). The
 * judging stays with the step execution either way: it alone can verify an output (the capability's contract, the
 * success assertion in the sandbox) and close the gate's attempt record. A decision answered 410 or 409 was never
 * taken.
 *
 * A plan's `budget.maxSeconds` may have shortened the wait (engine/step-seconds.ts approvalWindow): a wait that
 * ended there fails its step as stopped by the run's budget, so the run's `onExhausted` decides, not `onTimeout`.
 */
import type { StepError, StepStatus } from '../../../plan/schema.ts';
import { decisionExecutionName } from '../../../ports/executions.ts';
import type { ApprovalRecord } from '../../../ports/records/approvals.ts';
import type { StepRecord } from '../../../ports/records/steps.ts';
import { recordedReply } from '../../approval-request.ts';
import { secondsBetween } from '../../budget.ts';
import { IN_FLIGHT_STEP_STATUSES } from '../../statuses.ts';
import { deadlineByBudget, timeExhausted } from '../../step-seconds.ts';
import type { AwaitDecision, DecideApproval, DecisionTimedOut, ExecutionFailed } from '../commands.ts';
import { type Decision, refuse } from '../decision.ts';
import { answerClosed, DECIDED_STATUS, decidedOutput, isSameDecision } from './approval-answers.ts';
import { executionFailed, failStep } from './attempts.ts';
import { planBudget, stopOverBudget } from './budget.ts';
import { isLive, pause, settle } from './ending.ts';
import { letsAttemptsStart } from './flow.ts';
import { decideRevision } from './revisions.ts';

export const APPROVAL_EXPIRED_CODE = 'E_APPROVAL_EXPIRED';
/** Why a wait's token is released with cairn's rejection. */
export const STALE_WAIT_REASON = 'the step no longer waits for a decision';
/** Why an approval closes when its wait timed out (the machine's timeout, or a decision that came after it). */
export const DEADLINE_COMMENT = 'no decision before the deadline';
/** Why an approval closes when a decision comes for a step that no longer waits for it. */
export const NO_LONGER_WAITS_COMMENT = 'the step no longer waits';

/** Requests closed without a decision make way for the next id of the same attempt; far more than any run needs. */
const MAX_REQUESTS_PER_ATTEMPT = 100;

const IN_FLIGHT: ReadonlySet<StepStatus> = new Set(IN_FLIGHT_STEP_STATUSES);

interface WaitRef {
  readonly runId: string;
  readonly stepId: string;
  readonly generation: number;
  readonly kind: string;
  readonly attempt: number;
}

/** What every approval id of one attempt's wait starts with. */
const waitPrefix = (ref: WaitRef): string =>
  `${ref.runId}.${ref.stepId}.g${ref.generation}.${ref.kind}.a${ref.attempt}.`;

/** Deterministic approval ids (`n`: the request of the attempt): a repeated request finds its record again. */
export const approvalId = (ref: WaitRef, n: number): string => `${waitPrefix(ref)}${n}`;

/** How long a gate or review of the step waits by its own measure (the run's seconds budget may shorten it). */
export function ownApprovalSeconds(d: Decision, stepId: string): number {
  const { approvalTimeoutSeconds, runDeadlineSeconds } = d.draft.settings;
  const seconds = d.plan?.byId.get(stepId)?.approval?.timeoutSeconds ?? approvalTimeoutSeconds ?? runDeadlineSeconds;
  return Math.max(1, Math.ceil(seconds));
}

/** Whether a decision on the step's generation may still count: the run lets attempts start and the step is in flight. */
function awaitsDecision(d: Decision, stepId: string, generation: number): boolean {
  const step = d.step(stepId);
  return step !== undefined && letsAttemptsStart(d.run) && step.generation === generation && IN_FLIGHT.has(step.status);
}

/**
 * A gate or review waits on `token`. The request is asked once per attempt: a retried wait (the machine hands a
 * retried callback a new token) takes the pending approval over, or is answered with the decision already taken on
 * it; a wait for a step that no longer waits is released at once.
 */
export function awaitDecision(d: Decision, command: AwaitDecision): void {
  const step = d.step(command.stepId);
  if (step?.claimedBy !== command.execution || !awaitsDecision(d, command.stepId, command.generation)) {
    answerWait(d, command, { kind: 'released', reason: STALE_WAIT_REASON });
    d.reply = { ok: true, value: { released: STALE_WAIT_REASON } };
    return;
  }
  for (let n = 1; n <= MAX_REQUESTS_PER_ATTEMPT; n++) {
    const id = approvalId({ ...command, runId: d.run.runId, kind: command.approvalKind }, n);
    const existing = d.draft.approvals.get(id);
    d.reply = { ok: true, value: { approvalId: id } };
    if (existing === undefined) {
      ask(d, command, step, id);
      return;
    }
    if (existing.taskToken === command.token) return; // this very wait, asked already
    if (existing.status === 'pending') {
      d.emit({ type: 'ApprovalTokenMoved', at: d.at, approvalId: id, token: command.token });
      return;
    }
    if (recordedReply(existing) !== undefined) {
      answerWait(d, command, { kind: 'decision', approvalId: id });
      return;
    }
  }
  answerWait(d, command, { kind: 'released', reason: STALE_WAIT_REASON });
  d.reply = { ok: true, value: { released: STALE_WAIT_REASON } };
}

function answerWait(
  d: Decision,
  command: AwaitDecision,
  answer: { kind: 'decision'; approvalId: string } | { kind: 'released'; reason: string },
): void {
  const { stepId, generation, token } = command;
  d.emit({ type: 'WaitAnswered', at: d.at, stepId, generation, token, answer });
}

/** The approval record (what the person is shown, until when) and the step waiting on it. */
function ask(d: Decision, command: AwaitDecision, step: StepRecord, id: string): void {
  const { stepId, generation, presentation: shown } = command;
  const seconds = Math.max(1, Math.ceil(command.timeoutSeconds));
  const approval: ApprovalRecord = {
    approvalId: id,
    runId: d.run.runId,
    stepId,
    generation,
    kind: command.approvalKind,
    status: 'pending',
    question: shown.question,
    input: shown.input ?? null,
    upstreamOutputs: shown.upstreamOutputs ?? {},
    ...(shown.heldOutput === undefined
      ? {}
      : { heldOutput: shown.heldOutput, heldConfidence: shown.heldConfidence ?? null }),
    taskToken: command.token,
    createdAt: d.at,
    deadline: new Date(Date.parse(d.at) + seconds * 1000).toISOString(),
  };
  d.emit({ type: 'ApprovalRequested', at: d.at, approval });
  const attempts = Math.max(step.attempts, command.attempt);
  d.emit({ type: 'StepAwaiting', at: d.at, stepId, generation, approvalId: id, attempts });
}

/** A person's decision on an approval: a revision's is the revisions family's, a gate's or a review's is below. */
export function decideApproval(d: Decision, command: DecideApproval): void {
  const approval = d.draft.approvals.get(command.approvalId);
  if (approval === undefined) {
    d.reply = refuse(404, 'E_NOT_FOUND', `approval ${command.approvalId} not found`);
    return;
  }
  if (approval.kind === 'revision') decideRevision(d, command, approval);
  else decideStepApproval(d, command, approval);
}

/**
 * A gate's or a review's decision, taken while its step waits for it in its generation, before its deadline, in a
 * run that is not being cancelled; an edit carries its output (whether the output meets the target's contract needs
 * the catalog: the API checks it before sending the command).
 */
function decideStepApproval(d: Decision, command: DecideApproval, approval: ApprovalRecord): void {
  const { approvalId: id } = approval;
  if (approval.status !== 'pending') {
    repeatOrRefuse(d, command, approval);
    return;
  }
  if (Date.parse(d.at) > Date.parse(approval.deadline)) {
    d.emit({ type: 'ApprovalClosed', at: d.at, approvalId: id, comment: DEADLINE_COMMENT, announced: true });
    d.reply = answerClosed(d.draft.approvals.get(id) ?? approval);
    return;
  }
  if (isLive(d) && d.run.cancelCompensation === true) {
    d.reply = refuse(409, 'E_RUN_CANCELLED', 'the run is being cancelled: no decision is taken');
    return;
  }
  if (!awaitsDecision(d, approval.stepId, approval.generation)) {
    d.emit({ type: 'ApprovalClosed', at: d.at, approvalId: id, comment: NO_LONGER_WAITS_COMMENT, announced: false });
    d.reply = refuse(410, 'E_APPROVAL_EXPIRED', 'the step no longer waits for this decision');
    return;
  }
  if (command.decision === 'edit' && command.output === undefined) {
    d.reply = refuse(422, 'E_INVALID_OUTPUT', 'an edit must carry the corrected `output`');
    return;
  }
  const status = DECIDED_STATUS[command.decision];
  const output = decidedOutput(command);
  d.emit({
    type: 'ApprovalDecided',
    at: d.at,
    approvalId: id,
    status,
    by: command.by,
    ...(command.comment === undefined ? {} : { comment: command.comment }),
    ...(output === undefined ? {} : { output }),
  });
  d.reply = { ok: true, value: { approvalId: id, status } };
}

/**
 * The same decision sent again by the person who made it is the repeat of a request whose answer was lost: taken,
 * and the token answered again while the step still waits on it (the first answer may never have got through).
 */
function repeatOrRefuse(d: Decision, command: DecideApproval, approval: ApprovalRecord): void {
  if (!isSameDecision(approval, command)) {
    d.reply = answerClosed(approval);
    return;
  }
  const { stepId, generation, approvalId: id, taskToken: token } = approval;
  const step = d.step(stepId);
  if (step?.generation === generation && step.status === 'awaiting_approval')
    d.emit({ type: 'WaitAnswered', at: d.at, stepId, generation, token, answer: { kind: 'decision', approvalId: id } });
  d.reply = { ok: true, value: { approvalId: id, status: approval.status } };
}

/**
 * The machine's wait for a decision timed out. A decision taken before it (whose token answer came too late) is
 * honoured by a new execution that judges it. Otherwise the wait's pending approvals close (announced) and the step
 * fails: E_APPROVAL_EXPIRED, or stopped by the run's budget when that shortened the wait; under `onTimeout: "pause"`
 * the step keeps waiting and the run is left paused for a person (a replan, an invalidation or a cancel moves on).
 */
export function decisionTimedOut(d: Decision, command: DecisionTimedOut): void {
  const { stepId, generation, approvalKind: kind } = command;
  const step = d.step(stepId);
  if (step?.generation !== generation || step.claimedBy !== command.execution || !IN_FLIGHT.has(step.status)) return;
  const attempt = Math.max(1, step.attempts);
  const prefix = waitPrefix({ runId: d.run.runId, stepId, generation, kind, attempt });
  const ofWait = [...d.draft.approvals.values()]
    .filter((a) => a.approvalId.startsWith(prefix))
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.approvalId.localeCompare(b.approvalId));
  const decided = ofWait.filter((a) => recordedReply(a) !== undefined).at(-1);
  if (decided !== undefined) {
    // A decision in a run that no longer lets attempts start cannot be acted on: the run's end decided the step.
    if (letsAttemptsStart(d.run)) redeliver(d, step, decided.approvalId, attempt);
    return;
  }
  const ownSeconds = ownApprovalSeconds(d, stepId);
  const budgetStop = budgetExpiry(d, ofWait.at(-1), ownSeconds, `${kind} of ${stepId}`);
  const comment = budgetStop === undefined ? DEADLINE_COMMENT : `closed: ${budgetStop.message}`;
  for (const approval of ofWait)
    if (approval.status === 'pending')
      d.emit({ type: 'ApprovalClosed', at: d.at, approvalId: approval.approvalId, comment, announced: true });
  const error: StepError = budgetStop ?? {
    code: APPROVAL_EXPIRED_CODE,
    message: `no decision on the ${kind} of ${stepId} within ${ownSeconds}s`,
    retryable: false,
  };
  if (budgetStop === undefined && d.plan?.byId.get(stepId)?.approval?.onTimeout === 'pause') {
    pause(d, 'approval_expired', { stepId, generation, kind, detail: error.message });
    return;
  }
  failStep(d, stepId, error, step.attempts, error.message);
  stopOverBudget(d);
  settle(d);
}

/**
 * The wait of a step failed otherwise than by its timeout (GateFailed): a decision already answered OK is honoured
 * as after a timeout; otherwise the step's attempt fails with the wait's error.
 */
export function gateFailed(d: Decision, command: ExecutionFailed): void {
  const step = d.step(command.stepId);
  if (step?.generation !== command.generation || step.status !== 'awaiting_approval') return;
  const attempt = Math.max(1, step.attempts);
  const decided = [...d.draft.approvals.values()]
    .filter((a) => a.stepId === step.stepId && a.generation === step.generation && recordedReply(a) !== undefined)
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.approvalId.localeCompare(b.approvalId))
    .at(-1);
  if (decided !== undefined) {
    if (letsAttemptsStart(d.run)) redeliver(d, step, decided.approvalId, attempt);
    return;
  }
  executionFailed(d, command);
}

/**
 * Hands a recorded decision to the step's next decision execution (`-d<n>`, after the one whose wait timed out), so
 * that it never collides with an execution that already ran.
 */
function redeliver(d: Decision, step: StepRecord, id: string, attempt: number): void {
  const { runId } = d.run;
  const { stepId, generation } = step;
  const name = (n: number) => decisionExecutionName(runId, stepId, generation, n);
  let before = 0;
  for (let n = 1; n <= MAX_REQUESTS_PER_ATTEMPT && before === 0; n++) if (name(n) === step.claimedBy) before = n;
  const execution = name(before + 1);
  d.emit({ type: 'DecisionRedelivered', at: d.at, stepId, generation, approvalId: id, attempt, execution });
}

/**
 * The failure of a wait its run's seconds budget ended (the approval's deadline was set by it), or undefined when
 * the approval's own timeout did. Without an approval (the wait was never asked), the run's seconds being spent says
 * it.
 */
function budgetExpiry(
  d: Decision,
  approval: Pick<ApprovalRecord, 'createdAt' | 'deadline'> | undefined,
  ownSeconds: number,
  what: string,
): StepError | undefined {
  const maxSeconds = planBudget(d)?.maxSeconds;
  if (maxSeconds === undefined) return undefined;
  const byBudget =
    approval === undefined
      ? (secondsBetween(d.run.createdAt, d.at) ?? 0) >= maxSeconds
      : deadlineByBudget(approval, ownSeconds);
  if (!byBudget) return undefined;
  const limit = { scope: 'run' as const, limitSeconds: maxSeconds, since: d.run.createdAt };
  return timeExhausted(limit, d.at, `no decision on the ${what} before the run's seconds ran out`);
}
