/**
 * An agent bound to a Bedrock model through Converse. The model gets the brief (shared/capabilities/agent-brief.ts)
 * and must answer with exactly one call of the forced tool `submit_result` `{ output, confidence }`; the executor
 * then validates `output` against the capability's outputSchema.
 * - throttling, timeouts, 5xx, model not ready → retryable (the client runs with maxAttempts 1: the step state
 *   machine owns retries);
 * - validation / access errors → permanent;
 * - no tool call, another tool, several calls, a cut-off answer, a missing output or a confidence outside 0..1 →
 *   permanent E_MODEL_ANSWER.
 */
import {
  type BedrockRuntimeClient,
  type ContentBlock,
  ConverseCommand,
  type ConverseCommandInput,
  type ConverseResponse,
  type ToolInputSchema,
} from '@aws-sdk/client-bedrock-runtime';
import {
  AGENT_SYSTEM_PROMPT,
  agentBrief,
  SUBMIT_RESULT_TOOL,
  submitResultSchema,
} from '../../capabilities/agent-brief.ts';
import { CAPABILITY_ERROR_CODES, capabilityError, sdkCallError } from '../../capabilities/capability-errors.ts';
import { isValidConfidence } from '../../capabilities/wire.ts';
import { usageOf } from '../../engine/usage.ts';
import type { CapabilityBinding, CapabilityCall, CapabilityResult } from '../../ports/capabilities.ts';

export const DEFAULT_AGENT_MAX_TOKENS = 4096;

export interface BedrockAgentCapabilityOptions {
  readonly modelId: string;
  readonly maxTokens?: number;
  /** Create it with `maxAttempts: 1`. */
  readonly client: BedrockRuntimeClient;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The exact Converse request for a call (exported for tests and for whoever wants to see the prompt). */
export function converseInput(call: CapabilityCall, modelId: string, maxTokens: number): ConverseCommandInput {
  return {
    modelId,
    system: [{ text: AGENT_SYSTEM_PROMPT }],
    messages: [{ role: 'user', content: [{ text: agentBrief(call) }] }],
    inferenceConfig: { maxTokens },
    toolConfig: {
      tools: [
        {
          toolSpec: {
            name: SUBMIT_RESULT_TOOL,
            description: `Submit the result of the step "${call.step.title}" with your confidence in it.`,
            inputSchema: {
              json: submitResultSchema(call.capability.outputSchema) as ToolInputSchema.JsonMember['json'],
            },
          },
        },
      ],
      toolChoice: { tool: { name: SUBMIT_RESULT_TOOL } },
    },
  };
}

// Stop reasons after which even a present tool call cannot be trusted to be complete.
const UNUSABLE_STOPS = new Set([
  'max_tokens',
  'content_filtered',
  'guardrail_intervened',
  'malformed_model_output',
  'malformed_tool_use',
  'model_context_window_exceeded',
]);

function readAnswer(
  response: ConverseResponse,
  source: string,
): { output: unknown; confidence: number; note?: string } {
  const bad = (why: string) =>
    capabilityError(CAPABILITY_ERROR_CODES.modelAnswer, `${source}: ${why}`, {
      retryable: false,
      details: { stopReason: response.stopReason ?? null },
    });
  const stopReason = response.stopReason;
  if (stopReason !== undefined && UNUSABLE_STOPS.has(stopReason))
    throw bad(`the answer is unusable (stop reason ${stopReason})`);
  const content: ContentBlock[] = response.output?.message?.content ?? [];
  const toolUses = content.flatMap((block) => (block.toolUse ? [block.toolUse] : []));
  if (toolUses.length === 0) throw bad(`the model did not call ${SUBMIT_RESULT_TOOL}`);
  if (toolUses.length > 1) throw bad(`the model called tools ${toolUses.length} times; exactly one call is allowed`);
  const [toolUse] = toolUses as [(typeof toolUses)[number]];
  if (toolUse.name !== SUBMIT_RESULT_TOOL)
    throw bad(`the model called ${JSON.stringify(toolUse.name)} instead of ${SUBMIT_RESULT_TOOL}`);
  const input: unknown = toolUse.input;
  if (!isRecord(input)) throw bad(`the ${SUBMIT_RESULT_TOOL} input is not an object`);
  if (!Object.hasOwn(input, 'output')) throw bad(`the ${SUBMIT_RESULT_TOOL} input has no "output"`);
  if (!isValidConfidence(input.confidence))
    throw bad(`confidence ${JSON.stringify(input.confidence) ?? 'undefined'} is not a number from 0 to 1`);
  const text = content
    .flatMap((block) => (typeof block.text === 'string' ? [block.text] : []))
    .join('\n')
    .trim();
  return {
    output: input.output,
    confidence: input.confidence,
    ...(text.length > 0 ? { note: text.length > 500 ? `${text.slice(0, 500)}…` : text } : {}),
  };
}

export function bedrockAgentCapability(options: BedrockAgentCapabilityOptions): CapabilityBinding {
  const { modelId, client } = options;
  const maxTokens = options.maxTokens ?? DEFAULT_AGENT_MAX_TOKENS;
  return {
    kind: 'bedrock',
    async invoke(call: CapabilityCall): Promise<CapabilityResult> {
      const source = `Bedrock model ${modelId} (${call.target})`;
      let response: ConverseResponse;
      try {
        response = await client.send(
          new ConverseCommand(converseInput(call, modelId, maxTokens)),
          // A step out of time stops the model call rather than leave it generating.
          call.signal === undefined ? {} : { abortSignal: call.signal },
        );
      } catch (error) {
        throw sdkCallError(error, `Calling ${source}`, { modelId });
      }
      const answer = readAnswer(response, source);
      const usage = usageOf(response.usage?.inputTokens, response.usage?.outputTokens);
      return {
        ...answer,
        ...(usage === undefined ? {} : { usage }),
        evidence: {
          binding: 'bedrock',
          modelId,
          stopReason: response.stopReason ?? null,
          inputTokens: response.usage?.inputTokens ?? null,
          outputTokens: response.usage?.outputTokens ?? null,
        },
      };
    },
  };
}
