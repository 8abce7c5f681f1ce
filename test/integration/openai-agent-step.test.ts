/**
 * A planner and an agent on a model behind an OpenAI-compatible endpoint (a fake server in process), configured by
 * the settings `npm start` reads and run by the embedded runtime through the synthesized machines: the plan the
 * model proposes runs; who retries a provider failure (the step machine, one request per attempt; the openai
 * client never); and the tokens each attempt consumed, recorded on its attempt.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { settingsFromEnv } from '../../shared/config/settings.ts';
import {
  completion,
  type FakeOpenAI,
  type FakeReply,
  formatName,
  startFakeOpenAI,
  status,
} from '../support/fake-openai-server.ts';
import { type LocalStack, plan, startTestStack, step, stepOf, summary, waitForRun } from '../support/local-stack.ts';

let fake: FakeOpenAI;
let stack: LocalStack;
/** What the fake answers the agent, request by request (the last one repeats). */
let script: FakeReply[] = [];
/** How many plan requests the fake answers 429 before it proposes a plan. */
let planThrottles = 0;
/** The plan the fake's planner proposes for an objective. */
const planFor = (objective: string) =>
  plan(objective, [step(stack, 'write', T.scripted, { input: { output: { text: 'x' }, confidence: 1 } })]);

beforeAll(async () => {
  fake = await startFakeOpenAI({
    reply: (request) => {
      if (formatName(request) === 'submit_plan') {
        if (planThrottles > 0) {
          planThrottles -= 1;
          return status(429, 'planner busy');
        }
        const objective = /Objective:\n(.*)/.exec(request.body.messages[1]?.content ?? '')?.[1] ?? '';
        return completion(planFor(objective));
      }
      const agentRequests = fake.requests.filter((r) => formatName(r) === 'submit_result').length;
      return script[Math.min(agentRequests - 1, script.length - 1)] ?? status(500);
    },
  });
  // Configured as `npm start -- --model-url … --model …` and CAIRN_BINDINGS configure it.
  const settings = settingsFromEnv({
    CAIRN_MODEL_URL: fake.baseUrl,
    CAIRN_MODEL: 'fake-model',
    // A failed step fails its run here: no replan asks the model for a revision.
    CAIRN_MAX_REPLANS: '0',
    CAIRN_BINDINGS: JSON.stringify({ [T.scripted]: { kind: 'openai', baseUrl: fake.baseUrl, model: 'fake-model' } }),
  });
  stack = await startTestStack({ settings });
}, 120_000);

afterAll(async () => {
  await stack?.close();
  await fake?.close();
});

beforeEach(() => {
  fake.requests.length = 0;
});

const runAgent = async (maxRetries: number) => {
  const runId = await stack.startRun({
    plan: plan('write with a model', [
      step(stack, 'write', T.scripted, { input: { output: { text: 'x' }, confidence: 1 }, maxRetries }),
    ]),
  });
  return { runId, done: await waitForRun(stack, runId) };
};

describe('an objective planned by an OpenAI-compatible model (settings: CAIRN_MODEL_URL, CAIRN_MODEL)', () => {
  it('runs the plan the model proposed, its agent step answered by the model of its binding', async () => {
    script = [completion({ output: { text: 'planned and written' }, confidence: 0.9 })];

    const runId = await stack.startRun({ objective: 'Write one note with a model' });
    const done = await waitForRun(stack, runId);

    expect(done.status, summary(done)).toBe('complete');
    expect(stepOf(done, 'write').output).toEqual({ text: 'planned and written' });
    expect(fake.requests.map(formatName)).toEqual(['submit_plan', 'submit_result']);
    expect(fake.requests[0]?.body.model).toBe('fake-model');
  });
});

describe('a planning model that is throttled', () => {
  it('is asked again by the run machine (PlanRun retries a retryable model error), and the run completes', async () => {
    script = [completion({ output: { text: 'planned after a 429' }, confidence: 0.9 })];
    planThrottles = 1;

    const runId = await stack.startRun({ objective: 'Write one note after a busy planner' });
    const done = await waitForRun(stack, runId);

    expect(done.status, summary(done)).toBe('complete');
    expect(fake.requests.map(formatName)).toEqual(['submit_plan', 'submit_plan', 'submit_result']);
  });
});

describe('an agent step on an OpenAI-compatible model', () => {
  it('retries a 429 through the step machine, one request per attempt, and records each attempt with its tokens', async () => {
    script = [
      status(429, 'slow down'),
      completion(
        { output: { text: 'written' }, confidence: 0.9 },
        { usage: { promptTokens: 200, completionTokens: 40 } },
      ),
    ];

    const { runId, done } = await runAgent(3);

    expect(done.status, summary(done)).toBe('complete');
    expect(stepOf(done, 'write')).toMatchObject({ status: 'succeeded', attempts: 2, output: { text: 'written' } });
    expect(fake.requests).toHaveLength(2);
    const attempts = await stack.store.listAttempts(runId, 'write');
    expect(attempts.map((a) => [a.outcome, a.error?.code ?? null, a.usage ?? null])).toEqual([
      ['failed', 'E_CAPABILITY_THROTTLED', null],
      ['succeeded', null, { inputTokens: 200, outputTokens: 40 }],
    ]);
    expect(attempts[1]?.evidence).toMatchObject({ binding: 'openai', model: 'fake-model', finishReason: 'stop' });
  });

  it('fails a truncated answer for good at once, and still records the tokens it consumed', async () => {
    script = [
      completion('{"output": {"te', { finishReason: 'length', usage: { promptTokens: 80, completionTokens: 4096 } }),
    ];

    const { runId, done } = await runAgent(3);

    expect(done.status, summary(done)).toBe('failed');
    expect(stepOf(done, 'write')).toMatchObject({ status: 'failed', attempts: 1, error: { code: 'E_MODEL_ANSWER' } });
    expect(fake.requests).toHaveLength(1);
    const attempts = await stack.store.listAttempts(runId, 'write');
    expect(attempts.map((a) => a.usage)).toEqual([{ inputTokens: 80, outputTokens: 4096 }]);
  });

  it('gives every attempt of a step its own usage, which sum to what the step consumed', async () => {
    script = [
      status(503),
      completion({ output: { text: 'no confidence' } }, { usage: { promptTokens: 100, completionTokens: 10 } }),
      completion({ output: { text: 'ok' }, confidence: 1 }, { usage: { promptTokens: 100, completionTokens: 20 } }),
    ];

    const { runId, done } = await runAgent(3);

    // The answer without a confidence is a permanent E_MODEL_ANSWER: the step fails at attempt 2.
    expect(stepOf(done, 'write')).toMatchObject({ status: 'failed', attempts: 2 });
    const attempts = await stack.store.listAttempts(runId, 'write');
    const used = (field: 'inputTokens' | 'outputTokens') => attempts.reduce((n, a) => n + (a.usage?.[field] ?? 0), 0);
    expect({ inputTokens: used('inputTokens'), outputTokens: used('outputTokens') }).toEqual({
      inputTokens: 100,
      outputTokens: 10,
    });
  });
});
