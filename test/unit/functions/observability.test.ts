import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { Tracer } from '@aws-lambda-powertools/tracer';
import { describe, expect, it, vi } from 'vitest';
import {
  metricsSink,
  type Observability,
  observe,
  observedRegistry,
  payloadKeys,
} from '../../../functions/observability.ts';
import type { CapabilityBinding, CapabilityCall } from '../../../shared/ports/capabilities.ts';
import type { MetricsSink } from '../../../shared/ports/metrics.ts';

/** Powertools look-alikes that record what the wrapper does to them. */
function fakeObservability() {
  const persistent: Record<string, unknown> = {};
  const annotations: Record<string, unknown> = {};
  const subsegments: { name: string; closed: boolean }[] = [];
  const parent = {
    addNewSubsegment: (name: string) => {
      const sub = { name, closed: false, close: () => (sub.closed = true) };
      subsegments.push(sub);
      return sub;
    },
  };
  let current: unknown = parent;
  const logger = {
    addContext: vi.fn(),
    appendPersistentKeys: (keys: Record<string, unknown>) => Object.assign(persistent, keys),
    removePersistentKeys: (keys: string[]) => {
      for (const key of keys) delete persistent[key];
    },
    error: vi.fn(),
    warn: vi.fn(),
  };
  const tracer = {
    getSegment: () => current,
    setSegment: (segment: unknown) => (current = segment),
    putAnnotation: (key: string, value: unknown) => (annotations[key] = value),
    annotateColdStart: vi.fn(),
    addServiceNameAnnotation: vi.fn(),
    addErrorAsMetadata: vi.fn(),
  };
  const metrics = {
    captureColdStartMetric: vi.fn(),
    hasStoredMetrics: () => true,
    publishStoredMetrics: vi.fn(),
  };
  const durations: [string, number, unknown][] = [];
  const sink: MetricsSink = { count: vi.fn(), duration: (name, ms, dims) => durations.push([name, ms, dims]) };
  const observability = {
    logger: logger as unknown as Logger,
    tracer: tracer as unknown as Tracer,
    metrics: metrics as unknown as Metrics,
    sink,
  } satisfies Observability;
  return {
    observability,
    persistent,
    annotations,
    subsegments,
    logger,
    tracer,
    metrics,
    durations,
    parent,
    current: () => current,
  };
}

describe('payloadKeys', () => {
  it('takes the ids a task payload carries and nothing else', () => {
    expect(payloadKeys({ action: 'claimStep', runId: 'r', stepId: 's', generation: 2, taskToken: 't' })).toEqual({
      action: 'claimStep',
      runId: 'r',
      stepId: 's',
      generation: 2,
    });
    expect(payloadKeys({ runId: 7, generation: '2' })).toEqual({});
    expect(payloadKeys(null)).toEqual({});
  });
});

describe('observe', () => {
  it('logs with the payload ids while the handler runs, then forgets them', async () => {
    const fake = fakeObservability();
    let during: Record<string, unknown> = {};
    const handler = observe(
      'coordinator',
      async (_event: unknown) => {
        during = { ...fake.persistent };
        return 'done';
      },
      () => fake.observability,
    );
    await expect(handler({ runId: 'r1', stepId: 's1', generation: 1 }, { awsRequestId: 'req' })).resolves.toBe('done');
    expect(during).toEqual({ runId: 'r1', stepId: 's1', generation: 1 });
    expect(fake.persistent).toEqual({});
    expect(fake.logger.addContext).toHaveBeenCalledWith({ awsRequestId: 'req' });
  });

  it('runs the handler in an annotated subsegment and restores the parent after', async () => {
    const fake = fakeObservability();
    await observe(
      'step-executor',
      async () => 1,
      () => fake.observability,
    )({ runId: 'r', stepId: 's' }, undefined);
    expect(fake.subsegments).toEqual([expect.objectContaining({ name: '## step-executor', closed: true })]);
    expect(fake.annotations).toEqual({ runId: 'r', stepId: 's' });
    expect(fake.current()).toBe(fake.parent);
    expect(fake.metrics.publishStoredMetrics).toHaveBeenCalledOnce();
  });

  it('records and logs a handler error, and rethrows it unchanged', async () => {
    const fake = fakeObservability();
    const boom = new Error('boom');
    const handler = observe(
      'planner',
      async () => {
        throw boom;
      },
      () => fake.observability,
    );
    await expect(handler({ runId: 'r' }, undefined)).rejects.toBe(boom);
    expect(fake.tracer.addErrorAsMetadata).toHaveBeenCalledWith(boom);
    expect(fake.logger.error).toHaveBeenCalledWith('planner failed', boom);
    expect(fake.persistent).toEqual({});
    expect(fake.subsegments[0]?.closed).toBe(true);
  });
});

describe('metricsSink', () => {
  it('writes each fact as its own metric with its dimensions', () => {
    const written: unknown[] = [];
    const metrics = {
      singleMetric: () => ({
        addDimensions: (dims: unknown) => written.push(['dims', dims]),
        addMetric: (name: string, unit: string, value: number) => written.push([name, unit, value]),
      }),
    } as unknown as Metrics;
    const sink = metricsSink(metrics, { warn: vi.fn() } as unknown as Logger);
    sink.count('StepsSucceeded', 1, { capability: 'tool:x' });
    sink.duration('StepDuration', 250);
    expect(written).toEqual([
      ['dims', { capability: 'tool:x' }],
      ['StepsSucceeded', 'Count', 1],
      ['StepDuration', 'Milliseconds', 250],
    ]);
  });

  it('drops a metric it cannot write instead of failing the work', () => {
    const warn = vi.fn();
    const metrics = {
      singleMetric: () => {
        throw new Error('too many dimensions');
      },
    } as unknown as Metrics;
    expect(() => metricsSink(metrics, { warn } as unknown as Logger).count('X', 1)).not.toThrow();
    expect(warn).toHaveBeenCalledOnce();
  });
});

describe('observedRegistry', () => {
  const call = { runId: 'r', stepId: 's', attempt: 2, target: 'tool:x' } as CapabilityCall;

  it('traces each capability call and records its duration by capability and binding', async () => {
    const fake = fakeObservability();
    const binding: CapabilityBinding = { kind: 'http', invoke: async () => ({ output: { ok: true } }) };
    const registry = observedRegistry(
      { binding: (t) => (t === 'tool:x' ? binding : undefined) },
      () => fake.observability,
    );
    await expect(registry.binding('tool:x')?.invoke(call)).resolves.toEqual({ output: { ok: true } });
    expect(registry.binding('tool:none')).toBeUndefined();
    expect(fake.subsegments).toEqual([expect.objectContaining({ name: '### tool:x', closed: true })]);
    expect(fake.annotations).toMatchObject({ runId: 'r', stepId: 's', capability: 'tool:x' });
    expect(fake.durations).toEqual([
      ['CapabilityCallDuration', expect.any(Number), { capability: 'tool:x', binding: 'http' }],
    ]);
  });

  it('lets a failing call fail, and still records how long it took', async () => {
    const fake = fakeObservability();
    const failure = new Error('down');
    const binding: CapabilityBinding = {
      kind: 'lambda',
      invoke: async () => {
        throw failure;
      },
    };
    const registry = observedRegistry({ binding: () => binding }, () => fake.observability);
    await expect(registry.binding('tool:x')?.invoke(call)).rejects.toBe(failure);
    expect(fake.durations).toHaveLength(1);
  });
});
