import { describe, expect, it } from 'vitest';
import { invalidationScope, isStaleAfterChange } from '../../../shared/engine/invalidation.ts';
import { buildGraph } from '../../../shared/plan/graph.ts';

const s = (id: string, dependsOn: string[] = [], parentId?: string, group = false) => ({
  id,
  dependsOn,
  target: group ? null : 'tool:x',
  ...(parentId === undefined ? {} : { parentId }),
});

// a → w → d → z ; a → e → z ; u alone ; group g (g1 → g2) after w ; after g: h
const graph = buildGraph([
  s('a'),
  s('w', ['a']),
  s('d', ['w']),
  s('e', ['a']),
  s('z', ['d', 'e']),
  s('u'),
  s('g', ['w'], undefined, true),
  s('g1', [], 'g'),
  s('g2', ['g1'], 'g'),
  s('h', ['g']),
]);

describe('invalidationScope', () => {
  it('takes the step and everything downstream of it, in plan order, and nothing upstream or unrelated', () => {
    expect(invalidationScope(graph, ['w'])).toEqual(['w', 'd', 'z', 'g1', 'g2', 'h']);
    expect(invalidationScope(graph, ['e'])).toEqual(['e', 'z']);
  });

  it('takes every executable step of a group and what waits for the group', () => {
    expect(invalidationScope(graph, ['g'])).toEqual(['g1', 'g2', 'h']);
  });

  it('merges several roots once each and ignores unknown ids', () => {
    expect(invalidationScope(graph, ['z', 'e', 'ghost'])).toEqual(['e', 'z']);
    expect(invalidationScope(graph, ['ghost'])).toEqual([]);
  });
});

describe('isStaleAfterChange', () => {
  const ran = { status: 'succeeded' as const, startedAt: '2030-01-01T00:00:10.000Z' };

  it('is stale when the generation began before the change, not when it began after it', () => {
    expect(isStaleAfterChange(ran, '2030-01-01T00:00:20.000Z')).toBe(true);
    expect(isStaleAfterChange(ran, '2030-01-01T00:00:05.000Z')).toBe(false);
  });

  it('reads a time without a fraction as the whole second (EventBridge times)', () => {
    const began = { status: 'running' as const, startedAt: '2030-01-01T00:00:10.400Z' };
    expect(isStaleAfterChange(began, '2030-01-01T00:00:10Z')).toBe(true);
    expect(isStaleAfterChange(began, '2030-01-01T00:00:10.100Z')).toBe(false);
  });

  it('is never stale for a generation that has not run, always without a time for one that has', () => {
    for (const status of ['pending', 'ready', 'blocked', 'cancelled', 'superseded'] as const)
      expect(isStaleAfterChange({ status }, '2030-01-01T00:00:20.000Z'), status).toBe(false);
    expect(isStaleAfterChange(ran)).toBe(true);
    expect(
      isStaleAfterChange({ status: 'skipped', finishedAt: '2030-01-01T00:00:30.000Z' }, '2030-01-01T00:00:20Z'),
    ).toBe(false);
    expect(isStaleAfterChange(ran, 'not a time')).toBe(true);
  });
});
