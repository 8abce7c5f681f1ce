/**
 * A test stack whose planner is a model behind an OpenAI-compatible endpoint (a fake in process), so that a test
 * says which revision the model proposes and can read what the model was told. The fake answers every planning
 * request with revision 2 of the plan: `model.revise` of the current plan's steps (as the prompt carries them),
 * once `model.hold` resolves. Both are reset before each test.
 */
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { settingsFromEnv } from '../../shared/config/settings.ts';
import type { PlanStep } from '../../shared/plan/schema.ts';
import { completion, type FakeChatRequest, type FakeOpenAI, startFakeOpenAI } from './fake-openai-server.ts';
import { type LocalStack, type LocalStackOptions, plan, step, useTestStack } from './local-stack.ts';

/** The model's revision of the current plan's steps; `stack` gives the catalog's contracts to the steps it writes. */
export type Revise = (steps: PlanStep[], stack: LocalStack) => PlanStep[];

/**
 * A revision that writes the ledger in place of step `id` (or, when the plan has no `id`, besides its steps), after
 * `after`: a mutating target the plan did not have, so the revision waits for a person's approval.
 */
export const ledgerInsteadOf =
  (id: string, after: string): Revise =>
  (steps, stack) => {
    const ledger = step(stack, id, T.ledger, {
      input: { entry: { from: id } },
      rollbackHint: 'remove the entry by hand',
      dependsOn: [after],
    });
    return steps.some((s) => s.id === id) ? steps.map((s) => (s.id === id ? ledger : s)) : [...steps, ledger];
  };

export interface ModelPlanner {
  /** The test stack (as `useTestStack` gives it), planning with the fake model. */
  readonly stack: LocalStack;
  /** The fake model endpoint, with the requests it got in this test. */
  readonly fake: FakeOpenAI;
  /** The revision the fake model proposes, given the current plan's steps. */
  revise: Revise;
  /** Held before the model answers (a race's barrier); resolved by the test. */
  hold: Promise<void>;
}

/** The user message of a chat request to the model: the planning prompt. */
export const userText = (request: FakeChatRequest): string =>
  request.body.messages.find((m) => m.role === 'user')?.content ?? '';

/**
 * The calling test file's stack, planning with a fake model. `revise` is what the model proposes unless a test
 * says otherwise (the current steps, unchanged, by default); `stack` adds to the test stack's options.
 */
export function useModelPlanner(
  options: { readonly revise?: Revise; readonly stack?: LocalStackOptions } = {},
): ModelPlanner {
  const initial: Revise = options.revise ?? ((steps) => steps);
  let fake: FakeOpenAI | undefined;
  const started = (): FakeOpenAI => {
    if (!fake) throw new Error('useModelPlanner: the fake model is used inside tests, once beforeAll ran');
    return fake;
  };
  beforeAll(async () => {
    fake = await startFakeOpenAI({
      reply: async (request) => {
        await model.hold;
        const text = userText(request);
        const objective = /Objective:\n(.*)/.exec(text)?.[1] ?? '';
        const current = /Current plan:\n(.*)/.exec(text)?.[1];
        const steps = current === undefined ? [] : (JSON.parse(current) as { steps: PlanStep[] }).steps;
        return completion({ ...plan(objective, model.revise(steps, stack)), revision: 2 });
      },
    });
  });
  afterAll(async () => {
    await fake?.close();
  });
  // Registered after the fake's beforeAll, so that the stack starts once the fake listens (hooks run in order).
  const stack = useTestStack(() => ({
    ...options.stack,
    settings: settingsFromEnv({ CAIRN_MODEL_URL: started().baseUrl, CAIRN_MODEL: 'fake-model' }),
  }));
  const model: ModelPlanner = {
    stack,
    get fake() {
      return started();
    },
    revise: initial,
    hold: Promise.resolve(),
  };
  beforeEach(() => {
    started().requests.length = 0;
    model.hold = Promise.resolve();
    model.revise = initial;
  });
  return model;
}
