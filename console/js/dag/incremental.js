/**
 * Unfolding one box without laying out the whole graph again. The box's contents are laid out on their own (ELK on
 * that subgraph only: tens of nodes, however large the plan), the box grows in place to hold them, and the rest of
 * the graph keeps its places: what lies to its right moves right by the growth in width, what lies below it in its
 * column moves down by the growth in height, and every enclosing cluster grows the same way, outward. Folding is the
 * same, shrinking. Edges whose ends moved together keep their routes; the others are drawn anew as simple elbows.
 * When the shifted boxes would overlap (a shape this rule does not cover) the answer is null and the caller lays out
 * the whole graph. Pure: no DOM, no ELK.
 */
import { GROUP_HEADER, NODE_HEIGHT, NODE_WIDTH } from './model.js';

/** The padding a cluster keeps around its contents (as model.js elkGraph asks of ELK). */
export const CLUSTER_PADDING = { top: GROUP_HEADER + 10, left: 14, bottom: 14, right: 14 };
const MARGIN = 16;

const edgeKey = (from, to) => `${from}\u0000${to}`;

/** Every visible descendant of `groupId` in `graph` (by the nodes' `parent`). */
export function descendantsOf(graph, groupId) {
  const children = new Map();
  for (const node of graph.nodes) {
    const list = children.get(node.parent) ?? [];
    list.push(node.id);
    children.set(node.parent, list);
  }
  const found = new Set();
  const stack = [...(children.get(groupId) ?? [])];
  for (let id = stack.pop(); id !== undefined; id = stack.pop()) {
    if (found.has(id)) continue;
    found.add(id);
    stack.push(...(children.get(id) ?? []));
  }
  return found;
}

/** The part of `graph` inside `groupId`, its direct children as roots: what ELK lays out for an unfolding. */
export function innerGraph(graph, groupId) {
  const inside = descendantsOf(graph, groupId);
  return {
    nodes: graph.nodes.filter((n) => inside.has(n.id)).map((n) => (n.parent === groupId ? { ...n, parent: null } : n)),
    edges: graph.edges.filter((e) => inside.has(e.from) && inside.has(e.to)),
  };
}

const overlaps = (a, b) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

/** An elbow from the right side of `a` to the left side of `b` (or straight, when `b` is not to the right). */
export function elbow(a, b) {
  const start = { x: a.x + a.width, y: a.y + a.height / 2 };
  const end = { x: b.x, y: b.y + b.height / 2 };
  if (end.x <= start.x + 8) return [start, end];
  const mid = Math.round((start.x + end.x) / 2);
  return [start, { x: mid, y: start.y }, { x: mid, y: end.y }, end];
}

/**
 * The layout of `next` (the graph with `groupId` unfolded, or folded when `inner` is absent) from `prev` (the
 * layout of the graph before), and `inner`, ELK's layout of innerGraph(next, groupId) with CLUSTER_PADDING as its
 * padding. Null when the shifted boxes would overlap.
 */
export function resize(prev, prevGraph, next, groupId, inner) {
  const old = prev.boxes.get(groupId);
  if (!old) return null;
  const parentOf = new Map(next.nodes.map((n) => [n.id, n.parent]));
  const prevParentOf = new Map(prevGraph.nodes.map((n) => [n.id, n.parent]));
  const boxes = new Map();
  const removed = inner ? new Set() : descendantsOf(prevGraph, groupId);
  for (const [id, box] of prev.boxes) if (!removed.has(id)) boxes.set(id, { ...box });
  const delta = new Map();
  const move = (id, dx, dy) => {
    const box = boxes.get(id);
    box.x += dx;
    box.y += dy;
    const d = delta.get(id) ?? { dx: 0, dy: 0 };
    delta.set(id, { dx: d.dx + dx, dy: d.dy + dy });
  };

  const depth = old.depth;
  const grown = inner
    ? { ...old, width: inner.width, height: inner.height }
    : { ...old, width: NODE_WIDTH, height: NODE_HEIGHT };
  boxes.set(groupId, grown);
  if (inner) {
    for (const [id, box] of inner.boxes)
      boxes.set(id, {
        x: box.x + old.x,
        y: box.y + old.y,
        width: box.width,
        height: box.height,
        depth: depth + 1 + box.depth,
      });
  }

  // Grow at this level, then let each enclosing cluster grow (or shrink) around its moved contents, outward.
  let at = groupId;
  let before = old;
  let after = grown;
  for (let hops = 0; hops <= next.nodes.length; hops++) {
    const dw = after.width - before.width;
    const dh = after.height - before.height;
    const parent = parentOf.get(at) ?? null;
    const siblings = next.nodes.filter((n) => n.id !== at && (parentOf.get(n.id) ?? null) === parent);
    const right = before.x + before.width;
    const bottom = before.y + before.height;
    const column = [before.x, before.x + Math.max(before.width, after.width)];
    for (const sibling of siblings) {
      const box = boxes.get(sibling.id);
      if (!box) continue;
      const dx = box.x >= right ? dw : 0;
      const dy = box.y >= bottom && box.x < column[1] && box.x + box.width > column[0] ? dh : 0;
      if (dx === 0 && dy === 0) continue;
      move(sibling.id, dx, dy);
      for (const inside of descendantsOf(next, sibling.id)) move(inside, dx, dy);
    }
    const level = [at, ...siblings.map((n) => n.id)].map((id) => boxes.get(id)).filter(Boolean);
    for (let i = 0; i < level.length; i++)
      for (let j = i + 1; j < level.length; j++) if (overlaps(level[i], level[j])) return null;
    if (parent === null) break;
    const parentBox = boxes.get(parent);
    if (!parentBox) break;
    let maxX = 0;
    let maxY = 0;
    for (const box of level) {
      maxX = Math.max(maxX, box.x + box.width);
      maxY = Math.max(maxY, box.y + box.height);
    }
    before = { ...parentBox };
    after = {
      ...parentBox,
      width: Math.max(maxX + CLUSTER_PADDING.right - parentBox.x, NODE_WIDTH),
      height: Math.max(maxY + CLUSTER_PADDING.bottom - parentBox.y, GROUP_HEADER + 20),
    };
    boxes.set(parent, after);
    at = parent;
  }

  let width = 0;
  let height = 0;
  for (const box of boxes.values()) {
    width = Math.max(width, box.x + box.width);
    height = Math.max(height, box.y + box.height);
  }

  const innerEdges = new Map();
  if (inner) {
    for (const edge of inner.edges ?? [])
      innerEdges.set(
        edge.key,
        edge.points.map((p) => ({ x: p.x + old.x, y: p.y + old.y })),
      );
  }
  const prevEdges = new Map();
  const prevById = new Map(prevGraph.edges.map((e) => [e.id, e]));
  for (const edge of prev.edges) {
    const known = prevById.get(edge.id);
    if (known) prevEdges.set(edgeKey(known.from, known.to), edge.points);
  }
  const edges = next.edges.map((edge) => {
    const key = edgeKey(edge.from, edge.to);
    const routed = innerEdges.get(key);
    if (routed) return { id: edge.id, points: routed };
    const from = delta.get(edge.from) ?? { dx: 0, dy: 0 };
    const to = delta.get(edge.to) ?? { dx: 0, dy: 0 };
    const kept = prevEdges.get(key);
    const sameEnds = prevParentOf.has(edge.from) && prevParentOf.has(edge.to);
    if (kept && sameEnds && from.dx === to.dx && from.dy === to.dy)
      return { id: edge.id, points: kept.map((p) => ({ x: p.x + from.dx, y: p.y + from.dy })) };
    const a = boxes.get(edge.from);
    const b = boxes.get(edge.to);
    return { id: edge.id, points: a && b ? elbow(a, b) : [] };
  });
  return { width: width + MARGIN, height: height + MARGIN, boxes, edges };
}

/** Keys inner ELK edges by their ends, for resize (ELK's answer names edges by id only). */
export function keyInnerEdges(laidOut, graph) {
  const byId = new Map(graph.edges.map((e) => [e.id, e]));
  return {
    ...laidOut,
    edges: laidOut.edges.map((e) => {
      const known = byId.get(e.id);
      return { ...e, key: known ? edgeKey(known.from, known.to) : e.id };
    }),
  };
}
