/**
 * The JSON a remote capability (Lambda function or HTTP endpoint) receives and may answer with.
 *
 * Request (Lambda payload / HTTP POST body):
 *   { "target": "tool:x", "input": <evaluated step input>, "context": { runId, stepId, generation, attempt,
 *     idempotencyKey, objective, step: { title, description?, successCriteria? }, upstreamOutputs } }
 * Answer:
 *   - `{ "output": <value>, "confidence"?: 0..1, "note"?: "...", "usage"?: { "inputTokens"?, "outputTokens"?,
 *     "tokens"?, "costUsd"? } }` — the envelope: an object with an `output` key and no keys besides these. Agents
 *     use it to report their confidence; any capability may report what it spent (budgets count it).
 *   - `{ "error": { "code": "E_...", "message": "...", "retryable"?: boolean } }` — a failure the capability
 *     reports itself (Lambda only; HTTP endpoints answer with a status code). `retryable` defaults to false.
 *   - anything else: the output itself. A capability whose output happens to look like the envelope (an object with
 *     only an `output` key) must wrap it: `{ "output": { "output": ... } }`.
 */

import { reportedUsage } from '../engine/usage.ts';
import type { CapabilityCall, CapabilityResult } from '../ports/capabilities.ts';
import { CAPABILITY_ERROR_CODES, capabilityError } from './capability-errors.ts';

export interface CapabilityRequest {
  readonly target: string;
  readonly input: unknown;
  readonly context: {
    readonly runId: string;
    readonly stepId: string;
    readonly generation: number;
    readonly attempt: number;
    readonly idempotencyKey: string;
    readonly objective: string;
    readonly step: CapabilityCall['step'];
    readonly upstreamOutputs: Readonly<Record<string, unknown>>;
  };
}

export function capabilityRequest(call: CapabilityCall): CapabilityRequest {
  return {
    target: call.target,
    input: call.input,
    context: {
      runId: call.runId,
      stepId: call.stepId,
      generation: call.generation,
      attempt: call.attempt,
      idempotencyKey: call.idempotencyKey,
      objective: call.objective,
      step: call.step,
      upstreamOutputs: call.upstreamOutputs,
    },
  };
}

const ENVELOPE_KEYS = new Set(['output', 'confidence', 'note', 'usage']);
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export const isValidConfidence = (v: unknown): v is number =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 1;

/** Parses an answer body; throws a permanent CapabilityError when it is not JSON. */
export function parseAnswerJson(text: string, source: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    const excerpt = text.length > 200 ? `${text.slice(0, 200)}…` : text;
    throw capabilityError(
      CAPABILITY_ERROR_CODES.malformedAnswer,
      `${source} answered with a body that is not JSON: ${JSON.stringify(excerpt)}`,
      { retryable: false, cause: error },
    );
  }
}

/** Whether an answer is a self-reported failure `{ error: { code?, message, retryable? } }`. */
export function reportedError(answer: unknown): { code: string; message: string; retryable: boolean } | undefined {
  if (!isRecord(answer) || Object.keys(answer).length !== 1 || !isRecord(answer.error)) return undefined;
  const { code, message, retryable } = answer.error;
  if (typeof message !== 'string') return undefined;
  return {
    code: typeof code === 'string' && code.length > 0 ? code : CAPABILITY_ERROR_CODES.failed,
    message,
    retryable: retryable === true,
  };
}

/** Turns a parsed answer into a result: unwraps the envelope and checks its confidence. */
export function answerToResult(answer: unknown, source: string, evidence: Record<string, unknown>): CapabilityResult {
  const isEnvelope =
    isRecord(answer) && Object.hasOwn(answer, 'output') && Object.keys(answer).every((k) => ENVELOPE_KEYS.has(k));
  if (!isEnvelope) return { output: answer, evidence };
  const { output, confidence, note } = answer;
  const usage = answer.usage === undefined ? undefined : reportedUsage(answer.usage);
  if (answer.usage !== undefined && usage === undefined)
    throw capabilityError(
      CAPABILITY_ERROR_CODES.malformedAnswer,
      `${source} answered with a usage that is not { inputTokens?, outputTokens?, tokens?, costUsd? } of counts`,
      { retryable: false },
    );
  if (confidence !== undefined && !isValidConfidence(confidence))
    throw capabilityError(
      CAPABILITY_ERROR_CODES.malformedAnswer,
      `${source} answered with confidence ${JSON.stringify(confidence)}; it must be a number from 0 to 1`,
      { retryable: false },
    );
  if (note !== undefined && typeof note !== 'string')
    throw capabilityError(CAPABILITY_ERROR_CODES.malformedAnswer, `${source} answered with a note that is not text`, {
      retryable: false,
    });
  return {
    output,
    evidence,
    ...(confidence === undefined ? {} : { confidence }),
    ...(note === undefined ? {} : { note }),
    ...(usage === undefined ? {} : { usage }),
  };
}
