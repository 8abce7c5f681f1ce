/**
 * What a step execution tells its run's decider, and where its state machine goes next. The execution does the work
 * (the capability's call, its verification, the attempt's evidence) and proposes; the decider, fed through the run's
 * mailbox, decides. The route it takes (done, retry after a backoff, wait for a person) is worked out here with the
 * same pure rules the decider applies (engine/step-lifecycle.ts): should the decider see it otherwise (the run's
 * budget spent, a cancel), the execution's next entry finds its step closed and ends.
 */
import type { AttemptEnded, AttemptOutcome as Reported } from '../../engine/run/commands.ts';
import { IN_FLIGHT_STEP_STATUSES } from '../../engine/statuses.ts';
import type { AttemptOutcome } from '../../engine/step-lifecycle.ts';
import type { HumanDecision } from '../../engine/verify.ts';
import type { PlanStep } from '../../plan/schema.ts';
import type { AttemptRecord, StepRecord } from '../../ports/store.ts';
import type { StepNext } from '../coordinator-types.ts';
import type { Interpreter } from '../interpreter.ts';
import type { StepRecords } from './step-records.ts';
import { stepApprovalWindow } from './step-records.ts';

/** The step in flight and what it is checked against. */
export interface InFlight {
  readonly records: StepRecords;
  readonly step: StepRecord;
  readonly planStep: PlanStep;
}

const OUTPUT_KEEPING = [...IN_FLIGHT_STEP_STATUSES, 'cancelled'] as const;

export const done = (attempt: number): StepNext => ({ action: 'done', attempt });

/** An attempt as the execution made and judged it. */
export interface JudgedAttempt {
  readonly attempt: number;
  readonly outcome: AttemptOutcome;
  /** The execution's one-line account. */
  readonly note: string;
  /** The attempt's record as written (its output, usage and evidence). */
  readonly record?: AttemptRecord | undefined;
  readonly decision?: HumanDecision | undefined;
  /** Its output is on the step's item already (written with the attempt's record). */
  readonly written?: true;
}

/** The execution's name: the last part of its id (an ARN, or the embedded runtime's ARN-shaped id). */
export const executionName = (executionId: string): string => executionId.slice(executionId.lastIndexOf(':') + 1);

/** What the attempt spent, as the decider counts it (each attempt once). */
function spendOf(record: AttemptRecord | undefined): AttemptEnded['usage'] {
  const usage = record?.usage;
  if (usage === undefined) return undefined;
  return { tokens: usage.inputTokens + usage.outputTokens, costUsd: usage.costUsd ?? 0 };
}

/** Sends the execution's word about its step to the run's decider. */
export async function tell(
  ctx: Interpreter,
  step: Pick<StepRecord, 'runId' | 'stepId' | 'generation' | 'claimedBy'>,
  attempt: number,
  outcome: Reported,
  note: string,
  extra: Pick<AttemptEnded, 'usage' | 'judged'> = {},
): Promise<void> {
  await ctx.deps.mailbox.send(step.runId, {
    kind: 'AttemptEnded',
    stepId: step.stepId,
    generation: step.generation,
    execution: step.claimedBy ?? '',
    attempt,
    outcome,
    note,
    ...(extra.usage === undefined ? {} : { usage: extra.usage }),
    ...(extra.judged === undefined ? {} : { judged: extra.judged }),
  });
}

/**
 * Reports a judged attempt and routes the machine: a success leaves its output on the step (with the attempt's record
 * when it rides there) before the decider hears of it, so a dependent it starts reads it; a retry waits out the
 * backoff; a review waits for a person; a failure ends the execution.
 */
export async function report(ctx: Interpreter, flight: InFlight, judged: JudgedAttempt): Promise<StepNext> {
  const { step, planStep, records } = flight;
  const { attempt: n, outcome, note, record, decision } = judged;
  const extra = {
    usage: spendOf(record),
    ...(decision === undefined ? {} : { judged: { decision: decision.decision, by: decision.by } }),
  };
  switch (outcome.kind) {
    case 'succeed':
      // A step cancelled during its call keeps what the call made (a side effect happened): its output says so.
      if (judged.written !== true)
        await ctx.deps.store.transitionStep(
          step.runId,
          step.stepId,
          { generation: step.generation, from: OUTPUT_KEEPING },
          { output: record?.output ?? null, confidence: record?.confidence ?? null },
        );
      await tell(ctx, step, n, { kind: 'succeeded', confidence: record?.confidence ?? null }, note, extra);
      return done(n);
    case 'review':
      return {
        action: 'await',
        attempt: n,
        kind: 'review',
        timeoutSeconds: stepApprovalWindow(planStep, ctx.deps.config, records, ctx.now()).seconds,
      };
    case 'retry':
      await tell(ctx, step, n, { kind: 'failed', error: outcome.error }, note, extra);
      return { action: 'retry', attempt: outcome.attempt, delaySeconds: outcome.delaySeconds };
    case 'fail':
      await tell(ctx, step, n, { kind: 'failed', error: outcome.error }, note, extra);
      return done(n);
  }
}
