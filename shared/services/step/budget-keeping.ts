/**
 * Budgets on the step runner's path: an attempt's usage is added to its step's and its run's sums once (keyed by
 * the attempt, so a repeated RunStep adds nothing), BudgetThreshold is announced once per budget and dimension,
 * a step over its own budget fails, a claim is refused once the run's budget is spent, and a run over budget has
 * its unstarted steps closed and ends once the attempts in flight have finished.
 */
import {
  BUDGET_ERROR_CODE,
  type BudgetFigure,
  checkBudget,
  describeExhaustion,
  round,
  secondsBetween,
  spendOf,
  spendsAnything,
  spentBy,
  usageKey,
} from '../../engine/budget.ts';
import { RUN_BUDGET_STOP } from '../../engine/budget-replan.ts';
import type { AttemptOutcome } from '../../engine/step-lifecycle.ts';
import { transitionCondition } from '../../engine/step-lifecycle.ts';
import { traceEntry } from '../../engine/trace.ts';
import type { Budget, PlanStep, StepError } from '../../plan/schema.ts';
import type { Spend } from '../../ports/capabilities.ts';
import type { AttemptRecord, StepRecord } from '../../ports/store.ts';
import { runBudgetState } from '../budget-state.ts';
import { event, type Interpreter } from '../interpreter.ts';
import { settleRun } from '../run-end.ts';
import { closeOpenSteps } from '../step-follow-ups.ts';
import type { StepRecords } from './step-records.ts';

/** A 32-bit FNV-1a hash in hex: announcement ids allow only [A-Za-z0-9-], step ids have more. */
function shortHash(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}

/** One announcement per run (or step) budget and dimension: its id is fixed, so a repeat is the same item. */
const thresholdId = (stepId: string | undefined, figure: BudgetFigure): string =>
  stepId === undefined ? `budget-run-${figure.dimension}` : `budget-step-${shortHash(stepId)}-${figure.dimension}`;

async function announceThresholds(
  ctx: Interpreter,
  runId: string,
  stepId: string | undefined,
  budget: Budget | undefined,
  spent: Spend,
): Promise<void> {
  const { warned, warnAt } = checkBudget(budget, spent, undefined);
  await Promise.all(
    warned.map((figure) => {
      if (figure.dimension === 'seconds') return Promise.resolve();
      const detail = {
        runId,
        ...(stepId === undefined ? {} : { stepId }),
        dimension: figure.dimension,
        limit: figure.limit,
        spent: round(figure.spent),
        warnAt,
      };
      return ctx.deps.store.announce({
        id: thresholdId(stepId, figure),
        runId,
        at: ctx.now(),
        events: [event('BudgetThreshold', detail)],
      });
    }),
  );
}

/** Whether an attempt spent anything that counts against a budget (model usage with a price or tokens). */
export const attemptSpends = (attempt: AttemptRecord): boolean =>
  attempt.usage !== undefined && spendsAnything(spendOf(attempt.usage));

/**
 * Adds a recorded attempt's usage to the sums (once per attempt) and announces thresholds it reached. Returns the
 * sums after it, or undefined when the attempt spent nothing.
 */
export async function countUsage(
  ctx: Interpreter,
  records: StepRecords,
  planStep: PlanStep,
  attempt: AttemptRecord,
): Promise<{ run: Spend; step: Spend } | undefined> {
  if (attempt.usage === undefined || !attemptSpends(attempt)) return undefined;
  const spend = spendOf(attempt.usage);
  const { runId, stepId, generation } = attempt;
  const sums = await ctx.deps.store.addUsage(runId, stepId, usageKey(stepId, generation, attempt.attempt), spend);
  await Promise.all([
    announceThresholds(ctx, runId, undefined, records.plan.plan.budget, sums.run),
    announceThresholds(ctx, runId, stepId, planStep.budget, sums.step),
  ]);
  return sums;
}

/**
 * A step over its own budget (tokens, cost, or seconds since its claim) fails for good with E_BUDGET_EXHAUSTED,
 * whatever its attempt answered: the limit is hard, and no further attempt may spend more.
 */
export function stepBudgetOutcome(
  outcome: AttemptOutcome,
  planStep: PlanStep,
  step: StepRecord,
  spent: Spend | undefined,
  now: string,
): AttemptOutcome {
  if (planStep.budget === undefined || outcome.kind === 'fail') return outcome;
  const used = spent ?? spentBy(step);
  const { exhausted } = checkBudget(planStep.budget, used, secondsBetween(step.startedAt, now));
  if (exhausted.length === 0) return outcome;
  const error: StepError = {
    code: BUDGET_ERROR_CODE,
    message: describeExhaustion('step', exhausted),
    retryable: false,
    details: { exhausted: exhausted.map((f) => ({ ...f, spent: round(f.spent) })) },
  };
  return { kind: 'fail', error, why: 'permanent' };
}

/** The error of a step the run's budget stopped (a budget replan may run it again: engine/budget-replan.ts). */
export const runBudgetStop = (message: string): StepError => ({
  code: BUDGET_ERROR_CODE,
  message,
  retryable: false,
  details: { ...RUN_BUDGET_STOP },
});

/** Why the run's budget refuses new steps now, or undefined. */
export const claimRefusal = (records: StepRecords, now: string): string | undefined =>
  runBudgetState(records.plan.plan, records.run, now)?.detail;

/** The claim refused (the run's budget is spent): the step is closed unstarted and the run looked at. */
export async function refuseClaim(
  ctx: Interpreter,
  records: StepRecords,
  step: StepRecord,
  executionId: string,
  reason: string,
): Promise<void> {
  const now = ctx.now();
  const error = runBudgetStop(`not started: ${reason}`);
  await ctx.transitionStep(step.runId, step.stepId, transitionCondition('refuse', step.generation), {
    status: 'cancelled',
    claimedBy: executionId,
    error,
    finishedAt: now,
    appendTrace: [traceEntry('fail', error.message, now)],
  });
  await settleOverBudget(ctx, records, reason);
}

/**
 * After an attempt of a run with a budget: once the budget is spent, the steps that have not started are closed
 * and the run is looked at as a whole (it ends when nothing is in flight any more).
 */
export async function afterSpend(ctx: Interpreter, records: StepRecords): Promise<void> {
  if (records.plan.plan.budget === undefined) return;
  const run = await ctx.deps.store.getRun(records.run.runId);
  const state = run === undefined ? undefined : runBudgetState(records.plan.plan, run, ctx.now());
  if (state !== undefined) await settleOverBudget(ctx, records, state.detail);
}

/**
 * Unstarted steps are closed before the run's end is written (as a cancellation does), so a run that reads as
 * ended has nothing left that could start. Under `onExhausted: "pause"` they stay, for a person to decide on; under
 * `replan` they are closed too (no execution is left to start them), and the budget revision runs again those it
 * keeps (a new generation: they are in its scope, closed by the budget).
 */
async function settleOverBudget(ctx: Interpreter, records: StepRecords, reason: string): Promise<void> {
  const { runId } = records.run;
  if (records.plan.plan.budget?.onExhausted !== 'pause')
    await closeOpenSteps(
      ctx,
      runId,
      runBudgetStop(`not started: ${reason}`),
      (step) => step.status === 'pending' || step.status === 'ready',
    );
  await settleRun(ctx, runId);
}
