import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dependentsOf, planGraph, planTraceText, upstreamOutputs } from '../../../shared/engine/scheduling.ts';
import { dagArbitrary, group, step } from './engine-testkit.ts';

describe('planTraceText', () => {
  it("puts the plan's rationale after what the step does, and only the step when there is none", () => {
    const plan = { revision: 1, rationale: 'HTN: objective: method m, because x.' };
    expect(planTraceText('a', { title: 'A', target: 'tool:echo' }, plan)).toBe(
      'A → tool:echo. Why: HTN: objective: method m, because x.',
    );
    expect(planTraceText('a', { title: 'A', target: 'tool:echo' }, { revision: 1 })).toBe('A → tool:echo');
    expect(planTraceText('a', undefined, { revision: 1 })).toBe('a → ?');
  });

  it('names a later revision', () => {
    expect(planTraceText('s', { title: 'S', target: 'tool:x' }, { revision: 3, rationale: 'swapped' })).toBe(
      'S → tool:x (revision 3). Why: swapped',
    );
  });
});

describe('dependentsOf', () => {
  it('names the executable steps that depend on a step directly, in plan order', () => {
    fc.assert(
      fc.property(dagArbitrary(14), (steps) => {
        const graph = planGraph({ steps });
        for (const { id } of steps)
          expect(dependentsOf(graph, id)).toEqual(steps.filter((s) => s.dependsOn.includes(id)).map((s) => s.id));
      }),
    );
  });

  it("expands a group's dependencies: its members wait for what it waits for, its dependents for its members", () => {
    const steps = [step('x'), group('g', ['x']), step('a', [], { parentId: 'g' }), step('c', ['g'])];
    const graph = planGraph({ steps });
    expect(dependentsOf(graph, 'x')).toEqual(['a']);
    expect(dependentsOf(graph, 'a')).toEqual(['c']);
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
