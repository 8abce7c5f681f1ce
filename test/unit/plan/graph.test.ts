import { describe, expect, it } from 'vitest';
import {
  buildGraph,
  depth,
  downstreamClosure,
  findCycles,
  type PlanGraph,
  parentCycles,
  topologicalOrder,
} from '../../../shared/plan/graph.ts';
import { chain, group, groupsExample, step } from './graph-testkit.ts';

describe('buildGraph', () => {
  it('lists every distinct id in plan order and keeps the first of duplicate ids', () => {
    const graph = buildGraph([step('b'), group('a'), step('b', ['a']), step('c', ['b'])]);

    expect(graph.ids).toEqual(['b', 'a', 'c']);
    expect(graph.isGroup('a')).toBe(true);
    expect(topologicalOrder(graph)).toEqual(['b', 'a', 'c']);
  });

  it('ignores unknown dependencies and parents without throwing', () => {
    const graph = buildGraph([step('a', ['nope']), step('b', ['a'], 'missing')]);

    expect(graph.parentOf('b')).toBeUndefined();
    expect(findCycles(graph)).toEqual([]);
    expect(topologicalOrder(graph)).toEqual(['a', 'b']);
  });

  it('ignores a parent that is not a group', () => {
    const graph = buildGraph([step('a'), step('b', [], 'a')]);

    expect(graph.parentOf('b')).toBeUndefined();
    expect(graph.children('a')).toEqual([]);
  });

  it('answers has, isGroup, parentOf and children for nested groups', () => {
    const graph = buildGraph([
      group('outer'),
      group('inner', [], 'outer'),
      step('x', [], 'inner'),
      step('y', [], 'outer'),
    ]);

    expect(graph.has('inner')).toBe(true);
    expect(graph.has('zzz')).toBe(false);
    expect(graph.isGroup('x')).toBe(false);
    expect(graph.parentOf('x')).toBe('inner');
    expect(graph.parentOf('outer')).toBeUndefined();
    expect(graph.children('outer')).toEqual(['inner', 'y']);
    expect(graph.children('x')).toEqual([]);
  });

  it('lists executable descendants at any depth and executable ids in plan order', () => {
    const graph = buildGraph([
      group('outer'),
      step('y', [], 'outer'),
      group('inner', [], 'outer'),
      step('x', [], 'inner'),
    ]);

    expect(graph.executableDescendants('outer')).toEqual(['y', 'x']);
    expect(graph.executableDescendants('inner')).toEqual(['x']);
    expect(graph.executableDescendants('x')).toEqual([]);
    expect(graph.executableIds()).toEqual(['y', 'x']);
  });

  it('terminates on a parent cycle by dropping the link of its first step', () => {
    const graph = buildGraph([group('a', [], 'b'), group('b', [], 'a'), step('x', [], 'a')]);

    expect(graph.parentOf('a')).toBeUndefined();
    expect(graph.parentOf('b')).toBe('a');
    expect(graph.executableDescendants('a')).toEqual(['x']);
  });

  it('handles a 10,000-level group nesting without recursion', () => {
    const steps = Array.from({ length: 10_000 }, (_, i) => group(`g${i}`, [], i === 0 ? undefined : `g${i - 1}`));
    const graph = buildGraph([...steps, step('leaf', [], 'g9999'), step('after', ['g0'])]);

    expect(graph.executableDescendants('g0')).toEqual(['leaf']);
    expect(depth(graph)).toBe(2);
  });

  it('rejects a graph it did not build', () => {
    const foreign: PlanGraph = { ...buildGraph([step('a')]) };

    expect(() => findCycles(foreign)).toThrow(TypeError);
  });
});

describe('findCycles', () => {
  it('returns no cycle for the example plan with groups', () => {
    expect(findCycles(buildGraph(groupsExample))).toEqual([]);
  });

  it('reports a self-dependency as a one-step cycle', () => {
    expect(findCycles(buildGraph([step('a', ['a']), step('b', ['a'])]))).toEqual([['a']]);
  });

  it('lists a cycle in dependency order from its first step in plan order', () => {
    const graph = buildGraph([step('x'), step('a', ['b']), step('b', ['c']), step('c', ['a', 'x'])]);

    expect(findCycles(graph)).toEqual([['a', 'b', 'c']]);
  });

  it('finds a cycle in every component, including one no other step reaches', () => {
    const graph = buildGraph([
      step('a', ['b']),
      step('b', ['a']),
      step('free'),
      step('c', ['d']),
      step('d', ['e']),
      step('e', ['c']),
      step('late', ['late']),
    ]);

    expect(findCycles(graph)).toEqual([['a', 'b'], ['c', 'd', 'e'], ['late']]);
  });

  it('reports a child that depends on its own group', () => {
    const graph = buildGraph([group('G'), step('c', ['G'], 'G')]);

    expect(findCycles(graph)).toEqual([['G', 'c']]);
    expect(topologicalOrder(graph)).toBeNull();
  });

  it('reports a step that depends on a group around its own group', () => {
    const graph = buildGraph([group('outer'), group('inner', [], 'outer'), step('c', ['outer'], 'inner')]);

    expect(findCycles(graph)).toEqual([['outer', 'inner', 'c']]);
  });

  it('reports a group that depends on its own child', () => {
    const graph = buildGraph([group('G', ['c']), step('c', [], 'G')]);

    expect(findCycles(graph)).toEqual([['G', 'c']]);
  });

  it('reports a cycle through a dependency on a group', () => {
    // x waits for G, G's child c waits for x
    const graph = buildGraph([group('G'), step('c', ['x'], 'G'), step('x', ['G'])]);

    expect(findCycles(graph)).toEqual([['G', 'c', 'x']]);
  });

  it('reports a cycle through a dependency a group passes to its children', () => {
    // G waits for x, x waits for c, and c inherits G's wait
    const graph = buildGraph([group('G', ['x']), step('c', [], 'G'), step('x', ['c'])]);

    expect(findCycles(graph)).toEqual([['G', 'x', 'c']]);
  });

  it('names a group once on a cycle that enters and leaves it', () => {
    // x waits for G (its exit), G waits for x (its entry): x -> exit(G) -> c -> enter(G) -> x
    const graph = buildGraph([step('x', ['G']), group('G', ['x']), step('c', [], 'G')]);

    expect(findCycles(graph)).toEqual([['x', 'G']]);
  });

  it('reports a larger cycle through a self-dependent step besides the self-dependency', () => {
    const graph = buildGraph([step('a', ['a', 'b']), step('b', ['a'])]);

    expect(findCycles(graph)).toEqual([['a'], ['a', 'b']]);
  });

  it('reports a group that depends on itself once, as a self-dependency', () => {
    expect(findCycles(buildGraph([group('G', ['G']), step('c', [], 'G')]))).toEqual([['G']]);
  });

  it('finds the whole cycle of a 10,000-step loop without overflowing the stack', () => {
    const steps = chain(10_000);
    steps[0] = step('s0', ['s9999']);

    const cycles = findCycles(buildGraph(steps));

    expect(cycles).toHaveLength(1);
    expect(cycles[0]).toHaveLength(10_000);
    expect(cycles[0]?.slice(0, 3)).toEqual(['s0', 's9999', 's9998']);
  });

  it('handles a 10,000-step chain without overflowing the stack', () => {
    const graph = buildGraph(chain(10_000));

    expect(findCycles(graph)).toEqual([]);
    expect(topologicalOrder(graph)).toHaveLength(10_000);
    expect(depth(graph)).toBe(10_000);
    expect(downstreamClosure(graph, 's0')).toHaveLength(9_999);
  });
});

describe('parentCycles', () => {
  it('returns nothing for a valid tree', () => {
    expect(parentCycles(buildGraph(groupsExample))).toEqual([]);
  });

  it('lists each parent cycle from its first step in plan order', () => {
    const graph = buildGraph([
      group('x'),
      group('b', [], 'c'),
      group('a', [], 'b'),
      group('c', [], 'a'),
      step('s', [], 'x'),
    ]);

    expect(parentCycles(graph)).toEqual([['b', 'c', 'a']]);
  });

  it('reports a step that is its own parent and a cycle through a step that is not a group', () => {
    const graph = buildGraph([group('g', [], 'g'), step('e', [], 'h'), group('h', [], 'e')]);

    expect(parentCycles(graph)).toEqual([['g'], ['e', 'h']]);
  });

  it('finds separate parent cycles and ignores steps that merely hang below one', () => {
    const graph = buildGraph([
      group('a', [], 'b'),
      group('b', [], 'a'),
      step('s', [], 'a'),
      group('c', [], 'd'),
      group('d', [], 'c'),
    ]);

    expect(parentCycles(graph)).toEqual([
      ['a', 'b'],
      ['c', 'd'],
    ]);
  });
});
