import { describe, expect, it } from 'vitest';
import { buildGraph, groupStatus, readySet } from '../../../shared/plan/graph.ts';
import type { StepStatus } from '../../../shared/plan/schema.ts';
import { group, groupsExample, step } from './graph-testkit.ts';

const example = buildGraph(groupsExample);
const statuses = (entries: Record<string, StepStatus>) => new Map(Object.entries(entries));

describe('readySet', () => {
  it('returns the steps without dependencies when nothing has run', () => {
    expect(readySet(example, new Map())).toEqual(['search']);
  });

  it('releases the dependents of a finished step', () => {
    expect(readySet(example, statuses({ search: 'succeeded' }))).toEqual(['fetchA', 'fetchB', 'fetchC']);
  });

  it('waits for every descendant of a group that is depended on, nested ones included', () => {
    const almost = { search: 'succeeded', fetchA: 'succeeded', fetchB: 'succeeded', fetchC: 'running' } as const;

    expect(readySet(example, statuses(almost))).toEqual([]);
    expect(readySet(example, statuses({ ...almost, fetchC: 'skipped' }))).toEqual(['write']);
  });

  it('holds back every descendant of a group until the group dependencies are done', () => {
    const graph = buildGraph([step('a'), group('outer', ['a']), group('inner', [], 'outer'), step('x', [], 'inner')]);

    expect(readySet(graph, new Map())).toEqual(['a']);
    expect(readySet(graph, statuses({ a: 'failed' }))).toEqual([]);
    expect(readySet(graph, statuses({ a: 'succeeded' }))).toEqual(['x']);
  });

  it('only offers steps that are pending or have no status yet', () => {
    const graph = buildGraph([step('a'), step('b'), step('c'), step('d')]);

    expect(readySet(graph, statuses({ a: 'pending', b: 'ready', c: 'running' }))).toEqual(['a', 'd']);
  });

  it('never offers a group, even an empty one', () => {
    expect(readySet(buildGraph([group('G'), step('x', ['G'])]), new Map())).toEqual(['x']);
  });

  it('never offers a step caught in a cycle', () => {
    expect(readySet(buildGraph([group('G'), step('c', ['G'], 'G'), step('free')]), new Map())).toEqual(['free']);
  });
});

describe('groupStatus', () => {
  const graph = buildGraph([
    group('G'),
    step('a', [], 'G'),
    group('H', [], 'G'),
    step('b', [], 'H'),
    step('c', [], 'H'),
  ]);
  const of = (a?: StepStatus, b?: StepStatus, c?: StepStatus) =>
    groupStatus(
      graph,
      'G',
      new Map(
        (
          [
            ['a', a],
            ['b', b],
            ['c', c],
          ] as const
        ).flatMap(([id, s]) => (s === undefined ? [] : [[id, s] as const])),
      ),
    );

  it.each([
    ['failed wins over everything', ['failed', 'running', 'blocked'], 'failed'],
    ['running, retrying or awaiting approval make it running', ['succeeded', 'retrying', 'blocked'], 'running'],
    ['awaiting approval counts as running', ['awaiting_approval', 'pending', 'succeeded'], 'running'],
    ['blocked wins when nothing runs', ['blocked', 'succeeded', 'pending'], 'blocked'],
    ['cancelled wins when nothing runs or is blocked', ['cancelled', 'succeeded', 'pending'], 'cancelled'],
    ['partly done is running', ['succeeded', 'pending', 'pending'], 'running'],
    ['ready when something may start and nothing finished', ['ready', 'pending', 'pending'], 'ready'],
    ['pending when nothing started', ['pending', 'pending', 'pending'], 'pending'],
    ['missing statuses count as pending', [undefined, undefined, undefined], 'pending'],
    ['all skipped is skipped', ['skipped', 'skipped', 'skipped'], 'skipped'],
    ['succeeded when all finished and one succeeded', ['skipped', 'succeeded', 'skipped'], 'succeeded'],
    ['superseded steps are ignored', ['superseded', 'succeeded', 'succeeded'], 'succeeded'],
    ['all superseded is superseded', ['superseded', 'superseded', 'superseded'], 'superseded'],
  ] as const)('%s', (_, [a, b, c], expected) => {
    expect(of(a, b, c)).toBe(expected);
  });

  it('derives a nested group from its own descendants only', () => {
    const status = groupStatus(graph, 'H', statuses({ a: 'failed', b: 'succeeded', c: 'succeeded' }));

    expect(status).toBe('succeeded');
  });

  it('treats an empty group as skipped', () => {
    expect(groupStatus(buildGraph([group('E')]), 'E', new Map())).toBe('skipped');
  });

  it('returns the own status of an executable step and pending for an unknown id', () => {
    expect(groupStatus(graph, 'a', statuses({ a: 'running' }))).toBe('running');
    expect(groupStatus(graph, 'b', new Map())).toBe('pending');
    expect(groupStatus(graph, 'nope', new Map())).toBe('pending');
  });
});
