/**
 * The step executor: runs one attempt of one step generation through its capability binding and records what
 * happened on the attempt record (input, output, confidence, error, evidence) plus an `[exec]` trace entry. Only
 * ids travel in and out (Step Functions payloads stay small); the output stays in the store.
 *
 * An attempt runs at most once: the attempt record is written with a condition first, and a repeated invocation
 * returns the recorded outcome. Side-effecting capabilities (`idempotent`, `mutating`) are also called through an
 * idempotency record per generation, so a later attempt or a duplicate execution never repeats a side effect that
 * already succeeded. Capability failures are returned (`ok: false`), never thrown; store failures do throw.
 */
import {
  CAPABILITY_ERROR_CODES,
  type CapabilityFailure,
  toCapabilityFailure,
} from '../capabilities/capability-errors.ts';
import { isValidConfidence } from '../capabilities/wire.ts';
import { traceEntry } from '../engine/trace.ts';
import { isPayloadTooLargeError } from '../errors.ts';
import type { Catalog } from '../plan/catalog.ts';
import type { StepError } from '../plan/schema.ts';
import type { CapabilityCall, CapabilityRegistry } from '../ports/capabilities.ts';
import type { AttemptRecord, Store } from '../ports/store.ts';
import { type CheckedAnswer, callOnce, idempotencyKey } from './idempotent-call.ts';
import { prepareAttempt, type RevisionMemory } from './step-attempt.ts';

export interface StepExecutorConfig {
  /** Largest output (JSON bytes) a step may produce; DynamoDB items hold 400 KB and SFN payloads 256 KB. */
  readonly maxOutputBytes?: number;
  /** How long a side effect's recorded result answers replays (default one day). */
  readonly idempotencyTtlSeconds?: number;
  /** How long an unfinished side-effecting call keeps others from calling (default 900 s, the Lambda maximum). */
  readonly idempotencyInProgressSeconds?: number;
  /** Inputs larger than this are not copied onto the attempt record (its size is noted instead). */
  readonly maxRecordedInputBytes?: number;
}

export const DEFAULT_MAX_OUTPUT_BYTES = 200_000;
export const DEFAULT_IDEMPOTENCY_TTL_SECONDS = 86_400;
export const DEFAULT_IDEMPOTENCY_IN_PROGRESS_SECONDS = 900;
export const DEFAULT_MAX_RECORDED_INPUT_BYTES = 100_000;
const MAX_RETURNED_MESSAGE = 1000;

export interface StepExecutorDeps {
  readonly store: Store;
  readonly catalog: Catalog;
  readonly registry: CapabilityRegistry;
  readonly clock: () => Date;
  readonly config?: StepExecutorConfig;
}

export interface ExecuteRequest {
  readonly runId: string;
  readonly stepId: string;
  readonly generation: number;
  readonly attempt: number;
}

export type StepFailure = { readonly code: string; readonly message: string; readonly retryable: boolean };
export type ExecuteResult = { readonly ok: true } | { readonly ok: false; readonly error: StepFailure };

export interface StepExecutor {
  execute(request: ExecuteRequest): Promise<ExecuteResult>;
}

const jsonBytes = (text: string): number => Buffer.byteLength(text, 'utf8');
const clip = (text: string): string =>
  text.length > MAX_RETURNED_MESSAGE ? `${text.slice(0, MAX_RETURNED_MESSAGE - 1)}…` : text;
const failed = (failure: CapabilityFailure): ExecuteResult => ({
  ok: false,
  error: { code: failure.code, message: clip(failure.message), retryable: failure.retryable },
});

/** The outcome an attempt record already holds (a repeated invocation of the same attempt). */
function recordedOutcome(attempt: AttemptRecord): ExecuteResult {
  if (attempt.outcome === 'succeeded') return { ok: true };
  if (attempt.outcome === 'failed' && attempt.error)
    return failed({ ...attempt.error, retryable: attempt.error.retryable ?? false });
  // Still 'running': an earlier invocation of this attempt crashed or is still calling. It must not be called
  // twice; the next attempt may try again (side effects stay guarded by the idempotency record).
  return failed({
    code: 'E_ATTEMPT_IN_PROGRESS',
    message: `attempt ${attempt.attempt} of ${attempt.stepId} (generation ${attempt.generation}) was already started and did not finish`,
    retryable: true,
  });
}

export function createStepExecutor(deps: StepExecutorDeps): StepExecutor {
  const { store, catalog, registry, clock } = deps;
  const maxOutputBytes = deps.config?.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const maxRecordedInputBytes = deps.config?.maxRecordedInputBytes ?? DEFAULT_MAX_RECORDED_INPUT_BYTES;
  const revisions: RevisionMemory = new Map();
  const times = {
    clock,
    ttlSeconds: deps.config?.idempotencyTtlSeconds ?? DEFAULT_IDEMPOTENCY_TTL_SECONDS,
    inProgressSeconds: deps.config?.idempotencyInProgressSeconds ?? DEFAULT_IDEMPOTENCY_IN_PROGRESS_SECONDS,
  };

  /** Calls the binding and checks the answer's form (JSON, size, confidence): what a side effect's record keeps. */
  async function invoke(call: CapabilityCall): Promise<CheckedAnswer> {
    const binding = registry.binding(call.target);
    if (!binding)
      return {
        ok: false,
        phase: 'call',
        failure: { code: CAPABILITY_ERROR_CODES.noBinding, message: `no binding for ${call.target}`, retryable: false },
      };
    const started = performance.now();
    const ran = () => ({ binding: binding.kind, durationMs: Math.round(performance.now() - started) });
    let result: Awaited<ReturnType<typeof binding.invoke>>;
    try {
      result = await binding.invoke(call);
    } catch (error) {
      return { ok: false, phase: 'call', failure: toCapabilityFailure(error), evidence: ran() };
    }
    const evidence = { ...ran(), ...result.evidence };
    const answerFailure = (code: string, message: string): CheckedAnswer => ({
      ok: false,
      phase: 'answer',
      failure: { code, message, retryable: false },
      evidence,
    });
    let text: string | undefined;
    try {
      text = JSON.stringify(result.output);
    } catch (error) {
      return answerFailure(
        CAPABILITY_ERROR_CODES.malformedAnswer,
        `the output is not JSON: ${(error as Error).message}`,
      );
    }
    if (text === undefined)
      return answerFailure(CAPABILITY_ERROR_CODES.malformedAnswer, 'the capability returned no output');
    const bytes = jsonBytes(text);
    if (bytes > maxOutputBytes)
      return answerFailure(
        CAPABILITY_ERROR_CODES.outputTooLarge,
        `the output of ${call.target} is ${bytes} bytes of JSON, over the limit of ${maxOutputBytes} bytes ` +
          '(step results live in one DynamoDB item and travel in 256 KB Step Functions payloads); ' +
          'return a reference to the data (for example an S3 URL) instead of the data itself',
      );
    if (result.confidence !== undefined && !isValidConfidence(result.confidence))
      return answerFailure(
        CAPABILITY_ERROR_CODES.modelAnswer,
        `confidence ${String(result.confidence)} is not a number from 0 to 1`,
      );
    return {
      ok: true,
      // Parsed back so what is validated is exactly what is stored (no undefined fields, no class instances).
      output: JSON.parse(text) as unknown,
      evidence,
      ...(result.confidence === undefined ? {} : { confidence: result.confidence }),
      ...(result.note === undefined ? {} : { note: result.note }),
    };
  }

  async function appendTrace(request: ExecuteRequest, text: string): Promise<void> {
    // The step may have moved on (cancelled, superseded): then its trace is no longer this attempt's to write.
    await store.transitionStep(
      request.runId,
      request.stepId,
      { generation: request.generation, from: ['running', 'retrying'] },
      { appendTrace: [traceEntry('exec', text, clock())] },
    );
  }

  async function finishFailed(attempt: AttemptRecord, failure: CapabilityFailure, evidence: Record<string, unknown>) {
    const error = {
      code: failure.code,
      message: failure.message,
      retryable: failure.retryable,
      ...(failure.details === undefined ? {} : { details: failure.details as StepError['details'] }),
    };
    await store.updateAttempt({
      ...attempt,
      outcome: 'failed',
      finishedAt: clock().toISOString(),
      error,
      evidence: { ...attempt.evidence, ...evidence },
    });
    const kind = failure.retryable ? 'retryable' : 'permanent';
    await appendTrace(
      attempt,
      `attempt ${attempt.attempt} of ${attempt.target} failed (${kind}): ${failure.code} ${failure.message}`,
    );
    return failed(failure);
  }

  return {
    async execute(request) {
      const prepared = await prepareAttempt(store, catalog, registry, request, revisions);
      if (prepared.kind === 'skip') return failed(prepared.failure);
      const { target, sideEffect, input } = prepared;
      const inputText = JSON.stringify(input) ?? 'null';
      const recordInput = jsonBytes(inputText) <= maxRecordedInputBytes;
      const key = idempotencyKey(request.runId, request.stepId, request.generation);
      const attempt: AttemptRecord = {
        runId: request.runId,
        stepId: request.stepId,
        generation: request.generation,
        attempt: request.attempt,
        target,
        startedAt: clock().toISOString(),
        outcome: 'running',
        ...(recordInput ? { input } : {}),
        evidence: {
          sideEffect,
          ...(recordInput ? {} : { inputBytes: jsonBytes(inputText), inputRecorded: false }),
          ...(sideEffect === 'none' ? {} : { idempotencyKey: key }),
        },
      };
      if (!(await store.putAttempt(attempt))) {
        const recorded = (await store.listAttempts(request.runId, request.stepId)).find(
          (a) => a.generation === request.generation && a.attempt === request.attempt,
        );
        // Not readable yet (it was written a moment ago by a duplicate): treat it as still running.
        return recordedOutcome(recorded ?? attempt);
      }
      if (prepared.kind === 'invalid') return finishFailed(attempt, prepared.failure, {});
      const { call } = prepared;

      const { answer, replayed } =
        sideEffect === 'none'
          ? { answer: await invoke(call), replayed: false }
          : await callOnce(store, key, times, () => invoke(call));
      if (!answer.ok) return finishFailed(attempt, answer.failure, { ...answer.evidence, replayed });

      const contract = catalog.validateOutput(call.target, answer.output);
      const evidence: Record<string, unknown> = { ...attempt.evidence, ...answer.evidence, replayed };
      if (!contract.ok)
        return finishFailed(
          attempt,
          {
            code: CAPABILITY_ERROR_CODES.outputSchema,
            message: `the output of ${call.target} does not match its outputSchema: ${contract.errors.join('; ')}`,
            retryable: false,
            details: { errors: contract.errors },
          },
          evidence,
        );
      const confidence = answer.confidence ?? null;
      try {
        await store.updateAttempt({
          ...attempt,
          outcome: 'succeeded',
          finishedAt: clock().toISOString(),
          output: answer.output,
          confidence,
          evidence,
        });
      } catch (error) {
        if (!isPayloadTooLargeError(error)) throw error;
        return finishFailed(
          attempt,
          {
            code: CAPABILITY_ERROR_CODES.outputTooLarge,
            message: `the attempt record of ${call.target} with its output is too large to store: ${(error as Error).message}`,
            retryable: false,
          },
          evidence,
        );
      }
      const parts = [
        `attempt ${request.attempt}: ${call.target} via ${String(evidence.binding ?? 'binding')} succeeded`,
        replayed
          ? `(replayed the recorded result of ${key}: not called twice)`
          : `in ${String(evidence.durationMs)} ms`,
        confidence === null ? '' : `confidence ${confidence}`,
        answer.note ? `— ${answer.note}` : '',
      ];
      await appendTrace(request, parts.filter((p) => p.length > 0).join(' '));
      return { ok: true };
    },
  };
}
