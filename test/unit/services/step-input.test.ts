import { describe, expect, it } from 'vitest';
import { upstreamStepIds } from '../../../shared/engine/run/step-brief.ts';
import { buildGraph } from '../../../shared/plan/graph.ts';
import type { PlanStep } from '../../../shared/plan/schema.ts';

type JSONType = NonNullable<PlanStep['input']>;

import type { StepRecord } from '../../../shared/ports/store.ts';
import { loadStepContext } from '../../../shared/services/step-input.ts';

const planStep = (id: string, dependsOn: string[], input?: JSONType): PlanStep => ({
  id,
  title: id,
  target: 'tool:echo',
  dependsOn,
  ...(input === undefined ? {} : { input }),
});

const record = (stepId: string, upstream: string[]): StepRecord => ({
  runId: 'r',
  stepId,
  status: 'succeeded',
  generation: 1,
  upstream,
  remaining: 0,
  released: upstream,
  attempts: 1,
  output: { value: stepId },
  trace: [],
  updatedAt: '2026-01-01T00:00:00.000Z',
});

/** a → b → c → d; d's input names only b. */
function chainOfFour(input: JSONType) {
  const steps = [planStep('a', []), planStep('b', ['a']), planStep('c', ['b']), planStep('d', ['c'], input)];
  const records = new Map(steps.map((s) => [s.id, record(s.id, s.dependsOn as string[])]));
  const read: string[][] = [];
  const store = {
    getSteps: async (_runId: string, ids: readonly string[]) => {
      read.push([...ids].sort());
      return ids.flatMap((id) => records.get(id) ?? []);
    },
    listSteps: async () => {
      read.push(['*']);
      return [...records.values()];
    },
  };
  const d = steps[3] as PlanStep;
  return { graph: buildGraph(steps), store, read, d, dRecord: records.get('d') as StepRecord };
}

describe('loadStepContext', () => {
  it('reads and binds only the upstream outputs the step names, given its definition', async () => {
    const { graph, store, read, d, dRecord } = chainOfFour({ v: '{% $outputs.b.value %}' });
    const context = await loadStepContext(store, dRecord, upstreamStepIds(graph, 'd', d));
    expect(read).toEqual([['b', 'c']]); // b is named, c is the direct upstream (an agent's brief)
    expect(context.outputs).toEqual({ b: { value: 'b' } });
    expect(context.direct).toEqual({ c: { value: 'c' } });
  });

  it('binds the whole upstream closure when an expression can reach outputs it does not name', async () => {
    const { graph, store, read, d, dRecord } = chainOfFour({ v: '{% $outputs.b.%.a %}' });
    const context = await loadStepContext(store, dRecord, upstreamStepIds(graph, 'd', d));
    expect(read).toEqual([['a', 'b', 'c']]);
    expect(Object.keys(context.outputs).sort()).toEqual(['a', 'b', 'c']);
  });

  it('binds the whole upstream closure without the definition', async () => {
    const { graph, store, read, dRecord } = chainOfFour({ v: '{% $outputs.b.value %}' });
    await loadStepContext(store, dRecord, upstreamStepIds(graph, 'd'));
    expect(read).toEqual([['a', 'b', 'c']]);
  });

  it('reads none of the records it was given and binds no outputs when nothing is bound', async () => {
    const { store, read, dRecord } = chainOfFour({ v: 1 });
    const c = { ...dRecord, stepId: 'c', upstream: ['b'], output: { value: 'c' } };
    const context = await loadStepContext(store, dRecord, [], [c]);
    expect(read).toEqual([]);
    expect(context).toEqual({ outputs: {}, direct: { c: { value: 'c' } } });
  });
});
