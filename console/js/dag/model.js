/**
 * What the DAG shows: the plan's steps as nodes (groups as clusters), with collapsed groups folded into one node
 * that takes over the edges of everything inside it. Pure: no DOM, no layout; the layout is recomputed only when
 * this structure changes (a new revision, a group folded or unfolded), never for a status change.
 */
import { leafCounts, MAX_NODES } from './collapse.js';

export const NODE_WIDTH = 220;
export const NODE_HEIGHT = 60;
export const GROUP_HEADER = 34;

/** Groups whose whole subtree is finished fold by default; a failed or blocked one stays open to show why. */
const FOLDED_BY_DEFAULT = new Set(['succeeded', 'skipped', 'cancelled', 'superseded']);

export const isGroup = (step) => step.target === null;

/**
 * The groups to fold when the run is first shown: finished ones, or every group in a large plan (one shaped by
 * withOverviewGroups, or one that would still show more than `maxNodes` boxes), which opens as its top level only.
 */
export function defaultCollapsed(steps, maxNodes = MAX_NODES) {
  const all = () => new Set(steps.filter(isGroup).map((step) => step.id));
  if (steps.some((step) => step.virtual)) return all();
  const finished = new Set(
    steps.filter((step) => isGroup(step) && FOLDED_BY_DEFAULT.has(step.status)).map((step) => step.id),
  );
  return visibleGraph(steps, finished).nodes.length <= maxNodes ? finished : all();
}

function parents(steps) {
  const byId = new Map(steps.map((step) => [step.id, step]));
  const parentOf = new Map();
  for (const step of steps) {
    const parent = step.parentId ? byId.get(step.parentId) : undefined;
    if (parent && isGroup(parent) && parent.id !== step.id) parentOf.set(step.id, parent.id);
  }
  return { byId, parentOf };
}

/**
 * The visible graph: `nodes` in plan order with their visible parent (an expanded group) and `kind` ('step',
 * 'group' for an expanded cluster, 'folded' for a collapsed one; both with `counts`, their leaves' statuses), and
 * deduplicated `edges` between visible nodes, each with the `count` of step dependencies it stands for.
 */
export function visibleGraph(steps, collapsed) {
  const { byId, parentOf } = parents(steps);
  const counts = leafCounts(steps, parentOf);
  // The outermost folded ancestor (or the step itself) stands for a step; a walk is bounded against parent cycles.
  const ownerOf = (id) => {
    let owner = id;
    let at = id;
    for (let hops = 0; hops <= steps.length && parentOf.has(at); hops++) {
      at = parentOf.get(at);
      if (collapsed.has(at)) owner = at;
    }
    return owner;
  };
  const ancestors = (id) => {
    const found = new Set();
    let at = id;
    for (let hops = 0; hops <= steps.length && parentOf.has(at); hops++) {
      at = parentOf.get(at);
      found.add(at);
    }
    return found;
  };
  const childCount = new Map();
  for (const [child, parent] of parentOf)
    if (byId.has(child)) childCount.set(parent, (childCount.get(parent) ?? 0) + 1);

  const nodes = [];
  for (const step of steps) {
    if (ownerOf(step.id) !== step.id) continue;
    const kind = isGroup(step) ? (collapsed.has(step.id) ? 'folded' : 'group') : 'step';
    const node = { id: step.id, kind, parent: parentOf.get(step.id) ?? null, step, size: childCount.get(step.id) ?? 0 };
    nodes.push(kind === 'step' ? node : { ...node, counts: counts.get(step.id) ?? {} });
  }
  const edges = [];
  const seen = new Map();
  for (const step of steps) {
    const to = ownerOf(step.id);
    for (const dependency of step.dependsOn) {
      if (!byId.has(dependency)) continue;
      const from = ownerOf(dependency);
      // A cluster cannot wait for itself, and an edge between a cluster and its own contents says nothing.
      if (from === to || ancestors(to).has(from) || ancestors(from).has(to)) continue;
      const key = `${from}\u0000${to}`;
      const known = seen.get(key);
      if (known) {
        known.count += 1;
        continue;
      }
      const edge = { id: `e${edges.length}`, from, to, count: 1 };
      seen.set(key, edge);
      edges.push(edge);
    }
  }
  return { nodes, edges };
}

/** A key that changes exactly when the layout must: the visible nodes (and kinds) and edges. */
export function structureKey(graph) {
  return JSON.stringify([graph.nodes.map((n) => [n.id, n.kind, n.parent]), graph.edges.map((e) => [e.from, e.to])]);
}

/**
 * The ELK graph of a visible graph: steps and folded groups at a fixed size, clusters sized by ELK. `padding` of
 * the root: a box's contents laid out alone (incremental.js) are padded as the cluster that will hold them.
 */
export function elkGraph(graph, padding = '[top=16,left=16,bottom=16,right=16]') {
  const elkNodes = new Map();
  for (const node of graph.nodes) {
    elkNodes.set(
      node.id,
      node.kind === 'group'
        ? {
            id: node.id,
            layoutOptions: { 'elk.padding': `[top=${GROUP_HEADER + 10},left=14,bottom=14,right=14]` },
            children: [],
          }
        : { id: node.id, width: NODE_WIDTH, height: NODE_HEIGHT },
    );
  }
  const roots = [];
  for (const node of graph.nodes) {
    const parent = node.parent ? elkNodes.get(node.parent) : undefined;
    if (parent?.children) parent.children.push(elkNodes.get(node.id));
    else roots.push(elkNodes.get(node.id));
  }
  // An expanded cluster with nothing visible inside still needs a size.
  for (const value of elkNodes.values()) {
    if (value.children && value.children.length === 0) {
      value.width = NODE_WIDTH;
      value.height = GROUP_HEADER + 20;
    }
  }
  return {
    id: 'root',
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': 'RIGHT',
      'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
      'elk.edgeRouting': 'ORTHOGONAL',
      'elk.layered.considerModelOrder.strategy': 'NODES_AND_EDGES',
      'elk.layered.spacing.nodeNodeBetweenLayers': '48',
      'elk.spacing.nodeNode': '22',
      'elk.spacing.edgeNode': '16',
      'elk.padding': padding,
      'elk.json.shapeCoords': 'ROOT',
      'elk.json.edgeCoords': 'ROOT',
    },
    children: roots,
    edges: graph.edges.map((e) => ({ id: e.id, sources: [e.from], targets: [e.to] })),
  };
}

/** Flattens ELK's answer into absolute boxes by id and edge polylines. */
export function readLayout(laidOut) {
  const boxes = new Map();
  const walk = (node, depth) => {
    for (const child of node.children ?? []) {
      boxes.set(child.id, { x: child.x, y: child.y, width: child.width, height: child.height, depth });
      walk(child, depth + 1);
    }
  };
  walk(laidOut, 0);
  const edges = (laidOut.edges ?? []).map((edge) => ({
    id: edge.id,
    points: (edge.sections ?? []).flatMap((section) => [
      section.startPoint,
      ...(section.bendPoints ?? []),
      section.endPoint,
    ]),
  }));
  return { width: laidOut.width, height: laidOut.height, boxes, edges };
}
