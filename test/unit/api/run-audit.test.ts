import { describe, expect, it } from 'vitest';
import { echoStep, harness, planOf, seedRun, stepRecord } from './harness.ts';

describe('GET /runs/{runId}: audit fields', () => {
  it('shows a step metadata as the plan gave it', async () => {
    const h = await harness();
    const plan = planOf([echoStep('a', { metadata: { owner: 'team-a', ticket: 42 } }), echoStep('b')]);
    await seedRun(h, 'r', plan, [stepRecord('r', 'a'), stepRecord('r', 'b')]);
    const body = (await (await h.request('GET', '/runs/r')).json()) as { steps: Record<string, unknown>[] };
    expect(body.steps[0]?.metadata).toEqual({ owner: 'team-a', ticket: 42 });
    expect(body.steps[1]).not.toHaveProperty('metadata');
  });
});
