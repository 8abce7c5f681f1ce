/**
 * What an attempt record says, from what its call answered: the fields every record has (an input too large to copy
 * is noted by its size), a failure's record, an expected failure turned into the attempt's success, the verdict and
 * revision it is written with, and the one line its step's trace gets. Pure: the step service makes the call and
 * writes the record.
 */
import type { StepError, StepExpectation } from '../plan/schema.ts';
import type { AttemptRecord, StepRecord } from '../ports/store.ts';
import { decideExpectedFailure, type Verdict } from './verify.ts';

/** Inputs larger than this are not copied onto the attempt record (its size is noted instead). */
export const MAX_RECORDED_INPUT_BYTES = 100_000;
const MAX_RETURNED_MESSAGE = 1000;

export const clipReturnedMessage = (text: string): string =>
  text.length > MAX_RETURNED_MESSAGE ? `${text.slice(0, MAX_RETURNED_MESSAGE - 1)}…` : text;

/** The fields every attempt record has; an input too large to copy is noted by its size instead. */
export function attemptBase(step: StepRecord, n: number, target: string, startedAt: string, input: unknown) {
  const text = JSON.stringify(input) ?? 'null';
  const bytes = Buffer.byteLength(text, 'utf8');
  const recordInput = bytes <= MAX_RECORDED_INPUT_BYTES;
  return {
    fields: {
      runId: step.runId,
      stepId: step.stepId,
      generation: step.generation,
      attempt: n,
      target,
      startedAt,
      ...(recordInput ? { input } : {}),
    },
    inputEvidence: recordInput ? {} : { inputBytes: bytes, inputRecorded: false },
  };
}

export function failedAttempt(
  at: { step: StepRecord; n: number; target: string; startedAt: string; finishedAt: string },
  input: unknown,
  evidence: Record<string, unknown>,
  error: StepError,
): AttemptRecord {
  const { fields, inputEvidence } = attemptBase(at.step, at.n, at.target, at.startedAt, input);
  return {
    ...fields,
    outcome: 'failed',
    finishedAt: at.finishedAt,
    error,
    evidence: { ...evidence, ...inputEvidence },
  };
}

/**
 * A step that expects its capability to fail: a matching failure becomes the attempt's success, the failure its
 * output (`{ failure: { code, message } }`, what dependents read) and its evidence (`expectedFailure`); a success
 * gets a failing verdict; another failure is left as it is. An attempt recorded as met already (a repeat) stays met.
 */
export function judgeExpectation(
  expectation: StepExpectation,
  attempt: AttemptRecord,
): { attempt: AttemptRecord; verdict: Verdict | undefined } {
  if (attempt.evidence.expectedFailure !== undefined) return { attempt, verdict: { verdict: 'pass' } };
  const decided = decideExpectedFailure(
    expectation,
    attempt.outcome === 'succeeded'
      ? { ok: true, output: attempt.output }
      : { ok: false, error: attempt.error ?? { code: 'E_UNKNOWN', message: 'no error was recorded' } },
  );
  if (decided.kind === 'other') return { attempt, verdict: undefined };
  if (decided.kind === 'unmet') return { attempt, verdict: decided.verdict };
  const { error: _met, ...rest } = attempt;
  return {
    attempt: {
      ...rest,
      outcome: 'succeeded',
      output: { failure: decided.evidence.failure },
      evidence: { ...attempt.evidence, expectedFailure: decided.evidence },
    },
    verdict: { verdict: 'pass' },
  };
}

/** The record as written: the plan revision it ran under and its verdict (a failed call is a `fail`). */
export const withVerdict = (attempt: AttemptRecord, verdict: Verdict | undefined, revision: number): AttemptRecord =>
  verdict === undefined
    ? { ...attempt, revision, verdict: 'fail' }
    : { ...attempt, revision, verdict: verdict.verdict, evidence: { ...attempt.evidence, verdict: verdict.verdict } };

export function execNote(attempt: AttemptRecord): string {
  const via = String(attempt.evidence.binding ?? 'binding');
  const met = attempt.evidence.expectedFailure as { failure?: { code: string; message: string } } | undefined;
  if (met?.failure)
    return `attempt ${attempt.attempt} of ${attempt.target} failed as expected: ${met.failure.code} ${met.failure.message}`;
  if (attempt.outcome === 'failed') {
    const kind = attempt.error?.retryable === false ? 'permanent' : 'retryable';
    return `attempt ${attempt.attempt} of ${attempt.target} failed (${kind}): ${attempt.error?.code} ${attempt.error?.message}`;
  }
  const parts = [
    `attempt ${attempt.attempt}: ${attempt.target} via ${via} succeeded`,
    attempt.evidence.replayed === true
      ? `(replayed the recorded result of ${String(attempt.evidence.idempotencyKey)}: not called twice)`
      : `in ${String(attempt.evidence.durationMs)} ms`,
    attempt.confidence === null || attempt.confidence === undefined ? '' : `confidence ${attempt.confidence}`,
    typeof attempt.evidence.note === 'string' ? `— ${attempt.evidence.note}` : '',
  ];
  return parts.filter((p) => p.length > 0).join(' ');
}
