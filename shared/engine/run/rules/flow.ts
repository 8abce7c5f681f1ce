/**
 * How work flows through a run once a step's generation ends: what it lets go (its dependents start once nothing
 * they wait for is left), what it blocks (a failure's whole downstream that has not started), and when the run is
 * looked at as a whole. With one writer there is no frontier and no race over who looks: the decider looks after
 * every command it applied, and only a run with nothing left open can end.
 */

import { blockedByOf } from '../../../events/bounded-details.ts';
import { downstreamClosure } from '../../../plan/graph.ts';
import type { RunStatus, StepError } from '../../../plan/schema.ts';
import { stepExecutionName } from '../../../ports/executions.ts';
import { isOpenStepStatus } from '../../statuses.ts';
import type { Decision } from '../decision.ts';
import { generationOf, letsDependentsGo } from '../releases.ts';
import { closeStepApprovals } from './approval-closing.ts';
import { runBudget } from './run-budget.ts';

export const BLOCKED_CODE = 'E_BLOCKED';

/**
 * Whether a step of the run may start an attempt now: its run lets steps move and no cancellation has begun (a
 * cancel's CancelBegun marks `cancelCompensation`). The decider asks it of its copy of the run (`d.run`); a step
 * execution asks it of the run record it loads, before its first attempt and at the gate before a side effect.
 */
export function letsAttemptsStart(run: {
  readonly status: RunStatus;
  readonly cancelCompensation?: boolean | undefined;
}): boolean {
  return (run.status === 'running' || run.status === 'paused') && run.cancelCompensation !== true;
}

/**
 * Starts every step among `candidates` (default: all of the plan) that is still unstarted in its generation and no
 * longer waits for anything. A run that lets no attempt start (finished, being cancelled) starts nothing; a run whose
 * budget is spent starts nothing either (budget.ts decides what becomes of such steps).
 */
export function startDue(d: Decision, candidates?: Iterable<string>, refusal?: (stepId: string) => boolean): void {
  // A spent budget starts nothing new: what is in flight finishes, and the run ends (budget.ts, ending.ts).
  if (!letsAttemptsStart(d.run) || d.plan === undefined || runBudget(d) !== undefined) return;
  for (const id of candidates ?? d.plan.executable) {
    const step = d.step(id);
    if (step === undefined || (step.status !== 'pending' && step.status !== 'ready')) continue;
    if (generationOf(d.draft, id).remaining > 0) continue;
    if (refusal?.(id) === true) continue;
    d.emit({
      type: 'StepStarted',
      at: d.at,
      stepId: id,
      generation: step.generation,
      execution: stepExecutionName(d.run.runId, id, step.generation),
    });
  }
}

/**
 * Blocks every step downstream of `failedId` that has not started in its generation: nothing will ever let it go.
 * Claimed or finished steps are left as they are (they do not wait for the failure any more).
 */
export function blockDownstream(d: Decision, failedId: string): void {
  if (d.plan === undefined) return;
  const error: StepError = {
    code: BLOCKED_CODE,
    message: `blocked: upstream step ${failedId} failed`,
    retryable: false,
    details: { blockedBy: failedId },
  };
  for (const id of downstreamClosure(d.plan.graph, failedId)) {
    const step = d.step(id);
    if (step === undefined || (step.status !== 'pending' && step.status !== 'ready')) continue;
    d.emit({
      type: 'StepBlocked',
      at: d.at,
      stepId: id,
      generation: step.generation,
      error,
      blockedBy: [failedId],
      blockedByCount: 1,
    });
  }
}

/**
 * Blocks the steps among `ids` that wait (directly or through each other) for an upstream step that failed, was
 * blocked or closed: after a move, nothing would release them. Each names a bounded sample of its causes.
 */
export function blockUnreachable(d: Decision, ids: readonly string[]): void {
  const plan = d.plan;
  if (plan === undefined) return;
  const dead = (id: string): boolean => {
    const step = d.step(id);
    if (step === undefined) return false;
    if (step.status === 'blocked' || step.status === 'cancelled') return true;
    return step.status === 'failed' && !letsDependentsGo(d.draft, id, step.status);
  };
  for (const id of ids) {
    const step = d.step(id);
    if (step === undefined || (step.status !== 'pending' && step.status !== 'ready')) continue;
    const causes = plan.upstream(id).filter(dead);
    if (causes.length === 0) continue;
    const { blockedBy, blockedByCount, message } = blockedByOf(causes);
    d.emit({
      type: 'StepBlocked',
      at: d.at,
      stepId: id,
      generation: step.generation,
      error: { code: BLOCKED_CODE, message, retryable: false, details: { blockedBy, blockedByCount } },
      blockedBy,
      blockedByCount,
    });
  }
}

/** Closes every open step of the run (or those `which` names) with `error`: the run ends, or is cancelled. */
export function closeOpenSteps(d: Decision, error: StepError, which: (stepId: string) => boolean = () => true): void {
  for (const [id, step] of d.draft.steps) {
    if (!isOpenStepStatus(step.status) || !which(id)) continue;
    d.emit({ type: 'StepClosed', at: d.at, stepId: id, generation: step.generation, error });
    // Its approvals close with it, whoever ends the run (approval-closing.ts).
    closeStepApprovals(d, id, step.generation, error.message);
  }
}

/** The dependents of a step that let go now, to be started. */
export function dependentsOf(d: Decision, stepId: string): readonly string[] {
  return d.plan?.downstream(stepId) ?? [];
}
