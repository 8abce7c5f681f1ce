/**
 * Stale-dependency invalidation, in one decision: the stale steps and their downstream closure start a new
 * generation (the ended ones kept in their history; their executions stopped and their approvals closed by the
 * shell and here), upstream and unrelated steps keep theirs, a finished run reopens, steps that an upstream failure
 * outside the scope keeps from ever running are blocked, and what waits for nothing starts. A request invalidates
 * what it names; a resource change only the watchers whose current generation ran before the change (a change
 * reported late, after a newer one, changes nothing). A run that has not started, was cancelled or is being cancelled
 * takes no invalidation.
 */
import { topologicalOrder } from '../../../plan/graph.ts';
import { invalidationScope, isStaleAfterChange } from '../../invalidation.ts';
import type { Invalidate } from '../commands.ts';
import { type Decision, refuse } from '../decision.ts';
import { closeStepApprovals, SUPERSEDED_APPROVAL_COMMENT } from './approval-closing.ts';
import { settle } from './ending.ts';
import { blockUnreachable, startDue } from './flow.ts';
import { reopenIfFinished } from './reopen.ts';

/** Why a run takes no invalidation now, if it does not. */
function refusal(d: Decision): string | undefined {
  const { status, cancelCompensation } = d.run;
  if (status === 'queued' || status === 'planning' || status === 'cancelled') return status;
  if (cancelCompensation === true && (status === 'running' || status === 'paused')) return 'being cancelled';
  return undefined;
}

export function invalidate(d: Decision, command: Invalidate): void {
  // A repeat of an invalidation this run took already (a retry, a redelivery) moves nothing again.
  if ((d.run.invalidationKeys ?? []).includes(command.key)) {
    d.reply = { ok: true, value: { stepIds: [], reopened: false, repeat: true } };
    return;
  }
  const plan = d.plan;
  const refused = refusal(d);
  if (refused !== undefined || plan === undefined) {
    // A resource change leaves such a run alone; a person is told why.
    d.reply =
      command.resourceChange === undefined
        ? refuse(409, 'E_CONFLICT', `run ${d.run.runId} is ${refused ?? 'planning'}: its steps cannot be invalidated`, {
            runId: d.run.runId,
            status: d.run.status,
          })
        : { ok: true, value: { stepIds: [], reopened: false } };
    return;
  }
  const unknown = command.roots.find((id) => !plan.graph.has(id));
  if (unknown !== undefined && command.resourceChange === undefined) {
    d.reply = refuse(404, 'E_NOT_FOUND', `run ${d.run.runId} has no step ${unknown}`, {
      runId: d.run.runId,
      stepId: unknown,
    });
    return;
  }
  const candidates = command.roots
    .filter((id) => plan.graph.has(id))
    .flatMap((id) => (plan.graph.isGroup(id) ? plan.graph.executableDescendants(id) : [id]));
  const stale = candidates.filter((id) => {
    const step = d.step(id);
    if (step === undefined) return false;
    return command.resourceChange === undefined || isStaleAfterChange(step, command.resourceChange.changedAt);
  });
  const inScope = new Set(
    invalidationScope(plan.graph, stale).filter((id) => {
      const status = d.step(id)?.status;
      return status !== undefined && status !== 'superseded';
    }),
  );
  if (inScope.size === 0) {
    d.reply = { ok: true, value: { stepIds: [], reopened: false } };
    return;
  }
  const reopened = reopenIfFinished(d, command.reason);
  // Upstream before downstream: a step's new generation waits for the new generation of what it depends on.
  const order = topologicalOrder(plan.graph) ?? plan.executable;
  const scope = order.filter((id) => inScope.has(id));
  for (const id of scope) {
    const step = d.step(id);
    if (step === undefined) continue;
    closeStepApprovals(d, id, step.generation, SUPERSEDED_APPROVAL_COMMENT);
    d.emit({ type: 'StepMoved', at: d.at, stepId: id, generation: step.generation + 1, trace: [] });
  }
  const stepIds = plan.executable.filter((id) => inScope.has(id));
  d.emit({
    type: 'InvalidationApplied',
    at: d.at,
    key: command.key,
    reason: command.reason,
    stepIds,
    reopened,
    ...(command.by === undefined ? {} : { requestedBy: command.by }),
    ...(command.roots[0] === undefined ? {} : { root: command.roots[0] }),
  });
  blockUnreachable(d, scope);
  startDue(d, scope);
  settle(d);
  d.reply = { ok: true, value: { stepIds, reopened } };
}
