/**
 * Starts the platform refused: a throttle is never a step's failure. The shell performs a batch's execution starts
 * through its pacer; those it could not make (Step Functions' StartExecution bucket empty past the SDK's retries, or
 * the pacer's queue longer than a batch may wait) come back as StartsThrottled. The decider defers them durably:
 * `StartsDeferred`, whose effect is a timer, then `StartsRetried` at the timer's RetryStarts, whose effects start them
 * again. A step waits so, with jittered backoff of up to minutes, for as long as its run lets it: the run's deadline
 * (FinalizeRun) or a cancel closes it, and a start no longer wanted is dropped.
 */
import { createHash } from 'node:crypto';
import { compensatedStepId, compensationStepId, isCompensationStepId } from '../../compensation.ts';
import type { DeferredStart, RetryStarts, StartsThrottled } from '../commands.ts';
import type { Decision } from '../decision.ts';
import { letsAttemptsStart } from './flow.ts';

/** The first deferral waits about this long; each further one twice as long, up to the cap. */
export const START_RETRY_BASE_SECONDS = 2;
/** The longest a deferred start waits between two tries (the backoff's cap, jitter included). */
export const START_RETRY_CAP_SECONDS = 300;

const IN_FLIGHT = new Set(['running', 'retrying', 'awaiting_approval']);

/**
 * A number in [0, 1) that is the same for the same run, starts and retry: the decider has no randomness, and a
 * replayed decision must decide the same wait. Different runs and waves come back at different moments.
 */
function jitterOf(runId: string, starts: readonly DeferredStart[], retry: number): number {
  const hash = createHash('sha256').update(`${runId}\n${retry}\n${starts.map((s) => s.execution).join('\n')}`);
  return hash.digest().readUInt32BE(0) / 2 ** 32;
}

/**
 * Seconds until deferral `retry` of these starts is tried: half the doubled base plus a jittered half (so a wave of
 * throttled runs does not come back as one), at least the shell's hint (when its pacer expects room), at most the
 * cap unless the hint says more.
 */
export function startRetryDelaySeconds(retry: number, hintSeconds: number, jitter: number): number {
  const ceiling = Math.min(START_RETRY_CAP_SECONDS, START_RETRY_BASE_SECONDS * 2 ** Math.min(retry, 20));
  const backoff = ceiling / 2 + (ceiling / 2) * jitter;
  const hint = Number.isFinite(hintSeconds) && hintSeconds > 0 ? hintSeconds * (1 + jitter / 4) : 0;
  return Math.ceil(Math.max(backoff, hint));
}

/**
 * Whether the run still wants this execution started: a step's generation it holds, in flight, or the compensation
 * of a step still compensating in that generation and round.
 */
function stillWanted(d: Decision, start: DeferredStart): boolean {
  const stepId = start.input.stepId;
  const generation = start.input.generation;
  if (typeof stepId !== 'string' || typeof generation !== 'number') return false;
  if (isCompensationStepId(stepId)) {
    const step = d.step(compensatedStepId(stepId));
    return (
      step?.status === 'compensating' &&
      step.generation === generation &&
      compensationStepId(step.stepId, step.compensation?.round ?? 0) === stepId
    );
  }
  const step = d.step(stepId);
  return (
    step !== undefined &&
    step.generation === generation &&
    step.claimedBy === start.execution &&
    IN_FLIGHT.has(step.status)
  );
}

const wanted = (d: Decision, starts: readonly DeferredStart[]): DeferredStart[] =>
  letsAttemptsStart(d.run) ? starts.filter((start) => stillWanted(d, start)) : [];

/** The shell could not start these: they wait, durably, and are tried again (never failed for it). */
export function startsThrottled(d: Decision, command: StartsThrottled): void {
  const starts = wanted(d, command.starts);
  if (starts.length === 0) return;
  const retry = Math.max(0, Math.floor(command.retry)) + 1;
  const seconds = startRetryDelaySeconds(retry - 1, command.retryAfterSeconds, jitterOf(d.run.runId, starts, retry));
  const until = new Date(Date.parse(d.at) + seconds * 1000).toISOString();
  d.emit({ type: 'StartsDeferred', at: d.at, starts, retry, until });
}

/** A deferral's time came: the starts still wanted are made again (a further throttle defers them longer). */
export function retryStarts(d: Decision, command: RetryStarts): void {
  const starts = wanted(d, command.starts);
  if (starts.length === 0) return;
  d.emit({ type: 'StartsRetried', at: d.at, starts, retry: command.retry });
}
