import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkReplan, frozenSteps, replanScope } from '../../../shared/engine/replan.ts';
import { buildGraph, downstreamClosure } from '../../../shared/plan/graph.ts';
import type { Plan, PlanStep } from '../../../shared/plan/schema.ts';
import { group, plan, replanCaseArbitrary, researchPlan, statuses, step } from './replan-testkit.ts';

const edit = (p: Plan, id: string, change: (s: PlanStep) => PlanStep): Plan => ({
  ...p,
  steps: p.steps.map((s) => (s.id === id ? change(s) : s)),
});
const without = (p: Plan, id: string): Plan => ({ ...p, steps: p.steps.filter((s) => s.id !== id) });
const codes = (issues: readonly { code: string; stepId: string }[]) => issues.map((i) => `${i.code} ${i.stepId}`);

describe('replanScope', () => {
  it('holds the failed step and its downstream closure, and leaves upstream and unrelated steps out', () => {
    const scope = replanScope(researchPlan(), ['a.search']);
    expect(scope.failed).toEqual(['a.search']);
    expect(scope.steps).toEqual(['a', 'a.search', 'a.fetch', 'write', 'review']);
  });

  it('includes a group only when every executable descendant is in scope', () => {
    const scope = replanScope(researchPlan(), ['a.fetch']);
    expect(scope.steps).toEqual(['a.fetch', 'write', 'review']);
    expect(scope.steps).not.toContain('a');
    expect(scope.steps).not.toContain('research');
  });

  it('lets a failed group stand for its executable descendants and ignores unknown ids', () => {
    const scope = replanScope(researchPlan(), ['research', 'nope']);
    expect(scope.failed).toEqual([]);
    expect(scope.steps).toEqual([
      'research',
      'a',
      'a.search',
      'a.fetch',
      'b',
      'b.search',
      'b.fetch',
      'write',
      'review',
    ]);
  });

  it('is closed under downstream, contains the failed steps and only groups fully inside it (property)', () => {
    fc.assert(
      fc.property(replanCaseArbitrary(), ({ plan: p, failed }) => {
        const graph = buildGraph(p.steps);
        const scope = replanScope(p, failed);
        const inScope = new Set(scope.steps);
        for (const id of scope.failed) expect(inScope.has(id)).toBe(true);
        for (const id of scope.steps) {
          if (graph.isGroup(id)) {
            const descendants = graph.executableDescendants(id);
            expect(descendants.length).toBeGreaterThan(0);
            for (const d of descendants) expect(inScope.has(d)).toBe(true);
          } else {
            for (const d of downstreamClosure(graph, id)) expect(inScope.has(d)).toBe(true);
          }
        }
      }),
    );
  });
});

describe('frozenSteps', () => {
  it('is every step out of scope plus every finished executable step', () => {
    const p = researchPlan();
    const scope = replanScope(p, ['a.fetch']);
    const frozen = frozenSteps(p, scope, statuses({ 'a.fetch': 'succeeded' }));
    expect(frozen).toEqual(['research', 'a', 'a.search', 'a.fetch', 'b', 'b.search', 'b.fetch', 'other']);
  });
});

describe('checkReplan', () => {
  const previous = researchPlan();
  const scope = replanScope(previous, ['a.fetch']);
  const done = statuses({
    'a.search': 'succeeded',
    'b.search': 'succeeded',
    'b.fetch': 'succeeded',
    'a.fetch': 'failed',
  });

  it('accepts changes inside the scope and ignores lifecycle fields everywhere', () => {
    let next = edit(previous, 'a.fetch', (s) => ({ ...s, target: 'tool:echo-backup', status: 'pending' }));
    next = edit(next, 'b.search', (s) => ({ ...s, status: 'succeeded', result: { hits: 3 }, error: null }));
    next = { ...without(next, 'review'), steps: [...without(next, 'review').steps, step('publish', ['write'])] };
    expect(checkReplan(previous, next, scope, done)).toEqual([]);
  });

  it('rejects a changed frozen step with E_REPLAN_SCOPE, naming the changed fields and the step path', () => {
    const next = edit(previous, 'other', (s) => ({ ...s, title: 'renamed', maxRetries: 1 }));
    const issues = checkReplan(previous, next, scope, done);
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ code: 'E_REPLAN_SCOPE', stepId: 'other', path: '/steps/9' });
    expect(issues[0]?.message).toContain('maxRetries, title');
  });

  it('rejects a removed finished step with E_REPLAN_REMOVED_FINISHED and a removed frozen one with E_REPLAN_REMOVED_FROZEN', () => {
    const next = without(without(previous, 'b.fetch'), 'other');
    expect(codes(checkReplan(previous, next, scope, done))).toEqual([
      'E_REPLAN_REMOVED_FINISHED b.fetch',
      'E_REPLAN_REMOVED_FROZEN other',
    ]);
  });

  it('rejects a new step in a group that a frozen step waits for, as a change of that step', () => {
    const frozenWriter = plan([group('g'), step('x', [], { parentId: 'g' }), step('after', ['g']), step('y')]);
    const next = { ...frozenWriter, steps: [...frozenWriter.steps, step('x2', ['y'], { parentId: 'g' })] };
    const issues = checkReplan(frozenWriter, next, replanScope(frozenWriter, ['y']), new Map());
    expect(codes(issues)).toEqual(['E_REPLAN_SCOPE after']);
    expect(issues[0]?.message).toContain('now also waits for x2');
  });

  it('treats a finished step as frozen even inside the scope', () => {
    const next = edit(previous, 'write', (s) => ({ ...s, title: 'rewritten' }));
    expect(codes(checkReplan(previous, next, scope, statuses({ write: 'succeeded' })))).toEqual([
      'E_REPLAN_SCOPE write',
    ]);
    expect(checkReplan(previous, next, scope, statuses({ write: 'blocked' }))).toEqual([]);
  });

  it('rejects another objective', () => {
    expect(codes(checkReplan(previous, { ...previous, objective: 'else' }, scope))).toEqual(['E_REPLAN_OBJECTIVE ']);
  });

  it('accepts any edit confined to the scope (property)', () => {
    fc.assert(
      fc.property(replanCaseArbitrary(), fc.nat(), fc.nat({ max: 3 }), ({ plan: p, failed, states }, seed, extra) => {
        const scope = replanScope(p, failed);
        const frozen = new Set(frozenSteps(p, scope, states));
        const graph = buildGraph(p.steps);
        // a finished step in scope is frozen too, and dropping what it waits for would change it
        const droppable = (id: string) =>
          !frozen.has(id) && !graph.isGroup(id) && downstreamClosure(graph, id).every((d) => !frozen.has(d));
        const steps = p.steps
          // drop some executable scope steps, retitle the others
          .filter((s, i) => !droppable(s.id) || (seed + i) % 3 !== 0)
          .map((s) => (frozen.has(s.id) ? s : { ...s, title: `${s.title} (replanned)` }));
        const added = Array.from({ length: extra }, (_, k) =>
          step(`new${k}`, p.steps.length > 0 ? [p.steps[(seed + k) % p.steps.length]?.id ?? 's0'] : []),
        );
        expect(checkReplan(p, { ...p, steps: [...steps, ...added] }, scope, states)).toEqual([]);
      }),
    );
  });

  it('rejects any change to a frozen step (property)', () => {
    fc.assert(
      fc.property(
        replanCaseArbitrary(),
        fc.nat(),
        fc.constantFrom('title', 'dependsOn', 'remove'),
        ({ plan: p, failed, states }, seed, how) => {
          const scope = replanScope(p, failed);
          const frozen = frozenSteps(p, scope, states);
          fc.pre(frozen.length > 0);
          const id = frozen[seed % frozen.length] as string;
          const next =
            how === 'remove'
              ? without(p, id)
              : edit(p, id, (s) =>
                  how === 'title' ? { ...s, title: `${s.title}!` } : { ...s, dependsOn: [...s.dependsOn, 'ghost'] },
                );
          const issues = checkReplan(p, next, scope, states);
          expect(issues.map((i) => i.stepId)).toContain(id);
          const expected = how === 'remove' ? /^E_REPLAN_REMOVED_/ : /^E_REPLAN_SCOPE$/;
          expect(issues.find((i) => i.stepId === id)?.code).toMatch(expected);
        },
      ),
    );
  });
});
