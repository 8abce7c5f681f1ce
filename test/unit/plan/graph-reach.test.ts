import { describe, expect, it } from 'vitest';
import {
  buildGraph,
  downstreamClosure,
  effectiveDownstream,
  effectiveUpstream,
  upstreamClosure,
} from '../../../shared/plan/graph.ts';
import { group, groupsExample, step } from './graph-testkit.ts';

const example = buildGraph(groupsExample);

describe('effectiveUpstream', () => {
  it('returns the dependencies of a step without groups', () => {
    const graph = buildGraph([step('a'), step('b'), step('c', ['b', 'a'])]);

    expect(effectiveUpstream(graph, 'c')).toEqual(['a', 'b']);
    expect(effectiveUpstream(graph, 'a')).toEqual([]);
  });

  it('expands a dependency on a group to all of its executable descendants, nested ones included', () => {
    expect(effectiveUpstream(example, 'write')).toEqual(['search', 'fetchA', 'fetchB', 'fetchC']);
  });

  it('adds the dependencies of every ancestor group', () => {
    const graph = buildGraph([
      step('a'),
      step('b'),
      group('outer', ['a']),
      group('inner', ['b'], 'outer'),
      step('x', [], 'inner'),
    ]);

    expect(effectiveUpstream(graph, 'x')).toEqual(['a', 'b']);
    expect(effectiveUpstream(graph, 'inner')).toEqual(['a', 'b']);
    expect(effectiveUpstream(graph, 'outer')).toEqual(['a']);
  });

  it('lists a step once when it is reached several ways', () => {
    const graph = buildGraph([step('a'), group('G', ['a']), step('x', ['a', 'a'], 'G')]);

    expect(effectiveUpstream(graph, 'x')).toEqual(['a']);
  });

  it('returns nothing for an unknown id', () => {
    expect(effectiveUpstream(example, 'nope')).toEqual([]);
  });
});

describe('effectiveDownstream', () => {
  it('inverts effectiveUpstream through groups', () => {
    expect(effectiveDownstream(example, 'fetchB')).toEqual(['write']);
    expect(effectiveDownstream(example, 'write')).toEqual(['review', 'deploy']);
    expect(effectiveDownstream(example, 'search')).toEqual(['fetchA', 'fetchB', 'fetchC', 'write']);
  });

  it('returns the steps that wait for a whole group', () => {
    expect(effectiveDownstream(example, 'deep')).toEqual(['write']);
    expect(effectiveDownstream(example, 'publish')).toEqual([]);
  });

  it('returns nothing for an unknown id', () => {
    expect(effectiveDownstream(example, 'nope')).toEqual([]);
  });
});

describe('upstreamClosure', () => {
  it('collects transitive dependencies, groups depended on included, in plan order', () => {
    expect([...upstreamClosure(example, 'review')]).toEqual([
      'research',
      'search',
      'fetchA',
      'deep',
      'fetchB',
      'fetchC',
      'write',
    ]);
  });

  it('leaves out the step itself and the groups it merely sits in', () => {
    const closure = upstreamClosure(example, 'fetchB');

    expect([...closure]).toEqual(['search']);
  });

  it('includes what a group passes down to its descendants', () => {
    const graph = buildGraph([step('a'), step('b', ['a']), group('G', ['b']), step('x', [], 'G')]);

    expect([...upstreamClosure(graph, 'x')]).toEqual(['a', 'b']);
    expect([...upstreamClosure(graph, 'G')]).toEqual(['a', 'b']);
  });

  it('is empty for an unknown id', () => {
    expect(upstreamClosure(example, 'nope').size).toBe(0);
  });
});

describe('downstreamClosure', () => {
  it('returns every step that transitively depends on the step, in topological order', () => {
    const graph = buildGraph([step('d', ['c']), step('c', ['b']), step('b', ['a']), step('a'), step('other')]);

    expect(downstreamClosure(graph, 'a')).toEqual(['b', 'c', 'd']);
    expect(downstreamClosure(graph, 'd')).toEqual([]);
  });

  it('follows dependencies on groups and inherited dependencies', () => {
    expect(downstreamClosure(example, 'fetchC')).toEqual(['write', 'review', 'deploy']);
    expect(downstreamClosure(example, 'write')).toEqual(['review', 'deploy']);
  });

  it('returns, for a group, what depends on any of its descendants', () => {
    expect(downstreamClosure(example, 'research')).toEqual(['fetchA', 'fetchB', 'fetchC', 'write', 'review', 'deploy']);
    expect(downstreamClosure(example, 'publish')).toEqual(['deploy']);
  });

  it('returns nothing for an unknown id', () => {
    expect(downstreamClosure(example, 'nope')).toEqual([]);
  });
});
