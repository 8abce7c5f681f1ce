/**
 * Unfolding one box of a large plan's overview without laying out the whole graph (console/js/dag/incremental.js):
 * the box grows in place around its contents, laid out alone by ELK, and the rest keeps its places or shifts
 * together; folding it again gives the overview's places back.
 */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { type ConsoleStep, withOverviewGroups } from '../../../console/js/dag/collapse.js';
import {
  CLUSTER_PADDING,
  elbow,
  innerGraph,
  keyInnerEdges,
  type Layout,
  resize,
} from '../../../console/js/dag/incremental.js';
import {
  defaultCollapsed,
  elkGraph,
  readLayout,
  type VisibleGraph,
  visibleGraph,
} from '../../../console/js/dag/model.js';

const ELK = createRequire(import.meta.url)(
  'elkjs/lib/elk.bundled.js',
) as typeof import('elkjs/lib/elk.bundled.js').default;
const elk = new ELK();
const layOut = async (graph: VisibleGraph, padding?: string): Promise<Layout> =>
  readLayout(await elk.layout(elkGraph(graph, padding) as never));
const PADDING = `[top=${CLUSTER_PADDING.top},left=${CLUSTER_PADDING.left},bottom=${CLUSTER_PADDING.bottom},right=${CLUSTER_PADDING.right}]`;

function plan(layers: number, width: number): ConsoleStep[] {
  const steps: ConsoleStep[] = [];
  for (let l = 0; l < layers; l++)
    for (let i = 0; i < width; i++)
      steps.push({
        id: `s${l}-${i}`,
        title: `Step ${l}.${i}`,
        target: 'tool:x',
        parentId: null,
        dependsOn: l === 0 ? [] : [`s${l - 1}-${i}`, `s${l - 1}-${(i + 1) % width}`],
        status: 'pending',
      });
  return steps;
}

const overlapping = (boxes: { x: number; y: number; width: number; height: number }[]) =>
  boxes.some((a, i) =>
    boxes.some(
      (b, j) => j > i && a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height,
    ),
  );

describe('resize', () => {
  it('unfolds one band in place: left of it nothing moves, right of it all moves alike, nothing overlaps', async () => {
    const shaped = withOverviewGroups(plan(40, 50));
    const collapsed = defaultCollapsed(shaped);
    const before = visibleGraph(shaped, collapsed);
    const prev = await layOut(before);
    collapsed.delete('~/6');
    const after = visibleGraph(shaped, collapsed);
    const part = innerGraph(after, '~/6');
    const inner = keyInnerEdges(await layOut(part, PADDING), part);

    const next = resize(prev, before, after, '~/6', inner);

    expect(next).not.toBeNull();
    if (!next) return;
    const band = next.boxes.get('~/6');
    const old = prev.boxes.get('~/6');
    expect(band).toMatchObject({ x: old?.x, y: old?.y, width: inner.width, height: inner.height });
    const moves = before.nodes
      .filter((n) => n.id !== '~/6')
      .map((n) => {
        const a = prev.boxes.get(n.id);
        const b = next.boxes.get(n.id);
        return { id: n.id, right: (a?.x ?? 0) > (old?.x ?? 0), dx: (b?.x ?? 0) - (a?.x ?? 0) };
      });
    expect(new Set(moves.filter((m) => !m.right).map((m) => m.dx))).toEqual(new Set([0]));
    expect(new Set(moves.filter((m) => m.right).map((m) => m.dx))).toEqual(new Set([inner.width - (old?.width ?? 0)]));
    const top = after.nodes.filter((n) => n.parent === null).map((n) => next.boxes.get(n.id));
    expect(overlapping(top.filter((b) => b !== undefined))).toBe(false);
    for (const n of part.nodes) {
      const box = next.boxes.get(n.id);
      expect(box && band && box.x >= band.x && box.x + box.width <= band.x + band.width).toBe(true);
    }
    expect(next.edges).toHaveLength(after.edges.length);
    expect(next.edges.every((e) => e.points.length >= 2)).toBe(true);
  });

  it('gives the overview its places back when the band is folded again', async () => {
    const shaped = withOverviewGroups(plan(12, 120));
    const collapsed = defaultCollapsed(shaped);
    const folded = visibleGraph(shaped, collapsed);
    const prev = await layOut(folded);
    const group = folded.nodes[3]?.id ?? '';
    collapsed.delete(group);
    const open = visibleGraph(shaped, collapsed);
    const part = innerGraph(open, group);
    const opened = resize(prev, folded, open, group, keyInnerEdges(await layOut(part, PADDING), part));
    if (!opened) throw new Error('the unfolding did not fit');

    const back = resize(opened, open, folded, group);

    for (const node of folded.nodes) expect(back?.boxes.get(node.id)).toMatchObject(prev.boxes.get(node.id) ?? {});
  });
});

describe('elbow', () => {
  it('leaves the right side of one box and enters the left side of the other', () => {
    const points = elbow({ x: 0, y: 0, width: 100, height: 40 }, { x: 200, y: 100, width: 100, height: 40 });
    expect(points).toEqual([
      { x: 100, y: 20 },
      { x: 150, y: 20 },
      { x: 150, y: 120 },
      { x: 200, y: 120 },
    ]);
  });
});
