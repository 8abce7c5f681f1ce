import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  countedAgainst,
  dependentsOf,
  initialStepRecords,
  inStartOrder,
  isStartable,
  missingStepRecords,
  planGraph,
  planTraceText,
  releasesDependents,
  staleUpstreamReleases,
  stepsToBlock,
  stepsToStart,
  upstreamOutputs,
} from '../../../shared/engine/scheduling.ts';
import { MAX_TRACE_TEXT } from '../../../shared/engine/trace.ts';
import type { StepStatus } from '../../../shared/plan/schema.ts';
import type { StepRecord } from '../../../shared/ports/store.ts';
import { dagArbitrary, group, referenceDownstream, step } from './engine-testkit.ts';

const now = '2025-01-01T00:00:00.000Z';

describe('missingStepRecords', () => {
  const plan = { steps: [step('a'), step('b', ['a']), step('c', ['a', 'b']), group('g', ['b'])] };
  const indexed = { plan, graph: planGraph(plan), byId: new Map(plan.steps.map((s) => [s.id, s])) };

  it('makes the initial records of the executable steps that are not present, as initialStepRecords does', () => {
    const all = initialStepRecords(plan, { runId: 'r', now });
    expect(missingStepRecords(indexed, new Set(['a']), { runId: 'r', now })).toEqual(
      all.filter((r) => r.stepId !== 'a'),
    );
  });

  it('makes only the wanted ones, and none when every wanted one is present', () => {
    const wanted = new Set(['c', 'g']);
    expect(missingStepRecords(indexed, new Set(['a']), { runId: 'r', now, wanted }).map((r) => r.stepId)).toEqual([
      'c',
    ]);
    expect(missingStepRecords(indexed, new Set(['a', 'b', 'c']), { runId: 'r', now })).toEqual([]);
  });
});

describe('inStartOrder', () => {
  it('orders records after their upstream steps, in plan order within one depth', () => {
    const steps = [step('a'), step('d', ['c']), step('b', ['a']), step('c', ['a']), step('e', ['b', 'd'])];
    const behind = initialStepRecords({ steps }, { runId: 'r', now }).filter((r) => r.remaining > 0);
    expect(inStartOrder(behind).map((r) => r.stepId)).toEqual(['b', 'c', 'd', 'e']);
  });
});

describe('countedAgainst', () => {
  const [, b, c] = initialStepRecords(
    { steps: [step('a'), step('b', ['a']), step('c', ['a', 'b'])] },
    { runId: 'r', now },
  );

  it('counts the edge once, and moves the record to ready when it was the last one', () => {
    const once = countedAgainst(c as StepRecord, 'a');
    expect([once.status, once.remaining, once.released]).toEqual(['pending', 1, ['a']]);
    expect(countedAgainst(once, 'a')).toBe(once);
    const last = countedAgainst(b as StepRecord, 'a');
    expect([last.status, last.remaining, last.released]).toEqual(['ready', 0, ['a']]);
  });

  it('leaves a record alone for a step that is not one of its upstream steps', () => {
    expect(countedAgainst(b as StepRecord, 'c')).toBe(b);
  });
});

describe('initialStepRecords', () => {
  it("puts the plan's rationale into each step's [plan] trace entry, and only the step when there is none", () => {
    const plan = {
      revision: 1,
      rationale: 'HTN: objective: method m, because x.',
      steps: [step('a', [], { title: 'A' })],
    };
    const [withWhy] = initialStepRecords(plan, { runId: 'r', now });
    expect(withWhy?.trace).toEqual([
      { kind: 'plan', at: now, text: 'A → tool:echo. Why: HTN: objective: method m, because x.' },
    ]);
    const [plain] = initialStepRecords({ steps: [step('a', [], { title: 'A' })] }, { runId: 'r', now });
    expect(plain?.trace[0]?.text).toBe('A → tool:echo');
  });

  it('names a later revision in the [plan] entry and clips a long rationale like every trace entry', () => {
    expect(planTraceText('s', { title: 'S', target: 'tool:x' }, { revision: 3, rationale: 'swapped' })).toBe(
      'S → tool:x (revision 3). Why: swapped',
    );
    const [record] = initialStepRecords(
      { rationale: 'y'.repeat(2000), steps: [step('a', [], { title: 'A' })] },
      { runId: 'r', now },
    );
    expect(record?.trace[0]?.text.length).toBe(MAX_TRACE_TEXT);
  });

  it('creates one record per executable step counting its upstream, ready when it waits for nothing', () => {
    const records = initialStepRecords({ steps: [step('a'), step('b'), step('c', ['a', 'b'])] }, { runId: 'r', now });
    expect(records.map((r) => [r.stepId, r.status, r.remaining, r.generation])).toEqual([
      ['a', 'ready', 0, 1],
      ['b', 'ready', 0, 1],
      ['c', 'pending', 2, 1],
    ]);
    expect(records[2]?.upstream).toEqual(['a', 'b']);
    expect(records.every((r) => r.released.length === 0 && r.attempts === 0 && r.runId === 'r')).toBe(true);
  });

  it('expands a group dependency to the group members and gives groups no record', () => {
    const steps = [group('g'), step('a', [], { parentId: 'g' }), step('b', [], { parentId: 'g' }), step('c', ['g'])];
    const records = initialStepRecords({ steps }, { runId: 'r', now });
    expect(records.map((r) => r.stepId)).toEqual(['a', 'b', 'c']);
    expect(records.find((r) => r.stepId === 'c')?.remaining).toBe(2);
  });

  it('makes members of a group wait for what the group depends on', () => {
    const steps = [step('x'), group('g', ['x']), step('a', [], { parentId: 'g' })];
    const records = initialStepRecords({ steps }, { runId: 'r', now });
    expect(records.find((r) => r.stepId === 'a')?.upstream).toEqual(['x']);
  });

  it('starts with a [plan] trace entry', () => {
    const [record] = initialStepRecords({ steps: [step('a')] }, { runId: 'r', now });
    expect(record?.trace).toEqual([{ kind: 'plan', at: now, text: 'step a → tool:echo' }]);
  });
});

describe('stepsToStart', () => {
  const rec = (stepId: string, status: StepStatus, remaining: number) => ({ stepId, status, remaining });

  it('starts pending and ready steps with nothing left to wait for', () => {
    expect(
      stepsToStart([rec('a', 'pending', 0), rec('b', 'pending', 1), rec('c', 'ready', 0), rec('d', 'running', 0)]),
    ).toEqual(['a', 'c']);
  });

  it('never starts a finished step', () => {
    for (const status of ['succeeded', 'failed', 'skipped', 'blocked', 'cancelled'] as const)
      expect(isStartable({ status, remaining: 0 })).toBe(false);
  });
});

describe('release counting', () => {
  it('starts every step exactly once, only after all of its upstream finished, in any completion order', () => {
    fc.assert(
      fc.property(dagArbitrary(14), fc.infiniteStream(fc.nat()), (steps, picks) => {
        const graph = planGraph({ steps });
        const records = new Map(initialStepRecords({ steps }, { runId: 'r', now }).map((r) => [r.stepId, { ...r }]));
        const started: string[] = [];
        const finished = new Set<string>();
        let running = stepsToStart([...records.values()]);
        started.push(...running);
        const pick = picks[Symbol.iterator]();
        while (running.length > 0) {
          const index = (pick.next().value as number) % running.length;
          const done = running[index] as string;
          running = running.filter((_, i) => i !== index);
          finished.add(done);
          for (const dependent of dependentsOf(graph, done)) {
            const record = records.get(dependent) as StepRecord & { remaining: number };
            record.remaining -= 1;
            if (record.remaining === 0) {
              expect(record.upstream.every((u) => finished.has(u))).toBe(true);
              started.push(dependent);
              running.push(dependent);
            }
          }
        }
        expect([...started].sort()).toEqual(steps.map((s) => s.id).sort());
      }),
    );
  });
});

describe('stepsToBlock', () => {
  it('blocks the whole downstream closure of a failed step', () => {
    fc.assert(
      fc.property(dagArbitrary(14), fc.nat(), (steps, which) => {
        const failed = steps[which % steps.length]?.id as string;
        const statuses = new Map<string, StepStatus>(steps.map((s) => [s.id, 'pending']));
        const blocked = stepsToBlock(planGraph({ steps }), failed, statuses);
        expect(new Set(blocked)).toEqual(referenceDownstream(steps, failed));
        expect(blocked).not.toContain(failed);
      }),
    );
  });

  it('leaves claimed and finished steps alone', () => {
    const steps = [step('a'), step('b', ['a']), step('c', ['a']), step('d', ['b'])];
    const statuses = new Map<string, StepStatus>([
      ['a', 'failed'],
      ['b', 'pending'],
      ['c', 'succeeded'],
      ['d', 'pending'],
    ]);
    expect(stepsToBlock(planGraph({ steps }), 'a', statuses)).toEqual(['b', 'd']);
  });

  it('leaves out a generation that waits for the next one of the failed step, and what only it leads to', () => {
    const steps = [step('a'), step('b', ['a']), step('c', ['b']), step('d', ['a']), step('e', ['c', 'd'])];
    const statuses = new Map<string, StepStatus>(steps.map((s) => [s.id, s.id === 'a' ? 'failed' : 'pending']));
    // An invalidation of a moved b and c (c names b's generation 1 stale), not yet a itself; d is still on generation 1.
    const records = new Map<string, { generation: number; staleReleases?: Record<string, number> }>([
      ['b', { generation: 2, staleReleases: { a: 1 } }],
      ['c', { generation: 2, staleReleases: { b: 1 } }],
      ['d', { generation: 1 }],
      ['e', { generation: 1 }],
    ]);
    const graph = planGraph({ steps });
    expect(stepsToBlock(graph, 'a', statuses, { generation: 1, records })).toEqual(['d', 'e']);
    // A later failure of a (its generation 2) blocks them all.
    expect(stepsToBlock(graph, 'a', statuses, { generation: 2, records })).toEqual(['b', 'c', 'd', 'e']);
  });

  it('blocks what depends on the failed step through a group', () => {
    const steps = [step('a'), group('g', ['a']), step('m', [], { parentId: 'g' }), step('z', ['g'])];
    const statuses = new Map<string, StepStatus>(steps.map((s) => [s.id, 'pending']));
    expect(new Set(stepsToBlock(planGraph({ steps }), 'a', statuses))).toEqual(new Set(['m', 'z']));
  });
});

describe('staleUpstreamReleases', () => {
  const at = (generations: Record<string, { moves: boolean; generation: number }>) => (id: string) => generations[id];

  it('names the generation a moving upstream step moves from, even its first', () => {
    const of = at({ a: { moves: true, generation: 1 }, b: { moves: true, generation: 3 } });
    expect(staleUpstreamReleases(['a', 'b'], [], of)).toEqual({ a: 1, b: 3 });
  });

  it('names the generation before the one an unfinished upstream step that does not move is in', () => {
    const of = at({ a: { moves: false, generation: 2 }, b: { moves: false, generation: 4 } });
    expect(staleUpstreamReleases(['a', 'b'], [], of)).toEqual({ a: 1, b: 3 });
  });

  it('names nothing for a released upstream step, one in its first generation, or one without a generation', () => {
    const of = at({ a: { moves: false, generation: 2 }, b: { moves: false, generation: 1 } });
    expect(staleUpstreamReleases(['a', 'b', 'c'], ['a'], of)).toBeUndefined();
  });
});

describe('releasesDependents', () => {
  it('is true only for succeeded and skipped', () => {
    expect(releasesDependents('succeeded')).toBe(true);
    expect(releasesDependents('skipped')).toBe(true);
    expect(releasesDependents('failed')).toBe(false);
    expect(releasesDependents('blocked')).toBe(false);
  });
});

describe('upstreamOutputs', () => {
  it('binds succeeded outputs, skipped steps and accepted failures to null and leaves the rest out', () => {
    const steps = new Map([
      ['a', { status: 'succeeded' as const, output: { v: 1 } }],
      ['b', { status: 'skipped' as const }],
      ['c', { status: 'failed' as const }],
      ['d', { status: 'blocked' as const }],
    ]);
    // A failed upstream is only ever read by a dependent its `onFailure: continue` let run.
    expect(upstreamOutputs(['a', 'b', 'c', 'd', 'missing'], steps)).toEqual({ a: { v: 1 }, b: null, c: null });
  });
});
