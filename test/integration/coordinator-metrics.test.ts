/**
 * The coordinator's metrics on a real run (dynalite store, the harness's drivers): step outcomes counted per
 * capability, retries, blocked steps and step durations, all through the MetricsSink port.
 */
import { describe, expect, it } from 'vitest';
import type { MetricDimensions, MetricsSink } from '../../shared/ports/metrics.ts';
import { createCoordinator } from '../../shared/services/coordinator.ts';
import {
  type Harness,
  planOf,
  runPlan,
  step,
  TEST_CATALOG,
  TEST_CONFIG,
  useCoordinatorHarness,
} from '../support/coordinator-harness.ts';

const harness = useCoordinatorHarness();

interface Recorded {
  readonly kind: 'count' | 'duration';
  readonly name: string;
  readonly value: number;
  readonly dimensions: MetricDimensions;
}

function recordingSink(): MetricsSink & { readonly recorded: Recorded[] } {
  const recorded: Recorded[] = [];
  return {
    recorded,
    count: (name, value, dimensions = {}) => recorded.push({ kind: 'count', name, value, dimensions }),
    duration: (name, value, dimensions = {}) => recorded.push({ kind: 'duration', name, value, dimensions }),
  };
}

/** The harness with its coordinator rebuilt around a metrics sink (same store, executions and publisher). */
function harnessWithMetrics(sink: MetricsSink): Harness {
  const h = harness();
  let ids = 0;
  const coordinator = createCoordinator({
    store: h.store,
    executions: h.executions,
    events: h.events,
    catalog: TEST_CATALOG,
    clock: () => new Date(),
    newId: () => `metrics-${++ids}`,
    config: TEST_CONFIG,
    metrics: sink,
  });
  return { ...h, coordinator };
}

const total = (recorded: Recorded[], name: string, dimensions: MetricDimensions) =>
  recorded
    .filter((r) => r.name === name && JSON.stringify(r.dimensions) === JSON.stringify(dimensions))
    .reduce((sum, r) => sum + r.value, 0);

describe('coordinator metrics', () => {
  it('count succeeded, failed and blocked steps per capability, with their durations', async () => {
    const sink = recordingSink();
    const h = harnessWithMetrics(sink);
    h.scripts.set('b', () => ({ error: { code: 'E_BOOM', message: 'boom', retryable: false } }));
    await runPlan(
      h,
      planOf([step('a'), step('b', ['a'], { target: 'agent:test.writer' }), step('c', ['b']), step('d')]),
    );

    const echo = { capability: 'tool:test.echo' };
    const writer = { capability: 'agent:test.writer' };
    expect(total(sink.recorded, 'StepsSucceeded', echo)).toBe(2);
    expect(total(sink.recorded, 'StepsFailed', writer)).toBe(1);
    expect(total(sink.recorded, 'StepsBlocked', echo)).toBe(1);
    expect(total(sink.recorded, 'StepsFailed', echo)).toBe(0);
    const durations = sink.recorded.filter((r) => r.name === 'StepDuration');
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
    const sink = recordingSink();
    const h = harnessWithMetrics(sink);
    h.scripts.set('a', (attempt) =>
      attempt < 3 ? { error: { code: 'E_FLAKY', message: 'try again', retryable: true } } : { output: { ok: true } },
    );
    await runPlan(h, planOf([step('a', [], { maxRetries: 3 })]));
    expect(total(sink.recorded, 'StepsRetried', { capability: 'tool:test.echo' })).toBe(2);
    expect(total(sink.recorded, 'StepsSucceeded', { capability: 'tool:test.echo' })).toBe(1);
  });
});
