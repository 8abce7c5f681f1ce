/**
 * What follows an attempt: the step's transition the engine decided (succeed, hold for a review, retry after a
 * backoff, fail for good) written with its announcement, and its effects (dependents released, downstream blocked,
 * the run's end looked at). A result that arrives after its step was cancelled is kept on it as evidence.
 */

import { type AttemptOutcome, transitionCondition } from '../../engine/step-lifecycle.ts';
import { appendAndRetain, traceEntry } from '../../engine/trace.ts';
import type { HumanDecision } from '../../engine/verify.ts';
import type { PlanStep } from '../../plan/schema.ts';
import type { AttemptRecord, StepRecord, TraceEntry } from '../../ports/store.ts';
import { recordStepDuration } from '../coordinator-metrics.ts';
import type { StepNext } from '../coordinator-types.ts';
import { event, type Interpreter, isCurrent } from '../interpreter.ts';
import { afterSuccess, failStep } from '../step-follow-ups.ts';
import { afterSpend } from './budget-keeping.ts';
import { type StepRecords, stepApprovalWindow } from './step-records.ts';

/** The step in flight and what it is checked against. */
export interface InFlight {
  readonly records: StepRecords;
  readonly step: StepRecord;
  readonly planStep: PlanStep;
}

export const done = (attempt: number): StepNext => ({ action: 'done', attempt });

/** What the engine decided after an attempt, and what of it the step keeps. */
export interface DecidedAttempt {
  /** The attempt's number. */
  readonly attempt: number;
  readonly outcome: AttemptOutcome;
  /** The trace entry's text. */
  readonly note: string;
  readonly result: StepResult;
  /** A person's decision, when the attempt waited for one. */
  readonly decision?: HumanDecision;
}

/**
 * Writes what the engine decided after an attempt, and performs its effects; then a run over its budget is looked
 * at (it ends once nothing is in flight).
 */
export async function follow(ctx: Interpreter, flight: InFlight, decided: DecidedAttempt): Promise<StepNext> {
  const next = await followOutcome(ctx, flight, decided);
  await afterSpend(ctx, flight.records);
  return next;
}

async function followOutcome(ctx: Interpreter, flight: InFlight, decided: DecidedAttempt): Promise<StepNext> {
  const { attempt: n, outcome, note, result, decision } = decided;
  const { records, step, planStep } = flight;
  const now = ctx.now();
  const { runId, stepId, generation } = step;
  switch (outcome.kind) {
    case 'succeed':
      return succeed(ctx, flight, n, result, [traceEntry(decision ? 'judge' : 'exec', note, now)]);
    case 'review':
      return {
        action: 'await',
        attempt: n,
        kind: 'review',
        timeoutSeconds: stepApprovalWindow(planStep, ctx.deps.config, records, now).seconds,
      };
    case 'retry': {
      const next: StepNext = { action: 'retry', attempt: outcome.attempt, delaySeconds: outcome.delaySeconds };
      // A repeat of a failure already recorded: the same answer, nothing written twice.
      if (step.status === 'retrying' && step.attempts === n) return next;
      const text = `${note}; attempt ${outcome.attempt} in ${outcome.delaySeconds}s`;
      const retrying = await ctx.transitionStep(
        runId,
        stepId,
        transitionCondition('retry', generation),
        { status: 'retrying', attempts: n, error: outcome.error, appendTrace: [traceEntry('fail', text, now)] },
        [
          event('StepRetrying', {
            runId,
            stepId,
            generation,
            attempt: outcome.attempt,
            delaySeconds: outcome.delaySeconds,
            error: outcome.error,
          }),
        ],
      );
      if (retrying) return next;
      const current = await ctx.deps.store.getStep(runId, stepId);
      if (isCurrent(current, generation) && current.status === 'retrying' && current.attempts === n) return next;
      await recordLate(ctx, step, current, n, note);
      return done(n);
    }
    case 'fail': {
      const by = decision?.by ? ` by ${decision.by}` : '';
      const why = decision
        ? `${decision.decision}${by}`
        : outcome.why === 'permanent'
          ? 'permanent error'
          : `after ${n} attempt(s)`;
      const failed = await failStep(ctx, records.plan, step, outcome.error, {
        attempts: n,
        note: `failed (${why}): ${outcome.error.code} ${outcome.error.message}`,
      });
      if (!failed) await recordLate(ctx, step, await ctx.deps.store.getStep(runId, stepId), n, note);
      return done(n);
    }
  }
}

/** The attempt's result as the step keeps it. */
export interface StepResult {
  readonly output: unknown;
  readonly confidence: number | null;
}

/**
 * A verified result: the step succeeds with the attempt's output, only if it is still this generation (a superseded
 * generation's late result never overwrites), trace retention applies, dependents are released once per edge and
 * the run's end is checked. A repeat finds the step succeeded and only redoes the follow-ups.
 */
async function succeed(
  ctx: Interpreter,
  flight: InFlight,
  n: number,
  result: StepResult,
  notes: readonly TraceEntry[],
): Promise<StepNext> {
  const { records, step, planStep } = flight;
  const { runId, stepId, generation } = step;
  const succeeded = await writeSuccess(ctx, flight, n, result, notes);
  if (succeeded) {
    recordStepDuration(ctx.deps.metrics, succeeded, planStep.target, 'succeeded');
  } else {
    const current = await ctx.deps.store.getStep(runId, stepId);
    if (!isCurrent(current, generation) || current.status !== 'succeeded') {
      await recordLate(ctx, step, current, n, notes.map((entry) => entry.text).join('; '), result);
      return done(n);
    }
  }
  await afterSuccess(ctx, records.plan, step);
  return done(n);
}

/**
 * A first attempt's verified result whose record rides on the step's success write (engine: attemptRecordPlace),
 * one write instead of two. The write is made only from `running`: attempt 1 is still in flight and no duplicated
 * invocation has recorded it apart and moved the step on. A repeat of RunStep after this write finds the step
 * succeeded and only redoes the follow-ups; one before it calls again, as before the attempt's own record.
 * Undefined when the write was lost to anything but this generation's success (a copy that recorded the attempt
 * first, a cancellation, a new generation): nothing was written, and the caller records the attempt apart.
 */
export async function succeedCarrying(
  ctx: Interpreter,
  flight: InFlight,
  n: number,
  result: StepResult,
  note: string,
  record: AttemptRecord,
): Promise<StepNext | undefined> {
  const { records, step, planStep } = flight;
  const { runId, stepId, generation } = step;
  const succeeded = await writeSuccess(ctx, flight, n, result, [traceEntry('exec', note, ctx.now())], record);
  if (succeeded) {
    recordStepDuration(ctx.deps.metrics, succeeded, planStep.target, 'succeeded');
  } else {
    const current = await ctx.deps.store.getStep(runId, stepId);
    if (!isCurrent(current, generation) || current.status !== 'succeeded') return undefined;
  }
  await afterSuccess(ctx, records.plan, step);
  await afterSpend(ctx, records);
  return done(n);
}

/** The `succeed` transition (carrying the attempt's record: `succeedCarrying`), announcing StepSucceeded. */
function writeSuccess(
  ctx: Interpreter,
  flight: InFlight,
  n: number,
  result: StepResult,
  notes: readonly TraceEntry[],
  record?: AttemptRecord,
): Promise<StepRecord | undefined> {
  const { step } = flight;
  const { runId, stepId, generation } = step;
  const now = ctx.now();
  const { confidence } = result;
  const judged = traceEntry(
    'judge',
    `succeeded with attempt ${n}${confidence === null ? '' : ` (confidence ${confidence})`}`,
    now,
  );
  const attempts = Math.max(step.attempts, n);
  return ctx.transitionStep(
    runId,
    stepId,
    transitionCondition(record === undefined ? 'succeed' : 'succeedCarrying', generation),
    {
      status: 'succeeded',
      output: result.output,
      confidence,
      attempts,
      error: null,
      finishedAt: now,
      trace: appendAndRetain(step.trace, [...notes, judged], 'succeeded', ctx.deps.config.traceRetention),
      ...(record === undefined ? {} : { attemptRecord: record }),
    },
    [event('StepSucceeded', { runId, stepId, generation, attempts, confidence })],
  );
}

/**
 * The step was cancelled while attempt `n` ran (the run was cancelled, or ended at its deadline): it stays cancelled,
 * and what the attempt really did is written onto it as evidence — its output when it succeeded, else the note — so
 * the step, its attempt record and any side effect agree. Nothing is announced: the run has finished.
 */
async function recordLate(
  ctx: Interpreter,
  claimed: StepRecord,
  current: StepRecord | undefined,
  n: number,
  note: string,
  kept?: StepResult,
): Promise<void> {
  if (!isCurrent(current, claimed.generation) || current.status !== 'cancelled') return;
  if (current.claimedBy !== claimed.claimedBy) return;
  const text = `${note} — after the step was cancelled (${current.error?.code ?? 'cancelled'}); it stays cancelled`;
  if (current.trace.some((entry) => entry.text === text)) return; // a repeat: written already
  await ctx.transitionStep(current.runId, current.stepId, transitionCondition('evidence', current.generation), {
    attempts: Math.max(current.attempts, n),
    ...(kept === undefined ? {} : { output: kept.output, confidence: kept.confidence }),
    appendTrace: [traceEntry('exec', text, ctx.now())],
  });
}
