/**
 * Whatever `/plans/validate` accepts, `POST /runs` keeps: values larger than a DynamoDB item (a plan with a large
 * input, a run's submitted plan) are stored out of line and read back whole.
 */
import { describe, expect, it } from 'vitest';
import { echoStep, harness, planOf } from './harness.ts';

describe('POST /runs with values larger than a store item', () => {
  it('stores a plan whose input is larger than an item when /plans/validate accepts it', async () => {
    const h = await harness();
    const value = 'v'.repeat(450 * 1024);
    const plan = planOf([echoStep('big', { input: { value } })]);
    const validated = await h.request('POST', '/plans/validate', { body: { plan } });
    expect(validated.status).toBe(200);
    const created = await h.request('POST', '/runs', { body: { plan } });
    expect(created.status).toBe(202);
    const { runId } = (await created.json()) as { runId: string };
    const run = await h.store.getRun(runId);
    expect(run?.submittedPlan?.steps[0]?.input).toEqual({ value });
    const listed = await h.request('GET', '/runs');
    expect(((await listed.json()) as { runs: { runId: string }[] }).runs.map((r) => r.runId)).toContain(runId);
  });
});
