import { describe, expect, it } from 'vitest';
import { changedFields, countDiff, diffPlans } from '../../../shared/api/console/plan-diff.ts';
import { echoStep, planOf } from './harness.ts';

describe('diffPlans', () => {
  it('reports every live step as added when there is no earlier revision', () => {
    const diff = diffPlans(undefined, planOf([echoStep('a'), echoStep('b')]));

    expect(diff.added.map((s) => s.id)).toEqual(['a', 'b']);
    expect(countDiff(diff)).toEqual({ added: 2, removed: 0, changed: 0, superseded: 0 });
  });

  it('tells added, removed, changed and superseded steps apart', () => {
    const before = planOf([echoStep('keep'), echoStep('drop'), echoStep('edit'), echoStep('old')]);
    const after = {
      ...planOf([
        echoStep('keep'),
        echoStep('edit', { input: { value: 'new' }, title: 'Edited' }),
        echoStep('old', { status: 'superseded' }),
        echoStep('fresh', { dependsOn: ['keep'] }),
      ]),
      revision: 2,
    };

    const diff = diffPlans(before, after);

    expect(diff.added).toEqual([{ id: 'fresh', title: 'Step fresh' }]);
    expect(diff.removed).toEqual([{ id: 'drop', title: 'Step drop' }]);
    expect(diff.changed).toEqual([{ id: 'edit', title: 'Edited', fields: ['input', 'title'] }]);
    expect(diff.superseded).toEqual([{ id: 'old', title: 'Step old' }]);
  });

  it('reports a dropped step whose record a replan superseded as superseded, not removed', () => {
    const before = planOf([echoStep('keep'), echoStep('replaced'), echoStep('never-ran')]);
    const after = { ...planOf([echoStep('keep'), echoStep('instead')]), revision: 2 };

    const diff = diffPlans(before, after, new Set(['replaced']));

    expect(diff.superseded.map((s) => s.id)).toEqual(['replaced']);
    expect(diff.removed.map((s) => s.id)).toEqual(['never-ran']);
    expect(diff.added.map((s) => s.id)).toEqual(['instead']);
  });

  it('ignores runtime fields and object key order', () => {
    const before = echoStep('a', { input: { value: 'x', n: 1 } as never });
    const after = {
      ...echoStep('a', { input: { n: 1, value: 'x' } as never }),
      status: 'succeeded' as const,
      result: { value: 'x' },
    };

    expect(changedFields(before, after)).toEqual([]);
  });

  it('counts a step that comes back after being superseded as added', () => {
    const before = planOf([echoStep('a', { status: 'superseded' })]);
    const after = planOf([echoStep('a')]);

    expect(diffPlans(before, after).added.map((s) => s.id)).toEqual(['a']);
    expect(diffPlans(before, after).superseded).toEqual([]);
  });
});
