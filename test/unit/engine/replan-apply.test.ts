import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyReplan, diffPlans, replanScope, requestScope } from '../../../shared/engine/replan.ts';
import { loadCatalog } from '../../../shared/plan/catalog.ts';
import { buildGraph } from '../../../shared/plan/graph.ts';
import type { Plan, StepStatus } from '../../../shared/plan/schema.ts';
import { validate } from '../../../shared/plan/validate.ts';
import { replanCaseArbitrary, researchPlan, step } from './replan-testkit.ts';

const records = (
  entries: Record<string, { status: 'succeeded' | 'failed' | 'blocked' | 'skipped'; output?: unknown }>,
) =>
  new Map(
    Object.entries(entries).map(([id, e]) => [
      id,
      e.status === 'failed' ? { ...e, error: { code: 'E_TIMEOUT', message: 'timed out', retryable: true } } : e,
    ]),
  );

const withStep = (p: Plan, id: string, change: Partial<Plan['steps'][number]>): Plan => ({
  ...p,
  steps: p.steps.map((s) => (s.id === id ? { ...s, ...change } : s)),
});

describe('applyReplan', () => {
  const previous = researchPlan();
  const states = records({
    'a.search': { status: 'succeeded', output: { results: [1, 2] } },
    'a.fetch': { status: 'failed' },
    'b.search': { status: 'succeeded', output: { results: [3] } },
    'b.fetch': { status: 'succeeded', output: { pages: ['p'] } },
    write: { status: 'blocked' },
    review: { status: 'blocked' },
    other: { status: 'skipped' },
  });

  it('substitutes in place: the failed step and the blocked steps start a new generation, the rest is kept', () => {
    const next = withStep(previous, 'a.fetch', { target: 'tool:echo-backup' });
    const applied = applyReplan(previous, next, states);
    expect(applied.added).toEqual([]);
    expect(applied.removed).toEqual([]);
    expect(applied.changed).toEqual(['a.fetch', 'write', 'review']);
    expect(applied.kept).toEqual(['a.search', 'b.search', 'b.fetch', 'other']);
    expect(applied.revision.revision).toBe(2);
  });

  it('carries finished steps with their status and result, and sets changed and added steps pending', () => {
    const next = {
      ...previous,
      steps: [...previous.steps.filter((s) => s.id !== 'a.fetch'), step('a.snippets', ['a.search'], { parentId: 'a' })],
    };
    const applied = applyReplan(previous, next, states);
    const byId = new Map(applied.revision.steps.map((s) => [s.id, s]));
    expect(byId.get('b.fetch')).toMatchObject({ status: 'succeeded', result: { pages: ['p'] }, error: null });
    expect(byId.get('other')).toMatchObject({ status: 'skipped', result: null, error: null });
    expect(byId.get('a.snippets')).toMatchObject({ status: 'pending', result: null, error: null });
    expect(byId.get('write')).toMatchObject({ status: 'pending', result: null, error: null });
    expect(byId.get('b')).toMatchObject({ status: 'succeeded' });
    expect(byId.get('a')).toMatchObject({ status: 'running' });
    expect(applied.added).toEqual(['a.snippets']);
    expect(applied.removed).toEqual(['a.fetch']);
    // `write` waits for the research group, whose executable steps changed: a new generation
    expect(applied.changed).toEqual(['write', 'review']);
  });

  it('keeps a failed step outside the scope as it is, with its error', () => {
    const twoFailures = records({ 'a.fetch': { status: 'failed' }, 'b.fetch': { status: 'failed' } });
    const next = withStep(previous, 'a.fetch', { target: 'tool:echo-backup' });
    const applied = applyReplan(previous, next, twoFailures, { scope: replanScope(previous, ['a.fetch']) });
    expect(applied.changed).toContain('a.fetch');
    expect(applied.kept).toContain('b.fetch');
    const bFetch = applied.revision.steps.find((s) => s.id === 'b.fetch');
    expect(bFetch).toMatchObject({ status: 'failed', error: { code: 'E_TIMEOUT' } });
  });

  it('starts a new generation of every step downstream of one that runs again, open ones too', () => {
    // A person's replan changes b.search (finished): b.fetch counted its release and is running, write and review wait.
    const open = new Map<string, StepStatus>([
      ['a.search', 'succeeded'],
      ['a.fetch', 'succeeded'],
      ['b.search', 'succeeded'],
      ['b.fetch', 'running'],
      ['write', 'pending'],
      ['review', 'pending'],
      ['other', 'succeeded'],
    ]);
    const next = withStep(previous, 'b.search', { input: { query: 'again' } });
    const applied = applyReplan(previous, next, open, { scope: requestScope(previous) });
    expect(applied.changed).toEqual(['b.search', 'b.fetch', 'write', 'review']);
    expect(applied.kept).toEqual(['a.search', 'a.fetch', 'other']);
  });

  it('produces a revision that the validator accepts with its lifecycle fields', () => {
    const catalog = loadCatalog({
      capabilities: ['tool:echo', 'tool:echo-backup'].map((target) => ({
        target,
        description: target,
        inputSchema: { type: 'object' },
        outputSchema: { type: 'object' },
        sideEffect: 'none' as const,
      })),
    });
    const applied = applyReplan(previous, withStep(previous, 'a.fetch', { target: 'tool:echo-backup' }), states);
    const result = validate(applied.revision, catalog);
    expect(result.valid ? [] : result.errors).toEqual([]);
  });

  it('partitions the executable ids of both plans into added, removed, changed and kept (property)', () => {
    fc.assert(
      fc.property(
        replanCaseArbitrary(),
        fc.nat(),
        fc.nat({ max: 3 }),
        ({ plan: p, failed, states: s }, seed, extra) => {
          const steps = p.steps
            .filter((_, i) => (seed + i) % 4 !== 0)
            .map((x, i) => (((seed >> 2) + i) % 3 === 0 ? { ...x, title: `${x.title}*` } : x));
          const next = { ...p, steps: [...steps, ...Array.from({ length: extra }, (_, k) => step(`n${k}`))] };
          const applied = applyReplan(p, next, s, { scope: replanScope(p, failed) });
          const lists = [applied.added, applied.removed, applied.changed, applied.kept];
          const all = lists.flat();
          expect(new Set(all).size).toBe(all.length);
          const expected = new Set([...buildGraph(p.steps).executableIds(), ...buildGraph(next.steps).executableIds()]);
          expect(new Set(all)).toEqual(expected);
          expect(applied.revision.revision).toBe(p.revision + 1);
          expect(applied.revision.steps.map((x) => x.id)).toEqual(next.steps.map((x) => x.id));
        },
      ),
    );
  });
});

describe('diffPlans', () => {
  it('lists added, removed, changed (with fields) and unchanged steps, groups included', () => {
    const a = researchPlan();
    const b = {
      ...a,
      steps: [
        ...a.steps
          .filter((s) => s.id !== 'b.fetch')
          .map((s) => (s.id === 'write' ? { ...s, maxRetries: 1, title: 'W' } : s)),
        step('publish', ['review']),
      ],
    };
    const diff = diffPlans(a, b);
    expect(diff.added).toEqual(['publish']);
    expect(diff.removed).toEqual(['b.fetch']);
    expect(diff.changed).toEqual([{ id: 'write', fields: ['maxRetries', 'title'] }]);
    expect(diff.unchanged).toEqual(['research', 'a', 'a.search', 'a.fetch', 'b', 'b.search', 'review', 'other']);
  });

  it('ignores lifecycle fields and key order unless asked', () => {
    const a = researchPlan();
    const b = withStep(a, 'other', { status: 'succeeded', result: { ok: true } });
    const reordered = { ...b, steps: b.steps.map((s) => Object.fromEntries(Object.entries(s).reverse()) as typeof s) };
    expect(diffPlans(a, reordered).changed).toEqual([]);
    expect(diffPlans(a, reordered, { lifecycle: true }).changed).toEqual([
      { id: 'other', fields: ['result', 'status'] },
    ]);
  });
});
