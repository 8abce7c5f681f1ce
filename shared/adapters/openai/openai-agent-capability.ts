/**
 * An agent bound to a model behind an OpenAI-compatible Chat Completions endpoint
 * (`{"kind": "openai", "baseUrl": …, "model": …, "apiKeyEnv"?: …}` in CAIRN_BINDINGS). The model gets the brief
 * (shared/capabilities/agent-brief.ts) and must reply with one JSON object `{ output, confidence }`, constrained by
 * a `json_schema` response format built from the capability's outputSchema (why not a forced tool call:
 * openai-plan-model.ts). The executor then validates `output` against the outputSchema.
 * - 429 → E_CAPABILITY_THROTTLED, 408 and timeouts → E_CAPABILITY_TIMEOUT, 5xx and connection failures →
 *   E_CAPABILITY_UNAVAILABLE: retryable, and the client does not retry (endpoint.ts): the step state machine owns
 *   retries;
 * - any other 4xx → E_CAPABILITY_REJECTED, permanent;
 * - a body that is not a chat completion → E_MALFORMED_ANSWER, permanent;
 * - no choice or no content, several choices, a cut-off or filtered answer, a tool call, text or broken JSON, a
 *   missing output or a confidence outside 0..1 → E_MODEL_ANSWER, permanent, with the problem in `details`.
 * Token usage is returned for the attempt record, and kept on a failed answer's error (`context.usage`).
 * The call's signal (a step or run out of `budget.maxSeconds`) stops the request: a model that keeps generating is
 * not left running, nor its connection open, after the executor has abandoned the attempt.
 */
import type OpenAI from 'openai';
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import {
  AGENT_SYSTEM_PROMPT_JSON,
  agentBrief,
  SUBMIT_RESULT_TOOL,
  submitResultSchema,
} from '../../capabilities/agent-brief.ts';
import { CAPABILITY_ERROR_CODES, capabilityError } from '../../capabilities/capability-errors.ts';
import { isValidConfidence } from '../../capabilities/wire.ts';
import type { CapabilityBinding, CapabilityCall, CapabilityResult, ModelUsage } from '../../ports/capabilities.ts';
import { type JsonReply, readJsonReply } from './chat-reply.ts';
import {
  classifyProviderError,
  createOpenAIClient,
  type OpenAIEndpoint,
  type ProviderFailureKind,
} from './endpoint.ts';

export const DEFAULT_AGENT_MAX_TOKENS = 4096;

export interface OpenAIAgentCapabilityOptions extends OpenAIEndpoint {
  /** A client made elsewhere (tests, or shared by bindings of one endpoint); else one with `maxRetries: 0`. */
  readonly client?: OpenAI;
  readonly maxTokens?: number;
  readonly temperature?: number;
}

const FAILURE_CODES: Readonly<Record<ProviderFailureKind, string>> = {
  throttled: CAPABILITY_ERROR_CODES.throttled,
  timeout: CAPABILITY_ERROR_CODES.timeout,
  unavailable: CAPABILITY_ERROR_CODES.unavailable,
  rejected: CAPABILITY_ERROR_CODES.rejected,
  malformed: CAPABILITY_ERROR_CODES.malformedAnswer,
};

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The exact Chat Completions request for a call (exported for tests and for whoever wants to see the prompt). */
export function agentCompletionRequest(
  call: CapabilityCall,
  options: Pick<OpenAIAgentCapabilityOptions, 'model' | 'maxTokens' | 'temperature'>,
): ChatCompletionCreateParamsNonStreaming {
  return {
    model: options.model,
    messages: [
      { role: 'system', content: AGENT_SYSTEM_PROMPT_JSON },
      { role: 'user', content: agentBrief(call, 'json') },
    ],
    max_tokens: options.maxTokens ?? DEFAULT_AGENT_MAX_TOKENS,
    ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
    response_format: {
      type: 'json_schema',
      json_schema: {
        name: SUBMIT_RESULT_TOOL,
        description: `The result of the step "${call.step.title}" with your confidence in it.`,
        schema: submitResultSchema(call.capability.outputSchema),
      },
    },
  };
}

function readAnswer(reply: JsonReply, source: string): { output: unknown; confidence: number; usage?: ModelUsage } {
  const usage = reply.usage === undefined ? {} : { usage: reply.usage };
  const bad = (problem: string, why: string) =>
    capabilityError(CAPABILITY_ERROR_CODES.modelAnswer, `${source}: ${why}`, {
      retryable: false,
      details: { problem, finishReason: reply.finishReason },
      context: usage,
    });
  if (!reply.ok) {
    if (reply.problem === 'malformed_body')
      throw capabilityError(CAPABILITY_ERROR_CODES.malformedAnswer, `${source}: ${reply.why}`, { retryable: false });
    throw bad(reply.problem, reply.why);
  }
  const { value } = reply;
  if (!isRecord(value)) throw bad('schema', 'the answer is not a JSON object');
  if (!Object.hasOwn(value, 'output')) throw bad('schema', 'the answer has no "output"');
  if (!isValidConfidence(value.confidence))
    throw bad('schema', `confidence ${JSON.stringify(value.confidence) ?? 'undefined'} is not a number from 0 to 1`);
  return { output: value.output, confidence: value.confidence, ...usage };
}

export function openAIAgentCapability(options: OpenAIAgentCapabilityOptions): CapabilityBinding {
  const { model, baseUrl } = options;
  let client = options.client;
  return {
    kind: 'openai',
    async invoke(call: CapabilityCall): Promise<CapabilityResult> {
      client ??= createOpenAIClient(options);
      const source = `model ${model} at ${baseUrl} (${call.target})`;
      let body: unknown;
      try {
        body = await client.chat.completions.create(
          agentCompletionRequest(call, options),
          call.signal === undefined ? undefined : { signal: call.signal },
        );
      } catch (error) {
        if (call.signal?.aborted === true)
          throw capabilityError(CAPABILITY_ERROR_CODES.timeout, `${source}: the request was stopped by its step`, {
            retryable: true,
            cause: error,
            context: { model },
          });
        const failure = classifyProviderError(error);
        throw capabilityError(
          FAILURE_CODES[failure.kind],
          `Calling ${source} failed: ${failure.errorName}: ${failure.message}`,
          {
            retryable: failure.retryable,
            cause: error,
            details: {
              errorName: failure.errorName,
              ...(failure.httpStatusCode === undefined ? {} : { httpStatusCode: failure.httpStatusCode }),
            },
            context: { model },
          },
        );
      }
      const reply = readJsonReply(body);
      const answer = readAnswer(reply, source);
      return {
        ...answer,
        evidence: { binding: 'openai', model, baseUrl, finishReason: reply.finishReason },
      };
    },
  };
}
