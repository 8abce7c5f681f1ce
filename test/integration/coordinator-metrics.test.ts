/**
 * The engine's metrics on real runs through the state machines: step outcomes counted per capability, retries,
 * blocked steps and step durations, all through the MetricsSink port (the embedded stack's `metrics` option).
 */
import { describe, expect, it } from 'vitest';
import type { MetricDimensions } from '../../shared/ports/metrics.ts';
import { type RecordedMetric, useEngineStack } from '../support/engine-stack.ts';
import { fail, flaky, TARGETS } from '../support/scripted-pack.ts';

const engine = useEngineStack();

const total = (recorded: readonly RecordedMetric[], name: string, dimensions: MetricDimensions) =>
  recorded
    .filter((r) => r.name === name && JSON.stringify(r.dimensions) === JSON.stringify(dimensions))
    .reduce((sum, r) => sum + r.value, 0);

/** Runs the plan and returns the metrics recorded meanwhile (tests of this file run one at a time). */
async function metricsOf(steps: Parameters<ReturnType<typeof engine>['runPlan']>[0]) {
  const { runPlan, metrics } = engine();
  const from = metrics.length;
  const outcome = await runPlan(steps);
  return { outcome, recorded: metrics.slice(from) };
}

describe('engine metrics', () => {
  it('count succeeded, failed and blocked steps per capability, with their durations', async () => {
    const { step } = engine();
    const { outcome, recorded } = await metricsOf([
      step('a'),
      step('b', ['a'], { target: TARGETS.writer, script: fail('E_BOOM', false) }),
      step('c', ['b']),
      step('d'),
    ]);
    expect(outcome.run.status).toBe('failed');

    const echo = { capability: TARGETS.echo };
    const writer = { capability: TARGETS.writer };
    expect(total(recorded, 'StepsSucceeded', echo)).toBe(2);
    expect(total(recorded, 'StepsFailed', writer)).toBe(1);
    expect(total(recorded, 'StepsBlocked', echo)).toBe(1);
    expect(total(recorded, 'StepsFailed', echo)).toBe(0);
    const durations = recorded.filter((r) => r.name === 'StepDuration');
    expect(
      durations.map((d) => d.dimensions).sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y))),
    ).toEqual([
      { ...writer, outcome: 'failed' },
      { ...echo, outcome: 'succeeded' },
      { ...echo, outcome: 'succeeded' },
    ]);
    for (const d of durations) expect(d.value).toBeGreaterThanOrEqual(0);
  });

  it('count each retry of a flaky step', async () => {
    const { step } = engine();
    const { outcome, recorded } = await metricsOf([step('a', [], { maxRetries: 3, script: flaky(2) })]);
    expect(outcome.run.status).toBe('complete');
    expect(total(recorded, 'StepsRetried', { capability: TARGETS.echo })).toBe(2);
    expect(total(recorded, 'StepsSucceeded', { capability: TARGETS.echo })).toBe(1);
  });

  it('time a person’s decision on a gate', async () => {
    const { step, submit, stack, quiet, metrics } = engine();
    const from = metrics.length;
    const runId = await submit([
      step('go', [], { target: TARGETS.approver, approval: { question: 'Go?', timeoutSeconds: 60 } }),
    ]);
    let pending = await stack.store.listApprovals({ runId, status: 'pending' });
    for (let i = 0; i < 300 && pending.length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      pending = await stack.store.listApprovals({ runId, status: 'pending' });
    }
    await stack.request('POST', `/approvals/${encodeURIComponent(pending[0]?.approvalId ?? '')}`, {
      decision: 'approve',
    });
    await quiet();
    const waits = metrics.slice(from).filter((m) => m.name === 'ApprovalWaitTime');
    expect(waits.map((w) => w.dimensions)).toEqual([{ kind: 'approval', decision: 'approve' }]);
    expect(total(metrics.slice(from), 'StepsSucceeded', { capability: TARGETS.approver })).toBe(1);
  });
});
