import { describe, expect, it } from 'vitest';
import { applicationWork, revisionApplication } from '../../../shared/engine/replan.ts';
import { planTraceText } from '../../../shared/engine/scheduling.ts';
import { traceEntry } from '../../../shared/engine/trace.ts';
import { buildGraph } from '../../../shared/plan/graph.ts';
import type { StepStatus } from '../../../shared/plan/schema.ts';
import type { RevisionApplication, StepRecord } from '../../../shared/ports/store.ts';
import { plan, step } from './replan-testkit.ts';

const NOW = '2026-01-01T00:00:00.000Z';

const record = (stepId: string, status: StepStatus, generation = 1, upstream: string[] = []): StepRecord => ({
  runId: 'r1',
  stepId,
  status,
  generation,
  upstream,
  remaining: 0,
  released: upstream,
  attempts: 1,
  trace: [],
  updatedAt: NOW,
});

// Revision 2: A kept (succeeded), B changed (failed in revision 1), C after B, D new after A; X dropped.
const revision = plan([step('A'), step('B', ['A']), step('C', ['B']), step('D', ['A'])], 2);
const graph = buildGraph(revision.steps);
const application: RevisionApplication = {
  removed: ['X'],
  restarted: [
    { stepId: 'B', from: 1 },
    { stepId: 'C', from: 1 },
  ],
  added: ['D'],
};

// Each fresh generation's trace says what the revision planned for the step (planTraceText).
const planned = (id: string) =>
  traceEntry(
    'plan',
    planTraceText(
      id,
      revision.steps.find((s) => s.id === id),
      revision,
    ),
    NOW,
  );

const work = (records: StepRecord[]) =>
  applicationWork({
    runId: 'r1',
    application,
    graph,
    records,
    plan: revision,
    now: NOW,
  });

describe('revisionApplication', () => {
  it('restarts existing records from the generation read and adds the steps without one', () => {
    const applied = { revision, added: ['D', 'E'], removed: ['X'], changed: ['B'], kept: ['A'] };
    const records = [record('A', 'succeeded'), record('B', 'failed', 3), record('E', 'superseded', 2)];

    expect(revisionApplication(applied, records)).toEqual({
      removed: ['X'],
      restarted: [
        { stepId: 'B', from: 3 },
        { stepId: 'E', from: 2 },
      ],
      added: ['D'],
    });
  });
});

describe('applicationWork', () => {
  it('does the whole application when nothing of it landed yet', () => {
    const records = [
      record('A', 'succeeded'),
      record('B', 'failed', 1, ['A']),
      record('C', 'blocked', 1, ['B']),
      record('X', 'running'),
    ];

    const result = work(records);

    expect(result.supersede.map((s) => s.stepId)).toEqual(['X']);
    expect(result.restart.map(({ step: s, next }) => [s.stepId, next])).toEqual([
      ['B', { status: 'ready', upstream: ['A'], remaining: 0, released: ['A'], appendTrace: [planned('B')] }],
      // B restarts too: a late release of its generation 1 is stale in C's next generation.
      [
        'C',
        {
          status: 'pending',
          upstream: ['B'],
          remaining: 1,
          released: [],
          staleReleases: { B: 1 },
          appendTrace: [planned('C')],
        },
      ],
    ]);
    expect(result.create).toMatchObject([
      { stepId: 'D', generation: 1, status: 'ready', released: ['A'], trace: [planned('D')] },
    ]);
    expect([...result.fresh].sort()).toEqual(['B', 'C', 'D']);
  });

  it('leaves out what a first try already wrote when a repeat finishes the application', () => {
    const records = [
      record('A', 'succeeded'),
      record('B', 'running', 2, ['A']),
      record('C', 'blocked', 1, ['B']),
      record('D', 'ready', 1, ['A']),
      record('X', 'superseded'),
    ];

    const result = work(records);

    expect(result.supersede).toEqual([]);
    expect(result.restart.map(({ step: s }) => s.stepId)).toEqual(['C']);
    expect(result.create).toEqual([]);
    expect(result.fresh.has('B')).toBe(true);
  });

  it("names a restarted upstream step's generation stale in the first record of a step the revision adds", () => {
    // E is new and waits for B, which the revision restarts from generation 1: B's late release of it counts nothing.
    const withE = plan([...revision.steps, step('E', ['B'])], 2);
    const result = applicationWork({
      runId: 'r1',
      application: { ...application, added: ['D', 'E'] },
      graph: buildGraph(withE.steps),
      records: [record('A', 'succeeded'), record('B', 'succeeded', 1, ['A']), record('C', 'succeeded', 1, ['B'])],
      plan: withE,
      now: NOW,
    });

    expect(result.create.map((s) => [s.stepId, s.staleReleases])).toEqual([
      ['D', undefined],
      ['E', { B: 1 }],
    ]);
    expect(result.create.find((s) => s.stepId === 'E')).toMatchObject({ status: 'pending', remaining: 1 });
  });

  // Revision 2 with E, a step it adds, after A.
  const addsE = plan([...revision.steps, step('E', ['A'])], 2);

  it('names the generation before the one a kept, unfinished upstream step is in stale in a restarted step', () => {
    // An invalidation moved A to generation 2 (not run yet) and B with it; the revision restarts B alone, from 2.
    // A's generation 1 finished before that invalidation and its release of B may still come: it counts nothing.
    const result = applicationWork({
      runId: 'r1',
      application: { removed: [], restarted: [{ stepId: 'B', from: 2 }], added: ['E'] },
      graph: buildGraph(addsE.steps),
      records: [record('A', 'pending', 2), record('B', 'pending', 2, ['A']), record('C', 'pending', 1, ['B'])],
      plan: addsE,
      now: NOW,
    });

    expect(result.restart.map(({ step: s, next }) => [s.stepId, next.staleReleases, next.remaining])).toEqual([
      ['B', { A: 1 }, 1],
    ]);
    // A step the revision adds waits for A's current generation too.
    expect(result.create.map((s) => [s.stepId, s.staleReleases, s.remaining])).toEqual([['E', { A: 1 }, 1]]);
  });

  it('names no generation of a kept upstream step in its first generation, nor of a finished one', () => {
    const result = applicationWork({
      runId: 'r1',
      application: { removed: [], restarted: [{ stepId: 'B', from: 1 }], added: ['E'] },
      graph: buildGraph(addsE.steps),
      records: [record('A', 'running', 1), record('B', 'pending', 1, ['A'])],
      plan: addsE,
      now: NOW,
    });
    expect(result.restart[0]?.next).not.toHaveProperty('staleReleases');
    expect(result.create[0]).not.toHaveProperty('staleReleases');

    const finished = work([record('A', 'succeeded', 3), record('B', 'failed', 1, ['A'])]);
    expect(finished.restart.find(({ step: s }) => s.stepId === 'B')?.next).toMatchObject({ released: ['A'] });
    expect(finished.restart.find(({ step: s }) => s.stepId === 'B')?.next).not.toHaveProperty('staleReleases');
  });

  it('supersedes no dropped step that already ended with an output', () => {
    expect(work([record('X', 'succeeded')]).supersede).toEqual([]);
  });
});
