import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createOpenAIPlanModel,
  DEFAULT_PLAN_MAX_TOKENS,
} from '../../../../shared/adapters/openai/openai-plan-model.ts';
import { isModelError, isPlannerError } from '../../../../shared/errors.ts';
import { planJsonSchema } from '../../../../shared/plan/schema.ts';
import { plannerErrorCode } from '../../../../shared/planner/errors.ts';
import { createPlanner } from '../../../../shared/planner/planner.ts';
import { buildPlanPrompt } from '../../../../shared/planner/prompt.ts';
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
import { demoCatalog, modelRequest } from '../../planner/fixtures.ts';

const MODEL = 'llama3.1';
const catalog = demoCatalog();
const request = modelRequest('Triage the incident in checkout-api', catalog);

const candidate = {
  schemaVersion: 1,
  revision: 1,
  objective: request.objective,
  steps: [
    {
      id: 'logs',
      title: 'Query logs',
      target: 'tool:logs.query',
      dependsOn: [],
      input: { service: 'checkout-api', sinceMinutes: 30 },
      inputSchema: catalog.get('tool:logs.query')?.inputSchema,
      outputSchema: catalog.get('tool:logs.query')?.outputSchema,
    },
  ],
};

let fake: FakeOpenAI;
let next: FakeReply = completion(candidate);

beforeAll(async () => {
  fake = await startFakeOpenAI({ reply: () => next });
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.requests.length = 0;
  next = completion(candidate);
});

const model = (options: { maxTokens?: number; temperature?: number; apiKey?: string; timeoutMs?: number } = {}) =>
  createOpenAIPlanModel({ baseUrl: fake.baseUrl, model: MODEL, ...options });

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe('createOpenAIPlanModel', () => {
  it('sends one chat completion whose response format is the plan JSON Schema', async () => {
    await model({ maxTokens: 4000, temperature: 0.2 }).proposePlan(request);

    const prompt = buildPlanPrompt(request, 'json');
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]?.body).toEqual({
      model: MODEL,
      messages: [
        { role: 'system', content: prompt.system },
        { role: 'user', content: prompt.user },
      ],
      max_tokens: 4000,
      temperature: 0.2,
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'submit_plan', description: expect.stringContaining('plan'), schema: planJsonSchema() },
      },
    });
  });

  it('tells the model to reply with the plan as JSON, not to call a tool', async () => {
    await model().proposePlan(request);

    const [system, user] = fake.requests[0]?.body.messages ?? [];
    expect(system?.content).toContain('single JSON object');
    expect(system?.content).not.toContain('calling the submit_plan tool');
    expect(user?.content).toMatch(/Reply with the plan as one JSON object\.$/);
  });

  it('defaults to a deterministic temperature and a generous token budget', async () => {
    await model().proposePlan(request);

    expect(fake.requests[0]?.body).toMatchObject({ max_tokens: DEFAULT_PLAN_MAX_TOKENS, temperature: 0 });
  });

  it('sends the API key as a bearer token when one is configured, and a placeholder otherwise', async () => {
    await model({ apiKey: 'sk-test' }).proposePlan(request);
    await model().proposePlan(request);

    expect(fake.requests.map((r) => r.headers.authorization)).toEqual(['Bearer sk-test', 'Bearer no-key']);
  });

  it('returns the submitted plan as the model gave it', async () => {
    await expect(model().proposePlan(request)).resolves.toEqual(candidate);
  });

  it('accepts a plan inside one code fence (some servers fence JSON)', async () => {
    next = completion(`\`\`\`json\n${JSON.stringify(candidate)}\n\`\`\``);

    await expect(model().proposePlan(request)).resolves.toEqual(candidate);
  });

  it('names itself after the model', () => {
    expect(model().name).toBe(`openai:${MODEL}`);
  });

  const rejected: [string, () => FakeReply, string][] = [
    ['an empty reply', () => completion(''), 'E_MODEL_EMPTY'],
    ['a null content', () => completion(null), 'E_MODEL_EMPTY'],
    ['no choice at all', () => ({ kind: 'completion', choices: [] }), 'E_MODEL_EMPTY'],
    ['a null plan', () => completion('null'), 'E_MODEL_EMPTY'],
    ['several choices', () => choices(candidate, candidate), 'E_MODEL_SEVERAL_CANDIDATES'],
    ['an array of plans', () => completion([candidate, candidate]), 'E_MODEL_SEVERAL_CANDIDATES'],
    [
      'a plan cut off at max_tokens (finish_reason length)',
      () => completion('{"schemaVersion": 1, "steps": [', { finishReason: 'length' }),
      'E_MODEL_TRUNCATED',
    ],
    [
      'a complete-looking plan flagged as cut off',
      () => completion(candidate, { finishReason: 'length' }),
      'E_MODEL_TRUNCATED',
    ],
    ['a content filter stop', () => completion('', { finishReason: 'content_filter' }), 'E_MODEL_REFUSED'],
    [
      'a refusal',
      () => ({ kind: 'completion', choices: [{ content: null, refusal: 'I cannot help', finishReason: 'stop' }] }),
      'E_MODEL_REFUSED',
    ],
    [
      'a tool call',
      () => ({
        kind: 'completion',
        choices: [{ toolCalls: [{ id: 't', type: 'function', function: { name: 'x', arguments: '{}' } }] }],
      }),
      'E_MODEL_WRONG_TOOL',
    ],
    ['a text answer', () => completion('1. search 2. write'), 'E_MODEL_TEXT_ONLY'],
    ['malformed JSON content', () => completion('{"schemaVersion": 1,'), 'E_MODEL_MALFORMED'],
    ['a body that is not JSON', () => raw('{"id": "chatcmpl-1", "choices": ['), 'E_MODEL_MALFORMED'],
    ['a body that is not a completion', () => raw('{"hello": "world"}'), 'E_MODEL_MALFORMED'],
    ['an HTML page from a proxy', () => raw('<html>ok</html>', 'text/html'), 'E_MODEL_MALFORMED'],
  ];

  it.each(rejected)('rejects %s with a PlannerError, asking once', async (_name, reply, code) => {
    next = reply();

    const error = await failure(model().proposePlan(request));

    expect(isPlannerError(error)).toBe(true);
    expect(plannerErrorCode(error)).toBe(code);
    expect(fake.requests).toHaveLength(1);
  });

  it('keeps the tokens an unusable reply consumed on the error', async () => {
    next = completion('{"steps": [', { finishReason: 'length', usage: { promptTokens: 900, completionTokens: 8192 } });

    const error = await failure(model().proposePlan(request));

    expect(error).toMatchObject({ context: { usage: { inputTokens: 900, outputTokens: 8192 } } });
  });

  const providerErrors: [string, () => FakeReply, boolean, string][] = [
    ['a 429', () => status(429, 'rate limited'), true, 'throttled'],
    ['a 500', () => status(500), true, 'unavailable'],
    ['a 503', () => status(503), true, 'unavailable'],
    ['a 408', () => status(408), true, 'timeout'],
    ['a 400', () => status(400, 'response_format is not supported'), false, 'rejected'],
    ['a 401', () => status(401, 'bad key'), false, 'rejected'],
    ['a 404 (unknown model)', () => status(404, 'model not found'), false, 'rejected'],
  ];

  it.each(providerErrors)(
    'surfaces %s as a ModelError, sent once (the client does not retry)',
    async (_name, reply, retryable, kind) => {
      next = reply();

      const error = await failure(model().proposePlan(request));

      expect(isModelError(error)).toBe(true);
      expect(error).toMatchObject({
        retryable,
        context: { code: 'E_MODEL_PROVIDER', provider: 'openai', failure: kind },
      });
      expect(fake.requests).toHaveLength(1);
    },
  );

  it('surfaces a server that does not answer in time as a retryable ModelError, sent once', async () => {
    next = hang();

    const error = await failure(model({ timeoutMs: 200 }).proposePlan(request));

    expect(error).toMatchObject({ name: 'ModelError', retryable: true, context: { failure: 'timeout' } });
    expect(fake.requests).toHaveLength(1);
  });

  it('surfaces a refused connection as a retryable ModelError', async () => {
    const gone = await startFakeOpenAI({ reply: () => completion(candidate) });
    const baseUrl = gone.baseUrl;
    await gone.close();

    const error = await failure(createOpenAIPlanModel({ baseUrl, model: MODEL }).proposePlan(request));

    expect(error).toMatchObject({ name: 'ModelError', retryable: true, context: { failure: 'unavailable' } });
  });

  it('feeds the planner, which accepts a valid submitted plan', async () => {
    const plan = await createPlanner({ model: model(), catalog }).plan({ objective: request.objective });

    expect(plan.steps.map((s) => s.target)).toEqual(['tool:logs.query']);
  });

  it('feeds the planner, which rejects an invalid submitted plan instead of using it', async () => {
    next = completion({ ...candidate, steps: [{ ...candidate.steps[0], target: 'tool:rm-rf' }] });

    const error = await failure(createPlanner({ model: model(), catalog }).plan({ objective: request.objective }));

    expect(plannerErrorCode(error)).toBe('E_INVALID_PLAN');
  });
});
