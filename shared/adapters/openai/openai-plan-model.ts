/**
 * The model port on an OpenAI-compatible Chat Completions endpoint. The same rules as the Bedrock plan model: one
 * forced plan submission, and an empty, several-candidate, truncated, refused or malformed answer is rejected with
 * the same PlannerError codes; the plan itself is validated by the planner like any untrusted input.
 *
 * Structured output: a `response_format` of type `json_schema` whose schema is the plan's JSON Schema, rather than
 * a forced tool call (`tool_choice` naming `submit_plan`). Ollama (0.5+), vLLM, llama.cpp's server and LM Studio
 * all constrain decoding to a JSON Schema response format with a grammar; forcing a named tool is not honoured by
 * all of them (Ollama ignores `tool_choice`), so a forced tool call would not be forced everywhere. Hosted OpenAI
 * takes the format too; `strict` is left off because strict mode refuses schemas with optional properties, which
 * the plan format has. "Forced" means: the reply is that one JSON value, in exactly one choice.
 *
 * Provider failures are ModelErrors (code E_MODEL_PROVIDER) with `retryable` for 429, 408, 5xx, timeouts and
 * connection failures; the client does not retry (endpoint.ts).
 */
import type OpenAI from 'openai';
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import type { PlannerEndpointSettings } from '../../config/settings.ts';
import { ModelError } from '../../errors.ts';
import { MODEL_PROVIDER_ERROR, type PlannerErrorCode, plannerError } from '../../planner/errors.ts';
import { buildPlanPrompt, PLAN_TOOL_DESCRIPTION, PLAN_TOOL_NAME } from '../../planner/prompt.ts';
import type { PlanModel, PlanModelRequest } from '../../ports/plan-model.ts';
import { type ApiKeyDeps, apiKeyOf } from './api-key.ts';
import { type JsonReply, type ReplyProblem, readJsonReply } from './chat-reply.ts';
import { classifyProviderError, createOpenAIClient, type OpenAIEndpoint } from './endpoint.ts';

export const DEFAULT_PLAN_MAX_TOKENS = 8192;
export const DEFAULT_PLAN_TEMPERATURE = 0;

export interface OpenAIPlanModelOptions extends OpenAIEndpoint {
  /** A client made elsewhere (tests); else one from the endpoint, with `maxRetries: 0`. */
  readonly client?: OpenAI;
  readonly maxTokens?: number;
  readonly temperature?: number;
}

const PROBLEM_CODES: Readonly<Record<ReplyProblem, PlannerErrorCode>> = {
  malformed_body: 'E_MODEL_MALFORMED',
  empty: 'E_MODEL_EMPTY',
  several_choices: 'E_MODEL_SEVERAL_CANDIDATES',
  truncated: 'E_MODEL_TRUNCATED',
  refused: 'E_MODEL_REFUSED',
  tool_call: 'E_MODEL_WRONG_TOOL',
  text_only: 'E_MODEL_TEXT_ONLY',
  malformed_json: 'E_MODEL_MALFORMED',
};

/** The exact Chat Completions request for a plan request (exported for tests and for logging what was asked). */
export function planCompletionRequest(
  request: PlanModelRequest,
  options: Pick<OpenAIPlanModelOptions, 'model' | 'maxTokens' | 'temperature'>,
): ChatCompletionCreateParamsNonStreaming {
  const prompt = buildPlanPrompt(request, 'json');
  return {
    model: options.model,
    messages: [
      { role: 'system', content: prompt.system },
      { role: 'user', content: prompt.user },
    ],
    max_tokens: options.maxTokens ?? DEFAULT_PLAN_MAX_TOKENS,
    temperature: options.temperature ?? DEFAULT_PLAN_TEMPERATURE,
    response_format: {
      type: 'json_schema',
      json_schema: { name: PLAN_TOOL_NAME, description: PLAN_TOOL_DESCRIPTION, schema: request.planSchema },
    },
  };
}

/** The plan the model submitted, or a PlannerError saying why the reply holds none (or more than one). */
export function planCandidateOf(reply: JsonReply, model: string): unknown {
  const context = {
    provider: 'openai',
    model,
    finishReason: reply.finishReason,
    ...(reply.usage === undefined ? {} : { usage: reply.usage }),
  };
  if (!reply.ok) throw plannerError(PROBLEM_CODES[reply.problem], `${model}: ${reply.why}`, context);
  // A JSON array is a list of answers, not a plan: several of them are several candidates.
  if (Array.isArray(reply.value) && reply.value.length > 1)
    throw plannerError(
      'E_MODEL_SEVERAL_CANDIDATES',
      `${model} answered with ${reply.value.length} plans; exactly one is accepted`,
      { ...context, candidates: reply.value.length },
    );
  if (reply.value === null) throw plannerError('E_MODEL_EMPTY', `${model} answered null instead of a plan`, context);
  return reply.value;
}

function providerError(error: unknown, options: OpenAIEndpoint): Error {
  const failure = classifyProviderError(error);
  // An answer arrived and is not JSON: the reply is malformed, the same as a malformed completion.
  if (failure.kind === 'malformed')
    return plannerError('E_MODEL_MALFORMED', `${options.model}: the reply body is not JSON: ${failure.message}`, {
      provider: 'openai',
      model: options.model,
    });
  return new ModelError(`${options.model} at ${options.baseUrl} failed: ${failure.errorName}: ${failure.message}`, {
    cause: error,
    retryable: failure.retryable,
    context: {
      code: MODEL_PROVIDER_ERROR,
      provider: 'openai',
      model: options.model,
      failure: failure.kind,
      errorName: failure.errorName,
      ...(failure.httpStatusCode === undefined ? {} : { httpStatusCode: failure.httpStatusCode }),
      ...(failure.requestId === undefined ? {} : { requestId: failure.requestId }),
    },
  });
}

export function createOpenAIPlanModel(options: OpenAIPlanModelOptions): PlanModel {
  let client = options.client;
  return {
    name: `openai:${options.model}`,
    async proposePlan(request) {
      client ??= createOpenAIClient(options);
      let body: unknown;
      try {
        body = await client.chat.completions.create(planCompletionRequest(request, options));
      } catch (error) {
        throw providerError(error, options);
      }
      return planCandidateOf(readJsonReply(body), options.model);
    },
  };
}

/** The planner's model from the settings (CAIRN_MODEL_URL, CAIRN_MODEL, and the key's source). */
export function openAIPlanModelFromSettings(endpoint: PlannerEndpointSettings, deps: ApiKeyDeps = {}): PlanModel {
  const apiKey = apiKeyOf({ apiKey: endpoint.apiKey, apiKeySecret: endpoint.apiKeySecret }, deps);
  return createOpenAIPlanModel({
    baseUrl: endpoint.baseUrl,
    model: endpoint.model,
    ...(apiKey === undefined ? {} : { apiKey }),
  });
}
