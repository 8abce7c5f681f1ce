import { describe, expect, it } from 'vitest';
import {
  countEventMetrics,
  recordApprovalWait,
  recordStepDuration,
  UNKNOWN_CAPABILITY,
} from '../../../shared/events/metrics.ts';
import type { MetricDimensions, MetricsSink } from '../../../shared/ports/metrics.ts';

function sink() {
  const calls: [string, string, number, MetricDimensions | undefined][] = [];
  const metrics: MetricsSink = {
    count: (name, value, dims) => calls.push(['count', name, value, dims]),
    duration: (name, ms, dims) => calls.push(['duration', name, ms, dims]),
  };
  return { metrics, calls };
}

const targets: Record<string, string> = { a: 'tool:x', b: 'agent:y' };
const capabilityOf = (stepId: string) => targets[stepId];

describe('countEventMetrics', () => {
  it('counts step outcomes per capability, unknown when the plan does not say', () => {
    const { metrics, calls } = sink();
    countEventMetrics(
      metrics,
      [
        { type: 'StepSucceeded', detail: { stepId: 'a' } },
        { type: 'StepRetrying', detail: { stepId: 'b' } },
        { type: 'StepFailed', detail: { stepId: 'b', final: true } },
        { type: 'StepBlocked', detail: { stepId: 'zz' } },
        { type: 'StepStarted', detail: { stepId: 'a' } },
      ],
      capabilityOf,
    );
    expect(calls).toEqual([
      ['count', 'StepsSucceeded', 1, { capability: 'tool:x' }],
      ['count', 'StepsRetried', 1, { capability: 'agent:y' }],
      ['count', 'StepsFailed', 1, { capability: 'agent:y' }],
      ['count', 'StepsBlocked', 1, { capability: UNKNOWN_CAPABILITY }],
    ]);
  });

  it('does not count a failure that is not final (its retry is counted instead)', () => {
    const { metrics, calls } = sink();
    countEventMetrics(metrics, [{ type: 'StepFailed', detail: { stepId: 'a', final: false } }], capabilityOf);
    expect(calls).toEqual([]);
  });

  it('counts replans, and invalidations by the number of steps invalidated', () => {
    const { metrics, calls } = sink();
    countEventMetrics(
      metrics,
      [
        { type: 'PlanRevised', detail: { runId: 'r', revision: 2 } },
        { type: 'StepsInvalidated', detail: { runId: 'r', stepIds: ['a', 'b', 'c'] } },
      ],
      capabilityOf,
    );
    expect(calls).toEqual([
      ['count', 'Replans', 1, undefined],
      ['count', 'Invalidations', 3, undefined],
    ]);
  });
});

describe('recordStepDuration', () => {
  it('records start to finish in milliseconds with the capability and outcome', () => {
    const { metrics, calls } = sink();
    recordStepDuration(
      metrics,
      { startedAt: '2026-01-01T00:00:00.000Z', finishedAt: '2026-01-01T00:00:02.500Z' },
      'tool:x',
      'succeeded',
    );
    expect(calls).toEqual([['duration', 'StepDuration', 2500, { capability: 'tool:x', outcome: 'succeeded' }]]);
  });

  it('records nothing without a sink, a start, or with an end before the start', () => {
    const { metrics, calls } = sink();
    recordStepDuration(metrics, { finishedAt: '2026-01-01T00:00:00Z' }, 'tool:x', 'failed');
    recordStepDuration(
      metrics,
      { startedAt: '2026-01-01T00:00:05Z', finishedAt: '2026-01-01T00:00:00Z' },
      null,
      'failed',
    );
    recordStepDuration(
      undefined,
      { startedAt: '2026-01-01T00:00:00Z', finishedAt: '2026-01-01T00:00:01Z' },
      'x',
      'failed',
    );
    expect(calls).toEqual([]);
  });
});

describe('recordApprovalWait', () => {
  it('records the time from request to decision by kind and decision', () => {
    const { metrics, calls } = sink();
    recordApprovalWait(
      metrics,
      { createdAt: '2026-01-01T00:00:00Z', kind: 'review' },
      '2026-01-01T00:01:00Z',
      'approve',
    );
    expect(calls).toEqual([['duration', 'ApprovalWaitTime', 60_000, { kind: 'review', decision: 'approve' }]]);
  });
});
