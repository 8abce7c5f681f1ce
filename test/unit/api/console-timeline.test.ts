import { describe, expect, it } from 'vitest';
import { buildTimeline } from '../../../shared/api/console/timeline-model.ts';
import type { PlanStep } from '../../../shared/plan/schema.ts';
import type { AttemptRecord } from '../../../shared/ports/store.ts';
import { approvalRecord, echoStep, planOf, runRecord, stepRecord } from './harness.ts';

const T0 = '2030-01-01T00:00:00.000Z';
const at = (seconds: number) => new Date(Date.parse(T0) + seconds * 1000).toISOString();

const attempt = (stepId: string, n: number, from: number, to: number | undefined, outcome: AttemptRecord['outcome']) =>
  ({
    runId: 'r',
    stepId,
    generation: 1,
    attempt: n,
    target: 'tool:echo',
    startedAt: at(from),
    ...(to === undefined ? {} : { finishedAt: at(to) }),
    outcome,
    evidence: {},
  }) satisfies AttemptRecord;

const steps: PlanStep[] = [
  echoStep('a', { estimatedDurationSeconds: 10 }),
  echoStep('b', { dependsOn: ['a'], estimatedDurationSeconds: 5 }),
  echoStep('c', { dependsOn: ['a'], estimatedDurationSeconds: 1 }),
  echoStep('d', { dependsOn: ['b', 'c'], estimatedDurationSeconds: 2 }),
];

describe('buildTimeline', () => {
  it('plans each step at the earliest start its estimated upstream allows', () => {
    const timeline = buildTimeline({
      run: runRecord('r', { createdAt: T0 }),
      plan: planOf(steps),
      records: [],
      attempts: [],
      approvals: [],
      now: new Date(at(1)),
    });

    expect(timeline.rows.map((r) => [r.id, r.plannedStartSeconds])).toEqual([
      ['a', 0],
      ['b', 10],
      ['c', 10],
      ['d', 15],
    ]);
    expect(timeline.criticalPath.planned).toEqual({ steps: ['a', 'b', 'd'], seconds: 17 });
  });

  it('measures the actual critical path from the step records and keeps retries as separate attempts', () => {
    const records = [
      stepRecord('r', 'a', { status: 'succeeded', startedAt: at(0), finishedAt: at(2) }),
      stepRecord('r', 'b', { status: 'succeeded', startedAt: at(2), finishedAt: at(3) }),
      stepRecord('r', 'c', { status: 'succeeded', attempts: 2, startedAt: at(2), finishedAt: at(9) }),
      stepRecord('r', 'd', { status: 'running', startedAt: at(9) }),
    ];
    const timeline = buildTimeline({
      run: runRecord('r', { createdAt: T0 }),
      plan: planOf(steps),
      records,
      attempts: [
        attempt('c', 2, 5, 9, 'succeeded'),
        attempt('c', 1, 2, 3, 'failed'),
        attempt('d', 1, 9, undefined, 'running'),
      ],
      approvals: [],
      now: new Date(at(10)),
    });

    expect(timeline.criticalPath.actual).toEqual({ steps: ['a', 'c', 'd'], seconds: 10 });
    const c = timeline.rows.find((r) => r.id === 'c');
    expect(c?.attempts.map((a) => [a.attempt, a.outcome])).toEqual([
      [1, 'failed'],
      [2, 'succeeded'],
    ]);
    expect(timeline.rows.find((r) => r.id === 'd')?.attempts[0]?.finishedAt).toBeNull();
    expect(timeline.finishedAt).toBeNull();
  });

  it('measures the critical path of a cancelled run from the steps that ran, never longer than the run', () => {
    const records = [
      stepRecord('r', 'a', { status: 'succeeded', startedAt: at(0), finishedAt: at(2) }),
      stepRecord('r', 'b', { status: 'cancelled', startedAt: at(2), finishedAt: at(3) }),
      stepRecord('r', 'c', { status: 'succeeded', startedAt: at(2), finishedAt: at(2.5) }),
      stepRecord('r', 'd', { status: 'cancelled' }),
    ];
    const timeline = buildTimeline({
      run: runRecord('r', { createdAt: T0, status: 'cancelled', updatedAt: at(3.1) }),
      plan: planOf(steps),
      records,
      attempts: [],
      approvals: [],
      now: new Date(at(60)),
    });

    expect(timeline.criticalPath.actual).toEqual({ steps: ['a', 'b'], seconds: 3 });
    expect(timeline.criticalPath.planned.seconds).toBe(17);
  });

  it('shows approval waits, open while pending and closed by the decision', () => {
    const timeline = buildTimeline({
      run: runRecord('r', { createdAt: T0, status: 'complete', updatedAt: at(30) }),
      plan: planOf([echoStep('a')]),
      records: [],
      attempts: [],
      approvals: [
        approvalRecord('x', { runId: 'r', stepId: 'a', createdAt: at(1), status: 'approved', decidedAt: at(4) }),
        approvalRecord('y', { runId: 'r', stepId: 'a', createdAt: at(5), status: 'pending' }),
      ],
      now: new Date(at(6)),
    });

    expect(timeline.rows[0]?.waits.map((w) => [w.approvalId, w.from, w.to])).toEqual([
      ['x', at(1), at(4)],
      ['y', at(5), null],
    ]);
    expect(timeline.finishedAt).toBe(at(30));
  });

  it('leaves groups and superseded steps out of the rows', () => {
    const plan = planOf([
      { id: 'g', title: 'Group', target: null, dependsOn: [] },
      echoStep('in', { parentId: 'g' }),
      echoStep('gone', { status: 'superseded' }),
    ]);

    const timeline = buildTimeline({
      run: runRecord('r'),
      plan,
      records: [],
      attempts: [],
      approvals: [],
      now: new Date(T0),
    });

    expect(timeline.rows.map((r) => r.id)).toEqual(['in']);
  });
});
