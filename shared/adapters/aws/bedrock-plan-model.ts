/**
 * The model port on Amazon Bedrock (Converse). The plan's JSON Schema is the input schema of one tool,
 * `submit_plan`, and the model is forced to call it, so the answer is structured. Anything else (no answer, text,
 * another tool, several plans, a cut-off answer) is rejected with a PlannerError; the plan itself is validated by
 * the planner like any untrusted input.
 *
 * No hidden retries: build the client with `maxAttempts: 1` (defaultBedrockClient does), so a provider failure
 * surfaces at once as a ModelError whose `retryable` flag lets the caller (a Step Functions Retry) decide.
 */
import {
  type BedrockRuntimeClient,
  type ContentBlock,
  ConverseCommand,
  type ConverseCommandInput,
  type ConverseCommandOutput,
  type ToolInputSchema,
} from '@aws-sdk/client-bedrock-runtime';
import { ModelError } from '../../errors.ts';
import { MODEL_PROVIDER_ERROR, type PlannerErrorCode, plannerError } from '../../planner/errors.ts';
import { buildPlanPrompt, PLAN_TOOL_DESCRIPTION, PLAN_TOOL_NAME } from '../../planner/prompt.ts';
import type { PlanModel, PlanModelRequest } from '../../ports/plan-model.ts';
import { bedrockRuntimeClient } from './clients.ts';

export interface BedrockPlanModelOptions {
  /** Build it with `maxAttempts: 1` (see defaultBedrockClient): retries belong to the caller. */
  readonly client: BedrockRuntimeClient;
  readonly modelId: string;
  readonly maxTokens?: number;
  readonly temperature?: number;
}

export const DEFAULT_MAX_TOKENS = 8192;
export const DEFAULT_TEMPERATURE = 0;

/** A Bedrock runtime client that never retries on its own. */
export const defaultBedrockClient = (region?: string): BedrockRuntimeClient =>
  bedrockRuntimeClient({ maxAttempts: 1, ...(region === undefined ? {} : { region }) });

/** Provider failures that may pass on a later attempt. */
const TRANSIENT_NAMES = new Set([
  'ThrottlingException',
  'ServiceUnavailableException',
  'InternalServerException',
  'ModelTimeoutException',
  'ModelNotReadyException',
  'ModelStreamErrorException',
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
  'TooManyRequestsException',
]);
const TRANSIENT_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN', 'ENOTFOUND']);

interface SdkErrorShape {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  $retryable?: unknown;
  $metadata?: { httpStatusCode?: unknown; requestId?: unknown };
}

/** Whether a Bedrock SDK error is transient: throttling, 5xx, timeouts and connection failures. */
export function isTransientProviderError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as SdkErrorShape;
  const status = e.$metadata?.httpStatusCode;
  if (typeof e.name === 'string' && TRANSIENT_NAMES.has(e.name)) return true;
  if (typeof e.code === 'string' && TRANSIENT_CODES.has(e.code)) return true;
  if (typeof status === 'number' && (status >= 500 || status === 429)) return true;
  return e.$retryable !== undefined && e.$retryable !== null;
}

function providerError(error: unknown, modelId: string): ModelError {
  const e = (typeof error === 'object' && error !== null ? error : {}) as SdkErrorShape;
  const name = typeof e.name === 'string' ? e.name : 'Error';
  const status = e.$metadata?.httpStatusCode;
  const message = typeof e.message === 'string' ? e.message : String(error);
  const retryable = isTransientProviderError(error);
  return new ModelError(`Bedrock ${modelId} failed: ${name}: ${message}`, {
    cause: error,
    retryable,
    context: {
      code: MODEL_PROVIDER_ERROR,
      provider: 'bedrock',
      modelId,
      errorName: name,
      ...(typeof status === 'number' ? { httpStatusCode: status } : {}),
      ...(typeof e.$metadata?.requestId === 'string' ? { requestId: e.$metadata.requestId } : {}),
    },
  });
}

const STOP_REASON_ERRORS: Readonly<Record<string, { code: PlannerErrorCode; why: string }>> = {
  max_tokens: { code: 'E_MODEL_TRUNCATED', why: 'the answer was cut off at maxTokens, so the plan is incomplete' },
  model_context_window_exceeded: { code: 'E_MODEL_TRUNCATED', why: 'the answer ran out of context window' },
  guardrail_intervened: { code: 'E_MODEL_REFUSED', why: 'a guardrail stopped the answer' },
  content_filtered: { code: 'E_MODEL_REFUSED', why: 'a content filter stopped the answer' },
  malformed_model_output: { code: 'E_MODEL_MALFORMED', why: 'the provider reports malformed model output' },
  malformed_tool_use: { code: 'E_MODEL_MALFORMED', why: 'the provider reports a malformed tool call' },
};

/** The plan the model submitted, or a PlannerError saying why the answer holds none (or more than one). */
export function extractPlanCandidate(output: ConverseCommandOutput, modelId: string): unknown {
  const context = { provider: 'bedrock', modelId, stopReason: output.stopReason ?? null };
  const stop = output.stopReason === undefined ? undefined : STOP_REASON_ERRORS[output.stopReason];
  if (stop) throw plannerError(stop.code, `Bedrock ${modelId}: ${stop.why}`, context);
  const content: readonly ContentBlock[] = output.output?.message?.content ?? [];
  const toolUses = content.flatMap((block) => (block.toolUse ? [block.toolUse] : []));
  if (toolUses.length === 0) {
    const text = content.some((block) => typeof block.text === 'string' && block.text.trim().length > 0);
    throw text
      ? plannerError(
          'E_MODEL_TEXT_ONLY',
          `Bedrock ${modelId} answered in text instead of calling ${PLAN_TOOL_NAME}`,
          context,
        )
      : plannerError('E_MODEL_EMPTY', `Bedrock ${modelId} returned no answer`, context);
  }
  const others = toolUses.filter((use) => use.name !== PLAN_TOOL_NAME).map((use) => String(use.name));
  if (others.length > 0)
    throw plannerError('E_MODEL_WRONG_TOOL', `Bedrock ${modelId} called ${others.join(', ')}, not ${PLAN_TOOL_NAME}`, {
      ...context,
      tools: others,
    });
  if (toolUses.length > 1)
    throw plannerError(
      'E_MODEL_SEVERAL_CANDIDATES',
      `Bedrock ${modelId} submitted ${toolUses.length} plans; exactly one is accepted`,
      { ...context, candidates: toolUses.length },
    );
  const [use] = toolUses;
  if (use?.input === undefined || use.input === null)
    throw plannerError('E_MODEL_EMPTY', `Bedrock ${modelId} called ${PLAN_TOOL_NAME} without a plan`, context);
  return use.input;
}

/** The exact Converse request for a plan request (exported for tests and for logging what was asked). */
export function converseInput(request: PlanModelRequest, options: BedrockPlanModelOptions): ConverseCommandInput {
  const prompt = buildPlanPrompt(request);
  return {
    modelId: options.modelId,
    system: [{ text: prompt.system }],
    messages: [{ role: 'user', content: [{ text: prompt.user }] }],
    inferenceConfig: {
      maxTokens: options.maxTokens ?? DEFAULT_MAX_TOKENS,
      temperature: options.temperature ?? DEFAULT_TEMPERATURE,
    },
    toolConfig: {
      tools: [
        {
          toolSpec: {
            name: PLAN_TOOL_NAME,
            description: PLAN_TOOL_DESCRIPTION,
            inputSchema: { json: request.planSchema as ToolInputSchema.JsonMember['json'] },
          },
        },
      ],
      toolChoice: { tool: { name: PLAN_TOOL_NAME } },
    },
  };
}

export function createBedrockPlanModel(options: BedrockPlanModelOptions): PlanModel {
  const { client, modelId } = options;
  return {
    name: `bedrock:${modelId}`,
    async proposePlan(request) {
      let output: ConverseCommandOutput;
      try {
        output = await client.send(new ConverseCommand(converseInput(request, options)));
      } catch (error) {
        throw providerError(error, modelId);
      }
      return extractPlanCandidate(output, modelId);
    },
  };
}
