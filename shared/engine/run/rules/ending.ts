/**
 * How a run ends: after every command the decider looks at the run as a whole (`settle`), with the one terminal
 * decision (engine/terminal.ts) and its precedence. A run held for a person (its pause reasons below) is not ended by
 * a step finishing meanwhile; a run whose compensation is due or under way waits for it; a failure the replanner may
 * still answer keeps the run going; a spent budget waits for what is in flight and then does what `onExhausted`
 * says. Ending and pausing are one event each, RunFinished, which the shell answers the run machine's waiter with.
 */
import type { FailurePolicy } from '../../../plan/schema.ts';
import type { ReplanDecline, RunRecord } from '../../../ports/records/runs.ts';
import { budgetReplanState, decideBudgetExhaustion } from '../../budget-replan.ts';
import { decideTerminal, describeTerminal, type TerminalDecision } from '../../terminal.ts';
import type { Decision } from '../decision.ts';
import { replanCap, runBudget, runBudgetStop } from './budget.ts';
import { advanceCompensation } from './compensation.ts';
import { closeOpenSteps } from './flow.ts';
import { finish, HELD_REASONS, isLive, pause } from './terminal-writes.ts';

export { finish, HELD_REASONS, type HeldReason, isLive, pause } from './terminal-writes.ts';

/** The `onFailure` policies of the current revision's steps. */
export function failurePolicies(d: Decision): ReadonlyMap<string, FailurePolicy | undefined> {
  const policies = new Map<string, FailurePolicy | undefined>();
  for (const step of d.plan?.plan.steps ?? []) if (step.onFailure !== undefined) policies.set(step.id, step.onFailure);
  return policies;
}

/** The failures the replanner declined: they stand. */
export const replanDeclines = (d: Decision): ReplanDecline[] => replanDeclinesOf(d.run);

/** A run record's declined failures, oldest key first. */
export function replanDeclinesOf(run: Pick<RunRecord, 'replanDeclines'>): ReplanDecline[] {
  const out: ReplanDecline[] = [];
  for (const member of run.replanDeclines ?? []) {
    const value = JSON.parse(member) as Partial<ReplanDecline>;
    if (typeof value.failure === 'string' && typeof value.stepId === 'string')
      out.push({
        failure: value.failure,
        stepId: value.stepId,
        code: String(value.code ?? 'E_UNKNOWN'),
        message: String(value.message ?? ''),
      });
  }
  return out.sort((a, b) => a.failure.localeCompare(b.failure));
}

/** Whether a final failure of the step is the replanner's to answer: under the default policy or `replan`. */
export function isReplannable(d: Decision, stepId: string): boolean {
  const step = d.plan?.byId.get(stepId);
  if (step === undefined || step.segment !== undefined) return false;
  const policy = step.onFailure;
  return policy === undefined || policy === 'retry-then-fail' || policy === 'replan';
}

/** A failed step whose failure the replanner has neither answered nor declined: the run waits for it. */
export function awaitsReplan(d: Decision): boolean {
  if (replanCap(d) <= 0 || d.plan === undefined) return false;
  const declined = new Set(replanDeclines(d).map((x) => x.failure));
  return d.plan.executable.some((id) => {
    const step = d.step(id);
    return step?.status === 'failed' && isReplannable(d, id) && !declined.has(`${id}#${step.generation}`);
  });
}

/** Looks at the run as a whole and ends it (or pauses it) when it is over. Safe after any command. */
export function settle(d: Decision): void {
  const { run, plan } = d;
  if (plan === undefined || run.status === 'planning' || !isLive(d)) return;
  if (run.terminal !== undefined && HELD_REASONS.has(run.terminal.reason)) return;
  // Work still open ends nothing, unless the run is being cancelled or its budget is spent: the usual case, in O(1).
  if (d.draft.open > 0 && run.cancelCompensation !== true && runBudget(d) === undefined) return;
  if (advanceCompensation(d) === 'pending' || !isLive(d)) return;
  const cancelling = d.run.cancelCompensation === true;
  const steps = d.draft.steps;
  const inFlight = d.draft.inFlight > 0;
  if (cancelling && inFlight) return;
  const budget = runBudget(d);
  const stopping = budget !== undefined && !inFlight ? { budgetExhausted: budget.detail } : {};
  const policies = failurePolicies(d);
  const decision = decideTerminal({ expected: plan.executable, steps, cancelled: cancelling, policies, ...stopping });
  if (decision.state === 'continue') return;
  if (decision.reason === 'budget_exhausted' && budget !== undefined) {
    exhausted(d, decision, budget);
    return;
  }
  if (decision.state === 'failed' && awaitsReplan(d)) return;
  // A fail-run failure ends the run whatever is still open (steps an invalidation's reopening started since).
  if (decision.state === 'failed' && d.draft.open > 0)
    closeOpenSteps(d, { code: 'E_RUN_FAILED', message: `the run failed: ${decision.reason}`, retryable: false });
  const declined = replanDeclines(d).map(({ stepId, failure, code, message }) => ({ stepId, failure, code, message }));
  const compensated = compensatedSteps(d);
  finish(d, {
    state: decision.state,
    reason: decision.reason,
    evidence: {
      ...decision.evidence,
      summary: describeTerminal(decision),
      ...(declined.length === 0 ? {} : { replans: declined }),
      ...(compensated.length === 0 ? {} : { compensated }),
      ...(cancelling && decision.state === 'cancelled' ? { requestedBy: d.run.cancelRequestedBy ?? null } : {}),
    },
  });
}

/**
 * The steps a finished compensation undid, in the saga's order (the order they were undone): the most recently
 * finished step first, a tie by plan order, later first (as engine/compensation.ts orders them).
 */
function compensatedSteps(d: Decision): string[] {
  const order = new Map((d.plan?.executable ?? []).map((id, i) => [id, i]));
  return [...d.draft.steps.values()]
    .filter((s) => s.status === 'compensated')
    .sort(
      (a, b) =>
        (b.finishedAt ?? '').localeCompare(a.finishedAt ?? '') ||
        (order.get(b.stepId) ?? 0) - (order.get(a.stepId) ?? 0),
    )
    .map((s) => s.stepId);
}

/** The plan's budget is spent with nothing in flight: announced once per revision, then `onExhausted` decides. */
function exhausted(
  d: Decision,
  decision: Exclude<TerminalDecision, { state: 'continue' }>,
  budget: NonNullable<ReturnType<typeof runBudget>>,
): void {
  const policy = d.plan?.plan.budget?.onExhausted;
  if (!(d.run.budgetExhaustedFor ?? []).includes(d.run.revision))
    d.emit({
      type: 'BudgetExhausted',
      at: d.at,
      revision: d.run.revision,
      onExhausted: policy ?? 'fail',
      exhausted: budget.exhausted.map((f) => ({ ...f })),
    });
  const next = decideBudgetExhaustion({
    policy,
    replan: budgetReplanState(d.run.replanLog, replanDeclines(d)),
    replansLeft: replanCap(d) - d.run.replans,
  });
  if (next.action === 'replan') return;
  const evidence = {
    budget: budget.evidence,
    ...(next.action === 'fail' && next.replan ? { budgetReplan: next.replan } : {}),
  };
  const summary = describeTerminal(decision);
  if (next.action === 'pause') pause(d, 'budget_exhausted', { ...decision.evidence, summary, ...evidence });
  else {
    // Nothing stays open in a failed run: a step still waiting for a person closes with it.
    closeOpenSteps(d, runBudgetStop(`stopped: ${budget.detail}`));
    finish(d, {
      state: 'failed',
      reason: 'budget_exhausted',
      evidence: { ...decision.evidence, summary, ...evidence },
    });
  }
}
