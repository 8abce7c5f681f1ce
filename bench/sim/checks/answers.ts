/**
 * Every answer the decider gave was true. Held against the run's log and its final state:
 * - DecideApproval OK: the approval holds that decision by that person, and its step's generation was judged by it
 *   (approved or edited: it did not fail as rejected or expired; rejected: it did not succeed), or ended otherwise
 *   first (its run ended, it was invalidated); it is never left waiting with the decision taken.
 * - DecideApproval 410: the approval is closed and no decision on it was ever taken; 409 E_ALREADY_DECIDED: it
 *   names the decision the approval holds; 409 E_RUN_CANCELLED: the run was being cancelled.
 * - CancelRun OK: the run ends cancelled (or is held for a person within its compensating cancel) and no step
 *   starts after it; a run already finished is answered with the state it finished in.
 * - Invalidate: an answer names exactly the steps its one application moved (a repeat under the same key answers
 *   that application's result and moves nothing again); a refusal moved nothing, and comes before its key's application if any.
 * - RaiseBudget OK: a BudgetRaised of those limits by that person was committed, and the run reopened with it; a
 *   refusal raised nothing it named.
 */
import type { Reply } from '../../../shared/engine/run/decision.ts';
import type { RunEvent } from '../../../shared/engine/run/events.ts';
import type { AnsweredCommand, SimRun } from '../recorder.ts';

export interface AnswerViolation {
  /** `invalidate-key`: an invalidation's key applied twice, or a repeat of it answered otherwise than the first. */
  readonly invariant: 'answer' | 'invalidate-key';
  readonly detail: string;
}

interface Placed {
  readonly version: number;
  readonly index: number;
  readonly event: RunEvent;
}

/** Marks a problem with an invalidation's key (its own invariant: one finding, however many answers show it). */
const KEY = 'key:';

const DECIDED = { approve: 'approved', reject: 'rejected', edit: 'edited' } as const;

const text = (reply: Reply | undefined): string =>
  reply === undefined
    ? 'no answer'
    : reply.ok
      ? `OK ${JSON.stringify(reply.value ?? {})}`
      : `${reply.status} ${reply.code}`;

export function checkAnswers(run: SimRun): AnswerViolation[] {
  const placed: Placed[] = run.batches.flatMap((b) =>
    b.events.map((event, index) => ({ version: b.version, index, event })),
  );
  const found: AnswerViolation[] = [];
  for (const answer of run.answers) {
    const problem = check(run, placed, answer);
    if (problem === undefined) continue;
    const [invariant, detail] = problem.startsWith(KEY)
      ? (['invalidate-key', problem.slice(KEY.length)] as const)
      : (['answer', problem] as const);
    found.push({ invariant, detail: `${answer.command.kind} answered ${text(answer.reply)}: ${detail}` });
  }
  return found;
}

function check(run: SimRun, placed: readonly Placed[], answer: AnsweredCommand): string | undefined {
  const { command, reply } = answer;
  if (reply === undefined) return undefined; // a dead letter: reported as such
  switch (command.kind) {
    case 'DecideApproval':
      return decision(run, placed, command, reply);
    case 'CancelRun':
      return cancel(run, placed, answer, reply);
    case 'Invalidate':
      return invalidation(run, placed, answer, reply);
    case 'RaiseBudget':
      return raise(placed, command, reply);
    default:
      return undefined;
  }
}

function decision(
  run: SimRun,
  placed: readonly Placed[],
  command: Extract<AnsweredCommand['command'], { kind: 'DecideApproval' }>,
  reply: Reply,
): string | undefined {
  const approval = run.replica.approvals.get(command.approvalId);
  if (approval === undefined) return reply.ok || reply.status !== 404 ? 'the approval does not exist' : undefined;
  const decided = placed.filter((p) => p.event.type === 'ApprovalDecided' && p.event.approvalId === command.approvalId);
  if (reply.ok) {
    if (approval.status !== DECIDED[command.decision] || approval.decidedBy !== command.by)
      return `the approval holds ${approval.status} by ${approval.decidedBy ?? 'nobody'}`;
    const at = decided[0];
    if (at === undefined) return 'no ApprovalDecided was committed';
    const ending = placed.find(
      (p) =>
        (p.version > at.version || (p.version === at.version && p.index > at.index)) &&
        'stepId' in p.event &&
        p.event.stepId === approval.stepId &&
        endsGeneration(p.event, approval.generation),
    );
    if (ending === undefined) {
      const step = run.replica.steps.get(approval.stepId);
      return `the step ${approval.stepId}#${approval.generation} never ended after it (${step?.status ?? 'absent'} #${step?.generation ?? '?'})`;
    }
    const e = ending.event;
    if (
      command.decision !== 'reject' &&
      e.type === 'StepFailed' &&
      ['E_APPROVAL_EXPIRED', 'E_REJECTED'].includes(e.error.code)
    )
      return `the step failed ${e.error.code} after the decision was taken`;
    if (command.decision === 'reject' && e.type === 'StepSucceeded') return 'the step succeeded after it was rejected';
    return undefined;
  }
  if (reply.status === 410) {
    if (approval.status !== 'expired') return `the approval is ${approval.status} afterwards`;
    if (decided.length > 0) return 'a decision on it was committed';
    return undefined;
  }
  if (reply.status === 409 && reply.code === 'E_ALREADY_DECIDED') {
    const named = (reply.details?.decision ?? null) as { decision?: string; by?: string } | null;
    const holds = approval.status as string;
    if (named === null || DECIDED[named.decision as 'approve'] !== holds || named.by !== approval.decidedBy)
      return `it names ${JSON.stringify(named)}, the approval holds ${holds} by ${approval.decidedBy ?? 'nobody'}`;
    return undefined;
  }
  if (reply.status === 409 && reply.code === 'E_RUN_CANCELLED')
    return run.replica.run.status === 'cancelled' || run.replica.run.cancelCompensation === true
      ? undefined
      : `the run is ${run.replica.run.status}, never cancelled`;
  return 'an answer no decision should get';
}

function raise(
  placed: readonly Placed[],
  command: Extract<AnsweredCommand['command'], { kind: 'RaiseBudget' }>,
  reply: Reply,
): string | undefined {
  const same = (e: RunEvent) =>
    e.type === 'BudgetRaised' &&
    e.requestedBy === command.by &&
    JSON.stringify(e.limits) === JSON.stringify(command.limits);
  const raised = placed.filter((p) => same(p.event));
  if (!reply.ok) return raised.length > 0 ? 'a BudgetRaised of those limits was committed' : undefined;
  const at = raised[0];
  if (at === undefined) return 'no BudgetRaised was committed';
  const next = placed.find((p) => p.version === at.version && p.index === at.index + 1);
  return next?.event.type === 'RunReopened'
    ? undefined
    : `the run did not reopen with it (${next?.event.type ?? 'nothing'})`;
}

/** The event ends the step's generation `generation` (the generation a decision was about). */
function endsGeneration(event: RunEvent, generation: number): boolean {
  switch (event.type) {
    case 'StepSucceeded':
    case 'StepFailed':
    case 'StepClosed':
    case 'StepSuperseded':
      return event.generation === generation;
    case 'StepMoved':
      return event.generation === generation + 1;
    default:
      return false;
  }
}

function cancel(run: SimRun, placed: readonly Placed[], answer: AnsweredCommand, reply: Reply): string | undefined {
  if (!reply.ok) return 'a cancel is never refused';
  const said = String(reply.value?.status ?? '');
  if (said === 'complete' || said === 'failed') return undefined; // it had finished already
  const { status, terminal, cancelCompensation } = run.replica.run;
  const held = status === 'paused' && cancelCompensation === true && terminal !== undefined;
  if (status !== 'cancelled' && !held) return `the run ended ${status}${terminal ? ` (${terminal.reason})` : ''}`;
  // A compensating cancel held for a person may reopen the run for a retried compensation; no step starts again.
  const later = placed.find((p) => p.version > answer.version && p.event.type === 'StepStarted');
  if (later !== undefined) return `${later.event.type} at version ${later.version}, after the cancel`;
  return undefined;
}

function invalidation(
  run: SimRun,
  placed: readonly Placed[],
  answer: AnsweredCommand,
  reply: Reply,
): string | undefined {
  const command = answer.command as Extract<AnsweredCommand['command'], { kind: 'Invalidate' }>;
  const applied = placed.filter((p) => p.event.type === 'InvalidationApplied' && p.event.key === command.key);
  if (applied.length > 1)
    return `${KEY}the key ${command.key} was applied ${applied.length} times (versions ${applied.map((p) => p.version).join(', ')})`;
  const first = applied[0];
  const moved = first === undefined ? [] : movedBy(placed, first);
  if (!reply.ok) {
    if (reply.status === 404)
      return command.roots.some((id) => !run.replica.plan?.graph.has(id))
        ? undefined
        : 'every root is a step of the plan';
    // A refusal before the key's application was true when given (a run still planning takes none; a retry may).
    return first === undefined || answer.version < first.version
      ? undefined
      : `${KEY}refused after the key moved ${moved.join(', ')} (v${first.version})`;
  }
  const answered = Array.isArray(reply.value?.stepIds) ? (reply.value.stepIds as string[]) : [];
  const event = first?.event.type === 'InvalidationApplied' ? first.event : undefined;
  const said = [...answered].sort().join(',');
  if (event === undefined) return answered.length === 0 ? undefined : 'nothing was applied under its key';
  const named = [...event.stepIds].sort().join(',');
  if ([...moved].sort().join(',') !== named) return `its application names ${named} but moved ${moved.join(', ')}`;
  // A repeat says it is one (the API's edge answers an HTTP repeat with the first answer it kept); anything else
  // must be the application under its key.
  if (reply.value?.repeat === true) return answered.length === 0 ? undefined : `${KEY}a repeat named steps again`;
  if (named !== said) return `${KEY}the application under its key names ${event.stepIds.join(', ')}`;
  return undefined;
}

/** The steps moved by the invalidation whose InvalidationApplied is `applied` (its StepMoved events just before). */
function movedBy(placed: readonly Placed[], applied: Placed): string[] {
  const moved: string[] = [];
  for (let i = placed.indexOf(applied) - 1; i >= 0; i--) {
    const p = placed[i] as Placed;
    if (p.version !== applied.version) break;
    if (p.event.type === 'StepMoved') moved.push(p.event.stepId);
    else if (p.event.type !== 'ApprovalClosed' && p.event.type !== 'RunReopened') break;
  }
  return moved;
}
