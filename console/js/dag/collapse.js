/**
 * The overview of a large plan. A DAG of 2,000 boxes is neither readable nor cheap to lay out, so no set of siblings
 * (the top level, or the children of one group) is shown wider than MAX_NODES: a wider set is split into synthesized
 * groups, by the step ids' common prefix (`svc12.deploy` → `svc12.*`) when every sibling has one, otherwise into bands
 * of consecutive topological layers. Synthesized groups are ordinary groups to the model (target null), so they
 * fold, unfold and count like the plan's own; their ids start with `~`, which no step id can (STEP_ID_PATTERN).
 * Pure and linear in the plan's size (plus a sort per split set): no DOM, no layout.
 */
export const MAX_NODES = 100;
export const VIRTUAL_PREFIX = '~';

export const isVirtual = (id) => id.startsWith(VIRTUAL_PREFIX);

/** A group's status from its leaves' status counts; the same order as the engine's groupStatus. */
export function aggregateStatus(counts) {
  const has = (status) => (counts[status] ?? 0) > 0;
  const seen = Object.keys(counts).filter((status) => status !== 'superseded' && counts[status] > 0);
  if (seen.length === 0) return has('superseded') ? 'superseded' : 'skipped';
  if (has('failed')) return 'failed';
  if (has('running') || has('retrying') || has('awaiting_approval')) return 'running';
  if (has('blocked')) return 'blocked';
  if (has('cancelled')) return 'cancelled';
  const waiting = has('pending') || has('ready');
  if (waiting && (has('succeeded') || has('skipped'))) return 'running';
  if (has('ready')) return 'ready';
  if (has('pending')) return 'pending';
  return has('succeeded') ? 'succeeded' : 'skipped';
}

/** Each step's group parent, when the parent is a known group (the model's rule). */
export function groupParents(steps) {
  const byId = new Map(steps.map((step) => [step.id, step]));
  const parentOf = new Map();
  for (const step of steps) {
    const parent = step.parentId ? byId.get(step.parentId) : undefined;
    if (parent && parent.target === null && parent.id !== step.id) parentOf.set(step.id, parent.id);
  }
  return parentOf;
}

/**
 * Topological layers (Kahn's algorithm, no recursion): a step sits one layer after its latest dependency and no
 * earlier than its group. Steps caught in a cycle (an invalid plan) keep the layer reached so far.
 */
export function topologicalLayers(steps, parentOf = groupParents(steps)) {
  const layer = new Map(steps.map((step) => [step.id, 0]));
  const out = new Map(steps.map((step) => [step.id, []]));
  const indegree = new Map(steps.map((step) => [step.id, 0]));
  const link = (from, to, weight) => {
    out.get(from).push([to, weight]);
    indegree.set(to, indegree.get(to) + 1);
  };
  for (const step of steps) {
    for (const dependency of new Set(step.dependsOn)) if (layer.has(dependency)) link(dependency, step.id, 1);
    const parent = parentOf.get(step.id);
    if (parent !== undefined) link(parent, step.id, 0);
  }
  const queue = steps.filter((step) => indegree.get(step.id) === 0).map((step) => step.id);
  for (let at = 0; at < queue.length; at++) {
    const from = queue[at];
    for (const [to, weight] of out.get(from)) {
      layer.set(to, Math.max(layer.get(to), layer.get(from) + weight));
      indegree.set(to, indegree.get(to) - 1);
      if (indegree.get(to) === 0) queue.push(to);
    }
  }
  return layer;
}

/** The first id segment after `prefix` when every id has one and they split the set in 2..maxNodes buckets. */
function prefixBuckets(siblings, prefix, maxNodes) {
  const buckets = new Map();
  for (const step of siblings) {
    const rest = step.id.startsWith(prefix) ? step.id.slice(prefix.length) : step.id;
    const dot = rest.indexOf('.');
    if (dot <= 0 || dot === rest.length - 1) return undefined;
    const key = `${prefix}${rest.slice(0, dot)}.`;
    const bucket = buckets.get(key) ?? [];
    bucket.push(step);
    buckets.set(key, bucket);
  }
  if (buckets.size < 2 || buckets.size > maxNodes) return undefined;
  return [...buckets].map(([key, members]) => ({ title: `${key}*`, prefix: key, members }));
}

/**
 * Consecutive bands in topological order: a band closes at a layer boundary once it holds `size` steps (so there
 * are at most maxNodes bands), and anywhere once it holds maxNodes (so an unfolded band stays readable).
 */
function layerBuckets(siblings, prefix, layerOf, maxNodes) {
  const order = new Map(siblings.map((step, index) => [step.id, index]));
  const sorted = [...siblings].sort(
    (a, b) => layerOf.get(a.id) - layerOf.get(b.id) || order.get(a.id) - order.get(b.id),
  );
  const size = Math.ceil(sorted.length / (maxNodes - 1));
  const bands = [];
  let band = [];
  for (let i = 0; i < sorted.length; i++) {
    band.push(sorted[i]);
    const next = sorted[i + 1];
    const boundary = next === undefined || layerOf.get(next.id) !== layerOf.get(sorted[i].id);
    if (next === undefined || band.length >= maxNodes || (boundary && band.length >= size)) {
      bands.push(band);
      band = [];
    }
  }
  return bands.map((members) => {
    const first = layerOf.get(members[0].id) + 1;
    const last = layerOf.get(members.at(-1).id) + 1;
    return { title: first === last ? `Layer ${first}` : `Layers ${first}–${last}`, prefix, members };
  });
}

/**
 * The steps with synthesized groups wherever a set of siblings is wider than maxNodes. Unchanged steps are the
 * same objects; a re-parented one is a copy. A synthesized group comes right before its first member, and carries
 * `virtual: true` and the status of its leaves (recomputed on every call: statuses move, the grouping does not).
 */
export function withOverviewGroups(steps, maxNodes = MAX_NODES) {
  const parentOf = groupParents(steps);
  const children = new Map([[null, []]]);
  for (const step of steps) {
    const parent = parentOf.get(step.id) ?? null;
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent).push(step);
  }
  const tooWide = [...children].filter(([, siblings]) => siblings.length > maxNodes);
  if (tooWide.length === 0) return steps;

  const layerOf = topologicalLayers(steps, parentOf);
  const newParent = new Map();
  const virtuals = new Map();
  const split = (parentId, siblings, prefix) => {
    const buckets = prefixBuckets(siblings, prefix, maxNodes) ?? layerBuckets(siblings, prefix, layerOf, maxNodes);
    buckets.forEach((bucket, index) => {
      const id = `${VIRTUAL_PREFIX}${parentId ?? ''}/${index + 1}`;
      virtuals.set(id, { id, title: `${bucket.title} (${bucket.members.length})`, parentId, leaves: [] });
      for (const member of bucket.members) newParent.set(member.id, id);
      if (bucket.members.length > maxNodes) split(id, bucket.members, bucket.prefix);
    });
  };
  for (const [parentId, siblings] of tooWide) split(parentId, siblings, parentId === null ? '' : `${parentId}.`);

  const ownParent = (id) => newParent.get(id) ?? parentOf.get(id) ?? null;
  const isGroup = new Set(steps.filter((step) => step.target === null).map((step) => step.id));
  for (const step of steps) {
    if (isGroup.has(step.id)) continue;
    for (let at = ownParent(step.id), hops = 0; at !== null && hops <= steps.length; hops++) {
      virtuals.get(at)?.leaves.push(step.status);
      at = isVirtual(at) ? virtuals.get(at).parentId : ownParent(at);
    }
  }

  const shaped = [];
  const emitted = new Set();
  const emitVirtual = (id) => {
    if (id === null || !isVirtual(id) || emitted.has(id)) return;
    const group = virtuals.get(id);
    emitVirtual(group.parentId);
    emitted.add(id);
    const counts = {};
    for (const status of group.leaves) counts[status] = (counts[status] ?? 0) + 1;
    shaped.push({
      id,
      title: group.title,
      target: null,
      parentId: group.parentId,
      dependsOn: [],
      status: aggregateStatus(counts),
      generation: null,
      attempts: 0,
      virtual: true,
    });
  };
  for (const step of steps) {
    const parent = newParent.get(step.id);
    if (parent === undefined) {
      shaped.push(step);
      continue;
    }
    emitVirtual(parent);
    shaped.push({ ...step, parentId: parent });
  }
  return shaped;
}

/** Leaf status counts under every group (plan or synthesized), for the folded boxes' labels. */
export function leafCounts(steps, parentOf = groupParents(steps)) {
  const counts = new Map();
  for (const step of steps) {
    if (step.target === null) continue;
    let at = parentOf.get(step.id);
    for (let hops = 0; at !== undefined && hops <= steps.length; hops++) {
      const tally = counts.get(at) ?? {};
      tally[step.status] = (tally[step.status] ?? 0) + 1;
      counts.set(at, tally);
      at = parentOf.get(at);
    }
  }
  return counts;
}
