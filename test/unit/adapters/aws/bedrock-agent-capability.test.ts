import {
  AccessDeniedException,
  BedrockRuntimeClient,
  type ContentBlock,
  ConverseCommand,
  type ConverseCommandOutput,
  InternalServerException,
  ModelTimeoutException,
  ServiceUnavailableException,
  ThrottlingException,
  ValidationException,
} from '@aws-sdk/client-bedrock-runtime';
import { mockClient } from 'aws-sdk-client-mock';
import 'aws-sdk-client-mock-vitest/extend';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { bedrockAgentCapability } from '../../../../shared/adapters/aws/bedrock-agent-capability.ts';
import { AGENT_SYSTEM_PROMPT } from '../../../../shared/capabilities/agent-brief.ts';
import type { Capability } from '../../../../shared/plan/schema.ts';
import { aCall, caught, codeOf } from '../../../support/capability-call.ts';

const MODEL_ID = 'anthropic.claude-3-5-haiku-20241022-v1:0';
const bedrock = mockClient(BedrockRuntimeClient);
// The suite's unit files share one module graph per worker: a mocked client class must not outlive its file.
afterAll(() => {
  bedrock.restore();
});
const binding = (maxTokens?: number) =>
  bedrockAgentCapability({
    modelId: MODEL_ID,
    client: new BedrockRuntimeClient({ region: 'us-east-1' }),
    ...(maxTokens === undefined ? {} : { maxTokens }),
  });

const writer: Capability = {
  target: 'agent:report.writer',
  description: 'Writes a report.',
  sideEffect: 'none',
  inputSchema: { type: 'object' },
  outputSchema: {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    required: ['title'],
    properties: { title: { type: 'string' }, parts: { type: 'array', items: { $ref: '#/$defs/part' } } },
    $defs: { part: { type: 'string' } },
  },
};
const call = () =>
  aCall({
    target: writer.target,
    capability: writer,
    input: { topic: 'otters' },
    step: {
      title: 'Write the report',
      description: 'One page on otters.',
      successCriteria: { description: 'Has a title', assert: '{% $exists($output.title) %}' },
    },
    objective: 'Learn about otters',
    upstreamOutputs: { search: { hits: ['https://otters.example'] } },
  });

const toolUse = (input: unknown, name = 'submit_result', id = 't1'): ContentBlock => ({
  toolUse: { toolUseId: id, name, input: input as never },
});
const respond = (content: ContentBlock[], stopReason: ConverseCommandOutput['stopReason'] = 'tool_use') =>
  bedrock.on(ConverseCommand).resolves({
    output: { message: { role: 'assistant', content } },
    stopReason,
    usage: { inputTokens: 120, outputTokens: 30, totalTokens: 150 },
    metrics: { latencyMs: 5 },
  });

describe('bedrockAgentCapability', () => {
  beforeEach(() => {
    bedrock.reset();
  });

  it('sends one Converse with the brief and a forced submit_result tool wrapping the outputSchema', async () => {
    respond([toolUse({ output: { title: 'Otters' }, confidence: 0.8 })]);

    await binding(1000).invoke(call());

    expect(bedrock).toHaveReceivedCommandTimes(ConverseCommand, 1);
    expect(bedrock).toHaveReceivedCommandWith(ConverseCommand, {
      modelId: MODEL_ID,
      system: [{ text: AGENT_SYSTEM_PROMPT }],
      inferenceConfig: { maxTokens: 1000 },
      toolConfig: {
        tools: [
          {
            toolSpec: {
              name: 'submit_result',
              description: 'Submit the result of the step "Write the report" with your confidence in it.',
              inputSchema: {
                json: {
                  type: 'object',
                  additionalProperties: false,
                  required: ['output', 'confidence'],
                  properties: {
                    output: {
                      type: 'object',
                      required: ['title'],
                      properties: {
                        title: { type: 'string' },
                        parts: { type: 'array', items: { $ref: '#/properties/output/$defs/part' } },
                      },
                      $defs: { part: { type: 'string' } },
                    },
                    confidence: {
                      type: 'number',
                      minimum: 0,
                      maximum: 1,
                      description: 'How likely the output meets the success criteria, from 0 to 1.',
                    },
                  },
                },
              },
            },
          },
        ],
        toolChoice: { tool: { name: 'submit_result' } },
      },
    });
    const sent = bedrock.commandCalls(ConverseCommand)[0]?.args[0].input;
    expect(sent?.messages).toHaveLength(1);
    const brief = sent?.messages?.[0]?.content?.[0]?.text ?? '';
    for (const part of [
      'Learn about otters',
      'Write the report',
      'One page on otters.',
      'Has a title',
      '$exists($output.title)',
      '"topic": "otters"',
      '## search',
      'https://otters.example',
    ])
      expect(brief).toContain(part);
  });

  it('returns the submitted output and confidence with the model evidence and the tokens used', async () => {
    respond([{ text: 'Here is the report.' }, toolUse({ output: { title: 'Otters' }, confidence: 0.35 })]);

    const result = await binding().invoke(call());

    expect(result).toEqual({
      output: { title: 'Otters' },
      confidence: 0.35,
      note: 'Here is the report.',
      usage: { inputTokens: 120, outputTokens: 30 },
      evidence: { binding: 'bedrock', modelId: MODEL_ID, stopReason: 'tool_use', inputTokens: 120, outputTokens: 30 },
    });
  });

  it('uses a default token budget when the binding sets none', async () => {
    respond([toolUse({ output: {}, confidence: 1 })]);

    await binding().invoke(call());

    expect(bedrock).toHaveReceivedCommandWith(ConverseCommand, { inferenceConfig: { maxTokens: 4096 } });
  });

  it.each([
    ['only text', [{ text: 'I think the answer is 42.' }] as ContentBlock[], 'end_turn' as const],
    ['no content', [] as ContentBlock[], 'end_turn' as const],
    ['another tool', [toolUse({ output: {}, confidence: 0.5 }, 'search')], 'tool_use' as const],
    [
      'two tool calls',
      [toolUse({ output: {}, confidence: 0.5 }), toolUse({ output: {}, confidence: 0.6 }, 'submit_result', 't2')],
      'tool_use' as const,
    ],
    ['no output', [toolUse({ confidence: 0.5 })], 'tool_use' as const],
    ['no confidence', [toolUse({ output: {} })], 'tool_use' as const],
    ['a confidence above 1', [toolUse({ output: {}, confidence: 1.2 })], 'tool_use' as const],
    ['a negative confidence', [toolUse({ output: {}, confidence: -0.2 })], 'tool_use' as const],
    ['a confidence as text', [toolUse({ output: {}, confidence: '0.9' })], 'tool_use' as const],
    ['an input that is not an object', [toolUse('{"output":{}}')], 'tool_use' as const],
    ['a cut-off answer', [toolUse({ output: {}, confidence: 0.5 })], 'max_tokens' as const],
    ['a guardrail intervention', [toolUse({ output: {}, confidence: 0.5 })], 'guardrail_intervened' as const],
  ])('fails permanently with E_MODEL_ANSWER on %s', async (_label, content, stopReason) => {
    respond(content, stopReason);

    const error = await caught(binding().invoke(call()));

    expect(error).toMatchObject({ name: 'CapabilityError', retryable: false });
    expect(codeOf(error)).toBe('E_MODEL_ANSWER');
  });

  it('fails permanently when the response has no message at all', async () => {
    bedrock
      .on(ConverseCommand)
      .resolves({ output: undefined, stopReason: 'end_turn', usage: undefined, metrics: undefined });

    const error = await caught(binding().invoke(call()));

    expect(codeOf(error)).toBe('E_MODEL_ANSWER');
  });

  it.each([
    ['throttling', new ThrottlingException({ message: 'slow down', $metadata: { httpStatusCode: 429 } }), true],
    ['a 500', new InternalServerException({ message: 'oops', $metadata: { httpStatusCode: 500 } }), true],
    ['a 503', new ServiceUnavailableException({ message: 'busy', $metadata: { httpStatusCode: 503 } }), true],
    ['a model timeout', new ModelTimeoutException({ message: 'slow model', $metadata: { httpStatusCode: 408 } }), true],
    [
      'a validation error',
      new ValidationException({ message: 'bad schema', $metadata: { httpStatusCode: 400 } }),
      false,
    ],
    ['access denied', new AccessDeniedException({ message: 'no access', $metadata: { httpStatusCode: 403 } }), false],
  ])('classifies a Converse that fails with %s', async (_label, thrown, retryable) => {
    bedrock.on(ConverseCommand).rejects(thrown);

    const error = await caught(binding().invoke(call()));

    expect(error).toMatchObject({ name: 'CapabilityError', retryable });
    expect(String(error.message)).toContain(MODEL_ID);
  });
});
