/**
 * A person's say over a run's limits (`POST /runs/{id}/budget`): a run held for its budget (`budget_exhausted`, under
 * `onExhausted: "pause"`) or for its replan limit (`max_replans`) gets larger limits and goes on where it paused.
 *
 * Only larger limits are taken, and only ones that let the run go on: a limit the plan's budget does not have, one
 * not larger than the run's now, or a raise that leaves the run over its budget (or at its replan limit) is refused
 * as given (422), so a person is told at once instead of seeing the run pause again. The raise is kept on the run
 * (BudgetRaised), never on a revision: every later decision, and every later revision, is held to it.
 *
 * Going on reuses the reopening of a finished run (reopen.ts): a new opening, a new run execution. Held for its
 * budget, the steps the budget stopped (and what they blocked) start a new generation, as an invalidation moves
 * them, and what is due starts; held at its replan limit, every failure that stands unanswered is asked about again.
 */
import { topologicalOrder } from '../../../plan/graph.ts';
import {
  checkBudget,
  describeExhaustion,
  effectiveBudget,
  RAISABLE_LIMITS,
  type RaisedLimits,
  secondsBetween,
  spentBy,
} from '../../budget.ts';
import { isRunBudgetStop } from '../../budget-replan.ts';
import { invalidationScope } from '../../invalidation.ts';
import { describeRaise } from '../actions.ts';
import type { RaiseBudget } from '../commands.ts';
import { type Decision, type Reply, refuse } from '../decision.ts';
import type { BudgetRaised } from '../events.ts';
import { closeStepApprovals, SUPERSEDED_APPROVAL_COMMENT } from './approval-closing.ts';
import { planBudget, replanCap } from './budget.ts';
import { settle } from './ending.ts';
import { blockUnreachable, startDue } from './flow.ts';
import { reopenIfFinished } from './reopen.ts';
import { askOutstanding } from './revisions.ts';

/** The pauses a raise answers. */
export const RAISABLE_PAUSES: ReadonlySet<string> = new Set(['budget_exhausted', 'max_replans']);

/** The codes of a refused raise: not held for a limit, a limit not raised, a raise that leaves the run held. */
export const NOT_HELD_FOR_LIMIT_CODE = 'E_NOT_HELD_FOR_LIMIT';
export const LIMIT_NOT_RAISED_CODE = 'E_LIMIT_NOT_RAISED';
export const STILL_OVER_LIMIT_CODE = 'E_STILL_OVER_LIMIT';

type Limits = BudgetRaised['limits'];
type LimitName = keyof Limits;

/** The run's limits now, as a raise names them. */
function currentLimits(d: Decision): Limits {
  const budget = planBudget(d);
  return {
    ...(budget?.maxTokens === undefined ? {} : { maxTokens: budget.maxTokens }),
    ...(budget?.maxCostUsd === undefined ? {} : { maxCostUsd: budget.maxCostUsd }),
    ...(budget?.maxSeconds === undefined ? {} : { maxSeconds: budget.maxSeconds }),
    maxReplans: replanCap(d),
  };
}

/** Why the named limits are not a raise, if they are not. */
function notRaised(d: Decision, limits: Limits, now: Limits): Reply | undefined {
  const named = (Object.keys(limits) as LimitName[]).filter((name) => limits[name] !== undefined);
  const runId = d.run.runId;
  if (named.length === 0)
    return refuse(422, LIMIT_NOT_RAISED_CODE, 'name at least one limit: maxTokens, maxCostUsd, maxSeconds, maxReplans');
  for (const name of named) {
    const value = limits[name] as number;
    const current = now[name];
    if (name === 'maxReplans' && d.draft.settings.maxReplans <= 0)
      return refuse(
        422,
        LIMIT_NOT_RAISED_CODE,
        'replanning is off on this deployment: there is no replan limit to raise',
        {
          limit: name,
        },
      );
    if (current === undefined)
      return refuse(422, LIMIT_NOT_RAISED_CODE, `run ${runId}'s budget has no ${name} to raise`, { limit: name });
    if (!Number.isFinite(value) || value <= current)
      return refuse(422, LIMIT_NOT_RAISED_CODE, `${name} ${value} is not larger than run ${runId}'s ${current}`, {
        limit: name,
        current,
        given: value,
      });
  }
  return undefined;
}

/** Why the run would stay held with the raised limits, if it would. */
function stillHeld(d: Decision, reason: string, limits: Limits): Reply | undefined {
  if (reason === 'max_replans') {
    const cap = limits.maxReplans ?? replanCap(d);
    if (cap > d.run.replans) return undefined;
    return refuse(
      422,
      STILL_OVER_LIMIT_CODE,
      `run ${d.run.runId} has made ${d.run.replans} of ${cap} replans: raise maxReplans to let it go on`,
      { replans: d.run.replans, maxReplans: cap },
    );
  }
  const { maxReplans: _, ...budgetLimits } = limits;
  const raised: RaisedLimits = { ...d.run.raisedBudget, ...defined(budgetLimits) };
  const budget = effectiveBudget(d.plan?.plan.budget, raised);
  const { exhausted } = checkBudget(budget, spentBy(d.run), secondsBetween(d.run.createdAt, d.at));
  if (exhausted.length === 0) return undefined;
  return refuse(
    422,
    STILL_OVER_LIMIT_CODE,
    `with these limits run ${d.run.runId} is still over its budget: ${describeExhaustion('run', exhausted)}`,
    { exhausted: exhausted.map((f) => ({ ...f })) },
  );
}

const defined = (limits: Omit<Limits, 'maxReplans'>): RaisedLimits =>
  Object.fromEntries(RAISABLE_LIMITS.flatMap((name) => (limits[name] === undefined ? [] : [[name, limits[name]]])));

/**
 * The same raise again, by the same person, once it was made: a redelivered command (its answer was lost after the
 * batch committed) is answered as the first was, never as a refusal of a raise that did happen.
 */
function isRepeat(d: Decision, command: RaiseBudget, limits: Limits): boolean {
  const named = Object.keys(limits) as LimitName[];
  if (named.length === 0) return false;
  const last = d.run.actions?.findLast((action) => action.type === 'budget');
  if (last?.requestedBy !== command.by) return false;
  return named.every((name) =>
    name === 'maxReplans' ? d.run.maxReplans === limits[name] : d.run.raisedBudget?.[name] === limits[name],
  );
}

export function raiseBudget(d: Decision, command: RaiseBudget): void {
  const { run } = d;
  const limits: Limits = Object.fromEntries(
    Object.entries(command.limits).filter(([, value]) => value !== undefined),
  ) as Limits;
  if (isRepeat(d, command, limits)) {
    d.reply = { ok: true, value: { status: run.status, limits: currentLimits(d), repeat: true } };
    return;
  }
  const reason = run.terminal?.reason;
  if (run.status !== 'paused' || reason === undefined || !RAISABLE_PAUSES.has(reason) || d.plan === undefined) {
    const held = reason === undefined ? '' : ` (${reason})`;
    d.reply = refuse(
      409,
      NOT_HELD_FOR_LIMIT_CODE,
      `run ${run.runId} is ${run.status}${held}: only a run paused for budget_exhausted or max_replans takes larger limits`,
      { runId: run.runId, status: run.status, ...(reason === undefined ? {} : { reason }) },
    );
    return;
  }
  const now = currentLimits(d);
  const refused = notRaised(d, limits, now) ?? stillHeld(d, reason, limits);
  if (refused !== undefined) {
    d.reply = refused;
    return;
  }
  const previous = Object.fromEntries(Object.keys(limits).map((name) => [name, now[name as LimitName]])) as Limits;
  const raisedEvent: BudgetRaised = { type: 'BudgetRaised', at: d.at, limits, previous, requestedBy: command.by };
  d.emit(raisedEvent);
  reopenIfFinished(d, `limits raised by ${command.by}: ${describeRaise(raisedEvent)}`);
  if (reason === 'budget_exhausted') rerunStopped(d);
  else askOutstanding(d);
  startDue(d);
  settle(d);
  d.reply = { ok: true, value: { status: d.run.status, limits: currentLimits(d) } };
}

/**
 * The steps the run's budget stopped (a retry or an attempt it refused, a wait its seconds ended) start their next
 * generation, with what they blocked downstream, upstream first: they run as if the budget had never run out.
 */
function rerunStopped(d: Decision): void {
  const plan = d.plan;
  if (plan === undefined) return;
  const stopped = plan.executable.filter((id) => {
    const step = d.step(id);
    return (step?.status === 'failed' || step?.status === 'cancelled') && isRunBudgetStop(step.error);
  });
  if (stopped.length === 0) return;
  const moving = new Set(
    invalidationScope(plan.graph, stopped).filter((id) => {
      const status = d.step(id)?.status;
      return status === 'failed' || status === 'cancelled' || status === 'blocked';
    }),
  );
  const order = (topologicalOrder(plan.graph) ?? plan.executable).filter((id) => moving.has(id));
  for (const id of order) {
    const step = d.step(id);
    if (step === undefined) continue;
    closeStepApprovals(d, id, step.generation, SUPERSEDED_APPROVAL_COMMENT);
    d.emit({ type: 'StepMoved', at: d.at, stepId: id, generation: step.generation + 1, trace: [] });
  }
  blockUnreachable(d, order);
}
