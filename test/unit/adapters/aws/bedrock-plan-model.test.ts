import {
  AccessDeniedException,
  BedrockRuntimeClient,
  type ContentBlock,
  ConverseCommand,
  type ConverseCommandOutput,
  InternalServerException,
  ModelTimeoutException,
  ResourceNotFoundException,
  ServiceUnavailableException,
  ThrottlingException,
  type ToolInputSchema,
  ValidationException,
} from '@aws-sdk/client-bedrock-runtime';
import { mockClient } from 'aws-sdk-client-mock';
import 'aws-sdk-client-mock-vitest/extend';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createBedrockPlanModel,
  DEFAULT_MAX_TOKENS,
  defaultBedrockClient,
} from '../../../../shared/adapters/aws/bedrock-plan-model.ts';
import { isModelError, isPlannerError } from '../../../../shared/errors.ts';
import { planJsonSchema } from '../../../../shared/plan/schema.ts';
import { plannerErrorCode } from '../../../../shared/planner/errors.ts';
import { createPlanner } from '../../../../shared/planner/planner.ts';
import { buildPlanPrompt } from '../../../../shared/planner/prompt.ts';
import { demoCatalog, modelRequest } from '../../planner/fixtures.ts';

const MODEL_ID = 'anthropic.claude-3-5-sonnet-20241022-v2:0';
const catalog = demoCatalog();
const request = modelRequest('Triage the incident in checkout-api', catalog);
const bedrock = mockClient(BedrockRuntimeClient);
// The suite's unit files share one module graph per worker: a mocked client class must not outlive its file.
afterAll(() => {
  bedrock.restore();
});
const model = (options: { maxTokens?: number; temperature?: number } = {}) =>
  createBedrockPlanModel({ client: new BedrockRuntimeClient({ region: 'us-east-1' }), modelId: MODEL_ID, ...options });

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

const toolUse = (name: string, input: unknown, id = 'tu-1'): ContentBlock =>
  ({ toolUse: { toolUseId: id, name, input } }) as ContentBlock;

const answer = (content: ContentBlock[] | undefined, stopReason = 'tool_use'): ConverseCommandOutput =>
  ({
    $metadata: {},
    stopReason,
    output: content === undefined ? undefined : { message: { role: 'assistant', content } },
    usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
    metrics: { latencyMs: 1 },
  }) as ConverseCommandOutput;

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

beforeEach(() => {
  bedrock.reset();
});

describe('createBedrockPlanModel', () => {
  it('sends one Converse call that forces the submit_plan tool with the plan JSON Schema', async () => {
    bedrock.on(ConverseCommand).resolves(answer([toolUse('submit_plan', candidate)]));
    await model({ maxTokens: 4000, temperature: 0.2 }).proposePlan(request);
    const prompt = buildPlanPrompt(request);
    expect(bedrock).toHaveReceivedCommandTimes(ConverseCommand, 1);
    expect(bedrock).toHaveReceivedCommandWith(ConverseCommand, {
      modelId: MODEL_ID,
      system: [{ text: prompt.system }],
      messages: [{ role: 'user', content: [{ text: prompt.user }] }],
      inferenceConfig: { maxTokens: 4000, temperature: 0.2 },
      toolConfig: {
        tools: [
          {
            toolSpec: {
              name: 'submit_plan',
              description: expect.stringContaining('plan'),
              inputSchema: { json: planJsonSchema() as ToolInputSchema.JsonMember['json'] },
            },
          },
        ],
        toolChoice: { tool: { name: 'submit_plan' } },
      },
    });
  });

  it('defaults to a deterministic temperature and a generous token budget', async () => {
    bedrock.on(ConverseCommand).resolves(answer([toolUse('submit_plan', candidate)]));
    await model().proposePlan(request);
    expect(bedrock).toHaveReceivedCommandWith(ConverseCommand, {
      inferenceConfig: { maxTokens: DEFAULT_MAX_TOKENS, temperature: 0 },
    });
  });

  it('returns the submitted plan as the model gave it, next to any text it wrote', async () => {
    bedrock.on(ConverseCommand).resolves(answer([{ text: 'Here is the plan.' }, toolUse('submit_plan', candidate)]));
    await expect(model().proposePlan(request)).resolves.toEqual(candidate);
  });

  it('names itself after the model id', () => {
    expect(model().name).toBe(`bedrock:${MODEL_ID}`);
  });

  const malformed: [string, ConverseCommandOutput, string][] = [
    ['no output at all', answer(undefined, 'end_turn'), 'E_MODEL_EMPTY'],
    ['an empty message', answer([], 'end_turn'), 'E_MODEL_EMPTY'],
    ['a blank text block', answer([{ text: '   ' }], 'end_turn'), 'E_MODEL_EMPTY'],
    ['a text-only answer', answer([{ text: '1. search 2. write' }], 'end_turn'), 'E_MODEL_TEXT_ONLY'],
    ['a call of another tool', answer([toolUse('web_search', { q: 'x' })]), 'E_MODEL_WRONG_TOOL'],
    [
      'another tool next to the plan tool',
      answer([toolUse('submit_plan', candidate), toolUse('run_step', {}, 'tu-2')]),
      'E_MODEL_WRONG_TOOL',
    ],
    [
      'several plans',
      answer([toolUse('submit_plan', candidate), toolUse('submit_plan', candidate, 'tu-2')]),
      'E_MODEL_SEVERAL_CANDIDATES',
    ],
    [
      'a plan cut off at maxTokens',
      answer([toolUse('submit_plan', { schemaVersion: 1 })], 'max_tokens'),
      'E_MODEL_TRUNCATED',
    ],
    ['a context window overflow', answer([], 'model_context_window_exceeded'), 'E_MODEL_TRUNCATED'],
    ['a guardrail intervention', answer([{ text: 'blocked' }], 'guardrail_intervened'), 'E_MODEL_REFUSED'],
    ['a malformed tool call', answer([], 'malformed_tool_use'), 'E_MODEL_MALFORMED'],
    ['a plan tool call without input', answer([toolUse('submit_plan', undefined)]), 'E_MODEL_EMPTY'],
  ];

  it.each(malformed)('rejects %s with a PlannerError', async (_name, output, code) => {
    bedrock.on(ConverseCommand).resolves(output);
    const error = await failure(model().proposePlan(request));
    expect(isPlannerError(error)).toBe(true);
    expect(plannerErrorCode(error)).toBe(code);
    expect(bedrock).toHaveReceivedCommandTimes(ConverseCommand, 1);
  });

  const meta = { $metadata: {} };
  const providerErrors: [string, Error, boolean][] = [
    ['throttling', new ThrottlingException({ message: 'slow down', ...meta }), true],
    ['service unavailable', new ServiceUnavailableException({ message: 'down', ...meta }), true],
    ['an internal error', new InternalServerException({ message: 'oops', ...meta }), true],
    ['a model timeout', new ModelTimeoutException({ message: 'too slow', ...meta }), true],
    ['a socket reset', Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }), true],
    ['a bad request', new ValidationException({ message: 'bad schema', ...meta }), false],
    ['denied access', new AccessDeniedException({ message: 'no model access', ...meta }), false],
    ['an unknown model', new ResourceNotFoundException({ message: 'no such model', ...meta }), false],
  ];

  it.each(providerErrors)('surfaces %s as a ModelError without retrying', async (_name, sdkError, retryable) => {
    bedrock.on(ConverseCommand).rejects(sdkError);
    const error = await failure(model().proposePlan(request));
    expect(isModelError(error)).toBe(true);
    expect(error).toMatchObject({
      retryable,
      cause: sdkError,
      context: { code: 'E_MODEL_PROVIDER', provider: 'bedrock', modelId: MODEL_ID, errorName: sdkError.name },
    });
    expect(bedrock).toHaveReceivedCommandTimes(ConverseCommand, 1);
  });

  it('feeds the planner, which rejects an invalid submitted plan instead of using it', async () => {
    const invalid = { ...candidate, steps: [{ ...candidate.steps[0], target: 'tool:rm-rf' }] };
    bedrock.on(ConverseCommand).resolves(answer([toolUse('submit_plan', invalid)]));
    const error = await failure(createPlanner({ model: model(), catalog }).plan({ objective: request.objective }));
    expect(plannerErrorCode(error)).toBe('E_INVALID_PLAN');
  });

  it('feeds the planner, which accepts a valid submitted plan', async () => {
    bedrock.on(ConverseCommand).resolves(answer([toolUse('submit_plan', candidate)]));
    const plan = await createPlanner({ model: model(), catalog }).plan({ objective: request.objective });
    expect(plan.steps.map((s) => s.target)).toEqual(['tool:logs.query']);
  });
});

describe('defaultBedrockClient', () => {
  it('builds a client that makes exactly one attempt per call', async () => {
    const client = defaultBedrockClient('eu-west-1');
    await expect(client.config.maxAttempts()).resolves.toBe(1);
    await expect(client.config.region()).resolves.toBe('eu-west-1');
  });
});
