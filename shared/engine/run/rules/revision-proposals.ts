/**
 * Revisions proposed: the replanner's answer to a failure the decider asked about, a person's replan, and the budget
 * replan (`budget.onExhausted: "replan"`), each a ProposeRevision of revision n+1 against revision n.
 *
 * A proposal is checked against the run as it is when it is applied, not as the replanner read it: against another
 * base revision, or breaking the scope rule for the steps' statuses now, it is stale (409) and the replanner may
 * propose again. One that adds a mutating target the plan did not have waits for a person (revisions.ts decides
 * it); one that comes while another waits is not made (a failure's answer waits with it, a person's replan and the
 * budget replan are refused). The rest is made current at once (revision-application.ts). A cancelled run, or one
 * being cancelled with compensation, takes no revision.
 */
import { isDeepStrictEqual } from 'node:util';
import { REVISION_APPROVAL_STEP } from '../../../events/bus-rules.ts';
import type { ApprovalRecord, HeldRevision } from '../../../ports/records/approvals.ts';
import { BUDGET_ERROR_CODE, replanCapOf } from '../../budget.ts';
import { BUDGET_REPLAN_KEY, budgetReplanState, decideBudgetExhaustion, isRunBudgetStop } from '../../budget-replan.ts';
import { revisionQuestion } from '../../replan/authority.ts';
import { checkReplan } from '../../replan/scope.ts';
import { isBeingCancelled } from '../../statuses.ts';
import { approvalWindow } from '../../step-seconds.ts';
import type { ProposeRevision } from '../commands.ts';
import { type Decision, type Reply, refuse } from '../decision.ts';
import type { RunState } from '../state.ts';
import { planBudget, replanCap, runBudget } from './budget.ts';
import { isLive, isReplannable, replanDeclines } from './ending.ts';
import { declineReplan, failureKey, pausedForReplanLimits } from './replans.ts';
import { makeCurrent, replanRecord } from './revision-application.ts';

/** A held revision's approval has no task token: nothing waits on one (its deadline is the shell's timer). */
export const NO_TASK_TOKEN = '-';

export interface Why {
  readonly code: string;
  readonly message: string;
}

/** What the replanner is told of its proposal (as the replanner's outcomes were named). */
export const answer = (value: Readonly<Record<string, unknown>>): Reply => ({ ok: true, value });
export const ignored = (why: string): Reply => answer({ outcome: 'ignored', why });

/** The run is cancelled, or being cancelled: it takes no revision, held, proposed or decided. */
export const takesNoRevision = (run: RunState['run']): boolean => run.status === 'cancelled' || isBeingCancelled(run);

/** The run's revision approval still waiting for a person, if any (one at a time). */
export function pendingRevision(approvals: RunState['approvals']): ApprovalRecord | undefined {
  for (const approval of approvals.values())
    if (approval.kind === 'revision' && approval.status === 'pending') return approval;
  return undefined;
}

/** The run is finished (or held for a person): nothing about it is announced until it reopens. */
export const isFinished = (d: Decision): boolean => !isLive(d) || d.run.terminal !== undefined;

/**
 * Whether a person's replan of the run is refused now (the API asks before it hands the replan to the planner), as
 * the 409 it answers; undefined: it may go ahead.
 */
export function replanRefusal(state: Pick<RunState, 'run' | 'approvals' | 'settings'>): Reply | undefined {
  const { run } = state;
  const { runId } = run;
  if (takesNoRevision(run))
    return refuse(409, 'E_RUN_CANCELLED', `run ${runId} is cancelled: a cancelled run is not replanned`);
  if (run.status === 'planning' || run.revision < 1)
    return refuse(409, 'E_NOT_REPLANNABLE', `run ${runId} is ${run.status}: it has no plan to revise`);
  const maxReplans = replanCapOf(run, state.settings);
  if (run.replans >= maxReplans)
    return refuse(
      409,
      'E_REPLAN_LIMIT',
      `run ${runId} has reached its replan limit: ${run.replans} of ${maxReplans} replans made`,
      { replans: run.replans, maxReplans },
    );
  const waiting = pendingRevision(state.approvals);
  if (waiting !== undefined)
    return refuse(
      409,
      'E_REVISION_PENDING',
      `run ${runId} has revision ${waiting.generation} waiting for approval ${waiting.approvalId}: decide it first`,
      { approvalId: waiting.approvalId },
    );
  return undefined;
}

/** The replanner's (or a person's) revision n+1: refused, declined, waiting with the held one, held, or made. */
export function proposeRevision(d: Decision, command: ProposeRevision): void {
  // A person's replan names who asked: the revision carries it, held or made (its PlanRevised records it).
  const held =
    command.by === undefined || command.revision.requestedBy !== undefined
      ? command.revision
      : { ...command.revision, requestedBy: command.by };
  const malformed = malformedProposal(command);
  if (malformed !== undefined) {
    d.reply = malformed;
    return;
  }
  const repeat = repeatedProposal(d, held);
  if (repeat !== undefined) {
    d.reply = repeat;
    return;
  }
  if (takesNoRevision(d.run)) {
    d.reply = refuse(409, 'E_RUN_CANCELLED', `run ${d.run.runId} is cancelled: it takes no revision`);
    return;
  }
  const refusal =
    command.trigger === 'request'
      ? replanRefusal(d.draft)
      : command.trigger === 'budget'
        ? budgetGate(d)
        : failureGate(d, held.failure ?? { stepId: '', generation: 0 });
  if (refusal !== undefined) {
    d.reply = refusal;
    return;
  }
  const waiting = pendingRevision(d.draft.approvals);
  if (waiting !== undefined) {
    // Only a failure's answer gets here (the other triggers refuse): the failure waits with the held revision.
    d.reply = answer({ outcome: 'awaiting_approval', approvalId: waiting.approvalId });
    return;
  }
  const stale = staleness(d, held);
  if (stale !== undefined) {
    d.reply = stale;
    return;
  }
  if (command.mutatingTargets.length > 0) {
    d.reply = answer({ outcome: 'awaiting_approval', approvalId: hold(d, held, command.mutatingTargets) });
    return;
  }
  d.reply = answer({ outcome: 'revised', revision: makeCurrent(d, held) });
}

/**
 * The same proposal again, made or held already (its sender's answer was lost after the batch committed, and the
 * mailbox delivered it again): answered as the first one was, not as a stale proposal. A person's replan is the same
 * only from the same request: two requests whose planner proposed alike are two proposals, and the later is stale.
 */
function repeatedProposal(d: Decision, held: HeldRevision): Reply | undefined {
  const { revision } = held.plan;
  // A revision made current is transformed (applyReplan): what it was made from is its record in the replan log.
  const made = replanRecord(held, revision, '');
  if ((d.run.replanLog ?? []).some((record) => isDeepStrictEqual({ ...record, at: '' }, made)))
    return answer({ outcome: 'revised', revision });
  for (const approval of d.draft.approvals.values())
    if (
      approval.kind === 'revision' &&
      approval.status === 'pending' &&
      approval.generation === revision &&
      approval.heldRevision?.request === held.request &&
      isDeepStrictEqual(approval.heldRevision?.plan, held.plan)
    )
      return answer({ outcome: 'awaiting_approval', approvalId: approval.approvalId });
  return undefined;
}

/** A proposal that cannot be one: not revision n+1 of its base, or its trigger and its revision disagree. */
function malformedProposal(command: ProposeRevision): Reply | undefined {
  const held = command.revision;
  const why =
    held.plan.revision !== held.baseRevision + 1
      ? `revision ${held.plan.revision} is not the one after its base revision ${held.baseRevision}`
      : (command.trigger === 'budget') !== (held.trigger === 'budget')
        ? `a ${command.trigger} trigger with a revision ${held.trigger === 'budget' ? '' : 'not '}made for the budget`
        : command.trigger === 'failure' && held.failure === undefined
          ? "a failure's revision names no failure"
          : undefined;
  return why === undefined ? undefined : refuse(422, 'E_INVALID_REVISION', why);
}

/**
 * Whether a failure's answer is still wanted: the failure stands unanswered in the generation it names, the step's
 * policy lets the replanner answer it, the run is running and its replan limits allow one more. A failure that
 * cannot be answered is declined (it stands); one the limits refuse pauses the run for a person.
 */
function failureGate(
  d: Decision,
  failure: { readonly stepId: string; readonly generation: number },
): Reply | undefined {
  if (replanCap(d) <= 0) return ignored('disabled');
  const step = d.step(failure.stepId);
  const planStep = d.plan?.byId.get(failure.stepId);
  if (planStep === undefined || step?.generation !== failure.generation || step.status !== 'failed')
    return ignored('stale');
  const key = failureKey(failure);
  const answered = (d.run.replanLog ?? []).some((r) => r.failure === key);
  if (answered || replanDeclines(d).some((x) => x.failure === key)) return ignored('duplicate');
  const why: Why | undefined = isRunBudgetStop(step.error)
    ? { code: BUDGET_ERROR_CODE, message: 'stopped by the run budget: its onExhausted decides, not a replan' }
    : planStep.segment !== undefined
      ? { code: 'E_SEGMENT_COMPENSATED', message: `segment ${planStep.segment} is compensated instead` }
      : !isReplannable(d, failure.stepId)
        ? { code: 'E_FAILURE_POLICY', message: `the step's onFailure policy is ${planStep.onFailure}` }
        : d.run.status !== 'running' || d.run.terminal !== undefined
          ? { code: 'E_RUN_NOT_RUNNING', message: `the run was ${d.run.status}` }
          : undefined;
  if (why !== undefined) {
    declineReplan(d, { failure: key, ...why });
    return answer({ outcome: 'declined', ...why });
  }
  if (pausedForReplanLimits(d, failure.stepId))
    return answer({ outcome: 'paused', reason: String(d.run.terminal?.reason) });
  return undefined;
}

/**
 * Whether the budget replan is still wanted: the run waits for it (running, over its budget, under `replan`, not
 * answered yet). Out of replans, or with another revision waiting for a person, it is declined: the run then ends
 * `budget_exhausted`.
 */
function budgetGate(d: Decision): Reply | undefined {
  const maxReplans = replanCap(d);
  if (maxReplans <= 0) return ignored('disabled');
  if (d.run.status !== 'running' || d.run.terminal !== undefined) return ignored('run_ended');
  if (runBudget(d) === undefined) return ignored('stale');
  const replan = budgetReplanState(d.run.replanLog, replanDeclines(d));
  const policy = d.plan?.plan.budget?.onExhausted;
  const next = decideBudgetExhaustion({ policy, replan, replansLeft: maxReplans - d.run.replans });
  if (next.action !== 'replan') {
    if (replan.kind !== 'none' || next.action !== 'fail' || next.replan?.outcome !== 'declined')
      return ignored('duplicate');
    return declineBudgetReplan(d, { code: next.replan.code, message: next.replan.message });
  }
  const waiting = pendingRevision(d.draft.approvals);
  if (waiting !== undefined)
    return declineBudgetReplan(d, {
      code: 'E_REVISION_PENDING',
      message: `revision approval ${waiting.approvalId} is undecided`,
    });
  return undefined;
}

function declineBudgetReplan(d: Decision, why: Why): Reply {
  declineReplan(d, { failure: BUDGET_REPLAN_KEY, ...why });
  return answer({ outcome: 'declined', ...why });
}

/** 409 when the revision no longer fits the run: another revision is current, or the scope rule breaks now. */
export function staleness(d: Decision, held: HeldRevision): Reply | undefined {
  const current = d.plan;
  const proposed = held.plan.revision;
  if (current === undefined || held.baseRevision !== d.run.revision)
    return refuse(
      409,
      'E_REVISION_STALE',
      `revision ${proposed} was proposed against revision ${held.baseRevision}: the run is at revision ${d.run.revision} now`,
      { revision: d.run.revision },
    );
  const issues = checkReplan(current.plan, held.plan, held.scope, d.draft.steps);
  if (issues.length === 0) return undefined;
  const shown = issues.slice(0, 5).map((i) => i.message);
  return refuse(
    409,
    'E_REVISION_STALE',
    `revision ${proposed} no longer fits the run: ${shown.join('; ')}${issues.length > 5 ? `; and ${issues.length - 5} more` : ''}`,
    { issues: issues.slice(0, 20) },
  );
}

/**
 * Holds `held` for a person's approval: the n-th held proposal of revision r is `<run>.revision.r<r>.<n>`, its
 * deadline a step approval's default window, or the run's seconds left when fewer (not for the budget's own
 * revision: it is asked for once they are spent). Returns the approval's id.
 */
function hold(d: Decision, held: HeldRevision, targets: readonly string[]): string {
  const revision = held.plan.revision;
  const stepId = `${REVISION_APPROVAL_STEP}${revision}`;
  const n = 1 + [...d.draft.approvals.values()].filter((a) => a.stepId === stepId).length;
  const approvalId = `${d.run.runId}.revision.r${revision}.${n}`;
  const own = ownWindow(d);
  const seconds =
    held.trigger === 'budget'
      ? own
      : approvalWindow(own, { budget: planBudget(d), createdAt: d.run.createdAt }, d.at).seconds;
  const heldRevision: HeldRevision = { ...held, targets: [...targets] };
  const approval: ApprovalRecord = {
    approvalId,
    runId: d.run.runId,
    stepId,
    generation: revision,
    kind: 'revision',
    status: 'pending',
    question: revisionQuestion(revision, targets, held.reason),
    input: {
      revision,
      targets: [...targets],
      reason: held.reason,
      ...(held.objective === undefined ? {} : { objective: held.objective }),
    },
    heldRevision,
    taskToken: NO_TASK_TOKEN,
    createdAt: d.at,
    deadline: new Date(Date.parse(d.at) + seconds * 1000).toISOString(),
  };
  d.emit({ type: 'RevisionHeld', at: d.at, approval, revision: heldRevision, announced: !isFinished(d) });
  return approvalId;
}

/** A step approval's window when the step names none: the held revision's own. */
export const ownWindow = (d: Decision): number => {
  const { approvalTimeoutSeconds, runDeadlineSeconds } = d.draft.settings;
  return Math.max(1, Math.ceil(approvalTimeoutSeconds ?? runDeadlineSeconds));
};
