import { describe, expect, it } from 'vitest';
import { addedMutatingTargets, revisionQuestion } from '../../../shared/engine/replan/authority.ts';
import { applyReplan, checkReplan, requestScope } from '../../../shared/engine/replan.ts';
import { replanSections } from '../../../shared/planner/replan/prompt-sections.ts';
import type { PlanModelRequest } from '../../../shared/ports/plan-model.ts';
import { plan, statuses, step } from './replan-testkit.ts';

const SIDE_EFFECTS: Record<string, string> = {
  'tool:echo': 'none',
  'tool:deploy': 'mutating',
  'tool:publish': 'mutating',
  'tool:cache': 'idempotent',
};
const sideEffectOf = (target: string) => SIDE_EFFECTS[target];

describe('addedMutatingTargets', () => {
  it('names each mutating target the new revision has and the previous one did not, once, in plan order', () => {
    const previous = plan([step('a'), step('d', ['a'], { target: 'tool:deploy' })]);
    const next = plan([
      step('a'),
      step('d', ['a'], { target: 'tool:deploy', input: { again: true } }),
      step('p', ['d'], { target: 'tool:publish' }),
      step('p2', ['p'], { target: 'tool:publish' }),
      step('c', ['a'], { target: 'tool:cache' }),
    ]);

    expect(addedMutatingTargets(previous, next, sideEffectOf)).toEqual(['tool:publish']);
  });

  it('finds nothing when the mutating targets were all approved before, or none is mutating', () => {
    const previous = plan([step('d', [], { target: 'tool:deploy' })]);

    expect(addedMutatingTargets(previous, plan([step('d2', [], { target: 'tool:deploy' })]), sideEffectOf)).toEqual([]);
    expect(addedMutatingTargets(previous, plan([step('x', [], { target: 'tool:cache' })]), sideEffectOf)).toEqual([]);
  });

  it('asks a bounded question naming the targets and the reason', () => {
    const question = revisionQuestion(3, ['tool:publish'], 'r'.repeat(5000));
    expect(question).toMatch(/^Plan revision 3 adds a mutating target, tool:publish/);
    expect(question.length).toBeLessThanOrEqual(2000);
  });
});

describe('requestScope (a person asks for the replan)', () => {
  const previous = plan([step('a'), step('b', ['a']), step('c', ['b'])]);
  const finished = statuses({ a: 'succeeded', b: 'succeeded', c: 'succeeded' });

  it('lets a finished step change, but never be dropped', () => {
    const scope = requestScope(previous);
    const changed = plan([step('a'), step('b', ['a'], { input: { v: 2 } }), step('c', ['b'])], 2);
    const dropped = plan([step('a'), step('b', ['a'])], 2);

    expect(checkReplan(previous, changed, scope, finished)).toEqual([]);
    expect(checkReplan(previous, dropped, scope, finished).map((i) => [i.code, i.stepId])).toEqual([
      ['E_REPLAN_REMOVED_FINISHED', 'c'],
    ]);
  });

  it('accepts the objective the person asked for and no other', () => {
    const scope = requestScope(previous, [], 'a new objective');
    const next = { ...previous, revision: 2, objective: 'a new objective' };

    expect(checkReplan(previous, next, scope, finished)).toEqual([]);
    expect(checkReplan(previous, { ...next, objective: 'yet another' }, scope, finished)[0]?.code).toBe(
      'E_REPLAN_OBJECTIVE',
    );
    expect(checkReplan(previous, next, requestScope(previous), finished)[0]?.code).toBe('E_REPLAN_OBJECTIVE');
  });

  it('runs a changed finished step again with its finished downstream, and keeps the rest with its output', () => {
    const wide = plan([step('a'), step('b'), step('c', ['b']), step('d', ['c'])]);
    const states = new Map([
      ['a', { status: 'succeeded' as const, output: { v: 'a' } }],
      ['b', { status: 'succeeded' as const, output: { v: 'b' } }],
      ['c', { status: 'succeeded' as const, output: { v: 'c' } }],
      ['d', { status: 'succeeded' as const, output: { v: 'd' } }],
    ]);
    const next = plan([step('a'), step('b', [], { input: { v: 2 } }), step('c', ['b']), step('d', ['c'])], 2);

    const applied = applyReplan(wide, next, states, { scope: requestScope(wide) });

    expect(applied.kept).toEqual(['a']);
    expect(applied.changed).toEqual(['b', 'c', 'd']);
    expect(applied.revision.steps.find((s) => s.id === 'a')).toMatchObject({ status: 'succeeded', result: { v: 'a' } });
  });
});

describe('the replan brief of a person’s request', () => {
  const previous = plan([step('a')]);
  const request = (requested: PlanModelRequest['requested']): PlanModelRequest => ({
    objective: requested?.objective ?? previous.objective,
    catalog: [],
    planSchema: {},
    limits: { maxSteps: 64, maxDepth: 16 },
    previousPlan: previous,
    scope: requestScope(previous, [], requested?.objective),
    ...(requested === undefined ? {} : { requested }),
  });

  it('tells the model the reason and the new objective, and that finished steps may change', () => {
    const text = replanSections(request({ reason: 'add a summary', objective: 'research and summarize' })).join('\n');

    expect(text).toContain('Their reason: add a summary');
    expect(text).toContain('research and summarize');
    expect(text).toContain('a person asked for');
  });

  it('says nothing of a request when none was made', () => {
    const text = replanSections({ ...request(undefined), scope: undefined }).join('\n');
    expect(text).not.toContain('Their reason');
  });
});
