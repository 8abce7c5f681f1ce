import { describe, expect, it } from 'vitest';
import { buildGraph, criticalPath, depth, topologicalOrder } from '../../../shared/plan/graph.ts';
import { chain, group, groupsExample, step } from './graph-testkit.ts';

describe('topologicalOrder', () => {
  it('keeps plan order when dependencies already come first', () => {
    expect(topologicalOrder(buildGraph(groupsExample))).toEqual(groupsExample.map((s) => s.id));
  });

  it('moves a step after the steps it depends on', () => {
    expect(topologicalOrder(buildGraph([step('c', ['b']), step('b', ['a']), step('a')]))).toEqual(['a', 'b', 'c']);
  });

  it('puts a step that depends on a group after every descendant of the group', () => {
    const graph = buildGraph([
      step('after', ['G']),
      group('G'),
      group('inner', [], 'G'),
      step('x', [], 'inner'),
      step('y', [], 'G'),
    ]);

    expect(topologicalOrder(graph)).toEqual(['G', 'inner', 'x', 'y', 'after']);
  });

  it('puts a group after its own and inherited dependencies and before its descendants', () => {
    const graph = buildGraph([
      step('child', [], 'inner'),
      group('inner', ['b'], 'outer'),
      group('outer', ['a']),
      step('a'),
      step('b'),
    ]);

    const order = topologicalOrder(graph) ?? [];
    const precedes = (first: string, second: string) => order.indexOf(first) < order.indexOf(second);

    expect(order).toHaveLength(5);
    expect(precedes('a', 'outer') && precedes('b', 'inner') && precedes('outer', 'inner')).toBe(true);
    expect(precedes('inner', 'child') && precedes('a', 'child') && precedes('b', 'child')).toBe(true);
  });

  it('returns null when the graph has a cycle', () => {
    expect(topologicalOrder(buildGraph([step('a', ['b']), step('b', ['a']), step('c')]))).toBeNull();
  });

  it('returns null for a self-dependency', () => {
    expect(topologicalOrder(buildGraph([step('a', ['a'])]))).toBeNull();
  });
});

describe('depth', () => {
  it('is 0 without executable steps', () => {
    expect(depth(buildGraph([]))).toBe(0);
    expect(depth(buildGraph([group('G'), group('H', [], 'G')]))).toBe(0);
  });

  it('is 1 for independent steps', () => {
    expect(depth(buildGraph([step('a'), step('b')]))).toBe(1);
  });

  it('counts the steps of the longest chain', () => {
    expect(depth(buildGraph([step('a'), step('b', ['a']), step('c', ['b']), step('d', ['a'])]))).toBe(3);
  });

  it('counts executable steps only, through dependencies on groups', () => {
    // a -> (G: x -> y) -> after: groups add nothing, but the path runs through them
    const graph = buildGraph([
      step('a'),
      group('G', ['a']),
      step('x', [], 'G'),
      step('y', ['x'], 'G'),
      step('after', ['G']),
    ]);

    expect(depth(graph)).toBe(4);
  });

  it('applies dependencies inherited from nested groups', () => {
    const graph = buildGraph([
      step('a'),
      step('b', ['a']),
      group('outer', ['b']),
      group('inner', [], 'outer'),
      step('x', [], 'inner'),
    ]);

    expect(depth(graph)).toBe(3);
  });

  it('is Infinity when the graph has a cycle', () => {
    expect(depth(buildGraph([step('a', ['b']), step('b', ['a'])]))).toBe(Number.POSITIVE_INFINITY);
  });

  it('measures the example plan', () => {
    expect(depth(buildGraph(groupsExample))).toBe(5);
  });
});

describe('criticalPath', () => {
  it('follows the slowest chain by estimated duration, in execution order', () => {
    const graph = buildGraph([
      step('start', [], undefined, 1),
      step('fast', ['start'], undefined, 2),
      step('slow', ['start'], undefined, 10),
      step('end', ['fast', 'slow'], undefined, 3),
    ]);

    expect(criticalPath(graph)).toEqual({ steps: ['start', 'slow', 'end'], seconds: 14 });
  });

  it('prefers a longer path that is slower over a shorter one', () => {
    const graph = buildGraph([
      step('lone', [], undefined, 5),
      step('a', [], undefined, 3),
      step('b', ['a'], undefined, 3),
    ]);

    expect(criticalPath(graph)).toEqual({ steps: ['a', 'b'], seconds: 6 });
  });

  it('runs through groups and inherited dependencies', () => {
    const graph = buildGraph([
      step('a', [], undefined, 4),
      group('G', ['a']),
      step('x', [], 'G', 1),
      step('y', [], 'G', 7),
      step('after', ['G'], undefined, 2),
    ]);

    expect(criticalPath(graph)).toEqual({ steps: ['a', 'y', 'after'], seconds: 13 });
  });

  it('uses durationOf when given', () => {
    const graph = buildGraph([step('a', [], undefined, 100), step('b', ['a']), step('c')]);

    expect(criticalPath(graph, (id) => (id === 'c' ? 50 : 1))).toEqual({ steps: ['c'], seconds: 50 });
  });

  it('counts missing, negative and non-finite durations as 0 and breaks ties by number of steps', () => {
    const graph = buildGraph([step('a'), step('b', ['a']), step('c')]);
    const odd = new Map([
      ['a', -5],
      ['b', Number.NaN],
      ['c', Number.POSITIVE_INFINITY],
    ]);

    expect(criticalPath(graph)).toEqual({ steps: ['a', 'b'], seconds: 0 });
    expect(criticalPath(graph, (id) => odd.get(id) ?? 0)).toEqual({ steps: ['a', 'b'], seconds: 0 });
  });

  it('is empty without executable steps', () => {
    expect(criticalPath(buildGraph([group('G')]))).toEqual({ steps: [], seconds: 0 });
  });

  it('is infinite and empty when the graph has a cycle', () => {
    expect(criticalPath(buildGraph([step('a', ['a'], undefined, 3)]))).toEqual({
      steps: [],
      seconds: Number.POSITIVE_INFINITY,
    });
  });

  it('walks a 10,000-step chain', () => {
    const result = criticalPath(buildGraph(chain(10_000)), () => 2);

    expect(result.seconds).toBe(20_000);
    expect(result.steps[0]).toBe('s0');
    expect(result.steps).toHaveLength(10_000);
  });
});
