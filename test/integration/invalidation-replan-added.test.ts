/**
 * Steps a replan added (a revision that adds steps, made by a person's replan through the model) and then
 * invalidated, through the embedded stack's real machines: their new generations name the stale upstream
 * generations as every other step's do, so a release of an added step's ended generation that arrives late (its
 * RunStep slowed by the store) counts nothing in its dependent's new generation.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import type { PlanStep } from '../../shared/plan/schema.ts';
import {
  executedGenerations,
  executionEnded,
  plan,
  step,
  stepOf,
  summary,
  waitForRun,
} from '../support/local-stack.ts';
import { useModelPlanner } from '../support/model-planner.ts';
import { createStoreFaults } from '../support/stack-faults.ts';

const faults = createStoreFaults();
const model = useModelPlanner({ stack: { retryIntervalMs: 5, wrapStore: faults.wrap } });
const { stack } = model;

const echo = (id: string, fields: Partial<PlanStep> = {}) =>
  step(stack, id, T.echo, { input: { value: id }, ...fields });

describe('steps a replan added, then invalidated', () => {
  it("count no late release of the added upstream step's ended generation in the dependent's new one", async () => {
    const runId = await stack.startRun({ plan: plan('replan adds, then invalidated', [echo('A')]) });
    expect((await waitForRun(stack, runId)).status).toBe('complete');
    // B finishes generation 1 of the revision's steps; its release of C is held on its way to the store.
    const late = faults.hold({
      method: ['releaseLastDependency', 'releaseDependency'],
      match: (call) => call.runId === runId && call.args[1] === 'C',
    });
    model.revise = (steps) => [...steps, echo('B', { dependsOn: ['A'] }), echo('C', { dependsOn: ['B'] })];
    expect((await stack.request('POST', `/runs/${runId}/replan`, { reason: 'we need B and C' })).status).toBe(202);
    await late.arrived;
    // B's generation 2 is held at its claim, so C waits in its own.
    const claimOfB = faults.hold({
      method: 'transitionStep',
      match: (call) =>
        call.runId === runId && call.args[1] === 'B' && (call.args[2] as { generation: number }).generation === 2,
    });
    const answer = await stack.request('POST', `/runs/${runId}/steps/B/invalidate`, { reason: 'changed' });
    expect(answer.json).toMatchObject({ stepIds: ['B', 'C'] });
    await claimOfB.arrived;

    late.release();
    await executionEnded(stack, `${runId}-B-g1`);
    expect(await faults.raw().getStep(runId, 'C')).toMatchObject({ generation: 2, status: 'pending', remaining: 1 });
    expect(executedGenerations(stack, runId).C).toBeUndefined();

    claimOfB.release();
    const done = await waitForRun(stack, runId, (r) => r.status === 'complete' && stepOf(r, 'C').generation === 2);
    expect(
      done.steps.map((s) => `${s.id}${s.generation}${s.status}`),
      summary(done),
    ).toEqual(['A1succeeded', 'B2succeeded', 'C2succeeded']);
    expect(executedGenerations(stack, runId)).toEqual({ A: [1], B: [1, 2], C: [2] });
    expect(Date.parse(stepOf(done, 'C').startedAt ?? '')).toBeGreaterThanOrEqual(
      Date.parse(stepOf(done, 'B').finishedAt ?? ''),
    );
  }, 60_000);
});
