/**
 * Messages made from input, through the embedded stack (its API answers at most Lambda's 6 MB, as deployed): an
 * expression that raises a 10 MB error in a step's input, its `when` or its success assertion, and an input whose
 * 200,000 items each break the capability's contract, fail their steps with bounded messages, so the run's view and
 * every listing that includes it still answer.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { settingsFromEnv } from '../../shared/config/settings.ts';
import { MAX_MESSAGE_CHARS } from '../../shared/plan/bounded-text.ts';
import { plan, type RunView, step, stepOf, summary, useTestStack, waitForRun } from '../support/local-stack.ts';

const stack = useTestStack(() => {
  const base = settingsFromEnv(process.env);
  // A 10 MB $pad takes a while on a busy machine: it must fail as the plan says, not at the time bound.
  const limits = { ...base.expressions.limits, timeoutMs: 20_000 };
  return { settings: { ...base, expressions: { ...base.expressions, limits } } };
});

const HUGE_ERROR = '{% $error($pad("", 9999999, "m")) %}';

/** The bytes a response carries at most here: a few steps' bounded errors and the run's evidence of them. */
const BOUNDED_BYTES = 64 * 1024;

describe('errors made from input', () => {
  it('fail their steps with bounded messages, and GET /runs/{id} and GET /runs still answer', async () => {
    const runId = await stack.startRun({
      plan: plan('errors from input', [
        step(stack, 'input', T.echo, { input: { value: HUGE_ERROR } }),
        step(stack, 'when', T.echo, { input: { value: 1 }, when: HUGE_ERROR }),
        step(stack, 'assert', T.echo, {
          input: { value: 1 },
          successCriteria: { description: 'raises', assert: HUGE_ERROR },
        }),
        step(stack, 'contract', 'agent:sre.diagnose', {
          input: { service: 's', logs: [], metrics: [], deploys: [], anomalies: '{% [1..200000] %}' },
        }),
      ]),
    });
    const done: RunView = await waitForRun(stack, runId, undefined, 60_000);

    expect(done.status, summary(done)).toBe('failed');
    expect(stepOf(done, 'input').error?.code).toBe('E_INPUT_EXPRESSION');
    expect(stepOf(done, 'when').error?.code).toBe('E_WHEN_EXPRESSION');
    expect(stepOf(done, 'assert').error?.code).toBe('E_ASSERTION_ERROR');
    expect(stepOf(done, 'contract').error?.code).toBe('E_INPUT_SCHEMA');
    for (const s of done.steps) expect(s.error?.message.length ?? 0, s.id).toBeLessThanOrEqual(MAX_MESSAGE_CHARS);
    const contract = await stack.request('GET', `/runs/${runId}/steps/contract`);
    expect(contract.status).toBe(200);
    const { record } = contract.json as { record: { error: { details: { errors: string[] } } } };
    const details = record.error.details.errors;
    expect(details).toHaveLength(101);
    expect(details.at(-1)).toBe('and 199900 more');

    const view = await stack.request('GET', `/runs/${runId}`);
    expect(view.status).toBe(200);
    expect(JSON.stringify(view.json).length).toBeLessThan(BOUNDED_BYTES);
    const list = await stack.request('GET', '/runs');
    expect(list.status).toBe(200);
    expect((list.json as { runs: { runId: string }[] }).runs.map((r) => r.runId)).toContain(runId);
    expect(JSON.stringify(list.json).length).toBeLessThan(BOUNDED_BYTES);
  }, 120_000);
});
