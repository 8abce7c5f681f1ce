/**
 * The console's overview of large plans (console/js/dag/collapse.js with the DAG model): steps in, folded groups
 * and counted edges out, at most MAX_NODES boxes for a 2,000-step plan, small plans shown as before.
 */
import { describe, expect, it } from 'vitest';
import {
  aggregateStatus,
  type ConsoleStep,
  MAX_NODES,
  topologicalLayers,
  withOverviewGroups,
} from '../../../console/js/dag/collapse.js';
import { defaultCollapsed, visibleGraph } from '../../../console/js/dag/model.js';

const leaf = (id: string, dependsOn: string[] = [], status = 'pending', parentId: string | null = null) =>
  ({ id, title: id, target: 'tool:conformance.echo', parentId, dependsOn, status }) satisfies ConsoleStep;
const group = (id: string, dependsOn: string[] = [], parentId: string | null = null) =>
  ({ id, title: id, target: null, parentId, dependsOn, status: 'pending' }) satisfies ConsoleStep;

/** `layers` layers of `width` steps; each waits for two steps of the layer before. */
function layeredPlan(layers: number, width: number, statusOf = (_l: number, _i: number) => 'pending') {
  const steps: ConsoleStep[] = [];
  for (let l = 0; l < layers; l++) {
    for (let i = 0; i < width; i++) {
      const dependsOn = l === 0 ? [] : [`s${l - 1}-${i}`, `s${l - 1}-${(i + 1) % width}`];
      steps.push(leaf(`s${l}-${i}`, dependsOn, statusOf(l, i)));
    }
  }
  return steps;
}

/** The overview the run page draws first. */
function overview(steps: readonly ConsoleStep[]) {
  const shaped = withOverviewGroups(steps);
  return { shaped, graph: visibleGraph(shaped, defaultCollapsed(shaped)) };
}

describe('withOverviewGroups with the DAG model', () => {
  it('shows a 2,000-step layered plan as at most 100 folded bands, every step inside one', () => {
    const steps = layeredPlan(40, 50, (l) => (l < 10 ? 'succeeded' : l === 10 ? 'running' : 'pending'));
    const { graph } = overview(steps);

    expect(graph.nodes.length).toBeLessThanOrEqual(MAX_NODES);
    expect(graph.nodes.length).toBe(40);
    expect(graph.nodes.every((n) => n.kind === 'folded' && n.step.virtual === true)).toBe(true);
    const leaves = graph.nodes.reduce((sum, n) => sum + Object.values(n.counts ?? {}).reduce((a, b) => a + b, 0), 0);
    expect(leaves).toBe(2000);
    expect(graph.nodes[0]?.step.title).toBe('Layer 1 (50)');
  });

  it('counts the dependencies an edge between two folded bands stands for', () => {
    const { graph } = overview(layeredPlan(40, 50));
    expect(graph.edges.length).toBe(39);
    // Each of the 50 steps of a layer waits for two of the layer before.
    expect(graph.edges.every((e) => e.count === 100)).toBe(true);
  });

  it('aggregates the leaves statuses of a band into counts and one status', () => {
    const steps = layeredPlan(40, 50, (l, i) => (l === 0 ? (i < 3 ? 'failed' : 'succeeded') : 'pending'));
    const { graph } = overview(steps);
    const first = graph.nodes[0];
    expect(first?.counts).toEqual({ failed: 3, succeeded: 47 });
    expect(first?.step.status).toBe('failed');
    expect(graph.nodes[1]?.counts).toEqual({ pending: 50 });
    expect(graph.nodes[1]?.step.status).toBe('pending');
  });

  it('unfolds one band into its steps and keeps the rest folded', () => {
    const { shaped, graph } = overview(layeredPlan(40, 50));
    const band = graph.nodes[5]?.id ?? '';
    const collapsed = defaultCollapsed(shaped);
    collapsed.delete(band);
    const unfolded = visibleGraph(shaped, collapsed);

    expect(unfolded.nodes.length).toBe(40 + 50);
    expect(unfolded.nodes.filter((n) => n.parent === band).map((n) => n.id)).toEqual(
      Array.from({ length: 50 }, (_, i) => `s5-${i}`),
    );
    expect(unfolded.nodes.find((n) => n.id === band)?.kind).toBe('group');
  });

  it('groups by the id prefix when every step has one', () => {
    const steps: ConsoleStep[] = [];
    for (let s = 0; s < 30; s++) {
      steps.push(leaf(`svc${s}.build`), leaf(`svc${s}.test`, [`svc${s}.build`]));
      steps.push(leaf(`svc${s}.deploy`, [`svc${s}.test`, ...(s > 0 ? [`svc${s - 1}.deploy`] : [])]));
      steps.push(leaf(`svc${s}.verify`, [`svc${s}.deploy`]));
    }
    const { graph } = overview(steps);

    expect(graph.nodes.map((n) => n.step.title).slice(0, 2)).toEqual(['svc0.* (4)', 'svc1.* (4)']);
    expect(graph.nodes.length).toBe(30);
    expect(graph.edges.map((e) => e.count)).toEqual(Array(29).fill(1));
  });

  it('folds the plan groups of a large plan and splits a group wider than the limit', () => {
    const steps: ConsoleStep[] = [];
    for (let g = 0; g < 10; g++) {
      steps.push(group(`g${g}`, g > 0 ? [`g${g - 1}`] : []));
      for (let i = 0; i < (g === 0 ? 500 : 150); i++) steps.push(leaf(`g${g}.t${i}`, [], 'succeeded', `g${g}`));
    }
    const { shaped, graph } = overview(steps);
    expect(graph.nodes.map((n) => [n.id, n.kind])).toEqual(Array.from({ length: 10 }, (_, g) => [`g${g}`, 'folded']));
    expect(graph.nodes[0]?.counts).toEqual({ succeeded: 500 });

    const collapsed = defaultCollapsed(shaped);
    collapsed.delete('g0');
    const opened = visibleGraph(shaped, collapsed);
    const inside = opened.nodes.filter((n) => n.parent === 'g0');
    expect(inside.length).toBeLessThanOrEqual(MAX_NODES);
    expect(inside.every((n) => n.kind === 'folded' && n.id.startsWith('~g0/'))).toBe(true);
  });

  it('bounds a 2,000-step chain and a 2,000-step fan-out alike', () => {
    const chain = Array.from({ length: 2000 }, (_, i) => leaf(`c${i}`, i === 0 ? [] : [`c${i - 1}`]));
    const fan = Array.from({ length: 2000 }, (_, i) => leaf(`f${i}`));
    for (const steps of [chain, fan]) {
      const { shaped, graph } = overview(steps);
      expect(graph.nodes.length).toBeLessThanOrEqual(MAX_NODES);
      const sizes = graph.nodes.map((n) => n.size);
      expect(Math.max(...sizes)).toBeLessThanOrEqual(MAX_NODES);
      expect(shaped.filter((s) => s.target !== null)).toHaveLength(2000);
    }
  });

  it('leaves a plan that fits unchanged (the 64-step view draws every step)', () => {
    const steps = layeredPlan(8, 8, () => 'succeeded');
    const { shaped, graph } = overview(steps);
    expect(shaped).toBe(steps);
    expect(graph.nodes).toHaveLength(64);
    expect(graph.edges).toHaveLength(112);
    expect(graph.edges.every((e) => e.count === 1)).toBe(true);
  });
});

describe('topologicalLayers', () => {
  it('puts a step one layer after its latest dependency and never before its group', () => {
    const layers = topologicalLayers([
      leaf('a'),
      leaf('b', ['a']),
      group('g', ['b']),
      leaf('c', [], 'pending', 'g'),
      leaf('d', ['a', 'c']),
    ]);
    expect(Object.fromEntries(layers)).toEqual({ a: 0, b: 1, g: 2, c: 2, d: 3 });
  });
});

describe('aggregateStatus', () => {
  it('reads a group as failed, running or finished like the engine does', () => {
    expect(aggregateStatus({ succeeded: 4, failed: 1 })).toBe('failed');
    expect(aggregateStatus({ succeeded: 4, pending: 1 })).toBe('running');
    expect(aggregateStatus({ awaiting_approval: 1, pending: 3 })).toBe('running');
    expect(aggregateStatus({ succeeded: 2, skipped: 1 })).toBe('succeeded');
    expect(aggregateStatus({ superseded: 2 })).toBe('superseded');
  });
});
