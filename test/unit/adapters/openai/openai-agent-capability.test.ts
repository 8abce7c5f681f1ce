import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openAIAgentCapability } from '../../../../shared/adapters/openai/openai-agent-capability.ts';
import {
  AGENT_SYSTEM_PROMPT_JSON,
  agentBrief,
  submitResultSchema,
} from '../../../../shared/capabilities/agent-brief.ts';
import { usageOfError } from '../../../../shared/capabilities/capability-errors.ts';
import type { Capability } from '../../../../shared/plan/schema.ts';
import { aCall, caught, codeOf } from '../../../support/capability-call.ts';
import {
  choices,
  completion,
  type FakeOpenAI,
  type FakeReply,
  hang,
  raw,
  startFakeOpenAI,
  status,
} from '../../../support/fake-openai-server.ts';

const MODEL = 'qwen2.5:7b';

const writer: Capability = {
  target: 'agent:report.writer',
  description: 'Writes a short report from research notes.',
  sideEffect: 'none',
  inputSchema: { type: 'object', properties: { notes: { type: 'array', items: { type: 'string' } } } },
  outputSchema: {
    type: 'object',
    required: ['report'],
    additionalProperties: false,
    properties: { report: { type: 'string' } },
  },
};
const call = aCall({ target: writer.target, capability: writer, input: { notes: ['Acme grew 20%'] } });
const answer = { output: { report: 'Acme grew.' }, confidence: 0.8 };

let fake: FakeOpenAI;
let next: FakeReply = completion(answer);

beforeAll(async () => {
  fake = await startFakeOpenAI({ reply: () => next });
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.requests.length = 0;
  next = completion(answer);
});

const binding = (options: { maxTokens?: number; temperature?: number; timeoutMs?: number } = {}) =>
  openAIAgentCapability({ baseUrl: fake.baseUrl, model: MODEL, ...options });

describe('openAIAgentCapability', () => {
  it('sends the brief with a response format of { output, confidence } over the output schema', async () => {
    await binding({ maxTokens: 1000, temperature: 0.3 }).invoke(call);

    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]?.body).toEqual({
      model: MODEL,
      messages: [
        { role: 'system', content: AGENT_SYSTEM_PROMPT_JSON },
        { role: 'user', content: agentBrief(call, 'json') },
      ],
      max_tokens: 1000,
      temperature: 0.3,
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'submit_result',
          description: expect.stringContaining(call.step.title),
          schema: submitResultSchema(writer.outputSchema),
        },
      },
    });
  });

  it('returns the output, the confidence, the evidence and the tokens the call consumed', async () => {
    next = completion(answer, { usage: { promptTokens: 321, completionTokens: 45 } });

    const result = await binding().invoke(call);

    expect(result).toEqual({
      output: answer.output,
      confidence: 0.8,
      usage: { inputTokens: 321, outputTokens: 45 },
      evidence: { binding: 'openai', model: MODEL, baseUrl: fake.baseUrl, finishReason: 'stop' },
    });
  });

  it('returns no usage when the server reports none', async () => {
    next = completion(answer, { usage: null });

    const result = await binding().invoke(call);

    expect(result.usage).toBeUndefined();
  });

  const unusable: [string, () => FakeReply, string][] = [
    ['an empty reply', () => completion(''), 'empty'],
    ['no choice', () => ({ kind: 'completion', choices: [] }), 'empty'],
    ['several choices', () => choices(answer, answer), 'several_choices'],
    ['a truncated reply', () => completion('{"output": {"report": "Ac', { finishReason: 'length' }), 'truncated'],
    ['a filtered reply', () => completion('', { finishReason: 'content_filter' }), 'refused'],
    ['a text reply', () => completion('Here is the report: Acme grew.'), 'text_only'],
    ['malformed JSON', () => completion('{"output": {"report": "Acme"'), 'malformed_json'],
    ['an answer that is not an object', () => completion([answer]), 'schema'],
    ['an answer without output', () => completion({ confidence: 0.9 }), 'schema'],
    ['a confidence above 1', () => completion({ output: answer.output, confidence: 3 }), 'schema'],
    ['a missing confidence', () => completion({ output: answer.output }), 'schema'],
  ];

  it.each(unusable)('fails %s permanently with E_MODEL_ANSWER, asking once', async (_name, reply, problem) => {
    next = reply();

    const error = await caught(binding().invoke(call));

    expect(error).toMatchObject({ name: 'CapabilityError', retryable: false });
    expect(codeOf(error)).toBe('E_MODEL_ANSWER');
    expect(error.context).toMatchObject({ details: { problem } });
    expect(fake.requests).toHaveLength(1);
  });

  it('keeps the tokens of an unusable answer on its error, for the failed attempt', async () => {
    next = completion('{"output": {', { finishReason: 'length', usage: { promptTokens: 50, completionTokens: 4096 } });

    const error = await caught(binding().invoke(call));

    expect(usageOfError(error)).toEqual({ inputTokens: 50, outputTokens: 4096 });
  });

  it.each([
    ['a body that is not JSON', () => raw('{"choices": [')],
    ['a body that is not a completion', () => raw('{"ok": true}')],
  ])('fails %s permanently with E_MALFORMED_ANSWER', async (_name, reply) => {
    next = reply();

    const error = await caught(binding().invoke(call));

    expect(error).toMatchObject({ name: 'CapabilityError', retryable: false });
    expect(codeOf(error)).toBe('E_MALFORMED_ANSWER');
  });

  const providerErrors: [string, () => FakeReply, string, boolean][] = [
    ['a 429', () => status(429), 'E_CAPABILITY_THROTTLED', true],
    ['a 500', () => status(500), 'E_CAPABILITY_UNAVAILABLE', true],
    ['a 502', () => status(502), 'E_CAPABILITY_UNAVAILABLE', true],
    ['a 408', () => status(408), 'E_CAPABILITY_TIMEOUT', true],
    ['a 400', () => status(400), 'E_CAPABILITY_REJECTED', false],
    ['a 403', () => status(403), 'E_CAPABILITY_REJECTED', false],
    ['a 422', () => status(422), 'E_CAPABILITY_REJECTED', false],
  ];

  it.each(providerErrors)(
    'maps %s to %s (retryable %s), sent once: the step machine owns retries',
    async (_name, reply, code, retryable) => {
      next = reply();

      const error = await caught(binding().invoke(call));

      expect(error).toMatchObject({ name: 'CapabilityError', retryable });
      expect(codeOf(error)).toBe(code);
      expect(fake.requests).toHaveLength(1);
    },
  );

  it('maps a server that does not answer in time to a retryable E_CAPABILITY_TIMEOUT, sent once', async () => {
    next = hang();

    const error = await caught(binding({ timeoutMs: 200 }).invoke(call));

    expect(error).toMatchObject({ name: 'CapabilityError', retryable: true });
    expect(codeOf(error)).toBe('E_CAPABILITY_TIMEOUT');
    expect(fake.requests).toHaveLength(1);
  });
});
